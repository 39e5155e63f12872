//! Black's processor allocation server (Black 1990, section 6: the `cpu_server`, a batch
//! scheduler for processors): applications ask a server process for processors for a time; the
//! server grants requests first-come first-served, greedily, from a pool of `max_fraction` of
//! the machine (what all its grants together may hold), and no request longer than
//! `max_minutes` (75% and 15 minutes in the paper: "a maximum allocation of 75% of the machine
//! for at most 15 minutes at a time"), by
//! creating a processor set, assigning the processors to it and replying; the application
//! assigns itself to the set, runs, and returns the processors, which go back to the default
//! set. The request and reply travel as messages on ports; their contents are shared program
//! state (the simulator times the messages, not their bytes).
//!
//! Each client records `latency_ms` (from sending its request to running on its processors;
//! Black measured about 35 ms for one processor plus about 5 ms per additional one), or
//! `refused`; the server records `allocated` (processors held by clients, at each grant).
//! Processor 0 is never granted: the default set keeps it for the server and everything else.
//! The server's decisions (admission, the greedy first-come first-served grant) are
//! `smpsched_policy::allocation`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Cycles, Op, Outcome, ProcId, ProcessorSetCall, Program, Reply, Request, SimError, Simulation,
    SyncId, SyncKind, TaskId, ThreadCtx, WaitPolicy,
};

use smpsched_policy::allocation::{grant_head, Admission, GangLimits};

use crate::{Workload, WorkloadInfo};

/// Parameters of `gang-server`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GangServer {
    /// Client applications, each asking once.
    pub clients: u32,
    /// Processors each client asks for.
    pub processors: u32,
    /// Milliseconds each client keeps its processors.
    pub hold_ms: f64,
    /// Milliseconds between two clients' requests.
    #[serde(default = "default_spacing")]
    pub spacing_ms: f64,
    /// Most of the machine one request may have (Black: 0.75).
    #[serde(default = "default_fraction")]
    pub max_fraction: f64,
    /// Longest a request may hold its processors, in minutes (Black: 15).
    #[serde(default = "default_minutes")]
    pub max_minutes: f64,
}

fn default_spacing() -> f64 {
    1000.0
}
fn default_fraction() -> f64 {
    0.75
}
fn default_minutes() -> f64 {
    15.0
}

/// A message to the server.
#[derive(Clone, Copy, Debug)]
enum Message {
    Request {
        client: usize,
        processors: u32,
        hold: Cycles,
    },
    Release {
        client: usize,
    },
}

/// What the server and its clients share.
#[derive(Debug, Default)]
struct Shared {
    inbox: VecDeque<Message>,
    /// The answer to each client: its processor set, or `None` when refused.
    grants: Vec<Option<Option<u32>>>,
}

impl GangServer {
    /// The server's limits on a machine of `n` processors with `m`'s clock.
    fn limits(&self, n: u32, m: &smpsched_sim::MachineConfig) -> GangLimits {
        GangLimits::of(n, self.max_fraction, m.ms(self.max_minutes * 60_000.0))
    }
}

impl Workload for GangServer {
    fn threads(&self) -> u64 {
        u64::from(self.clients) + 1
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("clients")
    }

    fn operations(&self) -> Option<u64> {
        Some(u64::from(self.clients))
    }

    fn needs(&self) -> crate::Needs {
        // The server grants sets of its own processors; it keeps processor 0 (the default set
        // is never emptied), so a request is granted only on two or more processors.
        crate::Needs {
            processors: 2,
            set_processors: 0,
            processor_sets: true,
        }
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let m = sim.machine().clone();
        let shared = Rc::new(RefCell::new(Shared {
            inbox: VecDeque::new(),
            grants: vec![None; self.clients as usize],
        }));
        let port = |sim: &mut Simulation| {
            sim.create_sync(
                SyncKind::Port {
                    messages: 0,
                    handoff: false,
                },
                WaitPolicy::BLOCK,
            )
        };
        let server_port = port(sim);
        let replies: Vec<SyncId> = (0..self.clients).map(|_| port(sim)).collect();
        sim.spawn(
            task,
            Box::new(Server {
                shared: shared.clone(),
                port: server_port,
                replies: replies.clone(),
                // The server's processors: `max_fraction` of the machine in all ("a maximum
                // allocation of 75% of the machine"), the highest numbered, never processor 0.
                free: (m.processors - self.limits(m.processors, &m).max_processors..m.processors)
                    .map(ProcId)
                    .collect(),
                held: vec![Vec::new(); self.clients as usize],
                fcfs: VecDeque::new(),
                pending: VecDeque::new(),
                creating: None,
                limits: self.limits(m.processors, &m),
                done: 0,
                clients: self.clients as usize,
                received: false,
            }),
        )?;
        for (c, &reply) in replies.iter().enumerate() {
            sim.spawn(
                task,
                Box::new(Client {
                    c,
                    step: 0,
                    shared: shared.clone(),
                    server: server_port,
                    reply,
                    start: m.ms(self.spacing_ms * c as f64),
                    processors: self.processors,
                    hold: m.ms(self.hold_ms),
                    sent: 0,
                    cycles_per_ms: m.ms(1.0).max(1) as f64,
                }),
            )?;
        }
        Ok(())
    }
}

