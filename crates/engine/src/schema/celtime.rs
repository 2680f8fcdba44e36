//! A timestamp's parts (`getHours()`, `getDayOfWeek('Asia/Tokyo')`, ...) as cel-go reads
//! them: in UTC, or in the time zone the argument names, an IANA name that Go's
//! `time.LoadLocation` finds in the system's zoneinfo (`UTC`, `Local`, `America/New_York`,
//! case-sensitive) or an offset `[+-]HH:MM` read as cel-go 0.22 reads it (any integers,
//! unchecked). The `cel` crate reads a timestamp in its own offset and ignores the zone.
//!
//! A duration's parts are Go's totals, truncated toward zero.

use chrono::{Datelike, NaiveDateTime, TimeDelta, Timelike};
use kube_cel::cel::extractors::{Arguments, This};
use kube_cel::cel::objects::Value;
use kube_cel::cel::{Context, ExecutionError, ResolveResult};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Go's `platformZoneSources`, searched in order.
const ZONE_SOURCES: [&str; 4] =
    ["/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo/"];

/// The parts a timestamp is asked for.
#[derive(Clone, Copy)]
enum Part {
    FullYear,
    Month,
    DayOfYear,
    DayOfMonth,
    Date,
    DayOfWeek,
    Hours,
    Minutes,
    Seconds,
    Milliseconds,
}

