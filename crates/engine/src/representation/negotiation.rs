//! Content negotiation: which representation an `Accept` header asks for.
//!
//! kube-apiserver's rules (`endpoints/handlers/negotiation`): the header is a list of
//! media ranges tried best first (by `q`, then by specificity); each may carry the
//! parameters `as`, `g`, `v` (a conversion to a `meta.k8s.io` kind), `sv`, `stream`,
//! `export` and `pretty`. An entry the endpoint cannot satisfy is skipped; when none is
//! left the answer is 406 NotAcceptable naming what the server produces. Objects are
//! never produced as protobuf, so a protobuf entry falls through to the next one, as kube
//! does for custom resources; a `Status` is, as kube encodes its errors. Beyond kube:
//! `text/csv` asks for the Table as CSV.
//!
//! Pure: header text in, [`Negotiated`] or the 406 [`ApiError`] out.

use super::MetaVersion;
use crate::status::ApiError;

/// The serialization chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
    /// The Table as comma-separated values (not in kube-apiserver).
    Csv,
    /// kube's protobuf envelope: only ever chosen for a `Status` ([`Endpoint::Plain`]).
    Protobuf,
}

impl Format {
    /// The response `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Yaml => "application/yaml",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Protobuf => "application/vnd.kubernetes.protobuf",
        }
    }
}

/// What the object is turned into before it is serialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The object (or list) itself.
    Object,
    Table(MetaVersion),
    PartialObjectMetadata(MetaVersion),
    PartialObjectMetadataList(MetaVersion),
}

/// The outcome of negotiation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub format: Format,
    pub target: Target,
    /// Indented JSON (`pretty=1`, `?pretty=true`, or a browser / curl user agent).
    pub pretty: bool,
    /// Server-set fields cleared (`export=1`, `?export=1`).
    pub export: bool,
}

impl Negotiated {
    /// Plain JSON.
    pub const JSON: Negotiated =
        Negotiated { format: Format::Json, target: Target::Object, pretty: false, export: false };
}

/// What an endpoint can produce (kube's `EndpointRestrictions` plus its serializers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// A resource's get, list and writes: JSON, YAML, conversions to meta.k8s.io kinds.
    Resource,
    /// A watch: JSON only (the one streaming serializer we have), conversions allowed.
    Watch,
    /// Errors: a `Status` as JSON, YAML or protobuf, no conversion.
    Plain,
    /// Discovery documents (`/api`, `/apis/<group>[/<version>]`): JSON or YAML, no
    /// conversion. kube also writes them as protobuf; we have no encoder for them, so a
    /// protobuf entry is answered as JSON, which every client that asks for it reads too.
    Discovery,
}

/// kube-apiserver's 406 wording, listing the media types of a custom resource endpoint.
pub fn not_acceptable() -> ApiError {
    ApiError::new(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
    )
}

/// kube-apiserver's 406 for a watch whose `Accept` names no stream it encodes.
pub fn not_acceptable_stream() -> ApiError {
    ApiError::new(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
    )
}

/// The media types go-restful's routes of a built-in kind or a CRD produce (kube's
/// serializers), and those its list and watch routes add.
const RESTFUL_PRODUCES: [&str; 3] = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"];
const RESTFUL_STREAMS: [&str; 2] =
    ["application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"];

/// What go-restful's `/version` route produces.
const RESTFUL_VERSION: [&str; 1] = ["application/json"];

/// go-restful's own check of `Accept`, before kube's negotiation, for the routes of built-in
/// kinds and CRDs (and the discovery of the built-in group-versions, `/api` included): one
/// of its media types, without parameters, must be `*/*` or one the route produces
/// (`streams` for lists and watches); else its 406, listing them.
pub fn restful_accepts(accept: Option<&str>, streams: bool) -> Result<(), ApiError> {
    let streams = if streams { RESTFUL_STREAMS.as_slice() } else { &[] };
    restful_produces(accept, &RESTFUL_PRODUCES.iter().chain(streams).copied().collect::<Vec<_>>())
}

/// go-restful's check of `Accept` on `/version`, whose route produces JSON alone.
pub fn restful_accepts_version(accept: Option<&str>) -> Result<(), ApiError> {
    restful_produces(accept, &RESTFUL_VERSION)
}

