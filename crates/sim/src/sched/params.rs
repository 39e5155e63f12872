//! Typed policy parameters: a policy's `[scheduler]` table parsed once into its own struct, with
//! errors that name the field ([`ParamError`]) found by construction (the key whose value fails
//! on its own), never by reading the text of `toml`'s message; and the range checks policies
//! share.

use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use super::{Scheduler, Settings};

use crate::config::MachineConfig;
use crate::ids::Cycles;

/// A bad policy parameter: the field (a key of the `[scheduler]` table; empty when no single
/// field is at fault) and what is wrong with it.
#[derive(Debug)]
pub struct ParamError {
    /// The parameter's name as written in the experiment file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl ParamError {
    /// An error about `field`.
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        ParamError {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ParamError {}

/// The parameters of a policy that has none: an empty table, any field refused.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// A policy's parameter struct: parsed from its `[scheduler]` table (every field has a default),
/// checked once, then kept as the policy's [`Settings`] to build a scheduler for each run.
pub trait PolicyParams: DeserializeOwned + Settings + 'static {
    /// The checks the field types do not make (ranges, combinations); an error names its field.
    fn check(&self) -> Result<(), ParamError> {
        Ok(())
    }
}

/// Parses and checks a policy's parameters into its settings (a policy's
/// [`PolicyInfo::parse`](super::PolicyInfo::parse)).
pub fn settings<P: PolicyParams>(table: &toml::Table) -> Result<Arc<dyn Settings>, ParamError> {
    let params: P = parse(table)?;
    params.check()?;
    Ok(Arc::new(params))
}

/// The settings of a policy without parameters (any field refused): `S::default()` for each run.
pub fn no_params<S: Scheduler + Default + 'static>(
    table: &toml::Table,
) -> Result<Arc<dyn Settings>, ParamError> {
    parse::<NoParams>(table)?;
    Ok(Arc::new(Plain::<S>(PhantomData)))
}

/// The settings of a policy without parameters.
struct Plain<S>(PhantomData<fn() -> S>);

impl<S> std::fmt::Debug for Plain<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no parameters")
    }
}

impl<S: Scheduler + Default + 'static> Settings for Plain<S> {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(S::default())
    }
}

/// Parses a policy's parameter table into its struct `P` (every field of which has a default).
/// On failure the field is the first key that fails alone (an unknown name, a wrong type, a
/// value its deserializer refuses).
pub fn parse<P: DeserializeOwned>(table: &toml::Table) -> Result<P, ParamError> {
    let whole = match toml::Value::Table(table.clone()).try_into::<P>() {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    for (key, value) in table {
        let mut one = toml::Table::new();
        one.insert(key.clone(), value.clone());
        if let Err(e) = toml::Value::Table(one).try_into::<P>() {
            return Err(ParamError::new(key, e.message().trim()));
        }
    }
    Err(ParamError::new("", whole.message().trim()))
}

/// Checks a policy's number parameter: finite and within `lo..=hi`, or the error
/// `must be from LO to HI UNIT, got V` about `field`.
pub(crate) fn check_range(
    field: &str,
    v: f64,
    lo: f64,
    hi: f64,
    unit: &str,
) -> Result<(), ParamError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        return Ok(());
    }
    let got = if v.is_finite() && v.abs() >= 1e9 {
        format!("{v:e}")
    } else {
        format!("{v}")
    };
    Err(ParamError::new(
        field,
        format!("must be from {lo} to {hi} {unit}, got {got}"),
    ))
}

/// Longest time a policy's period may be, in milliseconds (one hour of simulated time).
pub(crate) const MAX_PERIOD_MS: f64 = 3_600_000.0;

/// Longest time slice, in milliseconds, wherever a slice is written (`slice_ms`).
pub const MAX_SLICE_MS: f64 = MAX_PERIOD_MS;

/// Deserializes the deprecated `quantum` (the slice in cycles; `slice_ms` replaces it): like the
/// machine's `slice_cycles`, at least one cycle (a zero quantum would preempt at every instant)
/// and at most [`MAX_COST_CYCLES`](crate::config::MAX_COST_CYCLES).
pub(crate) fn de_quantum<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Cycles>, D::Error> {
    let q = <Option<Cycles> as serde::Deserialize>::deserialize(d)?;
    match q {
        Some(c) if c == 0 || c > crate::config::MAX_COST_CYCLES => {
            Err(serde::de::Error::custom(format!(
                "a quantum must be between 1 and {} cycles (like machine.slice_cycles), got {c}",
                crate::config::MAX_COST_CYCLES
            )))
        }
        q => Ok(q),
    }
}

/// Deserializes an optional time slice in milliseconds (`slice_ms`, the one name and unit of a
/// slice wherever a user writes one): positive and at most [`MAX_PERIOD_MS`].
pub(crate) fn de_slice_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let ms = <Option<f64> as serde::Deserialize>::deserialize(d)?;
    match ms {
        Some(v) if !(v.is_finite() && v > 0.0 && v <= MAX_SLICE_MS) => {
            Err(serde::de::Error::custom(format!(
                "a slice must be more than 0 and at most {MAX_SLICE_MS} ms, got {v}"
            )))
        }
        ms => Ok(ms),
    }
}

/// A policy's time slice in cycles: `slice_ms` at the machine's clock (at least one cycle), else
/// the deprecated `quantum` in cycles, else `None` (the machine's slice).
pub(crate) fn slice_cycles(
    slice_ms: Option<f64>,
    quantum: Option<Cycles>,
    machine: &MachineConfig,
) -> Option<Cycles> {
    slice_ms.map(|ms| machine.ms(ms).max(1)).or(quantum)
}

/// Refuses a slice written under both its name and a deprecated one (`old`).
pub(crate) fn one_slice(slice_ms: Option<f64>, old: Option<&str>) -> Result<(), ParamError> {
    match (slice_ms, old) {
        (Some(_), Some(old)) => Err(ParamError::new(
            "slice_ms",
            format!("write the slice once: `slice_ms`, or the deprecated `{old}`, not both"),
        )),
        _ => Ok(()),
    }
}

/// A parameter name kept working, with a note to the user, after it was renamed.
#[derive(Clone, Copy, Debug)]
pub struct Deprecated {
    /// The table it is written in (`scheduler` or `machine`).
    pub table: &'static str,
    /// The old name.
    pub name: &'static str,
    /// What to write instead.
    pub instead: &'static str,
}

/// Every deprecated parameter name still accepted: the slice had four names and three units;
/// it is now `slice_ms` everywhere.
pub const DEPRECATED: &[Deprecated] = &[
    Deprecated {
        table: "machine",
        name: "slice_cycles",
        instead: "`slice_ms`, the machine's time slice in milliseconds (`slice_cycles` was in \
                  cycles)",
    },
    Deprecated {
        table: "scheduler",
        name: "quantum",
        instead: "`slice_ms`, the time slice in milliseconds (`quantum` was in cycles)",
    },
    Deprecated {
        table: "scheduler",
        name: "idle_handoff",
        instead: "`kernel.idle_handoff` under `[machine]`, a property of the kernel under every \
                  policy (Black 1990, section 3.1)",
    },
    Deprecated {
        table: "scheduler",
        name: "quantum_ticks",
        instead: "`slice_ms`, the time slice in milliseconds, which Mach rounds to whole clock \
                  ticks (`quantum_ticks` counted ticks)",
    },
];

/// The note for a deprecated parameter `name` written in `table`, if it is one.
pub fn deprecation(table: &str, name: &str) -> Option<&'static Deprecated> {
    DEPRECATED
        .iter()
        .find(|d| d.table == table && d.name == name)
}
