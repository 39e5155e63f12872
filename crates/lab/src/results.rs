//! Results on disk and on the terminal: `results.json` (everything, per run), `results.csv` (one
//! row per run and application, plus a machine row), `time-split.svg` (where the machine's time
//! went, per point: Gupta et al. 1991's utilization breakdown), and a readable table of means per
//! point.
//!
//! Output is a pure function of the records: no timestamps, no absolute paths, no hash-map
//! order, so the same experiment and seed give byte-identical files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::LabError;
use crate::experiment::Experiment;
use crate::metric;
use crate::reproduce::plot::{stacked_bars, SeriesStyle, StackedBar, StackedBars};
use crate::runner::RunRecord;

#[derive(Serialize)]
struct JsonFile<'a> {
    experiment: &'a str,
    description: &'a str,
    file: String,
    seed: u64,
    repetitions: u32,
    runs: Vec<JsonRun<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    point: &'a str,
    params: serde_json::Map<String, serde_json::Value>,
    repetition: u32,
    seed: u64,
    #[serde(flatten)]
    report: &'a smpsched_sim::RunReport,
}

/// The JSON document of an experiment's runs.
pub fn to_json(exp: &Experiment, runs: &[RunRecord]) -> String {
    let doc = JsonFile {
        experiment: &exp.name,
        description: &exp.description,
        file: exp.path.display().to_string(),
        seed: exp.seed,
        repetitions: exp.repetitions,
        runs: runs
            .iter()
            .map(|r| JsonRun {
                point: &r.point,
                params: r
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
                repetition: r.repetition,
                seed: r.seed,
                report: &r.report,
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("results serialize");
    s.push('\n');
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV table of an experiment's runs: one row per run and application, and one row per run
/// for the whole machine (`app` = `*`).
pub fn to_csv(runs: &[RunRecord]) -> String {
    let mut param_cols: Vec<&str> = Vec::new();
    for r in runs {
        for (k, _) in &r.params {
            if !param_cols.contains(&k.as_str()) {
                param_cols.push(k);
            }
        }
    }
    let mut out = String::from("point,repetition,seed");
    for c in &param_cols {
        out.push(',');
        out.push_str(&csv_field(c));
    }
    out.push_str(
        ",app,elapsed_cycles,completion_cycles,useful,stall,spin,idle,switch,kernel,\
         utilization,machine_share,context_switches,switches_per_slice_per_proc,migrations,\
         same_processor_rate\n",
    );
    for r in runs {
        let mut prefix = format!("{},{},{}", csv_field(&r.point), r.repetition, r.seed);
        for c in &param_cols {
            let v = r
                .params
                .iter()
                .find(|(k, _)| k == c)
                .map(|(_, v)| v.as_str())
                .unwrap_or("");
            prefix.push(',');
            prefix.push_str(&csv_field(v));
        }
        let rep = &r.report;
        let t = &rep.total;
        let _ = writeln!(
            out,
            "{prefix},*,{},{},{},{},{},{},{},{},{},{},,,,,",
            rep.elapsed_cycles,
            rep.elapsed_cycles,
            t.useful,
            t.stall,
            t.spin,
            t.idle,
            t.switch,
            t.kernel,
            rep.utilization,
            1.0
        );
        for a in &rep.apps {
            let t = &a.time;
            let _ = writeln!(
                out,
                "{prefix},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&a.name),
                rep.elapsed_cycles,
                a.completion_cycles,
                t.useful,
                t.stall,
                t.spin,
                t.idle,
                t.switch,
                t.kernel,
                a.utilization,
                a.machine_share,
                a.context_switches,
                a.switches_per_slice_per_proc,
                a.migrations,
                a.same_processor_rate
            );
        }
    }
    out
}

/// Writes `results.json` and `results.csv` into `dir` (created if needed). Each file is written
/// to a temporary name first and renamed, so a failure never leaves a half-written result.
pub fn write_results(
    dir: &Path,
    exp: &Experiment,
    runs: &[RunRecord],
) -> Result<Vec<PathBuf>, LabError> {
    std::fs::create_dir_all(dir).map_err(|e| LabError::io(dir, e))?;
    let title = format!("{}: where the machine's time went", exp.name);
    let files = [
        ("results.json", to_json(exp, runs)),
        ("results.csv", to_csv(runs)),
        ("time-split.svg", time_split_chart(&title, exp, runs)?),
    ];
    let mut written = Vec::new();
    for (name, body) in files {
        let path = dir.join(name);
        write_atomic(&path, body.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// A stacked bar per point (means over repetitions) of the machine's time split into useful,
/// stall, spin, idle, switch and kernel, as an SVG document.
pub fn time_split_chart(
    title: &str,
    exp: &Experiment,
    runs: &[RunRecord],
) -> Result<String, LabError> {
    let cats = ["useful", "stall", "spin", "idle", "switch", "kernel"];
    let bars = exp
        .points
        .iter()
        .map(|p| StackedBar {
            label: p.label.clone(),
            values: cats
                .iter()
                .map(|c| {
                    let m = if *c == "useful" { "utilization" } else { c };
                    metric::value(m, p, runs).map_or(0.0, |v| v.max(0.0))
                })
                .collect(),
            style: SeriesStyle::Ours,
        })
        .collect();
    stacked_bars(&StackedBars {
        title: title.to_string(),
        y_label: "% of machine time".into(),
        categories: cats.iter().map(|c| c.to_string()).collect(),
        bars,
    })
    .map_err(|e| LabError::Internal(format!("plot: {e}")))
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, bytes).map_err(|e| LabError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| LabError::io(path, e))
}

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// A readable table of the means per point: elapsed time, machine utilization and the time
/// split, then each application's utilization, machine share and completion time.
pub fn terminal_table(exp: &Experiment, runs: &[RunRecord]) -> String {
    let mut rows: Vec<Vec<String>> = vec![vec![
        "point".into(),
        "elapsed Mcyc".into(),
        "util %".into(),
        "stall %".into(),
        "spin %".into(),
        "idle %".into(),
        "switch %".into(),
        "kernel %".into(),
    ]];
    let mut app_rows: Vec<Vec<String>> = vec![vec![
        "point".into(),
        "app".into(),
        "util %".into(),
        "share %".into(),
        "done Mcyc".into(),
        "switch/slice/cpu".into(),
    ]];
    for point in &exp.points {
        let rs: Vec<&RunRecord> = runs.iter().filter(|r| r.point == point.label).collect();
        if rs.is_empty() {
            continue;
        }
        let n = rs.len() as f64;
        let mean = |f: &dyn Fn(&RunRecord) -> f64| rs.iter().map(|r| f(r)).sum::<f64>() / n;
        let frac = |f: &dyn Fn(&smpsched_sim::TimeSplit) -> u64| {
            mean(&|r: &RunRecord| {
                let t = &r.report.total;
                f(t) as f64 / t.total().max(1) as f64
            })
        };
        rows.push(vec![
            point.label.clone(),
            format!("{:.3}", mean(&|r| r.report.elapsed_cycles as f64) / 1e6),
            pct(mean(&|r| r.report.utilization)),
            pct(frac(&|t| t.stall)),
            pct(frac(&|t| t.spin)),
            pct(frac(&|t| t.idle)),
            pct(frac(&|t| t.switch)),
            pct(frac(&|t| t.kernel)),
        ]);
        for (i, app) in point.apps.iter().enumerate() {
            let a = |f: &dyn Fn(&smpsched_sim::AppReport) -> f64| mean(&|r| f(&r.report.apps[i]));
            app_rows.push(vec![
                point.label.clone(),
                app.name.clone(),
                pct(a(&|x| x.utilization)),
                pct(a(&|x| x.machine_share)),
                format!("{:.3}", a(&|x| x.completion_cycles as f64) / 1e6),
                format!("{:.2}", a(&|x| x.switches_per_slice_per_proc)),
            ]);
        }
    }
    let mut out = format!(
        "{} — {} point(s) x {} repetition(s), means\n\n",
        exp.name,
        exp.points.len(),
        exp.repetitions
    );
    out.push_str(&format_table(&rows));
    out.push('\n');
    out.push_str(&format_table(&app_rows));
    out
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
