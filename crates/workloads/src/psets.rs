//! Processor-set operations timed (Black 1990, section 6, Table 4): a thread creates a processor
//! set, assigns a processor to it, assigns itself and another thread to it, then puts
//! everything back in the default set, `rounds` times, and records the time each operation
//! took in microseconds (`create_set_us`, `assign_processor_us`, `assign_self_us`,
//! `assign_other_us`: measures `recorded_mean:APP:NAME`). The costs come from the scheduling
//! policy's kernel requests (Mach's charge Table 4's figures), so this measures what the
//! kernel charges, dispatch and switches included.

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Cycles, Op, Outcome, ProcId, ProcessorSetCall, Program, Reply, Request, SimError, Simulation,
    TaskId, ThreadCtx, ThreadId,
};

use crate::{Workload, WorkloadInfo};

/// Parameters of `psets`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Psets {
    /// Rounds of the four operations.
    pub rounds: u64,
}

impl Workload for Psets {
    fn threads(&self) -> u64 {
        2
    }

    fn threads_field(&self) -> Option<&'static str> {
        None
    }

    fn operations(&self) -> Option<u64> {
        Some(self.rounds)
    }

    fn needs(&self) -> crate::Needs {
        // One processor goes into the new set while the default set keeps another.
        crate::Needs {
            processors: 2,
            set_processors: 1,
            processor_sets: true,
        }
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        // The other thread idles in long sleeps until the measurer is done.
        let other = sim.spawn(
            task,
            Box::new(Sleeper {
                left: self.rounds * 4 + 8,
            }),
        )?;
        let us_per_cycle = 1.0 / sim.machine().clock_mhz;
        let processor = sim.reserve_processors(1)?;
        sim.spawn(
            task,
            Box::new(Measurer {
                processor,
                rounds: self.rounds,
                step: 0,
                set: 0,
                started: 0,
                other,
                us_per_cycle,
            }),
        )?;
        Ok(())
    }
}

/// Sleeps in long stretches (a thread for the measurer to assign).
struct Sleeper {
    left: u64,
}

impl Program for Sleeper {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        Op::Sleep(1_000_000)
    }
}

/// The timed operations, in order, with the measure each records.
const STEPS: [&str; 4] = [
    "create_set_us",
    "assign_processor_us",
    "assign_self_us",
    "assign_other_us",
];

struct Measurer {
    /// The processor its sets take (reserved for it, [`Simulation::reserve_processors`]).
    processor: ProcId,
    rounds: u64,
    /// Step within a round: 0-3 the timed operations, 4-6 putting things back.
    step: usize,
    set: u32,
    started: Cycles,
    other: ThreadId,
    us_per_cycle: f64,
}

impl Program for Measurer {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        let outcome = cx.take_outcome();
        // Record the operation that just completed.
        if let Some(Outcome::Kernel(reply)) = &outcome {
            if self.step >= 1 && self.step <= STEPS.len() {
                if let Reply::ProcessorSet(s) = reply {
                    self.set = *s;
                }
                if !matches!(reply, Reply::Refused(_)) {
                    let us = (cx.now - self.started) as f64 * self.us_per_cycle;
                    return self.record(STEPS[self.step - 1], us);
                }
            }
        }
        self.issue(cx.now)
    }
}

impl Measurer {
    /// Records `value` under `name`, then goes on with the next request at the next call.
    fn record(&mut self, name: &'static str, value: f64) -> Op {
        // Mark the step recorded so the next call issues rather than records again.
        self.step += 10;
        Op::Record { name, value }
    }

    fn issue(&mut self, now: Cycles) -> Op {
        if self.step >= 10 {
            self.step -= 10;
        }
        if self.rounds == 0 {
            return Op::Exit;
        }
        self.started = now;
        let set = self.set;
        let req = match self.step {
            0 => Request::ProcessorSet(ProcessorSetCall::Create),
            1 => Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                set,
                processor: self.processor,
            }),
            2 => Request::ProcessorSet(ProcessorSetCall::AssignThread { set, thread: None }),
            3 => Request::ProcessorSet(ProcessorSetCall::AssignThread {
                set,
                thread: Some(self.other),
            }),
            // Back to the default set: the threads first, so that neither is left in a set
            // without processors.
            4 => Request::ProcessorSet(ProcessorSetCall::AssignThread {
                set: 0,
                thread: None,
            }),
            5 => Request::ProcessorSet(ProcessorSetCall::AssignThread {
                set: 0,
                thread: Some(self.other),
            }),
            _ => Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                set: 0,
                processor: self.processor,
            }),
        };
        self.step += 1;
        if self.step == 7 {
            self.step = 0;
            self.rounds -= 1;
        }
        Op::Kernel(req)
    }
}

/// Registry entry of `psets`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "psets",
    summary: "times processor-set creation and assignment requests (Black's Table 4)",
    description: "One thread creates a processor set, assigns a processor to it (processor 1, or the next no other application took for a set), assigns itself \
                  and a second thread to it, then returns them all to the default set, `rounds` \
                  times. It records each operation's time in microseconds as create_set_us, \
                  assign_processor_us, assign_self_us and assign_other_us. Needs a policy with \
                  processor sets (mach) and at least 2 processors.",
    paper: "Black 1990 section 6, Table 4",
    params: &[ParamInfo {
        name: "rounds",
        default: "(required)",
        doc: "rounds of the four operations",
    }],
    build: |t| {
        let w: Psets = toml::Value::Table(t).try_into()?;
        if w.rounds == 0 || w.rounds > 1_000_000 {
            return Err(serde::de::Error::custom(format!(
                "rounds: must be between 1 and 1e6, got {}",
                w.rounds
            )));
        }
        Ok(Box::new(w))
    },
};
