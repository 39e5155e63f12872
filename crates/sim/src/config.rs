//! The simulated machine: processor count, clock, tick, time slice and kernel costs, with presets
//! for the machines of the papers.
//!
//! Every field can be overridden from an experiment file; [`MachineConfig::validate`] rejects
//! sizes that are meaningless or would exhaust memory before a simulation is built.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::ids::Cycles;
use crate::memory::{MemoryConfig, MemoryError};

/// Most processors a simulated machine may have.
pub const MAX_PROCESSORS: u32 = 65_536;

/// Most threads one simulation may create.
pub const MAX_THREADS: u64 = 10_000_000;

/// Largest fixed cost or interval a machine may state (2^40 cycles, about 18 minutes at 1 GHz):
/// sums of a few such costs can never overflow simulated time.
pub const MAX_COST_CYCLES: Cycles = 1 << 40;

/// Most kernel memory a thread creation may write ([`KernelCosts::thread_bytes`]): 1 MiB.
pub const MAX_THREAD_BYTES: u64 = 1 << 20;

/// The simulated machine. Times are in processor cycles; `clock_mhz` converts the papers'
/// milliseconds into cycles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Name of the preset this configuration started from (informational).
    #[serde(default)]
    pub name: String,
    /// Number of processors.
    pub processors: u32,
    /// Processor clock rate in MHz (cycles per microsecond).
    pub clock_mhz: f64,
    /// Interval between two clock ticks, in cycles (scheduler bookkeeping and tick preemption).
    pub tick_cycles: Cycles,
    /// Default time slice (quantum), in cycles.
    pub slice_cycles: Cycles,
    /// Cost of one context switch, charged as `switch` time to the processor.
    pub context_switch_cycles: Cycles,
    /// Cost of one scheduling decision (run-queue operation), charged as `kernel` time.
    pub sched_op_cycles: Cycles,
    /// Costs of kernel and synchronization operations.
    #[serde(default)]
    pub kernel: KernelCosts,
    /// The memory model (caches, coherence, NUMA). Absent from a file it is off
    /// ([`MemoryConfig::none`]: every reference costs one hit), so results that do not touch
    /// memory are unchanged. In an experiment file, a `[machine.memory]` table overrides the
    /// preset's memory settings field by field (the lab merges nested tables).
    #[serde(default = "MemoryConfig::none")]
    pub memory: MemoryConfig,
}

/// Costs of kernel and synchronization operations, in cycles. Estimates for each preset, not
/// fitted to any one result; every field can be overridden under `[machine.kernel]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KernelCosts {
    /// An uncontended atomic acquire or release of a synchronization variable (user level).
    pub sync_op: Cycles,
    /// Delay before a spinning processor notices that the variable it spins on changed (a
    /// coherence miss).
    pub spin_notice: Cycles,
    /// Kernel work to block a thread on a synchronization object (besides the context switch).
    pub block: Cycles,
    /// Kernel work to wake one blocked thread, charged to the waker.
    pub wake: Cycles,
    /// A `thread_switch` system call (yield, mild discouragement), besides the switch itself.
    pub yield_call: Cycles,
    /// Setting and later cancelling a priority-depression timeout (strong discouragement).
    pub depress: Cycles,
    /// A handoff to a named thread, besides the switch (no run-queue search).
    pub handoff: Cycles,
    /// Kernel work to send or to receive one message.
    pub message: Cycles,
    /// Creating a thread from a running program ([`Op::Spawn`](crate::Op::Spawn)).
    pub spawn: Cycles,
    /// Kernel work of the timer interrupt that ends a quantum (its handler, whether or not it
    /// preempts), charged to the interrupted processor (default 0).
    pub timer: Cycles,
    /// Kernel work when a thread exits (freeing its records), charged to the exiting thread's
    /// processor as kernel time (default 0). The thread has exited when this work is done: its
    /// job's exit time, its application's completion and the run's end come after it.
    pub exit: Cycles,
    /// Bytes of fresh kernel memory a thread creation writes (its kernel stack and control
    /// block), walked through the memory model as kernel time, so that creating threads costs
    /// cache refills (default 0: none).
    pub thread_bytes: u64,
    /// Whether an idle processor spins in the kernel's idle loop (polling its run queue)
    /// rather than sleeping, so that its idle cycles count as kernel cycles and instructions in
    /// the user / kernel split, as a performance counter on such a kernel counts them; the
    /// time split still calls them idle (default false).
    pub idle_in_kernel: bool,
    /// Whether a thread that becomes ready goes straight to an idle processor, which picks it up
    /// without a run-queue search or its cost (Mach's idle-processor handoff, Black 1990,
    /// section 3.1), under any policy (default false).
    pub idle_handoff: bool,
}

