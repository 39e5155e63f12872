//! The measure table: every quantity the lab reports, once, with its name, unit, meaning, how it
//! is computed from a run's report, and where it shows (a column of `results.csv`, a column of
//! the terminal's table). The guide's measure table, `smpsched list`, the CSV header and the
//! terminal's columns are all generated from it. To add a measure, add one entry (a CSV or
//! terminal column takes the next `slot`), then `SMPSCHED_BLESS=1 cargo test -p smpsched-lab
//! --test docs` writes the guide's tables.

use smpsched_sim::{AppReport, RunReport, TimeSplit};

use super::{Format, Measure, Unit};
use crate::plan::point::Point;
use crate::plan::record::Stopped;

/// Every measure and results column, in the order `smpsched list`, the guide and error messages
/// show them. Entries with [`super::Compute::Column`] are columns of `results.csv` only, not
/// measures.
pub const MEASURES: &[Measure] = &[
    Measure::machine(
        "elapsed_cycles",
        Unit::Cycles,
        "simulated time until the last thread exits",
        |_, r| Some(r.elapsed_cycles as f64),
    )
    .csv("elapsed_cycles", 0, Unit::Cycles, |r, _| {
        r.report.elapsed_cycles.to_string()
    })
    .terminal("elapsed Mcyc", 0, Format::Mega3, |r, _| {
        r.elapsed_cycles as f64
    }),
    Measure::machine(
        "elapsed_ms",
        Unit::Milliseconds,
        "the same in milliseconds at the machine's clock rate",
        |p, r| Some(p.machine.to_us(r.elapsed_cycles) / 1000.0),
    ),
    Measure::machine(
        "us_per_op",
        Unit::Microseconds,
        "microseconds per unit operation (synchronization, exchange), \
         for workloads that have one",
        |p, r| Some(p.machine.to_us(r.elapsed_cycles) / p.operations()? as f64),
    ),
    Measure::machine(
        "utilization",
        Unit::Percent,
        "useful work, % of machine time",
        |_, r| Some(100.0 * r.utilization),
    )
    .csv("utilization", 8, Unit::Fraction, |r, a| {
        a.map_or(r.report.utilization, |a| a.utilization)
            .to_string()
    })
    .terminal("util %", 1, Format::Pct1, |r, _| r.utilization),
    Measure::machine(
        "stall",
        Unit::Percent,
        "cache-miss stall, % of machine time",
        |p, r| Some(machine_pct(p, r, r.total.stall)),
    )
    .csv("stall", 3, Unit::Cycles, |r, a| {
        split(r, a).stall.to_string()
    })
    .terminal("stall %", 2, Format::Pct1, |r, _| {
        share(&r.total, r.total.stall)
    }),
    Measure::machine(
        "spin",
        Unit::Percent,
        "busy-waiting, % of machine time",
        |p, r| Some(machine_pct(p, r, r.total.spin)),
    )
    .csv("spin", 4, Unit::Cycles, |r, a| split(r, a).spin.to_string())
    .terminal("spin %", 3, Format::Pct1, |r, _| {
        share(&r.total, r.total.spin)
    }),
    Measure::machine("idle", Unit::Percent, "idle, % of machine time", |p, r| {
        Some(machine_pct(p, r, r.total.idle))
    })
    .csv("idle", 5, Unit::Cycles, |r, a| split(r, a).idle.to_string())
    .terminal("idle %", 4, Format::Pct1, |r, _| {
        share(&r.total, r.total.idle)
    }),
    Measure::machine(
        "switch",
        Unit::Percent,
        "context switching, % of machine time",
        |p, r| Some(machine_pct(p, r, r.total.switch)),
    )
    .csv("switch", 6, Unit::Cycles, |r, a| {
        split(r, a).switch.to_string()
    })
    .terminal("switch %", 5, Format::Pct1, |r, _| {
        share(&r.total, r.total.switch)
    }),
    Measure::machine(
        "kernel",
        Unit::Percent,
        "kernel work, % of machine time",
        |p, r| Some(machine_pct(p, r, r.total.kernel)),
    )
    .csv("kernel", 7, Unit::Cycles, |r, a| {
        split(r, a).kernel.to_string()
    })
    .terminal("kernel %", 6, Format::Pct1, |r, _| {
        share(&r.total, r.total.kernel)
    }),
    Measure::machine(
        "switches_per_slice",
        Unit::Rate,
        "context switches per time slice per processor (the policy's own slice: to \
         compare policies with different slices, divide `results.csv`'s `context_switches` \
         by the elapsed time)",
        |_, r| Some(r.apps.iter().map(|a| a.switches_per_slice_per_proc).sum()),
    ),
    Measure::machine(
        "blocks",
        Unit::Count,
        "times a waiter blocked on a synchronization object",
        |_, r| Some(r.sync.blocks as f64),
    ),
    Measure::machine(
        "blocks_per_slice",
        Unit::Rate,
        "blocks on any synchronization object per time slice per processor",
        |p, r| per_slice(p, r, r.sync.blocks),
    ),
    Measure::machine(
        "lock_blocks_per_slice",
        Unit::Rate,
        "blocks on locks alone per time slice per processor (the switches contended locks \
         forced)",
        |p, r| per_slice(p, r, r.locks.blocks),
    ),
    Measure::machine(
        "lock_waits",
        Unit::Percent,
        "% of lock acquisitions that had to spin or block",
        |_, r| {
            let all = r.locks.immediate + r.locks.contended;
            (all > 0).then(|| 100.0 * r.locks.contended as f64 / all as f64)
        },
    ),
    Measure::machine(
        "lock_spin_grants",
        Unit::Percent,
        "% of the lock acquisitions that waited which spinning settled, without blocking",
        |_, r| {
            let waited = r.locks.contended;
            (waited > 0).then(|| 100.0 * r.locks.spin_grants as f64 / waited as f64)
        },
    ),
    Measure::machine(
        "same_proc",
        Unit::Percent,
        "the mean over the applications of `app_same_proc` (Gupta's \
         same-processor rescheduling rate, 5.2)",
        |_, r| {
            let sum: f64 = r.apps.iter().map(|a| a.same_processor_rate).sum();
            (!r.apps.is_empty()).then(|| 100.0 * sum / r.apps.len() as f64)
        },
    ),
    Measure::machine(
        "max_backoffs",
        Unit::Count,
        "most failed probes in one backoff wait",
        |_, r| Some(r.sync.max_backoffs as f64),
    ),
    Measure::machine(
        "runq_lock_wait_us",
        Unit::Microseconds,
        "mean microseconds a run-queue lock acquisition stalled on \
         the lock's line (policies whose queues live in the simulated \
         memory, e.g. `per-core`). The model takes the lock at each \
         dispatch, for the pick; a wake-up's or an arrival's enqueue \
         takes none",
        |p, r| {
            (r.runq_lock.acquires > 0)
                .then(|| p.machine.to_us(r.runq_lock.wait_cycles) / r.runq_lock.acquires as f64)
        },
    ),
    Measure::machine(
        "runq_lock_hold_us",
        Unit::Microseconds,
        "mean microseconds a run-queue lock was held per acquisition: \
         the pick's references to the queue (the run-queue \
         operation's `sched_op_cycles` are charged outside it)",
        |p, r| {
            (r.runq_lock.acquires > 0)
                .then(|| p.machine.to_us(r.runq_lock.hold_cycles) / r.runq_lock.acquires as f64)
        },
    ),
    Measure::machine(
        "instrs",
        Unit::Count,
        "instructions, user and kernel (Weibel's tables): a cycle \
         that is not a memory stall is one instruction (a reference \
         that hits, a compute cycle, a spin probe)",
        |_, r| Some(r.user_kernel.instructions.total() as f64),
    ),
    Measure::machine(
        "instrs_user",
        Unit::Count,
        "instructions of the threads' own work",
        |_, r| Some(r.user_kernel.instructions.user as f64),
    ),
    Measure::machine(
        "instrs_kernel",
        Unit::Count,
        "instructions of the kernel: run-queue work, context \
         switches, thread creation and exit, timer interrupts and, \
         with `kernel.idle_in_kernel`, the idle loop",
        |_, r| Some(r.user_kernel.instructions.kernel as f64),
    ),
    Measure::machine(
        "cycles",
        Unit::Cycles,
        "processor cycles, user and kernel, summed over processors",
        |_, r| Some(r.user_kernel.cycles.total() as f64),
    ),
    Measure::machine(
        "cycles_user",
        Unit::Cycles,
        "processor cycles of the threads' own work (useful, stall, \
         spin)",
        |_, r| Some(r.user_kernel.cycles.user as f64),
    ),
    Measure::machine(
        "cycles_kernel",
        Unit::Cycles,
        "processor cycles of the kernel (kernel work, context \
         switches, the idle loop with `kernel.idle_in_kernel`)",
        |_, r| Some(r.user_kernel.cycles.kernel as f64),
    ),
    Measure::machine(
        "accesses",
        Unit::Count,
        "memory references, user and kernel",
        |_, r| Some(r.user_kernel.accesses.total() as f64),
    ),
    Measure::machine(
        "accesses_user",
        Unit::Count,
        "memory references of the threads' own work",
        |_, r| Some(r.user_kernel.accesses.user as f64),
    ),
    Measure::machine(
        "accesses_kernel",
        Unit::Count,
        "memory references of the kernel: run-queue locks, the kernel \
         memory of thread creation",
        |_, r| Some(r.user_kernel.accesses.kernel as f64),
    ),
    Measure::machine(
        "refills",
        Unit::Count,
        "first-level cache refills (misses, ownership upgrades \
         included), user and kernel",
        |_, r| Some(r.user_kernel.refills.total() as f64),
    ),
    Measure::machine(
        "refills_user",
        Unit::Count,
        "first-level refills of the threads' own work",
        |_, r| Some(r.user_kernel.refills.user as f64),
    ),
    Measure::machine(
        "refills_kernel",
        Unit::Count,
        "first-level refills of the kernel",
        |_, r| Some(r.user_kernel.refills.kernel as f64),
    ),
    Measure::machine(
        "runtime_ticks",
        Unit::Ticks,
        "simulated time until the last thread exits, in ticks of the \
         Raspberry Pi 3's 19.2 MHz core timer",
        |p, r| Some(p.machine.to_us(r.elapsed_cycles) * super::TIMER_MHZ),
    ),
    Measure::app(
        "app_util",
        Unit::Percent,
        "useful work, % of the processor time the application held",
        |_, a| Some(100.0 * a.utilization),
    )
    .terminal("util %", 0, Format::Pct1, |_, a| {
        a.map_or(0.0, |a| a.utilization)
    }),
    Measure::app(
        "app_share",
        Unit::Percent,
        "% of machine time the application held",
        |_, a| Some(100.0 * a.machine_share),
    )
    .csv("machine_share", 9, Unit::Fraction, |_, a| {
        a.map_or(1.0, |a| a.machine_share).to_string()
    })
    .terminal("share %", 1, Format::Pct1, |_, a| {
        a.map_or(0.0, |a| a.machine_share)
    }),
    Measure::app(
        "app_stall",
        Unit::Percent,
        "cache-miss stall, % of the processor time the application \
         held",
        |_, a| Some(held_pct(a.time.stall, &a.time)),
    ),
    Measure::app(
        "app_cycles_m",
        Unit::Millions,
        "millions of processor cycles the application held (Table 1's \
         total cycles)",
        |_, a| Some(a.time.held() as f64 / 1e6),
    ),
    Measure::app(
        "app_refs_m",
        Unit::Millions,
        "millions of data references the application made",
        |_, a| Some(a.refs as f64 / 1e6),
    ),
    Measure::app(
        "app_misses_m",
        Unit::Millions,
        "millions of the application's references that missed",
        |_, a| Some(a.misses as f64 / 1e6),
    ),
    Measure::app(
        "app_miss_rate",
        Unit::Percent,
        "% of the application's references that missed",
        |_, a| Some(100.0 * a.miss_rate),
    ),
    Measure::app(
        "app_sync",
        Unit::Percent,
        "busy-waiting, context switches and kernel work, % of the \
         processor time the application held (Gupta's synchronization \
         segment)",
        |_, a| {
            Some(held_pct(
                a.time.spin + a.time.switch + a.time.kernel,
                &a.time,
            ))
        },
    ),
    Measure::app(
        "app_same_proc",
        Unit::Percent,
        "% of the application's redispatches on the processor the \
         thread last ran on (Gupta 5.2)",
        |_, a| Some(100.0 * a.same_processor_rate),
    )
    .csv("same_processor_rate", 13, Unit::Fraction, |_, a| {
        app_cell(a, |a| a.same_processor_rate.to_string())
    }),
    Measure::app(
        "app_intervening",
        Unit::Count,
        "median dispatches of other threads between two runs of a \
         thread on one processor (Gupta's \"intervening processes\")",
        |_, a| a.median_intervening.map(|m| m as f64),
    )
    .csv("median_intervening", 14, Unit::Count, |_, a| {
        app_cell(a, |a| {
            a.median_intervening
                .map_or_else(String::new, |m| m.to_string())
        })
    }),
    Measure::app(
        "app_switches",
        Unit::Rate,
        "the application's context switches per time slice per \
         processor (the policy's own slice)",
        |_, a| Some(a.switches_per_slice_per_proc),
    )
    .csv("switches_per_slice_per_proc", 11, Unit::Rate, |_, a| {
        app_cell(a, |a| a.switches_per_slice_per_proc.to_string())
    })
    .terminal("switch/slice/cpu", 3, Format::Fixed2, |_, a| {
        a.map_or(0.0, |a| a.switches_per_slice_per_proc)
    }),
    Measure::app(
        "app_switch_rate",
        Unit::Rate,
        "the application's context switches per time slice of \
         processor time it held (Gupta's per-application rate)",
        |_, a| (a.machine_share > 0.0).then(|| a.switches_per_slice_per_proc / a.machine_share),
    ),
    Measure::app(
        "app_done_ms",
        Unit::Milliseconds,
        "milliseconds until the application's last thread exits (none for an application \
         still running at the run's end: `until`, a bound)",
        |m, a| (!a.unfinished).then(|| m.to_us(a.completion_cycles) / 1000.0),
    )
    .csv("completion_cycles", 1, Unit::Cycles, |r, a| match a {
        Some(a) if a.unfinished => String::new(),
        a => a
            .map_or(r.report.elapsed_cycles, |a| a.completion_cycles)
            .to_string(),
    })
    .terminal("done Mcyc", 2, Format::Mega3, |_, a| {
        a.map_or(0.0, |a| {
            if a.unfinished {
                f64::NAN
            } else {
                a.completion_cycles as f64
            }
        })
    }),
    Measure::app(
        "app_response_ms",
        Unit::Milliseconds,
        "mean response time of the application's jobs (each thread a \
         job, from arrival to exit), ms",
        |m, a| (a.jobs.jobs > 0).then(|| m.to_us(1) * a.jobs.mean_response / 1000.0),
    )
    .csv("mean_response", 16, Unit::Cycles, |_, a| {
        job_cell(a, |a| a.jobs.mean_response.to_string())
    })
    .terminal("resp Mcyc", 4, Format::Mega3, |_, a| {
        a.map_or(0.0, |a| job_value(a, a.jobs.mean_response))
    }),
    Measure::app(
        "app_p95_ms",
        Unit::Milliseconds,
        "95th percentile of the jobs' response times, ms",
        |m, a| (a.jobs.jobs > 0).then(|| m.to_us(a.jobs.p95_response) / 1000.0),
    )
    .csv("p95_response", 17, Unit::Cycles, |_, a| {
        job_cell(a, |a| a.jobs.p95_response.to_string())
    })
    .terminal("p95 Mcyc", 5, Format::Mega3, |_, a| {
        a.map_or(0.0, |a| job_value(a, a.jobs.p95_response as f64))
    }),
    Measure::app(
        "app_p99_ms",
        Unit::Milliseconds,
        "99th percentile of the jobs' response times, ms",
        |m, a| (a.jobs.jobs > 0).then(|| m.to_us(a.jobs.p99_response) / 1000.0),
    )
    .csv("p99_response", 18, Unit::Cycles, |_, a| {
        job_cell(a, |a| a.jobs.p99_response.to_string())
    }),
    Measure::app(
        "app_wait_ms",
        Unit::Milliseconds,
        "mean time the jobs waited before their first dispatch, ms",
        |m, a| (a.jobs.jobs > 0).then(|| m.to_us(1) * a.jobs.mean_wait / 1000.0),
    ),
    Measure::recorded(
        "recorded_mean",
        "mean of the values the application's programs recorded as \
         NAME (`Op::Record`)",
        |rec| Some(rec.mean()),
    ),
    Measure::recorded(
        "recorded_max",
        "largest value the application's programs recorded as NAME",
        |rec| Some(rec.max),
    ),
    Measure::recorded(
        "recorded_p50",
        "median of the values recorded as NAME, for a measure the simulator keeps in a \
         histogram (wake_lat_us; within 0.4% of the exact median)",
        |rec| rec.p50,
    ),
    Measure::recorded(
        "recorded_p99",
        "99th percentile of the values recorded as NAME, as recorded_p50",
        |rec| rec.p99,
    ),
    Measure::recorded(
        "recorded_count",
        "how many values the application's programs recorded as NAME",
        |rec| Some(rec.count as f64),
    ),
    Measure::deviation(
        "sd",
        "sample standard deviation of any measure above over the \
         point's repetitions (e.g. `sd:recorded_mean:requests:load0`, \
         DiBella's reliability of a load distribution)",
    ),
    Measure::column(
        "useful",
        "useful work: the machine's (or the application's) cycles",
    )
    .csv("useful", 2, Unit::Cycles, |r, a| {
        split(r, a).useful.to_string()
    }),
    Measure::column(
        "context_switches",
        "times one of the application's threads was dispatched after \
         another thread (or idleness)",
    )
    .csv("context_switches", 10, Unit::Count, |_, a| {
        app_cell(a, |a| a.context_switches.to_string())
    }),
    Measure::column(
        "migrations",
        "dispatches onto a processor other than the one the thread \
         last ran on",
    )
    .csv("migrations", 12, Unit::Count, |_, a| {
        app_cell(a, |a| a.migrations.to_string())
    }),
    Measure::column(
        "jobs",
        "the application's jobs (threads), each from arrival to exit",
    )
    .csv("jobs", 15, Unit::Count, |_, a| {
        app_cell(a, |a| a.jobs.jobs.to_string())
    }),
    Measure::column(
        "stopped",
        "why the run did not finish: the bound reached and what to \
         raise (empty when it finished)",
    )
    .csv("stopped", 19, Unit::Text, |r, _| {
        r.stopped
            .as_ref()
            .map_or_else(String::new, Stopped::describe)
    }),
    Measure::column(
        "events",
        "events the simulator handled in the run (machine rows only)",
    )
    .csv("events", 20, Unit::Count, |r, a| {
        if a.is_some() {
            String::new()
        } else {
            r.report.events.to_string()
        }
    }),
];

