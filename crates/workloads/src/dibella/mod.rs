//! DiBella et al. 1992's request test (sections 2.3, 3 and 4): client processes post requests
//! carrying a service time into a ready-queue structure in simulated memory; scheduler
//! processes, one per processor and pinned there, poll the queues (section 3.1), service the
//! requests and reply with a signal. Clients and schedulers run on disjoint processors
//! (section 3.2).
//!
//! The structure is chosen by the scheduler policy (Table 3): the multi-access mailboxes of
//! [`smpsched_sim::readyq::multi_access`] for Static, Random, Sequential and the Primary
//! policies; one FCFS queue for Global; one FCFS queue per scheduler for Distributed FCFS
//! ([`smpsched_sim::readyq::fcfs`]). Where a client posts and where a scheduler looks are the
//! pure decisions of [`smpsched_policy::dibella`]; an incompatible pair is refused when the
//! workload is built, naming both policies and the compatible clients.
//!
//! Loads (section 2.3): `synchronous` (a client posts its next request once the reply to the
//! previous one has arrived), `uniform` asynchronous (every client waits the same mean time
//! between requests) and `non-uniform` asynchronous (clients split into one set per queue as
//! in footnote 4; set 0 posts at the maximum rate, the others wait `gap_ms` on average).
//!
//! Measures (section 4), recorded by the programs: `delay` per request (ms, generation to end
//! of service); at the end `throughput` (requests generated per ms from the first generation to
//! the last, none with a single request)
//! and `load0`, `load1`, ... (% of the requests each scheduler serviced, off the balanced
//! share; they sum to zero); `post` per request (ms from generation to the end of its post:
//! composing, choosing, lock waits, retries); and counters `lost_recheck` (optimistic re-checks lost), `full`
//! (posts that found every mailbox in use) and `secondary` (requests serviced from a
//! non-primary queue).
//!
//! Invariants: every request generated is posted exactly once and serviced exactly once
//! (checked by the tests under every pair); the run ends when every request has been serviced.

mod client;
mod params;
mod scheduler;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use smpsched_policy::dibella::SchedulerPolicy;
use smpsched_sim::memory::Placement;
use smpsched_sim::readyq::fcfs::FcfsLayout;
use smpsched_sim::readyq::multi_access::Layout;
use smpsched_sim::readyq::Pause;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    CpuMask, Cycles, ProcId, SimError, Simulation, SyncId, SyncKind, TaskId, ThreadAttrs,
    WaitPolicy,
};

use crate::{Workload, WorkloadInfo};

pub use params::{DiBella, Load, ServiceDist};

/// One request: who generated it and when, what it asks, who serviced it.
#[derive(Clone, Debug)]
pub(crate) struct Req {
    pub client: u32,
    pub generated: Cycles,
    pub service: Cycles,
    /// Times it was serviced (exactly once when all is well).
    pub serviced: u32,
    /// The queue and mailbox it was posted in.
    pub mailbox: (usize, usize),
    /// Requests serviced (by anyone) before it was posted, and before it was serviced.
    pub posted_after: u64,
    pub serviced_after: u64,
    /// The scheduler that serviced it.
    pub by: u32,
}

/// The structure the requests go through.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Structure {
    MultiAccess(Layout),
    Fcfs(FcfsLayout),
}

impl Structure {
    /// Mailboxes per queue (an FCFS queue is one).
    pub(crate) fn mailboxes(&self) -> usize {
        match self {
            Structure::MultiAccess(l) => l.mailboxes(),
            Structure::Fcfs(_) => 1,
        }
    }
}

/// Costs in cycles.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Costs {
    pub signal: Cycles,
    /// Bookkeeping done under the IN-box (FCFS: queue) lock.
    pub bookkeeping: Cycles,
    /// A client's processing of its request under the IN-box (FCFS: queue) lock.
    pub fill: Cycles,
    pub send: Cycles,
    pub send_dist: ServiceDist,
    pub interrupt: Cycles,
    pub post: Cycles,
    pub post_dist: ServiceDist,
    /// The share of each composing time before the request's generation stamp.
    pub post_before: f64,
    pub random: Cycles,
    /// Counting one bit of the primary queue's bitmap (Primary client policies).
    pub count: Cycles,
    /// Examining one bit of a bitmap in a scheduler's search.
    pub search: Cycles,
    /// Examining one bit of a bitmap in a client's search for a free mailbox.
    pub free_search: Cycles,
    pub visit: Cycles,
    /// Pacing of lock waits; each program's `seed` is its processor's number + 1, so that
    /// waiters' long-wait draws differ.
    pub pause: Pause,
    /// The clock's period when a client spinning on a full queue takes its signals at its
    /// interrupts (`tick_signals`), else 0: at once.
    pub tick: Cycles,
    /// A client that finds its queue full waits for its next reply signal (`sigpause`).
    pub sigpause: bool,
    pub gap: f64,
    pub cycles_per_ms: f64,
}

