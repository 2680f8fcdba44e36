//! The expectations both sides share. Each scenario takes a runner already connected to a
//! cluster holding the demo set, and compares whole outputs. The demo's values come from
//! `assets/demo/generate.py`: resource number `n` (45 per namespace for widgets, in the
//! order default, team-a, team-b, team-c) has color `COLORS[n % 3]`, replicas 0 when
//! `n % 9 == 0` else `n % 5 + 1`, and so on.

use super::{Crd, assert_text, normalize_object, normalize_table, write_file};
use serde_json::Value;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}): {text}"))
}

fn normalize_csv(text: &str) -> String {
    let re = regex::Regex::new(r",\d+(s|m|m\d+s)(,|\n)").expect("regex");
    re.replace_all(text, ",<age>$2").into_owned()
}

/// `list` in every format, `describe` of an accepted, a refused and a terminating registration.
pub fn registrations(c: &Crd) {
    assert_text(
        &normalize_table(&c.ok(&["list"])),
        "\
NAME                               GROUP              KIND            SCOPE        VERSIONS     ESTABLISHED   NAMESACCEPTED   TERMINATING   RESOURCES   AGE
clusterpolicies.demo.example.com   demo.example.com   ClusterPolicy   Cluster      v1           True          True            False         25          <age>
databases.demo.example.com         demo.example.com   Database        Namespaced   v1,v1beta1   True          True            False         90          <age>
gadgets.demo.example.com           demo.example.com   Gadget          Namespaced   v1           False         False           False         -           <age>
legacyjobs.demo.example.com        demo.example.com   LegacyJob       Namespaced   v1           True          True            True          1           <age>
widgets.demo.example.com           demo.example.com   Widget          Namespaced   v1           True          True            False         180         <age>
",
        "list",
    );
    assert_text(
        &normalize_csv(&c.ok(&["list", "-o", "csv"])),
        "\
NAME,GROUP,KIND,SCOPE,VERSIONS,ESTABLISHED,NAMESACCEPTED,TERMINATING,RESOURCES,AGE,SHORTNAMES,STORAGE,SUBRESOURCES,REASON
clusterpolicies.demo.example.com,demo.example.com,ClusterPolicy,Cluster,v1,True,True,False,25,<age>,cpol,v1,<none>,<none>
databases.demo.example.com,demo.example.com,Database,Namespaced,\"v1,v1beta1\",True,True,False,90,<age>,db,v1,\"status,scale\",<none>
gadgets.demo.example.com,demo.example.com,Gadget,Namespaced,v1,False,False,False,-,<age>,wd,v1,<none>,ShortNamesConflict
legacyjobs.demo.example.com,demo.example.com,LegacyJob,Namespaced,v1,True,True,True,1,<age>,ljob,v1,status,InstanceDeletionInProgress
widgets.demo.example.com,demo.example.com,Widget,Namespaced,v1,True,True,False,180,<age>,wd,v1,\"status,scale\",<none>
",
        "list -o csv",
    );
    let wide = normalize_table(&c.ok(&["list", "-o", "wide"]));
    let gadgets = wide.lines().find(|l| l.starts_with("gadgets.")).expect("gadgets in wide");
    assert!(gadgets.ends_with("<age> wd           v1        <none>         ShortNamesConflict"), "{wide}");
    assert_text(
        &c.ok(&["list", "-o", "name"]),
        "\
customresourcedefinition.apiextensions.k8s.io/clusterpolicies.demo.example.com
customresourcedefinition.apiextensions.k8s.io/databases.demo.example.com
customresourcedefinition.apiextensions.k8s.io/gadgets.demo.example.com
customresourcedefinition.apiextensions.k8s.io/legacyjobs.demo.example.com
customresourcedefinition.apiextensions.k8s.io/widgets.demo.example.com
",
        "list -o name",
    );
    // JSON and YAML are the CustomResourceDefinitions themselves, as kubectl get crd prints them.
    let listed = json(&c.ok(&["list", "-o", "json"]));
    assert_eq!(listed, yaml(&c.ok(&["list", "-o", "yaml"])), "json and yaml say the same");
    assert_eq!((&listed["kind"], &listed["apiVersion"]), (&Value::from("List"), &Value::from("v1")));
    let widgets = &listed["items"][4];
    assert_eq!(widgets["kind"], "CustomResourceDefinition");
    assert_eq!(widgets["metadata"]["name"], "widgets.demo.example.com");
    assert_eq!(widgets["spec"]["versions"][0]["subresources"]["status"], json("{}"));
    assert!(widgets["metadata"].get("managedFields").is_none(), "managedFields are hidden as kubectl hides them");
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(5));

    assert_text(
        &normalize_table(&c.ok(&["describe", "gadgets"])),
        "\
Name:        gadgets.demo.example.com
Group:       demo.example.com
Scope:       Namespaced
Age:         <age>
Resources:   - (not served)
Names:
  FIELD        SPEC         ACCEPTED
  plural       gadgets      gadgets
  singular     gadget       gadget
  kind         Gadget       Gadget
  listKind     GadgetList   GadgetList
  shortNames   wd           -            <- differs
  categories   -            -
Conditions:
  TYPE            STATUS   REASON               AGE   MESSAGE
  NamesAccepted   False    ShortNamesConflict   <age> \"wd\" is already in use
  Established     False    NotAccepted          <age> not all names are accepted
Versions:
  NAME   SERVED   STORAGE   DEPRECATED   SUBRESOURCES
  v1     true     true      false        <none>
Version v1:
  Printer columns:
    <none> (the server shows Name and Age)
  Schema fields:
    FIELD   TYPE     REQUIRED   DESCRIPTION
    spec    object   false
Schema v1:
  .  <object>
  spec  <object>  preserve-unknown
Webhooks: <none>
",
        "describe gadgets",
    );
    // Every field path with its attributes and CEL rules, and the columns on three objects
    // (not served: gadgets above has none).
    let databases = normalize_table(&c.ok(&["describe", "db"]));
    for line in [
        "  spec.storageGB  <integer int32>  minimum 1, maximum 1000; default: 10\n",
        "      rule: !has(self.backup) || self.engine != 'redis'\n        message: redis databases are not backed up\n",
        "  spec.ports  <array>  list:map[name]; maxItems 4\n",
        "Printer columns v1 on 3 objects:\n",
    ] {
        assert!(databases.contains(line), "{line:?} in {databases}");
    }
    assert!(
        databases.lines().any(|l| l.contains(".spec.backup.schedule") && l.ends_with("! empty on all 3 objects")),
        "{databases}"
    );
    // "wd" is the widgets' accepted short name, so it means widgets, as the server resolves it.
    let widgets = normalize_table(&c.ok(&["describe", "wd"]));
    assert!(widgets.starts_with("Name:        widgets.demo.example.com\n"), "{widgets}");
    assert!(widgets.contains("\nResources:   180\n"), "{widgets}");
    assert!(
        widgets.contains(
            "  Scale: replicas .spec.replicas (spec), .status.replicas (status), selector .status.selector\n"
        ),
        "{widgets}"
    );
    assert!(widgets.contains("    Size      integer   .spec.size                    1\n"), "{widgets}");
    let terminating = normalize_table(&c.ok(&["describe", "legacyjobs.demo.example.com"]));
    assert!(terminating.contains("\nDeleting:    yes (waiting for its custom resources to go)\n"), "{terminating}");
    assert!(
        terminating.contains(
            "  Terminating     True     InstanceDeletionInProgress   <age> CustomResource deletion is in progress\n"
        ),
        "{terminating}"
    );
    let described = json(&c.ok(&["describe", "gadget", "-o", "json"]));
    assert_eq!(
        described["names"][4],
        json(r#"{"field": "shortNames", "spec": "wd", "accepted": "", "differs": true}"#)
    );
    assert_eq!(described["conditions"][0]["reason"], "ShortNamesConflict");
    let stderr = c.fails(&["describe", "sprockets"], 1);
    assert_eq!(
        stderr,
        "error: no CustomResourceDefinition matches \"sprockets\". Run 'kubectl crd list' to see the registrations\n"
    );
}