/// The allocation server: a loop of receive, decide, act.
struct Server {
    shared: Rc<RefCell<Shared>>,
    port: SyncId,
    replies: Vec<SyncId>,
    /// Processors not granted (processor 0 never is).
    free: Vec<ProcId>,
    /// The processors each client holds.
    held: Vec<Vec<ProcId>>,
    /// Requests waiting, first come first served: (client, processors).
    fcfs: VecDeque<(usize, u32)>,
    /// Operations decided and not yet issued.
    pending: VecDeque<Op>,
    /// The client whose processor set is being created.
    creating: Option<usize>,
    limits: GangLimits,
    done: usize,
    clients: usize,
    /// Whether a message was just received (one per receive).
    received: bool,
}

impl Server {
    /// Starts the grant of the head request if it fits: greedy, first come first served (a
    /// request that does not fit holds back those behind it).
    fn try_grant(&mut self) -> Option<Op> {
        if self.creating.is_some() {
            return None;
        }
        let waiting: Vec<u32> = self.fcfs.iter().map(|&(_, n)| n).collect();
        let i = grant_head(&waiting, self.free.len())?;
        let (client, n) = self.fcfs.remove(i)?;
        self.creating = Some(client);
        let take = self.free.len() - n as usize;
        self.held[client] = self.free.split_off(take);
        Some(Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create)))
    }
}

impl Program for Server {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(Outcome::Kernel(Reply::ProcessorSet(set))) = cx.take_outcome() {
            let client = self.creating.take().expect("a set is created for a grant");
            for &p in &self.held[client] {
                self.pending.push_back(Op::Kernel(Request::ProcessorSet(
                    ProcessorSetCall::AssignProcessor { set, processor: p },
                )));
            }
            self.shared.borrow_mut().grants[client] = Some(Some(set));
            self.pending.push_back(Op::Signal(self.replies[client]));
            let allocated = self.held.iter().map(Vec::len).sum::<usize>();
            self.pending.push_back(Op::Record {
                name: "allocated",
                value: allocated as f64,
            });
        }
        if let Some(op) = self.pending.pop_front() {
            return op;
        }
        if self.received {
            self.received = false;
            let msg = self.shared.borrow_mut().inbox.pop_front();
            match msg {
                Some(Message::Release { client }) => {
                    for p in std::mem::take(&mut self.held[client]) {
                        self.pending.push_back(Op::Kernel(Request::ProcessorSet(
                            ProcessorSetCall::AssignProcessor {
                                set: 0,
                                processor: p,
                            },
                        )));
                        self.free.push(p);
                    }
                    self.free.sort_by_key(|p| std::cmp::Reverse(p.0));
                    self.done += 1;
                }
                Some(Message::Request {
                    client,
                    processors,
                    hold,
                }) => {
                    if let Admission::Refuse(_) = self.limits.admit(processors, hold) {
                        self.shared.borrow_mut().grants[client] = Some(None);
                        self.pending.push_back(Op::Signal(self.replies[client]));
                        self.done += 1;
                    } else {
                        self.fcfs.push_back((client, processors));
                    }
                }
                None => {}
            }
            if let Some(op) = self.pending.pop_front() {
                return op;
            }
        }
        if let Some(op) = self.try_grant() {
            return op;
        }
        if self.done == self.clients && self.creating.is_none() {
            return Op::Exit;
        }
        self.received = true;
        Op::Wait(self.port)
    }
}

/// An application: asks for processors, moves onto them, computes, gives them back.
struct Client {
    c: usize,
    step: u32,
    shared: Rc<RefCell<Shared>>,
    server: SyncId,
    reply: SyncId,
    start: Cycles,
    processors: u32,
    hold: Cycles,
    sent: Cycles,
    cycles_per_ms: f64,
}

impl Program for Client {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        self.step += 1;
        match self.step {
            1 => Op::Sleep(self.start.max(1)),
            2 => {
                self.sent = cx.now;
                self.shared.borrow_mut().inbox.push_back(Message::Request {
                    client: self.c,
                    processors: self.processors,
                    hold: self.hold,
                });
                Op::Signal(self.server)
            }
            3 => Op::Wait(self.reply),
            4 => match self.shared.borrow().grants[self.c] {
                Some(Some(set)) => {
                    Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignThread {
                        set,
                        thread: None,
                    }))
                }
                _ => {
                    self.step = 100;
                    Op::Record {
                        name: "refused",
                        value: 1.0,
                    }
                }
            },
            5 => {
                let ms = (cx.now - self.sent) as f64 / self.cycles_per_ms;
                Op::Record {
                    name: "latency_ms",
                    value: ms,
                }
            }
            6 => Op::Compute(self.hold.max(1)),
            7 => {
                self.shared
                    .borrow_mut()
                    .inbox
                    .push_back(Message::Release { client: self.c });
                Op::Signal(self.server)
            }
            _ => Op::Exit,
        }
    }
}

