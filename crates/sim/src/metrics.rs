//! Metrics of a run: per-processor time split into disjoint categories, and per-application
//! measures (design.md, "Metrics"; Gupta et al. 1991's utilization breakdowns).
//!
//! Conservation law: for every processor, the six categories sum exactly to the elapsed time.
//! [`RunReport::check_conservation`] asserts it; the test suite calls it on every run.

use serde::{Deserialize, Serialize};

use crate::ids::Cycles;
use crate::memory::{Charge, MemoryStats};
pub use crate::recorded::Recorded;
use crate::sync::SyncStats;

/// What a processor was doing during a stretch of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Executing a thread's instructions (including cache hits).
    Useful,
    /// Stalled on cache misses.
    Stall,
    /// Busy-waiting on a synchronization variable.
    Spin,
    /// No thread to run.
    Idle,
    /// Switching contexts.
    Switch,
    /// Kernel and scheduler work (run-queue operations, system calls).
    Kernel,
}

/// Cycles per category. For a processor the six sum to the elapsed time; for an application,
/// `idle` is always zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeSplit {
    /// Useful work.
    pub useful: Cycles,
    /// Cache-miss stall.
    pub stall: Cycles,
    /// Busy-waiting.
    pub spin: Cycles,
    /// Idle.
    pub idle: Cycles,
    /// Context switching.
    pub switch: Cycles,
    /// Kernel and scheduler work.
    pub kernel: Cycles,
}

impl TimeSplit {
    /// Adds `c` cycles to category `cat`.
    #[inline]
    pub fn add(&mut self, cat: Category, c: Cycles) {
        match cat {
            Category::Useful => self.useful = self.useful.saturating_add(c),
            Category::Stall => self.stall = self.stall.saturating_add(c),
            Category::Spin => self.spin = self.spin.saturating_add(c),
            Category::Idle => self.idle = self.idle.saturating_add(c),
            Category::Switch => self.switch = self.switch.saturating_add(c),
            Category::Kernel => self.kernel = self.kernel.saturating_add(c),
        }
    }

    /// Sum over all categories (saturating: sums over many processors of very long runs).
    pub fn total(&self) -> Cycles {
        [self.stall, self.spin, self.idle, self.switch, self.kernel]
            .iter()
            .fold(self.useful, |a, &b| a.saturating_add(b))
    }

    /// Sum over all categories but idle: time a processor was held by a thread.
    pub fn held(&self) -> Cycles {
        self.total().saturating_sub(self.idle)
    }

    /// Element-wise sum.
    pub fn plus(&self, o: &TimeSplit) -> TimeSplit {
        TimeSplit {
            useful: self.useful.saturating_add(o.useful),
            stall: self.stall.saturating_add(o.stall),
            spin: self.spin.saturating_add(o.spin),
            idle: self.idle.saturating_add(o.idle),
            switch: self.switch.saturating_add(o.switch),
            kernel: self.kernel.saturating_add(o.kernel),
        }
    }

