//! An rt-app thread as a simulated program: its task's phases, compiled for the run
//! (`code.rs`), turned into operations one at a time. Mutexes are the simulator's locks; a condition (`wait`, `signal`, `broad`, `sync`,
//! `suspend`, `resume`) is a semaphore with a count of its waiters kept in the threads' shared
//! state, so that a signal with no waiter is lost as with `pthread_cond_signal`; barriers are
//! the simulator's reusable barriers; `fork` spawns a thread of the named task; `mem` and
//! `iorun` write the thread's buffer through the memory model.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use smpsched_sim::memory::{AccessKind, BulkAccess};
use smpsched_sim::{CpuMask, Cycles, Op, ProcId, Program, Request, Spawner, SyncId, ThreadCtx};

use super::code::{Code, CodePhase, Step};
use super::spec::Attrs;

/// What the threads of one rt-app file change as they run.
pub struct Shared {
    /// Each condition's semaphore and its count of waiters, by the condition's number.
    pub conds: Vec<(SyncId, u64)>,
    /// Each task's memory buffers (base addresses), used round robin by its threads.
    pub buffers: Vec<Vec<u64>>,
    /// Threads started so far per task (to pick a buffer).
    pub started: Vec<u64>,
    /// When the application's first thread first ran: rt-app's `t_zero`, from which every
    /// thread's timers count (with its task's `delay` added).
    pub zero: Option<Cycles>,
}

/// A step of an event, decided when it is reached (a signal wakes whoever waits by then).
#[derive(Debug)]
enum Micro {
    Op(Op),
    /// Wake the first waiter of condition number `.0`, if any.
    Signal(usize),
    /// Wake every waiter of the condition.
    Broad(usize),
    /// Wait on the condition, releasing the mutex (if any) meanwhile.
    Wait(usize, Option<SyncId>),
    /// The rest of a `mem` event: this many bytes more, written from where the last piece
    /// ended (one piece, up to the buffer's end, at a time: a write many times the buffer's
    /// size keeps one step queued, not one per pass).
    Write(u64),
    /// Sleep until the next expiry of the thread's timer number `timer`.
    Timer {
        timer: usize,
        period: Cycles,
        absolute: bool,
    },
}

/// One thread of an rt-app task.
pub struct RtAppThread {
    shared: Rc<RefCell<Shared>>,
    code: Rc<Code>,
    task: usize,
    /// Its buffer, if the task writes memory.
    buffer: Option<u64>,
    /// Loops of the phases left (`None`: forever, until the duration).
    loops_left: Option<u64>,
    phase: usize,
    phase_loop: u64,
    event: usize,
    micro: VecDeque<Micro>,
    /// The expiry of the timer the thread sleeps until, whose wake-up latency is recorded
    /// first when it is back (held apart from `micro`: a periodic thread passes every period).
    woke: Option<Cycles>,
    /// Each timer's last expiry (none before its first use), by the task's timer number.
    timers: Vec<Option<Cycles>>,
    /// The reference of the thread's timers before their first use: the application's start
    /// plus the task's delay (rt-app's `t_first`), known from the thread's first call.
    first: Option<Cycles>,
    /// Where the next `mem` write starts in the buffer.
    written: u64,
    /// Set when a call went through [`STUCK_STEPS`] events without an operation: from then on
    /// the thread asks for nothing but zero-cycle computes, which the engine's bound on
    /// operations at one instant turns into a "made no progress" error.
    stuck: bool,
}

/// The most events one call of `next` goes through without an operation for the engine (a
/// signal with no waiter, a timer already expired) before the thread is taken as stuck: a
/// loop of such events alone would otherwise never return. The file checks refuse a task of
/// them that loops until the duration; this catches what they cannot see (a long finite
/// loop, events whose waiters never come).
const STUCK_STEPS: u32 = 1 << 20;

/// Queues the requests that set `attrs` (a mask, a base priority).
fn push_attrs(micro: &mut VecDeque<Micro>, attrs: &Attrs) {
    if let Some(cpus) = &attrs.cpus {
        let mask = CpuMask::of(cpus.iter().map(|&c| ProcId(c)));
        micro.push_back(Micro::Op(Op::Kernel(Request::SetMask(mask))));
    }
    if let Some(p) = attrs.priority {
        micro.push_back(Micro::Op(Op::Kernel(Request::SetBasePriority(p))));
    }
}