fn restful_produces(accept: Option<&str>, produced: &[&str]) -> Result<(), ApiError> {
    let accept = accept.filter(|a| !a.is_empty()).unwrap_or("*/*");
    let accepted = accept.split(',').any(|m| {
        let m = m.split(';').next().unwrap_or("").trim();
        m == "*/*" || produced.contains(&m)
    });
    if accepted {
        return Ok(());
    }
    let mut err = ApiError::new(
        406,
        "NotAcceptable",
        format!("406: Not Acceptable\n\nAvailable representations: {}", produced.join(", ")),
    );
    err.details = Some(Box::default());
    Err(err)
}

/// One media range of an `Accept` header.
#[derive(Debug, Clone, PartialEq)]
struct Clause<'a> {
    type_: &'a str,
    subtype: &'a str,
    q: f32,
    params: Vec<(&'a str, &'a str)>,
}

/// Parses an `Accept` header: ranges with parameters, `q` read apart; sorted by `q`
/// (highest first), then concrete types before wildcards, keeping header order on ties.
/// A range with `q=0` stays, last: kube's goautoneg only sorts by `q` (kube-apiserver 1.32
/// answers `Accept: application/json;q=0` with JSON).
fn parse_accept(header: &str) -> Vec<Clause<'_>> {
    let mut clauses: Vec<Clause<'_>> = header
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';');
            let range = pieces.next()?.trim();
            let (type_, subtype) = match range.split_once('/') {
                Some((t, s)) => (t.trim(), s.trim()),
                None if range == "*" => ("*", "*"),
                None => return None,
            };
            let mut clause = Clause { type_, subtype, q: 1.0, params: Vec::new() };
            for param in pieces {
                let Some((k, v)) = param.split_once('=') else { continue };
                let (k, v) = (k.trim(), v.trim());
                if k == "q" {
                    clause.q = v.parse().unwrap_or(0.0);
                } else {
                    clause.params.push((k, v));
                }
            }
            Some(clause)
        })
        .collect();
    let specificity = |c: &Clause<'_>| (c.type_ != "*") as u8 + (c.subtype != "*") as u8;
    clauses.sort_by(|a, b| b.q.total_cmp(&a.q).then(specificity(b).cmp(&specificity(a))));
    clauses
}

/// The media types an endpoint serializes, in preference order.
fn serializers(endpoint: Endpoint) -> &'static [(&'static str, &'static str)] {
    match endpoint {
        Endpoint::Resource | Endpoint::Watch => &[
            ("application", "json"),
            ("application", "yaml"),
            ("application", "vnd.kubernetes.protobuf"),
            ("text", "csv"),
        ],
        Endpoint::Plain | Endpoint::Discovery => {
            &[("application", "json"), ("application", "yaml"), ("application", "vnd.kubernetes.protobuf")]
        }
    }
}

/// Whether `clause` may be served as `(type_, subtype)`, and how (kube's
/// `acceptMediaTypeOptions` with the endpoint's restrictions).
fn accept(clause: &Clause<'_>, (type_, subtype): (&str, &str), endpoint: Endpoint) -> Option<Negotiated> {
    let (mut kind, mut group, mut version, mut convert) = ("", "", "", false);
    let (mut pretty, mut export) = (false, false);
    for (k, v) in &clause.params {
        match *k {
            "as" => (kind, convert) = (v, true),
            "g" => (group, convert) = (v, true),
            "v" => (version, convert) = (v, true),
            // Every endpoint takes `stream=watch` (kube's default restrictions do): a GET
            // so asked is served as a GET, an error as a Status.
            "stream" if !v.is_empty() && *v != "watch" => return None,
            "sv" if !v.is_empty() && (*v != "v1" || endpoint == Endpoint::Plain) => return None,
            "export" => export = *v == "1",
            "pretty" => pretty = *v == "1",
            _ => {}
        }
    }
    let format = match (type_, subtype) {
        ("application", "json") => Format::Json,
        ("application", "yaml") => Format::Yaml,
        ("text", "csv") => Format::Csv,
        ("application", "vnd.kubernetes.protobuf") if endpoint == Endpoint::Plain => Format::Protobuf,
        ("application", "vnd.kubernetes.protobuf") if endpoint == Endpoint::Discovery => Format::Json,
        // Protobuf is accepted by kube but objects are never produced as it: fall through.
        _ => return None,
    };
    let target = if !convert {
        if format == Format::Csv { Target::Table(MetaVersion::V1) } else { Target::Object }
    } else {
        if matches!(endpoint, Endpoint::Plain | Endpoint::Discovery) || group != "meta.k8s.io" {
            return None;
        }
        let version = match version {
            "v1" => MetaVersion::V1,
            "v1beta1" => MetaVersion::V1beta1,
            _ => return None,
        };
        match (kind, format) {
            ("Table", _) => Target::Table(version),
            ("PartialObjectMetadata", Format::Json | Format::Yaml) => Target::PartialObjectMetadata(version),
            ("PartialObjectMetadataList", Format::Json | Format::Yaml) => Target::PartialObjectMetadataList(version),
            _ => return None,
        }
    };
    Some(Negotiated { format, target, pretty, export })
}