impl Part {
    const ALL: [(&'static str, Part); 10] = [
        ("getFullYear", Part::FullYear),
        ("getMonth", Part::Month),
        ("getDayOfYear", Part::DayOfYear),
        ("getDayOfMonth", Part::DayOfMonth),
        ("getDate", Part::Date),
        ("getDayOfWeek", Part::DayOfWeek),
        ("getHours", Part::Hours),
        ("getMinutes", Part::Minutes),
        ("getSeconds", Part::Seconds),
        ("getMilliseconds", Part::Milliseconds),
    ];

    /// The part of a wall-clock time.
    fn of(self, t: &NaiveDateTime) -> i64 {
        let n = match self {
            Part::FullYear => t.year(),
            Part::Month => t.month0() as i32,
            Part::DayOfYear => t.ordinal0() as i32,
            Part::DayOfMonth => t.day0() as i32,
            Part::Date => t.day() as i32,
            Part::DayOfWeek => t.weekday().num_days_from_sunday() as i32,
            Part::Hours => t.hour() as i32,
            Part::Minutes => t.minute() as i32,
            Part::Seconds => t.second() as i32,
            Part::Milliseconds => (t.nanosecond() % 1_000_000_000 / 1_000_000) as i32,
        };
        i64::from(n)
    }

    /// A duration's part: Go's totals (`d.Milliseconds()`), truncated toward zero; the
    /// `cel` crate's milliseconds wrap past an `i32`.
    fn of_duration(self, d: &TimeDelta) -> ResolveResult {
        let total = match self {
            Part::Hours => d.num_hours(),
            Part::Minutes => d.num_minutes(),
            Part::Seconds => d.num_seconds(),
            Part::Milliseconds => d.num_milliseconds(),
            _ => return Err(ExecutionError::NoSuchOverload),
        };
        Ok(Value::Int(total))
    }
}

/// Adds the accessors to `ctx` (after the `cel` crate's, which they replace).
pub fn register(ctx: &mut Context) {
    for (name, part) in Part::ALL {
        ctx.add_function(name, move |This(this): This<Value>, Arguments(args): Arguments| accessor(part, this, &args));
    }
}

fn accessor(part: Part, this: Value, args: &[Value]) -> ResolveResult {
    let t = match this {
        Value::Timestamp(t) => t.naive_utc(),
        Value::Duration(d) if args.is_empty() => return part.of_duration(&d),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    let offset = match args {
        [] => 0,
        [Value::String(zone)] => {
            let zone = zone_offset(zone, t).map_err(|e| ExecutionError::function_error("timeZone", e))?;
            i64::from(zone)
        }
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    let local = t.checked_add_signed(TimeDelta::seconds(offset)).ok_or(ExecutionError::NoSuchOverload)?;
    Ok(Value::Int(part.of(&local)))
}

/// Seconds east of UTC of `zone` at the instant `utc`, or Go's error text.
fn zone_offset(zone: &str, utc: NaiveDateTime) -> Result<i32, String> {
    let Some((hours, minutes)) = zone.split_once(':') else {
        let tz = load_location(zone)?;
        // jiff's range stops a day short of CEL's (9999-12-31): the zone's rule there holds.
        let seconds =
            utc.and_utc().timestamp().clamp(jiff::Timestamp::MIN.as_second(), jiff::Timestamp::MAX.as_second());
        let instant = jiff::Timestamp::new(seconds, 0).map_err(|e| e.to_string())?;
        return Ok(tz.to_offset(instant).seconds());
    };
    let hours = go_atoi(hours)?;
    let minutes = go_atoi(minutes)?;
    let total = if zone.starts_with('-') { hours * 60 - minutes } else { hours * 60 + minutes };
    i32::try_from(total.saturating_mul(60)).map_err(|_| format!("timezone offset out of range: {zone}"))
}

/// Go's `strconv.Atoi`, with its error texts.
fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {}: invalid syntax", crate::field::go_quote(s)));
    }
    s.parse::<i64>().map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", crate::field::go_quote(s)))
}

/// Go's `time.LoadLocation`: `""` and `UTC` are UTC, `Local` the process's zone, other
/// names a file of the zoneinfo database (read once, then kept).
fn load_location(name: &str) -> Result<jiff::tz::TimeZone, String> {
    if name.is_empty() || name == "UTC" {
        return Ok(jiff::tz::TimeZone::UTC);
    }
    if name == "Local" {
        return Ok(local());
    }
    if name.contains("..") || name.starts_with(['/', '\\']) {
        return Err("time: invalid location name".into());
    }
    static LOADED: OnceLock<Mutex<HashMap<String, jiff::tz::TimeZone>>> = OnceLock::new();
    let loaded = LOADED.get_or_init(Mutex::default);
    if let Some(tz) = loaded.lock().unwrap_or_else(|e| e.into_inner()).get(name) {
        return Ok(tz.clone());
    }
    let tz = read_zone(name).ok_or_else(|| format!("unknown time zone {name}"))?;
    loaded.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_string(), tz.clone());
    Ok(tz)
}

/// A zone of the system's database, from the first source that has it (Go's `$ZONEINFO`
/// first when set).
fn read_zone(name: &str) -> Option<jiff::tz::TimeZone> {
    let custom = std::env::var("ZONEINFO").ok().map(|dir| format!("{dir}/"));
    custom.iter().map(String::as_str).chain(ZONE_SOURCES).find_map(|dir| {
        let data = std::fs::read(format!("{dir}{name}")).ok()?;
        jiff::tz::TimeZone::tzif(name, &data).ok()
    })
}

