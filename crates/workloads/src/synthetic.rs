//! Synthetic load: threads that alternate compute bursts and blocking waits drawn from
//! configurable distributions — the stand-in for I/O-bound and CPU-bound processes used to
//! exercise the schedulers before the papers' applications exist. With `burst_response`, each
//! burst after a wait records its response time, from the wake-up to the burst's end (an
//! interactive process's response to its input), as `burst_response_ms`.

use serde::Deserialize;
use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Program, SimError, Simulation, TaskId, ThreadCtx};

use crate::dist::Dist;
use crate::{Workload, WorkloadInfo};

/// Parameters of `synthetic`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Synthetic {
    /// Threads in the application.
    pub threads: u64,
    /// Compute bursts per thread.
    pub bursts: u64,
    /// Length of each compute burst.
    pub compute: Dist,
    /// Blocking wait after each burst but the last (none when absent).
    #[serde(default)]
    pub block: Option<Dist>,
    /// Record each burst's response after a wait (`burst_response_ms`).
    #[serde(default)]
    pub burst_response: bool,
}

/// Most bursts one synthetic thread may run.
pub const MAX_BURSTS: u64 = 1_000_000_000;

impl Synthetic {
    fn validate(&self) -> Result<(), String> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(format!(
                "threads: must be between 1 and {MAX_THREADS}, got {}",
                self.threads
            ));
        }
        if self.bursts == 0 || self.bursts > MAX_BURSTS {
            return Err(format!(
                "bursts: must be between 1 and {MAX_BURSTS}, got {}",
                self.bursts
            ));
        }
        self.compute
            .validate()
            .map_err(|e| format!("compute: {e}"))?;
        if let Some(b) = &self.block {
            b.validate().map_err(|e| format!("block: {e}"))?;
        }
        Ok(())
    }
}

impl Workload for Synthetic {
    fn threads(&self) -> u64 {
        self.threads
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let cycles_per_ms = sim.machine().ms(1.0).max(1) as f64;
        for _ in 0..self.threads {
            sim.spawn(
                task,
                Box::new(Burst {
                    compute: self.compute,
                    block: self.block,
                    left: self.bursts,
                    block_next: false,
                    response: self.burst_response.then_some(Response {
                        cycles_per_ms,
                        woken: None,
                        measuring: None,
                    }),
                }),
            )?;
        }
        Ok(())
    }
}

/// A thread's response times being measured: when its wait ends, and the wake-up its burst
/// under way answers.
struct Response {
    cycles_per_ms: f64,
    woken: Option<u64>,
    measuring: Option<u64>,
}

/// One synthetic thread: compute, then (if configured) block, `bursts` times; no block after the
/// last burst.
struct Burst {
    compute: Dist,
    block: Option<Dist>,
    left: u64,
    block_next: bool,
    /// With `burst_response`.
    response: Option<Response>,
}

impl Program for Burst {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(r) = self.response.as_mut() {
            // A burst that answered a wake-up just ended.
            if let Some(from) = r.measuring.take() {
                return Op::Record {
                    name: "burst_response_ms",
                    value: cx.now.saturating_sub(from) as f64 / r.cycles_per_ms,
                };
            }
        }
        if std::mem::take(&mut self.block_next) {
            if let Some(b) = &self.block {
                let wait = b.sample(cx.rng);
                if let Some(r) = self.response.as_mut() {
                    r.woken = Some(cx.now.saturating_add(wait));
                }
                return Op::Sleep(wait);
            }
        }
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        self.block_next = self.left > 0;
        if let Some(r) = self.response.as_mut() {
            r.measuring = r.woken.take();
        }
        Op::Compute(self.compute.sample(cx.rng))
    }
}

