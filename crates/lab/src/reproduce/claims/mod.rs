//! The claim language: a paper's qualitative statements ("blocking beats busy-waiting", "the
//! handoff time stays flat as threads grow") written as checkable comparisons over measured values.
//!
//! # Grammar
//!
//! ```text
//! claim   := expr cmp expr [ "within" TOL ]            (TOL only after "~=")
//!          | trend "(" METRIC ("," POINT)+ [ "," "within" TOL ] ")"
//! trend   := "increasing" | "decreasing" | "flat"       ("flat" requires the TOL)
//! cmp     := "<" | "<=" | ">" | ">=" | "==" | "!=" | "~="
//! expr    := term (("+" | "-") term)*
//! term    := factor (("*" | "/") factor)*
//! factor  := NUMBER | ref | "(" expr ")" | "-" factor | func "(" expr ("," expr)* ")"
//! ref     := METRIC "(" POINT ")"
//! func    := "min" | "max" | "abs" | "mean"
//! METRIC  := (letter | "_") (letter | digit | "_" | "-" | "." | ":" | "/")*
//! POINT   := (letter | digit | "_" | "-" | "." | ":" | "/" | "=")+
//! NUMBER  := digits ["." digits] [("e" | "E") ["+" | "-"] digits]   (or "." digits)
//! TOL     := "10%" | "±2" | "+-2" | "2 abs"            (see the tolerance module)
//! ```
//!
//! Examples:
//!
//! ```text
//! utilization(gang-25ms) > utilization(priority-blocking)
//! delay(seq:primary-random) <= 0.6 * delay(dfcfs:random)
//! utilization(batch) ~= 74 within 5%
//! throughput(global) < min(throughput(static:random), throughput(random:random))
//! abs(utilization(handoff) - utilization(blocking)) < 2
//! increasing(time-per-sync/mild-ok, threads=3, threads=4, threads=5)
//! flat(time-per-sync/handoff, threads=3, threads=5, threads=7, within 5%)
//! ```
//!
//! Rules that keep the language unambiguous:
//!
//! * A metric name starts with a letter or `_`, so a `-` or digit where a value is expected is
//!   always a minus sign or a number. Names are greedy: `x-y(p)` is the metric `x-y`; after a
//!   closing `)` an operator is expected, so `a(p)-b(q)` subtracts.
//! * A point name holds no spaces, commas or parentheses; write several parameters with `/`, `:`
//!   or `=` (`threads=3`, `schedulers=3/clients=10`). A point named `within` can be referenced
//!   (`m(within)`), and in a trend list it is a point unless a space follows it.
//! * `min`, `max`, `abs`, `mean` are always functions and `increasing`, `decreasing`, `flat`,
//!   `within` are keywords; none of them can be a metric name.
//! * `==` and `!=` compare exactly; use `~=` for "about equal". Without `within`, `~=` allows
//!   [`DEFAULT_APPROX`] (5 %). The tolerance is taken relative to the right-hand side, which is
//!   meant to be the reference (the paper's) side.
//! * `increasing` / `decreasing` require each value to be strictly above / below the previous
//!   one; with `within TOL` a step may go the wrong way by at most the tolerance of the previous
//!   value. `flat` requires every value to be within the tolerance of the values' mean.
//! * `≤`, `≥`, `≠` and `≈` are accepted for `<=`, `>=`, `!=` and `~=`; printing always uses the
//!   ASCII forms.
//!
//! Evaluation never silently passes: a missing value, a division by zero or a result that is NaN
//! or infinite is an [`EvalError`].

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use thiserror::Error;

use super::tolerance::{relative_difference, Tolerance};
use super::{format_number, format_percent};

/// The tolerance `~=` uses when the claim gives none: 5 % of the right-hand side.
pub const DEFAULT_APPROX: Tolerance = Tolerance::Relative(0.05);

/// The deepest expression nesting accepted, so that evaluation and printing stay shallow.
const MAX_DEPTH: usize = 64;

/// A measured value named in a claim: a metric at a point of the experiment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Reference {
    /// The metric's name, e.g. `utilization`.
    pub metric: String,
    /// The point's name, e.g. `gang-25ms`.
    pub point: String,
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.metric, self.point)
    }
}

/// A builtin function usable in expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// The smallest argument (one or more).
    Min,
    /// The largest argument (one or more).
    Max,
    /// The magnitude of its single argument.
    Abs,
    /// The arithmetic mean of its arguments (one or more).
    Mean,
}