/// `get` as JSON, YAML and names, resolution by every kind of name, and what is not there.
pub fn objects(c: &Crd) {
    assert_text(
        &normalize_object(&c.ok(&["get", "wd", "widget-002", "-n", "team-b", "-o", "yaml"])),
        "\
apiVersion: demo.example.com/v1
kind: Widget
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: \"{\\\"apiVersion\\\":\\\"demo.example.com/v1\\\",\\\"kind\\\":\\\"Widget\\\",\\\"metadata\\\":{\\\"labels\\\":{\\\"app\\\":\\\"widget-002\\\",\\\"tier\\\":\\\"silver\\\"},\\\"name\\\":\\\"widget-002\\\",\\\"namespace\\\":\\\"team-b\\\"},\\\"spec\\\":{\\\"color\\\":\\\"green\\\",\\\"replicas\\\":2,\\\"size\\\":3}}\"
  creationTimestamp: <time>
  generation: 1
  labels:
    app: widget-002
    tier: silver
  name: widget-002
  namespace: team-b
  resourceVersion: <rv>
  uid: <uid>
spec:
  color: green
  replicas: 2
  size: 3
status:
  observedGeneration: 1
  phase: Ready
  replicas: 2
  selector: app=widget-002
",
        "get -o yaml",
    );
    for word in ["widgets", "widget", "Widget", "wd", "widgets.demo.example.com", "widgets.v1.demo.example.com"] {
        assert_eq!(c.ok(&["get", word, "widget-002", "-o", "name"]), "widget.demo.example.com/widget-002\n", "{word}");
    }
    let gold: String = (0..45).step_by(3).map(|i| format!("widget.demo.example.com/widget-{:03}\n", i + 1)).collect();
    assert_text(&c.ok(&["get", "wd", "-n", "team-a", "-l", "tier=gold", "-o", "name"]), &gold, "get -l -o name");
    let all = json(&c.ok(&["get", "widgets", "-A", "-l", "app=widget-002", "-o", "json"]));
    assert_eq!(all["kind"], "List");
    let namespaces: Vec<&str> =
        all["items"].as_array().expect("items").iter().filter_map(|i| i["metadata"]["namespace"].as_str()).collect();
    assert_eq!(namespaces, ["default", "team-a", "team-b", "team-c"]);
    // Cluster-scoped: -n is ignored, as kubectl ignores it.
    assert_eq!(
        c.ok(&["get", "cpol", "policy-03", "-n", "team-a", "-o", "name"]),
        "clusterpolicy.demo.example.com/policy-03\n"
    );
    let policy = json(&c.ok(&["get", "clusterpolicy", "policy-03", "-o", "json"]));
    assert_eq!(policy["status"]["violations"], 1);

    assert_eq!(
        c.fails(&["get", "sprockets"], 1),
        "error: the server doesn't have a resource type \"sprockets\". Run 'kubectl crd list' to see the registrations and their names\n"
    );
    assert_eq!(
        c.fails(&["get", "wd", "widget-999", "-o", "yaml"], 1),
        "error: widgets.demo.example.com \"widget-999\" not found in namespace \"default\"\n"
    );
    assert_eq!(
        c.fails(&["get", "wd", "widget-002", "-A"], 2),
        "error: a resource cannot be retrieved by name across all namespaces\n"
    );
    // The refused registration serves nothing.
    assert!(c.fails(&["get", "gadgets"], 1).contains("doesn't have a resource type \"gadgets\""));
    let empty = c.run(&["get", "wd", "-n", "nobody-here"]);
    assert!(empty.status.success());
    assert_eq!(String::from_utf8_lossy(&empty.stdout), "");
    assert_eq!(String::from_utf8_lossy(&empty.stderr), "No resources found in nobody-here namespace.\n");
}