impl RtAppThread {
    /// A thread of task `task`, started by the workload (`attrs_applied`: its mask and priority
    /// were set at creation) or by a fork (they are requested first).
    pub(super) fn new(
        shared: Rc<RefCell<Shared>>,
        code: Rc<Code>,
        task: usize,
        attrs_applied: bool,
    ) -> Self {
        let buffer = {
            let mut s = shared.borrow_mut();
            let n = s.started[task];
            s.started[task] += 1;
            s.buffers[task]
                .get((n as usize) % s.buffers[task].len().max(1))
                .copied()
        };
        let t = &code.tasks[task];
        let mut micro = VecDeque::new();
        if let Some(c) = t.delay {
            micro.push_back(Micro::Op(Op::Sleep(c)));
        }
        if !attrs_applied {
            push_attrs(&mut micro, &t.attrs);
        }
        RtAppThread {
            loops_left: t.loops,
            timers: vec![None; t.timers],
            first: None,
            shared,
            code,
            task,
            buffer,
            phase: 0,
            phase_loop: 0,
            event: 0,
            micro,
            woke: None,
            written: 0,
            stuck: false,
        }
    }

    /// The next event's step, the thread moved past it (to the next event, phase loop, phase,
    /// or loop of the phases) and the attributes of a phase that starts queued.
    fn take_step(&mut self) -> Step {
        let phases = &self.code.tasks[self.task].phases;
        // Phases with no event (attributes only) are passed over.
        while phases[self.phase].steps.is_empty() {
            self.phase = (self.phase + 1) % phases.len();
        }
        let phase = &phases[self.phase];
        if self.event == 0 && self.phase_loop == 0 {
            push_attrs(&mut self.micro, &phase.attrs);
        }
        let step = phase.steps[self.event];
        self.move_on();
        step
    }

    /// The operation of `step` when it is one operation and nothing is queued before it, to go
    /// to the engine at once; otherwise its steps, and its operation after whatever is queued,
    /// are queued.
    fn advance(&mut self, step: Step) -> Option<Op> {
        match self.queue(step) {
            Some(op) if !self.micro.is_empty() => {
                self.micro.push_back(Micro::Op(op));
                None
            }
            op => op,
        }
    }

    /// Moves past the event just taken: to the next event, phase loop, phase, or loop of the
    /// phases.
    fn move_on(&mut self) {
        let phases: &[CodePhase] = &self.code.tasks[self.task].phases;
        self.event += 1;
        if self.event < phases[self.phase].steps.len() {
            return;
        }
        self.event = 0;
        self.phase_loop += 1;
        if self.phase_loop < phases[self.phase].loops {
            return;
        }
        self.phase_loop = 0;
        self.phase += 1;
        if self.phase == phases.len() {
            self.phase = 0;
            if let Some(n) = self.loops_left.as_mut() {
                *n -= 1;
            }
        }
    }

    /// The operation of `step` when it is one operation; else its steps are queued.
    /// (Returned rather than queued, the operation is not written through a temporary whose
    /// one-byte tag the queue's copy reads back in eight, a load the store buffer cannot
    /// forward: `perf` put a sixth of this program's samples after that copy.)
    fn queue(&mut self, step: Step) -> Option<Op> {
        let micro = match step {
            Step::Compute(c) => return Some(Op::Compute(c)),
            Step::Sleep(c) => return Some(Op::Sleep(c)),
            Step::Lock(m) | Step::Barrier(m) => return Some(Op::Wait(m)),
            Step::Unlock(m) => return Some(Op::Signal(m)),
            Step::Yield => return Some(Op::Yield),
            Step::Fork(task) => {
                let (shared, code) = (Rc::clone(&self.shared), Rc::clone(&self.code));
                return Some(Op::Spawn(Spawner::new(move || {
                    Box::new(RtAppThread::new(
                        Rc::clone(&shared),
                        Rc::clone(&code),
                        task,
                        false,
                    ))
                })));
            }
            Step::Timer {
                timer,
                period,
                absolute,
            } => Micro::Timer {
                timer,
                period,
                absolute,
            },
            Step::Wait { cond, mutex } => Micro::Wait(cond, Some(mutex)),
            Step::Signal(c) => Micro::Signal(c),
            Step::Broad(c) | Step::Resume(c) => Micro::Broad(c),
            Step::Suspend(c) => Micro::Wait(c, None),
            Step::Sync { cond, mutex, held } => {
                if !held {
                    self.micro.push_back(Micro::Op(Op::Wait(mutex)));
                }
                self.micro.push_back(Micro::Signal(cond));
                if held {
                    Micro::Wait(cond, Some(mutex))
                } else {
                    self.micro.push_back(Micro::Wait(cond, Some(mutex)));
                    Micro::Op(Op::Signal(mutex))
                }
            }
            Step::Mem(bytes) => {
                self.write(bytes);
                return None;
            }
        };
        self.micro.push_back(micro);
        None
    }

    /// Writes `bytes` into the buffer with 8-byte stores, going round it: queues the write,
    /// whose pieces [`Self::write_piece`] makes as they are reached.
    fn write(&mut self, bytes: u64) {
        if self.buffer.is_some() && bytes > 0 {
            self.micro.push_back(Micro::Write(bytes));
        }
    }

