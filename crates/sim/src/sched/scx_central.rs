//! `scx-central`: the sched_ext repository's `scx_central` written against [`ScxOps`]. One
//! processor, the central one, makes every scheduling decision: `select_cpu` steers wake-ups to
//! it, `enqueue` appends the thread to one central queue and kicks the central processor;
//! another processor whose local queue is empty takes the fallback queue's head or asks for
//! work (its "gimme" flag) and kicks the central one, whose `dispatch` fills the local queue of
//! every processor that asked (kicking it awake) before taking a thread for itself. Threads run
//! without a slice (`SCX_SLICE_INF`); a timer every millisecond on the central processor
//! preempts a processor whose thread has run a whole slice (20 ms) while work waits. A thread
//! at the central queue's head that may not run on the processor being served goes to the
//! fallback queue, which every processor consumes first.

use serde::Deserialize;

use super::scx::adapter::Scx;
use super::scx::dsq::{Dsq, DsqId};
use super::scx::kfuncs::Kfuncs;
use super::scx::ScxOps;
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::sched::{Enqueue, ParamInfo, PolicyInfo};

/// The fallback queue's id (`FALLBACK_DSQ_ID` in `scx_central`).
const FALLBACK_DSQ: u64 = 0;

/// The central timer's interval, milliseconds (`TIMER_INTERVAL_NS`).
const TIMER_MS: f64 = 1.0;

/// Parameters of `scx-central`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// The central processor (`scx_central -c`); the last one on a smaller machine.
    pub central_cpu: u32,
    /// The slice the timer enforces, milliseconds (`scx_central -s`, `SCX_SLICE_DFL`).
    pub slice_ms: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            central_cpu: 0,
            slice_ms: super::scx::SCX_SLICE_DFL_MS,
        }
    }
}

/// `scx_central`'s operations and state.
#[derive(Debug)]
pub struct Central {
    central_cpu: u32,
    slice_ms: f64,
    /// The central queue (`central_q`, a BPF queue map).
    queue: Dsq,
    /// Processors that asked the central one for work (`cpu_gimme_task`).
    gimme: Vec<bool>,
    /// When each processor's thread started (`cpu_started_at`; 0: idle).
    started_at: Vec<Cycles>,
}

impl Central {
    /// `scx_central` with `central_cpu` dispatching and slices of `slice_ms`.
    pub fn new(central_cpu: u32, slice_ms: f64) -> Self {
        Central {
            central_cpu,
            slice_ms,
            queue: Dsq::default(),
            gimme: Vec::new(),
            started_at: Vec::new(),
        }
    }

    fn central(&self, k: &Kfuncs) -> ProcId {
        ProcId(self.central_cpu.min(k.nr_cpus() as u32 - 1))
    }

    /// Pops the central queue until a thread may run on `cpu` and inserts it into `cpu`'s
    /// local queue (the others go to the fallback queue); `true` if one did.
    fn dispatch_to_cpu(&mut self, cpu: ProcId, k: &mut Kfuncs) -> bool {
        while let Some(t) = self.queue.pop() {
            if !k.cx.allowed(t, cpu) {
                k.insert(t, DsqId::Custom(FALLBACK_DSQ));
                continue;
            }
            k.insert(t, DsqId::LocalOn(cpu));
            if cpu != self.central(k) {
                k.kick_cpu(cpu, false);
            }
            return true;
        }
        false
    }
}

impl ScxOps for Central {
    fn slice(&self, _machine: &MachineConfig) -> Option<Cycles> {
        None
    }

    fn timer_interval(&self, machine: &MachineConfig) -> Option<Cycles> {
        Some(machine.ms(TIMER_MS).max(1))
    }

    fn init(&mut self, k: &mut Kfuncs) {
        k.create_dsq(FALLBACK_DSQ);
        self.gimme = vec![false; k.nr_cpus()];
        self.started_at = vec![0; k.nr_cpus()];
    }

    fn select_cpu(&mut self, _t: ThreadId, _prev: ProcId, k: &mut Kfuncs) -> ProcId {
        self.central(k)
    }

    fn enqueue(&mut self, t: ThreadId, why: Enqueue, k: &mut Kfuncs) {
        self.queue.push(t);
        // A thread still on its processor (preempted, yielding) kicks no one.
        if matches!(why, Enqueue::New | Enqueue::Woken) {
            let c = self.central(k);
            k.kick_cpu(c, true);
        }
    }

