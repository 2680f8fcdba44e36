//! The functions kube-apiserver 1.32 declares in the CEL environment of CRD validation
//! rules, with their overloads, and cel-go's overload resolution over them.
//!
//! The environment is cel-go's standard library, its optional types, strings (version
//! 2) and sets extensions, and kube's libraries: lists, regex, URLs, quantities, IPs and
//! CIDRs, named formats and authorization (declared although no rule can reach an
//! authorizer). A name declared nowhere is cel-go's `undeclared reference`; a declared one
//! whose overloads take none of the argument types is its `found no matching overload`.
//! What kube 1.32 leaves out matters as much: no `reverse`, `first`, `math.*`,
//! `cel.bind`, two-variable comprehensions or quantity `mul`/`div` (the oracle refuses
//! them all).

use super::types::CelType;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Each function's overloads: `(args) -> result` for a global call,
/// `receiver.(args) -> result` for a member call. One capital letter is a type parameter.
const DECLS: &[(&str, &[&str])] = &[
    // cel-go's standard library.
    (
        "size",
        &[
            "(string) -> int",
            "(bytes) -> int",
            "(list(A)) -> int",
            "(map(A, B)) -> int",
            "string.() -> int",
            "bytes.() -> int",
            "list(A).() -> int",
            "map(A, B).() -> int",
        ],
    ),
    (
        "int",
        &[
            "(int) -> int",
            "(uint) -> int",
            "(double) -> int",
            "(string) -> int",
            "(timestamp) -> int",
            "(duration) -> int",
        ],
    ),
    ("uint", &["(uint) -> uint", "(int) -> uint", "(double) -> uint", "(string) -> uint"]),
    ("double", &["(double) -> double", "(int) -> double", "(uint) -> double", "(string) -> double"]),
    (
        "string",
        &[
            "(string) -> string",
            "(int) -> string",
            "(uint) -> string",
            "(double) -> string",
            "(bool) -> string",
            "(bytes) -> string",
            "(timestamp) -> string",
            "(duration) -> string",
            "(net.IP) -> string",
            "(net.CIDR) -> string",
        ],
    ),
    ("bool", &["(bool) -> bool", "(string) -> bool"]),
    ("bytes", &["(bytes) -> bytes", "(string) -> bytes"]),
    ("timestamp", &["(timestamp) -> timestamp", "(string) -> timestamp", "(int) -> timestamp"]),
    ("duration", &["(duration) -> duration", "(string) -> duration", "(int) -> duration"]),
    ("dyn", &["(A) -> dyn"]),
    ("type", &["(A) -> type(A)"]),
    ("matches", &["(string, string) -> bool", "string.(string) -> bool"]),
    ("contains", &["string.(string) -> bool"]),
    ("startsWith", &["string.(string) -> bool"]),
    ("endsWith", &["string.(string) -> bool"]),
    ("getFullYear", &["timestamp.() -> int", "timestamp.(string) -> int"]),
    ("getMonth", &["timestamp.() -> int", "timestamp.(string) -> int"]),
    ("getDayOfYear", &["timestamp.() -> int", "timestamp.(string) -> int"]),
    ("getDayOfMonth", &["timestamp.() -> int", "timestamp.(string) -> int"]),
    ("getDate", &["timestamp.() -> int", "timestamp.(string) -> int"]),
    ("getDayOfWeek", &["timestamp.() -> int", "timestamp.(string) -> int"]),
    ("getHours", &["timestamp.() -> int", "timestamp.(string) -> int", "duration.() -> int"]),
    ("getMinutes", &["timestamp.() -> int", "timestamp.(string) -> int", "duration.() -> int"]),
    ("getSeconds", &["timestamp.() -> int", "timestamp.(string) -> int", "duration.() -> int"]),
    ("getMilliseconds", &["timestamp.() -> int", "timestamp.(string) -> int", "duration.() -> int"]),
    // Optional types.
    ("optional.of", &["(A) -> optional_type(A)"]),
    ("optional.ofNonZeroValue", &["(A) -> optional_type(A)"]),
    ("optional.none", &["() -> optional_type(A)"]),
    ("hasValue", &["optional_type(A).() -> bool"]),
    ("value", &["optional_type(A).() -> A"]),
    ("or", &["optional_type(A).(optional_type(A)) -> optional_type(A)"]),
    ("orValue", &["optional_type(A).(A) -> A"]),
    // Strings extension, version 2.
    ("charAt", &["string.(int) -> string"]),
    ("indexOf", &["string.(string) -> int", "string.(string, int) -> int", "list(A).(A) -> int"]),
    ("lastIndexOf", &["string.(string) -> int", "string.(string, int) -> int", "list(A).(A) -> int"]),
    ("lowerAscii", &["string.() -> string"]),
    ("upperAscii", &["string.() -> string"]),
    ("replace", &["string.(string, string) -> string", "string.(string, string, int) -> string"]),
    ("split", &["string.(string) -> list(string)", "string.(string, int) -> list(string)"]),
    ("substring", &["string.(int) -> string", "string.(int, int) -> string"]),
    ("trim", &["string.() -> string"]),
    ("join", &["list(string).() -> string", "list(string).(string) -> string"]),
    ("format", &["string.(list(dyn)) -> string"]),
    ("strings.quote", &["(string) -> string"]),
    // Sets extension.
    ("sets.contains", &["(list(A), list(A)) -> bool"]),
    ("sets.equivalent", &["(list(A), list(A)) -> bool"]),
    ("sets.intersects", &["(list(A), list(A)) -> bool"]),
    // kube's lists: over the comparable and the summable item types.
    (
        "isSorted",
        &[
            "list(int).() -> bool",
            "list(uint).() -> bool",
            "list(double).() -> bool",
            "list(bool).() -> bool",
            "list(duration).() -> bool",
            "list(timestamp).() -> bool",
            "list(string).() -> bool",
            "list(bytes).() -> bool",
        ],
    ),
    (
        "sum",
        &["list(int).() -> int", "list(uint).() -> uint", "list(double).() -> double", "list(duration).() -> duration"],
    ),
    (
        "min",
        &[
            "list(int).() -> int",
            "list(uint).() -> uint",
            "list(double).() -> double",
            "list(bool).() -> bool",
            "list(duration).() -> duration",
            "list(timestamp).() -> timestamp",
            "list(string).() -> string",
            "list(bytes).() -> bytes",
        ],
    ),
    (
        "max",
        &[
            "list(int).() -> int",
            "list(uint).() -> uint",
            "list(double).() -> double",
            "list(bool).() -> bool",
            "list(duration).() -> duration",
            "list(timestamp).() -> timestamp",
            "list(string).() -> string",
            "list(bytes).() -> bytes",
        ],
    ),
    // kube's regex.
    ("find", &["string.(string) -> string"]),
    ("findAll", &["string.(string) -> list(string)", "string.(string, int) -> list(string)"]),
    // kube's URLs.
    ("url", &["(string) -> kubernetes.URL"]),
    ("isURL", &["(string) -> bool"]),
    ("getScheme", &["kubernetes.URL.() -> string"]),
    ("getHost", &["kubernetes.URL.() -> string"]),
    ("getHostname", &["kubernetes.URL.() -> string"]),
    ("getPort", &["kubernetes.URL.() -> string"]),
    ("getEscapedPath", &["kubernetes.URL.() -> string"]),
    ("getQuery", &["kubernetes.URL.() -> map(string, list(string))"]),
    // kube's quantities (1.32 declares `sign` global, not a member).
    ("quantity", &["(string) -> kubernetes.Quantity"]),
    ("isQuantity", &["(string) -> bool"]),
    ("sign", &["(kubernetes.Quantity) -> int"]),
    ("isGreaterThan", &["kubernetes.Quantity.(kubernetes.Quantity) -> bool"]),
    ("isLessThan", &["kubernetes.Quantity.(kubernetes.Quantity) -> bool"]),
    ("compareTo", &["kubernetes.Quantity.(kubernetes.Quantity) -> int"]),
    ("asApproximateFloat", &["kubernetes.Quantity.() -> double"]),
    ("asInteger", &["kubernetes.Quantity.() -> int"]),
    ("isInteger", &["kubernetes.Quantity.() -> bool"]),
    (
        "add",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
            "kubernetes.Quantity.(int) -> kubernetes.Quantity",
        ],
    ),
    (
        "sub",
        &[
            "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
            "kubernetes.Quantity.(int) -> kubernetes.Quantity",
        ],
    ),
    // kube's IPs and CIDRs.
    ("ip", &["(string) -> net.IP", "net.CIDR.() -> net.IP"]),
    ("isIP", &["(string) -> bool"]),
    ("ip.isCanonical", &["(string) -> bool"]),
    ("family", &["net.IP.() -> int"]),
    ("isUnspecified", &["net.IP.() -> bool"]),
    ("isLoopback", &["net.IP.() -> bool"]),
    ("isLinkLocalMulticast", &["net.IP.() -> bool"]),
    ("isLinkLocalUnicast", &["net.IP.() -> bool"]),
    ("isGlobalUnicast", &["net.IP.() -> bool"]),
    ("cidr", &["(string) -> net.CIDR"]),
    ("isCIDR", &["(string) -> bool"]),
    ("containsIP", &["net.CIDR.(string) -> bool", "net.CIDR.(net.IP) -> bool"]),
    ("containsCIDR", &["net.CIDR.(string) -> bool", "net.CIDR.(net.CIDR) -> bool"]),
    ("masked", &["net.CIDR.() -> net.CIDR"]),
    ("prefixLength", &["net.CIDR.() -> int"]),
    // kube's named formats.
    ("format.named", &["(string) -> optional_type(kubernetes.NamedFormat)"]),
    ("validate", &["kubernetes.NamedFormat.(string) -> optional_type(list(string))"]),
    ("format.dns1123Label", &["() -> kubernetes.NamedFormat"]),
    ("format.dns1123Subdomain", &["() -> kubernetes.NamedFormat"]),
    ("format.dns1035Label", &["() -> kubernetes.NamedFormat"]),
    ("format.qualifiedName", &["() -> kubernetes.NamedFormat"]),
    ("format.dns1123LabelPrefix", &["() -> kubernetes.NamedFormat"]),
    ("format.dns1123SubdomainPrefix", &["() -> kubernetes.NamedFormat"]),
    ("format.dns1035LabelPrefix", &["() -> kubernetes.NamedFormat"]),
    ("format.labelValue", &["() -> kubernetes.NamedFormat"]),
    ("format.uri", &["() -> kubernetes.NamedFormat"]),
    ("format.uuid", &["() -> kubernetes.NamedFormat"]),
    ("format.byte", &["() -> kubernetes.NamedFormat"]),
    ("format.date", &["() -> kubernetes.NamedFormat"]),
    ("format.datetime", &["() -> kubernetes.NamedFormat"]),
    // kube's authorization library: declared, though no CRD rule has an authorizer.
    ("path", &["kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.PathCheck"]),
    ("group", &["kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.GroupCheck"]),
    (
        "serviceAccount",
        &["kubernetes.authorization.Authorizer.(string, string) -> kubernetes.authorization.Authorizer"],
    ),
    ("resource", &["kubernetes.authorization.GroupCheck.(string) -> kubernetes.authorization.ResourceCheck"]),
    ("subresource", &["kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"]),
    ("namespace", &["kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"]),
    ("name", &["kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"]),
    ("fieldSelector", &["kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"]),
    ("labelSelector", &["kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"]),
    (
        "check",
        &[
            "kubernetes.authorization.PathCheck.(string) -> kubernetes.authorization.Decision",
            "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.Decision",
        ],
    ),
    ("allowed", &["kubernetes.authorization.Decision.() -> bool"]),
    ("reason", &["kubernetes.authorization.Decision.() -> string"]),
    ("errored", &["kubernetes.authorization.Decision.() -> bool"]),
    ("error", &["kubernetes.authorization.Decision.() -> string"]),
];

