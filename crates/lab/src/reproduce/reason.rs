//! Report text with the run's own values in it: `{EXPR}` in a claim's `known_difference` or in
//! one of the section's `notes` is a value of the claim language (`delay(seq:rand)`,
//! `throughput(a) / throughput(b)`, `mean(...)`) that the report fills in from this run's
//! measurements, so that a reason naming a measured quantity stays true when the model changes.
//! `{{` and `}}` write a brace. Figures quoted from other runs (another seed, a variant measured
//! once) stay plain text and should say where they come from.

use thiserror::Error;

use super::claims::{ClaimError, EvalError, Expr, Lookup, Reference};
use crate::input::format::format_number;

/// A reason: text and values to fill in, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(String),
    Value(Expr),
}

/// Why a reason's text could not be read: where (byte `column` of the whole text) and what.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("at column {}: {message}", column + 1)]
pub struct ReasonError {
    /// Byte offset within the reason's text.
    pub column: usize,
    /// What was wrong there.
    pub message: String,
}

impl Reason {
    /// Reads `text`: plain text, `{EXPR}` values, `{{` and `}}` for braces.
    pub fn parse(text: &str) -> Result<Reason, ReasonError> {
        let mut parts = Vec::new();
        let mut plain = String::new();
        let mut rest = text.char_indices().peekable();
        while let Some((at, c)) = rest.next() {
            match c {
                '{' if rest.peek().map(|&(_, n)| n) == Some('{') => {
                    rest.next();
                    plain.push('{');
                }
                '}' if rest.peek().map(|&(_, n)| n) == Some('}') => {
                    rest.next();
                    plain.push('}');
                }
                '}' => {
                    return Err(ReasonError {
                        column: at,
                        message: "a `}` that closes no `{`; write `}}` for a brace".into(),
                    })
                }
                '{' => {
                    let start = at + 1;
                    let Some(len) = text[start..].find('}') else {
                        return Err(ReasonError {
                            column: at,
                            message: "a `{` that is never closed; write `{{` for a brace".into(),
                        });
                    };
                    let inner = &text[start..start + len];
                    let expr = Expr::parse(inner).map_err(|e: ClaimError| ReasonError {
                        column: start + e.column,
                        message: format!("in `{{{inner}}}`: {}", e.message),
                    })?;
                    if !plain.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut plain)));
                    }
                    parts.push(Part::Value(expr));
                    while rest.peek().is_some_and(|&(i, _)| i <= start + len) {
                        rest.next();
                    }
                }
                _ => plain.push(c),
            }
        }
        if !plain.is_empty() {
            parts.push(Part::Text(plain));
        }
        Ok(Reason { parts })
    }

    /// The measured values the reason reads, in order, without duplicates.
    pub fn references(&self) -> Vec<Reference> {
        let mut out: Vec<Reference> = Vec::new();
        for part in &self.parts {
            if let Part::Value(expr) = part {
                for r in expr.references() {
                    if !out.contains(&r) {
                        out.push(r);
                    }
                }
            }
        }
        out
    }

    /// The text with each value measured and printed as reports print values (about four
    /// significant digits); a value that cannot be computed is an error, never a blank.
    pub fn render(&self, lookup: &Lookup<'_>) -> Result<String, EvalError> {
        self.pieces(lookup).collect()
    }

    /// [`Reason::render`] for text that has no verdict to carry an error (a note): a value that
    /// cannot be computed is printed in its place as `{not computed: WHY}`, never left blank.
    pub fn render_noting_errors(&self, lookup: &Lookup<'_>) -> String {
        self.pieces(lookup)
            .map(|p| p.unwrap_or_else(|e| format!("{{not computed: {e}}}")))
            .collect()
    }

    /// Each part as printed: its text, or its value measured.
    fn pieces<'a>(
        &'a self,
        lookup: &'a Lookup<'_>,
    ) -> impl Iterator<Item = Result<String, EvalError>> + 'a {
        self.parts.iter().map(move |part| match part {
            Part::Text(text) => Ok(text.clone()),
            Part::Value(expr) => expr.evaluate(lookup).map(format_number),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(metric: &str, point: &str) -> Option<f64> {
        match (metric, point) {
            ("delay", "a") => Some(6.1384),
            ("delay", "b") => Some(2.0),
            ("rate", "a") => Some(f64::NAN),
            _ => None,
        }
    }

    #[test]
    fn values_are_filled_in_from_the_run() {
        let r =
            Reason::parse("ours {delay(a)} ms, {delay(a) / delay(b)} times {{b}}; end").unwrap();
        assert_eq!(
            r.render(&lookup).unwrap(),
            "ours 6.138 ms, 3.069 times {b}; end"
        );
        assert_eq!(r.references().len(), 2);
        let plain = Reason::parse("no values, 50% {{literal}}").unwrap();
        assert_eq!(plain.render(&lookup).unwrap(), "no values, 50% {literal}");
        assert!(plain.references().is_empty());
    }

    #[test]
    fn bad_text_names_the_column() {
        let e = Reason::parse("x {delay(a) y").unwrap_err();
        assert_eq!(e.column, 2);
        assert!(e.message.contains("never closed"), "{e}");
        let e = Reason::parse("x } y").unwrap_err();
        assert_eq!((e.column, e.message.contains("`}}`")), (2, true));
        let e = Reason::parse("ab {delay(a) <}").unwrap_err();
        assert_eq!(e.column, 13, "{e}");
        assert!(e.message.contains("in `{delay(a) <}`"), "{e}");
        assert!(Reason::parse("{}").is_err());
    }

    proptest::proptest! {
        /// Any text is read or refused, never a panic; what is read renders or errs, and a text
        /// without braces renders as itself.
        #[test]
        fn any_text_is_read_or_refused(text in "[a-z(){}=/ ,.*+-]{0,40}|\\PC{0,40}") {
            if let Ok(r) = Reason::parse(&text) {
                let _ = r.render(&lookup);
                if !text.contains(['{', '}']) {
                    proptest::prop_assert_eq!(r.render(&lookup).unwrap(), text);
                }
            }
        }
    }

    #[test]
    fn a_value_not_measured_is_an_error_not_a_blank() {
        let missing = Reason::parse("{delay(c)}").unwrap();
        assert!(matches!(
            missing.render(&lookup),
            Err(EvalError::Missing { .. })
        ));
        let nan = Reason::parse("{rate(a)}").unwrap();
        assert!(nan.render(&lookup).is_err());
        let note = Reason::parse("a {delay(a)}, b {delay(c)}.").unwrap();
        assert_eq!(
            note.render_noting_errors(&lookup),
            "a 6.138, b {not computed: no measured value for `delay(c)`}."
        );
    }
}
