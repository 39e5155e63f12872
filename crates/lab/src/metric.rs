//! Named measures of a point, for reproductions and claims: each is the mean over the point's
//! repetitions of a number computed from the simulator's report.

use smpsched_sim::RunReport;

use crate::point::Point;
use crate::record::RunRecord;

/// The measures every point has, with what they mean; application measures are written
/// `NAME:APP` (e.g. `app_util:MP3D`).
pub const METRICS: &[(&str, &str)] = &[
    (
        "elapsed_cycles",
        "simulated time until the last thread exits",
    ),
    (
        "elapsed_ms",
        "the same in milliseconds at the machine's clock rate",
    ),
    (
        "us_per_op",
        "microseconds per unit operation (synchronization, exchange)",
    ),
    ("utilization", "useful work, % of machine time"),
    ("stall", "cache-miss stall, % of machine time"),
    ("spin", "busy-waiting, % of machine time"),
    ("idle", "idle, % of machine time"),
    ("switch", "context switching, % of machine time"),
    ("kernel", "kernel work, % of machine time"),
    (
        "switches_per_slice",
        "context switches per time slice per processor",
    ),
    (
        "blocks",
        "times a waiter blocked on a synchronization object",
    ),
    (
        "blocks_per_slice",
        "blocks on any synchronization object per time slice per processor",
    ),
    (
        "lock_blocks_per_slice",
        "blocks on locks alone per time slice per processor (the switches contended locks forced)",
    ),
    (
        "lock_waits",
        "% of lock acquisitions that had to spin or block",
    ),
    (
        "lock_spin_grants",
        "% of the lock acquisitions that waited which spinning settled, without blocking",
    ),
    (
        "same_proc",
        "mean over the applications of app_same_proc: % of redispatches on the thread's last processor",
    ),
    ("max_backoffs", "most failed probes in one backoff wait"),
    (
        "runq_lock_wait_us",
        "mean microseconds a run-queue lock acquisition stalled on the lock's line",
    ),
    (
        "runq_lock_hold_us",
        "mean microseconds a run-queue lock was held per acquisition",
    ),
    ("instrs", "instructions, user and kernel (Weibel's tables)"),
    ("instrs_user", "instructions of the threads' own work"),
    (
        "instrs_kernel",
        "instructions of the kernel (run queues, switches, thread creation and exit, idle loop)",
    ),
    ("cycles", "processor cycles, user and kernel"),
    ("cycles_user", "processor cycles of the threads' own work"),
    ("cycles_kernel", "processor cycles of the kernel"),
    ("accesses", "memory references, user and kernel"),
    (
        "accesses_user",
        "memory references of the threads' own work",
    ),
    ("accesses_kernel", "memory references of the kernel"),
    ("refills", "first-level cache refills, user and kernel"),
    (
        "refills_user",
        "first-level cache refills of the threads' own work",
    ),
    ("refills_kernel", "first-level cache refills of the kernel"),
    (
        "runtime_ticks",
        "simulated time until the last thread exits, in ticks of Weibel's 19.2 MHz core timer",
    ),
    (
        "app_util:APP",
        "useful work, % of the processor time the application held",
    ),
    ("app_share:APP", "% of machine time the application held"),
    (
        "app_stall:APP",
        "cache-miss stall, % of the processor time the application held",
    ),
    (
        "app_cycles_m:APP",
        "millions of processor cycles the application held (Table 1's total cycles)",
    ),
    (
        "app_refs_m:APP",
        "millions of data references the application made",
    ),
    (
        "app_misses_m:APP",
        "millions of the application's references that missed",
    ),
    (
        "app_miss_rate:APP",
        "% of the application's references that missed",
    ),
    (
        "app_sync:APP",
        "busy-waiting, context switches and kernel work, % of the processor time the \
         application held (Gupta's synchronization segment)",
    ),
    (
        "app_same_proc:APP",
        "% of the application's redispatches on the processor the thread last ran on",
    ),
    (
        "app_intervening:APP",
        "median dispatches of other threads between two runs of a thread on one processor",
    ),
    (
        "app_switches:APP",
        "the application's context switches per time slice per processor",
    ),
    (
        "app_switch_rate:APP",
        "the application's context switches per time slice of processor time it held (Gupta's \
         per-application rate)",
    ),
    (
        "app_done_ms:APP",
        "milliseconds until the application's last thread exits",
    ),
    (
        "app_response_ms:APP",
        "mean response time of the application's jobs (threads), arrival to exit, ms",
    ),
    (
        "app_p95_ms:APP",
        "95th percentile of the jobs' response times, ms",
    ),
    (
        "app_p99_ms:APP",
        "99th percentile of the jobs' response times, ms",
    ),
    (
        "app_wait_ms:APP",
        "mean time the jobs waited before their first dispatch, ms",
    ),
    (
        "recorded_mean:APP:NAME",
        "mean of the values the application's programs recorded as NAME",
    ),
    (
        "recorded_max:APP:NAME",
        "largest value the application's programs recorded as NAME",
    ),
    (
        "recorded_count:APP:NAME",
        "how many values the application's programs recorded as NAME",
    ),
    (
        "sd:MEASURE",
        "standard deviation of any measure above over the point's repetitions",
    ),
];