/// A parameter or result type of an overload.
#[derive(Debug, Clone)]
enum Sig {
    Exact(CelType),
    Param(char),
    List(Box<Sig>),
    Map(Box<Sig>, Box<Sig>),
    Optional(Box<Sig>),
    Type(Box<Sig>),
}

#[derive(Debug)]
struct Overload {
    /// Called on a receiver, which is `args[0]`.
    member: bool,
    args: Vec<Sig>,
    result: Sig,
}

/// The declarations, parsed once.
fn table() -> &'static HashMap<&'static str, Vec<Overload>> {
    static TABLE: OnceLock<HashMap<&'static str, Vec<Overload>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        DECLS.iter().map(|(name, sigs)| (*name, sigs.iter().filter_map(|s| overload(s)).collect())).collect()
    })
}

/// Whether `name` is a declared function.
pub fn declared(name: &str) -> bool {
    table().contains_key(name)
}

/// What resolving a call of a declared function gives.
pub enum Resolved {
    /// The result type (`dyn` when several overloads match with different results).
    Type(CelType),
    /// No overload takes these arguments.
    NoOverload,
}

/// cel-go's `resolveOverload`: the overloads of `name` in the call's style (member when
/// `args[0]` is the receiver) that the argument types are assignable to.
pub fn resolve(name: &str, member: bool, args: &[CelType]) -> Resolved {
    let mut found: Option<CelType> = None;
    for o in table().get(name).into_iter().flatten().filter(|o| o.member == member && o.args.len() == args.len()) {
        let mut bound = HashMap::new();
        if !args.iter().zip(&o.args).all(|(a, s)| assign(a, s, &mut bound)) {
            continue;
        }
        let result = substitute(&o.result, &bound);
        found = Some(match found {
            None => result,
            Some(CelType::Dyn) => CelType::Dyn,
            Some(before) if before == result => before,
            Some(_) => CelType::Dyn,
        });
    }
    found.map_or(Resolved::NoOverload, Resolved::Type)
}

