//! An rt-app thread as a simulated program: its phases' events turned into operations, one at a
//! time. Mutexes are the simulator's locks; a condition (`wait`, `signal`, `broad`, `sync`,
//! `suspend`, `resume`) is a semaphore with a count of its waiters kept in the threads' shared
//! state, so that a signal with no waiter is lost as with `pthread_cond_signal`; barriers are
//! the simulator's reusable barriers; `fork` spawns a thread of the named task; `mem` and
//! `iorun` write the thread's buffer through the memory model.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use smpsched_sim::memory::{AccessKind, BulkAccess};
use smpsched_sim::{CpuMask, Cycles, Op, ProcId, Program, Request, Spawner, SyncId, ThreadCtx};

use super::spec::{Attrs, Event, Phase, Spec};

/// What the threads of one rt-app file share.
pub struct Shared {
    /// The file.
    pub spec: Spec,
    /// Cycles per microsecond of the machine.
    pub cycles_per_us: f64,
    /// Each mutex's lock.
    pub mutexes: BTreeMap<String, SyncId>,
    /// Each condition's semaphore and its count of waiters.
    pub conds: BTreeMap<String, (SyncId, u64)>,
    /// Each barrier.
    pub barriers: BTreeMap<String, SyncId>,
    /// Each task's memory buffers (base addresses), used round robin by its threads.
    pub buffers: Vec<Vec<u64>>,
    /// Threads started so far per task (to pick a buffer).
    pub started: Vec<u64>,
    /// Each task's index in the file, by name (what a fork names).
    pub task_index: BTreeMap<String, usize>,
}

/// The condition a task's suspended threads wait on.
pub fn suspend_cond(task: &str) -> String {
    format!("suspend:{task}")
}

/// A step of an event, decided when it is reached (a signal wakes whoever waits by then).
#[derive(Debug)]
enum Micro {
    Op(Op),
    /// Wake the first waiter of the condition, if any.
    Signal(String),
    /// Wake every waiter of the condition.
    Broad(String),
    /// Wait on the condition, releasing `mutex` (if any) meanwhile.
    Wait(String, Option<String>),
    /// Sleep until the next expiry of the thread's timer number `timer`.
    Timer {
        timer: usize,
        period: f64,
        absolute: bool,
    },
    /// Record the wake-up latency of a timer that expired at this cycle.
    Woke(Cycles),
}

/// One thread of an rt-app task.
pub struct RtAppThread {
    shared: Rc<RefCell<Shared>>,
    task: usize,
    /// Its buffer, if the task writes memory.
    buffer: Option<u64>,
    /// Loops of the phases left (`None`: forever, until the duration).
    loops_left: Option<u64>,
    phase: usize,
    phase_loop: u64,
    event: usize,
    micro: VecDeque<Micro>,
    /// Each timer's name and last expiry (none before its first use), in order of first use:
    /// a task has few timers, so a name is found by a short scan, with no allocation.
    timers: Vec<(String, Option<Cycles>)>,
    /// Where the next `mem` write starts in the buffer.
    written: u64,
}

impl RtAppThread {
    /// A thread of task `task`, started by the workload (`attrs_applied`: its mask and priority
    /// were set at creation) or by a fork (they are requested first).
    pub fn new(shared: Rc<RefCell<Shared>>, task: usize, attrs_applied: bool) -> Self {
        let (buffer, loops, delay, attrs) = {
            let mut s = shared.borrow_mut();
            let n = s.started[task];
            s.started[task] += 1;
            let buffer = s.buffers[task]
                .get((n as usize) % s.buffers[task].len().max(1))
                .copied();
            let t = &s.spec.tasks[task];
            (buffer, t.loops, t.delay, t.attrs.clone())
        };
        let mut me = RtAppThread {
            shared,
            task,
            buffer,
            loops_left: loops,
            phase: 0,
            phase_loop: 0,
            event: 0,
            micro: VecDeque::new(),
            timers: Vec::new(),
            written: 0,
        };
        if delay > 0.0 {
            let c = me.cycles(delay);
            me.micro.push_back(Micro::Op(Op::Sleep(c)));
        }
        if !attrs_applied {
            me.push_attrs(&attrs);
        }
        me
    }