/// Chooses a representation for `accept` (the header's value, if any).
pub fn negotiate(accept_header: Option<&str>, endpoint: Endpoint) -> Result<Negotiated, ApiError> {
    if endpoint == Endpoint::Watch {
        // kube picks the object's representation as for a GET, then needs a stream encoder
        // for that one (`NegotiateOutputMediaTypeStream`): a YAML Table before `*/*` is the
        // stream 406, not a JSON watch.
        return match negotiate(accept_header, Endpoint::Resource) {
            Ok(n) if n.format == Format::Json => Ok(n),
            _ => Err(not_acceptable_stream()),
        };
    }
    let header = accept_header.unwrap_or("").trim();
    if header.is_empty() {
        return Ok(Negotiated::JSON);
    }
    for clause in parse_accept(header) {
        for &(t, s) in serializers(endpoint) {
            let matches = (clause.type_ == t && (clause.subtype == s || clause.subtype == "*"))
                || (clause.type_ == "*" && clause.subtype == "*");
            if !matches {
                continue;
            }
            // A wildcard (`*/*`, `text/*`) never selects CSV, which kube does not serve
            // (it answers `text/*` with 406): only an explicit text/csv does.
            if (t, s) == ("text", "csv") && clause.subtype == "*" {
                continue;
            }
            if let Some(n) = accept(&clause, (t, s), endpoint) {
                return Ok(n);
            }
        }
    }
    Err(not_acceptable())
}

/// The versions of aggregated discovery (`apidiscovery.k8s.io` `APIGroupDiscoveryList`)
/// kube 1.32 serves: the same list under two apiVersions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregatedVersion {
    V2,
    V2beta1,
}

/// kube's aggregated-discovery wrapper of `/api` and `/apis`: the best range (in
/// [`parse_accept`]'s order) that converts to an aggregated list in a version served is
/// answered so; ranges that do not are passed over whatever their `q`, since the wrapper's
/// restrictions allow no other conversion. `None` when no range asks for it: the legacy
/// document is served. kube also writes the list as protobuf; we have no encoder for it,
/// so a protobuf range is answered as JSON, which client-go reads by its Content-Type.
pub fn negotiate_aggregated(accept_header: Option<&str>) -> Option<(AggregatedVersion, Negotiated)> {
    for clause in parse_accept(accept_header?) {
        let param = |name: &str| clause.params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        if param("g") != Some("apidiscovery.k8s.io") || param("as") != Some("APIGroupDiscoveryList") {
            continue;
        }
        let version = match param("v") {
            Some("v2") => AggregatedVersion::V2,
            Some("v2beta1") => AggregatedVersion::V2beta1,
            _ => continue,
        };
        // A stream needs a stream encoder (JSON has one, YAML none); a server version is
        // never allowed here.
        let stream = param("stream").filter(|s| !s.is_empty());
        if param("sv").is_some_and(|s| !s.is_empty()) || stream.is_some_and(|s| s != "watch") {
            continue;
        }
        let format = match (clause.type_, clause.subtype) {
            ("application", "yaml") if stream.is_none() => Format::Yaml,
            ("application", "json" | "vnd.kubernetes.protobuf" | "*") | ("*", "*") => Format::Json,
            _ => continue,
        };
        let pretty = param("pretty") == Some("1");
        return Some((version, Negotiated { format, target: Target::Object, pretty, export: false }));
    }
    None
}