/// Whether `kind` is a measure of what programs recorded, written `KIND:APP:NAME` (listed in
/// [`METRICS`] as `KIND:APP:NAME`).
fn is_recorded_kind(kind: &str) -> bool {
    METRICS
        .iter()
        .any(|(m, _)| m.strip_suffix(":APP:NAME") == Some(kind))
}

/// Whether `kind` is an application measure, written `KIND:APP` (listed in [`METRICS`] as
/// `KIND:APP`).
fn is_app_kind(kind: &str) -> bool {
    METRICS
        .iter()
        .any(|(m, _)| m.strip_suffix(":APP") == Some(kind))
}

/// An application measure's kind, application and (for recorded measures) recorded name.
fn split_app(name: &str) -> Option<(&str, &str, Option<&str>)> {
    let (kind, rest) = name.split_once(':')?;
    if is_recorded_kind(kind) {
        let (app, what) = rest.split_once(':')?;
        Some((kind, app, Some(what)))
    } else {
        Some((kind, rest, None))
    }
}

/// `c` as a percentage of the processor time an application held.
fn held_pct(c: u64, time: &smpsched_sim::TimeSplit) -> f64 {
    100.0 * c as f64 / (time.held() as f64).max(1.0)
}

fn one(name: &str, point: &Point, r: &RunReport) -> Option<f64> {
    let m = &point.machine;
    let machine_time = (r.elapsed_cycles as f64 * m.processors as f64).max(1.0);
    let pct = |c: u64| 100.0 * c as f64 / machine_time;
    let per_slice = |n: u64| {
        let slots = r.slices * m.processors as f64;
        (slots > 0.0).then(|| n as f64 / slots)
    };
    if let Some((kind, app, what)) = split_app(name) {
        let i = point.apps.iter().position(|a| a.name == app)?;
        let a = r.apps.get(i)?;
        if let Some(what) = what {
            let rec = a.recorded.get(what)?;
            return match kind {
                "recorded_mean" => Some(rec.mean()),
                "recorded_max" => Some(rec.max),
                _ => Some(rec.count as f64),
            };
        }
        return match kind {
            "app_util" => Some(100.0 * a.utilization),
            "app_share" => Some(100.0 * a.machine_share),
            "app_stall" => Some(held_pct(a.time.stall, &a.time)),
            "app_cycles_m" => Some(a.time.held() as f64 / 1e6),
            "app_refs_m" => Some(a.refs as f64 / 1e6),
            "app_misses_m" => Some(a.misses as f64 / 1e6),
            "app_miss_rate" => Some(100.0 * a.miss_rate),
            "app_sync" => Some(held_pct(
                a.time.spin + a.time.switch + a.time.kernel,
                &a.time,
            )),
            "app_same_proc" => Some(100.0 * a.same_processor_rate),
            "app_intervening" => a.median_intervening.map(|m| m as f64),
            "app_switches" => Some(a.switches_per_slice_per_proc),
            "app_switch_rate" if a.machine_share > 0.0 => {
                Some(a.switches_per_slice_per_proc / a.machine_share)
            }
            "app_done_ms" => Some(m.to_us(a.completion_cycles) / 1000.0),
            "app_response_ms" => Some(m.to_us(1) * a.jobs.mean_response / 1000.0),
            "app_p95_ms" => Some(m.to_us(a.jobs.p95_response) / 1000.0),
            "app_p99_ms" => Some(m.to_us(a.jobs.p99_response) / 1000.0),
            "app_wait_ms" => Some(m.to_us(1) * a.jobs.mean_wait / 1000.0),
            _ => None,
        };
    }
    Some(match name {
        "elapsed_cycles" => r.elapsed_cycles as f64,
        "elapsed_ms" => m.to_us(r.elapsed_cycles) / 1000.0,
        "us_per_op" => m.to_us(r.elapsed_cycles) / point.operations()? as f64,
        "utilization" => 100.0 * r.utilization,
        "stall" => pct(r.total.stall),
        "spin" => pct(r.total.spin),
        "idle" => pct(r.total.idle),
        "switch" => pct(r.total.switch),
        "kernel" => pct(r.total.kernel),
        "switches_per_slice" => r.apps.iter().map(|a| a.switches_per_slice_per_proc).sum(),
        "blocks" => r.sync.blocks as f64,
        "blocks_per_slice" => per_slice(r.sync.blocks)?,
        "lock_blocks_per_slice" => per_slice(r.locks.blocks)?,
        "lock_waits" if r.locks.immediate + r.locks.contended > 0 => {
            let all = r.locks.immediate + r.locks.contended;
            100.0 * r.locks.contended as f64 / all as f64
        }
        "lock_spin_grants" if r.locks.contended > 0 => {
            100.0 * r.locks.spin_grants as f64 / r.locks.contended as f64
        }
        "same_proc" if !r.apps.is_empty() => {
            let sum: f64 = r.apps.iter().map(|a| a.same_processor_rate).sum();
            100.0 * sum / r.apps.len() as f64
        }
        "max_backoffs" => r.sync.max_backoffs as f64,
        "runtime_ticks" => m.to_us(r.elapsed_cycles) * TIMER_MHZ,
        "runq_lock_wait_us" if r.runq_lock.acquires > 0 => {
            m.to_us(r.runq_lock.wait_cycles) / r.runq_lock.acquires as f64
        }
        "runq_lock_hold_us" if r.runq_lock.acquires > 0 => {
            m.to_us(r.runq_lock.hold_cycles) / r.runq_lock.acquires as f64
        }
        _ => return user_kernel(name, r),
    })
}

