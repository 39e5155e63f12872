//! The `[reproduce]` section of an experiment file: its schema (what the paper reports, its
//! claims, the plot to draw), parsed and checked against the file's points before anything runs.
//!
//! ```toml
//! [reproduce]
//! paper = "black90"
//! title = "Table 2: time per synchronization"
//! metric = "us_per_op"              # the measure compared by default (see `metric::MEASURES`)
//! tolerance = "50%"                 # default tolerance: "10%" relative, "±2" absolute
//! scale = ["workload.0.syncs"]      # integer sizes that --scale multiplies
//! notes = ["why a number differs"]
//! plot = { kind = "line", x = "workload.0.threads", x_label = "threads", log_y = true }
//!
//! [[reproduce.expect]]
//! point = "handoff/threads=3"
//! paper = 413
//!
//! [[reproduce.claim]]
//! claim = "flat(us_per_op, handoff/threads=3, handoff/threads=7, within 10%)"
//! known_difference = "optional: why it does not reproduce"
//! headline = "optional: the paper's finding in words, listed at the top of the report"
//! ```
//!
//! `agreement = ["us_per_op"]` (optional) makes the report show, for each measure named, how
//! many expected values are within 25% and their rank correlation with the paper's, and draw
//! them, ours against the paper's (`FILE-agreement.svg`).

use serde::Deserialize;

use crate::input::error::InputError;
use crate::input::source::{split_de_error, Source};
use crate::metric;
use crate::plan::point::Point;
use crate::reproduce::reason::Reason;
use crate::reproduce::{Claim, Reference, Tolerance};

/// The `[reproduce]` section of an experiment file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Paper identifier (the folder under `experiments/`), e.g. `black90`.
    pub paper: String,
    /// Which table or figure this file reproduces.
    pub title: String,
    /// The measure compared by default.
    pub metric: String,
    /// Default tolerance of expected values.
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    /// Integer sizes (dotted paths) that `--scale` multiplies.
    #[serde(default)]
    pub scale: Vec<String>,
    /// The scale the test suite runs this file at (default 0.25): a file whose paper-scale
    /// runs are long names a smaller one, so that the suite stays quick.
    #[serde(default)]
    pub test_scale: Option<f64>,
    /// Notes for the report: why numbers differ, what was assumed; `{EXPR}` values are the run's
    /// ([`crate::reproduce::reason`]).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The notes, parsed (filled in when the file is checked).
    #[serde(skip)]
    pub note_texts: Vec<Reason>,
    /// The plot to draw.
    #[serde(default)]
    pub plot: Option<PlotSpec>,
    /// The paper's values.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// The paper's claims.
    #[serde(default)]
    pub claim: Vec<ClaimSpec>,
    /// Measures whose agreement with the paper the report shows: values within 25% and the
    /// rank correlation over the expected values of each (see [`crate::reproduce::agreement`]).
    #[serde(default)]
    pub agreement: Vec<String>,
}

/// The kinds of plot a reproduction draws (`[reproduce] plot.kind`), one table for the parser,
/// the drawing and the guide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum PlotKind {
    /// The metric against a swept parameter, one series per remaining label.
    Line,
    /// Ours beside the paper's per expected point.
    Bars,
    /// The machine's time split per point.
    Stacked,
    /// Each application's held time split into useful, cache-miss and synchronization, beside
    /// the paper's bar (Gupta et al.'s figures).
    Apps,
}

impl PlotKind {
    /// Every kind, in the order the guide and error messages list them.
    pub const ALL: [PlotKind; 4] = [
        PlotKind::Line,
        PlotKind::Bars,
        PlotKind::Stacked,
        PlotKind::Apps,
    ];

