//! The four parallel applications of Gupta, Tucker and Urushibara 1991 (section 3): MP3D, LU,
//! Maxflow and Matmul, each running its algorithm's real control flow and synchronization and
//! issuing its references to its real data layout through the memory model, so that cache
//! behaviour under each scheduling policy emerges rather than being assumed.
//!
//! What the four share lives here:
//! - **Locks and waits** follow the experiment's synchronization method (section 5): busy-waiting
//!   (`spin_cycles` absent) or spin-then-block (`spin_cycles = 500` in the paper), through the
//!   simulator's synchronization objects, so spinning and blocking are simulated, not assumed.
//! - **Handoff** (section 5.1): with `handoff = true`, a process that stops spinning hands its
//!   processor to the process it waits for (a lock's holder, a column's owner) when that one is
//!   ready but not running ([`AfterSpin::HandoffToHolder`]), instead of blocking.
//! - **Compute per reference**: each application's instructions between data references, in
//!   cycles per reference, a property of the application calibrated once from Table 1 (see
//!   [`calibrated_cpr`]) and never per policy.
//! - A [`Plan`]: the operations a program has decided and not yet issued.
//!
//! Invariant: an application's Rust-side state (who holds a lock, which column is ready) changes
//! only in `Program::next`, at the simulated moment the operation that changes it is issued, so
//! the single-threaded engine orders it exactly as the simulated references.

use std::collections::VecDeque;

use smpsched_sim::memory::{AccessKind, BulkAccess};
use smpsched_sim::sync::AfterSpin;
use smpsched_sim::{Cycles, Op, WaitPolicy};

pub use crate::control::Control;

pub mod anl;
pub mod lu;
pub mod matmul;
pub mod maxflow;
pub mod maxflow_graph;
mod maxflow_process;
mod maxflow_shared;
pub mod mp3d;

/// The parameters every application of Gupta et al. has, after its own: processes, the
/// synchronization method, handoff and compute per reference.
#[macro_export]
macro_rules! gupta_params {
    ($cpr:literal, $($own:expr),* $(,)?) => {
        &[
            $($own,)*
            ParamInfo {
                name: "processes",
                default: "12",
                doc: "processes of the application",
            },
            ParamInfo {
                name: "spin_cycles",
                default: "(absent: busy-wait)",
                doc: "cycles a waiter spins before blocking (500 in the paper's blocking locks); no effect where nothing waits (Matmul)",
            },
            ParamInfo {
                name: "handoff",
                default: "false",
                doc: "with spin_cycles, hand the processor to the lock's holder when it is ready but not running (section 5.1); no effect under busy-waiting, nor where no one holds what is waited for (MP3D's barriers, Matmul)",
            },
            ParamInfo {
                name: "compute_per_ref",
                default: $cpr,
                doc: "compute cycles per data reference, calibrated once from Table 1",
            },
        ]
    };
}

/// Bytes of a double, the element of every application's arrays.
pub const WORD: u64 = 8;

/// The wait policy of an application's locks and events: busy-wait when `spin` is absent, else
/// spin that many cycles, then block, or with `handoff` hand the processor to the lock's holder
/// (the event's named owner) when it is ready but not running.
pub fn wait_policy(spin: Option<Cycles>, handoff: bool) -> WaitPolicy {
    let mut w = match spin {
        None => WaitPolicy::SPIN,
        Some(c) => WaitPolicy::spin_then_block(c),
    };
    if handoff {
        w.after = AfterSpin::HandoffToHolder;
    }
    w
}

/// Compute cycles per data reference implied by one row of Table 1 (12 processes on 12
/// processors): useful cycles (`cycles * utilization`) less one cycle per hit, over the
/// references. Hits cost one cycle of useful time in the memory model; misses are stall.
pub fn calibrated_cpr(cycles_m: f64, utilization: f64, refs_m: f64, misses_m: f64) -> f64 {
    (cycles_m * utilization - (refs_m - misses_m)) / refs_m
}

/// Operations decided and not yet issued, in order.
#[derive(Debug, Default)]
pub struct Plan(VecDeque<Op>);

impl Plan {
    /// The next operation, if any is planned.
    pub fn pop(&mut self) -> Option<Op> {
        self.0.pop_front()
    }

    /// Plans `op` after the others.
    pub fn push(&mut self, op: Op) {
        self.0.push_back(op);
    }

    /// Plans a strided sweep of `len` bytes at `base` (elements of [`WORD`] bytes), `passes`
    /// times.
    pub fn sweep(&mut self, base: u64, len: u64, kind: AccessKind, passes: u32) -> u64 {
        self.sweep_by(base, len, WORD, kind, passes)
    }

    /// Plans a sweep like [`Plan::sweep`] of elements `stride` bytes apart; returns its references.
    pub fn sweep_by(
        &mut self,
        base: u64,
        len: u64,
        stride: u64,
        kind: AccessKind,
        passes: u32,
    ) -> u64 {
        if len == 0 || passes == 0 {
            return 0;
        }
        let b = BulkAccess::new(base, len, stride, kind, passes);
        let refs = b.total_refs();
        self.push(Op::Mem(b));
        refs
    }

    /// Plans the instructions between `refs` references: `refs * cpr` cycles of computation.
    pub fn compute(&mut self, refs: u64, cpr: f64) {
        let c = (refs as f64 * cpr).round() as Cycles;
        if c > 0 {
            self.push(Op::Compute(c));
        }
    }
}

/// Checks a count parameter is between 1 and `max`, naming it in the error.
pub fn check_count<E: serde::de::Error>(name: &str, v: u64, max: u64) -> Result<(), E> {
    if v == 0 || v > max {
        return Err(E::custom(format!(
            "{name}: must be between 1 and {max}, got {v}"
        )));
    }
    Ok(())
}

/// Checks compute cycles per reference is finite, non-negative and at most 1000.
pub fn check_cpr<E: serde::de::Error>(cpr: f64) -> Result<(), E> {
    if !(cpr.is_finite() && (0.0..=1000.0).contains(&cpr)) {
        return Err(E::custom(format!(
            "compute_per_ref: must be between 0 and 1000 cycles, got {cpr}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_application_computes_what_table_1_implies() {
        // The defaults the workloads use against the MP3D, LU, Maxflow, Matmul rows of Table 1
        // (12 processes on 12 processors: cycles, utilization, references, misses).
        let defaults = [
            super::mp3d::Mp3d::default().compute_per_ref,
            super::lu::Lu::default().compute_per_ref,
            super::maxflow::Maxflow::default().compute_per_ref,
            super::matmul::Matmul::default().compute_per_ref,
        ];
        let table_1 = [
            calibrated_cpr(160.0, 0.66, 38.0, 2.7),
            calibrated_cpr(93.0, 0.81, 17.0, 0.7),
            calibrated_cpr(194.0, 0.64, 48.0, 3.1),
            calibrated_cpr(600.0, 0.87, 107.0, 4.0),
        ];
        for (d, t) in defaults.iter().zip(table_1) {
            assert!((d - t).abs() < 0.01, "default {d} against Table 1's {t}");
        }
    }
}
