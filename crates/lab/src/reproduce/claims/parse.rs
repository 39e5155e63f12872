//! The claim language's parser: a scannerless recursive descent over the claim text, with
//! errors that name the byte column and what was expected there.

use super::*;

impl Claim {
    /// Parses a claim; errors give the byte column and what was expected there.
    pub fn parse(text: &str) -> Result<Claim, ClaimError> {
        Parser::new(text).claim()
    }
}

impl Expr {
    /// Parses a value alone (the grammar's `expr`, the whole text); errors give the byte column
    /// and what was expected there.
    pub fn parse(text: &str) -> Result<Expr, ClaimError> {
        let mut parser = Parser::new(text);
        let (expr, _) = parser.expr(0)?;
        parser.skip_ws();
        if parser.pos < text.len() {
            return Err(
                parser.error_here("an operator (`+`, `-`, `*`, `/`) or the end of the value")
            );
        }
        Ok(expr)
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

pub(super) fn is_reserved(word: &str) -> bool {
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
        let (points, within) = self.trend_points()?;
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

    /// A trend's points after its metric, up to its `)`, and its `within TOL` if any.
    fn trend_points(&mut self) -> Result<(Vec<String>, Option<Tolerance>), ClaimError> {
        let mut points = Vec::new();
        loop {
            self.skip_ws();
            if self.eat(")") {
                return Ok((points, None));
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
                let within = Tolerance::parse(text).map_err(|err| {
                    let err = err.shifted(column);
                    Self::error_at(err.column(), err.to_string())
                })?;
                self.pos += end;
                self.expect(")", "`)` after the tolerance")?;
                return Ok((points, Some(within)));
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
