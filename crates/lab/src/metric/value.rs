//! Measures read by name: whether a name is a measure, whether it is defined for a point, and
//! its mean (or standard deviation) over the point's runs, computed as the table says.

use std::collections::HashMap;

use smpsched_sim::RunReport;

use super::{Args, Compute, Measure, MEASURES};
use crate::plan::point::Point;
use crate::plan::record::RunRecord;

/// The prefix that turns a measure into its standard deviation over a point's repetitions
/// (`sd:recorded_mean:requests:load0`: how much the load distribution varies from run to run).
pub const SD_PREFIX: &str = "sd:";

/// The measure of the table called `kind` taking arguments `args`.
fn entry(kind: &str, args: Args) -> Option<&'static Measure> {
    MEASURES
        .iter()
        .find(|m| m.is_measure() && m.args == args && m.name == kind)
}

/// An application measure's entry, application and (for recorded measures) recorded name.
fn split_app(name: &str) -> Option<(&'static Measure, &str, Option<&str>)> {
    let (kind, rest) = name.split_once(':')?;
    if let Some(m) = entry(kind, Args::AppName) {
        let (app, what) = rest.split_once(':')?;
        Some((m, app, Some(what)))
    } else {
        Some((entry(kind, Args::App)?, rest, None))
    }
}

/// Measure `name` of one run of `point`.
fn one(name: &str, point: &Point, r: &RunReport) -> Option<f64> {
    if let Some((m, app, what)) = split_app(name) {
        let i = point.apps.iter().position(|a| a.name == app)?;
        let a = r.apps.get(i)?;
        return match (m.compute, what) {
            (Compute::Recorded(f), Some(what)) => f(a.recorded.get(what)?),
            (Compute::App(f), None) => f(&point.machine, a),
            _ => None,
        };
    }
    match entry(name, Args::None)?.compute {
        Compute::Machine(f) => f(point, r),
        _ => None,
    }
}

/// Mean of measure `name` over the runs of `point` (or, for `sd:NAME`, the sample standard
/// deviation of NAME over them, 0 for one run); `None` if unknown or not applicable.
pub fn value(name: &str, point: &Point, runs: &[RunRecord]) -> Option<f64> {
    if let Some(inner) = name.strip_prefix(SD_PREFIX) {
        let vals = values(inner, point, runs)?;
        let n = vals.len() as f64;
        let mean = vals.iter().sum::<f64>() / n;
        let var = if vals.len() > 1 {
            vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        return Some(var.sqrt());
    }
    let vals = values(name, point, runs)?;
    Some(vals.iter().sum::<f64>() / vals.len() as f64)
}

/// The runs of each point, by label, for a loop over many points: the contiguous slice of
/// `runs` holding a point's runs when they lie together (as an experiment's runs do, in plan
/// order), else all of `runs`, which [`value`] filters by label. Without it such a loop reads
/// every run for every point: 20,000 points took 30 s to chart after 4 s of simulation.
pub fn runs_of<'a>(runs: &'a [RunRecord]) -> impl Fn(&str) -> &'a [RunRecord] + 'a {
    let spans = spans(&runs.iter().map(|r| r.point.as_str()).collect::<Vec<_>>());
    move |label: &str| match spans.get(label) {
        Some(Some((a, b))) => &runs[*a..*b],
        _ => runs,
    }
}

/// Each label's span `[a, b)` in `labels` when its entries lie together; `None` for a label
/// met in two places (its entries are then found by filtering).
fn spans<'a>(labels: &[&'a str]) -> HashMap<&'a str, Option<(usize, usize)>> {
    let mut spans: HashMap<&str, Option<(usize, usize)>> = HashMap::new();
    let mut i = 0;
    while i < labels.len() {
        let label = labels[i];
        let end = labels[i..]
            .iter()
            .position(|l| *l != label)
            .map_or(labels.len(), |n| i + n);
        spans
            .entry(label)
            .and_modify(|s| *s = None)
            .or_insert(Some((i, end)));
        i = end;
    }
    spans
}

/// Measure `name` of each run of `point`; `None` if unknown, not applicable or no run.
fn values(name: &str, point: &Point, runs: &[RunRecord]) -> Option<Vec<f64>> {
    let vals: Vec<f64> = runs
        .iter()
        .filter(|r| r.point == point.label)
        .map(|r| one(name, point, &r.report))
        .collect::<Option<Vec<f64>>>()?;
    (!vals.is_empty()).then_some(vals)
}