/// Registry entry of `synthetic`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "synthetic",
    summary: "threads alternating compute bursts and blocking waits",
    description: "Each of `threads` threads runs `bursts` compute bursts whose lengths are drawn \
                  from `compute`; between two bursts it blocks (an I/O stand-in) for a time \
                  drawn from `block`, if given. Distributions: fixed, uniform, exponential. \
                  With `burst_response = true` each burst after a wait records its response \
                  (wake-up to the burst's end) as `burst_response_ms`.",
    paper: "synthetic (no paper); the load shapes of DiBella et al. 1992 section 4",
    params: &[
        ParamInfo {
            name: "threads",
            default: "(required)",
            doc: "threads in the application",
        },
        ParamInfo {
            name: "bursts",
            default: "(required)",
            doc: "compute bursts per thread",
        },
        ParamInfo {
            name: "compute",
            default: "(required)",
            doc: "burst length: { dist = \"fixed\", value } | { dist = \"uniform\", min, max } \
                  | { dist = \"exponential\", mean }",
        },
        ParamInfo {
            name: "block",
            default: "none",
            doc: "blocking time between bursts, same forms as compute",
        },
        ParamInfo {
            name: "burst_response",
            default: "false",
            doc: "record each burst's response after a wait (burst_response_ms)",
        },
    ],
    build: |t| {
        let w: Synthetic = toml::Value::Table(t).try_into()?;
        w.validate().map_err(serde::de::Error::custom)?;
        Ok(Box::new(w))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use smpsched_sim::sched::policy;
    use smpsched_sim::MachineConfig;

    fn build(src: &str) -> Result<Box<dyn Workload>, toml::de::Error> {
        (INFO.build)(toml::from_str(src).unwrap())
    }

    #[test]
    fn runs_bursts_and_blocks() {
        let w = build(
            "threads = 3\nbursts = 4\ncompute = { dist = \"fixed\", value = 1000 }\n\
             block = { dist = \"fixed\", value = 500 }",
        )
        .unwrap();
        let mut m = MachineConfig::tango_12();
        m.context_switch_cycles = 0;
        let s = policy("round-robin")
            .unwrap()
            .make(&toml::Table::new())
            .unwrap();
        let mut sim = Simulation::new(m, s, 1).unwrap();
        let t = sim.add_task("syn");
        w.install(&mut sim, t).unwrap();
        let r = sim.run().unwrap();
        assert_eq!(r.total.useful, 3 * 4 * 1000);
        // Four bursts and three waits, each thread on its own processor.
        assert_eq!(r.elapsed_cycles, 4 * 1000 + 3 * 500);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = build("threads = 0\nbursts = 1\ncompute = { dist = \"fixed\", value = 1 }");
        assert!(e.err().unwrap().to_string().contains("threads"));
        let e = build("threads = 20000000\nbursts = 1\ncompute = { dist = \"fixed\", value = 1 }");
        assert!(e.err().unwrap().to_string().contains("threads"));
        let e =
            build("threads = 1\nbursts = 1\ncompute = { dist = \"uniform\", min = 5, max = 2 }");
        assert!(e.err().unwrap().to_string().contains("compute"));
        let e = build("threads = 1\nburst = 1\ncompute = { dist = \"fixed\", value = 1 }");
        assert!(e.err().unwrap().to_string().contains("burst"));
    }

    /// Each burst after a wait answers its wake-up: alone on a processor, its response is the
    /// burst itself; two threads sharing one processor, one's burst also waits for the other's.
    #[test]
    fn burst_responses_run_from_the_wake_up_to_the_bursts_end() {
        let run = |threads: u32, processors: u32| {
            let w = build(&format!(
                "threads = {threads}\nbursts = 4\ncompute = {{ dist = \"fixed\", value = 1000 }}\n\
                 block = {{ dist = \"fixed\", value = 500 }}\nburst_response = true"
            ))
            .unwrap();
            let mut m = MachineConfig::tango_12();
            m.context_switch_cycles = 0;
            m.processors = processors;
            let s = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
            let mut sim = Simulation::new(m, s, 1).unwrap();
            let t = sim.add_task("syn");
            w.install(&mut sim, t).unwrap();
            let r = sim.run().unwrap();
            r.apps[0].recorded["burst_response_ms"]
        };
        let ms = 1000.0 / 25_000.0; // 1,000 cycles at 25 MHz
        let alone = run(1, 1);
        assert_eq!(alone.count, 3, "the three bursts after a wait");
        assert!((alone.max - ms).abs() < 1e-12 && (alone.min - ms).abs() < 1e-12);
        let shared = run(2, 1);
        assert_eq!(shared.count, 6);
        assert!(shared.max > 1.4 * ms, "{shared:?}");
        // Off by default: no record.
        let w =
            build("threads = 1\nbursts = 2\ncompute = { dist = \"fixed\", value = 10 }").unwrap();
        let s = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
        let mut sim = Simulation::new(MachineConfig::tango_12(), s, 1).unwrap();
        let t = sim.add_task("syn");
        w.install(&mut sim, t).unwrap();
        assert!(sim.run().unwrap().apps[0].recorded.is_empty());
    }
}
