//! The readable table `smpsched run` prints: means per point of the terminal columns of the
//! measure table, the machine's and each application's; with repetitions, the spread of the
//! elapsed time beside its mean, and a line when every point's repetitions ran identically.

use crate::exec::runner::RunRecord;
use crate::metric::{self, TermColumn};
use crate::spec::experiment::Experiment;

/// A readable table of the means per point: the terminal columns of the measure table, the
/// machine's (elapsed time, utilization, the time split), then each application's.
pub fn terminal_table(exp: &Experiment, runs: &[RunRecord]) -> String {
    let (machine, apps) = (
        metric::views::terminal_columns(false),
        metric::views::terminal_columns(true),
    );
    let header = |first: &[&str], cols: &[TermColumn]| -> Vec<String> {
        let names = cols.iter().map(|c| c.header);
        first
            .iter()
            .copied()
            .chain(names)
            .map(String::from)
            .collect()
    };
    let repeated = exp.repetitions > 1;
    let mut rows = vec![header(&["point"], &machine)];
    if repeated {
        rows[0].insert(2, "± sd %".into());
    }
    let mut app_rows = vec![header(&["point", "app"], &apps)];
    let mut all_identical = true;
    let runs_of = crate::metric::runs_of(runs);
    for point in &exp.points {
        let rs: Vec<&RunRecord> = runs_of(&point.label)
            .iter()
            .filter(|r| r.point == point.label)
            .collect();
        if rs.is_empty() {
            continue;
        }
        let mean = |c: &TermColumn, app: Option<usize>| {
            let sum: f64 = rs
                .iter()
                .map(|r| (c.read)(&r.report, app.and_then(|i| r.report.apps.get(i))))
                .sum();
            c.format.show(sum / rs.len() as f64)
        };
        let mut row = vec![point.label.clone()];
        row.extend(machine.iter().map(|c| mean(c, None)));
        if repeated {
            let elapsed: Vec<f64> = rs.iter().map(|r| r.report.elapsed_cycles as f64).collect();
            all_identical &= elapsed.windows(2).all(|w| w[0] == w[1]);
            row.insert(2, format!("{:.1}", spread_percent(&elapsed)));
        }
        rows.push(row);
        for (i, app) in point.apps.iter().enumerate() {
            let mut row = vec![point.label.clone(), app.name.clone()];
            row.extend(apps.iter().map(|c| mean(c, Some(i))));
            app_rows.push(row);
        }
    }
    let mut out = format!(
        "{} — {} point(s) x {} repetition(s), means\n\n",
        exp.name,
        exp.points.len(),
        exp.repetitions
    );
    out.push_str(&format_table(&rows));
    if repeated && all_identical && rows.len() > 1 {
        out.push_str(
            "(every point's repetitions ran alike, cycle for cycle: nothing in these runs draws \
             on the run's seed, so there is no spread to see; vary an input's own seed, such as \
             a workload's graph_seed, or a random demand, for one)\n",
        );
    }
    out.push('\n');
    out.push_str(&format_table(&app_rows));
    out
}

/// The standard deviation of `xs` as a percentage of their mean (0 for fewer than two values or
/// a zero mean).
fn spread_percent(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 || mean == 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    100.0 * var.sqrt() / mean
}

/// Aligns rows into columns: the first column left-aligned, the others right-aligned.
pub fn format_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    out
}