impl Costs {
    /// The costs of the program pinned on processor `p`: its own stream of long-wait pauses.
    fn on(self, p: usize) -> Costs {
        Costs {
            pause: Pause::new(self.pause.cycles, p as u64 + 1).with_spin(self.pause.spin),
            ..self
        }
    }
}

/// What clients and schedulers share (the bookkeeping outside the simulated queue).
#[derive(Debug)]
pub(crate) struct Shared {
    pub total: u64,
    pub reqs: Vec<Req>,
    pub serviced: u64,
    pub first_generated: Cycles,
    pub last_generated: Cycles,
    pub per_scheduler: Vec<u64>,
    /// Per client, replies signalled and not yet handled: (delivery time, queue, mailbox).
    pub replies: Vec<VecDeque<(Cycles, usize, usize)>>,
    /// Per client, the event its scheduler's reply signal sets (synchronous load, or
    /// asynchronous with `sigpause`).
    pub events: Vec<SyncId>,
    /// Per client, with `sigpause` (asynchronously; else empty): whether it waits in sigpause
    /// for its next reply signal, which then sets its event.
    pub paused: Vec<bool>,
    pub finished: bool,
}

/// The names of the per-scheduler load-distribution measures.
pub(crate) const LOAD_NAMES: [&str; 64] = [
    "load0", "load1", "load2", "load3", "load4", "load5", "load6", "load7", "load8", "load9",
    "load10", "load11", "load12", "load13", "load14", "load15", "load16", "load17", "load18",
    "load19", "load20", "load21", "load22", "load23", "load24", "load25", "load26", "load27",
    "load28", "load29", "load30", "load31", "load32", "load33", "load34", "load35", "load36",
    "load37", "load38", "load39", "load40", "load41", "load42", "load43", "load44", "load45",
    "load46", "load47", "load48", "load49", "load50", "load51", "load52", "load53", "load54",
    "load55", "load56", "load57", "load58", "load59", "load60", "load61", "load62", "load63",
];

/// The rate at which `total` requests were generated, first to last generation (at cycles
/// `first` and `last`), in requests per cycle: the `total - 1` generations after the first over
/// the time they took. `None` with fewer than two requests, or all at one instant: no rate.
pub fn throughput(total: u64, first: Cycles, last: Cycles) -> Option<f64> {
    let span = last.saturating_sub(first);
    (total >= 2 && span > 0).then(|| (total - 1) as f64 / span as f64)
}

/// Each scheduler's share of the serviced requests in % off the balanced share (Table 4's
/// load distribution); the values sum to zero (up to rounding).
pub fn load_distribution(per_scheduler: &[u64]) -> Vec<f64> {
    let total: u64 = per_scheduler.iter().sum();
    let n = per_scheduler.len() as f64;
    if total == 0 {
        return vec![0.0; per_scheduler.len()];
    }
    per_scheduler
        .iter()
        .map(|&c| 100.0 * (c as f64 / total as f64 - 1.0 / n))
        .collect()
}

impl DiBella {
    /// Installs the workload and gives the shared bookkeeping (for tests).
    pub(crate) fn install_shared(
        &self,
        sim: &mut Simulation,
        task: TaskId,
    ) -> Result<Rc<RefCell<Shared>>, SimError> {
        let (spol, cpol) = self
            .policies()
            .map_err(|e| SimError::Workload(format!("dibella: {e}")))?;
        let s = self.schedulers as usize;
        let c = self.clients as usize;
        let procs = sim.machine().processors as usize;
        if s + c > procs {
            return Err(SimError::Workload(format!(
                "dibella: {s} schedulers and {c} clients need {} processors (clients and \
                 schedulers run on disjoint processors, section 3.2); the machine has {procs}",
                s + c
            )));
        }
        let structure = self.structure(sim, spol);
        let costs = self.costs(sim.machine());
        let shared = self.shared(sim, c);
        let pin = |p: usize| ThreadAttrs {
            mask: Some(CpuMask::of([ProcId(p as u32)])),
            base_priority: 0,
        };
        for me in 0..s {
            let prog = scheduler::Scheduler::new(
                me,
                s,
                spol,
                self.bidirectional,
                structure,
                costs.on(me),
                &shared,
            );
            sim.spawn_with(task, Box::new(prog), pin(me))?;
        }
        let service = (sim.machine().ms(self.service_ms), self.service_dist);
        for k in 0..c {
            let gap = match self.load {
                Load::Synchronous => None,
                Load::Uniform => Some(costs.gap),
                Load::NonUniform if k % s == 0 => Some(0.0),
                Load::NonUniform => Some(costs.gap),
            };
            let prog = client::Client::new(
                k,
                s,
                cpol,
                gap,
                service,
                structure,
                costs.on(s + k),
                &shared,
            );
            sim.spawn_with(task, Box::new(prog), pin(s + k))?;
        }
        Ok(shared)
    }