impl Default for KernelCosts {
    fn default() -> Self {
        KernelCosts {
            sync_op: 2,
            spin_notice: 20,
            block: 100,
            wake: 100,
            yield_call: 100,
            depress: 200,
            handoff: 100,
            message: 300,
            spawn: 1_000,
            timer: 0,
            exit: 0,
            thread_bytes: 0,
            idle_in_kernel: false,
            idle_handoff: false,
        }
    }
}

impl MachineConfig {
    /// Gupta, Tucker and Urushibara 1991 (Tango): 12 processors at 25 MHz, 250,000-cycle (10 ms)
    /// slice, 500-cycle context switch.
    pub fn tango_12() -> Self {
        MachineConfig {
            name: "tango-12".into(),
            processors: 12,
            clock_mhz: 25.0,
            tick_cycles: 250_000,
            slice_cycles: 250_000,
            context_switch_cycles: 500,
            sched_op_cycles: 0,
            kernel: KernelCosts::default(),
            memory: MemoryConfig::tango(),
        }
    }

    /// Black 1990: an Encore Multimax (NS32332, about 2 MIPS per processor, modelled as 2 MHz
    /// so that a cycle is an instruction) with a 10 Hz scheduler clock and 100 ms quantum. Kernel
    /// costs are estimates of a Mach kernel of that era (hundreds of instructions per operation).
    pub fn multimax() -> Self {
        MachineConfig {
            name: "multimax".into(),
            processors: 16,
            clock_mhz: 2.0,
            tick_cycles: 200_000,
            slice_cycles: 200_000,
            context_switch_cycles: 400,
            sched_op_cycles: 60,
            kernel: KernelCosts {
                sync_op: 4,
                spin_notice: 10,
                block: 150,
                wake: 120,
                yield_call: 150,
                depress: 400,
                handoff: 150,
                message: 450,
                ..KernelCosts::default()
            },
            memory: MemoryConfig::none(),
        }
    }

    /// DiBella et al. 1992: a 16-processor Sequent Symmetry (Intel 80386 at 16 MHz, about 3-4
    /// MIPS), Dynix's 10 ms clock tick (section 3.1: the timer's granularity), the memory model
    /// of [`MemoryConfig::sequent_symmetry`] (caches, one bus) so that the ready queues' lock
    /// and bitmap traffic contends.
    pub fn sequent_symmetry() -> Self {
        MachineConfig {
            name: "sequent-symmetry".into(),
            processors: 16,
            clock_mhz: 16.0,
            tick_cycles: 160_000,
            slice_cycles: 1_600_000,
            context_switch_cycles: 800,
            sched_op_cycles: 100,
            kernel: KernelCosts::default(),
            memory: MemoryConfig::sequent_symmetry(),
        }
    }

    /// George 1990: a BBN Butterfly GP1000 (MC68020 at 16 MHz), up to 256 nodes: one NUMA node
    /// per processor whatever `processors` is (section 1.2), remote references 5 times local.
    pub fn bbn_gp1000() -> Self {
        let mut memory = MemoryConfig::bbn_gp1000(64);
        if let Some(numa) = memory.numa.as_mut() {
            numa.mapping = crate::memory::NodeMapping::PerProcessor;
        }
        MachineConfig {
            name: "bbn-gp1000".into(),
            processors: 64,
            clock_mhz: 16.0,
            tick_cycles: 160_000,
            slice_cycles: 1_600_000,
            context_switch_cycles: 1_000,
            sched_op_cycles: 100,
            kernel: KernelCosts::default(),
            memory,
        }
    }