    /// What the plot draws (the guide's and `smpsched list`'s text).
    pub fn doc(self) -> &'static str {
        match self {
            PlotKind::Line => {
                "the metric against the swept parameter `x`, one line per remaining label, \
                 `log_y` for a logarithmic axis (also drawn where the values span more than \
                 100 to 1), `log_x` for a logarithmic x axis"
            }
            PlotKind::Bars => {
                "ours beside the paper's for each expected point, a panel per measure, each \
                 with its own y axis (logarithmic where its values span more than 100 to 1)"
            }
            PlotKind::Stacked => "where the machine's time went, per point",
            PlotKind::Apps => {
                "Gupta's bars: each application's held time split into useful work, cache-miss \
                 stall and synchronization, per point, beside the paper's bar wherever the file \
                 expects an `app_util:APP` value"
            }
        }
    }

    /// The guide's table of plot kinds (Markdown), generated from [`PlotKind::ALL`].
    pub fn guide_table() -> String {
        let mut out = String::from("| plot kind | what it draws |\n|---|---|\n");
        for k in PlotKind::ALL {
            out.push_str(&format!("| `\"{}\"` | {} |\n", k.name(), k.doc()));
        }
        out
    }

    /// The name an experiment file writes.
    pub fn name(self) -> &'static str {
        match self {
            PlotKind::Line => "line",
            PlotKind::Bars => "bars",
            PlotKind::Stacked => "stacked",
            PlotKind::Apps => "apps",
        }
    }
}

impl TryFrom<String> for PlotKind {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        PlotKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                let valid: Vec<&str> = PlotKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown plot kind `{name}`; valid: {}", valid.join(", "))
            })
    }
}

/// The plot of a reproduction.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Which plot (see [`PlotKind`]).
    pub kind: PlotKind,
    /// For `line`: the swept parameter (dotted path) on the x axis.
    #[serde(default)]
    pub x: Option<String>,
    /// Label of the x axis.
    #[serde(default)]
    pub x_label: Option<String>,
    /// Label of the y axis (default: the metric).
    #[serde(default)]
    pub y_label: Option<String>,
    /// Logarithmic y axis (line plots).
    #[serde(default)]
    pub log_y: bool,
    /// Logarithmic x axis (line plots): for a parameter that doubles (processors 1 to 256).
    #[serde(default)]
    pub log_x: bool,
    /// The plot's title, where it shows less than the file's title names (default: the file's
    /// title).
    #[serde(default)]
    pub title: Option<String>,
}

/// A value the paper reports for one point.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The point's label.
    pub point: String,
    /// The measure (default: the section's `metric`).
    #[serde(default)]
    pub metric: Option<String>,
    /// The paper's value.
    pub paper: f64,
    /// Tolerance (default: the section's).
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    /// A note shown beside the row.
    #[serde(default)]
    pub note: Option<String>,
}

/// A claim of the paper, with an optional known difference.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// The claim as written.
    #[serde(rename = "claim")]
    pub text: String,
    /// The parsed claim (filled in when the file is checked).
    #[serde(skip)]
    pub parsed: Option<Claim>,
    /// If the claim does not reproduce, why (the report shows it as a known difference), with
    /// `{EXPR}` values the report fills in from the run ([`crate::reproduce::reason`]).
    #[serde(default)]
    pub known_difference: Option<String>,
    /// The known difference, parsed (filled in when the file is checked).
    #[serde(skip)]
    pub reason: Option<Reason>,
    /// The paper's finding this claim checks, in words, when it is one of the paper's headline
    /// findings: the report lists these first.
    #[serde(default)]
    pub headline: Option<String>,
}

/// Reads and checks the `[reproduce]` table of a file against its points.
/// The error of the first element of `[[reproduce.KEY]]` that does not read as a `T`, naming
/// its index (`reproduce.claim.3.known_difference`); nothing when each reads (or the key is
/// absent or no list: the whole section's reading says what is wrong then).
fn element_errors<T: serde::de::DeserializeOwned>(
    src: &Source,
    table: &toml::Table,
    key: &str,
) -> Result<(), InputError> {
    let Some(toml::Value::Array(items)) = table.get(key) else {
        return Ok(());
    };
    for (i, item) in items.iter().enumerate() {
        if let Err(e) = item.clone().try_into::<T>() {
            let (field, message) = split_de_error(&e);
            let at = match field.as_str() {
                "" => format!("reproduce.{key}.{i}"),
                f => format!("reproduce.{key}.{i}.{f}"),
            };
            return Err(src.error(&at, message));
        }
    }
    Ok(())
}