    /// The ready queue the scheduler policy uses, laid out in the simulation's memory: one
    /// FCFS queue (Global), one per scheduler (Distributed FCFS) or multi-access mailboxes.
    fn structure(&self, sim: &mut Simulation, spol: SchedulerPolicy) -> Structure {
        let s = self.schedulers as usize;
        let line = sim.memory().line_bytes().max(1);
        let mailboxes = self.mailboxes as usize;
        match spol {
            SchedulerPolicy::Global | SchedulerPolicy::DistributedFcfs => {
                let (queues, cap) = if spol == SchedulerPolicy::Global {
                    (1, mailboxes * s)
                } else {
                    (s, mailboxes)
                };
                let bytes = FcfsLayout::bytes(queues, cap, line, self.request_words);
                let base = sim.memory().alloc(bytes, Placement::Uma, None).base;
                Structure::Fcfs(
                    FcfsLayout::new(base, queues, cap, line).with_request_words(self.request_words),
                )
            }
            _ => {
                let bytes = Layout::bytes(s, mailboxes, line, self.request_words);
                let base = sim.memory().alloc(bytes, Placement::Uma, None).base;
                Structure::MultiAccess(
                    Layout::new(base, s, mailboxes, line).with_request_words(self.request_words),
                )
            }
        }
    }

    /// The file's times in the machine's cycles.
    fn costs(&self, m: &smpsched_sim::MachineConfig) -> Costs {
        Costs {
            signal: m.ms(self.signal_ms),
            bookkeeping: m.ms(self.bookkeeping_ms),
            fill: m.ms(self.fill_ms),
            send: m.ms(self.send_ms),
            send_dist: self.send_dist,
            interrupt: m.ms(self.interrupt_ms),
            post: m.ms(self.post_ms),
            post_dist: self.post_dist,
            post_before: self.post_before,
            random: m.ms(self.random_ms),
            count: m.ms(self.count_ms),
            search: m.ms(self.search_ms),
            free_search: m.ms(self.free_search_ms),
            visit: m.ms(self.visit_ms),
            pause: Pause::new(m.ms(self.pause_ms), 0).with_spin(self.lock),
            tick: if self.tick_signals { m.tick_cycles } else { 0 },
            sigpause: self.sigpause,
            gap: self.gap_ms * m.clock_mhz * 1000.0,
            cycles_per_ms: m.clock_mhz * 1000.0,
        }
    }

    /// The bookkeeping the programs share, with one reply event per client when synchronous
    /// or when asynchronous clients wait for their signals in `sigpause`.
    fn shared(&self, sim: &mut Simulation, clients: usize) -> Rc<RefCell<Shared>> {
        let pausing = self.sigpause && self.load != Load::Synchronous;
        let events = if self.load == Load::Synchronous || pausing {
            (0..clients)
                .map(|_| sim.create_sync(SyncKind::Event { set: false }, WaitPolicy::BLOCK))
                .collect()
        } else {
            Vec::new()
        };
        Rc::new(RefCell::new(Shared {
            total: self.requests,
            reqs: Vec::with_capacity(self.requests.min(1 << 24) as usize),
            serviced: 0,
            first_generated: Cycles::MAX,
            last_generated: 0,
            per_scheduler: vec![0; self.schedulers as usize],
            replies: vec![VecDeque::new(); clients],
            events,
            paused: if pausing {
                vec![false; clients]
            } else {
                Vec::new()
            },
            finished: false,
        }))
    }
}

impl Workload for DiBella {
    fn threads(&self) -> u64 {
        u64::from(self.schedulers + self.clients)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("clients")
    }

    fn needs(&self) -> crate::Needs {
        // Clients and schedulers run on disjoint processors (section 3.2).
        crate::Needs {
            processors: self.schedulers.saturating_add(self.clients),
            ..crate::Needs::default()
        }
    }

    fn operations(&self) -> Option<u64> {
        Some(self.requests)
    }

    fn memory_bytes(&self) -> u64 {
        let words = self.request_words;
        Layout::bytes(self.schedulers as usize, self.mailboxes as usize, 64, words)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        self.install_shared(sim, task).map(|_| ())
    }
}

