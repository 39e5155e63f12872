//! sched_ext-style policies: a policy written as Linux's sched_ext operations (`select_cpu`,
//! `enqueue`, `dispatch(cpu)`, `running`, `stopping`, a timer) over dispatch queues (the global
//! one, one local per processor, custom ones; FIFO or vtime-ordered), with slices
//! (`SCX_SLICE_DFL`, 20 ms), idle-processor picking and `kick_cpu`. [`adapter::Scx`] maps the
//! operations onto the engine's hook table; `scx-simple` ([`scx_simple`](super::scx_simple)) and
//! `scx-central` ([`scx_central`](super::scx_central)), policies of their own, are written against it, after the sched_ext repository's `scx_simple` and
//! `scx_central` (Linux `tools/sched_ext/`).
//!
//! | sched_ext | here | engine hook |
//! |---|---|---|
//! | `enable` | [`ScxOps::enable`] | `enqueue` (a new thread) |
//! | `select_cpu` | [`ScxOps::select_cpu`] | `enqueue` (new or woken), its placement |
//! | `enqueue` | [`ScxOps::enqueue`] | `enqueue` (unless `select_cpu` inserted it) |
//! | `dispatch` | [`ScxOps::dispatch`] | `pick_next` (local and global queues empty), `quantum_expired` |
//! | `dequeue` | [`ScxOps::dequeue`] | `dequeue` (a handoff) |
//! | `running` | [`ScxOps::running`] | `pick_next`, `dequeue` (a handoff) |
//! | `stopping` | [`ScxOps::stopping`] | `enqueue` (preempted, yielded), `stopped` |
//! | BPF timer | [`ScxOps::timer`] | `tick` |
//! | `scx_bpf_kick_cpu` | [`Kfuncs::kick_cpu`] | `take_kicks` |

pub mod adapter;
pub mod dsq;
pub mod kfuncs;
pub mod vtime;

pub use adapter::Scx;
pub use dsq::{Dsq, DsqId, Dsqs};
pub use kfuncs::{Kfuncs, ScxTask, SCX_SLICE_DFL_MS};

use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::sched::Enqueue;

/// A policy written as sched_ext operations. Only `enqueue` is required; the others default
/// to what the kernel does without them.
pub trait ScxOps {
    /// The slice every dispatch gives (`None`: `SCX_SLICE_INF`, a thread runs until it blocks
    /// or a kick preempts it); by default `SCX_SLICE_DFL`.
    fn slice(&self, machine: &MachineConfig) -> Option<Cycles> {
        Some(machine.ms(SCX_SLICE_DFL_MS).max(1))
    }

    /// The interval of the policy's timer ([`ScxOps::timer`]), if it has one.
    fn timer_interval(&self, _machine: &MachineConfig) -> Option<Cycles> {
        None
    }

    /// Before the first thread (`ops.init`): create custom queues.
    fn init(&mut self, _k: &mut Kfuncs) {}

    /// Thread `t` joins the scheduler (`ops.enable`).
    fn enable(&mut self, _t: ThreadId, _k: &mut Kfuncs) {}

    /// Thread `t` wakes (or is new) having last run on `prev`: the processor it should go to.
    /// Inserting it into [`DsqId::Local`] here dispatches it straight to that processor
    /// (`enqueue` is then skipped). By default the kernel's choice, without inserting.
    fn select_cpu(&mut self, t: ThreadId, prev: ProcId, k: &mut Kfuncs) -> ProcId {
        k.select_cpu_dfl(t, prev).0
    }

    /// Thread `t` is runnable (`why`) and was not dispatched by `select_cpu`: insert it into a
    /// queue (the kernel's `enqueue`).
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, k: &mut Kfuncs);

    /// Thread `t` leaves the policy's custody before running (`ops.dequeue`; here only for a
    /// handoff): take it off the policy's own structures, `true` if it was there. Threads in
    /// dispatch queues are taken off by the adapter.
    fn dequeue(&mut self, _t: ThreadId, _k: &mut Kfuncs) -> bool {
        false
    }

    /// Processor `k.cpu()` found its local queue and the global queue empty (`prev` is the
    /// thread whose slice just ended, if any): move or insert work into local queues.
    fn dispatch(&mut self, _prev: Option<ThreadId>, _k: &mut Kfuncs) {}

    /// Thread `t` starts running on `k.cpu()`.
    fn running(&mut self, _t: ThreadId, _k: &mut Kfuncs) {}

    /// Thread `t` leaves `k.cpu()`; `runnable` if it goes back to a queue.
    fn stopping(&mut self, _t: ThreadId, _runnable: bool, _k: &mut Kfuncs) {}

    /// Every [`ScxOps::timer_interval`] (a BPF timer: `scx_central`'s slice enforcement).
    fn timer(&mut self, _k: &mut Kfuncs) {}

    /// Whether every processor draws its work from queues all processors share (the global
    /// queue and custom ones), a local queue being filled only for the processor `select_cpu`
    /// returned or a kick named. Then one idle processor finding nothing means every idle one
    /// would, and the engine stops offering there ([`Shape::shared_queue`](crate::sched::Shape));
    /// false, the default, asks every idle processor.
    fn shared_queues(&self) -> bool {
        false
    }

    /// Whether the policy ever kicks a processor ([`Kfuncs::kick_cpu`]). True, the default,
    /// has the engine collect kicks after every event; a policy that never kicks says false
    /// and spares it that call (checked in debug builds: a kick from such a policy panics).
    ///
    /// A policy that kicks wakes idle processors itself, as in sched_ext: a thread it queues
    /// is offered only to the CPU `select_cpu` returned (or the one it was preempted on), and
    /// other idle processors are asked only when kicked (and each once at the run's start).
    /// One that does not kick has every idle processor asked after that CPU.
    fn kicks(&self) -> bool {
        true
    }
}
