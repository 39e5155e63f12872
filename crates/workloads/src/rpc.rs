//! RPC: two threads exchanging messages through ports, one-way or request/reply, with or
//! without handoff scheduling in the kernel (Black 1990 section 5.2, Table 3).

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Cycles, Op, Repeat, SimError, Simulation, SyncKind, TaskId, WaitPolicy};

use crate::{Workload, WorkloadInfo};

/// Whether the client waits for a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Request and reply.
    Rpc,
    /// Messages one way only.
    OneWay,
}

/// Parameters of `rpc`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rpc {
    /// Exchanges (or one-way messages).
    pub exchanges: u64,
    /// Request/reply or one-way.
    pub mode: Mode,
    /// Whether a send hands the processor to a blocked receiver when no processor is idle (on
    /// the RPC path only, as Mach is configured; one-way messages are queued).
    pub handoff: bool,
    /// Cycles the client computes per exchange.
    #[serde(default = "default_work")]
    pub client_cycles: Cycles,
    /// Cycles the server computes per exchange.
    #[serde(default = "default_work")]
    pub server_cycles: Cycles,
}

fn default_work() -> Cycles {
    100
}

impl Workload for Rpc {
    fn threads(&self) -> u64 {
        2
    }

    fn threads_field(&self) -> Option<&'static str> {
        None
    }

    fn operations(&self) -> Option<u64> {
        Some(self.exchanges)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let port = |sim: &mut Simulation| {
            sim.create_sync(
                SyncKind::Port {
                    messages: 0,
                    // Mach hands off only on the RPC path (Black 5.2); one-way sends queue.
                    handoff: self.handoff && self.mode == Mode::Rpc,
                },
                WaitPolicy::BLOCK,
            )
        };
        let req = port(sim);
        let reply = (self.mode == Mode::Rpc).then(|| port(sim));
        let mut server = vec![Op::Wait(req), Op::Compute(self.server_cycles)];
        let mut client = vec![Op::Compute(self.client_cycles), Op::Signal(req)];
        if let Some(r) = reply {
            server.push(Op::Signal(r));
            client.push(Op::Wait(r));
        }
        sim.spawn(task, Box::new(Repeat::new(server, self.exchanges)))?;
        sim.spawn(task, Box::new(Repeat::new(client, self.exchanges)))?;
        Ok(())
    }
}

/// Registry entry of `rpc`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "rpc",
    summary: "a client and a server exchanging messages, with or without handoff",
    description: "A client sends `exchanges` requests to a server through a port; in `rpc` mode \
                  it waits for each reply on a second port, in `one-way` mode it does not. With \
                  `handoff`, a send to a blocked receiver hands the sender's processor straight \
                  to it when no processor is idle. Report time per exchange.",
    paper: "Black 1990 section 5.2, Table 3",
    params: &[
        ParamInfo {
            name: "exchanges",
            default: "(required)",
            doc: "exchanges or messages",
        },
        ParamInfo {
            name: "mode",
            default: "(required)",
            doc: "rpc | one-way",
        },
        ParamInfo {
            name: "handoff",
            default: "(required)",
            doc: "hand the processor to a blocked receiver (rpc mode; no effect in one-way)",
        },
        ParamInfo {
            name: "client_cycles",
            default: "100",
            doc: "client work per exchange",
        },
        ParamInfo {
            name: "server_cycles",
            default: "100",
            doc: "server work per exchange",
        },
    ],
    build: |t| {
        let w: Rpc = toml::Value::Table(t).try_into()?;
        if w.exchanges == 0 || w.exchanges > 1_000_000_000 {
            return Err(serde::de::Error::custom(format!(
                "exchanges: must be between 1 and 1e9, got {}",
                w.exchanges
            )));
        }
        Ok(Box::new(w))
    },
};
