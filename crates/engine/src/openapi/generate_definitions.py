#!/usr/bin/env python3
"""Regenerates definitions.json: the OpenAPI (swagger 2.0 style) definitions of the kinds the
engine has built in, which /openapi/v2 and /openapi/v3 publish next to the CRDs' own schemas.

Sources, both read-only:
- the meta/v1 and autoscaling/v1 definitions exactly as a real kube-apiserver 1.32 serves them
  (the recorded /openapi/v3/apis/<crd group>/v1 document, `60-openapi-v3-stable-v1.full.json`);
- every other definition from the schema tables of the `k8s-openapi` crate (API level 1.33, the
  closest to 1.32 it ships), which are generated from kube's own swagger; its `JSON`-like
  union types are reset to kube's description-only shape, and list kinds and the
  `x-kubernetes-group-version-kind` markers (which the crate does not carry) are added here.

- the admissionregistration.k8s.io/v1 webhook configurations and every definition they reach
  that the two sources above do not give, verbatim from a real kube-apiserver 1.32.13's
  /openapi/v2 (`kubectl get --raw /openapi/v2` against the oracle), which carries the
  `+enum` values, list types and patch strategies the crate's tables lack.

Usage: generate_definitions.py REFERENCE_DIR K8S_OPENAPI_SRC_DIR ORACLE_OPENAPI_V2 > definitions.json
"""
import json
import os
import re
import sys

REF_DIR, SRC, ORACLE_V2 = sys.argv[1], sys.argv[2], sys.argv[3]
V = os.path.join(SRC, "v1_33")

# Kinds the engine serves or is expected to serve as built-ins: (definition, group, version, kind).
ROOTS = [
    ("io.k8s.api.core.v1.Namespace", "", "v1", "Namespace"),
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
     "apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
    ("io.k8s.api.core.v1.ConfigMap", "", "v1", "ConfigMap"),
    ("io.k8s.api.core.v1.Secret", "", "v1", "Secret"),
    ("io.k8s.api.core.v1.ServiceAccount", "", "v1", "ServiceAccount"),
    ("io.k8s.api.core.v1.Event", "", "v1", "Event"),
    ("io.k8s.api.events.v1.Event", "events.k8s.io", "v1", "Event"),
    ("io.k8s.api.coordination.v1.Lease", "coordination.k8s.io", "v1", "Lease"),
]

# Kinds (and their lists) taken whole from the oracle's /openapi/v2.
FROM_ORACLE = [
    "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
    "io.k8s.api.admissionregistration.v1.MutatingWebhookConfigurationList",
    "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
    "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfigurationList",
]

# Create-only kinds (the reviews): no list kind.
CREATE_ONLY = [
    ("io.k8s.api.authorization.v1.SelfSubjectAccessReview", "authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
    ("io.k8s.api.authorization.v1.SelfSubjectRulesReview", "authorization.k8s.io", "v1", "SelfSubjectRulesReview"),
    ("io.k8s.api.authentication.v1.SelfSubjectReview", "authentication.k8s.io", "v1", "SelfSubjectReview"),
    ("io.k8s.api.authentication.v1.TokenReview", "authentication.k8s.io", "v1", "TokenReview"),
]

# The discovery documents' types, served at /api/, /apis/, /apis/<group>/, /api/v1/ and
# /version/ (kinds without lists; `version.Info` has no kind at all).
DISCOVERY = [
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "APIVersions"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList", "APIGroupList"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "APIGroup"),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList", "APIResourceList"),
    ("io.k8s.apimachinery.pkg.version.Info", None),
]

# List kinds: (item definition, list description, items description).
LISTS = {
    "io.k8s.api.core.v1.Namespace": ("NamespaceList is a list of Namespaces.",
        "Items is the list of Namespace objects in the list. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/"),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition": (
        "CustomResourceDefinitionList is a list of CustomResourceDefinition objects.",
        "items list individual CustomResourceDefinition objects"),
    "io.k8s.api.core.v1.ConfigMap": ("ConfigMapList is a resource containing a list of ConfigMap objects.",
        "Items is the list of ConfigMaps."),
    "io.k8s.api.core.v1.Secret": ("SecretList is a list of Secret.",
        "Items is a list of secret objects. More info: https://kubernetes.io/docs/concepts/configuration/secret"),
    "io.k8s.api.core.v1.ServiceAccount": ("ServiceAccountList is a list of ServiceAccount objects",
        "List of ServiceAccounts. More info: https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/"),
    "io.k8s.api.core.v1.Event": ("EventList is a list of events.", "List of events"),
    "io.k8s.api.events.v1.Event": ("EventList is a list of Event objects.", "items is a list of schema objects."),
    "io.k8s.api.coordination.v1.Lease": ("LeaseList is a list of Lease objects.", "items is a list of schema objects."),
}

