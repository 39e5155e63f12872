//! The guide to experiment files (`docs/experiment-files.md`) stays true: its example file loads
//! into the points it says, its reproduction section, claims and tolerances parse, every machine
//! preset, machine field and top-level field (`experiment::FIELDS`, in order) is documented, its
//! tables of measures, `results.csv` columns and plot kinds are the ones `metric::MEASURES` and
//! `PlotKind::ALL` generate, `smpsched list` shows those too, and every paper folder of
//! experiments/ describes its paper in a README.md that `list` and `explain` show.

use std::path::Path;

use smpsched_lab::app::reproduction::PlotKind;
use smpsched_lab::metric::views;
use smpsched_lab::reproduce::{Claim, Tolerance};
use smpsched_lab::spec::experiment::FIELDS;
use smpsched_lab::Experiment;
use smpsched_sim::MachineConfig;

fn guide() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/experiment-files.md");
    std::fs::read_to_string(path).expect("docs/experiment-files.md exists")
}

/// The fenced blocks of language `lang`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let open = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let end = body.find("```").expect("closed block");
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

#[test]
fn the_example_file_loads_into_the_points_the_guide_says() {
    let text = guide();
    let toml_blocks = blocks(&text, "toml");
    let dir = std::env::temp_dir().join(format!("smpsched-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two-apps.toml");
    std::fs::write(&file, &toml_blocks[0]).unwrap();
    let exp = Experiment::load(&file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(exp.points.len(), 8, "the guide says 8 points");
    assert_eq!(exp.repetitions, 3);
    assert_eq!(
        exp.points[0].label,
        "short-slice/policy=round-robin/processors=4"
    );
    assert!(text.contains("`short-slice/policy=priority/processors=8`"));
    let m = &exp.points[0].machine;
    assert_eq!(m.slice_cycles, 50_000);
    assert_eq!(m.memory.cache_bytes, 32_768);
    assert_eq!(
        m.memory.line_bytes, 16,
        "the rest of the preset's memory stays"
    );
    assert_eq!(exp.points[7].machine.slice_cycles, 1_000_000);
}

#[test]
fn the_reproduction_section_claims_and_tolerances_parse() {
    let text = guide();
    let block = blocks(&text, "toml")
        .into_iter()
        .find(|b| b.contains("[reproduce]"))
        .expect("a reproduction example");
    let repro: toml::Table = toml::from_str(&block).unwrap();
    let r = repro["reproduce"].as_table().unwrap();
    for key in [
        "paper",
        "title",
        "metric",
        "tolerance",
        "scale",
        "notes",
        "plot",
    ] {
        assert!(r.contains_key(key), "{key}");
    }
    r["tolerance"]
        .as_str()
        .unwrap()
        .parse::<Tolerance>()
        .unwrap();
    let claim = r["claim"][0]["claim"].as_str().unwrap();
    claim.parse::<Claim>().unwrap();
    for line in blocks(&text, "text")[0].lines() {
        line.parse::<Claim>()
            .unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    for t in ["10%", "±2", "+-2", "2 abs"] {
        t.parse::<Tolerance>().unwrap();
        assert!(text.contains(&format!("`{t}`")), "{t}");
    }
}

#[test]
fn every_measure_preset_and_field_is_documented() {
    let text = guide();
    for p in MachineConfig::PRESETS {
        assert!(text.contains(p.name), "preset `{}` undocumented", p.name);
    }
    let machine = toml::Value::try_from(MachineConfig::bbn_gp1000()).unwrap();
    let machine = machine.as_table().unwrap();
    for (k, v) in machine {
        if k == "name" {
            continue;
        }
        match v.as_table() {
            Some(t) => {
                for sub in t.keys() {
                    assert!(text.contains(&format!("`{sub}`")), "machine.{k}.{sub}");
                }
            }
            None => assert!(text.contains(&format!("`{k}`")), "machine.{k}"),
        }
    }
    let table = rows_after(&text, "| field | meaning |");
    assert_eq!(table, FIELDS, "the guide's top-level fields, in order");
}

/// The first column of the Markdown table whose header line is `header`, without backticks.
fn rows_after(text: &str, header: &str) -> Vec<String> {
    let start = text
        .find(header)
        .unwrap_or_else(|| panic!("no table {header}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.split('|')
                .nth(1)
                .unwrap()
                .trim()
                .trim_matches('`')
                .to_string()
        })
        .collect()
}

#[test]
fn every_paper_folder_describes_its_paper() {
    // The papers are the folders of experiments/ holding a reproduction; each describes its
    // paper in a README.md (title and summary), which `list` and `explain` show.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let folders = smpsched_lab::app::papers::papers(&dir).unwrap();
    assert!(folders.len() >= 5, "{folders:?}");
    let listing = smpsched_lab::app::catalog::listing(&dir, true).unwrap();
    for id in &folders {
        let p = smpsched_lab::app::papers::paper(&dir, id)
            .unwrap_or_else(|| panic!("experiments/{id}/README.md must open with `# TITLE`"));
        assert!(p.title.len() > 20 && p.summary.len() > 80, "{p:?}");
        assert!(listing.contains(&format!("  {id:<16} {}", p.title)), "{id}");
        let explained = smpsched_lab::app::catalog::explain(id, &dir).unwrap();
        assert!(explained.contains(&p.summary), "{id}");
    }
}

/// The Markdown table of `text` whose header line is `generated`'s first line, replaced by
/// `generated`; `None` when there is no such table.
fn with_table(text: &str, generated: &str) -> Option<String> {
    let header = generated.lines().next()?;
    let start = text.find(&format!("\n{header}\n"))? + 1;
    let len: usize = text[start..]
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('|'))
        .map(str::len)
        .sum();
    Some(format!(
        "{}{generated}{}",
        &text[..start],
        &text[start + len..]
    ))
}

/// The guide's measure table, its table of `results.csv`'s measure columns and its table of
/// plot kinds are the ones the code generates (from `metric::MEASURES` and `PlotKind::ALL`), both ways: a measure added, removed or reworded in the code fails
/// here until the guide says the same. `SMPSCHED_BLESS=1 cargo test -p smpsched-lab --test docs`
/// writes the generated tables into the guide.
#[test]
fn the_guide_shows_exactly_the_measure_and_plot_tables_of_the_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/experiment-files.md");
    let text = guide();
    let mut want = text.clone();
    for generated in [
        views::guide_measures(),
        views::guide_csv_columns(),
        PlotKind::guide_table(),
    ] {
        want = with_table(&want, &generated).unwrap_or_else(|| {
            panic!(
                "the guide has no table headed {}",
                generated.lines().next().unwrap()
            )
        });
    }
    if std::env::var_os("SMPSCHED_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    for (i, (got, exp)) in text.lines().zip(want.lines()).enumerate() {
        assert_eq!(got, exp, "docs/experiment-files.md line {}: the guide against metric::MEASURES and PlotKind::ALL (SMPSCHED_BLESS=1 rewrites it)", i + 1);
    }
    assert_eq!(
        text, want,
        "the guide against metric::MEASURES and PlotKind::ALL"
    );
}

/// `smpsched list` shows every measure (with its unit) and every plot kind of the code.
#[test]
fn list_shows_every_measure_and_plot_kind() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let text = smpsched_lab::app::catalog::listing(&dir, true).unwrap();
    for m in smpsched_lab::metric::MEASURES
        .iter()
        .filter(|m| m.is_measure())
    {
        let line = format!("  {:<24} {:<11} ", m.written(), m.unit.label());
        assert!(text.contains(&line), "`list` lacks measure {}", m.written());
    }
    for k in PlotKind::ALL {
        let line = format!("  {:<16} {}\n", k.name(), k.doc());
        assert!(text.contains(&line), "`list` lacks plot kind {}", k.name());
    }
}

/// `experiments/policies.toml` sweeps every policy `smpsched list` shows (as its description and
/// the README say), so that a policy added to the registry is added there too.
#[test]
fn the_policies_experiment_sweeps_every_registered_policy() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/policies.toml");
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut swept: Vec<&str> = doc["sweep"]["scheduler.policy"]
        .as_array()
        .expect("a sweep over scheduler.policy")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut registered: Vec<&str> = smpsched_sim::sched::POLICIES
        .iter()
        .map(|p| p.name)
        .collect();
    swept.sort_unstable();
    registered.sort_unstable();
    assert_eq!(swept, registered, "experiments/policies.toml's sweep");
}