impl Func {
    /// The function's name as written in claims.
    pub fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Abs => "abs",
            Func::Mean => "mean",
        }
    }

    /// The builtin with this name, if any.
    pub fn from_name(name: &str) -> Option<Func> {
        match name {
            "min" => Some(Func::Min),
            "max" => Some(Func::Max),
            "abs" => Some(Func::Abs),
            "mean" => Some(Func::Mean),
            _ => None,
        }
    }
}

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl BinOp {
    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }

    fn precedence(self) -> u8 {
        match self {
            BinOp::Add | BinOp::Sub => 1,
            BinOp::Mul | BinOp::Div => 2,
        }
    }
}

/// An arithmetic expression over measured values.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal number.
    Number(f64),
    /// A measured value, `metric(point)`.
    Ref(Reference),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinOp,
        /// The left operand.
        lhs: Box<Expr>,
        /// The right operand.
        rhs: Box<Expr>,
    },
    /// A builtin function applied to its arguments.
    Call {
        /// The function.
        func: Func,
        /// Its arguments (at least one; exactly one for `abs`).
        args: Vec<Expr>,
    },
}

/// How the two sides of a comparison claim are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==` (exact)
    Eq,
    /// `!=` (exact)
    Ne,
    /// `~=`: within a tolerance of the right-hand side.
    Approx,
}

impl Comparison {
    /// The operator as printed.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
            Comparison::Eq => "==",
            Comparison::Ne => "!=",
            Comparison::Approx => "~=",
        }
    }
}

/// The shape a trend claim requires of a metric across an ordered list of points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    /// Each value above the previous one.
    Increasing,
    /// Each value below the previous one.
    Decreasing,
    /// Every value within the tolerance of the mean.
    Flat,
}

impl Trend {
    /// The keyword that introduces the trend.
    pub fn keyword(self) -> &'static str {
        match self {
            Trend::Increasing => "increasing",
            Trend::Decreasing => "decreasing",
            Trend::Flat => "flat",
        }
    }

    fn from_keyword(word: &str) -> Option<Trend> {
        match word {
            "increasing" => Some(Trend::Increasing),
            "decreasing" => Some(Trend::Decreasing),
            "flat" => Some(Trend::Flat),
            _ => None,
        }
    }
}

/// A parsed claim: either a comparison of two expressions or a trend over points.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// `lhs op rhs [within TOL]`.
    Compare {
        /// The left-hand side.
        lhs: Expr,
        /// The comparison.
        op: Comparison,
        /// The right-hand side (the reference side for `~=`).
        rhs: Expr,
        /// The tolerance written after `within` (only for `~=`).
        within: Option<Tolerance>,
    },
    /// `trend(METRIC, P1, P2, ... [, within TOL])`.
    Trend {
        /// Which shape is required.
        trend: Trend,
        /// The metric looked up at every point.
        metric: String,
        /// The points in order (at least two).
        points: Vec<String>,
        /// The tolerance (required for `flat`).
        within: Option<Tolerance>,
    },
}

/// The result of evaluating a claim: whether it holds, the two sides, and a readable detail.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ClaimOutcome {
    /// Whether the claim holds.
    pub holds: bool,
    /// The left-hand value (for trends, the first value; for `flat`, the smallest).
    pub lhs: f64,
    /// The right-hand value (for trends, the last value; for `flat`, the largest).
    pub rhs: f64,
    /// A human-readable account, e.g. `62.1 > 59.8` or `57 > 59.8 is false`.
    pub detail: String,
}

/// Why a claim could not be parsed: where (byte `column`) and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ClaimError {
    /// Byte offset within the claim text.
    pub column: usize,
    /// What was expected and what was found, e.g. "expected `)`, found `,`".
    pub message: String,
}

/// Why a parsed claim could not be decided.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EvalError {
    /// The lookup had no value for a reference.
    #[error("no measured value for `{metric}({point})`")]
    Missing {
        /// The metric asked for.
        metric: String,
        /// The point asked for.
        point: String,
    },
    /// A divisor evaluated to zero.
    #[error("division by zero: `{divisor}` is 0")]
    DivisionByZero {
        /// The divisor expression, printed.
        divisor: String,
    },
    /// A value or result was NaN or infinite.
    #[error("`{expression}` is not a finite number (it is {value})")]
    NotFinite {
        /// The expression or reference, printed.
        expression: String,
        /// The offending value, printed (`NaN`, `inf`, `-inf`).
        value: String,
    },
}

mod display;
mod eval;
mod parse;
mod refs;

pub use eval::Lookup;

#[cfg(test)]
mod tests;
