//! An rt-app file's top level (rt-app's `doc/tutorial.txt`, "global"): which keys it may hold,
//! and its `global` object (the duration, the calibration, the default policy, the memory
//! buffer; logging keys accepted and ignored).

use super::json::{Json, Value};
use super::spec::{At, RtAppError, Spec, MAX_BYTES, NO_DEADLINE, POLICIES};
use super::values::{integer, object, string, whole};

/// rt-app reads `global` and `tasks` (and `resources` in its old format, which smpsched does
/// not read): another key is a misspelling whose settings would be lost, and a second `global`
/// or `tasks` would silently replace the first.
pub(super) fn check_keys(top: &At, fields: &[(String, Json)]) -> Result<(), RtAppError> {
    for (i, (k, v)) in fields.iter().enumerate() {
        if !matches!(k.as_str(), "global" | "tasks") {
            return Err(top.error(
                k,
                v.line,
                "unknown top-level key: an rt-app file holds `global` and `tasks`",
            ));
        }
        if fields[..i].iter().any(|(seen, _)| seen == k) {
            return Err(top.error(k, v.line, format!("`{k}` is given twice")));
        }
    }
    Ok(())
}

/// Reads the `global` object into `spec` and the default `policy`.
pub(super) fn global(
    top: &At,
    g: &Json,
    spec: &mut Spec,
    policy: &mut String,
) -> Result<(), RtAppError> {
    for (k, v) in object(top, "global", g)? {
        match k.as_str() {
            // An integer of seconds in rt-app (`get_int_value_from`), which its main process
            // sleeps (rt-app.c, main: `sleep(opts.duration)`).
            "duration" => {
                let d = integer(top, "global.duration", v)?;
                spec.duration = match d {
                    -1.0 => None,
                    d if (1.0..=1e6).contains(&d) => Some(d),
                    _ => {
                        return Err(top.error(
                            "global.duration",
                            v.line,
                            "must be -1 (until every thread ends) or 1 to 1e6 seconds",
                        ))
                    }
                };
            }
            "calibration" => {
                // rt-app takes an integer as ns per loop and anything else as a CPU's name
                // (a number written with `.` is refused as not a string).
                if let Value::Number { .. } = v.value {
                    spec.ns_per_loop = Some(whole(top, "global.calibration", v, 1.0, 1e9)?);
                } else {
                    string(top, "global.calibration", v)?;
                }
            }
            "default_policy" => {
                *policy = string(top, "global.default_policy", v)?;
                if !POLICIES.contains(&policy.as_str()) {
                    let why = match policy.as_str() {
                        "SCHED_DEADLINE" => NO_DEADLINE.to_string(),
                        p => format!("unknown policy `{p}`; valid: {}", POLICIES.join(", ")),
                    };
                    return Err(top.error("global.default_policy", v.line, why));
                }
            }
            "mem_buffer_size" => {
                spec.mem_buffer = whole(top, "global.mem_buffer_size", v, 64.0, MAX_BYTES)? as u64
            }
            // Logging, tracing and locking of pages: nothing to simulate.
            "pi_enabled" | "lock_pages" | "logdir" | "log_basename" | "log_size" | "ftrace"
            | "gnuplot" | "io_device" | "cumulative_slack" => {}
            // Written by some of rt-app's own examples, read by no version of rt-app.
            "frag" => {}
            other => {
                return Err(top.error(
                    &format!("global.{other}"),
                    v.line,
                    "unknown global property",
                ))
            }
        }
    }
    Ok(())
}
