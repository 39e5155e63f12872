//! A paper reproduced at several base seeds, side by side (`smpsched reproduce PAPER --seeds
//! 1-7`): which claims hold at every seed and which turn on the seed, and how far the agreement
//! with the paper's values moves from one seed to the next. A finding a reader would cite should
//! not hold on the noise of one run; this is how the lab shows it. The same report puts side by
//! side the reproductions at several values of one constant set over the files (`--vary
//! workload.0.random_ms=0.02,0.05,0.09`), or at every combination of the values of several
//! (`--vary` given once per constant): a finding should not hold only at one guess of a constant
//! the paper does not give.
//!
//! Pure: the reports of the seeds in, a [`AcrossReport`] out (its Markdown:
//! [`super::across_markdown`]), the same for the same reports.

use serde::{Deserialize, Serialize};

use super::agreement::{pooled, Agreement};
use super::report::{PaperReport, ReportFile, Verdict};
use super::summary::Summary;
use crate::input::setting::{run_label, Setting};

/// A claim's verdict at one seed, without its detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// The claim holds.
    Holds,
    /// The claim fails.
    Fails,
    /// The claim fails for a documented reason.
    KnownDifference,
    /// The claim could not be evaluated.
    NotEvaluated,
}

impl Mark {
    fn of(verdict: &Verdict) -> Mark {
        match verdict {
            Verdict::Holds => Mark::Holds,
            Verdict::Fails => Mark::Fails,
            Verdict::KnownDifference { .. } => Mark::KnownDifference,
            Verdict::Error { .. } => Mark::NotEvaluated,
        }
    }

    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Mark::Holds => "✅",
            Mark::Fails => "❌",
            Mark::KnownDifference => "🔶",
            Mark::NotEvaluated => "⚠️",
        }
    }

    pub(crate) fn words(self) -> &'static str {
        match self {
            Mark::Holds => "holds",
            Mark::Fails => "fails",
            Mark::KnownDifference => "known difference",
            Mark::NotEvaluated => "not evaluated",
        }
    }
}

/// One claim's verdicts, a mark per seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimAcross {
    /// The experiment file the claim belongs to.
    pub file: String,
    /// The claim as written.
    pub text: String,
    /// Its verdict at each seed, in the order of [`AcrossReport::seeds`].
    pub marks: Vec<Mark>,
}

impl ClaimAcross {
    /// Seeds at which the claim holds.
    pub fn holds(&self) -> usize {
        self.marks.iter().filter(|m| **m == Mark::Holds).count()
    }

    /// The one verdict of every seed, if there is one.
    pub fn steady(&self) -> Option<Mark> {
        let first = *self.marks.first()?;
        self.marks.iter().all(|m| *m == first).then_some(first)
    }
}

/// One measure's agreement with the paper (`[reproduce] agreement`) at each seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreementAcross {
    /// The experiment file.
    pub file: String,
    /// The measure.
    pub metric: String,
    /// Values with a paper value.
    pub values: usize,
    /// Of those, how many are within 25% of the paper's, at each seed.
    pub within_25: Vec<usize>,
    /// The rank correlation with the paper at each seed.
    pub rank_correlation: Vec<Option<f64>>,
}

/// A paper's reproduction at several seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossReport {
    /// The paper's folder name.
    pub paper_id: String,
    /// Its title.
    pub paper_title: String,
    /// The command that made it.
    pub generated_by: String,
    /// The base seeds, in the order they ran (none when the runs vary a setting).
    pub seeds: Vec<u64>,
    /// When the runs differ in a value set over the files (`--vary`) rather than in the seed:
    /// its path and each run's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub varied: Option<Varied>,
    /// Each seed's own report, as a path relative to this report.
    pub reports: Vec<String>,
    /// Each seed's summary (claims and values).
    pub summaries: Vec<Summary>,
    /// Every claim of the paper, in the reports' order.
    pub claims: Vec<ClaimAcross>,
    /// Every agreement measure, in the reports' order.
    pub agreement: Vec<AgreementAcross>,
    /// Every value compared with the paper's within a tolerance, in the reports' order.
    #[serde(default)]
    pub values: Vec<ValueAcross>,
}

