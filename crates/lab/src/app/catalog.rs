//! The catalogue behind `smpsched list` and `smpsched explain`: experiment files on disk, and the
//! registered scheduling policies and workloads with their documentation.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use smpsched_sim::sched::{ParamInfo, POLICIES};
use smpsched_sim::MachineConfig;
use smpsched_workloads::WORKLOADS;

use crate::input::error::LabError;
use crate::spec::repro_spec::PlotKind;

/// An experiment file found on disk, with the name and description it declares.
#[derive(Clone, Debug)]
pub struct ExperimentEntry {
    /// Path of the file.
    pub path: PathBuf,
    /// Its `name`, or why it could not be read.
    pub name: String,
    /// Its `description` (first line).
    pub description: String,
    /// The paper's headline findings its claims check (`[[reproduce.claim]] headline`), in order.
    pub headlines: Vec<String>,
}

pub use crate::input::source::{experiment_files, find_experiment_files, Skipped};

/// The experiment files under `dir` with their declared names and descriptions, and the files
/// that could not be read (a FIFO, a device, a binary or huge file), each with why.
pub fn experiments(dir: &Path) -> Result<(Vec<ExperimentEntry>, Skipped), LabError> {
    let (files, mut skipped) = find_experiment_files(dir)?;
    let mut out = Vec::new();
    for path in files {
        let text = match crate::input::source::read_experiment(&path) {
            Ok(t) => t,
            Err(e) => {
                skipped.push((path, e.message));
                continue;
            }
        };
        let (name, description, headlines) = match toml::from_str::<toml::Table>(&text) {
            Ok(t) => (
                t.get("name")
                    .and_then(|v| v.as_str())
                    .unwrap_or("(no name)")
                    .to_string(),
                t.get("description")
                    .and_then(|v| v.as_str())
                    .and_then(|d| d.lines().next())
                    .unwrap_or("")
                    .to_string(),
                headlines(&t),
            ),
            Err(e) => {
                // Not an experiment file until it parses: told under "Skipped", with where.
                let line = e
                    .span()
                    .map(|r| crate::input::source::line_at(&text, r.start));
                let at = line.map_or_else(String::new, |l| format!(" (line {l})"));
                skipped.push((path, format!("malformed TOML{at}: {}", e.message().trim())));
                continue;
            }
        };
        out.push(ExperimentEntry {
            path,
            name,
            description,
            headlines,
        });
    }
    skipped.sort();
    Ok((out, skipped))
}

/// The text of `smpsched list`: reproductions and experiments under `dir`, policies, workloads,
/// presets. A `dir` the user named (`explicit`) must exist; the default one may be absent (run
/// outside the repository, the catalogue of policies is still useful).
pub fn listing(dir: &Path, explicit: bool) -> Result<String, LabError> {
    let mut out = String::new();
    if dir.is_dir() {
        let (found, skipped) = experiments(dir)?;
        let papers = crate::app::papers::papers(dir)?;
        if !papers.is_empty() {
            let _ = writeln!(out, "Reproductions (smpsched reproduce NAME):");
            for p in &papers {
                let title = crate::app::papers::paper(dir, p).map_or_else(String::new, |p| p.title);
                let _ = writeln!(out, "  {p:<16} {title}");
            }
            out.push('\n');
        }
        let _ = writeln!(out, "Experiments (under {}):", dir.display());
        for e in found {
            let _ = writeln!(out, "  {:<44} {}", e.path.display(), e.description);
        }
        if !skipped.is_empty() {
            let _ = writeln!(out, "\nSkipped (cannot be read as experiment files):");
            for (path, why) in skipped {
                let _ = writeln!(out, "  {}: {why}", path.display());
            }
        }
    } else if explicit {
        return Err(crate::app::papers::no_experiments_folder(dir, "--dir"));
    } else {
        let _ = writeln!(
            out,
            "Experiments: no folder {} here (run from the repository root)",
            dir.display()
        );
    }
    let _ = writeln!(out, "\nSchedulers ([scheduler] policy = ...):");
    for p in POLICIES {
        let _ = writeln!(out, "  {:<16} {}", p.name, p.summary);
    }
    let _ = writeln!(out, "\nWorkloads ([[workload]] kind = ...):");
    for w in WORKLOADS {
        let _ = writeln!(out, "  {:<16} {}", w.name, w.summary);
    }
    let _ = writeln!(
        out,
        "\nReady-queue structures in simulated memory (chosen by a workload's parameters):"
    );
    for s in smpsched_sim::readyq::STRUCTURES {
        let _ = writeln!(out, "  {:<18} {}", s.name, s.summary);
    }
    let _ = writeln!(out, "\nMachine presets ([machine] preset = ...):");
    for p in MachineConfig::PRESETS {
        let _ = writeln!(out, "  {:<16} {}", p.name, p.summary);
    }
    let _ = write!(out, "\n{}", crate::metric::views::listing());
    let _ = writeln!(out, "\nPlot kinds ([reproduce] plot = {{ kind = ... }}):");
    for k in PlotKind::ALL {
        let _ = writeln!(out, "  {:<16} {}", k.name(), k.doc());
    }
    let _ = writeln!(
        out,
        "\n`smpsched explain NAME` describes a policy, a workload, a structure, a machine preset or a \
         paper."
    );
    Ok(out)
}

