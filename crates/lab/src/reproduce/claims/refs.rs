//! Which measured values a claim or a value reads, so that a file's points and measures can be
//! checked before anything runs.

use super::*;

impl Claim {
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

impl Expr {
    /// The measured values the expression reads, in order of first appearance, without
    /// duplicates.
    pub fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        collect_refs(self, &mut out);
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
