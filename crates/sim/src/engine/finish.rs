//! The end of a run: every processor's time settled and the report built from the engine's
//! ledger (design.md, "Metrics": per-processor time split, per-application measures, per-job
//! records, synchronization, memory and run-queue lock counters); and a run that ends early, at
//! a bound (with the report so far) or with nothing left that could happen (why: a deadlock, a
//! livelock or threads stranded).

use super::{SimError, Simulation};
use crate::ids::{Cycles, ThreadId};
use crate::jobs::{JobStats, JobTimes};
use crate::limits::Bound;
use crate::metrics::{ratio, AppReport, Recorded, RunReport, TimeSplit};
use crate::per_thread::ThreadReport;
use crate::sched::ThreadState;
use crate::sync::SyncStats;

impl Simulation {
    /// Each application's per-thread reports (empty where not measured) and the recorded
    /// `wake_lat_us` over all its threads' wake-ups.
    fn per_thread(&mut self) -> (Vec<Vec<ThreadReport>>, Vec<Option<Recorded>>) {
        use crate::hist::LogHistogram;
        use crate::per_thread::{app_latency, report};
        let n = self.cx.tasks.len();
        let mut reports: Vec<Vec<ThreadReport>> = vec![Vec::new(); n];
        let mut all: Vec<LogHistogram> = vec![LogHistogram::default(); n];
        let machine = &self.cx.machine;
        let now = self.cx.now;
        for (slot, cold) in self.cx.threads.iter().zip(&mut self.cx.cold) {
            let Some(mut ledger) = cold.ledger.take() else {
                continue;
            };
            // A thread still on a processor at the end: its last wake-up counts if it ran.
            ledger.preempted(now);
            ledger.left();
            let k = slot.info.task.index();
            all[k].merge(&ledger.latencies);
            let r = report(slot.info.rank, &ledger, slot.info.cpu_cycles, |c| {
                machine.to_us(c)
            });
            reports[k].push(r);
        }
        let lat = all
            .iter()
            .map(|l| app_latency(l, |c| machine.to_us(c)))
            .collect();
        (reports, lat)
    }

    /// Settles every processor at the current time and builds the run's report.
    pub(super) fn finish(mut self) -> RunReport {
        self.settle_all();
        let elapsed = self.cx.now;
        let np = self.procs.len() as f64;
        let processors: Vec<TimeSplit> = self.procs.iter().map(|p| p.time).collect();
        let total = processors
            .iter()
            .fold(TimeSplit::default(), |a, b| a.plus(b));
        let machine_time = np * elapsed as f64;
        let slices = elapsed as f64 / self.sched.shape.nominal_slice.max(1) as f64;
        let mut jobs = self.job_times();
        let (per_thread, latencies) = self.per_thread();
        let apps = self
            .cx
            .tasks
            .iter()
            .zip(&self.apps)
            .zip(&mut jobs)
            .zip(per_thread.into_iter().zip(latencies))
            .map(|(((task, a), jobs), (per_thread, wake_lat))| AppReport {
                job_times: if self.keep_job_times {
                    jobs.clone()
                } else {
                    Vec::new()
                },
                jobs: JobStats::of(jobs),
                recorded: a
                    .recorded
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .chain(wake_lat.map(|r| ("wake_lat_us".to_string(), r)))
                    .collect(),
                per_thread,
                name: task.name.clone(),
                threads: task.threads,
                completion_cycles: self.completion(task.live, a.completion).0,
                unfinished: self.completion(task.live, a.completion).1,
                time: a.time,
                machine_share: ratio(a.time.held() as f64, machine_time),
                utilization: ratio(a.time.useful as f64, a.time.held() as f64),
                context_switches: a.switches,
                switches_per_slice_per_proc: ratio(a.switches as f64, slices * np),
                migrations: a.migrations,
                same_processor_rate: ratio(a.same_proc as f64, a.redispatches as f64),
                median_intervening: a.intervening.median(),
                refs: a.mem.refs,
                misses: a.mem.misses,
                miss_rate: ratio(a.mem.misses as f64, a.mem.refs as f64),
                invalidations: a.mem.invalidations,
                remote: a.mem.remote,
                stall: a.mem.stall,
            })
            .collect();
        let (sync, locks) = self.sync_totals();
        let trace = self.closed_trace(elapsed);
        let memory = self.memory.total_stats();
        RunReport {
            user_kernel: crate::metrics::UserKernel::of(
                &total,
                &memory,
                &self.kernel_mem,
                self.cx.machine.kernel.idle_in_kernel,
            ),
            trace,
            runq_lock: self.runq_lock,
            sync,
            locks,
            slices,
            memory,
            elapsed_cycles: elapsed,
            events: self.events,
            utilization: ratio(total.useful as f64, machine_time),
            processors,
            total,
            apps,
        }
    }