    fn cycles(&self, us: f64) -> Cycles {
        (us * self.shared.borrow().cycles_per_us).round() as Cycles
    }

    fn push_attrs(&mut self, attrs: &Attrs) {
        if let Some(cpus) = &attrs.cpus {
            let mask = CpuMask::of(cpus.iter().map(|&c| ProcId(c)));
            self.micro
                .push_back(Micro::Op(Op::Kernel(Request::SetMask(mask))));
        }
        if let Some(p) = attrs.priority {
            self.micro
                .push_back(Micro::Op(Op::Kernel(Request::SetBasePriority(p))));
        }
    }

    /// Takes the next event's steps (and the attributes of a phase that starts), then moves to
    /// the next event, phase loop, phase, or loop of the phases. An event of one operation
    /// (a run, a sleep, a lock...) is returned, to go to the engine at once; the steps of any
    /// other, and the operation of one that follows a phase's attributes, are queued.
    fn advance(&mut self) -> Option<Op> {
        // The file's events are read in place (`queue` only reads the shared state), so an
        // event is not copied, names and all, at every step.
        let shared = Rc::clone(&self.shared);
        let s = shared.borrow();
        let phases = &s.spec.tasks[self.task].phases;
        // Phases with no event (attributes only) are passed over.
        while phases[self.phase].events.is_empty() {
            self.phase = (self.phase + 1) % phases.len();
        }
        let phase = &phases[self.phase];
        if self.event == 0 && self.phase_loop == 0 {
            self.push_attrs(&phase.attrs);
        }
        let op = self.queue(&phase.events[self.event]);
        self.move_on(phases);
        match op {
            Some(op) if !self.micro.is_empty() => {
                self.micro.push_back(Micro::Op(op));
                None
            }
            op => op,
        }
    }

    /// Moves past the event just taken: to the next event, phase loop, phase, or loop of the
    /// phases.
    fn move_on(&mut self, phases: &[Phase]) {
        self.event += 1;
        if self.event < phases[self.phase].events.len() {
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

    /// The thread's number for the timer `name`, given at its first use.
    fn timer(&mut self, name: &str) -> usize {
        match self.timers.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.timers.push((name.to_string(), None));
                self.timers.len() - 1
            }
        }
    }

    /// The operation of event `event` when it is one operation; else its steps are queued.
    /// (Returned rather than queued, the operation is not written through a temporary whose
    /// one-byte tag the queue's copy reads back in eight, a load the store buffer cannot
    /// forward: `perf` put a sixth of this program's samples after that copy.)
    fn queue(&mut self, event: &Event) -> Option<Op> {
        let ns_per_loop = self.shared.borrow().spec.ns_per_loop;
        let op = match event {
            Event::Run(us) => {
                // rt-app runs floor(t * 1000 / ns) loops of the calibrated workload.
                let us = ns_per_loop.map_or(*us, |ns| (us * 1000.0 / ns).floor() * ns / 1000.0);
                Op::Compute(self.cycles(us))
            }
            Event::Runtime(us) => Op::Compute(self.cycles(*us)),
            Event::Sleep(us) => Op::Sleep(self.cycles(*us)),
            Event::Timer {
                name,
                period,
                absolute,
            } => {
                let timer = self.timer(name);
                self.micro.push_back(Micro::Timer {
                    timer,
                    period: *period,
                    absolute: *absolute,
                });
                return None;
            }
            Event::Lock(x) => Op::Wait(self.shared.borrow().mutexes[x]),
            Event::Unlock(x) => Op::Signal(self.shared.borrow().mutexes[x]),
            Event::Wait { cond, mutex } => {
                self.micro
                    .push_back(Micro::Wait(cond.clone(), Some(mutex.clone())));
                return None;
            }
            Event::Signal(c) => {
                self.micro.push_back(Micro::Signal(c.clone()));
                return None;
            }
            Event::Broad(c) => {
                self.micro.push_back(Micro::Broad(c.clone()));
                return None;
            }
            Event::Sync { cond, mutex } => {
                let id = self.shared.borrow().mutexes[mutex];
                self.micro.push_back(Micro::Op(Op::Wait(id)));
                self.micro.push_back(Micro::Signal(cond.clone()));
                self.micro
                    .push_back(Micro::Wait(cond.clone(), Some(mutex.clone())));
                self.micro.push_back(Micro::Op(Op::Signal(id)));
                return None;
            }
            Event::Barrier(b) => Op::Wait(self.shared.borrow().barriers[b]),
            Event::Suspend(t) => {
                self.micro.push_back(Micro::Wait(suspend_cond(t), None));
                return None;
            }
            Event::Resume(t) => {
                self.micro.push_back(Micro::Broad(suspend_cond(t)));
                return None;
            }
            Event::Yield => Op::Yield,
            Event::Fork(name) => {
                let shared = Rc::clone(&self.shared);
                let task = *shared
                    .borrow()
                    .task_index
                    .get(name)
                    .expect("forks are checked when the file is read");
                Op::Spawn(Spawner::new(move || {
                    Box::new(RtAppThread::new(Rc::clone(&shared), task, false))
                }))
            }
            Event::Mem(bytes) | Event::IoRun(bytes) => {
                self.write(*bytes);
                return None;
            }
        };
        Some(op)
    }