# kube publishes these unions with a description only (no type): anything goes.
DESCRIPTION_ONLY = {
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
}

TYPE_META = {
    "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"},
    "kind": {"description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"},
}


def v3_to_v2(node):
    """The recorded v3 schemas back in swagger 2.0 form: `allOf: [{$ref}]` next to siblings
    becomes a sibling `$ref`, and refs point into #/definitions/."""
    if isinstance(node, list):
        return [v3_to_v2(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "$ref" and isinstance(v, str):
            out[k] = v.replace("#/components/schemas/", "#/definitions/")
        elif k == "allOf" and len(v) == 1 and list(v[0].keys()) == ["$ref"]:
            out["$ref"] = v[0]["$ref"].replace("#/components/schemas/", "#/definitions/")
        else:
            out[k] = v3_to_v2(v)
    return out


def crate_definitions():
    """Every `schemars` table in the crate: (definition name -> rust body), and rust path -> name."""
    bodies, names = {}, {}
    impl = re.compile(r"impl crate::schemars::JsonSchema for (\w+) \{.*?\"([^\"]+)\"\.into\(\).*?json_schema!\((\{.*?\})\)\n    \}\n\}", re.S)
    for root, _, files in os.walk(V):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            text = open(path).read()
            module = "crate::" + "::".join(os.path.relpath(root, V).split(os.sep))
            for m in impl.finditer(text):
                rust, name, body = m.group(1), m.group(2), m.group(3)
                names[module + "::" + rust] = name
                bodies[name] = body
    return bodies, names


def to_json(body, names):
    ref = lambda p: "#/definitions/" + names[p]
    described = re.compile(
        r"\(\{\s*let mut schema_obj = __gen\.subschema_for::<([\w:]+)>\(\);\s*"
        r"schema_obj\.ensure_object\(\)\.insert\(\"description\"\.into\(\), (\"(?:[^\"\\]|\\.)*\")\.into\(\)\);\s*"
        r"schema_obj\s*\}\)", re.S)
    body = described.sub(lambda m: '{"description": %s, "$ref": "%s"}' % (m.group(2), ref(m.group(1))), body)
    body = re.sub(r"\(?__gen\.subschema_for::<([\w:]+)>\(\)\)?", lambda m: '{"$ref": "%s"}' % ref(m.group(1)), body)
    body = re.sub(r",(\s*[}\]])", r"\1", body)
    return json.loads(body)


# The x-kubernetes-* extensions the crate's tables lack (list types, patch strategies and
# merge keys, which kubectl's client-side apply reads to build its patches), as
# kube-apiserver 1.32.13 serves them in /openapi/v2: (definition, property or "" for the
# definition itself) -> extensions.
EXTENSIONS = {
    ('io.k8s.api.core.v1.LocalObjectReference', ''): {"x-kubernetes-map-type": "atomic"},
    ('io.k8s.api.core.v1.NamespaceSpec', 'finalizers'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.api.core.v1.NamespaceStatus', 'conditions'): {"x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge"},
    ('io.k8s.api.core.v1.ObjectReference', ''): {"x-kubernetes-map-type": "atomic"},
    ('io.k8s.api.core.v1.ServiceAccount', 'imagePullSecrets'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.api.core.v1.ServiceAccount', 'secrets'): {"x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames', 'categories'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames', 'shortNames'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec', 'versions'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus', 'conditions'): {"x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus', 'storedVersions'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion', 'additionalPrinterColumns'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion', 'selectableFields'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'allOf'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'anyOf'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'enum'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'oneOf'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'required'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'x-kubernetes-list-map-keys'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps', 'x-kubernetes-validations'): {"x-kubernetes-list-map-keys": ["rule"], "x-kubernetes-list-type": "map", "x-kubernetes-patch-merge-key": "rule", "x-kubernetes-patch-strategy": "merge"},
    ('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion', 'conversionReviewVersions'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup', 'serverAddressByClientCIDRs'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup', 'versions'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList', 'groups'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIResource', 'categories'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIResource', 'shortNames'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList', 'resources'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions', 'serverAddressByClientCIDRs'): {"x-kubernetes-list-type": "atomic"},
    ('io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions', 'versions'): {"x-kubernetes-list-type": "atomic"},
}


# kube-apiserver 1.32's own `required` lists where the crate's (API level 1.33, sorted by name)
# differ: kube lists them in its Go structs' order, core/v1 Event does require its metadata,
# events.k8s.io/v1 Event its eventTime, and a LocalObjectReference's name is not yet required
# (kubectl explain marks each `-required-`). Recorded from the oracle's /openapi/v2 and /v3.
REQUIRED = {
    "io.k8s.api.authorization.v1.SubjectRulesReviewStatus": ["resourceRules", "nonResourceRules", "incomplete"],
    "io.k8s.api.core.v1.Event": ["metadata", "involvedObject"],
    "io.k8s.api.core.v1.LocalObjectReference": None,
    "io.k8s.api.core.v1.NamespaceCondition": ["type", "status"],
    "io.k8s.api.events.v1.Event": ["eventTime"],
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition": ["name", "type", "jsonPath"],
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition": ["type", "status"],
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames": ["plural", "kind"],
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference": ["namespace", "name"],
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIResource": ["name", "singularName", "namespaced", "kind", "verbs"],
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions": ["versions", "serverAddressByClientCIDRs"],
    "io.k8s.apimachinery.pkg.version.Info": ["major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate",
                                             "goVersion", "compiler", "platform"],
}


# The enums kube's openapi-gen writes for Go string types with `+enum` (the crate carries
# neither the list nor the description's "Possible enum values" that kubectl explain prints):
# (definition, property) -> {value: its description}, recorded from the oracle.
ENUMS = {
    ("io.k8s.api.core.v1.NamespaceStatus", "phase"): {
        "Active": "means the namespace is available for use in the system",
        "Terminating": "means the namespace is undergoing graceful termination",
    },
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule", "reason"): {
        "FieldValueDuplicate": "is used to report collisions of values that must be unique (e.g. unique IDs).",
        "FieldValueForbidden": "is used to report valid (as per formatting rules) values which would be accepted "
                               "under some conditions, but which are not permitted by the current conditions "
                               "(such as security policy).",
        "FieldValueInvalid": "is used to report malformed values (e.g. failed regex match, too long, out of bounds).",
        "FieldValueRequired": "is used to report required values that are not provided (e.g. empty strings, "
                              "null values, or empty arrays).",
    },
}


def add_enums(defs):
    for (name, prop), values in ENUMS.items():
        node = defs[name]["properties"][prop]
        node["enum"] = sorted(values)
        listed = "".join(f'\n - `"{v}"` {values[v]}' for v in sorted(values))
        node["description"] += "\n\nPossible enum values:" + listed


def set_required(defs):
    for name, required in REQUIRED.items():
        defs[name].pop("required", None)
        if required:
            defs[name]["required"] = required


def add_extensions(defs):
    for (name, prop), extensions in EXTENSIONS.items():
        node = defs[name] if not prop else defs[name]["properties"][prop]
        node.update(extensions)


def refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.add(v.split("/")[-1])
            else:
                refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    recorded = json.load(open(os.path.join(REF_DIR, "60-openapi-v3-stable-v1.full.json")))["components"]["schemas"]
    defs = {k: v3_to_v2(v) for k, v in recorded.items() if k.startswith("io.k8s.")}
    bodies, names = crate_definitions()
    todo = [r[0] for r in ROOTS + CREATE_ONLY] + [d[0] for d in DISCOVERY]
    while todo:
        name = todo.pop()
        if name in defs:
            continue
        schema = to_json(bodies[name], names)
        if name in DESCRIPTION_ONLY:
            schema = {"description": schema["description"]}
        defs[name] = schema
        found = set()
        refs(schema, found)
        todo.extend(found - set(defs))
    for name, group, version, kind in ROOTS + CREATE_ONLY:
        # The crate marks metadata required on every kind; kube does not.
        required = [r for r in defs[name].get("required", []) if r != "metadata"]
        defs[name].pop("required", None)
        if required:
            defs[name]["required"] = required
        defs[name]["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    for name, group, version, kind in ROOTS:
        described, items = LISTS[name]
        defs[name + "List"] = {
            "description": described,
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": TYPE_META["apiVersion"],
                "items": {"description": items, "type": "array", "items": {"default": {}, "$ref": "#/definitions/" + name}},
                "kind": TYPE_META["kind"],
                "metadata": {"description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
                             "default": {}, "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"},
            },
            "x-kubernetes-group-version-kind": [{"group": group, "kind": kind + "List", "version": version}],
        }
    add_extensions(defs)
    set_required(defs)
    add_enums(defs)
    for name, kind in DISCOVERY:
        if kind:
            defs[name]["x-kubernetes-group-version-kind"] = [{"group": "", "kind": kind, "version": "v1"}]
    oracle = json.load(open(ORACLE_V2))["definitions"]
    todo = list(FROM_ORACLE)
    while todo:
        name = todo.pop()
        if name in defs:
            continue
        defs[name] = oracle[name]
        found = set()
        refs(oracle[name], found)
        todo.extend(found - set(defs))
    json.dump(defs, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


main()
