//! kube-apiserver 1.32's answers (the oracle's, `selfType<N>` masked) for rules calling
//! library functions, with right and wrong arguments, constant arguments its validators
//! check, `format` strings and homogeneous literals, on the object `spec` of this schema.
//! An empty answer means kube compiles the rule.

use super::*;
use serde_json::json;

fn spec() -> JSONSchemaProps {
    serde_json::from_value(json!({"type": "object", "properties": {
        "name": {"type": "string"}, "short": {"type": "string", "maxLength": 10},
        "count": {"type": "integer"}, "f": {"type": "number"}, "ok": {"type": "boolean"},
        "ts": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "duration"},
        "b": {"type": "string", "format": "byte"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "stags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
        "nums": {"type": "array", "items": {"type": "integer"}},
        "dbls": {"type": "array", "items": {"type": "number"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "obj": {"type": "object", "properties": {"x": {"type": "string"}}},
        "objs": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}},
        "ios": {"x-kubernetes-int-or-string": true},
        "any": {"x-kubernetes-preserve-unknown-fields": true}}}))
    .expect("schema")
}

#[test]
fn library_calls_compile_as_kube_compiles_them() {
    let node = spec();
    let re = regex::Regex::new(r"selfType\d+").expect("regex");
    let mut wrong = Vec::new();
    for (rule, want) in CASES {
        let rule = ValidationRule { rule: rule.to_string(), ..Default::default() };
        let got = compile(&rule, &node, false).error.map(|e| re.replace_all(&e, "selfTypeN").into_owned());
        if got.as_deref().unwrap_or_default() != *want {
            wrong.push(format!("{}\n  kube: {want}\n  ours: {got:?}", rule.rule));
        }
    }
    assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), CASES.len(), wrong.join("\n"));
}