/// `get` with the server's Table: the CRD's printer columns, priority columns with `-o
/// wide`, NAMESPACE with `-A`, CSV.
pub fn server_tables(c: &Crd) {
    assert_text(
        &normalize_table(&c.ok(&["get", "wd", "-A", "-l", "app=widget-002"])),
        "\
NAMESPACE   NAME         COLOR   DESIRED   CURRENT   PHASE   AGE
default     widget-002   green   2         2         Ready   <age>
team-a      widget-002   green   2         2         Ready   <age>
team-b      widget-002   green   2         2         Ready   <age>
team-c      widget-002   green   2         2         Ready   <age>
",
        "get -A",
    );
    assert_text(
        &normalize_table(&c.ok(&["get", "wd", "-A", "-l", "app=widget-002", "-o", "wide"])),
        "\
NAMESPACE   NAME         COLOR   DESIRED   CURRENT   PHASE   SIZE   AGE
default     widget-002   green   2         2         Ready   1      <age>
team-a      widget-002   green   2         2         Ready   2      <age>
team-b      widget-002   green   2         2         Ready   3      <age>
team-c      widget-002   green   2         2         Ready   4      <age>
",
        "get -A -o wide",
    );
    assert_text(
        &normalize_table(&c.ok(&["get", "db", "redis-03", "-n", "staging"])),
        "NAME       ENGINE   VERSION   REPLICAS   PHASE          AGE\nredis-03   redis    7.2       3          Provisioning   <age>\n",
        "get one database",
    );
    assert_text(
        &normalize_csv(&c.ok(&["get", "databases", "-n", "staging", "-l", "app=redis-03", "-o", "csv"])),
        "NAME,ENGINE,VERSION,REPLICAS,STORAGE,ENDPOINT,BACKUP,PHASE,AGE\nredis-03,redis,7.2,3,30,redis-03.staging.svc:6379,,Provisioning,<age>\n",
        "get -o csv",
    );
    let policies = normalize_table(&c.ok(&["get", "cpol"]));
    let head: Vec<&str> = policies.lines().take(3).collect();
    assert_eq!(
        head,
        [
            "NAME        ACTION    SEVERITY   VIOLATIONS   AGE",
            "policy-01   audit     low        0            <age>",
            "policy-02   enforce   medium     7            <age>"
        ]
    );
}