    /// Writes `bytes` into the buffer with 8-byte stores, going round it.
    fn write(&mut self, bytes: u64) {
        let (Some(base), size) = (self.buffer, self.shared.borrow().spec.mem_buffer) else {
            return;
        };
        let mut left = bytes;
        while left > 0 {
            let len = left.min(size - self.written);
            self.micro.push_back(Micro::Op(Op::Mem(BulkAccess::new(
                base + self.written,
                len,
                8,
                AccessKind::Write,
                1,
            ))));
            left -= len;
            self.written = (self.written + len) % size;
        }
    }
}

impl Program for RtAppThread {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            if let Some(step) = self.micro.pop_front() {
                match step {
                    Micro::Op(op) => return op,
                    Micro::Signal(c) => {
                        let mut s = self.shared.borrow_mut();
                        let (id, waiters) = s.conds.get_mut(&c).expect("conditions are made");
                        if *waiters > 0 {
                            *waiters -= 1;
                            return Op::Signal(*id);
                        }
                    }
                    Micro::Broad(c) => {
                        let mut s = self.shared.borrow_mut();
                        let (id, waiters) = s.conds.get_mut(&c).expect("conditions are made");
                        for _ in 0..*waiters {
                            self.micro.push_front(Micro::Op(Op::Signal(*id)));
                        }
                        *waiters = 0;
                    }
                    Micro::Wait(c, mutex) => {
                        let mut s = self.shared.borrow_mut();
                        let (id, waiters) = s.conds.get_mut(&c).expect("conditions are made");
                        *waiters += 1;
                        let id = *id;
                        if let Some(m) = mutex {
                            let lock = s.mutexes[&m];
                            // Release the mutex, wait, take it again: pthread_cond_wait.
                            self.micro.push_front(Micro::Op(Op::Wait(lock)));
                            self.micro.push_front(Micro::Op(Op::Wait(id)));
                            return Op::Signal(lock);
                        }
                        return Op::Wait(id);
                    }
                    Micro::Timer {
                        timer,
                        period,
                        absolute,
                    } => {
                        let p = self.cycles(period);
                        let last = *self.timers[timer].1.get_or_insert(cx.now);
                        let target = last.saturating_add(p);
                        if target > cx.now {
                            self.timers[timer].1 = Some(target);
                            self.micro.push_front(Micro::Woke(target));
                            return Op::Sleep(target - cx.now);
                        }
                        // Missed: an absolute timer keeps its reference, a relative one
                        // restarts from now.
                        self.timers[timer].1 = Some(if absolute { target } else { cx.now });
                    }
                    Micro::Woke(target) => {
                        let cpu = self.shared.borrow().cycles_per_us;
                        return Op::Record {
                            name: "wu_lat_us",
                            value: cx.now.saturating_sub(target) as f64 / cpu,
                        };
                    }
                }
                continue;
            }
            // The file's duration ends the run itself (Simulation::end_at).
            if self.loops_left == Some(0) {
                return Op::Exit;
            }
            if let Some(op) = self.advance() {
                return op;
            }
        }
    }
}