/// `(rule, kube's error)`.
const CASES: &[(&str, &str)] = &[
    (
        "self.foo()",
        "compilation failed: ERROR: <input>:1:9: undeclared reference to 'foo' (in container '')\n | self.foo()\n | ........^",
    ),
    (
        "bar(self.name)",
        "compilation failed: ERROR: <input>:1:4: undeclared reference to 'bar' (in container '')\n | bar(self.name)\n | ...^",
    ),
    (
        "self.name.foo() == 1",
        "compilation failed: ERROR: <input>:1:14: undeclared reference to 'foo' (in container '')\n | self.name.foo() == 1\n | .............^",
    ),
    (
        "foo.bar(1)",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo.bar(1)\n | ^\nERROR: <input>:1:8: undeclared reference to 'bar' (in container '')\n | foo.bar(1)\n | .......^",
    ),
    (
        "self.name.matches(1)",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'matches' applied to 'string.(int)'\n | self.name.matches(1)\n | .................^",
    ),
    (
        "isURL(1)",
        "compilation failed: ERROR: <input>:1:6: found no matching overload for 'isURL' applied to '(int)'\n | isURL(1)\n | .....^",
    ),
    (
        "quantity(1).sign() == 1",
        "compilation failed: ERROR: <input>:1:9: found no matching overload for 'quantity' applied to '(int)'\n | quantity(1).sign() == 1\n | ........^\nERROR: <input>:1:17: found no matching overload for 'sign' applied to '!error!.()'\n | quantity(1).sign() == 1\n | ................^",
    ),
    (
        "self.name.split() == []",
        "compilation failed: ERROR: <input>:1:16: found no matching overload for 'split' applied to 'string.()'\n | self.name.split() == []\n | ...............^",
    ),
    (
        "self.tags.indexOf() == 1",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'indexOf' applied to 'list(string).()'\n | self.tags.indexOf() == 1\n | .................^",
    ),
    ("self.name.charAt(0) == 'a'", ""),
    (
        "self.name.charAt('a') == 'a'",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'charAt' applied to 'string.(string)'\n | self.name.charAt('a') == 'a'\n | ................^",
    ),
    ("self.name.indexOf('a') == 1", ""),
    ("self.name.indexOf('a', 1) == 1", ""),
    (
        "self.name.indexOf(1) == 1",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'indexOf' applied to 'string.(int)'\n | self.name.indexOf(1) == 1\n | .................^",
    ),
    ("self.name.lastIndexOf('a') == 1", ""),
    ("self.name.lastIndexOf('a', 2) == 1", ""),
    ("self.name.lowerAscii() == 'a'", ""),
    ("self.name.upperAscii() == 'a'", ""),
    (
        "self.name.lowerAscii(1) == 'a'",
        "compilation failed: ERROR: <input>:1:21: found no matching overload for 'lowerAscii' applied to 'string.(int)'\n | self.name.lowerAscii(1) == 'a'\n | ....................^",
    ),
    ("self.name.replace('a', 'b') == 'a'", ""),
    ("self.name.replace('a', 'b', 1) == 'a'", ""),
    (
        "self.name.replace('a') == 'a'",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'replace' applied to 'string.(string)'\n | self.name.replace('a') == 'a'\n | .................^",
    ),
    ("self.name.split('a') == ['a']", ""),
    ("self.name.split('a', 2) == ['a']", ""),
    ("self.name.substring(1) == 'a'", ""),
    ("self.name.substring(1, 2) == 'a'", ""),
    (
        "self.name.substring('a') == 'a'",
        "compilation failed: ERROR: <input>:1:20: found no matching overload for 'substring' applied to 'string.(string)'\n | self.name.substring('a') == 'a'\n | ...................^",
    ),
    ("self.name.trim() == 'a'", ""),
    (
        "self.nums.join(',') == 'a'",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'join' applied to 'list(int).(string)'\n | self.nums.join(',') == 'a'\n | ..............^",
    ),
    (
        "self.name.reverse() == 'a'",
        "compilation failed: ERROR: <input>:1:18: undeclared reference to 'reverse' (in container '')\n | self.name.reverse() == 'a'\n | .................^",
    ),
    ("strings.quote(self.name) == 'a'", ""),
    (
        "self.count.charAt(0) == 'a'",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'charAt' applied to 'int.(int)'\n | self.count.charAt(0) == 'a'\n | .................^",
    ),
    ("self.nums.sum() == 1", ""),
    (
        "self.tags.sum() == 'a'",
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'sum' applied to 'list(string).()'\n | self.tags.sum() == 'a'\n | .............^",
    ),
    ("self.dbls.sum() == 1.0", ""),
    ("self.nums.min() == 1", ""),
    ("self.nums.max() == 1", ""),
    ("self.nums.indexOf(1) == 0", ""),
    ("self.nums.lastIndexOf(1) == 0", ""),
    (
        "self.nums.indexOf('a') == 0",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'indexOf' applied to 'list(int).(string)'\n | self.nums.indexOf('a') == 0\n | .................^",
    ),
    ("self.name.find('a') == 'a'", ""),
    ("self.name.findAll('a') == ['a']", ""),
    ("self.name.findAll('a', 2) == ['a']", ""),
    (
        "self.name.find(1) == 'a'",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'find' applied to 'string.(int)'\n | self.name.find(1) == 'a'\n | ..............^",
    ),
    ("url(self.name).getScheme() == 'a'", ""),
    ("url(self.name).getHost() == 'a'", ""),
    ("url(self.name).getHostname() == 'a'", ""),
    ("url(self.name).getPort() == 'a'", ""),
    ("url(self.name).getEscapedPath() == 'a'", ""),
    ("url(self.name).getQuery().size() == 1", ""),
    ("isURL(self.name)", ""),
    (
        "url(self.name).getFoo() == 'a'",
        "compilation failed: ERROR: <input>:1:22: undeclared reference to 'getFoo' (in container '')\n | url(self.name).getFoo() == 'a'\n | .....................^",
    ),
    (
        "self.name.getScheme() == 'a'",
        "compilation failed: ERROR: <input>:1:20: found no matching overload for 'getScheme' applied to 'string.()'\n | self.name.getScheme() == 'a'\n | ...................^",
    ),
    ("quantity(self.name).isGreaterThan(quantity('1'))", ""),
    ("quantity(self.name).isLessThan(quantity('1'))", ""),
    ("quantity(self.name).compareTo(quantity('1')) == 0", ""),
    (
        "quantity(self.name).add(1).sign() == 1",
        "compilation failed: ERROR: <input>:1:32: found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'\n | quantity(self.name).add(1).sign() == 1\n | ...............................^",
    ),
    ("quantity(self.name).add(quantity('1')).isInteger()", ""),
    ("quantity(self.name).sub(1).asInteger() == 1", ""),
    ("quantity(self.name).asApproximateFloat() == 1.0", ""),
    ("isQuantity(self.name)", ""),
    (
        "quantity(self.name).isGreaterThan(1)",
        "compilation failed: ERROR: <input>:1:34: found no matching overload for 'isGreaterThan' applied to 'kubernetes.Quantity.(int)'\n | quantity(self.name).isGreaterThan(1)\n | .................................^",
    ),
    (
        "quantity(self.name) == 1",
        "compilation failed: ERROR: <input>:1:21: found no matching overload for '_==_' applied to '(kubernetes.Quantity, int)'\n | quantity(self.name) == 1\n | ....................^",
    ),
    ("ip(self.name).family() == 4", ""),
    ("ip(self.name).isUnspecified()", ""),
    ("ip(self.name).isLoopback()", ""),
    ("ip(self.name).isLinkLocalMulticast()", ""),
    ("ip(self.name).isLinkLocalUnicast()", ""),
    ("ip(self.name).isGlobalUnicast()", ""),
    ("isIP(self.name)", ""),
    ("ip.isCanonical(self.name)", ""),
    ("cidr(self.name).containsIP(ip('1.2.3.4'))", ""),
    ("cidr(self.name).containsIP('1.2.3.4')", ""),
    ("cidr(self.name).containsCIDR('1.2.3.0/24')", ""),
    ("cidr(self.name).containsCIDR(cidr('1.2.3.0/24'))", ""),
    ("cidr(self.name).ip().family() == 4", ""),
    ("cidr(self.name).masked().prefixLength() == 1", ""),
    ("isCIDR(self.name)", ""),
    ("string(ip(self.name)) == 'a'", ""),
    ("string(cidr(self.name)) == 'a'", ""),
    (
        "ip(self.name).containsIP('a')",
        "compilation failed: ERROR: <input>:1:25: found no matching overload for 'containsIP' applied to 'net.IP.(string)'\n | ip(self.name).containsIP('a')\n | ........................^",
    ),
    ("!format.named(\"dns1123Label\").hasValue()", ""),
    (
        "format.foo().validate(self.name).hasValue()",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'format' (in container '')\n | format.foo().validate(self.name).hasValue()\n | ^\nERROR: <input>:1:11: undeclared reference to 'foo' (in container '')\n | format.foo().validate(self.name).hasValue()\n | ..........^",
    ),
    ("sets.contains(self.tags, ['a'])", ""),
    ("sets.equivalent(self.tags, ['a'])", ""),
    ("sets.intersects(self.tags, ['a'])", ""),
    (
        "sets.contains(self.tags, [1])",
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'sets.contains' applied to '(list(string), list(int))'\n | sets.contains(self.tags, [1])\n | .............^",
    ),
    (
        "sets.contains(self.tags)",
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'sets.contains' applied to '(list(string))'\n | sets.contains(self.tags)\n | .............^",
    ),
    ("optional.of(1).hasValue()", ""),
    ("optional.ofNonZeroValue(1).hasValue()", ""),
    ("optional.none().hasValue()", ""),
    (
        "self.tags.first().hasValue()",
        "compilation failed: ERROR: <input>:1:16: undeclared reference to 'first' (in container '')\n | self.tags.first().hasValue()\n | ...............^",
    ),
    (
        "self.tags.last().hasValue()",
        "compilation failed: ERROR: <input>:1:15: undeclared reference to 'last' (in container '')\n | self.tags.last().hasValue()\n | ..............^",
    ),
    (
        "optional.unwrap([optional.of(1)]) == [1]",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'optional' (in container '')\n | optional.unwrap([optional.of(1)]) == [1]\n | ^\nERROR: <input>:1:16: undeclared reference to 'unwrap' (in container '')\n | optional.unwrap([optional.of(1)]) == [1]\n | ...............^",
    ),
    (
        "[optional.of(1)].unwrapOpt() == [1]",
        "compilation failed: ERROR: <input>:1:27: undeclared reference to 'unwrapOpt' (in container '')\n | [optional.of(1)].unwrapOpt() == [1]\n | ..........................^",
    ),
    ("self.?name.optMap(n, n + 'a').hasValue()", ""),
    ("self.?name.optFlatMap(n, optional.of(n)).hasValue()", ""),
    ("type(self.name) == string", ""),
    ("dyn(self.name) == 1", ""),
    ("bool('true')", ""),
    (
        "bool(1)",
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'bool' applied to '(int)'\n | bool(1)\n | ....^",
    ),
    ("string(self.count) == 'a'", ""),
    (
        "string(self.tags) == 'a'",
        "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(list(string))'\n | string(self.tags) == 'a'\n | ......^",
    ),
    (
        "int(self.tags) == 1",
        "compilation failed: ERROR: <input>:1:4: found no matching overload for 'int' applied to '(list(string))'\n | int(self.tags) == 1\n | ...^",
    ),
    ("int(self.ts) == 1", ""),
    ("uint(self.count) == 1u", ""),
    ("double(self.count) == 1.0", ""),
    ("bytes(self.name) == b'a'", ""),
    (
        "bytes(1) == b'a'",
        "compilation failed: ERROR: <input>:1:6: found no matching overload for 'bytes' applied to '(int)'\n | bytes(1) == b'a'\n | .....^",
    ),
    ("duration(self.name) > duration('1s')", ""),
    ("timestamp(self.name) > timestamp('2020-01-01T00:00:00Z')", ""),
    ("timestamp(1) > timestamp('2020-01-01T00:00:00Z')", ""),
    ("self.ts.getHours() == 1", ""),
    ("self.ts.getHours('UTC') == 1", ""),
    ("self.ts.getFullYear() == 1", ""),
    ("self.ts.getMonth() == 1", ""),
    ("self.ts.getDayOfYear() == 1", ""),
    ("self.ts.getDayOfMonth() == 1", ""),
    ("self.ts.getDate() == 1", ""),
    ("self.ts.getDayOfWeek() == 1", ""),
    ("self.ts.getMinutes() == 1", ""),
    ("self.ts.getSeconds() == 1", ""),
    ("self.ts.getMilliseconds() == 1", ""),
    ("self.d.getHours() == 1", ""),
    ("self.d.getMinutes() == 1", ""),
    ("self.d.getSeconds() == 1", ""),
    ("self.d.getMilliseconds() == 1", ""),
    (
        "self.d.getFullYear() == 1",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'getFullYear' applied to 'duration.()'\n | self.d.getFullYear() == 1\n | ..................^",
    ),
    (
        "self.name.getHours() == 1",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'getHours' applied to 'string.()'\n | self.name.getHours() == 1\n | ..................^",
    ),
    (
        "math.greatest(1, 2) == 2",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.greatest(1, 2) == 2\n | ^\nERROR: <input>:1:14: undeclared reference to 'greatest' (in container '')\n | math.greatest(1, 2) == 2\n | .............^",
    ),
    (
        "math.least(1, 2) == 1",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.least(1, 2) == 1\n | ^\nERROR: <input>:1:11: undeclared reference to 'least' (in container '')\n | math.least(1, 2) == 1\n | ..........^",
    ),
    (
        "math.ceil(1.5) == 2.0",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'math' (in container '')\n | math.ceil(1.5) == 2.0\n | ^\nERROR: <input>:1:10: undeclared reference to 'ceil' (in container '')\n | math.ceil(1.5) == 2.0\n | .........^",
    ),
    (
        "base64.encode(b'a') == 'a'",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'base64' (in container '')\n | base64.encode(b'a') == 'a'\n | ^\nERROR: <input>:1:14: undeclared reference to 'encode' (in container '')\n | base64.encode(b'a') == 'a'\n | .............^",
    ),
    (
        "self.all(k, v, true)",
        "compilation failed: ERROR: <input>:1:9: undeclared reference to 'all' (in container '')\n | self.all(k, v, true)\n | ........^\nERROR: <input>:1:10: undeclared reference to 'k' (in container '')\n | self.all(k, v, true)\n | .........^\nERROR: <input>:1:13: undeclared reference to 'v' (in container '')\n | self.all(k, v, true)\n | ............^",
    ),
    (
        "self.tags.all(i, v, i >= 0)",
        "compilation failed: ERROR: <input>:1:14: undeclared reference to 'all' (in container '')\n | self.tags.all(i, v, i >= 0)\n | .............^\nERROR: <input>:1:15: undeclared reference to 'i' (in container '')\n | self.tags.all(i, v, i >= 0)\n | ..............^\nERROR: <input>:1:18: undeclared reference to 'v' (in container '')\n | self.tags.all(i, v, i >= 0)\n | .................^\nERROR: <input>:1:21: undeclared reference to 'i' (in container '')\n | self.tags.all(i, v, i >= 0)\n | ....................^",
    ),
    (
        "self.tags.exists(i, v, i >= 0)",
        "compilation failed: ERROR: <input>:1:17: undeclared reference to 'exists' (in container '')\n | self.tags.exists(i, v, i >= 0)\n | ................^\nERROR: <input>:1:18: undeclared reference to 'i' (in container '')\n | self.tags.exists(i, v, i >= 0)\n | .................^\nERROR: <input>:1:21: undeclared reference to 'v' (in container '')\n | self.tags.exists(i, v, i >= 0)\n | ....................^\nERROR: <input>:1:24: undeclared reference to 'i' (in container '')\n | self.tags.exists(i, v, i >= 0)\n | .......................^",
    ),
    (
        "self.tags.transformList(i, v, v) == []",
        "compilation failed: ERROR: <input>:1:24: undeclared reference to 'transformList' (in container '')\n | self.tags.transformList(i, v, v) == []\n | .......................^\nERROR: <input>:1:25: undeclared reference to 'i' (in container '')\n | self.tags.transformList(i, v, v) == []\n | ........................^\nERROR: <input>:1:28: undeclared reference to 'v' (in container '')\n | self.tags.transformList(i, v, v) == []\n | ...........................^\nERROR: <input>:1:31: undeclared reference to 'v' (in container '')\n | self.tags.transformList(i, v, v) == []\n | ..............................^",
    ),
    (
        "self.tags.transformMap(i, v, v) == {}",
        "compilation failed: ERROR: <input>:1:23: undeclared reference to 'transformMap' (in container '')\n | self.tags.transformMap(i, v, v) == {}\n | ......................^\nERROR: <input>:1:24: undeclared reference to 'i' (in container '')\n | self.tags.transformMap(i, v, v) == {}\n | .......................^\nERROR: <input>:1:27: undeclared reference to 'v' (in container '')\n | self.tags.transformMap(i, v, v) == {}\n | ..........................^\nERROR: <input>:1:30: undeclared reference to 'v' (in container '')\n | self.tags.transformMap(i, v, v) == {}\n | .............................^",
    ),
    (
        "self.labels.transformMapEntry(k, v, {k: v}) == {}",
        "compilation failed: ERROR: <input>:1:30: undeclared reference to 'transformMapEntry' (in container '')\n | self.labels.transformMapEntry(k, v, {k: v}) == {}\n | .............................^\nERROR: <input>:1:31: undeclared reference to 'k' (in container '')\n | self.labels.transformMapEntry(k, v, {k: v}) == {}\n | ..............................^\nERROR: <input>:1:34: undeclared reference to 'v' (in container '')\n | self.labels.transformMapEntry(k, v, {k: v}) == {}\n | .................................^\nERROR: <input>:1:38: undeclared reference to 'k' (in container '')\n | self.labels.transformMapEntry(k, v, {k: v}) == {}\n | .....................................^\nERROR: <input>:1:41: undeclared reference to 'v' (in container '')\n | self.labels.transformMapEntry(k, v, {k: v}) == {}\n | ........................................^",
    ),
    ("matches(self.name, 'a')", ""),
    ("self.name.size() == 1", ""),
    ("size(self.name) == 1", ""),
    (
        "size(1) == 1",
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n | size(1) == 1\n | ....^",
    ),
    (
        "self.name.contains(1)",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'contains' applied to 'string.(int)'\n | self.name.contains(1)\n | ..................^",
    ),
    (
        "self.name.endsWith(1)",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'endsWith' applied to 'string.(int)'\n | self.name.endsWith(1)\n | ..................^",
    ),
    (
        "authorizer.path('/a').check('get').allowed()",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/a').check('get').allowed()\n | ^",
    ),
    (
        "self.name.check('a')",
        "compilation failed: ERROR: <input>:1:16: found no matching overload for 'check' applied to 'string.(string)'\n | self.name.check('a')\n | ...............^",
    ),
    (
        "self.name.allowed()",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'allowed' applied to 'string.()'\n | self.name.allowed()\n | .................^",
    ),
    (
        "self.ts.getHours(1) == 1",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'getHours' applied to 'timestamp.(int)'\n | self.ts.getHours(1) == 1\n | ................^",
    ),
    (
        "cel.bind(x, self.name, x == 'a')",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')\n | cel.bind(x, self.name, x == 'a')\n | ^\nERROR: <input>:1:9: undeclared reference to 'bind' (in container '')\n | cel.bind(x, self.name, x == 'a')\n | ........^\nERROR: <input>:1:10: undeclared reference to 'x' (in container '')\n | cel.bind(x, self.name, x == 'a')\n | .........^\nERROR: <input>:1:24: undeclared reference to 'x' (in container '')\n | cel.bind(x, self.name, x == 'a')\n | .......................^",
    ),
    ("self.name.format([1]) == 'a'", ""),
    ("\"%d\".format([1]) == 'a'", ""),
    (
        "\"%d\".format(1) == 'a'",
        "compilation failed: ERROR: <input>:1:12: found no matching overload for 'format' applied to 'string.(int)'\n | \"%d\".format(1) == 'a'\n | ...........^",
    ),
    (
        "self.name.format(1) == 'a'",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'format' applied to 'string.(int)'\n | self.name.format(1) == 'a'\n | ................^",
    ),
    (
        "\"%q\".format([1]) == 'a'",
        "compilation failed: ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause \"q\"\n | \"%q\".format([1]) == 'a'\n | ...........^",
    ),
    (
        "\"%d\".format([\"a\"]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given string\n | \"%d\".format([\"a\"]) == 'a'\n | .............^",
    ),
    (
        "\"%d %d\".format([1]) == 'a'",
        "compilation failed: ERROR: <input>:1:15: index 1 out of range\n | \"%d %d\".format([1]) == 'a'\n | ..............^",
    ),
    (
        "\"%d\".format([1, 2]) == 'a'",
        "compilation failed: ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)\n | \"%d\".format([1, 2]) == 'a'\n | ...........^",
    ),
    ("\"%s\".format([1]) == 'a'", ""),
    ("\"%s\".format([self.tags]) == 'a'", ""),
    (
        "\"%x\".format([1.5]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double\n | \"%x\".format([1.5]) == 'a'\n | .............^",
    ),
    ("\"%x\".format([\"a\"]) == 'a'", ""),
    ("\"%X\".format([b'a']) == 'a'", ""),
    ("\"%o\".format([1]) == 'a'", ""),
    (
        "\"%o\".format([\"a\"]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: octal clause can only be used on integers, was given string\n | \"%o\".format([\"a\"]) == 'a'\n | .............^",
    ),
    ("\"%b\".format([true]) == 'a'", ""),
    ("\"%b\".format([1]) == 'a'", ""),
    ("\"%e\".format([1.5]) == 'a'", ""),
    (
        "\"%e\".format([1]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: scientific clause can only be used on doubles, was given int\n | \"%e\".format([1]) == 'a'\n | .............^",
    ),
    (
        "\"%f\".format([1]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: fixed-point clause can only be used on doubles, was given int\n | \"%f\".format([1]) == 'a'\n | .............^",
    ),
    ("\"%.2f\".format([1.5]) == 'a'", ""),
    ("\"%.2f\".format([\"a\"]) == 'a'", ""),
    (
        "\"%d\".format([self.name]) == 'a'",
        "compilation failed: ERROR: <input>:1:18: error during formatting: decimal clause can only be used on integers, was given string\n | \"%d\".format([self.name]) == 'a'\n | .................^",
    ),
    ("\"%d\".format([self.count]) == 'a'", ""),
    ("\"%d\".format([self.ios]) == 'a'", ""),
    (
        "\"%s %s\".format([self.name]) == 'a'",
        "compilation failed: ERROR: <input>:1:15: index 1 out of range\n | \"%s %s\".format([self.name]) == 'a'\n | ..............^",
    ),
    (
        "\"%\".format([1]) == 'a'",
        "compilation failed: ERROR: <input>:1:11: unexpected end of string\n | \"%\".format([1]) == 'a'\n | ..........^",
    ),
    ("\"%%\".format([]) == 'a'", ""),
    ("\"%d\".format([1u]) == 'a'", ""),
    (
        "\"%d\".format([1.5]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given double\n | \"%d\".format([1.5]) == 'a'\n | .............^",
    ),
    ("\"%s\".format([duration('1s')]) == 'a'", ""),
    ("\"%s\".format([{\"a\": 1}]) == 'a'", ""),
    ("\"%s\".format([null]) == 'a'", ""),
    (
        "\"%d\".format([null]) == 'a'",
        "compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, was given null_type\n | \"%d\".format([null]) == 'a'\n | .............^",
    ),
    (
        "\"%f\".format([duration('1s')]) == 'a'",
        "compilation failed: ERROR: <input>:1:22: error during formatting: fixed-point clause can only be used on doubles, was given google.protobuf.Duration\n | \"%f\".format([duration('1s')]) == 'a'\n | .....................^",
    ),
    (
        "\"%z\".format([1]) == 'a'",
        "compilation failed: ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause \"z\"\n | \"%z\".format([1]) == 'a'\n | ...........^",
    ),
    ("self.name.format([\"a\"]) == 'a'", ""),
    (
        "self.name.matches('[')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('[')\n | ..................^",
    ),
    (
        "self.name.matches('a[')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('a[')\n | ..................^",
    ),
    ("self.name.matches('(?P<x>a)')", ""),
    ("matches(self.name, '[')", "program instantiation failed: error parsing regexp: missing closing ]: `[`"),
    ("self.name.find('[') == ''", "program instantiation failed: error parsing regexp: missing closing ]: `[`"),
    ("self.name.findAll('[') == []", "program instantiation failed: error parsing regexp: missing closing ]: `[`"),
    (
        "duration('xx') > duration('1s')",
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n | duration('xx') > duration('1s')\n | .........^",
    ),
    ("duration('1s') > duration('1s')", ""),
    (
        "duration('1x') > duration('1s')",
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n | duration('1x') > duration('1s')\n | .........^",
    ),
    (
        "timestamp('bad') > timestamp('2020-01-01T00:00:00Z')",
        "compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('bad') > timestamp('2020-01-01T00:00:00Z')\n | ..........^",
    ),
    (
        "timestamp('2020-01-01') > timestamp('2020-01-01T00:00:00Z')",
        "compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('2020-01-01') > timestamp('2020-01-01T00:00:00Z')\n | ..........^",
    ),
    ("quantity('bad').isInteger()", ""),
    ("quantity('1Mi').isInteger()", ""),
    ("ip('bad').family() == 4", ""),
    ("ip('1.2.3.4').family() == 4", ""),
    ("cidr('bad').prefixLength() == 1", ""),
    ("cidr('1.2.3.0/24').prefixLength() == 1", ""),
    ("url('bad').getHost() == ''", ""),
    ("url('https://a.com').getHost() == ''", ""),
    ("url('/path').getHost() == ''", ""),
    ("format.named('nope').hasValue()", ""),
    ("isURL('bad')", ""),
    ("isIP('bad')", ""),
    ("ip.isCanonical('bad')", ""),
    ("isQuantity('bad')", ""),
    ("isCIDR('bad')", ""),
    ("ip('::ffff:1.2.3.4').family() == 4", ""),
    ("ip('1.2.3.4/24').family() == 4", ""),
    ("cidr('1.2.3.4').prefixLength() == 1", ""),
    (
        "size(quantity(1)) == 1",
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'quantity' applied to '(int)'\n | size(quantity(1)) == 1\n | .............^",
    ),
    (
        "self.foo().size() == 1",
        "compilation failed: ERROR: <input>:1:9: undeclared reference to 'foo' (in container '')\n | self.foo().size() == 1\n | ........^",
    ),
    (
        "bar(1) == 1",
        "compilation failed: ERROR: <input>:1:4: undeclared reference to 'bar' (in container '')\n | bar(1) == 1\n | ...^",
    ),
    (
        "self.nope.size() == 1",
        "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope.size() == 1\n | ....^",
    ),
    (
        "size(self.nope) == 1",
        "compilation failed: ERROR: <input>:1:10: undefined field 'nope'\n | size(self.nope) == 1\n | .........^",
    ),
    (
        "self.name.foo() && true",
        "compilation failed: ERROR: <input>:1:14: undeclared reference to 'foo' (in container '')\n | self.name.foo() && true\n | .............^",
    ),
    (
        "bar(1) + 1 == 2",
        "compilation failed: ERROR: <input>:1:4: undeclared reference to 'bar' (in container '')\n | bar(1) + 1 == 2\n | ...^",
    ),
    (
        "self.name.matches(1) || true",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'matches' applied to 'string.(int)'\n | self.name.matches(1) || true\n | .................^",
    ),
    (
        "type(self.name) == 1",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for '_==_' applied to '(type(string), int)'\n | type(self.name) == 1\n | ................^",
    ),
    ("type(self.name) == int", ""),
    (
        "self.name.matches('a') && self.name.matches('[')",
        "compilation failed: ERROR: <input>:1:45: invalid matches argument\n | self.name.matches('a') && self.name.matches('[')\n | ............................................^",
    ),
    (
        "self.name.matches('[') || self.count == 'a'",
        "compilation failed: ERROR: <input>:1:38: found no matching overload for '_==_' applied to '(int, string)'\n | self.name.matches('[') || self.count == 'a'\n | .....................................^",
    ),
    (
        "duration('xx') == duration('yy')",
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n | duration('xx') == duration('yy')\n | .........^\nERROR: <input>:1:28: invalid duration argument\n | duration('xx') == duration('yy')\n | ...........................^",
    ),
    (
        "duration(self.name) == duration('yy')",
        "compilation failed: ERROR: <input>:1:33: invalid duration argument\n | duration(self.name) == duration('yy')\n | ................................^",
    ),
    (
        "timestamp('2020-01-01T00:00:00Z') < timestamp('2020-13-01T00:00:00Z')",
        "compilation failed: ERROR: <input>:1:47: invalid timestamp argument\n | timestamp('2020-01-01T00:00:00Z') < timestamp('2020-13-01T00:00:00Z')\n | ..............................................^",
    ),
    ("duration('-1.5h') < duration('1h30m')", ""),
    (
        "duration('1') < duration('1s')",
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n | duration('1') < duration('1s')\n | .........^",
    ),
    (
        "duration('') < duration('1s')",
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n | duration('') < duration('1s')\n | .........^",
    ),
    ("duration('1us') < duration('1µs')", ""),
    ("timestamp('2020-01-01T00:00:00+01:00') < timestamp('2020-01-01T00:00:00.123456789Z')", ""),
    (
        "timestamp('2020-01-01t00:00:00z') < timestamp('2020-01-01T00:00:00Z')",
        "compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('2020-01-01t00:00:00z') < timestamp('2020-01-01T00:00:00Z')\n | ..........^",
    ),
    (
        "timestamp('0000-01-01T00:00:00Z') < timestamp('9999-12-31T23:59:59Z')",
        "compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('0000-01-01T00:00:00Z') < timestamp('9999-12-31T23:59:59Z')\n | ..........^",
    ),
    (
        "timestamp('10000-01-01T00:00:00Z') < timestamp('2020-01-01T00:00:00Z')",
        "compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n | timestamp('10000-01-01T00:00:00Z') < timestamp('2020-01-01T00:00:00Z')\n | ..........^",
    ),
    ("self.name.matches('\\\\d+')", ""),
    ("self.name.matches('(?i)abc')", ""),
    (
        "self.name.matches('a{2,1}')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('a{2,1}')\n | ..................^",
    ),
    (
        "self.name.matches('a**')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('a**')\n | ..................^",
    ),
    ("self.name.matches('\\\\p{Greek}')", ""),
    ("self.name.matches('(?<n>a)')", ""),
    (
        "self.name.matches('a{1001}')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('a{1001}')\n | ..................^",
    ),
    ("self.name.matches('\\\\z')", ""),
    (
        "self.name.matches('\\\\C')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('\\\\C')\n | ..................^",
    ),
    ("self.name.matches('[[:alpha:]]')", ""),
    ("self.name.matches('\\\\Q.*\\\\E')", ""),
    (
        "self.name.matches(')')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches(')')\n | ..................^",
    ),
    (
        "self.name.matches('x(?=y)')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('x(?=y)')\n | ..................^",
    ),
    (
        "self.name.matches('\\\\8')",
        "compilation failed: ERROR: <input>:1:19: invalid matches argument\n | self.name.matches('\\\\8')\n | ..................^",
    ),
    ("matches(self.name, ')')", "program instantiation failed: error parsing regexp: unexpected ): `)`"),
    (
        "matches(self.name, 'a**')",
        "program instantiation failed: error parsing regexp: invalid nested repetition operator: `**`",
    ),
    ("self.name.find('(') == ''", "program instantiation failed: error parsing regexp: missing closing ): `(`"),
    (
        "self.name.findAll('a**', 1) == []",
        "program instantiation failed: error parsing regexp: invalid nested repetition operator: `**`",
    ),
    (
        "{\"a\": 1, \"b\": \"c\"} == {}",
        "compilation failed: ERROR: <input>:1:15: expected type 'int' but found 'string'\n | {\"a\": 1, \"b\": \"c\"} == {}\n | ..............^",
    ),
    (
        "[1, 2.0] == []",
        "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'double'\n | [1, 2.0] == []\n | ....^",
    ),
    ("dyn(1) == 'a'", ""),
    (
        "[dyn(1), 'a'] == []",
        "compilation failed: ERROR: <input>:1:10: expected type 'dyn' but found 'string'\n | [dyn(1), 'a'] == []\n | .........^",
    ),
    ("self.ios == 'a' && self.ios == 1", ""),
    ("self.labels.x.size() == 1", ""),
    ("self.tags.exists_one(t, t == 'a')", ""),
    ("[1, 2].sum() == 3", ""),
    (
        "[1.0, 2].sum() == 3",
        "compilation failed: ERROR: <input>:1:7: expected type 'double' but found 'int'\n | [1.0, 2].sum() == 3\n | ......^",
    ),
    ("[].sum() == 0", ""),
    ("[duration('1s')].sum() == duration('1s')", ""),
    ("[1u].sum() == 1u", ""),
    ("[true].isSorted()", ""),
    ("[timestamp('2020-01-01T00:00:00Z')].min() == timestamp('2020-01-01T00:00:00Z')", ""),
    (
        "[[1]].isSorted()",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'isSorted' applied to 'list(list(int)).()'\n | [[1]].isSorted()\n | ..............^",
    ),
    (
        "[1].indexOf(1.0) == 0",
        "compilation failed: ERROR: <input>:1:12: found no matching overload for 'indexOf' applied to 'list(int).(double)'\n | [1].indexOf(1.0) == 0\n | ...........^",
    ),
    (
        "self.labels.indexOf('a') == 0",
        "compilation failed: ERROR: <input>:1:20: found no matching overload for 'indexOf' applied to 'map(string, string).(string)'\n | self.labels.indexOf('a') == 0\n | ...................^",
    ),
    ("optional.none().orValue(1) == 1", ""),
    (
        "optional.of('a').or(optional.of(1)).hasValue()",
        "compilation failed: ERROR: <input>:1:20: found no matching overload for 'or' applied to 'optional_type(string).(optional_type(int))'\n | optional.of('a').or(optional.of(1)).hasValue()\n | ...................^",
    ),
    ("self.?obj.?x.orValue('') == ''", ""),
    ("self.tags[?0].orValue('') == ''", ""),
    ("self.labels[?'a'].orValue('') == ''", ""),
    ("[?optional.of(1)] == [1]", ""),
    ("{?'a': optional.of(1)} == {'a': 1}", ""),
    (
        "self.name.optMap(n, n).hasValue()",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'hasValue' applied to 'string.()'\n | self.name.optMap(n, n).hasValue()\n | ................^\nERROR: <input>:1:17: found no matching overload for 'value' applied to 'string.()'\n | self.name.optMap(n, n).hasValue()\n | ................^",
    ),
    ("'a'.charAt(0) == 'a'", ""),
    ("'abc'.substring(4) == 'a'", ""),
    (
        "strings.quote(1) == 'a'",
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'strings.quote' applied to '(int)'\n | strings.quote(1) == 'a'\n | .............^",
    ),
    ("quantity(self.name).add(1) == quantity('1')", ""),
    (
        "quantity(self.name).mul(2).isInteger()",
        "compilation failed: ERROR: <input>:1:24: undeclared reference to 'mul' (in container '')\n | quantity(self.name).mul(2).isInteger()\n | .......................^",
    ),
    (
        "quantity(self.name).div(2).isInteger()",
        "compilation failed: ERROR: <input>:1:24: undeclared reference to 'div' (in container '')\n | quantity(self.name).div(2).isInteger()\n | .......................^",
    ),
    (
        "quantity(self.name).divInt(2).isInteger()",
        "compilation failed: ERROR: <input>:1:27: undeclared reference to 'divInt' (in container '')\n | quantity(self.name).divInt(2).isInteger()\n | ..........................^",
    ),
    ("sign(quantity(self.name)) == 1", ""),
    (
        "self.tags.reverse() == []",
        "compilation failed: ERROR: <input>:1:18: undeclared reference to 'reverse' (in container '')\n | self.tags.reverse() == []\n | .................^",
    ),
    (
        "self.tags.distinct() == []",
        "compilation failed: ERROR: <input>:1:19: undeclared reference to 'distinct' (in container '')\n | self.tags.distinct() == []\n | ..................^",
    ),
    (
        "self.tags.flatten() == []",
        "compilation failed: ERROR: <input>:1:18: undeclared reference to 'flatten' (in container '')\n | self.tags.flatten() == []\n | .................^",
    ),
    (
        "self.tags.slice(0, 1) == []",
        "compilation failed: ERROR: <input>:1:16: undeclared reference to 'slice' (in container '')\n | self.tags.slice(0, 1) == []\n | ...............^",
    ),
    (
        "lists.range(3) == [0, 1, 2]",
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'lists' (in container '')\n | lists.range(3) == [0, 1, 2]\n | ^\nERROR: <input>:1:12: undeclared reference to 'range' (in container '')\n | lists.range(3) == [0, 1, 2]\n | ...........^",
    ),
    (
        "self.tags.sort() == []",
        "compilation failed: ERROR: <input>:1:15: undeclared reference to 'sort' (in container '')\n | self.tags.sort() == []\n | ..............^",
    ),
    (
        "self.name.trim(1) == ''",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'trim' applied to 'string.(int)'\n | self.name.trim(1) == ''\n | ..............^",
    ),
    (
        "'a'.lastIndexOf('a', 'b') == 0",
        "compilation failed: ERROR: <input>:1:16: found no matching overload for 'lastIndexOf' applied to 'string.(string, string)'\n | 'a'.lastIndexOf('a', 'b') == 0\n | ...............^",
    ),
    ("self.ts.getDayOfWeek('UTC') == 1", ""),
    (
        "self.d.getHours('UTC') == 1",
        "compilation failed: ERROR: <input>:1:16: found no matching overload for 'getHours' applied to 'duration.(string)'\n | self.d.getHours('UTC') == 1\n | ...............^",
    ),
    ("timestamp(self.ts) == self.ts", ""),
    ("duration(self.d) == self.d", ""),
    ("int(self.d) == 1", ""),
    ("int(1.5) == 1", ""),
    ("int(1u) == 1", ""),
    ("uint(1.5) == 1u", ""),
    ("uint('1') == 1u", ""),
    (
        "uint(self.ts) == 1u",
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'uint' applied to '(timestamp)'\n | uint(self.ts) == 1u\n | ....^",
    ),
    ("double('1') == 1.0", ""),
    ("double(1u) == 1.0", ""),
    (
        "double(self.ts) == 1.0",
        "compilation failed: ERROR: <input>:1:7: found no matching overload for 'double' applied to '(timestamp)'\n | double(self.ts) == 1.0\n | ......^",
    ),
    ("string(self.ts) == ''", ""),
    ("string(self.d) == ''", ""),
    ("string(b'a') == ''", ""),
    ("string(true) == ''", ""),
    ("string(1.5) == ''", ""),
    ("string(1u) == ''", ""),
    (
        "string(self.labels) == ''",
        "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(map(string, string))'\n | string(self.labels) == ''\n | ......^",
    ),
    ("bool(self.name)", ""),
    ("bytes(b'a') == b'a'", ""),
    ("timestamp(1) > self.ts", ""),
    (
        "duration(1) > self.d",
        "compilation failed: ERROR: <input>:1:10: invalid duration argument\n | duration(1) > self.d\n | .........^",
    ),
    (
        "duration(1.5) > self.d",
        "compilation failed: ERROR: <input>:1:9: found no matching overload for 'duration' applied to '(double)'\n | duration(1.5) > self.d\n | ........^",
    ),
    ("timestamp(self.count) > self.ts", ""),
    (
        "string(quantity('1')) == ''",
        "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(kubernetes.Quantity)'\n | string(quantity('1')) == ''\n | ......^",
    ),
    (
        "string(url('a')) == ''",
        "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(kubernetes.URL)'\n | string(url('a')) == ''\n | ......^",
    ),
    ("dyn(self.tags)[0] == 1", ""),
    ("type(self.tags) == list", ""),
    ("type(self.labels) == map", ""),
    ("self.name.size() == 1 && size(self.tags) == 1 && size(self.labels) == 1 && size(b'a') == 1", ""),
    (
        "size(self) == 1",
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(selfTypeN)'\n | size(self) == 1\n | ....^",
    ),
    (
        "self.tags.size(1) == 1",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'size' applied to 'list(string).(int)'\n | self.tags.size(1) == 1\n | ..............^",
    ),
    (
        "size(self.name, 1) == 1",
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(string, int)'\n | size(self.name, 1) == 1\n | ....^",
    ),
    (
        "self.name.contains('a', 'b')",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'contains' applied to 'string.(string, string)'\n | self.name.contains('a', 'b')\n | ..................^",
    ),
    ("self.b.size() == 1", ""),
    (
        "self.b.contains(b'a')",
        "compilation failed: ERROR: <input>:1:16: found no matching overload for 'contains' applied to 'bytes.(bytes)'\n | self.b.contains(b'a')\n | ...............^",
    ),
    ("string(self.b).contains('a')", ""),
    ("'%s'.format([self.b]) == ''", ""),
    (
        "format.named(1).hasValue()",
        "compilation failed: ERROR: <input>:1:13: found no matching overload for 'format.named' applied to '(int)'\n | format.named(1).hasValue()\n | ............^",
    ),
    (
        "format.dns1123Label().validate(1).hasValue()",
        "compilation failed: ERROR: <input>:1:31: found no matching overload for 'validate' applied to 'kubernetes.NamedFormat.(int)'\n | format.dns1123Label().validate(1).hasValue()\n | ..............................^",
    ),
    (
        "self.name.validate('a')",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'validate' applied to 'string.(string)'\n | self.name.validate('a')\n | ..................^",
    ),
    (
        "quantity('1').compareTo(1) == 0",
        "compilation failed: ERROR: <input>:1:24: found no matching overload for 'compareTo' applied to 'kubernetes.Quantity.(int)'\n | quantity('1').compareTo(1) == 0\n | .......................^",
    ),
    ("url('a').getQuery()['a'][0] == ''", ""),
    (
        "url('a').getScheme() == 1",
        "compilation failed: ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(string, int)'\n | url('a').getScheme() == 1\n | .....................^",
    ),
    (
        "isURL()",
        "compilation failed: ERROR: <input>:1:6: found no matching overload for 'isURL' applied to '()'\n | isURL()\n | .....^",
    ),
    ("ip(self.name) == ip('1.2.3.4')", ""),
    ("cidr(self.name) == cidr('1.2.3.4/8')", ""),
    (
        "ip(self.name).family() == 'a'",
        "compilation failed: ERROR: <input>:1:24: found no matching overload for '_==_' applied to '(int, string)'\n | ip(self.name).family() == 'a'\n | .......................^",
    ),
    (
        "cidr(self.name).containsIP(1)",
        "compilation failed: ERROR: <input>:1:27: found no matching overload for 'containsIP' applied to 'net.CIDR.(int)'\n | cidr(self.name).containsIP(1)\n | ..........................^",
    ),
    (
        "ip(1).family() == 4",
        "compilation failed: ERROR: <input>:1:3: found no matching overload for 'ip' applied to '(int)'\n | ip(1).family() == 4\n | ..^",
    ),
    (
        "ip(self.name).ip() == ip('1.2.3.4')",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'ip' applied to 'net.IP.()'\n | ip(self.name).ip() == ip('1.2.3.4')\n | ................^",
    ),
    ("cidr('1.2.3.0/24').ip().isLoopback()", ""),
    (
        "isIP(1)",
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'isIP' applied to '(int)'\n | isIP(1)\n | ....^",
    ),
    (
        "ip.isCanonical(1)",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'ip.isCanonical' applied to '(int)'\n | ip.isCanonical(1)\n | ..............^",
    ),
    (
        "self.name.isSorted()",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'isSorted' applied to 'string.()'\n | self.name.isSorted()\n | ..................^",
    ),
    (
        "[true].sum()",
        "compilation failed: ERROR: <input>:1:11: found no matching overload for 'sum' applied to 'list(bool).()'\n | [true].sum()\n | ..........^",
    ),
    ("[[1]].indexOf([1]) == 0", ""),
    ("[{'a': 1}].indexOf({'a': 1}) == 0", ""),
    ("self.objs.indexOf(self.objs[0]) == 0", ""),
    (
        "self.objs.isSorted()",
        "compilation failed: ERROR: <input>:1:19: found no matching overload for 'isSorted' applied to 'list(selfTypeN.objs.@idx).()'\n | self.objs.isSorted()\n | ..................^",
    ),
    (
        "['a'].join(1) == ''",
        "compilation failed: ERROR: <input>:1:11: found no matching overload for 'join' applied to 'list(string).(int)'\n | ['a'].join(1) == ''\n | ..........^",
    ),
    (
        "self.labels.join(',') == ''",
        "compilation failed: ERROR: <input>:1:17: found no matching overload for 'join' applied to 'map(string, string).(string)'\n | self.labels.join(',') == ''\n | ................^",
    ),
    (
        "sets.contains([1], [1.0])",
        "compilation failed: ERROR: <input>:1:14: found no matching overload for 'sets.contains' applied to '(list(int), list(double))'\n | sets.contains([1], [1.0])\n | .............^",
    ),
    (
        "sets.equivalent(self.tags, self.nums)",
        "compilation failed: ERROR: <input>:1:16: found no matching overload for 'sets.equivalent' applied to '(list(string), list(int))'\n | sets.equivalent(self.tags, self.nums)\n | ...............^",
    ),
    (
        "self.name.findAll('a', 'b') == []",
        "compilation failed: ERROR: <input>:1:18: found no matching overload for 'findAll' applied to 'string.(string, string)'\n | self.name.findAll('a', 'b') == []\n | .................^",
    ),
    (
        "self.name.find('a', 1) == ''",
        "compilation failed: ERROR: <input>:1:15: found no matching overload for 'find' applied to 'string.(string, int)'\n | self.name.find('a', 1) == ''\n | ..............^",
    ),
    (
        "[self.ios, 1] == []",
        "compilation failed: ERROR: <input>:1:12: expected type 'dyn' but found 'int'\n | [self.ios, 1] == []\n | ...........^",
    ),
    (
        "[self.name, self.ios] == []",
        "compilation failed: ERROR: <input>:1:17: expected type 'string' but found 'dyn'\n | [self.name, self.ios] == []\n | ................^",
    ),
    (
        "[1, self.ios] == []",
        "compilation failed: ERROR: <input>:1:9: expected type 'int' but found 'dyn'\n | [1, self.ios] == []\n | ........^",
    ),
    (
        "{'a': self.ios, 'b': 1} == {}",
        "compilation failed: ERROR: <input>:1:22: expected type 'dyn' but found 'int'\n | {'a': self.ios, 'b': 1} == {}\n | .....................^",
    ),
    (
        "[[1], [self.ios]] == []",
        "compilation failed: ERROR: <input>:1:7: expected type 'list(int)' but found 'list(dyn)'\n | [[1], [self.ios]] == []\n | ......^",
    ),
    (
        "[1, 2.0, 3] == []",
        "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'double'\n | [1, 2.0, 3] == []\n | ....^",
    ),
    (
        "[1.0, 2, 3].sum() == 3",
        "compilation failed: ERROR: <input>:1:7: expected type 'double' but found 'int'\n | [1.0, 2, 3].sum() == 3\n | ......^",
    ),
    (
        "{\"a\": 1, \"b\": \"c\", 1: 2} == {}",
        "compilation failed: ERROR: <input>:1:15: expected type 'int' but found 'string'\n | {\"a\": 1, \"b\": \"c\", 1: 2} == {}\n | ..............^\nERROR: <input>:1:20: expected type 'string' but found 'int'\n | {\"a\": 1, \"b\": \"c\", 1: 2} == {}\n | ...................^",
    ),
    (
        "{'a': self.ios, 'b': 1}.size() == 2",
        "compilation failed: ERROR: <input>:1:22: expected type 'dyn' but found 'int'\n | {'a': self.ios, 'b': 1}.size() == 2\n | .....................^",
    ),
    ("\"%s\".format([[1, 'a']]) == ''", ""),
    ("[\"%s\".format([[1, 'a']])] == []", ""),
    ("self.ts == null", ""),
    ("self.d == null", ""),
    (
        "self.name == null",
        "compilation failed: ERROR: <input>:1:11: found no matching overload for '_==_' applied to '(string, null)'\n | self.name == null\n | ..........^",
    ),
    ("quantity('1') == null", ""),
    (
        "['a', null] == []",
        "compilation failed: ERROR: <input>:1:7: expected type 'string' but found 'null'\n | ['a', null] == []\n | ......^",
    ),
    (
        "[null, 'a'] == []",
        "compilation failed: ERROR: <input>:1:8: expected type 'null' but found 'string'\n | [null, 'a'] == []\n | .......^",
    ),
    ("self.objs == [null]", ""),
    (
        "[self.obj, null] == []",
        "compilation failed: ERROR: <input>:1:12: expected type 'selfTypeN.obj' but found 'null'\n | [self.obj, null] == []\n | ...........^",
    ),
    ("[optional.none(), optional.of(1)] == []", ""),
];