/// Go's `time.Local`: `$TZ` when set (empty for UTC), else `/etc/localtime`, else UTC.
fn local() -> jiff::tz::TimeZone {
    static LOCAL: OnceLock<jiff::tz::TimeZone> = OnceLock::new();
    LOCAL
        .get_or_init(|| {
            let from_file =
                |path: &str| std::fs::read(path).ok().and_then(|d| jiff::tz::TimeZone::tzif("Local", &d).ok());
            match std::env::var("TZ") {
                Ok(tz) if tz.is_empty() => None,
                Ok(tz) => read_zone(tz.trim_start_matches(':')),
                Err(_) => from_file("/etc/localtime"),
            }
            .unwrap_or(jiff::tz::TimeZone::UTC)
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_cel::KubeCelExt;
    use kube_cel::cel::Program;

    fn eval(expr: &str) -> Result<Value, ExecutionError> {
        let mut ctx = Context::default().with_all();
        register(&mut ctx);
        Program::compile(expr).expect("compiles").execute(&ctx)
    }

    /// The oracle's answers for `2021-12-31T23:30:15.250Z` (and the offsets given).
    #[test]
    fn parts_are_read_in_the_zone_asked_for() {
        let t = "timestamp('2021-12-31T23:30:15.250Z')";
        for (call, oracle) in [
            ("getHours('America/New_York')", 18),
            ("getHours()", 23),
            ("getHours('UTC')", 23),
            ("getHours('+05:30')", 5),
            ("getMinutes('+05:30')", 0),
            ("getMinutes('-08:00')", 30),
            ("getHours('-08:00')", 15),
            ("getDayOfWeek('Asia/Tokyo')", 6),
            ("getDayOfWeek()", 5),
            ("getDate('Asia/Tokyo')", 1),
            ("getDayOfMonth('Asia/Tokyo')", 0),
            ("getMonth('Asia/Tokyo')", 0),
            ("getFullYear('Asia/Tokyo')", 2022),
            ("getDayOfYear('Asia/Tokyo')", 0),
            ("getDayOfYear()", 364),
            ("getSeconds('Asia/Kolkata')", 15),
            ("getMilliseconds('Asia/Kolkata')", 250),
            ("getHours('Asia/Kolkata')", 5),
            ("getHours('+5:30')", 5),
            ("getHours('05:30')", 5),
            ("getHours('+25:00')", 0),
            ("getHours('EST')", 18),
        ] {
            assert_eq!(eval(&format!("{t}.{call}")), Ok(Value::Int(oracle)), "{call}");
        }
        // Read in UTC, not in the offset the timestamp was written with.
        assert_eq!(eval("timestamp('2021-03-04T05:06:07+02:00').getHours()"), Ok(Value::Int(3)));
        assert_eq!(eval("timestamp('2021-03-04T01:06:07+02:00').getDate()"), Ok(Value::Int(3)));
        assert_eq!(eval("timestamp('2021-01-01T01:06:07+02:00').getFullYear()"), Ok(Value::Int(2020)));
        assert_eq!(eval("timestamp('2021-07-04T12:00:00Z').getHours('America/New_York')"), Ok(Value::Int(8)));
        // The last day CEL holds, past jiff's range.
        assert_eq!(eval("timestamp('9999-12-31T23:59:59Z').getDate('EST')"), Ok(Value::Int(31)));
        assert_eq!(eval("timestamp('0001-01-01T00:00:00Z').getFullYear('EST')"), Ok(Value::Int(0)));
        assert_eq!(eval("duration('90m').getHours()"), Ok(Value::Int(1)));
        assert_eq!(eval("duration('90m').getMinutes()"), Ok(Value::Int(90)));
        assert_eq!(eval("duration('2562047h').getMilliseconds()"), Ok(Value::Int(9_223_369_200_000)));
        assert_eq!(eval("duration('-1.5s').getSeconds()"), Ok(Value::Int(-1)));
    }

    #[test]
    fn unknown_zones_fail_with_gos_words() {
        let t = "timestamp('2021-12-31T23:30:15Z')";
        for (zone, words) in [
            ("Nowhere/City", "unknown time zone Nowhere/City"),
            ("local", "unknown time zone local"),
            ("america/new_york", "unknown time zone america/new_york"),
            ("../etc/passwd", "time: invalid location name"),
            ("+x:00", "strconv.Atoi: parsing \"+x\": invalid syntax"),
        ] {
            match eval(&format!("{t}.getHours('{zone}')")) {
                Err(ExecutionError::FunctionError { message, .. }) => assert_eq!(message, words, "{zone}"),
                other => panic!("{zone}: {other:?}"),
            }
        }
    }
}
