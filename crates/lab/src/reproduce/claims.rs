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

// ---------------------------------------------------------------------------------------------
// Parsing

impl Claim {
    /// Parses a claim; errors give the byte column and what was expected there.
    pub fn parse(text: &str) -> Result<Claim, ClaimError> {
        Parser::new(text).claim()
    }

    /// The measured values the claim reads, in order of first appearance, without duplicates.
    pub fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        match self {
            Claim::Compare { lhs, rhs, .. } => {
                collect_refs(lhs, &mut out);
                collect_refs(rhs, &mut out);
            }
            Claim::Trend { metric, points, .. } => {
                for point in points {
                    push_unique(
                        &mut out,
                        Reference {
                            metric: metric.clone(),
                            point: point.clone(),
                        },
                    );
                }
            }
        }
        out
    }
}

fn push_unique(out: &mut Vec<Reference>, reference: Reference) {
    if !out.contains(&reference) {
        out.push(reference);
    }
}

fn collect_refs(expr: &Expr, out: &mut Vec<Reference>) {
    match expr {
        Expr::Number(_) => {}
        Expr::Ref(reference) => push_unique(out, reference.clone()),
        Expr::Neg(inner) => collect_refs(inner, out),
        Expr::Binary { lhs, rhs, .. } => {
            collect_refs(lhs, out);
            collect_refs(rhs, out);
        }
        Expr::Call { args, .. } => args.iter().for_each(|arg| collect_refs(arg, out)),
    }
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')
}

fn is_point_char(c: char) -> bool {
    is_name_char(c) || c == '='
}

fn is_reserved(word: &str) -> bool {
    Func::from_name(word).is_some() || Trend::from_keyword(word).is_some() || word == "within"
}

/// The list of comparison operators, quoted in error messages.
const COMPARISONS: &str = "a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=` or `~=`)";

/// What may start a value, quoted in error messages.
const VALUE: &str =
    "a value (a number, `metric(point)`, `(`, `-`, or `min`/`max`/`abs`/`mean(...)`)";

/// A scannerless recursive-descent parser over the claim text; `pos` is a byte offset.
struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