    /// The categories with their names, in report order.
    pub fn named(&self) -> [(&'static str, Cycles); 6] {
        [
            ("useful", self.useful),
            ("stall", self.stall),
            ("spin", self.spin),
            ("idle", self.idle),
            ("switch", self.switch),
            ("kernel", self.kernel),
        ]
    }
}

/// Measures of one application (task) over a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AppReport {
    /// The application's name in the experiment.
    pub name: String,
    /// Threads it created.
    pub threads: u32,
    /// Cycle at which its last thread exited, or the run's end time for threads killed there
    /// (rt-app's `duration`); when `unfinished`, at which its last thread to exit did so, 0 if
    /// none did.
    pub completion_cycles: Cycles,
    /// Set when threads of it were still live at the run's end and not killed by an end time (a
    /// run stopped by `until`, or at a bound): it has no completion time. Written only when
    /// set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfinished: bool,
    /// Processor time its threads held, by category (`idle` is zero).
    pub time: TimeSplit,
    /// Share of machine time (processors x elapsed) its threads held.
    pub machine_share: f64,
    /// Useful work as a fraction of the processor time it held.
    pub utilization: f64,
    /// Times one of its threads was dispatched after another thread (or idleness) on a processor.
    pub context_switches: u64,
    /// Context switches per time slice per processor, over the run (Gupta's measure).
    pub switches_per_slice_per_proc: f64,
    /// Dispatches onto a processor other than the one the thread last ran on.
    pub migrations: u64,
    /// Fraction of re-dispatches that landed on the processor the thread last ran on.
    pub same_processor_rate: f64,
    /// Median number of dispatches of other threads on a processor between two runs of one of
    /// the application's threads there (Gupta 5.2's "intervening processes"); `None` when no
    /// thread ran twice on one processor.
    pub median_intervening: Option<u64>,
    /// Memory references its threads made (atomics included).
    pub refs: u64,
    /// Of those, references that missed in the cache.
    pub misses: u64,
    /// Misses per reference (0 with no references).
    pub miss_rate: f64,
    /// Copies in other caches its threads' writes and atomics invalidated.
    pub invalidations: u64,
    /// Misses served by a remote NUMA node.
    pub remote: u64,
    /// Cycles its threads stalled in the memory model (equals `time.stall`).
    pub stall: Cycles,
    /// Per-job measures: each thread a job from arrival to exit.
    pub jobs: crate::jobs::JobStats,
    /// Each exited job's times, in the order its threads were created, when the run was asked
    /// to keep them ([`Simulation::keep_job_times`](crate::Simulation::keep_job_times));
    /// empty (and absent from the results) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub job_times: Vec<crate::jobs::JobTimes>,
    /// Measures the application's programs recorded, by name (absent from the results when
    /// none were).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub recorded: std::collections::BTreeMap<String, Recorded>,
    /// Each thread's dispatches, runtime and wake-to-run latency, for an application whose
    /// threads are measured ([`Simulation::measure_threads`](crate::Simulation::measure_threads);
    /// absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_thread: Vec<crate::per_thread::ThreadReport>,
}

/// Run-queue lock traffic: the locks a policy's dispatches take in the simulated memory
/// ([`Touch`](crate::sched::Touch)s), so lock contention on run queues can be read off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunQueueLock {
    /// Lock acquisitions (atomic touches).
    pub acquires: u64,
    /// Cycles the acquisitions stalled on the lock's line (waiting for it).
    pub wait_cycles: Cycles,
    /// Cycles from each acquisition to its release (the references made holding it).
    pub hold_cycles: Cycles,
}

/// One of Weibel's units split into the program's own work (user) and the kernel's (Weibel,
/// section 4, Tables 1-11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// The threads' own work.
    pub user: u64,
    /// The kernel's: run-queue accesses and locks, migration scans, context switches, thread
    /// creation and exit.
    pub kernel: u64,
}

impl Split {
    /// `user + kernel`.
    pub fn total(&self) -> u64 {
        self.user + self.kernel
    }
}

/// Weibel's measures of a run, each split into user and kernel: instructions, cycles, memory
/// accesses and first-level cache refills, summed over every processor (idle time counts as
/// kernel cycles only on a machine whose idle loop spins in the kernel,
/// [`KernelCosts::idle_in_kernel`](crate::config::KernelCosts::idle_in_kernel)).
///
/// An instruction is a cycle of work that is not a memory stall: a reference that hits is one
/// instruction of one cycle, a compute cycle one instruction, a spin probe one; kernel
/// instructions are the kernel's and context switches' cycles less the kernel's own memory
/// stall.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserKernel {
    /// Instructions executed.
    pub instructions: Split,
    /// Processor cycles spent.
    pub cycles: Split,
    /// Memory references (atomics included).
    pub accesses: Split,
    /// First-level cache refills (misses, ownership upgrades included).
    pub refills: Split,
}

impl UserKernel {
    /// The split of a run from its machine-wide time split, its memory totals and the kernel's
    /// own memory charges (run-queue touches, thread creation); `idle_in_kernel` counts idle
    /// cycles as the kernel's idle loop.
    pub(crate) fn of(
        total: &TimeSplit,
        memory: &MemoryStats,
        kernel_mem: &Charge,
        idle_in_kernel: bool,
    ) -> Self {
        let idle = if idle_in_kernel { total.idle } else { 0 };
        let kernel_cycles = total
            .kernel
            .saturating_add(total.switch)
            .saturating_add(idle);
        UserKernel {
            instructions: Split {
                user: total.useful.saturating_add(total.spin),
                kernel: kernel_cycles.saturating_sub(kernel_mem.stall),
            },
            cycles: Split {
                user: total
                    .useful
                    .saturating_add(total.stall)
                    .saturating_add(total.spin),
                kernel: kernel_cycles,
            },
            accesses: Split {
                user: memory.refs.saturating_sub(kernel_mem.refs),
                kernel: kernel_mem.refs,
            },
            refills: Split {
                user: memory.misses.saturating_sub(kernel_mem.misses),
                kernel: kernel_mem.misses,
            },
        }
    }
}

