//! `scx-simple`: the sched_ext repository's `scx_simple` written against [`ScxOps`]. A waking
//! thread goes straight to an idle processor's local queue when `select_cpu` finds one; else
//! `enqueue` puts it on one shared queue, ordered by weighted virtual time (the default, as
//! `scx_simple` without `-f`: a thread's vtime grows by its slice used times 100 / weight at
//! `stopping`, and a sleeper is given at most one slice of credit behind the global vtime), or
//! first-in first-out with `fifo = true`. `dispatch` moves the shared queue's head to the local
//! queue. Every slice is `SCX_SLICE_DFL`, 20 ms.

use serde::Deserialize;

use super::scx::adapter::Scx;
use super::scx::dsq::DsqId;
use super::scx::kfuncs::Kfuncs;
use super::scx::ScxOps;
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::sched::{Enqueue, ParamInfo, PolicyInfo};

/// The shared queue's id (`SHARED_DSQ` in `scx_simple`).
const SHARED_DSQ: u64 = 0;

/// Parameters of `scx-simple`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// First-in first-out shared queue instead of weighted virtual time (`scx_simple -f`).
    pub fifo: bool,
    /// The slice in milliseconds; `SCX_SLICE_DFL` (20) when absent.
    pub slice_ms: Option<f64>,
}

/// `scx_simple`'s operations and its one global variable.
#[derive(Debug)]
pub struct Simple {
    fifo: bool,
    slice_ms: f64,
    /// `vtime_now`: the largest vtime of a thread that started running.
    vtime_now: u64,
}

impl Simple {
    /// `scx_simple` in FIFO mode (`fifo`) or weighted vtime mode, with slices of `slice_ms`.
    pub fn new(fifo: bool, slice_ms: f64) -> Self {
        Simple {
            fifo,
            slice_ms,
            vtime_now: 0,
        }
    }
}

impl ScxOps for Simple {
    fn slice(&self, machine: &MachineConfig) -> Option<Cycles> {
        Some(machine.ms(self.slice_ms).max(1))
    }

    fn init(&mut self, k: &mut Kfuncs) {
        k.create_dsq(SHARED_DSQ);
    }

    fn enable(&mut self, t: ThreadId, k: &mut Kfuncs) {
        k.task(t).dsq_vtime = self.vtime_now;
    }

    fn select_cpu(&mut self, t: ThreadId, prev: ProcId, k: &mut Kfuncs) -> ProcId {
        let (cpu, idle) = k.select_cpu_dfl(t, prev);
        if idle {
            k.insert(t, DsqId::Local);
        }
        cpu
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, k: &mut Kfuncs) {
        if self.fifo {
            k.insert(t, DsqId::Custom(SHARED_DSQ));
            return;
        }
        // At most one slice of credit for a thread that slept.
        let slice = k.slice().unwrap_or(0);
        let vtime = k
            .task(t)
            .dsq_vtime
            .max(self.vtime_now.saturating_sub(slice));
        k.insert_vtime(t, DsqId::Custom(SHARED_DSQ), vtime);
    }

    fn dispatch(&mut self, _prev: Option<ThreadId>, k: &mut Kfuncs) {
        k.move_to_local(DsqId::Custom(SHARED_DSQ));
    }

    fn running(&mut self, t: ThreadId, k: &mut Kfuncs) {
        if !self.fifo {
            self.vtime_now = self.vtime_now.max(k.task(t).dsq_vtime);
        }
    }

    /// The shared queue and the global one serve every processor; a local queue is filled
    /// only by `select_cpu`, for the idle processor it returns.
    fn shared_queues(&self) -> bool {
        true
    }

    fn kicks(&self) -> bool {
        false
    }

    fn stopping(&mut self, t: ThreadId, _runnable: bool, k: &mut Kfuncs) {
        if self.fifo {
            return;
        }
        let used = k.slice_used(t);
        let task = k.task(t);
        task.dsq_vtime += used * 100 / u64::from(task.weight.max(1));
    }
}

/// Registry entry of `scx-simple`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "scx-simple",
    summary: "sched_ext's scx_simple: idle CPU first, else one shared vtime (or FIFO) queue",
    description: "Written as sched_ext operations over dispatch queues. select_cpu takes the \
                  woken thread's previous processor if idle, else any idle one, and then \
                  dispatches it straight to that processor's local queue; otherwise enqueue \
                  puts it on one shared queue ordered by weighted virtual time (a thread's \
                  vtime grows by its slice used times 100 / weight; a sleeper gets at most one \
                  slice of credit), or first come first served with fifo = true. Slices are \
                  SCX_SLICE_DFL, 20 ms; a slice that ends with nothing else waiting is refilled.",
    paper: "the sched_ext project's scx_simple (Linux tools/sched_ext/scx_simple.bpf.c)",
    params: &[
        ParamInfo {
            name: "fifo",
            default: "false",
            doc: "one FIFO shared queue instead of weighted vtime (scx_simple -f)",
        },
        ParamInfo {
            name: "slice_ms",
            default: "20",
            doc: "the slice in milliseconds (SCX_SLICE_DFL)",
        },
    ],
    processor_sets: false,
    parse: crate::sched::settings::<Params>,
};

impl Params {
    fn slice_ms(&self) -> f64 {
        self.slice_ms.unwrap_or(super::scx::SCX_SLICE_DFL_MS)
    }
}

impl crate::sched::PolicyParams for Params {
    fn check(&self) -> Result<(), crate::sched::ParamError> {
        let ms = self.slice_ms();
        crate::sched::params::check_range("slice_ms", ms, 0.001, 60_000.0, "milliseconds")
    }
}

impl crate::sched::Settings for Params {
    fn build(&self) -> Box<dyn crate::sched::Scheduler> {
        Box::new(Scx::new(Simple::new(self.fifo, self.slice_ms())))
    }
}
