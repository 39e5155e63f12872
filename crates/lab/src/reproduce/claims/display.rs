//! Printing claims back to text: the shortest form that parses to the same claim.

use super::*;

/// Prints a literal so that it parses back to the same value (shortest round-trip form).
pub(super) fn literal(value: f64) -> String {
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
