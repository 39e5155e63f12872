//! Evaluating claims against measured values: each side, the comparison or trend, and a
//! readable detail; never a silent pass.

use super::display::literal;
use super::*;

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

/// `point=value, ...` for a trend's details.
fn listing(points: &[String], values: &[f64]) -> String {
    points
        .iter()
        .zip(values)
        .map(|(point, value)| format!("{point}={}", format_number(*value)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn trend_outcome(
    trend: Trend,
    points: &[String],
    values: &[f64],
    within: Option<Tolerance>,
) -> ClaimOutcome {
    match trend {
        Trend::Increasing | Trend::Decreasing => monotone_outcome(trend, points, values, within),
        Trend::Flat => flat_outcome(points, values, within.unwrap_or(DEFAULT_APPROX)),
    }
}

/// `increasing(...)` or `decreasing(...)`: every step goes the right way, or (with `within`)
/// the wrong way by at most the tolerance.
fn monotone_outcome(
    trend: Trend,
    points: &[String],
    values: &[f64],
    within: Option<Tolerance>,
) -> ClaimOutcome {
    let rising = trend == Trend::Increasing;
    let suffix = within
        .map(|tolerance| format!(" within {tolerance}"))
        .unwrap_or_default();
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
                listing(points, values)
            )
        }
    };
    ClaimOutcome {
        holds: broken.is_none(),
        lhs: values.first().copied().unwrap_or(f64::NAN),
        rhs: values.last().copied().unwrap_or(f64::NAN),
        detail,
    }
}

/// `flat(...)`: every value within the tolerance of the mean.
fn flat_outcome(points: &[String], values: &[f64], tolerance: Tolerance) -> ClaimOutcome {
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
            listing(points, values),
            format_number(mean)
        ),
        Some(index) => format!(
            "not flat within {tolerance}: {}={} is {} from the mean {}; values: {}",
            points[index],
            format_number(values[index]),
            offset(tolerance, values[index], mean),
            format_number(mean),
            listing(points, values)
        ),
    };
    ClaimOutcome {
        holds,
        lhs: low,
        rhs: high,
        detail,
    }
}