    /// Weibel: a Raspberry Pi 3 (quad-core Cortex-A53 at 1.2 GHz, 16 KB L1 per core, shared
    /// 128 KB L2, section 2) whose per-core timer preempts every millisecond. Kernel costs are
    /// estimates for a small teaching kernel, not fitted to the paper's tables: a context
    /// switch 6,000 cycles (5 µs), a run-queue operation 600, creating a thread 12,000 cycles
    /// plus writing its 4 KB kernel stack and control block, exiting 6,000, the timer
    /// interrupt's handler 500 (registers saved and restored, the timer re-armed). An idle core spins
    /// in the kernel's idle loop (its cycles are counted as kernel cycles).
    pub fn rpi3() -> Self {
        MachineConfig {
            name: "rpi3".into(),
            processors: 4,
            clock_mhz: 1200.0,
            tick_cycles: 1_200_000,
            slice_cycles: 1_200_000,
            context_switch_cycles: 6_000,
            sched_op_cycles: 600,
            kernel: KernelCosts {
                spawn: 12_000,
                timer: 500,
                exit: 6_000,
                thread_bytes: 4096,
                idle_in_kernel: true,
                ..KernelCosts::default()
            },
            memory: MemoryConfig::cortex_a53(),
        }
    }

    /// The built-in machines, in the order listings show them.
    pub const PRESETS: &'static [Preset] = &[
        Preset {
            name: "tango-12",
            summary: "Gupta, Tucker and Urushibara 1991 (Tango): 12 processors at 25 MHz, 64 KB \
                      caches of 16-byte lines (hit 1, miss 20 cycles), 10 ms slice",
            build: MachineConfig::tango_12,
        },
        Preset {
            name: "multimax",
            summary: "Black 1990: an Encore Multimax, 16 processors at about 2 MIPS (a cycle is \
                      an instruction), 100 ms quantum, Mach kernel costs",
            build: MachineConfig::multimax,
        },
        Preset {
            name: "sequent-symmetry",
            summary:
                "DiBella et al. 1992: a 16-processor Sequent Symmetry (80386 at 16 MHz), 64 KB \
                      two-way caches with 16-byte lines on one bus, 10 ms tick",
            build: MachineConfig::sequent_symmetry,
        },
        Preset {
            name: "bbn-gp1000",
            summary: "George 1990: a BBN Butterfly GP1000 (68020 at 16 MHz), NUMA with remote \
                      references 5 times local",
            build: MachineConfig::bbn_gp1000,
        },
        Preset {
            name: "rpi3",
            summary:
                "Weibel: a Raspberry Pi 3, four Cortex-A53 cores at 1.2 GHz, 16 KB L1 per core, \
                      shared 128 KB L2, 1 ms tick",
            build: MachineConfig::rpi3,
        },
    ];

    /// The preset of that name, if there is one.
    pub fn preset(name: &str) -> Option<Self> {
        Self::PRESETS
            .iter()
            .find(|p| p.name == name)
            .map(|p| (p.build)())
    }

    /// Names of the built-in presets, for listings and error messages.
    pub fn preset_names() -> Vec<&'static str> {
        Self::PRESETS.iter().map(|p| p.name).collect()
    }

    /// Cycles in `ms` milliseconds at this machine's clock rate.
    pub fn ms(&self, ms: f64) -> Cycles {
        (ms * self.clock_mhz * 1000.0).round() as Cycles
    }

    /// Microseconds taken by `cycles` at this machine's clock rate.
    pub fn to_us(&self, cycles: Cycles) -> f64 {
        cycles as f64 / self.clock_mhz
    }

    /// Checks that every size is meaningful and bounded.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.processors == 0 || self.processors > MAX_PROCESSORS {
            return Err(ConfigError::new(
                "processors",
                format!(
                    "must be between 1 and {MAX_PROCESSORS}, got {}",
                    self.processors
                ),
            ));
        }
        if !(self.clock_mhz.is_finite() && self.clock_mhz > 0.0 && self.clock_mhz <= 1.0e6) {
            return Err(ConfigError::new(
                "clock_mhz",
                format!(
                    "must be a clock rate in MHz above 0 and at most 1000000, got {:e}",
                    self.clock_mhz
                ),
            ));
        }
        if self.tick_cycles == 0 {
            return Err(ConfigError::new("tick_cycles", "must be at least 1 cycle"));
        }
        if self.slice_cycles == 0 {
            return Err(ConfigError::new("slice_cycles", "must be at least 1 cycle"));
        }
        let k = &self.kernel;
        for (field, value) in [
            ("tick_cycles", self.tick_cycles),
            ("slice_cycles", self.slice_cycles),
            ("context_switch_cycles", self.context_switch_cycles),
            ("sched_op_cycles", self.sched_op_cycles),
            ("kernel.sync_op", k.sync_op),
            ("kernel.spin_notice", k.spin_notice),
            ("kernel.block", k.block),
            ("kernel.wake", k.wake),
            ("kernel.yield_call", k.yield_call),
            ("kernel.depress", k.depress),
            ("kernel.handoff", k.handoff),
            ("kernel.message", k.message),
            ("kernel.spawn", k.spawn),
            ("kernel.exit", k.exit),
            ("kernel.timer", k.timer),
        ] {
            if value > MAX_COST_CYCLES {
                return Err(ConfigError::new(
                    field,
                    format!("must be at most {MAX_COST_CYCLES} cycles (2^40), got {value}"),
                ));
            }
        }
        if k.thread_bytes > MAX_THREAD_BYTES {
            return Err(ConfigError::new(
                "kernel.thread_bytes",
                format!(
                    "must be at most {MAX_THREAD_BYTES} bytes (1 MiB), got {}",
                    k.thread_bytes
                ),
            ));
        }
        self.memory
            .validate(self.processors)
            .map_err(ConfigError::from)?;
        Ok(())
    }
}