/// `status get|set|patch|edit`: only `/status` is written, bad documents change nothing.
pub fn status(c: &Crd, dir: &std::path::Path) {
    let w = ["wd", "widget-005", "-n", "team-b"];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        v.extend(w.iter().map(|s| s.to_string()));
        v
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let get = with(&["status", "get"]);
    assert_text(
        &c.ok(&args(&get)),
        "status:\n  observedGeneration: 1\n  phase: Degraded\n  replicas: 4\n  selector: app=widget-005\n",
        "status get",
    );

    // Bad documents: exit 2, and the status is as before.
    let set = with(&["status", "set", "-f", "-"]);
    for (doc, says) in [
        (r#"{"spec": {"color": "red"}}"#, "invalid status document in standard input: it has no status"),
        ("status: Ready\n", "status must be a mapping, not a string"),
        ("- 1\n", "expected a mapping"),
        ("status: [\n", "not valid YAML"),
        ("kind: Gadget\nstatus: {}\n", "it holds a Gadget, not a Widget"),
    ] {
        let stderr = c.fails_with(&args(&set), Some(doc), &[], 2);
        assert!(stderr.contains(says), "{doc:?}: {stderr}");
    }
    let missing = c.fails(&args(&with(&["status", "set", "-f", "/nonexistent/status.yaml"])), 2);
    assert!(missing.contains("/nonexistent/status.yaml"), "{missing}");
    assert!(c.ok(&args(&get)).contains("phase: Degraded"), "nothing changed");

    assert_eq!(
        c.ok_with(&args(&set), Some(r#"{"status": {"phase": "Ready", "replicas": 5}}"#), &[]),
        "widget.demo.example.com/widget-005 status replaced\n"
    );
    assert_eq!(c.ok(&args(&get)), "status:\n  phase: Ready\n  replicas: 5\n");
    // The spec did not move, and the generation neither.
    let obj = json(&c.ok(&args(&with(&["get", "-o", "json"]))));
    assert_eq!((obj["spec"]["replicas"].as_i64(), obj["metadata"]["generation"].as_i64()), (Some(5), Some(1)));

    let patch_file = write_file(dir, "patch.yaml", "# a comment\nstatus:\n  selector: app=widget-005\n");
    let patch = with(&["status", "patch", "-f", &patch_file]);
    assert_eq!(c.ok(&args(&patch)), "widget.demo.example.com/widget-005 status patched\n");
    assert_eq!(c.ok(&args(&patch)), "widget.demo.example.com/widget-005 status patched (no change)\n");
    assert_text(
        &c.ok(&args(&with(&["status", "get", "-o", "json"]))),
        "{\n    \"status\": {\n        \"phase\": \"Ready\",\n        \"replicas\": 5,\n        \"selector\": \"app=widget-005\"\n    }\n}\n",
        "status get -o json",
    );
    assert_eq!(
        c.ok(&args(&with(&["status", "get", "-o", "csv"]))),
        "FIELD,VALUE\nstatus.phase,Ready\nstatus.replicas,5\nstatus.selector,app=widget-005\n"
    );

    // A whole object with a stale resourceVersion is a conflict, explained; retried on request.
    let stale = r#"{"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "widget-005", "resourceVersion": "1"}, "status": {"phase": "Stale"}}"#;
    let conflict = c.fails_with(&args(&set), Some(stale), &[], 1);
    assert!(conflict.contains("conflict (409)") && conflict.contains("--retry-conflicts"), "{conflict}");
    assert!(c.ok(&args(&get)).contains("phase: Ready"));
    let retry = with(&["status", "set", "--retry-conflicts", "-f", "-"]);
    c.ok_with(&args(&retry), Some(stale), &[]);
    assert!(c.ok(&args(&get)).contains("phase: Stale"));

    let edit = with(&["status", "edit"]);
    assert_eq!(
        c.ok_with(&args(&edit), None, &[("KUBE_EDITOR", "sed -i s/Stale/Edited/")]),
        "widget.demo.example.com/widget-005 status edited\n"
    );
    assert_eq!(c.ok(&args(&get)), "status:\n  phase: Edited\n");
    let cancelled = c.run_with(&args(&edit), None, &[("KUBE_EDITOR", "true")]);
    assert!(cancelled.status.success());
    assert_eq!(String::from_utf8_lossy(&cancelled.stderr), "Edit cancelled, no changes made.\n");
    let broken = c.fails_with(&args(&edit), None, &[("KUBE_EDITOR", "sed -i s/status:/spec:/")], 2);
    assert!(broken.contains("it has no status"), "{broken}");
    assert!(c.kept_edit(&broken).contains("spec:\n  phase: Edited"), "the kept copy holds the edit");

    let no_status = c.fails(&["status", "get", "cpol", "policy-01"], 1);
    assert_eq!(
        no_status,
        "error: clusterpolicies.demo.example.com has no /status subresource: its CRD does not declare spec.versions[].subresources.status\n"
    );
}

/// `spec edit`: the object without its status goes to the main endpoint; the status stays.
pub fn spec_edit(c: &Crd) {
    let w = ["wd", "widget-010", "-n", "team-c"];
    let edit: Vec<&str> = ["spec", "edit"].iter().chain(w.iter()).copied().collect();
    let get: Vec<&str> = ["get"].iter().chain(w.iter()).chain(["-o", "json"].iter()).copied().collect();
    let before = json(&c.ok(&get));
    assert_eq!(before["spec"]["color"], "red");
    assert_eq!(
        c.ok_with(&edit, None, &[("KUBE_EDITOR", "sed -i s/color:\\ red/color:\\ blue/")]),
        "widget.demo.example.com/widget-010 edited\n"
    );
    let after = json(&c.ok(&get));
    assert_eq!(after["spec"]["color"], "blue");
    assert_eq!(after["status"], before["status"], "the status is kept");
    assert_eq!(after["metadata"]["generation"], 2);

    let with_status = c.fails_with(&edit, None, &[("KUBE_EDITOR", "sed -i '$a status: {phase: Hacked}'")], 2);
    assert!(with_status.contains("it has a status; edit the status with 'kubectl crd status edit'"), "{with_status}");
    assert!(c.kept_edit(&with_status).contains("status: {phase: Hacked}"), "the kept copy holds the edit");
    let renamed = c.fails_with(&edit, None, &[("KUBE_EDITOR", "sed -i s/name:\\ widget-010/name:\\ other/")], 2);
    assert!(renamed.contains("metadata.name must stay \"widget-010\""), "{renamed}");
    assert!(c.kept_edit(&renamed).contains("  name: other\n"), "the kept copy holds the edit");
    let missing_editor = c.fails_with(&edit, None, &[("KUBE_EDITOR", "/nonexistent/editor")], 1);
    assert!(missing_editor.contains("failed"), "{missing_editor}");
    assert_eq!(json(&c.ok(&get))["metadata"]["generation"], 2, "nothing changed");
}

/// `scale`: show, set from 0 and back, the precondition, and bad replicas.
pub fn scale(c: &Crd) {
    let show = ["scale", "wd", "widget-001"];
    assert_eq!(
        c.ok(&show),
        "NAME         DESIRED   CURRENT   SELECTOR\nwidget-001   0         0         app=widget-001\n"
    );
    assert_eq!(c.ok(&["scale", "wd", "widget-001", "--replicas", "3"]), "widget.demo.example.com/widget-001 scaled\n");
    assert_eq!(
        c.ok(&show),
        "NAME         DESIRED   CURRENT   SELECTOR\nwidget-001   3         0         app=widget-001\n"
    );
    assert_eq!(json(&c.ok(&["get", "wd", "widget-001", "-o", "json"]))["spec"]["replicas"], 3);

    let refused = c.fails(&["scale", "wd", "widget-001", "--replicas", "5", "--current-replicas", "2"], 1);
    assert_eq!(refused, "error: expected replicas to be 2, was 3; nothing was changed\n");
    assert_eq!(
        c.ok(&["scale", "wd", "widget-001", "--replicas=0", "--current-replicas=3"]),
        "widget.demo.example.com/widget-001 scaled\n"
    );
    let scale = json(&c.ok(&["scale", "wd", "widget-001", "-o", "json"]));
    assert_eq!(scale["kind"], "Scale");
    // Go omits a zero replicas field; both forms mean 0.
    assert_eq!(scale["spec"]["replicas"].as_i64().unwrap_or(0), 0);
    assert_eq!(
        c.ok(&["scale", "wd", "widget-001", "-o", "csv"]),
        "NAME,DESIRED,CURRENT,SELECTOR\nwidget-001,0,0,app=widget-001\n"
    );

    for bad in ["-1", "many", "1.5"] {
        let stderr = c.fails(&["scale", "wd", "widget-001", "--replicas", bad], 2);
        assert_eq!(
            stderr,
            format!("error: invalid --replicas {bad:?}: the number of replicas must be a whole number, 0 or more\n")
        );
    }
    assert_eq!(
        c.fails(&["scale", "wd", "widget-001", "--replicas", "99999999999"], 2),
        "error: invalid --replicas \"99999999999\": the number of replicas can be at most 2147483647\n"
    );
    assert_eq!(
        c.fails(&["scale", "cpol", "policy-01", "--replicas", "1"], 1),
        "error: clusterpolicies.demo.example.com has no /scale subresource: its CRD does not declare spec.versions[].subresources.scale\n"
    );
    assert!(c.fails(&["scale", "wd", "widget-999"], 1).contains("\"widget-999\" not found"));
}

const GIZMO_CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "gizmos.apply.example.com"},
  "spec": {
    "group": "apply.example.com",
    "scope": "Namespaced",
    "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "shortNames": ["gz"]},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
      }}},
      "subresources": {"status": {}}
    }]
  }
}
"#;

