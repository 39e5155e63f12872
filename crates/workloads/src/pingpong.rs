//! Pingpong: Black 1990 section 5.1's synchronization test. A shared variable names one thread;
//! that thread replaces it with another randomly chosen thread's number, and so on. The others
//! wait for their turn using a scheduling hint (none, mild, strong, handoff), all on one
//! processor so that the named thread is never running when it is named (Table 2). Without a
//! hint a waiting thread busy-waits on a semaphore of its own, which the thread naming it
//! signals: its cycles are spin time, preemptible at the end of its quantum.

use std::cell::Cell;
use std::rc::Rc;

use rand::Rng;
use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::sync::{SyncId, SyncKind, WaitPolicy};
use smpsched_sim::{Cycles, Hint, Op, Program, SimError, Simulation, TaskId, ThreadCtx, ThreadId};

use crate::{Workload, WorkloadInfo};

/// How a thread that is not named waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitHint {
    /// Busy-wait: re-read the variable until named or until the quantum ends (spin time).
    None,
    /// Mild discouragement (yield to any other thread).
    Mild,
    /// Strong discouragement (yield and depress priority until cancelled or timed out).
    Strong,
    /// Hand off the processor to the named thread.
    Handoff,
}

/// Parameters of `pingpong`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pingpong {
    /// Threads taking part (Black: 3 to 7).
    pub threads: u32,
    /// Synchronizations to perform in all.
    pub syncs: u64,
    /// How waiting threads wait.
    pub hint: WaitHint,
    /// Cycles to read and test the shared variable once.
    #[serde(default = "default_check")]
    pub check_cycles: Cycles,
    /// Cycles the named thread works before naming the next.
    #[serde(default = "default_work")]
    pub work_cycles: Cycles,
    /// Depression timeout of strong discouragement, in cycles.
    #[serde(default = "default_timeout")]
    pub strong_timeout: Cycles,
    /// Thread i first computes i x `skew_cycles` alone, so that usage-based priorities differ
    /// (Black's "Mild-bad" case); 0 keeps priorities equal.
    #[serde(default)]
    pub skew_cycles: Cycles,
}

fn default_check() -> Cycles {
    50
}
fn default_work() -> Cycles {
    100
}
fn default_timeout() -> Cycles {
    20_000
}

struct Shared {
    named: Cell<u32>,
    left: Cell<u64>,
    all: std::cell::RefCell<Vec<ThreadId>>,
}

struct Player {
    me: u32,
    threads: u32,
    hint: WaitHint,
    check: Cycles,
    work: Cycles,
    timeout: Cycles,
    skew: Cycles,
    checked: bool,
    depressed: bool,
    shared: Rc<Shared>,
    /// Without a hint: each thread's semaphore, signalled when it is named.
    turns: Rc<Vec<SyncId>>,
    /// Without a hint: the work to do after signalling the thread named.
    pending: Option<Op>,
    /// Without a hint: this thread took the last turn, so it wakes every other to exit.
    closing: bool,
    /// Without a hint, closing: the next thread to wake.
    woken: u32,
}

impl Player {
    /// Takes this thread's turn: counts the synchronization and names a random other thread.
    fn name_next(&mut self, cx: &mut ThreadCtx<'_>) -> u32 {
        self.shared.left.set(self.shared.left.get() - 1);
        let mut next = cx.rng.random_range(0..self.threads - 1);
        if next >= self.me {
            next += 1;
        }
        self.shared.named.set(next);
        next
    }

    /// The next operation without a hint: busy-wait on this thread's semaphore until named,
    /// signal the next thread's, work; the last turn's thread wakes the others to exit.
    fn next_spinning(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(op) = self.pending.take() {
            return op;
        }
        if self.shared.left.get() == 0 {
            while self.closing && self.woken < self.threads {
                let t = self.woken;
                self.woken += 1;
                if t != self.me {
                    return Op::Signal(self.turns[t as usize]);
                }
            }
            return Op::Exit;
        }
        if !self.checked {
            self.checked = true;
            return Op::Wait(self.turns[self.me as usize]);
        }
        self.checked = false;
        let next = self.name_next(cx);
        if self.shared.left.get() == 0 {
            self.closing = true;
            return Op::Compute(self.work);
        }
        self.pending = Some(Op::Compute(self.work));
        Op::Signal(self.turns[next as usize])
    }
}

impl Program for Player {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.skew > 0 {
            return Op::Compute(std::mem::take(&mut self.skew));
        }
        if self.hint == WaitHint::None {
            return self.next_spinning(cx);
        }
        if self.shared.left.get() == 0 {
            return Op::Exit;
        }
        if !self.checked {
            self.checked = true;
            return Op::Compute(self.check);
        }
        self.checked = false;
        let named = self.shared.named.get();
        if named == self.me {
            if self.depressed {
                self.depressed = false;
                return Op::Hint(Hint::Cancel);
            }
            self.name_next(cx);
            return Op::Compute(self.work);
        }
        match self.hint {
            WaitHint::None => unreachable!("a thread without a hint waits on its semaphore"),
            WaitHint::Mild => Op::Hint(Hint::Mild),
            WaitHint::Strong => {
                self.depressed = true;
                Op::Hint(Hint::Strong {
                    timeout: self.timeout,
                })
            }
            WaitHint::Handoff => Op::Hint(Hint::Handoff(self.shared.all.borrow()[named as usize])),
        }
    }
}

