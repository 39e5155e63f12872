//! Process control on the application's side (Gupta, Tucker and Urushibara 1991, section 7.2;
//! Tucker and Gupta 1989), shared by the task-queue applications (`taskqueue`, Gupta's Maxflow
//! and Matmul).

use smpsched_sim::{Notice, Op, SyncId, SyncKind, WaitPolicy};

/// Process control on the application's side (section 7.2; Tucker and Gupta 1989): told by the
/// kernel that it has N processors ([`Notice::Processors`]), a task-queue application suspends
/// its processes of rank N and above at their next task boundary, and resumes them when N grows
/// or when the work runs out (so that they can finish). A suspended process waits on an event of
/// its own and clears it once resumed, so a resume that comes before the wait is not lost. Under
/// a policy that sends no notices nothing is ever suspended.
#[derive(Debug)]
pub struct Control {
    allowed: u32,
    suspended: Vec<bool>,
    events: Vec<SyncId>,
}

impl Control {
    /// Control of `processes` processes, with their events created in `sim`.
    pub fn new(sim: &mut smpsched_sim::Simulation, processes: u32) -> Control {
        let events = (0..processes)
            .map(|_| sim.create_sync(SyncKind::Event { set: false }, WaitPolicy::BLOCK))
            .collect();
        Control {
            allowed: processes,
            suspended: vec![false; processes as usize],
            events,
        }
    }

    /// Takes in the kernel's notice, if any.
    pub fn notice(&mut self, notice: Option<Notice>) {
        if let Some(Notice::Processors(n)) = notice {
            self.allowed = n.max(1);
        }
    }

    /// Whether process `rank` should suspend at this task boundary (work is left, and the
    /// application has fewer processors than its rank).
    pub fn should_suspend(&self, rank: usize, work_left: bool) -> bool {
        work_left && rank as u32 >= self.allowed && !self.suspended[rank]
    }

    /// Suspends process `rank`: the operations to issue, in order (recorded as `suspended`).
    pub fn suspend(&mut self, rank: usize) -> [Op; 3] {
        self.suspended[rank] = true;
        let e = self.events[rank];
        [
            Op::Record {
                name: "suspended",
                value: 1.0,
            },
            Op::Wait(e),
            Op::Clear(e),
        ]
    }

    /// Resumes one suspended process the application has a processor for (any, once no work is
    /// left): the signal to issue, if there was one.
    pub fn resume_one(&mut self, work_left: bool) -> Option<Op> {
        let allowed = self.allowed as usize;
        let w = (0..self.suspended.len())
            .find(|&w| self.suspended[w] && (!work_left || w < allowed))?;
        self.suspended[w] = false;
        Some(Op::Signal(self.events[w]))
    }
}