pub(crate) fn parse_spec(
    src: &Source,
    table: toml::Table,
    points: &[Point],
) -> Result<Spec, InputError> {
    // toml's error path leaves out the index of an array's element: find it by reading the
    // lists of tables element by element first.
    element_errors::<ClaimSpec>(src, &table, "claim")?;
    element_errors::<Expect>(src, &table, "expect")?;
    let mut spec: Spec = toml::Value::Table(table).try_into().map_err(|e| {
        let (key, message) = split_de_error(&e);
        let field = if key.is_empty() {
            "reproduce".to_string()
        } else {
            format!("reproduce.{key}")
        };
        src.error(&field, message)
    })?;
    if let Some(t) = spec.test_scale {
        if !(t.is_finite() && t > 0.0 && t <= 1.0) {
            return Err(src.error(
                "reproduce.test_scale",
                format!("must be a factor above 0 and at most 1, got {t}"),
            ));
        }
    }
    let find = |label: &str| find(points, label);
    let Some(first) = points.first() else {
        return Err(src.error("reproduce", "the experiment has no points"));
    };
    // The section's measure must be defined wherever it is shown: on every point for a line
    // plot or a table without expected values, else on the points of the expected values that
    // do not name their own.
    let line_plot = spec.plot.as_ref().is_some_and(|p| p.kind == PlotKind::Line);
    let mut metric_points: Vec<&Point> = if line_plot || spec.expect.is_empty() {
        points.iter().collect()
    } else {
        spec.expect
            .iter()
            .filter(|e| e.metric.is_none())
            .filter_map(|e| find(&e.point))
            .collect()
    };
    if metric_points.is_empty() {
        metric_points.push(first);
    }
    for p in metric_points {
        metric::check(&spec.metric, p).map_err(|m| src.error("reproduce.metric", m))?;
    }
    check_expects(src, &spec, points)?;
    check_agreement(src, &spec)?;
    parse_claims(src, &mut spec, points)?;
    for (i, note) in spec.notes.iter().enumerate() {
        let field = format!("reproduce.notes.{i}");
        let text = Reason::parse(note).map_err(|e| src.error(&field, e.to_string()))?;
        check_references(src, &field, "the note", &text.references(), points)?;
        spec.note_texts.push(text);
    }
    if let Some(plot) = &spec.plot {
        if plot.kind == PlotKind::Line {
            check_plot_x(src, plot.x.as_deref(), points)?;
        }
    }
    Ok(spec)
}

/// The point labelled `label`.
fn find<'a>(points: &'a [Point], label: &str) -> Option<&'a Point> {
    points.iter().find(|p| p.label == label)
}

/// The first labels of `points`, for error messages.
fn known_points(points: &[Point]) -> String {
    let names: Vec<&str> = points.iter().map(|p| p.label.as_str()).take(12).collect();
    names.join(", ")
}

/// Each expected value names a point, a measure defined there, a finite paper value and a
/// tolerance (its own or the section's).
fn check_expects(src: &Source, spec: &Spec, points: &[Point]) -> Result<(), InputError> {
    for (i, e) in spec.expect.iter().enumerate() {
        let Some(p) = find(points, &e.point) else {
            return Err(src.error(
                &format!("reproduce.expect.{i}.point"),
                format!(
                    "no point is labelled `{}`; points: {} ...",
                    e.point,
                    known_points(points)
                ),
            ));
        };
        if let Some(m) = &e.metric {
            metric::check(m, p)
                .map_err(|m| src.error(&format!("reproduce.expect.{i}.metric"), m))?;
        }
        if !e.paper.is_finite() || e.paper.abs() > 1e15 {
            return Err(src.error(
                &format!("reproduce.expect.{i}.paper"),
                format!(
                    "the paper's value must be a finite number of at most 1e15 in size, got {}",
                    e.paper
                ),
            ));
        }
        if e.tolerance.is_none() && spec.tolerance.is_none() {
            return Err(src.error(
                &format!("reproduce.expect.{i}.tolerance"),
                "no tolerance here and no default `tolerance` in [reproduce]",
            ));
        }
    }
    Ok(())
}