/// A parsed expression with its tree depth, used to bound recursion.
type Node = (Expr, usize);

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser { src, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    /// Consumes `word` if it stands alone: followed by whitespace or the end of the text.
    fn eat_keyword(&mut self, word: &str) -> bool {
        let rest = self.rest();
        match rest.strip_prefix(word) {
            Some(after) if after.chars().next().is_none_or(char::is_whitespace) => {
                self.pos += word.len();
                true
            }
            _ => false,
        }
    }

    fn scan_while(&mut self, accept: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        let rest = self.rest();
        let len = rest
            .char_indices()
            .find(|&(_, c)| !accept(c))
            .map_or(rest.len(), |(index, _)| index);
        self.pos += len;
        &self.src[start..start + len]
    }

    /// A short description of what stands at `pos`, for "found ..." in messages.
    fn found(&self) -> String {
        let rest = self.rest();
        let Some(first) = rest.chars().next() else {
            return "the end of the claim".to_string();
        };
        let token: String = if is_point_char(first) {
            rest.chars()
                .take_while(|&c| is_point_char(c))
                .take(24)
                .collect()
        } else if let Some(two) = ["<=", ">=", "==", "!=", "~=", "+-"]
            .iter()
            .find(|op| rest.starts_with(*op))
        {
            (*two).to_string()
        } else {
            first.to_string()
        };
        format!("`{token}`")
    }

    fn error_here(&self, expected: &str) -> ClaimError {
        ClaimError {
            column: self.pos,
            message: format!("expected {expected}, found {}", self.found()),
        }
    }

    fn error_at(column: usize, message: impl Into<String>) -> ClaimError {
        ClaimError {
            column,
            message: message.into(),
        }
    }

    fn expect(&mut self, token: &str, expected: &str) -> Result<(), ClaimError> {
        self.skip_ws();
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error_here(expected))
        }
    }

    fn claim(&mut self) -> Result<Claim, ClaimError> {
        self.skip_ws();
        if self.peek().is_some_and(is_name_start) {
            let start = self.pos;
            let word = self.scan_while(is_name_char);
            if let Some(trend) = Trend::from_keyword(word) {
                return self.trend(trend);
            }
            self.pos = start;
        }
        let (lhs, _) = self.expr(0)?;
        self.skip_ws();
        let op = self.comparison()?;
        let (rhs, _) = self.expr(0)?;
        self.skip_ws();
        let within_column = self.pos;
        let within = if self.eat_keyword("within") {
            if op != Comparison::Approx {
                return Err(Self::error_at(
                    within_column,
                    format!(
                        "`within` only applies to `~=`; `{}` compares exactly",
                        op.symbol()
                    ),
                ));
            }
            let column = self.pos;
            let text = self.rest();
            self.pos = self.src.len();
            Some(Tolerance::parse(text).map_err(|err| {
                let err = err.shifted(column);
                Self::error_at(err.column(), err.to_string())
            })?)
        } else {
            None
        };
        self.skip_ws();
        if self.pos < self.src.len() {
            let expected = if op == Comparison::Approx {
                "an operator (`+`, `-`, `*`, `/`), `within TOL` or the end of the claim"
            } else {
                "an operator (`+`, `-`, `*`, `/`) or the end of the claim"
            };
            return Err(self.error_here(expected));
        }
        Ok(Claim::Compare {
            lhs,
            op,
            rhs,
            within,
        })
    }

    fn comparison(&mut self) -> Result<Comparison, ClaimError> {
        const TABLE: [(&str, Comparison); 11] = [
            ("<=", Comparison::Le),
            (">=", Comparison::Ge),
            ("==", Comparison::Eq),
            ("!=", Comparison::Ne),
            ("~=", Comparison::Approx),
            ("≤", Comparison::Le),
            ("≥", Comparison::Ge),
            ("≠", Comparison::Ne),
            ("≈", Comparison::Approx),
            ("<", Comparison::Lt),
            (">", Comparison::Gt),
        ];
        for (token, op) in TABLE {
            if self.eat(token) {
                return Ok(op);
            }
        }
        if self.rest().starts_with('=') {
            return Err(Self::error_at(
                self.pos,
                format!("expected {COMPARISONS}, found `=`; write `==` for equality"),
            ));
        }
        Err(self.error_here(&format!(
            "an operator (`+`, `-`, `*`, `/`) or {COMPARISONS}"
        )))
    }

    fn trend(&mut self, trend: Trend) -> Result<Claim, ClaimError> {
        let keyword = trend.keyword();
        self.expect(
            "(",
            &format!("`(` after `{keyword}` (a trend is written `{keyword}(metric, p1, p2, ...)`)"),
        )?;
        self.skip_ws();
        let metric_column = self.pos;
        if !self.peek().is_some_and(is_name_start) {
            return Err(self.error_here("a metric name"));
        }
        let metric = self.scan_while(is_name_char).to_string();
        if is_reserved(&metric) {
            return Err(Self::error_at(
                metric_column,
                format!("`{metric}` is a reserved word and cannot be a metric name"),
            ));
        }
        let mut points = Vec::new();
        let mut within = None;
        loop {
            self.skip_ws();
            if self.eat(")") {
                break;
            }
            self.expect(",", "`,` or `)`")?;
            self.skip_ws();
            if self.eat_keyword("within") {
                self.skip_ws();
                let column = self.pos;
                let Some(end) = self.rest().find(')') else {
                    self.pos = self.src.len();
                    return Err(self.error_here("a tolerance and then `)`"));
                };
                let text = &self.rest()[..end];
                within = Some(Tolerance::parse(text).map_err(|err| {
                    let err = err.shifted(column);
                    Self::error_at(err.column(), err.to_string())
                })?);
                self.pos += end;
                self.expect(")", "`)` after the tolerance")?;
                break;
            }
            let point = self.scan_while(is_point_char);
            if point.is_empty() {
                let expected = if points.is_empty() {
                    "a point name"
                } else {
                    "a point name or `within TOL`"
                };
                return Err(self.error_here(expected));
            }
            points.push(point.to_string());
        }
        let close = self.pos.saturating_sub(1);
        if points.len() < 2 {
            return Err(Self::error_at(
                close,
                format!(
                    "`{keyword}(...)` needs a metric and at least two points, found {}",
                    points.len()
                ),
            ));
        }
        if trend == Trend::Flat && within.is_none() {
            return Err(Self::error_at(
                close,
                "`flat(...)` needs a tolerance: end the list with `, within 10%` (or `±2`)",
            ));
        }
        self.skip_ws();
        if self.pos < self.src.len() {
            return Err(self.error_here(&format!(
                "the end of the claim after `{keyword}(...)`; a trend is a whole claim"
            )));
        }
        Ok(Claim::Trend {
            trend,
            metric,
            points,
            within,
        })
    }

    fn expr(&mut self, depth: usize) -> Result<Node, ClaimError> {
        let (mut lhs, mut lhs_depth) = self.term(depth)?;
        loop {
            self.skip_ws();
            let op = if self.eat("+") {
                BinOp::Add
            } else if self.rest().starts_with('-') {
                self.pos += 1;
                BinOp::Sub
            } else {
                return Ok((lhs, lhs_depth));
            };
            let (rhs, rhs_depth) = self.term(depth)?;
            (lhs, lhs_depth) = self.binary(op, lhs, lhs_depth, rhs, rhs_depth)?;
        }
    }

    fn term(&mut self, depth: usize) -> Result<Node, ClaimError> {
        let (mut lhs, mut lhs_depth) = self.factor(depth)?;
        loop {
            self.skip_ws();
            let op = if self.eat("*") {
                BinOp::Mul
            } else if self.eat("/") {
                BinOp::Div
            } else {
                return Ok((lhs, lhs_depth));
            };
            let (rhs, rhs_depth) = self.factor(depth)?;
            (lhs, lhs_depth) = self.binary(op, lhs, lhs_depth, rhs, rhs_depth)?;
        }
    }

    fn binary(
        &self,
        op: BinOp,
        lhs: Expr,
        lhs_depth: usize,
        rhs: Expr,
        rhs_depth: usize,
    ) -> Result<Node, ClaimError> {
        let depth = 1 + lhs_depth.max(rhs_depth);
        self.check_depth(depth)?;
        let expr = Expr::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        };
        Ok((expr, depth))
    }

    fn check_depth(&self, depth: usize) -> Result<(), ClaimError> {
        if depth > MAX_DEPTH {
            Err(Self::error_at(
                self.pos,
                format!("the expression is nested too deeply (more than {MAX_DEPTH} levels)"),
            ))
        } else {
            Ok(())
        }
    }

    fn factor(&mut self, depth: usize) -> Result<Node, ClaimError> {
        self.check_depth(depth + 1)?;
        self.skip_ws();
        let start = self.pos;
        let Some(first) = self.peek() else {
            return Err(self.error_here(VALUE));
        };
        match first {
            '(' => {
                self.pos += 1;
                let node = self.expr(depth + 1)?;
                self.expect(")", "`)` or an operator (`+`, `-`, `*`, `/`)")?;
                Ok(node)
            }
            '-' => {
                self.pos += 1;
                let (inner, inner_depth) = self.factor(depth + 1)?;
                self.check_depth(inner_depth + 1)?;
                Ok((Expr::Neg(Box::new(inner)), inner_depth + 1))
            }
            c if c.is_ascii_digit() || c == '.' => self.number().map(|n| (Expr::Number(n), 1)),
            c if is_name_start(c) => {
                let name = self.scan_while(is_name_char);
                if let Some(func) = Func::from_name(name) {
                    return self.call(func, start, depth);
                }
                if Trend::from_keyword(name).is_some() {
                    return Err(Self::error_at(
                        start,
                        format!(
                            "`{name}(...)` is a whole claim and cannot be used inside an expression"
                        ),
                    ));
                }
                if name == "within" {
                    return Err(Self::error_at(
                        start,
                        format!("expected {VALUE}, found the keyword `within`"),
                    ));
                }
                self.skip_ws();
                if !self.eat("(") {
                    return Err(self.error_here(&format!(
                        "`(` after the metric name `{name}` (a measured value is written \
                         `metric(point)`)"
                    )));
                }
                self.skip_ws();
                let point = self.scan_while(is_point_char);
                if point.is_empty() {
                    return Err(self.error_here(&format!("a point name in `{name}(...)`")));
                }
                let reference = Reference {
                    metric: name.to_string(),
                    point: point.to_string(),
                };
                self.expect(")", "`)` after the point name")?;
                Ok((Expr::Ref(reference), 1))
            }
            _ => Err(self.error_here(VALUE)),
        }
    }

    fn call(&mut self, func: Func, start: usize, depth: usize) -> Result<Node, ClaimError> {
        let name = func.name();
        self.skip_ws();
        if !self.eat("(") {
            return Err(self.error_here(&format!(
                "`(` after `{name}` (`{name}` is a builtin function, not a metric)"
            )));
        }
        let mut args = Vec::new();
        let mut max_depth = 0;
        loop {
            let (arg, arg_depth) = self.expr(depth + 1)?;
            args.push(arg);
            max_depth = max_depth.max(arg_depth);
            self.skip_ws();
            if self.eat(")") {
                break;
            }
            if !self.eat(",") {
                return Err(self.error_here(&format!(
                    "`,` or `)` in `{name}(...)`, or an operator (`+`, `-`, `*`, `/`)"
                )));
            }
        }
        if func == Func::Abs && args.len() != 1 {
            return Err(Self::error_at(
                start,
                format!("`abs` takes exactly one argument, found {}", args.len()),
            ));
        }
        let node_depth = max_depth + 1;
        self.check_depth(node_depth)?;
        Ok((Expr::Call { func, args }, node_depth))
    }

    fn number(&mut self) -> Result<f64, ClaimError> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let digits = |mut at: usize| {
            while at < bytes.len() && bytes[at].is_ascii_digit() {
                at += 1;
            }
            at
        };
        let mut end = digits(start);
        let integer_digits = end - start;
        if end < bytes.len() && bytes[end] == b'.' {
            let after = digits(end + 1);
            if integer_digits == 0 && after == end + 1 {
                return Err(self.error_here(VALUE));
            }
            end = after;
        }
        if end < bytes.len() && matches!(bytes[end], b'e' | b'E') {
            let mut exp = end + 1;
            if exp < bytes.len() && matches!(bytes[exp], b'+' | b'-') {
                exp += 1;
            }
            let exp_end = digits(exp);
            if exp_end > exp {
                end = exp_end;
            }
        }
        let text = &self.src[start..end];
        let value: f64 = text
            .parse()
            .map_err(|_| Self::error_at(start, format!("`{text}` is not a valid number")))?;
        if !value.is_finite() {
            return Err(Self::error_at(
                start,
                format!("the number `{text}` is too large"),
            ));
        }
        self.pos = end;
        Ok(value)
    }
}

