//! Go's `time.Parse`, checked against the oracle's words and cells.

use super::*;

/// Go's words, as the oracle's CEL errors quote them.
#[test]
fn errors_are_gos() {
    assert_eq!(parse_error("2024-13-01", DATE).as_deref(), Some(r#"parsing time "2024-13-01": month out of range"#));
    assert_eq!(
        parse_error("nope", DATE_TIME).as_deref(),
        Some(r#"parsing time "nope" as "2006-01-02T15:04:05": cannot parse "nope" as "2006""#)
    );
    assert_eq!(
        parse_error("2024-01-02", DATE_TIME).as_deref(),
        Some(r#"parsing time "2024-01-02" as "2006-01-02T15:04:05": cannot parse "" as "T""#)
    );
    assert_eq!(parse_error("2024-02-30", DATE).as_deref(), Some(r#"parsing time "2024-02-30": day out of range"#));
    assert_eq!(
        parse_error("2024-01-02T03:04:05Z", DATE_TIME).as_deref(),
        Some(r#"parsing time "2024-01-02T03:04:05Z": extra text: "Z""#)
    );
    assert_eq!(parse_error("2024-01-02T03:04:05.25", DATE_TIME), None);
    assert_eq!(parse_error("2024-01-02", DATE), None);
    assert_eq!(
        parse_error("2024-01-02T03:04:05+25:00", RFC3339).as_deref(),
        Some(r#"parsing time "2024-01-02T03:04:05+25:00": time zone offset hour out of range"#)
    );
    assert_eq!(
        parse_error("2024-01-02T03:04:05z", RFC3339).as_deref(),
        Some(r#"parsing time "2024-01-02T03:04:05z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00""#)
    );
}

fn at(s: &str) -> Option<String> {
    parse_rfc3339(s).map(|t| t.to_string())
}

/// What the oracle's printer columns of type date showed for these: an age, or
/// `<invalid>` (Go's parser refused them).
#[test]
fn rfc3339_is_read_as_go_reads_it() {
    assert_eq!(at("2020-01-02T03:04:05Z").as_deref(), Some("2020-01-02T03:04:05Z"));
    assert_eq!(at("2020-01-02T3:04:05Z").as_deref(), Some("2020-01-02T03:04:05Z"));
    assert_eq!(at("2020-01-02T03:04:05,5Z").as_deref(), Some("2020-01-02T03:04:05.5Z"));
    assert_eq!(at("2020-01-02T03:04:05.1234567891234Z").as_deref(), Some("2020-01-02T03:04:05.123456789Z"));
    assert_eq!(at("2020-01-02T03:04:05+24:00").as_deref(), Some("2020-01-01T03:04:05Z"));
    assert_eq!(at("2020-01-02T03:04:05+01:60").as_deref(), Some("2020-01-02T01:04:05Z"));
    assert_eq!(at("2020-01-02T03:04:05-07:30").as_deref(), Some("2020-01-02T10:34:05Z"));
    assert_eq!(at("0000-01-01T00:00:00Z").as_deref(), Some("0000-01-01T00:00:00Z"));
    assert_eq!(at("2024-02-29T00:00:00Z").as_deref(), Some("2024-02-29T00:00:00Z"));
    for refused in [
        "2020-01-02t03:04:05z",
        "2020-01-02T03:04:05z",
        "2020-01-02 03:04:05Z",
        "2020-01-02T03:04Z",
        "2020-01-02",
        "2020-01-02T03:04:05",
        "2020-1-02T03:04:05Z",
        "2020-01-2T03:04:05Z",
        "2020-01-02T03:4:05Z",
        "2020-01-02T03:04:5Z",
        "2020-01-02T24:00:00Z",
        "2020-01-02T23:59:60Z",
        "2021-02-29T00:00:00Z",
        "2020-13-01T00:00:00Z",
        "2020-01-00T00:00:00Z",
        "+2020-01-02T03:04:05Z",
        "2020-01-02T03:04:05.Z",
        "2020-01-02T03:04:05Z ",
        "2020-01-02T03:04:05+25:00",
        "2020-01-02T03:04:05+01:61",
        "2020-01-02T03:04:05+0100",
        "2020-01-02T123:04:05Z",
        "",
    ] {
        assert_eq!(at(refused), None, "{refused}");
    }
}

#[test]
fn durations_saturate_and_the_zero_time_is_known() {
    let now = parse_rfc3339("2026-11-29T00:00:00Z").expect("now");
    let old = parse_rfc3339("1000-01-01T00:00:00Z").expect("old");
    assert_eq!(seconds_since(old, now), 9_223_372_036);
    assert_eq!(seconds_since(now, old), -9_223_372_036);
    assert!(is_zero(parse_rfc3339("0001-01-01T00:00:00Z").expect("zero")));
    assert!(is_zero(parse_rfc3339("0001-01-01T01:00:00+01:00").expect("zero")));
    assert!(!is_zero(parse_rfc3339("0001-01-01T00:00:00.5Z").expect("not zero")));
}

/// `metav1.MicroTime`'s layout, as the oracle refuses Events' and Leases' times.
#[test]
fn micro_times_want_six_digits() {
    assert_eq!(parse_error("2020-01-02T03:04:05.123456Z", RFC3339_MICRO), None);
    assert_eq!(parse_error("2020-01-02T3:04:05,123456+01:00", RFC3339_MICRO), None);
    assert_eq!(
        parse_error("2020-01-02T3:04:05.5Z", RFC3339_MICRO).as_deref(),
        Some(
            r#"parsing time "2020-01-02T3:04:05.5Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".5Z" as ".000000""#
        )
    );
    assert_eq!(
        parse_error("é", RFC3339).as_deref(),
        Some(r#"parsing time "\xc3\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\xc3\xa9" as "2006""#)
    );
}

#[test]
fn go_times_are_rewritten_strictly() {
    assert_eq!(strict_rfc3339("2020-01-01T1:00:00,5Z").as_deref(), Some("2020-01-01T01:00:00.500000000+00:00"));
    assert_eq!(strict_rfc3339("2020-01-01T01:00:00-07:30").as_deref(), Some("2020-01-01T01:00:00.000000000-07:30"));
    assert_eq!(strict_rfc3339("2020-01-02T03:04:05+24:00").as_deref(), Some("2020-01-01T03:04:05Z"));
    assert_eq!(strict_rfc3339("2020-01-01t01:00:00z"), None);
}