/// The value set over the files that the runs of a report across runs differ in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Varied {
    /// The dotted path (`workload.0.random_ms`); for a grid, every path varied, in order,
    /// separated by `, `.
    pub path: String,
    /// Each run's value, as written, in the order they ran; for a grid, the run's values in the
    /// paths' order, separated by `, `.
    pub values: Vec<String>,
}

impl Varied {
    /// Whether several paths are varied together (`--vary` given once per path).
    pub fn is_grid(&self) -> bool {
        self.path.contains(", ")
    }

    /// What `runs` (each the settings one run adds, in the same paths' order) vary.
    pub fn of(runs: &[Vec<Setting>]) -> Varied {
        let joined = |run: &[Setting], part: fn(&Setting) -> &str| {
            run.iter().map(part).collect::<Vec<_>>().join(", ")
        };
        Varied {
            path: runs
                .first()
                .map_or_else(String::new, |r| joined(r, |s| &s.path)),
            values: runs.iter().map(|r| joined(r, |s| &s.value)).collect(),
        }
    }
}

/// One value compared with the paper's within its file's tolerance, at each seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueAcross {
    /// The experiment file.
    pub file: String,
    /// The point.
    pub point: String,
    /// The metric.
    pub metric: String,
    /// The paper's value.
    pub paper: f64,
    /// Ours at each seed.
    pub ours: Vec<f64>,
    /// Whether ours is within the tolerance at each seed.
    pub within: Vec<bool>,
}

impl ValueAcross {
    /// Seeds at which the value is within its tolerance.
    pub fn within_at(&self) -> usize {
        self.within.iter().filter(|w| **w).count()
    }
}

/// Puts the reports of `seeds` side by side; `reports[k]` is the paper at `seeds[k]`, and
/// `links[k]` its Markdown report. The reports must be of the same files and claims (the same
/// paper's at one scale); anything else is an error naming what differs.
pub fn across(
    seeds: &[u64],
    reports: &[PaperReport],
    links: &[String],
    generated_by: String,
) -> Result<AcrossReport, String> {
    let labels: Vec<String> = seeds.iter().map(|s| format!("seed {s}")).collect();
    let mut r = side_by_side(&labels, reports, links, generated_by)?;
    r.seeds = seeds.to_vec();
    Ok(r)
}

/// [`across`] for reproductions that differ in values set over the files (`--vary`): `reports[k]`
/// is the paper with the settings `runs[k]` adds (one per path varied, in the same order).
pub fn across_values(
    runs: &[Vec<Setting>],
    reports: &[PaperReport],
    links: &[String],
    generated_by: String,
) -> Result<AcrossReport, String> {
    let labels: Vec<String> = runs.iter().map(|r| run_label(r)).collect();
    let mut r = side_by_side(&labels, reports, links, generated_by)?;
    r.varied = Some(Varied::of(runs));
    Ok(r)
}