fn gizmos(g1_size: u32, g2_extra: bool) -> String {
    let extra = if g2_extra { "  extra: true\n" } else { "" };
    format!(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apply.example.com/v1\n  kind: Gizmo\n  metadata: {{name: g1}}\n  spec: {{size: {g1_size}}}\n  status: {{phase: Ready}}\n---\napiVersion: apply.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g2\n  namespace: team-a\nspec:\n  size: 2\n{extra}"
    )
}

/// `apply`: a CRD and its resources in one go, then unchanged, configured, and refusals.
pub fn apply(c: &Crd, dir: &std::path::Path) {
    let files = dir.join("manifests");
    std::fs::create_dir_all(&files).expect("mkdir");
    write_file(&files, "00-crd.json", GIZMO_CRD);
    write_file(&files, "10-gizmos.yaml", &gizmos(1, true));
    write_file(&files, "notes.txt", "not a manifest");
    let dir_arg = files.display().to_string();
    assert_text(
        &c.ok(&["apply", "-f", &dir_arg]),
        "\
customresourcedefinition.apiextensions.k8s.io/gizmos.apply.example.com created
gizmo.apply.example.com/g1 created
gizmo.apply.example.com/g2 created
",
        "apply",
    );
    // The status of a document goes through /status.
    assert_eq!(c.ok(&["status", "get", "gz", "g1"]), "status:\n  phase: Ready\n");
    assert_text(
        &c.ok(&["apply", "-f", &dir_arg]),
        "\
customresourcedefinition.apiextensions.k8s.io/gizmos.apply.example.com unchanged
gizmo.apply.example.com/g1 unchanged
gizmo.apply.example.com/g2 unchanged
",
        "apply again",
    );
    // g1 changes, g2 loses a field: three-way merge removes it.
    write_file(&files, "10-gizmos.yaml", &gizmos(7, false));
    assert_text(
        &c.ok(&["apply", "-f", &dir_arg, "-o", "csv"]),
        "\
RESOURCE,NAMESPACE,NAME,ACTION,NOTE
customresourcedefinition.apiextensions.k8s.io,,gizmos.apply.example.com,unchanged,
gizmo.apply.example.com,default,g1,configured,
gizmo.apply.example.com,team-a,g2,configured,
",
        "apply changed",
    );
    assert_eq!(json(&c.ok(&["get", "gz", "g1", "-o", "json"]))["spec"], json(r#"{"size": 7}"#));
    assert_eq!(json(&c.ok(&["get", "gz", "g2", "-n", "team-a", "-o", "json"]))["spec"], json(r#"{"size": 2}"#));

    // Standard input, -o name.
    let g3 = "apiVersion: apply.example.com/v1\nkind: Gizmo\nmetadata: {name: g3}\nspec: {size: 3}\n";
    assert_eq!(c.ok_with(&["apply", "-f", "-", "-o", "name"], Some(g3), &[]), "gizmo.apply.example.com/g3\n");

    // A bad document anywhere: nothing is applied, exit 2.
    let bad = write_file(
        dir,
        "bad.yaml",
        &format!("{}---\napiVersion: apply.example.com/v1\nmetadata: {{name: g5}}\n", g3.replace("g3", "g4")),
    );
    let stderr = c.fails(&["apply", "-f", &bad], 2);
    assert!(stderr.contains("(document 2): the object has no kind"), "{stderr}");
    assert!(c.fails(&["get", "gz", "g4"], 1).contains("\"g4\" not found"), "g4 was not created");

    // An object in another namespace than -n says, as kubectl refuses it.
    let other = write_file(dir, "other.yaml", &g3.replace("name: g3}", "name: g6, namespace: team-b}"));
    let stderr = c.fails(&["apply", "-f", &other, "-n", "team-a"], 2);
    assert!(
        stderr.contains("the namespace from the provided object \"team-b\" does not match the namespace \"team-a\""),
        "{stderr}"
    );
    // A kind nobody serves.
    let unknown =
        write_file(dir, "unknown.yaml", "apiVersion: nowhere.example.com/v1\nkind: Thing\nmetadata: {name: t}\n");
    let stderr = c.fails(&["apply", "-f", &unknown], 1);
    assert!(stderr.contains("the server does not serve kind \"Thing\" in \"nowhere.example.com/v1\""), "{stderr}");
    assert!(stderr.contains("1 of 1 objects could not be applied"), "{stderr}");
}

/// kubectl's TYPE/NAME form names an object wherever TYPE NAME does, and what `-o name`
/// prints can be given back (`crd/NAME` included, for describe).
pub fn type_slash_name(c: &Crd) {
    let named = c.ok(&["get", "wd", "widget-002", "-o", "name"]);
    assert_eq!(named, "widget.demo.example.com/widget-002\n");
    assert_eq!(c.ok(&["get", named.trim(), "-o", "name"]), named);
    assert_eq!(c.ok(&["get", "wd/widget-002", "-o", "name"]), named);
    assert_eq!(c.ok(&["scale", "wd/widget-001"]), c.ok(&["scale", "wd", "widget-001"]));
    let status = ["status", "get", "wd/widget-005", "-n", "team-b"];
    assert_eq!(c.ok(&status), c.ok(&["status", "get", "wd", "widget-005", "-n", "team-b"]));

    let crd = c.ok(&["describe", "widgets.demo.example.com", "-o", "name"]);
    assert_eq!(crd, "customresourcedefinition.apiextensions.k8s.io/widgets.demo.example.com\n");
    assert_eq!(c.ok(&["describe", crd.trim(), "-o", "name"]), crd);
    assert_eq!(c.ok(&["describe", "crd/widgets.demo.example.com", "-o", "name"]), crd);

    // Both forms at once, no name, or not a CRD for describe: usage errors that say what to type.
    let both = c.fails(&["scale", "wd", "wd/widget-001"], 2);
    assert!(both.starts_with("error: there is no need to specify a resource type"), "{both}");
    assert_eq!(
        c.fails(&["scale", "wd"], 2),
        "error: no name was given: use 'kubectl crd scale TYPE NAME' or 'kubectl crd scale TYPE/NAME'\n"
    );
    let not_crd = c.fails(&["describe", "wd/widget-002"], 2);
    assert!(not_crd.starts_with("error: describe shows one CustomResourceDefinition"), "{not_crd}");
}