    fn dequeue(&mut self, t: ThreadId, _k: &mut Kfuncs) -> bool {
        self.queue.remove(t)
    }

    fn dispatch(&mut self, _prev: Option<ThreadId>, k: &mut Kfuncs) {
        let cpu = k.cpu();
        let central = self.central(k);
        if cpu == central {
            for c in 0..k.nr_cpus() {
                if self.gimme[c] && self.dispatch_to_cpu(ProcId(c as u32), k) {
                    self.gimme[c] = false;
                }
            }
            if !k.move_to_local(DsqId::Custom(FALLBACK_DSQ)) {
                self.dispatch_to_cpu(central, k);
            }
            return;
        }
        if k.move_to_local(DsqId::Custom(FALLBACK_DSQ)) {
            return;
        }
        // Ask the central processor, once per request (the engine may ask an idle processor
        // again before the central one has answered) or while work waits centrally.
        if !self.gimme[cpu.index()] || !self.queue.is_empty() {
            self.gimme[cpu.index()] = true;
            k.kick_cpu(central, true);
        }
    }

    fn running(&mut self, _t: ThreadId, k: &mut Kfuncs) {
        let cpu = k.cpu().index();
        self.started_at[cpu] = k.now().max(1);
    }

    fn stopping(&mut self, _t: ThreadId, _runnable: bool, k: &mut Kfuncs) {
        let cpu = k.cpu().index();
        self.started_at[cpu] = 0;
    }

    fn timer(&mut self, k: &mut Kfuncs) {
        let now = k.now();
        let slice = k.cx.machine.ms(self.slice_ms).max(1);
        let central = self.central(k);
        let mut to_kick = self.queue.len();
        let fallback = k.nr_queued(DsqId::Custom(FALLBACK_DSQ));
        for c in 0..k.nr_cpus() {
            let cpu = ProcId(c as u32);
            let at = self.started_at[c];
            // Only a processor whose thread has used its slice (or that is idle) ...
            if cpu == central || (at != 0 && now < at + slice) {
                continue;
            }
            // ... and only while something waits for it.
            if fallback > 0 || k.nr_queued(DsqId::LocalOn(cpu)) > 0 {
            } else if to_kick > 0 {
                to_kick -= 1;
            } else {
                continue;
            }
            k.kick_cpu(cpu, true);
        }
    }
}

/// Registry entry of `scx-central`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "scx-central",
    summary: "sched_ext's scx_central: one CPU makes every decision and fills the others' queues",
    description: "Written as sched_ext operations over dispatch queues. Wake-ups are steered to \
                  the central processor and queued on one central queue; a processor with an \
                  empty local queue asks the central one (kick_cpu), whose dispatch fills the \
                  local queue of every processor that asked and kicks it awake, then takes a \
                  thread for itself. Every kick of the central processor preempts the thread it \
                  runs (as scx_central's SCX_KICK_PREEMPT does), so its own threads run in short \
                  pieces and it counts more dispatches and preemptions than the others. Threads run without a slice; a timer every millisecond \
                  preempts a processor whose thread ran a whole slice (20 ms) while work waits.",
    paper: "the sched_ext project's scx_central (Linux tools/sched_ext/scx_central.bpf.c)",
    params: &[
        ParamInfo {
            name: "central_cpu",
            default: "0",
            doc: "the processor that dispatches for all (the last one on a smaller machine)",
        },
        ParamInfo {
            name: "slice_ms",
            default: "20",
            doc: "the slice the central timer enforces, milliseconds (SCX_SLICE_DFL)",
        },
    ],
    processor_sets: false,
    parse: crate::sched::settings::<Params>,
};

impl crate::sched::PolicyParams for Params {
    fn check(&self) -> Result<(), crate::sched::ParamError> {
        let ms = self.slice_ms;
        crate::sched::params::check_range("slice_ms", ms, 0.001, 60_000.0, "milliseconds")
    }
}

impl crate::sched::Settings for Params {
    fn build(&self) -> Box<dyn crate::sched::Scheduler> {
        Box::new(Scx::new(Central::new(self.central_cpu, self.slice_ms)))
    }
}