/// Counts of a small non-negative measure, for a median without keeping every sample: values
/// from 0 to 255 each have a bucket, larger ones share the last.
#[derive(Clone, Debug, Default)]
pub(crate) struct Histogram {
    buckets: Vec<u64>,
}

impl Histogram {
    const BUCKETS: usize = 256;

    /// Counts one value.
    pub(crate) fn add(&mut self, v: u64) {
        if self.buckets.is_empty() {
            self.buckets = vec![0; Self::BUCKETS];
        }
        self.buckets[(v as usize).min(Self::BUCKETS - 1)] += 1;
    }

    /// The median (the lower one of an even count); `None` when empty.
    pub(crate) fn median(&self) -> Option<u64> {
        let n: u64 = self.buckets.iter().sum();
        if n == 0 {
            return None;
        }
        let mut seen = 0;
        for (v, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if 2 * seen >= n {
                return Some(v as u64);
            }
        }
        None
    }
}

/// Everything measured in one simulation run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    /// Simulated time at which the last thread exited.
    pub elapsed_cycles: Cycles,
    /// Engine events processed.
    pub events: u64,
    /// Time split of each processor.
    pub processors: Vec<TimeSplit>,
    /// Sum of the processors' time splits.
    pub total: TimeSplit,
    /// Useful work as a fraction of machine time (processors x elapsed).
    pub utilization: f64,
    /// Per-application measures, in task order.
    pub apps: Vec<AppReport>,
    /// Synchronization counters summed over every object (`max_backoffs` is the maximum).
    pub sync: SyncStats,
    /// The same counters summed over the locks alone, apart from semaphores, events, barriers
    /// and ports (Gupta's Figure 4: how many of the blocks were on contended locks).
    #[serde(default)]
    pub locks: SyncStats,
    /// Time slices elapsed: the elapsed time over the policy's nominal slice (the unit of the
    /// per-slice rates, such as `switches_per_slice_per_proc`).
    #[serde(default)]
    pub slices: f64,
    /// Memory-model counters summed over every processor.
    pub memory: MemoryStats,
    /// What each processor ran, when a trace was asked for
    /// ([`Simulation::set_trace`](crate::Simulation::set_trace)); not part of the results.
    #[serde(skip)]
    pub trace: Option<crate::trace::Trace>,
    /// Run-queue lock traffic of the policy's own structures in the memory model.
    pub runq_lock: RunQueueLock,
    /// Instructions, cycles, accesses and refills split into user and kernel (Weibel's
    /// tables); read by the lab's measures, not part of the written results.
    #[serde(skip)]
    pub user_kernel: UserKernel,
}

impl RunReport {
    /// Checks that each processor's categories sum to the elapsed time; returns the first
    /// processor that breaks the law.
    pub fn check_conservation(&self) -> Result<(), String> {
        for (p, t) in self.processors.iter().enumerate() {
            if t.total() != self.elapsed_cycles {
                return Err(format!(
                    "processor {p}: categories sum to {} but elapsed is {}",
                    t.total(),
                    self.elapsed_cycles
                ));
            }
        }
        Ok(())
    }
}

/// A ratio that is 0 when the denominator is 0.
pub(crate) fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

#[cfg(test)]
mod histogram_tests {
    use super::Histogram;

    #[test]
    fn the_median_is_the_lower_middle_value_and_large_values_share_a_bucket() {
        let mut h = Histogram::default();
        assert_eq!(h.median(), None);
        for v in [5, 1, 9, 1] {
            h.add(v);
        }
        assert_eq!(h.median(), Some(1));
        h.add(7);
        assert_eq!(h.median(), Some(5));
        let mut big = Histogram::default();
        big.add(10_000);
        assert_eq!(big.median(), Some(255));
    }
}