/// The report across the runs `labels` names (`seed 3`, `workload.0.random_ms = 0.05`), without
/// what they differ in.
fn side_by_side(
    seeds: &[String],
    reports: &[PaperReport],
    links: &[String],
    generated_by: String,
) -> Result<AcrossReport, String> {
    let first = reports.first().ok_or("no reproduction was run")?;
    if reports.len() != seeds.len() || links.len() != seeds.len() {
        return Err(format!(
            "{} runs, {} reports, {} links",
            seeds.len(),
            reports.len(),
            links.len()
        ));
    }
    let mut claims = Vec::new();
    let mut agreement = Vec::new();
    for (i, f) in first.files.iter().enumerate() {
        for (j, c) in f.claims.iter().enumerate() {
            let marks = at_each_seed(
                seeds,
                reports,
                i,
                |g| g.claims.get(j).filter(|o| o.text == c.text),
                || format!("claim `{}`", c.text),
            )?
            .into_iter()
            .map(|o| Mark::of(&o.verdict))
            .collect();
            claims.push(ClaimAcross {
                file: f.experiment_file.clone(),
                text: c.text.clone(),
                marks,
            });
        }
        for (j, a) in f.agreement.iter().enumerate() {
            let others = at_each_seed(
                seeds,
                reports,
                i,
                |g| g.agreement.get(j).filter(|o| o.metric == a.metric),
                || format!("measure `{}`", a.metric),
            )?;
            agreement.push(AgreementAcross {
                file: f.experiment_file.clone(),
                metric: a.metric.clone(),
                values: a.values,
                within_25: others.iter().map(|o| o.within_25).collect(),
                rank_correlation: others.iter().map(|o| o.rank_correlation).collect(),
            });
        }
    }
    agreement.extend(pooled_across(reports));
    let values = values_across(seeds, reports)?;
    Ok(AcrossReport {
        paper_id: first.paper_id.clone(),
        paper_title: first.paper_title.clone(),
        generated_by,
        seeds: Vec::new(),
        varied: None,
        reports: links.to_vec(),
        summaries: reports.iter().map(PaperReport::summary).collect(),
        claims,
        agreement,
        values,
    })
}

/// Every value of the first report compared within a tolerance, with ours and the verdict at
/// each seed (the same point of the same file at the same place in every report).
fn values_across(seeds: &[String], reports: &[PaperReport]) -> Result<Vec<ValueAcross>, String> {
    let mut values = Vec::new();
    for (i, f) in reports[0].files.iter().enumerate() {
        for (j, p) in f.points.iter().enumerate() {
            let (Some(paper), Some(_)) = (p.paper, p.within) else {
                continue;
            };
            let others = at_each_seed(
                seeds,
                reports,
                i,
                |g| {
                    g.points
                        .get(j)
                        .filter(|o| o.point == p.point && o.metric == p.metric)
                },
                || format!("value {} {}", p.point, p.metric),
            )?;
            values.push(ValueAcross {
                file: f.experiment_file.clone(),
                point: p.point.clone(),
                metric: p.metric.clone(),
                paper,
                ours: others.iter().map(|o| o.ours).collect(),
                within: others.iter().map(|o| o.within == Some(true)).collect(),
            });
        }
    }
    Ok(values)
}

/// The item `pick` finds in file `i` of each seed's report (the same item as the first
/// report's, which `pick` checks), or an error naming the seed and `what` is missing.
fn at_each_seed<'a, T>(
    seeds: &[String],
    reports: &'a [PaperReport],
    i: usize,
    pick: impl Fn(&'a ReportFile) -> Option<&'a T>,
    what: impl Fn() -> String,
) -> Result<Vec<&'a T>, String> {
    reports
        .iter()
        .zip(seeds)
        .map(|(r, seed)| {
            r.files
                .get(i)
                .and_then(&pick)
                .ok_or_else(|| format!("{seed}: {} is missing", what()))
        })
        .collect()
}

/// Where several files ask for agreement, each measure summed over them at each seed (as the
/// paper's report sums them), as rows of file `over the files`, without a rank correlation.
fn pooled_across(reports: &[PaperReport]) -> Vec<AgreementAcross> {
    let asking = |r: &PaperReport| r.files.iter().filter(|f| !f.agreement.is_empty()).count();
    if reports.first().is_none_or(|r| asking(r) < 2) {
        return Vec::new();
    }
    let each: Vec<Vec<Agreement>> = reports
        .iter()
        .map(|r| pooled(r.files.iter().flat_map(|f| &f.agreement)))
        .collect();
    each[0]
        .iter()
        .map(|a| AgreementAcross {
            file: "over the files".into(),
            metric: a.metric.clone(),
            values: a.values,
            within_25: each
                .iter()
                .map(|p| {
                    p.iter()
                        .find(|x| x.metric == a.metric)
                        .map_or(0, |x| x.within_25)
                })
                .collect(),
            rank_correlation: vec![None; each.len()],
        })
        .collect()
}

