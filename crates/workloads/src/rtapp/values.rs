//! Typed readers of an rt-app file's JSON values (integers, microseconds, CPU numbers,
//! strings, objects, an event object's fields), each error naming where the value is: the
//! task, the phase, the event and the line. Numbers are read as rt-app reads them: every one
//! it reads is an integer of json-c's, a number written with `.` or an exponent refused, but a
//! CPU number, which rt-app truncates.

use super::json::{Json, Value};
use super::spec::{At, RtAppError, MAX_US};

/// A number rt-app reads as an integer. rt-app checks that the value is of json-c's integer
/// type before it reads it (`assure_type_is(.., json_type_int)` in `get_int_value_from` for a
/// property, `json_object_is_type(obj, json_type_int)` for `run`, `sleep`, `mem` and `iorun`:
/// rt-app_parse_config.c), and refuses the file otherwise; json-c types a number written with
/// `.`, `e` or `E` as a double. So does smpsched: `2.5`, and `10.0` or `1e3` too, are refused.
pub(super) fn integer(at: &At, key: &str, v: &Json) -> Result<f64, RtAppError> {
    match v.value {
        Value::Number {
            value,
            integer: true,
        } => Ok(value),
        Value::Number { value, .. } => Err(at.error(
            key,
            v.line,
            format!(
                "must be an integer, written without `.` or an exponent, got {value:?}: rt-app \
                 reads it as an integer and refuses the file otherwise (json-c, its JSON \
                 reader, takes such a number as a double)"
            ),
        )),
        ref other => Err(at.error(
            key,
            v.line,
            format!("must be a number, got {}", other.kind()),
        )),
    }
}

/// A duration in microseconds: an integer ([`integer`]) from 0 to [`MAX_US`].
pub(super) fn micros(at: &At, key: &str, v: &Json) -> Result<f64, RtAppError> {
    let n = integer(at, key, v)?;
    if !(0.0..=MAX_US).contains(&n) {
        return Err(at.error(
            key,
            v.line,
            format!(
                "must be from 0 to {MAX_US:e} microseconds, got {}",
                shown(n)
            ),
        ));
    }
    Ok(n)
}

/// A CPU number of `cpus`, with the number as written when a fraction was dropped from it.
/// rt-app reads each with json-c's `json_object_get_int` and no check of its type
/// (`parse_cpuset_data`, rt-app_parse_config.c), which truncates a double toward zero: `1.5`
/// is CPU 1.
pub(super) fn cpu(at: &At, v: &Json) -> Result<(u32, Option<f64>), RtAppError> {
    let (n, cut) = match v.value {
        Value::Number {
            value,
            integer: false,
        } => (value.trunc(), (value.trunc() != value).then_some(value)),
        _ => (integer(at, "cpus", v)?, None),
    };
    if !(0.0..=65_535.0).contains(&n) {
        return Err(at.error(
            "cpus",
            v.line,
            format!("must be a CPU number from 0 to 65535, got {}", shown(n)),
        ));
    }
    Ok((n as u32, cut))
}

/// A number as an error shows it: past 2^53, where a JSON number read as a double no longer
/// holds every digit written, in exponent form (`9.223372036854776e18`), not as digits the file
/// did not write.
pub(super) fn shown(n: f64) -> String {
    if n.abs() >= 9_007_199_254_740_992.0 {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

/// An integer ([`integer`]) from `lo` to `hi`.
pub(super) fn whole(at: &At, key: &str, v: &Json, lo: f64, hi: f64) -> Result<f64, RtAppError> {
    let n = integer(at, key, v)?;
    if !(lo..=hi).contains(&n) {
        return Err(at.error(
            key,
            v.line,
            format!("must be a whole number from {lo} to {hi}, got {}", shown(n)),
        ));
    }
    Ok(n)
}

pub(super) fn string(at: &At, key: &str, v: &Json) -> Result<String, RtAppError> {
    match &v.value {
        Value::Str(s) => Ok(s.clone()),
        other => Err(at.error(
            key,
            v.line,
            format!("must be a string, got {}", other.kind()),
        )),
    }
}

pub(super) fn object<'a>(
    at: &At,
    key: &str,
    v: &'a Json,
) -> Result<&'a [(String, Json)], RtAppError> {
    match &v.value {
        Value::Object(f) => Ok(f),
        other => Err(at.error(
            key,
            v.line,
            format!("must be an object, got {}", other.kind()),
        )),
    }
}

/// A field of an event object (`timer`, `wait`, `sync`).
pub(super) fn field<'a>(
    at: &At,
    key: &str,
    f: &'a [(String, Json)],
    name: &str,
    line: usize,
) -> Result<&'a Json, RtAppError> {
    f.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .ok_or_else(|| at.error(key, line, format!("needs a `{name}`")))
}