/// The `headline` of each `[[reproduce.claim]]` of a parsed file that has one.
fn headlines(file: &toml::Table) -> Vec<String> {
    file.get("reproduce")
        .and_then(|r| r.get("claim"))
        .and_then(|c| c.as_array())
        .map(|claims| {
            claims
                .iter()
                .filter_map(|c| c.get("headline").and_then(|h| h.as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn params_text(out: &mut String, params: &[ParamInfo]) {
    if params.is_empty() {
        out.push_str("Parameters: none\n");
        return;
    }
    out.push_str("Parameters:\n");
    let width = params
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0)
        .max(16);
    for p in params {
        let _ = writeln!(
            out,
            "  {:<width$} default {:<22} {}",
            p.name, p.default, p.doc
        );
    }
}

/// The text of `smpsched explain PAPER`: the paper, what the lab takes from it, and its
/// reproduction files under `dir` with their descriptions.
fn explain_paper(p: &crate::app::papers::Paper, dir: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — paper: {}\n", p.id, p.title);
    let _ = writeln!(out, "{}\n", p.summary);
    let folder = dir.join(&p.id);
    match experiments(&folder) {
        Ok((files, _)) if !files.is_empty() => {
            let _ = writeln!(out, "Reproduction files (under {}):", folder.display());
            let one = files[0]
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().to_string());
            for e in &files {
                let _ = writeln!(out, "  {:<44} {}", e.path.display(), e.description);
            }
            let found: Vec<(&str, &ExperimentEntry)> = files
                .iter()
                .flat_map(|e| e.headlines.iter().map(move |h| (h.as_str(), e)))
                .collect();
            if !found.is_empty() {
                let _ = writeln!(
                    out,
                    "\nThe paper's headline findings, each checked as a claim (the report opens \
                     with their verdicts):"
                );
                for (h, e) in found {
                    let stem = e.path.file_stem().unwrap_or_default().to_string_lossy();
                    let _ = writeln!(out, "  - {h} [{stem}]");
                }
            }
            let _ = writeln!(
                out,
                "\nUse: smpsched reproduce {} (--scale 0.1 for a quick look; --only {} for one \
                 file)",
                p.id,
                one.unwrap_or_default()
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "No reproduction files under {} (not reproduced yet, or run from the \
                 repository root).",
                folder.display()
            );
        }
    }
    out
}

/// The text of `smpsched explain NAME`, or `None` if no policy, workload, machine preset or
/// paper has that name; a paper's reproduction files are looked for under `dir`.
pub fn explain(name: &str, dir: &Path) -> Option<String> {
    let is_paper = crate::app::papers::papers(dir).is_ok_and(|ps| ps.iter().any(|p| p == name))
        || crate::app::papers::built_in_papers().any(|p| p == name);
    if let Some(p) = crate::app::papers::paper(dir, name).filter(|_| is_paper) {
        return Some(explain_paper(&p, dir));
    }
    let mut out = String::new();
    if let Some(p) = smpsched_sim::sched::policy(name) {
        let _ = writeln!(out, "{} — scheduling policy: {}\n", p.name, p.summary);
        let _ = writeln!(out, "{}\n", p.description);
        let _ = writeln!(out, "Source: {}\n", p.paper);
        params_text(&mut out, p.params);
        let _ = writeln!(out, "\nUse: [scheduler] policy = \"{}\"", p.name);
        return Some(out);
    }
    if let Some(p) = MachineConfig::PRESETS.iter().find(|p| p.name == name) {
        let _ = writeln!(out, "{} — machine preset: {}\n", p.name, p.summary);
        let _ = writeln!(
            out,
            "What `[machine] preset = \"{}\"` stands for; an experiment file may override any \
             of these fields (times in cycles but the slice in milliseconds, the clock in MHz).\n",
            p.name
        );
        out.push_str(&preset_toml(&(p.build)()));
        return Some(out);
    }
    if let Some(s) = smpsched_sim::readyq::structure(name) {
        let _ = writeln!(out, "{} — ready-queue structure: {}\n", s.name, s.summary);
        let _ = writeln!(out, "{}\n", s.description);
        let _ = writeln!(out, "Source: {}\n", s.paper);
        let _ = writeln!(out, "Used by: {}", s.used_by);
        return Some(out);
    }
    if let Some(w) = smpsched_workloads::workload(name) {
        let _ = writeln!(out, "{} — workload: {}\n", w.name, w.summary);
        let _ = writeln!(out, "{}\n", w.description);
        let _ = writeln!(out, "Source: {}\n", w.paper);
        params_text(&mut out, w.params);
        let _ = writeln!(out, "\nUse: [[workload]] kind = \"{}\"", w.name);
        return Some(out);
    }
    None
}

/// A machine configuration as the `[machine]` section of an experiment file.
fn preset_toml(m: &MachineConfig) -> String {
    let mut table = match toml::Value::try_from(m) {
        Ok(toml::Value::Table(t)) => t,
        _ => return format!("{m:?}\n"),
    };
    table.remove("name");
    let mut section = toml::Table::new();
    section.insert("preset".into(), toml::Value::String(m.name.clone()));
    for (key, value) in table {
        // The slice as a file writes it: `slice_ms` (`slice_cycles` is the deprecated name).
        match key.as_str() {
            "slice_cycles" => section.insert("slice_ms".into(), slice_ms(m).into()),
            _ => section.insert(key, value),
        };
    }
    let mut doc = toml::Table::new();
    doc.insert("machine".into(), toml::Value::Table(section));
    toml::to_string(&doc).unwrap_or_else(|e| format!("({e})\n"))
}

/// The machine's slice in milliseconds, as `[machine] slice_ms` writes it (the shortest
/// decimal that gives back its cycles).
fn slice_ms(m: &MachineConfig) -> f64 {
    let exact = m.slice_cycles as f64 / (m.clock_mhz * 1000.0);
    (0..=9)
        .map(|digits| {
            let scale = 10f64.powi(digits);
            (exact * scale).round() / scale
        })
        .find(|&ms| m.ms(ms).max(1) == m.slice_cycles)
        .unwrap_or(exact)
}

/// Whether `name` is one of the measures `smpsched list` shows (`app_util` or `app_util:APP`
/// for `app_util:APP`).
pub(crate) fn is_measure(name: &str) -> bool {
    let stem = |n: &str| n.split(':').next().unwrap_or(n).to_string();
    crate::metric::MEASURES
        .iter()
        .filter(|m| m.is_measure())
        .any(|m| stem(&m.written()) == stem(name))
}

/// Every name `explain` knows, for error messages: the papers are the folders of `dir` and
/// those built in.
pub fn explainable(dir: &Path) -> Vec<String> {
    let mut papers = crate::app::papers::papers(dir).unwrap_or_default();
    papers.extend(crate::app::papers::built_in_papers().map(str::to_string));
    papers.sort();
    papers.dedup();
    POLICIES
        .iter()
        .map(|p| p.name)
        .chain(WORKLOADS.iter().map(|w| w.name))
        .chain(smpsched_sim::readyq::STRUCTURES.iter().map(|s| s.name))
        .chain(MachineConfig::PRESETS.iter().map(|p| p.name))
        .map(str::to_string)
        .chain(papers)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_is_explained_by_every_field_it_sets() {
        for p in MachineConfig::PRESETS {
            let text = explain(p.name, Path::new("experiments")).expect("presets are explainable");
            assert!(text.contains(p.summary), "{text}");
            // The TOML shown is the whole preset: read back, it is the same machine.
            let toml_part = &text[text.find("\n[machine]\n").expect("a [machine] section")..];
            let mut doc: toml::Table = toml::from_str(toml_part).unwrap();
            let mut machine = doc.remove("machine").unwrap();
            let section = machine.as_table_mut().unwrap();
            let preset = section.remove("preset").unwrap();
            assert_eq!(preset.as_str(), Some(p.name));
            section.insert("name".into(), preset);
            // The slice is shown as a file writes it, in milliseconds, never by its deprecated
            // name; read back through the resolver's rule it gives the preset's cycles.
            assert!(!section.contains_key("slice_cycles"), "{text}");
            let ms = section
                .remove("slice_ms")
                .and_then(|v| v.as_float())
                .unwrap();
            let cycles = (p.build)().ms(ms).max(1);
            section.insert("slice_cycles".into(), (cycles as i64).into());
            let back: MachineConfig = machine.try_into().unwrap();
            assert_eq!(back, (p.build)(), "{}", p.name);
        }
        assert!(explainable(Path::new("experiments")).contains(&"bbn-gp1000".to_string()));
    }

    #[test]
    fn a_paper_is_explained_with_the_headline_findings_its_files_check() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let text = explain("george90", &dir).expect("george90 is a paper");
        assert!(
            text.contains("headline findings, each checked as a claim"),
            "{text}"
        );
        assert!(
            text.contains(
                "  - The sieve's parallelism peaks between 16 and 24 processors (Figure 6) [fig6]"
            ),
            "{text}"
        );
        // Every headline of the paper's files is listed, each once.
        let (files, _) = experiments(&dir.join("george90")).unwrap();
        let all: Vec<&String> = files.iter().flat_map(|e| &e.headlines).collect();
        assert!(all.len() >= 5, "{all:?}");
        for h in all {
            assert_eq!(text.matches(h.as_str()).count(), 1, "{h}");
        }
    }

    #[test]
    fn the_structures_are_listed_and_explained_with_their_sections() {
        let text = explain("ddq", Path::new("experiments")).expect("ddq is explainable");
        assert!(text.contains("George 1990 sections 2-2.4"), "{text}");
        assert!(explain("central-dual-queue", Path::new("experiments"))
            .unwrap()
            .contains("Figure 1"));
        for s in smpsched_sim::readyq::STRUCTURES {
            assert!(explainable(Path::new("experiments")).contains(&s.name.to_string()));
        }
    }
}
