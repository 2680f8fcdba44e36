#!/usr/bin/env python3
"""Records the order of the JSON members in kube-apiserver's answers for the built-in kinds
into tests/it/engine_representations/key_order.json (the test
engine_representations::built_in_kinds_answer_their_members_in_kube_s_order replays it), and
a discovery document's bytes as curl and as another client get them (discovery_*.json).

    ../shared/oracle/start.sh /tmp/ko && scripts/record-key-order.py /tmp/ko; ../shared/oracle/stop.sh /tmp/ko
"""
# The CRD is created by a manager whose name sorts before kube-apiserver's, so that its
# managedFields entries come in one order whether or not its status is written within the
# same second (kube sorts entries by time, then by manager).
import json, ssl, sys, time, urllib.request
from collections import OrderedDict

oracle = sys.argv[1]
OR = open(oracle + '/server').read().strip()
OT = open(oracle + '/token').read().strip()
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE


def req(base, tok, method, path, body=None, agent='key-order'):
    data = None if body is None else json.dumps(body).encode()
    r = urllib.request.Request(base + path, data=data, method=method, headers={
        'Authorization': 'Bearer ' + tok, 'Content-Type': 'application/json', 'Accept': 'application/json',
        'User-Agent': agent})
    try:
        with urllib.request.urlopen(r, context=ctx) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

def keys(b):
    out=[]
    def walk(v):
        if isinstance(v,dict):
            for k,x in v.items(): out.append(k); walk(x)
        elif isinstance(v,list):
            for x in v: walk(x)
    for line in b.decode().splitlines() if b.lstrip().startswith(b'{"type"') else [b.decode()]:
        if line.strip(): walk(json.loads(line,object_pairs_hook=OrderedDict))
    return out
NS='/api/v1/namespaces/key-order'
crd={"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"orders.order.example.com","labels":{"team":"a"}},
 "spec":{"group":"order.example.com","scope":"Namespaced","names":{"plural":"orders","singular":"order","kind":"Order","shortNames":["or"],"categories":["all"]},
  "versions":[{"name":"v1","served":True,"storage":True,
   "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
   "additionalPrinterColumns":[{"name":"Replicas","type":"integer","jsonPath":".spec.replicas","description":"how many"}],
   "selectableFields":[{"jsonPath":".spec.tier"}],
   "schema":{"openAPIV3Schema":{"type":"object","description":"an order","properties":{
     "spec":{"type":"object","required":["replicas"],"x-kubernetes-validations":[{"rule":"self.replicas >= 0","message":"no","reason":"FieldValueInvalid","fieldPath":".replicas"}],
       "properties":{"replicas":{"type":"integer","format":"int32","minimum":0,"maximum":10,"default":1},
         "tier":{"type":"string","enum":["a","b"],"maxLength":5,"pattern":"^[ab]$"},
         "items":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"maxItems":3,"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"value":{"x-kubernetes-int-or-string":True}}}},
         "extra":{"type":"object","x-kubernetes-preserve-unknown-fields":True,"nullable":True},
         "labels":{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-map-type":"granular"}}},
     "status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}
steps=[
 ("namespace","POST","/api/v1/namespaces",{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"key-order","labels":{"b":"1","a":"2"}}}),
 ("secret","POST",NS+"/secrets",{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s-1","labels":{"b":"1","a":"2"},"annotations":{"z":"1"}},"type":"Opaque","data":{"k":"dmFs"},"immutable":False}),
 ("secret-2","POST",NS+"/secrets",{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s-2"},"stringData":{"a":"b"}}),
 ("secrets-page","GET",NS+"/secrets?limit=1",None),
 ("secrets-watch","GET",NS+"/secrets?watch=1&resourceVersion=0&timeoutSeconds=1",None),
 ("secrets-delete-dry","DELETE",NS+"/secrets?dryRun=All",None),
 ("service-account","POST",NS+"/serviceaccounts",{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"},"secrets":[{"name":"x","kind":"Secret","namespace":"key-order"}],"imagePullSecrets":[{"name":"p"}],"automountServiceAccountToken":True}),
 ("lease","PUT","/apis/coordination.k8s.io/v1/namespaces/key-order/leases/l",{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"h","leaseDurationSeconds":5,"renewTime":"2026-01-01T00:00:00.000000Z","leaseTransitions":1}}),
 ("event","POST",NS+"/events",{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p","namespace":"key-order","uid":"u","apiVersion":"v1"},"reason":"R","message":"m","source":{"component":"c"},"count":2,"type":"Normal","firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z"}),
 ("event-v1","GET","/apis/events.k8s.io/v1/namespaces/key-order/events/e",None),
 ("events-v1-list","GET","/apis/events.k8s.io/v1/namespaces/key-order/events",None),
 ("crd","POST","/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldManager=key-order",crd),
 ("namespace-get","GET","/api/v1/namespaces/key-order",None),
 ("discovery-core","GET","/api",None),
 ("discovery-group","GET","/apis/coordination.k8s.io",None),
 ("discovery-group-version","GET","/apis/coordination.k8s.io/v1",None),
 ("discovery-crds","GET","/apis/apiextensions.k8s.io/v1",None),
 ("rules-review","POST","/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"key-order"}}),
]
rec=[]
for name,method,path,body in steps:
    code,b=req(OR,OT,method,path,body)
    assert code<300,(name,code,b)
    rec.append({"name":name,"method":method,"path":path,"body":body,"code":code,"keys":keys(b)})
    if name=='crd': time.sleep(3)
code,b=req(OR,OT,'GET','/apis/apiextensions.k8s.io/v1/customresourcedefinitions/orders.order.example.com')
rec.append({"name":"crd-get","method":"GET","path":"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/orders.order.example.com","body":None,"code":code,"keys":keys(b)})
import os
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'it', 'engine_representations', 'key_order.json')
json.dump({"recorded":"kube-apiserver v1.32.13, "+time.strftime('%Y-%m-%d'),"steps":rec},open(out,'w'),indent=1)
print(len(rec), sum(len(r['keys']) for r in rec))
for agent, name in (('curl/8.5.0', 'discovery_curl.json'), ('key-order', 'discovery_plain.json')):
    code, b = req(OR, OT, 'GET', '/apis/coordination.k8s.io/v1', agent=agent)
    assert code == 200, b
    open(os.path.join(os.path.dirname(out), name), 'wb').write(b)