    /// The next piece of a write of `left` bytes (up to the buffer's end), the rest queued
    /// first.
    fn write_piece(&mut self, left: u64) -> Option<Op> {
        let (Some(base), size) = (self.buffer, self.code.mem_buffer) else {
            return None;
        };
        let len = left.min(size - self.written);
        let piece = BulkAccess::new(base + self.written, len, 8, AccessKind::Write, 1);
        self.written = (self.written + len) % size;
        if left > len {
            self.micro.push_front(Micro::Write(left - len));
        }
        Some(Op::Mem(piece))
    }

    /// One queued step at `now`: the operation it gives, or `None` when it gives none (a signal
    /// with no waiter, a broadcast, a timer already expired).
    fn micro_step(&mut self, step: Micro, now: Cycles) -> Option<Op> {
        match step {
            Micro::Op(op) => return Some(op),
            Micro::Write(left) => return self.write_piece(left),
            Micro::Signal(c) => {
                let mut s = self.shared.borrow_mut();
                let (id, waiters) = &mut s.conds[c];
                if *waiters > 0 {
                    *waiters -= 1;
                    return Some(Op::Signal(*id));
                }
            }
            Micro::Broad(c) => {
                let mut s = self.shared.borrow_mut();
                let (id, waiters) = &mut s.conds[c];
                for _ in 0..*waiters {
                    self.micro.push_front(Micro::Op(Op::Signal(*id)));
                }
                *waiters = 0;
            }
            Micro::Wait(c, mutex) => {
                let mut s = self.shared.borrow_mut();
                let (id, waiters) = &mut s.conds[c];
                *waiters += 1;
                let id = *id;
                if let Some(lock) = mutex {
                    // Release the mutex, wait, take it again: pthread_cond_wait.
                    self.micro.push_front(Micro::Op(Op::Wait(lock)));
                    self.micro.push_front(Micro::Op(Op::Wait(id)));
                    return Some(Op::Signal(lock));
                }
                return Some(Op::Wait(id));
            }
            Micro::Timer {
                timer,
                period,
                absolute,
            } => return self.timer(timer, period, absolute, now).map(Op::Sleep),
        }
        None
    }

    /// The thread's timer number `timer` reached at `now`: the cycles to sleep until its next
    /// expiry (whose latency is recorded on waking), or `None` when that expiry has passed.
    fn timer(
        &mut self,
        timer: usize,
        period: Cycles,
        absolute: bool,
        now: Cycles,
    ) -> Option<Cycles> {
        // Before its first use a timer counts from the thread's start (rt-app's `t_first`: the
        // application's start plus the task's delay), not from that use.
        let first = self.first.unwrap_or(now);
        let last = *self.timers[timer].get_or_insert(first);
        let target = last.saturating_add(period);
        if target > now {
            self.timers[timer] = Some(target);
            self.woke = Some(target);
            return Some(target - now);
        }
        // Missed: an absolute timer keeps its reference, a relative one restarts from now.
        self.timers[timer] = Some(if absolute { target } else { now });
        None
    }

    /// The record of the wake-up latency of the timer that expired at `target`.
    fn woke(&self, target: Cycles, now: Cycles) -> Op {
        Op::Record {
            name: "wu_lat_us",
            value: now.saturating_sub(target) as f64 / self.code.cycles_per_us,
        }
    }
}

impl Program for RtAppThread {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(target) = self.woke.take() {
            return self.woke(target, cx.now);
        }
        if self.first.is_none() {
            let zero = *self.shared.borrow_mut().zero.get_or_insert(cx.now);
            let delay = self.code.tasks[self.task].delay.unwrap_or(0);
            self.first = Some(zero.saturating_add(delay));
        }
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > STUCK_STEPS || self.stuck {
                self.stuck = true;
                return Op::Compute(0);
            }
            if let Some(step) = self.micro.pop_front() {
                if let Some(op) = self.micro_step(step, cx.now) {
                    return op;
                }
                continue;
            }
            // The file's duration ends the run itself (Simulation::end_at).
            if self.loops_left == Some(0) {
                return Op::Exit;
            }
            let step = self.take_step();
            if self.micro.is_empty() {
                // A periodic thread's events, each made where it is returned (an operation
                // passed back through an `Option` is copied by parts, some of which the store
                // buffer cannot forward: `perf` put a third of this program's samples there).
                match step {
                    Step::Compute(c) => return Op::Compute(c),
                    Step::Sleep(c) => return Op::Sleep(c),
                    Step::Timer {
                        timer,
                        period,
                        absolute,
                    } => match self.timer(timer, period, absolute, cx.now) {
                        Some(c) => return Op::Sleep(c),
                        None => continue,
                    },
                    _ => {}
                }
            }
            if let Some(op) = self.advance(step) {
                return op;
            }
        }
    }
}