/// Whether a value of `a` may be passed where `s` is declared, binding type parameters
/// as cel-go does (a bound parameter widens to the more general of its two types).
fn assign(a: &CelType, s: &Sig, bound: &mut HashMap<char, CelType>) -> bool {
    match s {
        Sig::Param(p) => match bound.get(p) {
            Some(b) if assignable(a, b) => {
                let general = most_general(a, b);
                bound.insert(*p, general);
                true
            }
            Some(_) => false,
            None => {
                bound.insert(*p, a.clone());
                true
            }
        },
        _ if a.is_open() => true,
        Sig::Exact(t) => assignable(a, t),
        Sig::List(item) => matches!(a, CelType::List(i) if assign(i, item, bound)),
        Sig::Map(k, v) => matches!(a, CelType::Map(ak, av) if assign(ak, k, bound) && assign(av, v, bound)),
        Sig::Optional(inner) => match a {
            CelType::Optional(i) => assign(i, inner, bound),
            CelType::Null => true,
            _ => false,
        },
        Sig::Type(_) => matches!(a, CelType::Type(_)),
    }
}

/// cel-go's `mostGeneral` of two assignable types: the first unless the second is less
/// specific (`dyn` where the first has something more specific).
pub fn most_general(a: &CelType, b: &CelType) -> CelType {
    if less_specific(a, b) { a.clone() } else { b.clone() }
}