/// Each measure named in `agreement` is the measure of at least three expected values (fewer
/// give no rank correlation), named once.
fn check_agreement(src: &Source, spec: &Spec) -> Result<(), InputError> {
    for (i, m) in spec.agreement.iter().enumerate() {
        let field = format!("reproduce.agreement.{i}");
        if spec.agreement[..i].contains(m) {
            return Err(src.error(&field, format!("`{m}` is named twice")));
        }
        let count = spec
            .expect
            .iter()
            .filter(|e| e.metric.as_ref().unwrap_or(&spec.metric) == m)
            .count();
        if count < 3 {
            return Err(src.error(
                &field,
                format!(
                    "`{m}` is the measure of {count} expected value(s); agreement needs at \
                     least 3 (`[[reproduce.expect]]` with this `metric`, or the section's)"
                ),
            ));
        }
    }
    Ok(())
}

/// Parses each claim and checks that the points and measures it reads exist; a headline must
/// say something.
fn parse_claims(src: &Source, spec: &mut Spec, points: &[Point]) -> Result<(), InputError> {
    for (i, c) in spec.claim.iter_mut().enumerate() {
        let claim = Claim::parse(&c.text).map_err(|e| {
            src.error(
                &format!("reproduce.claim.{i}.claim"),
                format!("at column {}: {}", e.column + 1, e.message),
            )
        })?;
        let field = format!("reproduce.claim.{i}.claim");
        check_references(src, &field, "the claim", &claim.references(), points)?;
        if let Some(text) = &c.known_difference {
            let field = format!("reproduce.claim.{i}.known_difference");
            let reason = Reason::parse(text).map_err(|e| src.error(&field, e.to_string()))?;
            check_references(
                src,
                &field,
                "the known difference",
                &reason.references(),
                points,
            )?;
            c.reason = Some(reason);
        }
        if c.headline.as_deref().is_some_and(|h| h.trim().is_empty()) {
            return Err(src.error(
                &format!("reproduce.claim.{i}.headline"),
                "a headline finding must say the finding in words, got an empty text",
            ));
        }
        c.parsed = Some(claim);
    }
    Ok(())
}

/// Each value `field` (`what`, in messages) reads must be a point of the file and a measure
/// that point has.
fn check_references(
    src: &Source,
    field: &str,
    what: &str,
    references: &[Reference],
    points: &[Point],
) -> Result<(), InputError> {
    for r in references {
        let Some(p) = find(points, &r.point) else {
            return Err(src.error(
                field,
                format!(
                    "unknown point `{}` in {what}; points: {} ...",
                    r.point,
                    known_points(points)
                ),
            ));
        };
        metric::check(&r.metric, p).map_err(|m| src.error(field, format!("in {what}: {m}")))?;
    }
    Ok(())
}

/// A line plot's `x` must be a parameter the points set (a swept path) with numeric values.
fn check_plot_x(src: &Source, x: Option<&str>, points: &[Point]) -> Result<(), InputError> {
    let mut swept: Vec<&str> = Vec::new();
    for p in points {
        for (k, _) in &p.params {
            if !swept.contains(&k.as_str()) {
                swept.push(k);
            }
        }
    }
    let listed = || {
        if swept.is_empty() {
            "this file sweeps no parameter (add a [sweep] or [[point]] `set`)".to_string()
        } else {
            let quoted: Vec<String> = swept.iter().map(|k| format!("`{k}`")).collect();
            format!("swept parameters: {}", quoted.join(", "))
        }
    };
    let Some(x) = x else {
        return Err(src.error(
            "reproduce.plot.x",
            format!("a line plot needs `x`; {}", listed()),
        ));
    };
    if !swept.contains(&x) {
        return Err(src.error(
            "reproduce.plot.x",
            format!(
                "`{x}` is not a swept parameter, so the plot would have no points; {}",
                listed()
            ),
        ));
    }
    let numeric = points
        .iter()
        .flat_map(|p| &p.params)
        .any(|(k, v)| k == x && v.number().is_some());
    if !numeric {
        return Err(src.error(
            "reproduce.plot.x",
            format!(
                "`{x}` takes no numeric value, so it cannot be an axis; {}",
                listed()
            ),
        ));
    }
    Ok(())
}