/// Whether `name` is a measure at all: a machine measure of [`MEASURES`], `KIND:APP` or
/// `KIND:APP:NAME` with a known kind, or `sd:` and one of those.
pub fn is_known(name: &str) -> bool {
    if let Some(inner) = name.strip_prefix(SD_PREFIX) {
        return is_known(inner) && !inner.starts_with(SD_PREFIX);
    }
    match (name.split_once(':'), split_app(name)) {
        (Some(_), Some((m, app, what))) if m.args == Args::AppName => {
            !app.is_empty() && what.is_some_and(|w| !w.is_empty())
        }
        (Some((_, app)), Some(_)) => !app.is_empty(),
        (Some(_), None) => false,
        (None, _) => entry(name, Args::None).is_some(),
    }
}

/// Checks that measure `name` is known and defined for `point`: `us_per_op` needs workloads
/// that count unit operations, application measures need the application. The error says why,
/// naming the point.
pub fn check(name: &str, point: &Point) -> Result<(), String> {
    if let Some(inner) = name.strip_prefix(SD_PREFIX) {
        if !inner.starts_with(SD_PREFIX) {
            return check(inner, point);
        }
    }
    if !is_known(name) {
        return Err(format!(
            "unknown measure `{name}`; measures: {} (see `smpsched list`)",
            super::views::names().join(", ")
        ));
    }
    if let Some((_, app, _)) = split_app(name) {
        if !point.apps.iter().any(|a| a.name == app) {
            let apps: Vec<String> = point.apps.iter().map(|a| format!("`{}`", a.name)).collect();
            return Err(format!(
                "`{name}` names no application of point `{}`; its applications: {}",
                point.label,
                apps.join(", ")
            ));
        }
    }
    if name == "us_per_op" {
        check_operations(point)?;
    }
    Ok(())
}

/// `us_per_op` needs a point whose workloads count unit operations.
fn check_operations(point: &Point) -> Result<(), String> {
    match point.operations() {
        Some(n) if n > 0 => Ok(()),
        ops => {
            let mut kinds: Vec<&str> = Vec::new();
            for a in &point.apps {
                if !kinds.contains(&a.kind.name) {
                    kinds.push(a.kind.name);
                }
            }
            let what = if ops.is_some() {
                "its workloads count 0 unit operations"
            } else {
                "none of its workloads counts unit operations (synchronizations, exchanges)"
            };
            Err(format!(
                "`us_per_op` is not defined for point `{}`: {what}; its workload kinds: {}",
                point.label,
                kinds.join(", ")
            ))
        }
    }
}

/// Whether `name` is a measure defined for `point` (see [`check`]).
pub fn is_metric(name: &str, point: &Point) -> bool {
    check(name, point).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_points_runs_are_found_together_or_filtered() {
        let s = spans(&["a", "a", "b", "c", "c", "c", "b"]);
        assert_eq!(s["a"], Some((0, 2)));
        assert_eq!(s["c"], Some((3, 6)));
        assert_eq!(
            s["b"], None,
            "a label in two places is filtered, not sliced"
        );
        assert!(!s.contains_key("d"));
        assert!(spans(&[]).is_empty());
    }

    #[test]
    fn application_and_recorded_measures_are_named_in_full() {
        assert!(is_known("app_p95_ms:web"));
        assert!(is_known("recorded_mean:clients:delay"));
        assert!(is_known("recorded_count:clients:a:b"));
        assert!(!is_known("recorded_mean:clients"));
        assert!(!is_known("recorded_mean:clients:"));
        assert!(!is_known("app_p95_ms:"));
        assert!(!is_known("app_p96_ms:web"));
        assert!(is_known("sd:recorded_mean:clients:load0"));
        assert!(is_known("sd:utilization"));
        assert!(!is_known("sd:sd:utilization"));
        assert!(!is_known("sd:nonsense"));
        assert!(!is_known("useful"), "a CSV column is no measure");
        assert!(!is_known("sd"), "the deviation needs a measure");
        assert!(
            !is_known("utilization:web"),
            "a machine measure takes no application"
        );
        let (m, app, what) = split_app("recorded_max:clients:delay").unwrap();
        assert_eq!(
            (m.name, app, what),
            ("recorded_max", "clients", Some("delay"))
        );
        let (m, app, what) = split_app("app_util:a:b").unwrap();
        assert_eq!((m.name, app, what), ("app_util", "a:b", None));
    }
}