/// A configuration value that cannot be simulated, naming the field at fault.
#[derive(Clone, Debug, Error, PartialEq)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// The field at fault, as written in an experiment file (e.g. `processors`).
    pub field: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl From<MemoryError> for ConfigError {
    /// A memory-model error about field `f` becomes an error about `memory.f`.
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::InvalidConfig { field, reason } => {
                ConfigError::new(format!("memory.{field}"), reason)
            }
            MemoryError::InvalidProcessors { count, max } => ConfigError::new(
                "processors",
                format!("{count} is not valid; the memory model supports 1 to {max} processors"),
            ),
        }
    }
}

impl ConfigError {
    /// A new error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A built-in machine: its name, the paper and machine it models, and how to build it.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The name used in `[machine] preset = ...`.
    pub name: &'static str,
    /// The paper and the machine it models, in one line.
    pub summary: &'static str,
    /// Builds the configuration.
    pub build: fn() -> MachineConfig,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_named() {
        for p in MachineConfig::PRESETS {
            let m = MachineConfig::preset(p.name).unwrap();
            assert_eq!(m.name, p.name);
            m.validate().unwrap();
        }
        assert!(MachineConfig::preset("cray").is_none());
    }

    #[test]
    fn tango_converts_ms() {
        let m = MachineConfig::tango_12();
        assert_eq!(m.ms(10.0), 250_000);
        assert_eq!(m.to_us(25), 1.0);
    }

    #[test]
    fn absurd_sizes_are_rejected_with_field() {
        let mut m = MachineConfig::tango_12();
        m.processors = 100_000;
        assert_eq!(m.validate().unwrap_err().field, "processors");
        m.processors = 0;
        assert_eq!(m.validate().unwrap_err().field, "processors");
        let mut m = MachineConfig::tango_12();
        m.slice_cycles = 0;
        assert_eq!(m.validate().unwrap_err().field, "slice_cycles");
        let mut m = MachineConfig::tango_12();
        m.memory.line_bytes = 3;
        assert_eq!(m.validate().unwrap_err().field, "memory.line_bytes");
        m.memory.line_bytes = 16;
        m.memory.chunk_cycles = 0;
        assert_eq!(m.validate().unwrap_err().field, "memory.chunk_cycles");
    }

    #[test]
    fn memory_defaults_off_and_presets_choose_a_model() {
        let m: MachineConfig = toml::from_str(
            "processors = 2\nclock_mhz = 1.0\ntick_cycles = 10\nslice_cycles = 10\n\
             context_switch_cycles = 0\nsched_op_cycles = 0\n",
        )
        .unwrap();
        assert!(!m.memory.enabled);
        assert!(MachineConfig::tango_12().memory.enabled);
        let bbn = MachineConfig::bbn_gp1000();
        assert_eq!(
            bbn.memory.numa.as_ref().map(|n| n.nodes),
            Some(bbn.processors)
        );
        let rpi3 = MachineConfig::rpi3();
        assert_eq!(rpi3.memory, MemoryConfig::cortex_a53());
        assert_eq!(
            rpi3.memory.l2.as_ref().map(|l2| l2.cache_bytes),
            Some(128 * 1024)
        );
        rpi3.validate().unwrap();
        let mut bad = rpi3;
        bad.kernel.thread_bytes = MAX_THREAD_BYTES + 1;
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("thread_bytes"));
    }
}