    /// An application's completion time and whether it is unfinished, from its live threads
    /// and its last exit `done`: threads live when the run reached its end time (rt-app's
    /// `duration`) were killed there, which ends it; live at any other end (`until`, a bound),
    /// it has not finished.
    fn completion(&self, live: u32, done: Cycles) -> (Cycles, bool) {
        let now = self.cx.now;
        match (live > 0, self.end_time.is_some_and(|end| now >= end)) {
            (false, _) => (done, false),
            (true, true) => (now, false),
            (true, false) => (done, true),
        }
    }

    /// Settles every processor at the current time, a parked poller's reads included.
    fn settle_all(&mut self) {
        for p in 0..self.procs.len() {
            self.unpark_at_end(p);
            self.settle(p);
        }
    }

    /// The trace, if one was recorded: its stretches under way closed at `elapsed`, and each
    /// thread's rank in its application noted for the trace's readers.
    fn closed_trace(&mut self, elapsed: Cycles) -> Option<crate::trace::Trace> {
        self.trace.take().map(|mut t| {
            t.close(elapsed);
            t.ranks = self.cx.threads.iter().map(|s| s.info.rank).collect();
            *t
        })
    }

    /// Each application's exited jobs, in thread order: arrival, first run, exit, time held.
    fn job_times(&self) -> Vec<Vec<JobTimes>> {
        let mut jobs: Vec<Vec<JobTimes>> = vec![Vec::new(); self.cx.tasks.len()];
        for (slot, cold) in self.cx.threads.iter().zip(&self.cx.cold) {
            if cold.exited != Cycles::MAX {
                jobs[slot.info.task.index()].push(JobTimes {
                    rank: slot.info.rank,
                    arrived: cold.arrived,
                    first_run: cold.first_run,
                    exited: cold.exited,
                    held: slot.info.cpu_cycles,
                });
            }
        }
        jobs
    }

    /// The synchronization objects' statistics summed: all of them, and the locks alone.
    fn sync_totals(&self) -> (SyncStats, SyncStats) {
        let (mut sync, mut locks) = (SyncStats::default(), SyncStats::default());
        for o in &self.sync {
            sync.merge(&o.stats);
            if matches!(o.kind, crate::sync::SyncKind::Lock { .. }) {
                locks.merge(&o.stats);
            }
        }
        (sync, locks)
    }
}

/// Runs that end before their work is done.
impl Simulation {
    /// Ends a run that reached `bound`, with what was measured up to now.
    pub(super) fn stop(self, bound: Bound) -> SimError {
        let (at, events, live) = (self.cx.now, self.events, self.live);
        SimError::Limit {
            bound,
            at,
            events,
            live,
            partial: Box::new(self.finish()),
        }
    }

    /// Whether every thread not yet exited is blocked.
    pub(super) fn all_live_blocked(&self) -> bool {
        self.cx
            .threads
            .iter()
            .all(|s| matches!(s.info.state, ThreadState::Blocked | ThreadState::Exited))
    }

    /// Why a run with live threads and nothing left to happen cannot go on: threads blocked
    /// forever (a deadlock), else threads spinning forever (a livelock), else ready threads no
    /// processor takes (stranded).
    pub(super) fn deadlock(&self) -> SimError {
        let with = |f: &dyn Fn(ThreadState) -> bool| -> Vec<usize> {
            (0..self.cx.threads.len())
                .filter(|&t| f(self.cx.threads[t].info.state))
                .collect()
        };
        let app = |t: usize| {
            let task = self.cx.threads[t].info.task.index();
            self.cx
                .tasks
                .get(task)
                .map_or_else(String::new, |k| k.name.clone())
        };
        let blocked = with(&|s| s == ThreadState::Blocked);
        if let Some(&t) = blocked.first() {
            return SimError::Deadlock {
                at: self.cx.now,
                blocked: blocked.len(),
                example: ThreadId(t as u32),
                app: app(t),
                partial: None,
            };
        }
        let spinning = with(&|s| matches!(s, ThreadState::Running(_)));
        if let Some(&t) = spinning.first() {
            return SimError::Livelock {
                at: self.cx.now,
                spinning: spinning.len(),
                example: ThreadId(t as u32),
                app: app(t),
                partial: None,
            };
        }
        let ready = with(&|s| s == ThreadState::Ready);
        let t = ready.first().copied().unwrap_or(0);
        SimError::Stranded {
            at: self.cx.now,
            ready: ready.len(),
            example: ThreadId(t as u32),
            app: app(t),
            partial: None,
        }
    }

    /// Ends a run with `e`; a run that cannot go on (a deadlock, a livelock, threads stranded)
    /// keeps what was measured up to now, as one stopped at a bound does.
    pub(super) fn ended(self, mut e: SimError) -> SimError {
        if let SimError::Deadlock { partial, .. }
        | SimError::Livelock { partial, .. }
        | SimError::Stranded { partial, .. } = &mut e
        {
            *partial = Some(Box::new(self.finish()));
        }
        e
    }
}
