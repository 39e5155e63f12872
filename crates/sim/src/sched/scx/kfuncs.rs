//! What a sched_ext operation may call (the kernel's kfuncs, as far as `scx-simple` and
//! `scx-central` need them): inserting a thread into a dispatch queue, moving one to the local
//! queue, counting, kicking processors, the default idle-processor choice
//! (`scx_bpf_select_cpu_dfl`), and the per-task fields sched_ext keeps in `p->scx`.

use super::dsq::{DsqId, Dsqs};
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::sched::{Kick, SchedCtx};

/// `SCX_SLICE_DFL`: the slice sched_ext gives by default, 20 ms.
pub const SCX_SLICE_DFL_MS: f64 = 20.0;

/// The fields sched_ext keeps for each task (`p->scx`) that the policies here use.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScxTask {
    /// `dsq_vtime`: the task's virtual time, for vtime-ordered queues.
    pub dsq_vtime: u64,
    /// `weight`: 100 at nice 0, from the kernel's `sched_prio_to_weight` scaled by 100/1024.
    pub weight: u32,
    /// When the task last started running (its slice began).
    pub started: Cycles,
}

/// The kernel's nice-to-weight table (`sched_prio_to_weight`, nice -20 to 19).
const PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87,
    70, 56, 45, 36, 29, 23, 18, 15,
];

/// sched_ext's weight (1 to 10,000, 100 at nice 0) of a thread of base priority `prio` (smpsched
/// gives an rt-app SCHED_OTHER thread `-nice`; real-time classes, above 20, count as nice -20,
/// SCHED_IDLE's -40 as the least weight).
pub fn weight_of(prio: i32) -> u32 {
    let nice = (-prio).clamp(-20, 19);
    let w = if prio < -20 {
        3
    } else {
        PRIO_TO_WEIGHT[(nice + 20) as usize]
    };
    (w * 100 / 1024).clamp(1, 10_000)
}

/// The kfuncs an operation calls, bound to the processor it runs on.
pub struct Kfuncs<'a> {
    /// The engine's view of the machine.
    pub cx: &'a SchedCtx,
    pub(super) dsqs: &'a mut Dsqs,
    pub(super) tasks: &'a mut Vec<ScxTask>,
    pub(super) kicks: &'a mut Vec<Kick>,
    /// The processor the operation runs on.
    pub(super) cpu: ProcId,
    /// The slice every insertion gives (`None`: `SCX_SLICE_INF`).
    pub(super) slice: Option<Cycles>,
    /// Inside `select_cpu`: a thread inserted into `SCX_DSQ_LOCAL` waits here for the
    /// processor the operation returns.
    pub(super) direct: Option<Option<ThreadId>>,
}