/// Go's `strconv.ParseBool` (invalid text is false, as kube's `pretty` reading does).
pub fn parse_bool(s: &str) -> bool {
    matches!(s, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// kube's `isPrettyPrint`: `?pretty=` when given, else a browser or command-line HTTP
/// tool's user agent.
pub fn wants_pretty(pretty_query: Option<&str>, user_agent: Option<&str>) -> bool {
    match pretty_query.filter(|p| !p.is_empty()) {
        Some(p) => parse_bool(p),
        None => user_agent
            .is_some_and(|ua| ua.starts_with("curl") || ua.starts_with("Wget") || ua.starts_with("Mozilla/5.0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(accept: &str) -> Result<Negotiated, ApiError> {
        negotiate(Some(accept), Endpoint::Resource)
    }

    #[test]
    fn kubectl_get_asks_for_a_v1_table_first() {
        let got = n("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json").expect("ok");
        assert_eq!(got.target, Target::Table(MetaVersion::V1));
        assert_eq!(got.format, Format::Json);
    }

    #[test]
    fn unsatisfiable_entries_fall_through_in_order() {
        assert_eq!(n("application/json;as=Foo;v=v1;g=meta.k8s.io, application/yaml").expect("ok").format, Format::Yaml);
        assert_eq!(n("application/vnd.kubernetes.protobuf, application/json").expect("ok"), Negotiated::JSON);
        let partial = n("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json").expect("ok");
        assert_eq!(partial.target, Target::PartialObjectMetadataList(MetaVersion::V1));
        assert_eq!(n("application/json;as=Table;v=v2;g=meta.k8s.io,application/json").expect("ok"), Negotiated::JSON);
        assert_eq!(n("application/json;as=Table;v=v1,application/json").expect("ok"), Negotiated::JSON);
    }

    #[test]
    fn nothing_acceptable_is_406_with_kube_s_message() {
        for accept in ["application/json;as=Foo;v=v1;g=meta.k8s.io", "text/html", "application/vnd.kubernetes.protobuf"]
        {
            let e = n(accept).expect_err(accept);
            assert_eq!((e.code, e.reason.as_str()), (406, "NotAcceptable"));
            assert_eq!(
                e.message,
                "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
            );
        }
    }

    #[test]
    fn q_values_order_the_entries_and_zero_refuses() {
        assert_eq!(n("application/json;q=0.5, application/yaml").expect("ok").format, Format::Yaml);
        assert_eq!(n("application/yaml;q=0, application/json;q=0.1").expect("ok").format, Format::Json);
        assert_eq!(n("application/json;q=0").expect("ok").format, Format::Json);
        assert_eq!(n("application/json;q=0, application/yaml").expect("ok").format, Format::Yaml);
        assert_eq!(n("*/*").expect("ok"), Negotiated::JSON);
        assert_eq!(n("application/*").expect("ok"), Negotiated::JSON);
        assert_eq!(negotiate(None, Endpoint::Resource).expect("ok"), Negotiated::JSON);
    }

    #[test]
    fn parameters_pretty_export_stream_and_server_version() {
        let got = n("application/json;pretty=1;export=1").expect("ok");
        assert!(got.pretty && got.export);
        assert_eq!(n("application/json;stream=watch").expect("a GET so asked is a GET"), Negotiated::JSON);
        assert!(negotiate(Some("application/json;stream=watch"), Endpoint::Watch).is_ok());
        assert!(n("application/json;stream=other").is_err());
        let status = negotiate(Some("application/vnd.kubernetes.protobuf;stream=watch"), Endpoint::Plain);
        assert_eq!(status.expect("a Status").format, Format::Protobuf);
        assert!(n("application/json;sv=v2").is_err());
        assert!(n("application/json;sv=v1").is_ok());
        assert_eq!(n("application/yaml;stream=watch").expect("a GET").format, Format::Yaml);
        let w = |accept: &str| negotiate(Some(accept), Endpoint::Watch);
        assert!(w("application/*, application/yaml;as=Table;g=meta.k8s.io;v=v1").is_err());
        assert!(w("text/csv, application/json").is_err());
        let table = w("application/yaml;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1").expect("ok");
        assert_eq!(table.target, Target::Table(MetaVersion::V1));
        let e = negotiate(Some("application/yaml"), Endpoint::Watch).expect_err("no YAML stream");
        assert_eq!(
            e.message,
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        );
    }

    #[test]
    fn errors_may_be_protobuf_objects_never() {
        let status = negotiate(Some("application/vnd.kubernetes.protobuf"), Endpoint::Plain).expect("a Status");
        assert_eq!(status.format, Format::Protobuf);
        let first = negotiate(Some("application/vnd.kubernetes.protobuf, */*"), Endpoint::Plain).expect("ok");
        assert_eq!(first.format, Format::Protobuf);
        assert!(n("application/vnd.kubernetes.protobuf").is_err());
        assert!(
            negotiate(Some("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"), Endpoint::Plain)
                .is_err()
        );
    }

    #[test]
    fn csv_is_a_table_and_errors_never_convert() {
        let csv = n("text/csv").expect("ok");
        assert_eq!((csv.format, csv.target), (Format::Csv, Target::Table(MetaVersion::V1)));
        assert!(n("text/csv;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").is_err());
        let err = negotiate(Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/yaml"), Endpoint::Plain);
        assert_eq!(err.expect("ok").format, Format::Yaml);
        assert!(negotiate(Some("text/csv"), Endpoint::Plain).is_err());
        assert!(n("text/*").is_err());
        assert_eq!(n("text/*, application/yaml;q=0.5").expect("ok").format, Format::Yaml);
    }

    #[test]
    fn discovery_is_json_or_yaml_and_never_converts() {
        let d = |accept: &str| negotiate(Some(accept), Endpoint::Discovery);
        assert_eq!(d("application/yaml;pretty=1, application/json").expect("ok").format, Format::Yaml);
        assert!(d("application/yaml;pretty=1").expect("ok").pretty);
        assert_eq!(d("application/vnd.kubernetes.protobuf").expect("a stand-in").format, Format::Json);
        assert_eq!(d("application/json;stream=watch").expect("ok"), Negotiated::JSON);
        for refused in ["application/json;as=Table;v=v1;g=meta.k8s.io", "text/plain", "application/cbor", "text/*"] {
            assert_eq!(d(refused).expect_err(refused).message, not_acceptable().message);
        }
    }

    #[test]
    fn go_restful_checks_accept_against_what_a_route_produces() {
        assert!(restful_accepts(Some("application/yaml;as=Table"), false).is_ok());
        assert!(restful_accepts(Some("application/json;stream=watch"), false).is_ok());
        let e = restful_accepts(Some("text/plain"), false).expect_err("406");
        assert_eq!(
            e.message,
            "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        assert!(restful_accepts_version(Some("application/json;as=Table;v=v1;g=meta.k8s.io")).is_ok());
        assert!(restful_accepts_version(None).is_ok());
        let e = restful_accepts_version(Some("application/yaml")).expect_err("406");
        assert_eq!(e.message, "406: Not Acceptable\n\nAvailable representations: application/json");
    }

    #[test]
    fn aggregated_discovery_is_any_range_asking_for_it_best_first() {
        const V2: &str = "g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        const V2BETA1: &str = "g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
        let a = |accept: &str| negotiate_aggregated(Some(accept)).map(|(v, n)| (v, n.format));
        // The legacy range is passed over, whatever its place or q (kube-apiserver 1.32).
        assert_eq!(a(&format!("application/json, application/json;{V2}")), Some((AggregatedVersion::V2, Format::Json)));
        assert_eq!(
            a(&format!("application/json;{V2};q=0.4, application/json;q=0.5")),
            Some((AggregatedVersion::V2, Format::Json))
        );
        assert_eq!(a(&format!("application/json;{V2};q=0")), Some((AggregatedVersion::V2, Format::Json)));
        // Ranges are tried by q, then in order; an unserved version falls through.
        assert_eq!(
            a(&format!("application/json;{V2BETA1};q=0.5, application/json;{V2}")),
            Some((AggregatedVersion::V2, Format::Json))
        );
        assert_eq!(
            a(&format!(
                "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList, application/json;{V2BETA1}"
            )),
            Some((AggregatedVersion::V2beta1, Format::Json))
        );
        assert_eq!(a(&format!("application/yaml;{V2}")), Some((AggregatedVersion::V2, Format::Yaml)));
        assert_eq!(a(&format!("*/*;{V2}")), Some((AggregatedVersion::V2, Format::Json)));
        assert_eq!(a(&format!("application/yaml;{V2};stream=watch")), None);
        assert_eq!(a(&format!("application/json;{V2};sv=v1")), None);
        assert_eq!(a(&format!("text/html;{V2}")), None);
        assert_eq!(a("application/json;as=APIGroupDiscoveryList;v=v2"), None);
        assert_eq!(a("application/json"), None);
        assert_eq!(negotiate_aggregated(None), None);
        assert!(negotiate_aggregated(Some(&format!("application/json;{V2};pretty=1"))).is_some_and(|(_, n)| n.pretty));
    }

    #[test]
    fn pretty_from_query_or_user_agent() {
        assert!(wants_pretty(Some("true"), None));
        assert!(!wants_pretty(Some("false"), Some("curl/8")));
        assert!(wants_pretty(None, Some("curl/7.88.1")));
        assert!(!wants_pretty(None, Some("kubectl/v1.32.0")));
    }
}
