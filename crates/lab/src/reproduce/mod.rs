//! Reproduction support: the pieces that put the simulator's numbers beside a paper's.
//!
//! A reproduction compares measured values with the numbers a paper printed, each within a
//! [`Tolerance`], and checks the paper's qualitative claims (orderings, ratios, trends) written in
//! a small [claim language](claims). The results are drawn as SVG figures like the papers' own
//! ([`crate::svg`]) and rendered as a Markdown report and a terminal table ([`report`]). Everything here
//! is pure: no file or process access, and the same input always gives byte-identical output.

pub mod agreement;
pub mod claims;
pub mod headline;
pub mod overview;
pub mod reason;

pub mod across;
pub mod across_markdown;
pub mod markdown;
pub mod report;
pub(crate) mod scale;
pub mod summary;
pub mod terminal;
pub mod tolerance;

pub use claims::{Claim, ClaimError, ClaimOutcome, EvalError, Reference};
pub use tolerance::{Tolerance, ToleranceError};

pub use crate::input::format::{format_number, format_percent};