impl FromStr for Claim {
    type Err = ClaimError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Claim::parse(text)
    }
}

impl Serialize for Claim {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Claim {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Claim::parse(&text).map_err(|err| {
            de::Error::custom(format!("claim column {}: {}", err.column + 1, err.message))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Printing

/// Prints a literal so that it parses back to the same value (shortest round-trip form).
fn literal(value: f64) -> String {
    let magnitude = value.abs();
    if value != 0.0 && !(1e-5..1e15).contains(&magnitude) {
        format!("{value:e}")
    } else {
        format!("{}", value + 0.0)
    }
}

fn precedence(expr: &Expr) -> u8 {
    match expr {
        Expr::Binary { op, .. } => op.precedence(),
        _ => 3,
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Number(value) => f.write_str(&literal(*value)),
            Expr::Ref(reference) => write!(f, "{reference}"),
            Expr::Neg(inner) => {
                if precedence(inner) < 3 {
                    write!(f, "-({inner})")
                } else {
                    write!(f, "-{inner}")
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                let prec = op.precedence();
                if precedence(lhs) < prec {
                    write!(f, "({lhs})")?;
                } else {
                    write!(f, "{lhs}")?;
                }
                write!(f, " {} ", op.symbol())?;
                if precedence(rhs) <= prec {
                    write!(f, "({rhs})")
                } else {
                    write!(f, "{rhs}")
                }
            }
            Expr::Call { func, args } => {
                write!(f, "{}(", func.name())?;
                for (index, arg) in args.iter().enumerate() {
                    if index > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::Compare {
                lhs,
                op,
                rhs,
                within,
            } => {
                write!(f, "{lhs} {} {rhs}", op.symbol())?;
                if let Some(tolerance) = within {
                    write!(f, " within {tolerance}")?;
                }
                Ok(())
            }
            Claim::Trend {
                trend,
                metric,
                points,
                within,
            } => {
                write!(f, "{}({metric}", trend.keyword())?;
                for point in points {
                    write!(f, ", {point}")?;
                }
                if let Some(tolerance) = within {
                    write!(f, ", within {tolerance}")?;
                }
                f.write_str(")")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/// Looks up the value of `metric` at `point`, or `None` when it was not measured.
pub type Lookup<'a> = dyn Fn(&str, &str) -> Option<f64> + 'a;

fn finite(value: f64, expression: impl FnOnce() -> String) -> Result<f64, EvalError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(EvalError::NotFinite {
            expression: expression(),
            value: format_number(value),
        })
    }
}

fn lookup_ref(metric: &str, point: &str, lookup: &Lookup<'_>) -> Result<f64, EvalError> {
    let value = lookup(metric, point).ok_or_else(|| EvalError::Missing {
        metric: metric.to_string(),
        point: point.to_string(),
    })?;
    finite(value, || format!("{metric}({point})"))
}

impl Expr {
    /// Evaluates the expression; missing values, division by zero and non-finite results are
    /// errors.
    pub fn evaluate(&self, lookup: &Lookup<'_>) -> Result<f64, EvalError> {
        let value = match self {
            Expr::Number(value) => *value,
            Expr::Ref(reference) => lookup_ref(&reference.metric, &reference.point, lookup)?,
            Expr::Neg(inner) => -inner.evaluate(lookup)?,
            Expr::Binary { op, lhs, rhs } => {
                let left = lhs.evaluate(lookup)?;
                let right = rhs.evaluate(lookup)?;
                match op {
                    BinOp::Add => left + right,
                    BinOp::Sub => left - right,
                    BinOp::Mul => left * right,
                    BinOp::Div => {
                        if right == 0.0 {
                            return Err(EvalError::DivisionByZero {
                                divisor: rhs.to_string(),
                            });
                        }
                        left / right
                    }
                }
            }
            Expr::Call { func, args } => {
                let values = args
                    .iter()
                    .map(|arg| arg.evaluate(lookup))
                    .collect::<Result<Vec<f64>, EvalError>>()?;
                match func {
                    Func::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
                    Func::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    Func::Abs => values.first().copied().unwrap_or(f64::NAN).abs(),
                    Func::Mean => values.iter().sum::<f64>() / values.len() as f64,
                }
            }
        };
        finite(value, || self.to_string())
    }
}

/// Formats two values, with full precision when the short forms would look equal.
fn show_pair(a: f64, b: f64) -> (String, String) {
    let (short_a, short_b) = (format_number(a), format_number(b));
    if short_a == short_b && a != b {
        (literal(a), literal(b))
    } else {
        (short_a, short_b)
    }
}

/// How far `value` is from `reference`, in the tolerance's unit, e.g. `+3.8%` or `+0.25`.
fn offset(tolerance: Tolerance, value: f64, reference: f64) -> String {
    match tolerance {
        Tolerance::Relative(_) => match relative_difference(value, reference) {
            Some(fraction) => format_percent(fraction),
            None => signed(value - reference),
        },
        Tolerance::Absolute(_) => signed(value - reference),
    }
}

fn signed(value: f64) -> String {
    if value > 0.0 {
        format!("+{}", format_number(value))
    } else {
        format_number(value)
    }
}

impl Claim {
    /// Decides the claim with values from `lookup(metric, point)`.
    ///
    /// Errors (never a silent pass) for a missing value, a division by zero, or a NaN or infinite
    /// value anywhere in the computation.
    pub fn evaluate(&self, lookup: &Lookup<'_>) -> Result<ClaimOutcome, EvalError> {
        match self {
            Claim::Compare {
                lhs,
                op,
                rhs,
                within,
            } => {
                let left = lhs.evaluate(lookup)?;
                let right = rhs.evaluate(lookup)?;
                Ok(compare(left, *op, right, *within))
            }
            Claim::Trend {
                trend,
                metric,
                points,
                within,
            } => {
                let values = points
                    .iter()
                    .map(|point| lookup_ref(metric, point, lookup))
                    .collect::<Result<Vec<f64>, EvalError>>()?;
                Ok(trend_outcome(*trend, points, &values, *within))
            }
        }
    }
}

fn compare(left: f64, op: Comparison, right: f64, within: Option<Tolerance>) -> ClaimOutcome {
    let (shown_left, shown_right) = show_pair(left, right);
    let holds = match op {
        Comparison::Lt => left < right,
        Comparison::Le => left <= right,
        Comparison::Gt => left > right,
        Comparison::Ge => left >= right,
        Comparison::Eq => left == right,
        Comparison::Ne => left != right,
        Comparison::Approx => within.unwrap_or(DEFAULT_APPROX).check(left, right),
    };
    let mut detail = format!("{shown_left} {} {shown_right}", op.symbol());
    if op == Comparison::Approx {
        let tolerance = within.unwrap_or(DEFAULT_APPROX);
        detail.push_str(&format!(
            " within {tolerance} (off by {})",
            offset(tolerance, left, right)
        ));
    }
    if !holds {
        detail.push_str(" is false");
    }
    ClaimOutcome {
        holds,
        lhs: left,
        rhs: right,
        detail,
    }
}

fn trend_outcome(
    trend: Trend,
    points: &[String],
    values: &[f64],
    within: Option<Tolerance>,
) -> ClaimOutcome {
    let first = values.first().copied().unwrap_or(f64::NAN);
    let last = values.last().copied().unwrap_or(f64::NAN);
    let listing = || {
        points
            .iter()
            .zip(values)
            .map(|(point, value)| format!("{point}={}", format_number(*value)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let suffix = within
        .map(|tolerance| format!(" within {tolerance}"))
        .unwrap_or_default();
    match trend {
        Trend::Increasing | Trend::Decreasing => {
            let rising = trend == Trend::Increasing;
            // A step from `a` to `b` goes the right way, or the wrong way by at most the slack.
            let step_ok = |a: f64, b: f64| match within {
                None if rising => b > a,
                None => b < a,
                Some(tolerance) => {
                    let slack = tolerance.bound(a) * (1.0 + 1e-12);
                    if rising {
                        b >= a - slack
                    } else {
                        b <= a + slack
                    }
                }
            };
            let broken = values
                .windows(2)
                .position(|pair| !step_ok(pair[0], pair[1]));
            let holds = broken.is_none();
            let detail = match broken {
                None => {
                    let symbol = match (within, rising) {
                        (Some(_), _) => ", ",
                        (None, true) => " < ",
                        (None, false) => " > ",
                    };
                    let chain = values
                        .iter()
                        .map(|value| format_number(*value))
                        .collect::<Vec<_>>()
                        .join(symbol);
                    format!("{}{suffix}: {chain}", trend.keyword())
                }
                Some(index) => {
                    let (a, b) = show_pair(values[index], values[index + 1]);
                    format!(
                        "not {}{suffix} from {} ({a}) to {} ({b}); values: {}",
                        trend.keyword(),
                        points[index],
                        points[index + 1],
                        listing()
                    )
                }
            };
            ClaimOutcome {
                holds,
                lhs: first,
                rhs: last,
                detail,
            }
        }
        Trend::Flat => {
            let tolerance = within.unwrap_or(DEFAULT_APPROX);
            let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let outlier = values
                .iter()
                .position(|value| !tolerance.check(*value, mean));
            let holds = outlier.is_none() && mean.is_finite();
            let detail = match outlier {
                None => format!(
                    "flat: {} all within {tolerance} of the mean {}",
                    listing(),
                    format_number(mean)
                ),
                Some(index) => format!(
                    "not flat within {tolerance}: {}={} is {} from the mean {}; values: {}",
                    points[index],
                    format_number(values[index]),
                    offset(tolerance, values[index], mean),
                    format_number(mean),
                    listing()
                ),
            };
            ClaimOutcome {
                holds,
                lhs: low,
                rhs: high,
                detail,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn table(entries: &[(&str, &str, f64)]) -> HashMap<(String, String), f64> {
        entries
            .iter()
            .map(|(m, p, v)| ((m.to_string(), p.to_string()), *v))
            .collect()
    }

    fn eval(claim: &str, entries: &[(&str, &str, f64)]) -> Result<ClaimOutcome, EvalError> {
        let values = table(entries);
        let lookup = |metric: &str, point: &str| {
            values
                .get(&(metric.to_string(), point.to_string()))
                .copied()
        };
        Claim::parse(claim).unwrap().evaluate(&lookup)
    }

    fn holds(claim: &str, entries: &[(&str, &str, f64)]) -> bool {
        eval(claim, entries).unwrap().holds
    }

    fn reference(metric: &str, point: &str) -> Expr {
        Expr::Ref(Reference {
            metric: metric.into(),
            point: point.into(),
        })
    }

    #[test]
    fn parses_and_prints_canonically() {
        let cases = [
            (
                "utilization(gang-25ms)>utilization(batch)",
                "utilization(gang-25ms) > utilization(batch)",
            ),
            (
                "delay( seq:primary-random )  <=  0.6*delay(dfcfs:random)",
                "delay(seq:primary-random) <= 0.6 * delay(dfcfs:random)",
            ),
            ("u(batch) ~= 74 within 5 %", "u(batch) ~= 74 within 5%"),
            ("u(a) ≈ 74 within +-2", "u(a) ~= 74 within ±2"),
            ("abs(u(a) - u(b)) < 2", "abs(u(a) - u(b)) < 2"),
            (
                "min(x(a),x(b),x(c)) >= mean(y(a), 1e-7)",
                "min(x(a), x(b), x(c)) >= mean(y(a), 1e-7)",
            ),
            ("-(a(p) + 1) != --2", "-(a(p) + 1) != --2"),
            (
                "a(p) - (b(q) - c(r)) == a(p) - b(q) - c(r)",
                "a(p) - (b(q) - c(r)) == a(p) - b(q) - c(r)",
            ),
            ("((a(p))) > .5", "a(p) > 0.5"),
            (
                "increasing( t/mild-ok , threads=3,threads=4 )",
                "increasing(t/mild-ok, threads=3, threads=4)",
            ),
            ("flat(t, 3, 5, 7, within 5%)", "flat(t, 3, 5, 7, within 5%)"),
            (
                "decreasing(t, a, b, within ±1)",
                "decreasing(t, a, b, within ±1)",
            ),
        ];
        for (input, canonical) in cases {
            let claim = Claim::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(claim.to_string(), canonical, "{input}");
            assert_eq!(Claim::parse(canonical).unwrap(), claim, "{input}");
        }
    }

    #[test]
    fn multiplication_binds_tighter() {
        let claim = Claim::parse("a(x) + b(x) * c(x) > 0").unwrap();
        let Claim::Compare { lhs, .. } = &claim else {
            panic!("not a comparison");
        };
        assert_eq!(
            *lhs,
            Expr::Binary {
                op: BinOp::Add,
                lhs: Box::new(reference("a", "x")),
                rhs: Box::new(Expr::Binary {
                    op: BinOp::Mul,
                    lhs: Box::new(reference("b", "x")),
                    rhs: Box::new(reference("c", "x")),
                }),
            }
        );
        let values = [("a", "x", 1.0), ("b", "x", 2.0), ("c", "x", 3.0)];
        assert!(holds("a(x) + b(x) * c(x) == 7", &values));
        assert!(holds("(a(x) + b(x)) * c(x) == 9", &values));
        assert!(holds("c(x) - b(x) - a(x) == 0", &values));
        assert!(holds("c(x) / b(x) / a(x) == 1.5", &values));
        assert!(holds("-a(x) * 2 == -2", &values));
        assert!(holds("2 - -1 == 3", &values));
    }

    #[test]
    fn every_comparison() {
        let v = [("m", "a", 2.0), ("m", "b", 3.0)];
        assert!(holds("m(a) < m(b)", &v));
        assert!(!holds("m(b) < m(a)", &v));
        assert!(holds("m(a) <= 2", &v));
        assert!(!holds("m(b) <= 2", &v));
        assert!(holds("m(b) > m(a)", &v));
        assert!(!holds("m(a) > m(a)", &v));
        assert!(holds("m(a) >= 2", &v));
        assert!(!holds("m(a) >= 2.5", &v));
        assert!(holds("m(a) == 2", &v));
        assert!(!holds("m(a) == m(b)", &v));
        assert!(holds("m(a) != m(b)", &v));
        assert!(!holds("m(a) != 2", &v));
        assert!(holds("m(b) ~= 3.1", &v)); // default 5 %
        assert!(!holds("m(b) ~= 3.5", &v));
        assert!(holds("m(b) ~= 3.5 within 15%", &v));
        assert!(holds("m(b) ~= 4 within ±1", &v));
        assert!(!holds("m(b) ~= 4.5 within 1 abs", &v));
        assert!(holds("m(a) ≤ m(b)", &v));
        assert!(holds("m(a) ≠ m(b)", &v));
    }

    #[test]
    fn outcome_details() {
        let v = [("u", "gang", 62.1), ("u", "prio", 59.8)];
        let outcome = eval("u(gang) > u(prio)", &v).unwrap();
        assert!(outcome.holds);
        assert_eq!((outcome.lhs, outcome.rhs), (62.1, 59.8));
        assert_eq!(outcome.detail, "62.1 > 59.8");
        let outcome = eval("u(prio) > u(gang)", &v).unwrap();
        assert_eq!(outcome.detail, "59.8 > 62.1 is false");
        let outcome = eval("u(gang) ~= u(prio)", &v).unwrap();
        assert_eq!(outcome.detail, "62.1 ~= 59.8 within 5% (off by +3.846%)");
        let close = [("x", "a", 1160.4), ("x", "b", 1160.2)];
        let outcome = eval("x(a) < x(b)", &close).unwrap();
        assert_eq!(outcome.detail, "1160.4 < 1160.2 is false");
    }

    #[test]
    fn functions() {
        let v = [("m", "a", 2.0), ("m", "b", -3.0), ("m", "c", 7.0)];
        assert!(holds("min(m(a), m(b), m(c)) == -3", &v));
        assert!(holds("max(m(a), m(b), m(c)) == 7", &v));
        assert!(holds("abs(m(b)) == 3", &v));
        assert!(holds("mean(m(a), m(b), m(c)) == 2", &v));
        assert!(holds("max(m(a)) == 2", &v));
    }

    #[test]
    fn trend_claims() {
        let black = [
            ("t", "3", 467.0),
            ("t", "4", 633.0),
            ("t", "5", 817.0),
            ("h", "3", 413.0),
            ("h", "4", 418.0),
            ("h", "5", 417.0),
        ];
        let outcome = eval("increasing(t, 3, 4, 5)", &black).unwrap();
        assert!(outcome.holds);
        assert_eq!((outcome.lhs, outcome.rhs), (467.0, 817.0));
        assert_eq!(outcome.detail, "increasing: 467 < 633 < 817");
        assert!(!holds("decreasing(t, 3, 4, 5)", &black));
        assert!(holds("decreasing(t, 5, 4, 3)", &black));
        let outcome = eval("increasing(h, 3, 4, 5)", &black).unwrap();
        assert!(!outcome.holds);
        assert!(
            outcome.detail.contains("from 4 (418) to 5 (417)"),
            "{}",
            outcome.detail
        );
        assert!(holds("increasing(h, 3, 4, 5, within 1%)", &black));
        assert!(holds("flat(h, 3, 4, 5, within 2%)", &black));
        assert!(!holds("flat(t, 3, 4, 5, within 20%)", &black));
        let outcome = eval("flat(t, 3, 4, 5, within 20%)", &black).unwrap();
        assert_eq!((outcome.lhs, outcome.rhs), (467.0, 817.0));
        assert!(
            outcome.detail.starts_with("not flat within 20%: 3=467"),
            "{}",
            outcome.detail
        );
        assert!(holds("flat(h, 3, 4, 5, within ±5)", &black));
    }

    #[test]
    fn evaluation_errors() {
        let v = [("m", "a", 2.0), ("m", "zero", 0.0), ("m", "nan", f64::NAN)];
        let err = eval("m(a) > m(missing-point)", &v).unwrap_err();
        assert_eq!(
            err,
            EvalError::Missing {
                metric: "m".into(),
                point: "missing-point".into()
            }
        );
        assert!(err.to_string().contains("m(missing-point)"));
        let err = eval("m(a) / (m(zero) * 2) > 1", &v).unwrap_err();
        assert_eq!(
            err,
            EvalError::DivisionByZero {
                divisor: "m(zero) * 2".into()
            }
        );
        assert!(matches!(
            eval("m(nan) < 1", &v),
            Err(EvalError::NotFinite { .. })
        ));
        assert!(matches!(
            eval("m(nan) != 1", &v),
            Err(EvalError::NotFinite { .. })
        ));
        assert!(matches!(
            eval("1e300 * 1e300 > 1", &v),
            Err(EvalError::NotFinite { .. })
        ));
        assert!(matches!(
            eval("increasing(m, a, gone)", &v),
            Err(EvalError::Missing { .. })
        ));
    }

    #[test]
    fn references_in_order_without_duplicates() {
        let claim = Claim::parse("u(a) + u(b) * v(a) > min(u(a), w(c:d=1/e))").unwrap();
        let refs: Vec<String> = claim.references().iter().map(|r| r.to_string()).collect();
        assert_eq!(refs, ["u(a)", "u(b)", "v(a)", "w(c:d=1/e)"]);
        let claim = Claim::parse("flat(t, 3, 4, 3, within 5%)").unwrap();
        let refs: Vec<String> = claim.references().iter().map(|r| r.to_string()).collect();
        assert_eq!(refs, ["t(3)", "t(4)"]);
        assert!(Claim::parse("1 < 2").unwrap().references().is_empty());
    }

    fn parse_err(text: &str) -> ClaimError {
        Claim::parse(text).unwrap_err()
    }

    #[test]
    fn parse_errors_name_what_was_expected() {
        let err = parse_err("u(a) + > 3");
        assert_eq!(err.column, 7);
        assert!(
            err.message.starts_with("expected a value"),
            "{}",
            err.message
        );
        let err = parse_err("u(a)");
        assert_eq!(err.column, 4);
        assert!(err.message.contains("comparison"), "{}", err.message);
        assert!(
            err.message.contains("the end of the claim"),
            "{}",
            err.message
        );
        let err = parse_err("u(a) = 3");
        assert!(err.message.contains("`==`"), "{}", err.message);
        let err = parse_err("u > 3");
        assert_eq!(err.column, 2);
        assert!(err.message.contains("metric(point)"), "{}", err.message);
        let err = parse_err("u() > 3");
        assert!(err.message.contains("point name"), "{}", err.message);
        let err = parse_err("u(a b) > 3");
        assert_eq!(err.column, 4);
        let err = parse_err("u(a) < 3 within 5%");
        assert!(
            err.message.contains("only applies to `~=`"),
            "{}",
            err.message
        );
        let err = parse_err("u(a) ~= 3 within 5");
        assert_eq!(err.column, 17);
        assert!(err.message.contains("missing a unit"), "{}", err.message);
        let err = parse_err("u(a) ~= 3 5");
        assert!(err.message.contains("`within TOL`"), "{}", err.message);
        let err = parse_err("abs(u(a), u(b)) > 1");
        assert!(err.message.contains("exactly one"), "{}", err.message);
        let err = parse_err("min > 1");
        assert!(err.message.contains("builtin"), "{}", err.message);
        let err = parse_err("flat(t, a, b)");
        assert!(err.message.contains("needs a tolerance"), "{}", err.message);
        let err = parse_err("increasing(t, a)");
        assert!(
            err.message.contains("at least two points"),
            "{}",
            err.message
        );
        let err = parse_err("increasing(t, a, b) extra");
        assert!(err.message.contains("end of the claim"), "{}", err.message);
        let err = parse_err("increasing(min, a, b)");
        assert!(err.message.contains("reserved"), "{}", err.message);
        let err = parse_err("flat(t, a, b, within 5%");
        assert!(err.message.contains("`)`"), "{}", err.message);
        let err = parse_err("u(a) > increasing(t, a, b)");
        assert!(err.message.contains("whole claim"), "{}", err.message);
        let err = parse_err("u(a) > 1e999");
        assert!(err.message.contains("too large"), "{}", err.message);
        let err = parse_err("");
        assert_eq!(err.column, 0);
        let deep = format!("{}1{} > 0", "(".repeat(500), ")".repeat(500));
        assert!(parse_err(&deep).message.contains("nested too deeply"));
        let long = format!("{} > 0", vec!["1"; 5000].join(" + "));
        assert!(parse_err(&long).message.contains("nested too deeply"));
        let negs = format!("{}1 > 0", "-".repeat(5000));
        assert!(parse_err(&negs).message.contains("nested too deeply"));
    }

    #[test]
    fn serde_as_string() {
        let claim = Claim::parse("u(a) > 2").unwrap();
        let json = serde_json::to_string(&claim).unwrap();
        assert_eq!(json, "\"u(a) > 2\"");
        let back: Claim = serde_json::from_str(&json).unwrap();
        assert_eq!(back, claim);
        let err = serde_json::from_str::<Claim>("\"u(a) >\"").unwrap_err();
        assert!(err.to_string().contains("column 7"), "{err}");
    }

    // --- property tests -------------------------------------------------------------------

    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z_][a-zA-Z0-9_.:/-]{0,6}".prop_filter("reserved", |n| !is_reserved(n))
    }

    fn point() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9_.:/=-]{1,8}"
    }

    fn tolerance() -> impl Strategy<Value = Tolerance> {
        prop_oneof![
            (0u32..1000).prop_map(|p| Tolerance::Relative(f64::from(p) / 100.0)),
            (0u32..1000).prop_map(|a| Tolerance::Absolute(f64::from(a) / 10.0)),
        ]
    }

    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            prop_oneof![
                (0u32..100_000).prop_map(|n| f64::from(n) / 100.0),
                Just(1e-7),
                Just(2.5e20),
            ]
            .prop_map(Expr::Number),
            (name(), point()).prop_map(|(metric, point)| Expr::Ref(Reference { metric, point })),
        ];
        leaf.prop_recursive(5, 40, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
                (
                    prop_oneof![
                        Just(BinOp::Add),
                        Just(BinOp::Sub),
                        Just(BinOp::Mul),
                        Just(BinOp::Div)
                    ],
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, lhs, rhs)| Expr::Binary {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs)
                    }),
                inner.clone().prop_map(|e| Expr::Call {
                    func: Func::Abs,
                    args: vec![e]
                }),
                (
                    prop_oneof![Just(Func::Min), Just(Func::Max), Just(Func::Mean)],
                    prop::collection::vec(inner, 1..4)
                )
                    .prop_map(|(func, args)| Expr::Call { func, args }),
            ]
        })
    }

    fn claim() -> impl Strategy<Value = Claim> {
        let comparison = prop_oneof![
            Just(Comparison::Lt),
            Just(Comparison::Le),
            Just(Comparison::Gt),
            Just(Comparison::Ge),
            Just(Comparison::Eq),
            Just(Comparison::Ne),
            Just(Comparison::Approx),
        ];
        let compare = (
            expr(),
            comparison,
            expr(),
            proptest::option::of(tolerance()),
        )
            .prop_map(|(lhs, op, rhs, within)| Claim::Compare {
                lhs,
                op,
                rhs,
                within: if op == Comparison::Approx {
                    within
                } else {
                    None
                },
            });
        let trend = (
            prop_oneof![
                Just(Trend::Increasing),
                Just(Trend::Decreasing),
                Just(Trend::Flat)
            ],
            name(),
            prop::collection::vec(point(), 2..6),
            proptest::option::of(tolerance()),
        )
            .prop_map(|(trend, metric, points, within)| Claim::Trend {
                trend,
                metric,
                points,
                within: if trend == Trend::Flat {
                    Some(within.unwrap_or(Tolerance::Relative(0.1)))
                } else {
                    within
                },
            });
        prop_oneof![compare, trend]
    }

    proptest! {
        #[test]
        fn printed_claims_parse_back(claim in claim()) {
            let text = claim.to_string();
            let parsed = Claim::parse(&text);
            prop_assert!(parsed.is_ok(), "{}: {:?}", text, parsed);
            let parsed = parsed.unwrap();
            prop_assert_eq!(parsed.to_string(), text.clone());
            prop_assert_eq!(parsed, claim, "{}", text);
        }

        #[test]
        fn parse_never_panics(text in any::<String>()) {
            if let Err(err) = Claim::parse(&text) {
                prop_assert!(err.column <= text.len());
                prop_assert!(!err.message.is_empty());
            }
        }

        #[test]
        fn parse_never_panics_on_claim_like_text(
            text in "[a-z0-9()<>=~!+*/, .%±:-]{0,40}"
        ) {
            if let Ok(claim) = Claim::parse(&text) {
                let lookup = |_: &str, _: &str| Some(1.0);
                let _ = claim.evaluate(&lookup);
                prop_assert_eq!(Claim::parse(&claim.to_string()), Ok(claim));
            }
        }

        #[test]
        fn evaluation_never_panics(claim in claim(), value in -1e3f64..1e3) {
            let lookup = |_: &str, _: &str| Some(value);
            let _ = claim.evaluate(&lookup);
        }
    }
}