/// The time split of a CSV row: the machine's, or the application's.
fn split<'a>(r: &'a crate::plan::record::RunRecord, a: Option<&'a AppReport>) -> &'a TimeSplit {
    a.map_or(&r.report.total, |a| &a.time)
}

/// An application row's cell; empty on the machine row.
fn app_cell(a: Option<&AppReport>, f: fn(&AppReport) -> String) -> String {
    a.map_or_else(String::new, f)
}

/// A job measure's cell: empty on the machine row and for an application none of whose jobs
/// exited (a run stopped by `until` or a bound), which has no response times.
fn job_cell(a: Option<&AppReport>, f: fn(&AppReport) -> String) -> String {
    match a {
        Some(a) if a.jobs.jobs > 0 => f(a),
        _ => String::new(),
    }
}

/// A job measure for the terminal: no value (shown `-`) when none of the jobs exited.
fn job_value(a: &AppReport, x: f64) -> f64 {
    if a.jobs.jobs > 0 {
        x
    } else {
        f64::NAN
    }
}

/// `c` as a percentage of machine time (processors x elapsed).
fn machine_pct(p: &crate::plan::point::Point, r: &RunReport, c: u64) -> f64 {
    let machine_time = (r.elapsed_cycles as f64 * p.machine.processors as f64).max(1.0);
    100.0 * c as f64 / machine_time
}

/// `c` as a fraction of the processor time the split counts.
fn share(t: &TimeSplit, c: u64) -> f64 {
    c as f64 / t.total().max(1) as f64
}

/// `c` as a percentage of the processor time an application held.
fn held_pct(c: u64, time: &TimeSplit) -> f64 {
    100.0 * c as f64 / (time.held() as f64).max(1.0)
}

/// `n` per time slice per processor over the run (`None` for a run shorter than no slice).
fn per_slice(p: &Point, r: &RunReport, n: u64) -> Option<f64> {
    let slots = r.slices * p.machine.processors as f64;
    (slots > 0.0).then(|| n as f64 / slots)
}
