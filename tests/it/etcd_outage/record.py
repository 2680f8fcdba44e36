#!/usr/bin/env python3
"""Records what a server answers with its etcd stopped: get, list, create, watch, /readyz.

All answers go to OUT (with /readyz?verbose); the goldens the test reads, one NAME.json each
(/readyz as its failed checks and verdict, a watch as its events), beside OUT."""
import json, ssl, sys, time, threading, urllib.request, urllib.error
server, token, cafile, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
ctx = ssl.create_default_context(cafile=cafile)
base = "/apis/etcd.example.com/v1/namespaces/default/widgets"
reqs = {
  "get": ("GET", base + "/w1", None),
  "list": ("GET", base, None),
  "create": ("POST", base, {"apiVersion": "etcd.example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"size": 2}}),
  "watch": ("GET", base + "?watch=1&timeoutSeconds=20", None),
  "readyz": ("GET", "/readyz", None),
  "readyz_verbose": ("GET", "/readyz?verbose", None),
}
results = {}
def run(name, method, path, body):
  t0 = time.time()
  data = json.dumps(body).encode() if body else None
  req = urllib.request.Request(server + path, data=data, method=method, headers={"Authorization": "Bearer " + token, "Content-Type": "application/json", "Accept": "application/json"})
  try:
    with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
      code, text = r.status, r.read().decode()
  except urllib.error.HTTPError as e:
    code, text = e.code, e.read().decode()
  except Exception as e:
    code, text = 0, repr(e)
  try:
    parsed = json.loads(text)
  except Exception:
    lines = [l for l in text.splitlines() if l.strip()]
    try:
      parsed = [json.loads(l) for l in lines] if lines and path.find("watch=1") >= 0 else text
    except Exception:
      parsed = text
  results[name] = {"method": method, "path": path, "code": code, "seconds": round(time.time() - t0, 1), "body": parsed}
ts = [threading.Thread(target=run, args=(n,) + v) for n, v in reqs.items()]
[t.start() for t in ts]; [t.join() for t in ts]
json.dump(results, open(out, "w"), indent=2)
print(json.dumps({k: (v["code"], v["seconds"]) for k, v in results.items()}))

import os
for name in ["get", "list", "create", "watch", "readyz"]:
  v = results[name]
  body = v["body"]
  if name == "readyz":
    body = [l for l in body.splitlines() if l.startswith("[-]") or not l.startswith("[")]
  if name == "watch" and isinstance(body, dict):
    body = [body]
  request = {"method": v["method"], "path": v["path"]}
  if reqs[name][2]:
    request["body"] = reqs[name][2]
  doc = {"request": request, "seconds": v["seconds"], "code": v["code"], "body": body}
  with open(os.path.join(os.path.dirname(os.path.abspath(out)), name + ".json"), "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