/// cel-go's `isEqualOrLessSpecific`.
fn less_specific(a: &CelType, b: &CelType) -> bool {
    match (a, b) {
        (CelType::Dyn, _) => true,
        (_, CelType::Dyn) => false,
        (CelType::List(x), CelType::List(y)) | (CelType::Optional(x), CelType::Optional(y)) => less_specific(x, y),
        (CelType::Map(xk, xv), CelType::Map(yk, yv)) => less_specific(xk, yk) && less_specific(xv, yv),
        (CelType::Type(_), CelType::Type(_)) => true,
        (a, b) => a == b,
    }
}

/// cel-go's `isAssignable` of two concrete types.
pub fn assignable(a: &CelType, b: &CelType) -> bool {
    match (a, b) {
        (a, b) if a.is_open() || b.is_open() => true,
        (CelType::Null, t) | (t, CelType::Null) => t.is_nullable(),
        (CelType::List(x), CelType::List(y)) | (CelType::Optional(x), CelType::Optional(y)) => assignable(x, y),
        (CelType::Map(xk, xv), CelType::Map(yk, yv)) => assignable(xk, yk) && assignable(xv, yv),
        (CelType::Object(x), CelType::Object(y)) => x.name == y.name,
        (CelType::Type(_), CelType::Type(_)) => true,
        (a, b) => a == b,
    }
}