/// Registry entry of `gang-server`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "gang-server",
    summary: "Black's processor allocation server granting processor sets to applications",
    description: "A server process grants applications processors for a time, first come first \
                  served and greedily, at most `max_fraction` of the machine in all its grants \
                  together and `max_minutes` per request, by creating a processor set and \
                  assigning processors to it. Each client is one thread: it sends one request \
                  (`spacing_ms` apart), assigns itself to its set, computes `hold_ms` on one of \
                  its processors (the others stand idle: the cost of a gang to the machine) and \
                  gives the processors back. The server may assign the processor it runs on and \
                  then wait for a time-shared one. Clients record latency_ms (request to \
                  running on the set) or refused; the server records allocated (the processors \
                  its grants hold, at each grant). Needs a policy with processor sets (mach).",
    paper: "Black 1990 section 6 (the cpu_server gang allocator)",
    params: &[
        ParamInfo {
            name: "clients",
            default: "(required)",
            doc: "client applications",
        },
        ParamInfo {
            name: "processors",
            default: "(required)",
            doc: "processors per request",
        },
        ParamInfo {
            name: "hold_ms",
            default: "(required)",
            doc: "milliseconds held",
        },
        ParamInfo {
            name: "spacing_ms",
            default: "1000",
            doc: "milliseconds between requests",
        },
        ParamInfo {
            name: "max_fraction",
            default: "0.75",
            doc: "most of the machine per request",
        },
        ParamInfo {
            name: "max_minutes",
            default: "15",
            doc: "longest hold per request",
        },
    ],
    build: |t| {
        let w: GangServer = toml::Value::Table(t).try_into()?;
        let bad = |field: &str, what: String| -> Result<Box<dyn Workload>, toml::de::Error> {
            Err(serde::de::Error::custom(format!("{field}: {what}")))
        };
        if w.clients == 0 || w.clients > 10_000 {
            return bad(
                "clients",
                format!("must be between 1 and 10000, got {}", w.clients),
            );
        }
        if w.processors == 0 || w.processors > smpsched_sim::config::MAX_PROCESSORS {
            return bad(
                "processors",
                format!(
                    "must be between 1 and {}, got {}",
                    smpsched_sim::config::MAX_PROCESSORS,
                    w.processors
                ),
            );
        }
        for (field, v) in [
            ("hold_ms", w.hold_ms),
            ("spacing_ms", w.spacing_ms),
            ("max_minutes", w.max_minutes),
        ] {
            if !(v >= 0.0 && v.is_finite() && v <= 1e9) {
                return bad(field, format!("must be from 0 to 1e9, got {v}"));
            }
        }
        if !(w.max_fraction > 0.0 && w.max_fraction <= 1.0) {
            return bad(
                "max_fraction",
                format!("must be in (0, 1], got {}", w.max_fraction),
            );
        }
        Ok(Box::new(w))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use smpsched_sim::sched::policy;
    use smpsched_sim::MachineConfig;

    fn run(w: &GangServer) -> smpsched_sim::AppReport {
        let m = MachineConfig::multimax();
        let s = policy("mach").unwrap().make(&toml::Table::new()).unwrap();
        let mut sim = Simulation::new(m, s, 1).unwrap();
        let task = sim.add_task("server");
        w.install(&mut sim, task).unwrap();
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        r.apps[0].clone()
    }

    fn server(clients: u32, processors: u32) -> GangServer {
        GangServer {
            clients,
            processors,
            hold_ms: 50.0,
            spacing_ms: 0.0,
            max_fraction: 0.75,
            max_minutes: 15.0,
        }
    }

    #[test]
    fn grants_fill_the_servers_share_greedily_and_never_past_it() {
        // Six requests of 5 at once on 16 processors: two fit in the server's 75% (12), the rest
        // wait (the share held in all, not per request: three fitted beside processor 0, 15 of
        // 16, until a new-user probe found it).
        let app = run(&server(6, 5));
        assert_eq!(app.recorded["allocated"].max, 10.0);
        assert_eq!(app.recorded["latency_ms"].count, 6);
        // The waiting half got its processors only after a first holder gave them back.
        assert!(app.recorded["latency_ms"].max > 50.0);
    }

    #[test]
    fn requests_past_the_limits_are_refused() {
        let app = run(&server(2, 13));
        assert_eq!(app.recorded["refused"].count, 2);
        assert!(!app.recorded.contains_key("allocated"));
        let mut long = server(2, 4);
        long.hold_ms = 16.0 * 60_000.0;
        let app = run(&long);
        assert_eq!(app.recorded["refused"].count, 2);
        let app = run(&server(2, 12));
        assert_eq!(app.recorded["latency_ms"].count, 2);
        assert_eq!(
            app.recorded["allocated"].max, 12.0,
            "one 12 at a time: 24 > 15"
        );
    }
}