impl AcrossReport {
    /// The runs, as the report's columns name them: the seeds, or the values varied.
    pub fn columns(&self) -> Vec<String> {
        match &self.varied {
            Some(v) => v.values.clone(),
            None => self.seeds.iter().map(u64::to_string).collect(),
        }
    }

    /// What one run is: `seed`, `value` (of the path varied), or `combination` (of the values
    /// of the paths varied together).
    pub fn run_noun(&self) -> &'static str {
        match &self.varied {
            Some(v) if v.is_grid() => "combination",
            Some(_) => "value",
            None => "seed",
        }
    }

    /// What the verdicts turn on: `the seed`, or the path varied.
    pub fn turns_on(&self) -> String {
        match &self.varied {
            Some(v) => format!("`{}`", v.path),
            None => "the seed".into(),
        }
    }

    /// One line: how many claims hold at every seed (or value), at some, at none.
    pub fn summary_line(&self) -> String {
        let n = self.summaries.len();
        let noun = self.run_noun();
        let every = self.claims.iter().filter(|c| c.holds() == n).count();
        let turning = self.claims.iter().filter(|c| c.steady().is_none()).count();
        let steady_known = self
            .claims
            .iter()
            .filter(|c| c.steady() == Some(Mark::KnownDifference))
            .count();
        let steady_other = self.claims.len() - every - turning - steady_known;
        let verb =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let over = match &self.varied {
            Some(v) if v.is_grid() => format!("over {n} combinations of {}", v.path),
            Some(v) => format!("over {n} values of {}", v.path),
            None => format!("over {n} seeds"),
        };
        let mut line = format!(
            "{over}, of {} {} at every {noun}, {} on the {noun}, {} at every {noun}",
            verb(self.claims.len(), "claim", "claims"),
            verb(every, "holds", "hold"),
            verb(turning, "turns", "turn"),
            verb(
                steady_known,
                "is a known difference",
                "are known differences"
            ),
        );
        if steady_other > 0 {
            line.push_str(&format!(
                ", {} at every {noun}",
                verb(
                    steady_other,
                    "fails or is not evaluated",
                    "fail or are not evaluated"
                )
            ));
        }
        line
    }
}

/// The seeds as the command names them: `1-7` for a run of consecutive seeds, else listed.
pub fn seeds_label(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if consecutive && seeds.len() > 1 => format!("{a}-{b}"),
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The most seeds one command runs.
pub const MOST_SEEDS: usize = 1000;

/// Reads the seeds as the command takes them: `A-B` (every seed from A to B) or `A,B,C`; at
/// least two, at most [`MOST_SEEDS`], none twice.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{}` is not a seed (a whole number from 0)", t.trim()))
    };
    let seeds: Vec<u64> = match text.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(format!("the range {a}-{b} runs backwards; write {b}-{a}"));
            }
            if b - a >= MOST_SEEDS as u64 {
                return Err(format!("{a}-{b} is more than {MOST_SEEDS} seeds"));
            }
            (a..=b).collect()
        }
        None => text.split(',').map(number).collect::<Result<_, _>>()?,
    };
    check_seeds(&seeds)?;
    Ok(seeds)
}

/// Checks seeds given as a list: at least two, at most [`MOST_SEEDS`], none twice.
pub fn check_seeds(seeds: &[u64]) -> Result<(), String> {
    if seeds.len() < 2 {
        return Err("give at least two seeds, as 1-7 or 1,4,9 (for one, use --seed N)".into());
    }
    if seeds.len() > MOST_SEEDS {
        return Err(format!("more than {MOST_SEEDS} seeds"));
    }
    let mut sorted = seeds.to_vec();
    sorted.sort_unstable();
    match sorted.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!("seed {} is given twice", w[0])),
        None => Ok(()),
    }
}

#[cfg(test)]
#[path = "across_tests.rs"]
mod tests;
