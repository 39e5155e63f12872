//! Segments: how a processor's time is charged. A processor is always in one segment (idle,
//! computing, spinning, a parked poll, or fixed charges in order) begun at `seg_start`;
//! [`Simulation::settle`] charges the elapsed part to its category, on the processor, on the
//! thread and on its application, before any change, so that the categories of a processor sum
//! to elapsed time (`metrics`: Gupta et al. 1991's utilization breakdowns). Starting a segment schedules its end; a memory
//! access's charge becomes a segment of useful then stall time. What a processor's step did to
//! its thread ([`Step`]) is answered here too, since starting a segment is the common answer.
//!
//! Invariant: a processor's `epoch` is bumped at every new segment, so a stale end event is
//! dropped.

use super::{EventKind, Simulation};
use crate::ids::{Cycles, ThreadId};
use crate::memory::Charge;
use crate::metrics::Category;

impl Seg {
    /// Fixed charges in this order (at most four).
    pub(super) fn fixed(parts: &[(Category, Cycles)]) -> Seg {
        let mut out = [(Category::Kernel, 0); 4];
        out[..parts.len()].copy_from_slice(parts);
        Seg::Fixed(out)
    }
}

/// A processor's current stretch of activity.
#[derive(Clone, Copy, Debug)]
pub(super) enum Seg {
    Idle,
    /// Running its thread's compute operation (interruptible).
    Compute,
    /// Busy-waiting on a synchronization object (interruptible).
    Spin,
    /// A parked poller: pauses and cache-hit loads of a word, charged as useful time, with no
    /// end event until the word's line is invalidated (`poll`).
    Poll,
    /// Fixed charges in order (e.g. kernel then switch), not interruptible.
    Fixed([(Category, Cycles); 4]),
}

/// What happened to the thread a processor was running.
pub(super) enum Step {
    /// A segment was started; the processor waits for its end.
    Busy,
    /// The thread left; charge `cost` kernel cycles, then run `handoff` or ask the policy.
    Left {
        prev: ThreadId,
        cost: Cycles,
        handoff: Option<ThreadId>,
    },
}

impl Simulation {
    /// Charges the processor's current segment up to now. The common segments (idle,
    /// computing, spinning) are charged inline; fixed charges out of line.
    #[inline(always)]
    pub(super) fn settle(&mut self, p: usize) {
        let now = self.cx.now;
        let proc = &mut self.procs[p];
        let e = now - proc.seg_start;
        proc.seg_start = now;
        if e == 0 {
            return;
        }
        let who = proc.charge_to;
        match proc.seg {
            Seg::Idle => proc.time.idle += e,
            Seg::Compute => {
                proc.time.useful += e;
                let t = who.expect("computing processor has a thread");
                self.cx.threads[t.index()].exec.remaining -= e;
                self.charge_thread(t, Category::Useful, e);
            }
            Seg::Poll => {
                proc.time.useful += e;
                let t = who.expect("polling processor has a thread");
                self.charge_thread(t, Category::Useful, e);
            }
            Seg::Spin => {
                proc.time.spin += e;
                let t = who.expect("spinning processor has a thread");
                self.charge_thread(t, Category::Spin, e);
            }
            Seg::Fixed(_) => self.settle_fixed(p, who, e),
        }
    }

    /// Charges `e` cycles of processor `p`'s fixed segment: its parts are consumed in order,
    /// and the thread (if any) is charged each part's share in its category.
    #[inline(never)]
    fn settle_fixed(&mut self, p: usize, who: Option<ThreadId>, e: Cycles) {
        let app = who.map(|t| self.cx.threads[t.index()].info.task.index());
        let proc = &mut self.procs[p];
        let Seg::Fixed(parts) = &mut proc.seg else {
            unreachable!("settle_fixed on a segment that is not fixed");
        };
        let mut left = e;
        for part in parts.iter_mut() {
            let c = part.1.min(left);
            if c == 0 {
                if left == 0 {
                    break;
                }
                continue;
            }
            part.1 -= c;
            left -= c;
            proc.time.add(part.0, c);
            if let Some(a) = app {
                self.apps[a].time.add(part.0, c);
            }
        }
        debug_assert_eq!(left, 0, "fixed segment overran on processor {p}");
        if let Some(t) = who {
            self.cx.threads[t.index()].info.cpu_cycles += e;
            if self.sched.shape.charges {
                self.sched.charge(t, e);
            }
        }
    }

    #[inline]
    pub(super) fn charge_thread(&mut self, t: ThreadId, cat: Category, c: Cycles) {
        let info = &mut self.cx.threads[t.index()].info;
        info.cpu_cycles += c;
        self.apps[info.task.index()].time.add(cat, c);
        if self.sched.shape.charges {
            self.sched.charge(t, c);
        }
    }

    /// Starts a segment on `p` that ends at `end` (never, if `end` is `Cycles::MAX`).
    #[inline(always)]
    pub(super) fn start_seg(&mut self, p: usize, seg: Seg, end: Cycles) {
        self.start_seg_as(p, seg, end, false);
    }

    /// [`Self::start_seg`]; a `short` segment's end is pushed with
    /// [`EventQueue::push_next`](crate::event_queue::EventQueue::push_next).
    #[inline(always)]
    fn start_seg_as(&mut self, p: usize, seg: Seg, end: Cycles, short: bool) {
        if self.memory.has_woken() {
            // The pollers an access just woke were scheduled before it (`poll`).
            self.wake_pollers();
        }
        let proc = &mut self.procs[p];
        proc.seg = seg;
        proc.seg_start = self.cx.now;
        proc.charge_to = proc.thread.or(proc.charge_to);
        proc.epoch = proc.epoch.wrapping_add(1);
        let epoch = proc.epoch;
        if end != Cycles::MAX {
            proc.pushed = self.cx.now;
            let kind = EventKind::Proc { p: p as u32, epoch };
            if short {
                self.push_next(end, kind);
            } else {
                self.push(end, kind);
            }
        }
    }

    /// Books a memory charge to `t`'s application and starts its segment on `p`: the hits as
    /// useful time, then the misses as stall.
    pub(super) fn start_mem(&mut self, p: usize, t: ThreadId, charge: Charge) -> Step {
        self.start_mem_as(p, t, charge, false)
    }

    /// [`Self::start_mem`] for one word's access (an atomic, a load or store, a poll's look):
    /// a few cycles, often the next event of all, which the agenda then takes without placing
    /// it ([`crate::event_queue`]).
    pub(super) fn start_word(&mut self, p: usize, t: ThreadId, charge: Charge) -> Step {
        self.start_mem_as(p, t, charge, true)
    }

    #[inline(always)]
    fn start_mem_as(&mut self, p: usize, t: ThreadId, charge: Charge, short: bool) -> Step {
        let task = self.cx.threads[t.index()].info.task.index();
        self.apps[task].mem += charge;
        self.start_seg_as(
            p,
            Seg::fixed(&[
                (Category::Useful, charge.useful),
                (Category::Stall, charge.stall),
            ]),
            self.after(charge.total()),
            short,
        );
        Step::Busy
    }

    /// Starts fixed charges on `p` for its thread: a synchronization variable's access (useful
    /// and stall), then `kernel` cycles.
    pub(super) fn start_charge(&mut self, p: usize, c: Charge, kernel: Cycles) -> Step {
        self.start_seg(
            p,
            Seg::fixed(&[
                (Category::Useful, c.useful),
                (Category::Stall, c.stall),
                (Category::Kernel, kernel),
            ]),
            self.after(c.total().saturating_add(kernel)),
        );
        Step::Busy
    }
}
