//! Typed readers of an rt-app file's JSON values (numbers, microseconds, whole numbers,
//! strings, objects, an event object's fields), each error naming where the value is: the
//! task, the phase, the event and the line.

use super::json::{Json, Value};
use super::spec::{At, RtAppError, MAX_US};

/// A number.
pub(super) fn number(at: &At, key: &str, v: &Json) -> Result<f64, RtAppError> {
    match v.value {
        Value::Number(n) => Ok(n),
        ref other => Err(at.error(
            key,
            v.line,
            format!("must be a number, got {}", other.kind()),
        )),
    }
}

/// A duration in microseconds: 0 to [`MAX_US`].
pub(super) fn micros(at: &At, key: &str, v: &Json) -> Result<f64, RtAppError> {
    let n = number(at, key, v)?;
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

/// A number as an error shows it: past 2^53, where a JSON number read as a double no longer
/// holds every digit written, in exponent form (`9.223372036854776e18`), not as digits the file
/// did not write.
fn shown(n: f64) -> String {
    if n.abs() >= 9_007_199_254_740_992.0 {
        format!("{n:e}")
    } else {
        n.to_string()
    }
}

/// A whole number from `lo` to `hi`.
pub(super) fn whole(at: &At, key: &str, v: &Json, lo: f64, hi: f64) -> Result<f64, RtAppError> {
    let n = number(at, key, v)?;
    if n.fract() != 0.0 || !(lo..=hi).contains(&n) {
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
