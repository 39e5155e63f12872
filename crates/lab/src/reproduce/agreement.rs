//! How one measure's values agree with the paper's across a file's points, for the files that
//! ask for it (`[reproduce] agreement`): how many are within 25% of the paper's, and the
//! Spearman rank correlation of ours against the paper's, which says whether the policies come
//! out in the paper's order even where the values are off.

use serde::{Deserialize, Serialize};

use super::format_number;
use super::tolerance::Tolerance;

/// The band counted, as a fraction of the paper's value (the summary's wider band).
pub const BAND: f64 = 0.25;

/// One measure's agreement with the paper over the points that print a paper value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// The measure, e.g. `recorded_mean:requests:delay`.
    pub metric: String,
    /// Points of this measure with a paper value.
    pub values: usize,
    /// Of those, the values within 25% of the paper's.
    pub within_25: usize,
    /// Spearman's rank correlation of ours against the paper's (average ranks for ties); `None`
    /// with fewer than 3 values or when either side is constant.
    pub rank_correlation: Option<f64>,
}

/// Ranks of `values` from 0, ties given the mean of the ranks they span.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            ranks[k] = (i + j) as f64 / 2.0;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rank correlation of `a` against `b` (the Pearson correlation of their ranks);
/// `None` when the lengths differ, there are fewer than 3 pairs, a value is not finite, or
/// either side has a single rank.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len();
    if n != b.len() || n < 3 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let mean = (n - 1) as f64 / 2.0;
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        cov += (x - mean) * (y - mean);
        va += (x - mean) * (x - mean);
        vb += (y - mean) * (y - mean);
    }
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// Whether `ours` is within the band of the paper's value.
pub fn within(ours: f64, paper: f64) -> bool {
    Tolerance::Relative(BAND).check(ours, paper)
}

/// The agreement of `metric` over `(ours, paper)` pairs, in the points' order.
pub fn of_pairs(metric: &str, pairs: impl IntoIterator<Item = (f64, f64)>) -> Agreement {
    let (ours, paper): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
    Agreement {
        metric: metric.to_string(),
        values: ours.len(),
        within_25: ours
            .iter()
            .zip(&paper)
            .filter(|(o, p)| within(**o, **p))
            .count(),
        rank_correlation: spearman(&ours, &paper),
    }
}

/// The counts of each measure summed over several files' agreements, in the order the measures
/// first appear; no rank correlation (the files' scales differ).
pub fn pooled<'a>(list: impl IntoIterator<Item = &'a Agreement>) -> Vec<Agreement> {
    let mut out: Vec<Agreement> = Vec::new();
    for a in list {
        match out.iter_mut().find(|o| o.metric == a.metric) {
            Some(o) => {
                o.values += a.values;
                o.within_25 += a.within_25;
            }
            None => out.push(Agreement {
                rank_correlation: None,
                ..a.clone()
            }),
        }
    }
    out
}

/// The agreement as text, e.g. `` `delay`: 9 of 30 within 25%, rank correlation 0.41 ``;
/// measures separated by `; `.
pub fn text(list: &[Agreement]) -> String {
    list.iter()
        .map(|a| {
            let mut s = format!("`{}`: {}", a.metric, counts(a));
            if let Some(r) = a.rank_correlation {
                s.push_str(&format!(
                    ", rank correlation with the paper {}",
                    format_number(r)
                ));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `9 of 30 within 25%`.
fn counts(a: &Agreement) -> String {
    format!(
        "{} of {} within {}%",
        a.within_25,
        a.values,
        format_number(BAND * 100.0)
    )
}

/// A plot's heading for one measure, e.g. `delay: 9 of 30 within 25%, rank 0.41` (the
/// measure's last part).
pub fn heading(a: &Agreement) -> String {
    let short = a.metric.rsplit(':').next().unwrap_or(&a.metric);
    let mut s = format!("{short}: {}", counts(a));
    if let Some(r) = a.rank_correlation {
        s.push_str(&format!(", rank {}", format_number(r)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_orders_ties_and_degenerate_inputs() {
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]), Some(1.0));
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        // Monotone but not linear: ranks only.
        assert_eq!(
            spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 8.0, 27.0, 1e6]),
            Some(1.0)
        );
        // Ties take their mean rank: ranks (0.5, 0.5, 2) against (0, 1, 2).
        let r = spearman(&[5.0, 5.0, 7.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!((r - 0.75f64.sqrt()).abs() < 1e-12, "{r}");
        assert_eq!(spearman(&[1.0, 2.0], &[1.0, 2.0]), None);
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn agreement_counts_and_pools() {
        // 1 against 1.2 and 3 against 3.75 are within 25%, 2 against 4 is 50% off.
        let a = of_pairs("delay", [(1.0, 1.2), (2.0, 4.0), (3.0, 3.75)]);
        assert_eq!((a.values, a.within_25), (3, 2));
        assert!((a.rank_correlation.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(
            text(std::slice::from_ref(&a)),
            "`delay`: 2 of 3 within 25%, rank correlation with the paper 0.5"
        );
        let b = of_pairs("throughput", [(9.0, 1.0)]);
        assert_eq!((b.values, b.within_25, b.rank_correlation), (1, 0, None));
        let pooled = pooled([&a, &b, &a]);
        assert_eq!(pooled.len(), 2);
        assert_eq!((pooled[0].values, pooled[0].within_25), (6, 4));
        assert_eq!(pooled[0].rank_correlation, None);
        assert_eq!(
            text(&pooled),
            "`delay`: 4 of 6 within 25%; `throughput`: 0 of 1 within 25%"
        );
    }
}