/// Registry entry of `dibella`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "dibella",
    summary: "clients posting requests into multi-access (or FCFS) ready queues, pinned polling schedulers servicing them",
    description: "DiBella et al.'s request test: `clients` processes post `requests` requests \
                  (each `service_ms` of work) into per-processor multi-access mailbox queues \
                  (or one global / per-processor FCFS queues) in simulated memory, placed by \
                  the `client` policy; `schedulers` pinned processes poll the queues as the \
                  `scheduler` policy says, service each request and reply with a signal. \
                  Records `delay` (ms per request), `throughput` (requests per ms), `load0..` \
                  (% off balanced per scheduler), `post` (ms from generation to posted), `lost_recheck`, \
                  `full`, `secondary`.",
    paper: "DiBella et al. 1992 sections 2-4, Tables 1-4 and 6, Figures 2-7",
    params: &[
        ParamInfo { name: "scheduler", default: "(required)", doc: "static | random | sequential | primary-fixed | primary-random | primary-sequential | global | distributed-fcfs" },
        ParamInfo { name: "client", default: "(required)", doc: "static | random | sequential | primary-random | primary-fixed | global | static-fcfs | random-fcfs (Table 3 pairs only)" },
        ParamInfo { name: "schedulers", default: "(required)", doc: "scheduler processes = queues" },
        ParamInfo { name: "clients", default: "(required)", doc: "client processes (schedulers + clients <= processors)" },
        ParamInfo { name: "requests", default: "(required)", doc: "requests generated in all" },
        ParamInfo { name: "load", default: "(required)", doc: "synchronous | uniform | non-uniform" },
        ParamInfo { name: "service_ms", default: "0.11", doc: "service time incl. bookkeeping (NULL request)" },
        ParamInfo { name: "service_dist", default: "fixed", doc: "fixed | exponential service times with mean service_ms" },
        ParamInfo { name: "mailboxes", default: "32", doc: "mailboxes per queue, MaxReqs (<= 64)" },
        ParamInfo { name: "cutoff", default: "clients", doc: "Primary client policies' cutoff capacity, 1 or more" },
        ParamInfo { name: "bidirectional", default: "true", doc: "search secondary queues right to left" },
        ParamInfo { name: "gap_ms", default: "0.5", doc: "mean wait between requests of a slow client" },
        ParamInfo { name: "signal_ms", default: "0.65", doc: "reply signal propagation" },
        ParamInfo { name: "bookkeeping_ms", default: "0", doc: "part of service_ms done still holding the IN-box (FCFS: queue) lock" },
        ParamInfo { name: "fill_ms", default: "0", doc: "client time processing its request still holding the IN-box (FCFS: queue) lock" },
        ParamInfo { name: "send_ms", default: "0.3", doc: "scheduler time to send the reply signal" },
        ParamInfo { name: "send_dist", default: "fixed", doc: "fixed | exponential sending times with mean send_ms" },
        ParamInfo { name: "interrupt_ms", default: "0.65", doc: "client time to service the reply interrupt" },
        ParamInfo { name: "post_ms", default: "0.6", doc: "client time to compose a request" },
        ParamInfo { name: "post_dist", default: "exponential", doc: "fixed | exponential composing times with mean post_ms" },
        ParamInfo { name: "post_before", default: "0", doc: "share of each composing time before the request is generated (outside its delay)" },
        ParamInfo { name: "random_ms", default: "0.02", doc: "time to draw a random number" },
        ParamInfo { name: "count_ms", default: "0", doc: "Primary client time per bitmap bit counted for the primary's length" },
        ParamInfo { name: "search_ms", default: "0", doc: "scheduler time per bitmap bit examined searching for a request" },
        ParamInfo { name: "free_search_ms", default: "0", doc: "client time per bitmap bit examined searching for a free mailbox" },
        ParamInfo { name: "visit_ms", default: "0.005", doc: "scheduler time per queue visited while polling" },
        ParamInfo { name: "lock", default: "test-and-test-and-set", doc: "test-and-test-and-set | test-and-set: how a waiter retries a held lock" },
        ParamInfo { name: "request_words", default: "0", doc: "request words beyond the first, copied in and out under the box's (FCFS: queue's) lock" },
        ParamInfo { name: "pause_ms", default: "0.002", doc: "pause between reads of a held lock" },
        ParamInfo { name: "tick_signals", default: "false", doc: "a client spinning on a full queue takes its reply signals at the machine's next clock tick, not at once" },
        ParamInfo { name: "sigpause", default: "false", doc: "an asynchronous client finding its queue full waits for its next reply signal rather than retrying" },
    ],
    build: |t| {
        let w: DiBella = toml::Value::Table(t).try_into()?;
        w.validate().map_err(serde::de::Error::custom)?;
        Ok(Box::new(w))
    },
};