/// The Raspberry Pi 3's core timer, in MHz (Weibel, section 2): runtimes are counted in its
/// ticks.
pub const TIMER_MHZ: f64 = 19.2;

/// Weibel's units: `instrs`, `cycles`, `accesses` or `refills`, whole or `_user` / `_kernel`.
fn user_kernel(name: &str, r: &RunReport) -> Option<f64> {
    let uk = &r.user_kernel;
    let (unit, part) = name.split_once('_').unwrap_or((name, ""));
    let split = match unit {
        "instrs" => uk.instructions,
        "cycles" => uk.cycles,
        "accesses" => uk.accesses,
        "refills" => uk.refills,
        _ => return None,
    };
    let v = match part {
        "" => split.total(),
        "user" => split.user,
        "kernel" => split.kernel,
        _ => return None,
    };
    Some(v as f64)
}

/// The prefix that turns a measure into its standard deviation over a point's repetitions
/// (`sd:recorded_mean:requests:load0`: how much the load distribution varies from run to run).
pub const SD_PREFIX: &str = "sd:";

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

/// Measure `name` of each run of `point`; `None` if unknown, not applicable or no run.
fn values(name: &str, point: &Point, runs: &[RunRecord]) -> Option<Vec<f64>> {
    let vals: Vec<f64> = runs
        .iter()
        .filter(|r| r.point == point.label)
        .map(|r| one(name, point, &r.report))
        .collect::<Option<Vec<f64>>>()?;
    (!vals.is_empty()).then_some(vals)
}

/// Whether `name` is a measure at all: one of [`METRICS`], or `KIND:APP` with a known kind.
pub fn is_known(name: &str) -> bool {
    if let Some(inner) = name.strip_prefix(SD_PREFIX) {
        return is_known(inner) && !inner.starts_with(SD_PREFIX);
    }
    match (name.split_once(':'), split_app(name)) {
        (Some((kind, _)), Some((_, app, what))) if is_recorded_kind(kind) => {
            !app.is_empty() && what.is_some_and(|w| !w.is_empty())
        }
        (Some((kind, app)), _) => is_app_kind(kind) && !app.is_empty(),
        (None, _) => METRICS.iter().any(|(m, _)| *m == name),
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
        let names: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
        return Err(format!(
            "unknown measure `{name}`; measures: {} (see `smpsched list`)",
            names.join(", ")
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
        match point.operations() {
            Some(n) if n > 0 => {}
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
                return Err(format!(
                    "`us_per_op` is not defined for point `{}`: {what}; its workload kinds: {}",
                    point.label,
                    kinds.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// Whether `name` is a measure defined for `point` (see [`check`]).
pub fn is_metric(name: &str, point: &Point) -> bool {
    check(name, point).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            split_app("recorded_max:clients:delay"),
            Some(("recorded_max", "clients", Some("delay")))
        );
        assert_eq!(split_app("app_util:a:b"), Some(("app_util", "a:b", None)));
    }
}