impl Kfuncs<'_> {
    /// The current time (`scx_bpf_now`).
    pub fn now(&self) -> Cycles {
        self.cx.now
    }

    /// The processor this operation runs on (`bpf_get_smp_processor_id`).
    pub fn cpu(&self) -> ProcId {
        self.cpu
    }

    /// How many processors the machine has (`nr_cpu_ids`).
    pub fn nr_cpus(&self) -> usize {
        self.cx.machine.processors as usize
    }

    /// The slice the policy gives (`None`: `SCX_SLICE_INF`).
    pub fn slice(&self) -> Option<Cycles> {
        self.slice
    }

    /// Task `t`'s sched_ext fields.
    pub fn task(&mut self, t: ThreadId) -> &mut ScxTask {
        &mut self.tasks[t.index()]
    }

    /// How much of its slice `t` used since it last started (`SCX_SLICE_DFL - p->scx.slice`:
    /// never more than the slice).
    pub fn slice_used(&self, t: ThreadId) -> Cycles {
        let used = self.cx.now.saturating_sub(self.tasks[t.index()].started);
        self.slice.map_or(used, |s| used.min(s))
    }

    /// Creates custom queue `id` (`scx_bpf_create_dsq`); creating it again keeps it.
    pub fn create_dsq(&mut self, id: u64) {
        self.dsqs.custom.entry(id).or_default();
    }

    /// Inserts `t` at the tail of `dsq` (`scx_bpf_dsq_insert`). A local queue of a processor
    /// `t` may not run on, or a custom queue never created, sends it to the global queue (the
    /// kernel would fall back or abort the scheduler).
    pub fn insert(&mut self, t: ThreadId, dsq: DsqId) {
        let landed = self.resolve(t, dsq).map(|(q, id)| {
            q.push(t);
            id
        });
        if let Some(id) = landed {
            self.dsqs.settle_claim_of(id, self.cpu);
        }
    }

    /// Inserts `t` into `dsq` ordered by `vtime` (`scx_bpf_dsq_insert_vtime`); a local or the
    /// global queue, which are FIFO, take it at the tail.
    pub fn insert_vtime(&mut self, t: ThreadId, dsq: DsqId, vtime: u64) {
        let landed = match self.resolve(t, dsq) {
            Some((q, id @ DsqId::Custom(_))) => {
                q.push_vtime(t, vtime);
                id
            }
            Some((q, id)) => {
                q.push(t);
                id
            }
            None => return,
        };
        self.dsqs.settle_claim_of(landed, self.cpu);
    }

    /// The queue an insertion of `t` into `dsq` lands in, with the id it lands under (`None`:
    /// held for `select_cpu`).
    fn resolve(&mut self, t: ThreadId, dsq: DsqId) -> Option<(&mut super::dsq::Dsq, DsqId)> {
        if dsq == DsqId::Local {
            if let Some(direct) = self.direct.as_mut() {
                *direct = Some(t);
                return None;
            }
        }
        let here = self.cpu;
        let ok = match dsq {
            DsqId::Local => self.cx.allowed(t, here),
            DsqId::LocalOn(p) => p.index() < self.dsqs.local.len() && self.cx.allowed(t, p),
            DsqId::Custom(n) => self.dsqs.custom.contains_key(&n),
            DsqId::Global => true,
        };
        let id = if ok { dsq } else { DsqId::Global };
        self.dsqs.get_mut(id, here).map(|q| (q, id))
    }

    /// Moves the first thread of `dsq` that may run here to this processor's local queue
    /// (`scx_bpf_dsq_move_to_local`); `false` if there was none.
    pub fn move_to_local(&mut self, dsq: DsqId) -> bool {
        let (here, cx) = (self.cpu, self.cx);
        let Some(t) = self
            .dsqs
            .get_mut(dsq, here)
            .and_then(|q| q.pop_for(here, cx))
        else {
            return false;
        };
        self.dsqs.settle_claim_of(dsq, here);
        self.dsqs.local[here.index()].push(t);
        self.dsqs.settle_claim(here.index());
        true
    }

    /// How many threads wait in `dsq` (`scx_bpf_dsq_nr_queued`).
    pub fn nr_queued(&self, dsq: DsqId) -> usize {
        self.dsqs.get(dsq, self.cpu).map_or(0, super::dsq::Dsq::len)
    }

    /// Kicks `cpu` (`scx_bpf_kick_cpu`): wakes it if idle; with `preempt`
    /// (`SCX_KICK_PREEMPT`), a running one gives up its thread and dispatches again.
    pub fn kick_cpu(&mut self, cpu: ProcId, preempt: bool) {
        self.kicks.push(Kick { cpu, preempt });
    }

    /// Whether `cpu` is idle and not yet claimed: it runs nothing and its local queue is empty
    /// (a thread inserted there claims it, as the kernel's idle mask is cleared).
    pub fn is_idle(&self, cpu: ProcId) -> bool {
        self.cx
            .running
            .get(cpu.index())
            .is_some_and(Option::is_none)
            && self.local_empty(cpu)
    }

    /// Whether `cpu`'s local queue holds nothing.
    fn local_empty(&self, cpu: ProcId) -> bool {
        self.dsqs
            .local
            .get(cpu.index())
            .is_none_or(super::dsq::Dsq::is_empty)
    }

    /// The kernel's default idle-processor choice (`scx_bpf_select_cpu_dfl`): `prev` if it is
    /// idle and allowed, else the lowest-numbered idle processor `t` may run on; with whether
    /// the one returned is idle (else `prev`, or the lowest allowed, busy).
    pub fn select_cpu_dfl(&self, t: ThreadId, prev: ProcId) -> (ProcId, bool) {
        if self.cx.allowed(t, prev) && self.is_idle(prev) {
            return (prev, true);
        }
        // A vacant processor with an empty local queue is idle (`is_idle`): one not claimed.
        debug_assert!(self.dsqs.claims_in_step(), "a local queue's claim is stale");
        let mut from = 0;
        let idle = loop {
            let Some(p) = self.cx.vacant.next_from_outside(&self.dsqs.claimed, from) else {
                break None;
            };
            if self.cx.allowed(t, ProcId(p as u32)) {
                break Some(ProcId(p as u32));
            }
            from = p + 1;
        };
        match idle {
            Some(p) => (p, true),
            None if self.cx.allowed(t, prev) => (prev, false),
            None => {
                let n = self.nr_cpus();
                let any = (0..n as u32).map(ProcId).find(|&p| self.cx.allowed(t, p));
                (any.unwrap_or(prev), false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::weight_of;

    #[test]
    fn weights_follow_the_kernel_table() {
        assert_eq!(weight_of(0), 100);
        assert_eq!(weight_of(20), 8668); // nice -20: 88761 * 100 / 1024
        assert_eq!(weight_of(-19), 1); // nice 19: 15 * 100 / 1024
        assert_eq!(weight_of(-40), 1); // SCHED_IDLE
        assert_eq!(weight_of(110), weight_of(20)); // real-time: nice -20
    }
}
