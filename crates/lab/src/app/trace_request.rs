//! What `smpsched run --trace DIR` asks for ([`TraceRequest`]: the events a trace may keep and a
//! window of simulated milliseconds), checked as the command line gives it, and made into the
//! recording's bounds for an experiment, with the trace folder prepared before anything runs.

use std::path::PathBuf;

use smpsched_sim::trace::TraceConfig;

use crate::input::error::{InputError, LabError};
use crate::spec::experiment::Experiment;
use crate::store::output::Staging;
use crate::store::traces;

/// What `--trace` asked for: `events` at most per trace, within a window of milliseconds (the
/// window becomes cycles per machine).
#[derive(Clone, Copy, Debug)]
pub struct TraceRequest {
    /// Most events kept per trace.
    pub events: usize,
    /// Start of the window, in milliseconds of simulated time.
    pub from: Option<f64>,
    /// End of the window, in milliseconds of simulated time.
    pub until: Option<f64>,
}

impl TraceRequest {
    /// The bounds of `--trace`: `events` at most, within `window` (milliseconds, `FROM:UNTIL`,
    /// either side may be left out).
    pub fn parse(events: usize, window: Option<&str>) -> Result<TraceRequest, LabError> {
        let bad = |message: String| {
            LabError::Input(Box::new(InputError {
                file: PathBuf::from("smpsched run"),
                line: None,
                field: "--trace-window".into(),
                message,
            }))
        };
        let Some(w) = window else {
            return Ok(TraceRequest {
                events,
                from: None,
                until: None,
            });
        };
        let (a, b) = w
            .split_once(':')
            .ok_or_else(|| bad(format!("expected FROM:UNTIL in milliseconds, got `{w}`")))?;
        let ms = |s: &str| -> Result<Option<f64>, LabError> {
            if s.trim().is_empty() {
                return Ok(None);
            }
            match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                Ok(v) if v < 0.0 => Err(bad(format!(
                    "`{s}` is negative: the window is in milliseconds of simulated time from \
                     the run's start, 0 or more"
                ))),
                _ => Err(bad(format!("`{s}` is not a number of milliseconds"))),
            }
        };
        let (from, until) = (ms(a)?, ms(b)?);
        if let (Some(f), Some(u)) = (from, until) {
            if u <= f {
                let when = if u == f { "where" } else { "before" };
                return Err(bad(format!(
                    "the window ends ({u} ms) {when} it starts ({f} ms): it would hold nothing"
                )));
            }
        }
        Ok(TraceRequest {
            events,
            from,
            until,
        })
    }
}

/// With `--trace`: checks that the traces fit in memory and the trace folder (making the hidden
/// folder they are written into), and converts the window to cycles. Every point of a file
/// shares one clock rate in practice; the window is converted with the first point's machine.
pub(crate) fn prepare(
    trace: Option<&(PathBuf, TraceRequest)>,
    exp: &Experiment,
) -> Result<(Option<TraceConfig>, Option<Staging>), LabError> {
    let Some((dir, t)) = trace else {
        return Ok((None, None));
    };
    let avail = crate::input::budget::available().map_err(|e| LabError::Input(Box::new(e)))?;
    traces::check_budget(exp.points.len(), t.events, avail)?;
    let staging = traces::prepare(dir)?;
    let m = &exp.points[0].machine;
    let config = TraceConfig {
        max_events: t.events,
        from: t.from.map_or(0, |ms| m.ms(ms)),
        until: t.until.map_or(u64::MAX, |ms| m.ms(ms)),
    };
    Ok((Some(config), Some(staging)))
}