impl Workload for Pingpong {
    fn threads(&self) -> u64 {
        self.threads as u64
    }

    fn operations(&self) -> Option<u64> {
        Some(self.syncs)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let shared = Rc::new(Shared {
            named: Cell::new(0),
            left: Cell::new(self.syncs),
            all: Default::default(),
        });
        let turns: Rc<Vec<SyncId>> = Rc::new(if self.hint == WaitHint::None {
            (0..self.threads)
                .map(|t| {
                    let count = u64::from(t == 0);
                    sim.create_sync(SyncKind::Semaphore { count }, WaitPolicy::SPIN)
                })
                .collect()
        } else {
            Vec::new()
        });
        for me in 0..self.threads {
            let t = sim.spawn(
                task,
                Box::new(Player {
                    me,
                    threads: self.threads,
                    hint: self.hint,
                    check: self.check_cycles,
                    work: self.work_cycles,
                    timeout: self.strong_timeout,
                    skew: me as Cycles * self.skew_cycles,
                    checked: false,
                    depressed: false,
                    shared: shared.clone(),
                    turns: turns.clone(),
                    pending: None,
                    closing: false,
                    woken: 0,
                }),
            )?;
            shared.all.borrow_mut().push(t);
        }
        Ok(())
    }
}

/// Registry entry of `pingpong`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "pingpong",
    summary: "threads passing a turn to a random other thread, waiting with a hint",
    description: "A shared variable names one of `threads` threads; the named thread works \
                  `work_cycles`, then names a random other thread. The others re-check the \
                  variable (`check_cycles`) and wait using `hint`: none (busy-wait until named \
                  or the quantum ends, booked as spin time), mild, strong (depression with `strong_timeout`) or handoff to \
                  the named thread. Run on one processor; report time per synchronization.",
    paper: "Black 1990 section 5.1, Table 2",
    params: &[
        ParamInfo {
            name: "threads",
            default: "(required)",
            doc: "threads taking part, at least 2",
        },
        ParamInfo {
            name: "syncs",
            default: "(required)",
            doc: "synchronizations in all",
        },
        ParamInfo {
            name: "hint",
            default: "(required)",
            doc: "none | mild | strong | handoff",
        },
        ParamInfo {
            name: "check_cycles",
            default: "50",
            doc: "cycles to read and test the variable",
        },
        ParamInfo {
            name: "work_cycles",
            default: "100",
            doc: "cycles the named thread works",
        },
        ParamInfo {
            name: "strong_timeout",
            default: "20000",
            doc: "depression timeout of strong discouragement, cycles",
        },
        ParamInfo {
            name: "skew_cycles",
            default: "0",
            doc: "thread i first computes i x skew alone, so priorities differ",
        },
    ],
    build: |t| {
        let w: Pingpong = toml::Value::Table(t).try_into()?;
        if !(2..=10_000).contains(&w.threads) {
            return Err(serde::de::Error::custom(format!(
                "threads: must be between 2 and 10000, got {}",
                w.threads
            )));
        }
        if w.syncs == 0 || w.syncs > 1_000_000_000 {
            return Err(serde::de::Error::custom(format!(
                "syncs: must be between 1 and 1e9, got {}",
                w.syncs
            )));
        }
        if w.check_cycles == 0 {
            return Err(serde::de::Error::custom("check_cycles: must be at least 1"));
        }
        Ok(Box::new(w))
    },
};

#[cfg(test)]
mod tests {
    use smpsched_sim::sched::policy;
    use smpsched_sim::{Limits, MachineConfig, RunReport, Simulation};

    fn run(hint: &str, threads: u32, syncs: u64) -> RunReport {
        let params = format!("threads = {threads}\nsyncs = {syncs}\nhint = \"{hint}\"\n");
        let w = (super::INFO.build)(toml::from_str(&params).unwrap()).unwrap();
        let sched = policy("round-robin")
            .unwrap()
            .make(&toml::Table::new())
            .unwrap();
        let mut machine = MachineConfig::multimax();
        machine.processors = 1;
        let mut sim = Simulation::new(machine, sched, 1).unwrap();
        let task = sim.add_task("pingpong");
        w.install(&mut sim, task).unwrap();
        sim.set_limits(Limits {
            events: 1_000_000,
            ..Limits::NONE
        });
        let report = sim.run().unwrap();
        report.check_conservation().unwrap();
        report
    }

    #[test]
    fn waiting_without_a_hint_is_spin_time_and_every_thread_exits() {
        let none = run("none", 3, 20);
        assert!(
            !none.apps[0].unfinished,
            "the run ends with every thread exited"
        );
        // Twenty turns of 100 cycles of work and a check: everything else the waiting threads
        // burn (about a quantum per turn) is spin, not useful work.
        assert!(none.total.useful < 20 * 200, "useful {}", none.total.useful);
        assert!(
            none.total.spin > 20 * none.total.useful,
            "spin {} useful {}",
            none.total.spin,
            none.total.useful
        );
        let mild = run("mild", 3, 20);
        assert_eq!(mild.total.spin, 0, "a yielding thread does not spin");
        assert!(!mild.apps[0].unfinished);
    }
}