/// A declared type with its parameters bound (unbound ones are `dyn`).
fn substitute(s: &Sig, bound: &HashMap<char, CelType>) -> CelType {
    match s {
        Sig::Exact(t) => t.clone(),
        Sig::Param(p) => bound.get(p).cloned().unwrap_or(CelType::Dyn),
        Sig::List(item) => CelType::List(Box::new(substitute(item, bound))),
        Sig::Map(k, v) => CelType::Map(Box::new(substitute(k, bound)), Box::new(substitute(v, bound))),
        Sig::Optional(inner) => CelType::Optional(Box::new(substitute(inner, bound))),
        Sig::Type(of) => CelType::Type(Box::new(substitute(of, bound))),
    }
}

/// One overload from its text, `None` for a typo in the table (the unit tests parse all).
fn overload(text: &'static str) -> Option<Overload> {
    let (call, result) = text.split_once(" -> ")?;
    let (receiver, args) = match call.strip_prefix('(') {
        Some(args) => (None, args),
        None => {
            let (receiver, args) = call.split_once(".(")?;
            (Some(receiver), args)
        }
    };
    let args = args.strip_suffix(')')?;
    let mut sigs = receiver.map(sig).into_iter().collect::<Option<Vec<_>>>()?;
    sigs.extend(split_top(args).into_iter().map(sig).collect::<Option<Vec<_>>>()?);
    Some(Overload { member: receiver.is_some(), args: sigs, result: sig(result)? })
}

/// `text` split at its top-level commas (none inside parentheses).
fn split_top(text: &'static str) -> Vec<&'static str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        parts.push(last);
    }
    parts
}

/// One type: a primitive, `list(T)`, `map(K, V)`, `optional_type(T)`, `type(T)`, a type
/// parameter (one capital letter), or the name of a library's opaque type.
fn sig(text: &'static str) -> Option<Sig> {
    let (name, params) = match text.split_once('(') {
        Some((name, rest)) => {
            (name, split_top(rest.strip_suffix(')')?).into_iter().map(sig).collect::<Option<Vec<_>>>()?)
        }
        None => (text, Vec::new()),
    };
    let mut params = params.into_iter();
    let mut next = || params.next().map(Box::new);
    Some(match name {
        "int" => Sig::Exact(CelType::Int),
        "uint" => Sig::Exact(CelType::Uint),
        "double" => Sig::Exact(CelType::Double),
        "bool" => Sig::Exact(CelType::Bool),
        "string" => Sig::Exact(CelType::String),
        "bytes" => Sig::Exact(CelType::Bytes),
        "timestamp" => Sig::Exact(CelType::Timestamp),
        "duration" => Sig::Exact(CelType::Duration),
        "dyn" => Sig::Exact(CelType::Dyn),
        "list" => Sig::List(next()?),
        "map" => Sig::Map(next()?, next()?),
        "optional_type" => Sig::Optional(next()?),
        "type" => Sig::Type(next()?),
        p if p.len() == 1 && p.chars().all(|c| c.is_ascii_uppercase()) => Sig::Param(p.chars().next()?),
        opaque => Sig::Exact(CelType::Opaque(opaque)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declaration_parses() {
        for (name, sigs) in DECLS {
            for s in *sigs {
                assert!(overload(s).is_some(), "{name}: {s}");
            }
        }
    }
}
