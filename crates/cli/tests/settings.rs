//! `smpsched reproduce --set PATH=VALUE` and `--vary PATH=V1,V2`: a value set over every file of
//! a paper gives the report the file would give with that value written in it, kept apart from
//! the paper's own; `--vary` puts one report per value side by side; bad settings exit 2 and say
//! why.

mod common;

use std::path::{Path, PathBuf};

use common::{reproduce_tiny as reproduce, smpsched, tiny_repro_dir, TINY_REPRO as TINY};

fn tiny_dir(name: &str) -> PathBuf {
    tiny_repro_dir(name, TINY)
}

fn json(dir: &Path, p: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn points(v: &serde_json::Value) -> serde_json::Value {
    v["files"][0]["points"].clone()
}

#[test]
fn a_setting_gives_the_report_the_file_would_give_kept_apart() {
    let dir = tiny_dir("set");
    assert!(reproduce(&dir, &[]).status.success());
    let own = std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap();
    let o = reproduce(&dir, &["--set", "workload.0.syncs=80"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Beside the paper's own report, not over it, and saying at its top what was set.
    assert_eq!(
        std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap(),
        own
    );
    let md = std::fs::read_to_string(dir.join("rep/tiny-set-workload.0.syncs-80.md")).unwrap();
    assert!(md.contains("**Not the files as written:**"), "{md}");
    assert!(md.contains("`workload.0.syncs = 80`"), "{md}");
    assert!(
        md.contains("`smpsched reproduce tiny --set workload.0.syncs=80`"),
        "{md}"
    );
    let set = json(&dir, "rep/tiny-set-workload.0.syncs-80.json");
    assert_eq!(
        set["settings"],
        serde_json::json!(["workload.0.syncs = 80"])
    );
    // The file's own report has no settings at all (its JSON is unchanged by the feature).
    assert!(json(&dir, "rep/tiny.json").get("settings").is_none());
    // Value for value, the file with `syncs = 80` written in it.
    assert_ne!(points(&set), points(&json(&dir, "rep/tiny.json")));
    let edited = TINY.replace("syncs = 50", "syncs = 80");
    std::fs::write(dir.join("exp/tiny/t.toml"), edited).unwrap();
    assert!(reproduce(&dir, &[]).status.success());
    assert_eq!(points(&set), points(&json(&dir, "rep/tiny.json")));
    common::check_files_well_formed(&dir.join("rep"));
}

#[test]
fn vary_puts_each_value_side_by_side() {
    // With a third point and an agreement measure over the three, so that the report across
    // values plots it.
    let measured = TINY
        .replace(
            "[reproduce]",
            "[[point]]\nname = \"strong\"\nset = { \"workload.0.hint\" = \"strong\" }\n\n\
             [reproduce]",
        )
        .replace(
            "plot = { kind = \"bars\" }",
            "plot = { kind = \"bars\" }\nagreement = [\"us_per_op\"]",
        )
        .replace(
            "[[reproduce.claim]]",
            "[[reproduce.expect]]\npoint = \"mild\"\npaper = 467\n\n\
             [[reproduce.expect]]\npoint = \"strong\"\npaper = 897\n\n[[reproduce.claim]]",
        );
    assert_ne!(measured, TINY);
    let dir = tiny_repro_dir("vary", &measured);
    let o = reproduce(&dir, &["--vary", "workload.0.syncs=50,80,120"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("tiny with workload.0.syncs = 80 (2 of 3):"),
        "{out}"
    );
    assert!(
        out.contains("tiny: over 3 values of workload.0.syncs, of 1 claim"),
        "{out}"
    );
    let across = json(&dir, "rep/tiny-vary-workload.0.syncs-50,80,120.json");
    assert_eq!(across["varied"]["path"], "workload.0.syncs");
    assert_eq!(
        across["varied"]["values"],
        serde_json::json!(["50", "80", "120"])
    );
    for (k, v) in ["50", "80", "120"].iter().enumerate() {
        let own = json(&dir, &format!("rep/tiny-set-workload.0.syncs-{v}.json"));
        let verdict = own["files"][0]["claims"][0]["verdict"]["verdict"].clone();
        assert_eq!(across["claims"][0]["marks"][k], verdict, "value {v}");
        assert_eq!(
            across["values"][0]["ours"][k], own["files"][0]["points"][0]["ours"],
            "value {v}"
        );
    }
    let md =
        std::fs::read_to_string(dir.join("rep/tiny-vary-workload.0.syncs-50,80,120.md")).unwrap();
    assert!(
        md.contains("`smpsched reproduce tiny --vary workload.0.syncs=50,80,120`"),
        "{md}"
    );
    assert!(
        md.contains("| `workload.0.syncs` | summary | report |"),
        "{md}"
    );
    // The agreement at each value, plotted at the values themselves.
    for part in ["ranks", "within"] {
        let svg = format!("tiny-vary-workload.0.syncs-50,80,120-{part}.svg");
        assert!(md.contains(&format!("]({svg})")), "{md}");
        let text = std::fs::read_to_string(dir.join("rep").join(&svg)).unwrap();
        assert!(text.contains("workload.0.syncs"), "{svg}");
    }
    assert!(
        md.contains("[tiny-set-workload.0.syncs-80.md](tiny-set-workload.0.syncs-80.md)"),
        "{md}"
    );
    // A value's report is the one `--set` writes, byte for byte.
    let at_80 = std::fs::read_to_string(dir.join("rep/tiny-set-workload.0.syncs-80.json")).unwrap();
    assert!(reproduce(&dir, &["--set", "workload.0.syncs=80"])
        .status
        .success());
    assert_eq!(
        std::fs::read_to_string(dir.join("rep/tiny-set-workload.0.syncs-80.json")).unwrap(),
        at_80
    );
    common::check_files_well_formed(&dir.join("rep"));
}

#[test]
fn vary_twice_runs_every_combination_each_as_set_writes_it() {
    let dir = tiny_dir("vary-grid");
    let o = reproduce(
        &dir,
        &[
            "--vary",
            "workload.0.syncs=50,80",
            "--vary",
            "workload.0.threads=3,4",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    // The first path outermost.
    assert!(
        out.contains("tiny with workload.0.syncs = 50, workload.0.threads = 4 (2 of 4):"),
        "{out}"
    );
    assert!(
        out.contains(
            "tiny: over 4 combinations of workload.0.syncs, workload.0.threads, of 1 claim"
        ),
        "{out}"
    );
    let stem = "rep/tiny-vary-workload.0.syncs-50,80-workload.0.threads-3,4";
    let across = json(&dir, &format!("{stem}.json"));
    assert_eq!(
        across["varied"]["path"],
        "workload.0.syncs, workload.0.threads"
    );
    let cells = [("50", "3"), ("50", "4"), ("80", "3"), ("80", "4")];
    let values: Vec<String> = cells.iter().map(|(a, b)| format!("{a}, {b}")).collect();
    assert_eq!(across["varied"]["values"], serde_json::json!(values));
    for (k, (syncs, threads)) in cells.iter().enumerate() {
        // Each combination's report is the one the two --set give, byte for byte.
        let own = format!("rep/tiny-set-workload.0.syncs-{syncs}-set-workload.0.threads-{threads}");
        let written = std::fs::read_to_string(dir.join(format!("{own}.json"))).unwrap();
        let o = reproduce(
            &dir,
            &[
                "--set",
                &format!("workload.0.syncs={syncs}"),
                "--set",
                &format!("workload.0.threads={threads}"),
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let again = std::fs::read_to_string(dir.join(format!("{own}.json"))).unwrap();
        assert_eq!(again, written, "{syncs}, {threads}");
        let own: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(
            across["values"][0]["ours"][k], own["files"][0]["points"][0]["ours"],
            "{syncs}, {threads}"
        );
    }
    // The combinations differ: the grid is not one axis run four times.
    let ours = across["values"][0]["ours"].as_array().unwrap();
    assert_ne!(ours[0], ours[1]);
    assert_ne!(ours[0], ours[2]);
    let md = std::fs::read_to_string(dir.join(format!("{stem}.md"))).unwrap();
    assert!(
        md.contains(
            "`smpsched reproduce tiny --vary workload.0.syncs=50,80 --vary workload.0.threads=3,4`"
        ),
        "{md}"
    );
    assert!(md.contains("at 4 combinations of values"), "{md}");
    common::check_files_well_formed(&dir.join("rep"));
}

#[test]
fn bad_settings_exit_2_and_say_why() {
    let dir = tiny_dir("set-bad");
    for (bad, says) in [
        (
            vec!["--set", "workload.0.synks=80"],
            "unknown field `synks`",
        ),
        (
            vec!["--set", "workload.0.synks=80"],
            "set by the command line",
        ),
        (vec!["--set", "workload.0.syncs=-3"], "workload.0.syncs"),
        (
            vec!["--set", "workload.0.hint=mild"],
            "the file sets `workload.0.hint` itself",
        ),
        (vec!["--set", "seed=3"], "use --seed"),
        (vec!["--set", "syncs"], "PATH=VALUE"),
        (vec!["--vary", "workload.0.syncs=80"], "at least two"),
        (vec!["--vary", "workload.0.syncs=80,80"], "given twice"),
        (
            vec![
                "--vary",
                "workload.0.syncs=50,80",
                "--vary",
                "workload.0.syncs=60,70",
            ],
            "set the same value",
        ),
        (
            vec![
                "--vary",
                "workload.0.syncs=50,80",
                "--vary",
                "workload.0=1,2",
            ],
            "set the same value",
        ),
        (
            vec![
                "--vary",
                "workload.0.syncs=1,2,3,4,5,6,7,8,9,10,11",
                "--vary",
                "workload.0.threads=2,3,4,5,6,7,8,9,10,11",
            ],
            "11 x 10 values make more than 100",
        ),
        (
            vec!["--vary", "workload.0.syncs=50,80", "--seeds", "1-2"],
            "cannot be used with",
        ),
        (
            vec![
                "--set",
                "workload.0.syncs=60",
                "--vary",
                "workload.0.syncs=50,80",
            ],
            "set the same value",
        ),
    ] {
        let o = reproduce(&dir, &bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{bad:?}: {err}");
        assert!(!err.contains("panicked"), "{bad:?}: {err}");
    }
    // Nothing was written by the refused commands.
    assert!(!dir.join("rep").join("tiny.md").exists());
}

#[test]
fn run_with_a_setting_records_it_and_gives_the_files_results_with_it_written() {
    let dir = tiny_dir("run-set");
    let file = "exp/tiny/t.toml";
    let o = smpsched(
        &["run", file, "--set", "workload.0.syncs=80", "--out", "set"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not the file as written"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let set = json(&dir, "set/results.json");
    assert_eq!(
        set["settings"],
        serde_json::json!(["workload.0.syncs = 80"])
    );
    std::fs::write(dir.join(file), TINY.replace("syncs = 50", "syncs = 80")).unwrap();
    assert!(smpsched(&["run", file, "--out", "written"], &dir)
        .status
        .success());
    let written = json(&dir, "written/results.json");
    assert!(written.get("settings").is_none());
    assert_eq!(set["runs"], written["runs"]);
    // The same refusals as for a reproduction.
    let o = smpsched(&["run", file, "--set", "workload.0.hint=mild"], &dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("itself"));
}

/// The reports in `dir/rep` (their file names).
fn reports(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("rep"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.ends_with(".md") && n != "index.md")
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_bad_value_of_vary_is_refused_before_any_runs() {
    // The last of the values is no number: found when the files are loaded with it, before the
    // first value's reproduction runs (found after it once, with its report written).
    let dir = tiny_dir("vary-late");
    let o = reproduce(&dir, &["--vary", "workload.0.syncs=50,80,abc"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("workload.0.syncs") && err.contains("set by the command line"),
        "{err}"
    );
    assert_eq!(reports(&dir), Vec::<String>::new());
}

#[test]
fn report_names_stay_apart_and_short() {
    let dir = tiny_dir("names");
    // Two settings, and one setting whose value spells the two: two reports, not one.
    let two = ["--set", "workload.0.name=a", "--set", "workload.0.syncs=80"];
    let one = ["--set", "workload.0.name=a-set-workload.0.syncs-80"];
    for args in [&two[..], &one[..]] {
        let o = reproduce(&dir, args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(reports(&dir).len(), 2, "{:?}", reports(&dir));
    // Seeds with gaps are listed in the name only while it stays short: thirteen of twenty
    // digits made a name the file system refused, after every seed had run.
    let seeds: Vec<String> = (0..13)
        .map(|i| (10_000_000_000_000_000_000u64 + 2 * i).to_string())
        .collect();
    let o = reproduce(&dir, &["--seeds", &seeds.join(",")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let across: Vec<String> = reports(&dir)
        .into_iter()
        .filter(|n| n.starts_with("tiny-seeds-"))
        .collect();
    assert_eq!(across.len(), 1, "{:?}", reports(&dir));
    assert!(across[0].len() < 200, "{}", across[0]);
}

#[test]
fn run_refuses_what_the_file_would_refuse_and_a_trace_in_the_out_folder() {
    let dir = tiny_dir("run-refusals");
    // The tiny file without its points and reproduction.
    let plain = TINY.split("[[point]]").next().unwrap().to_string();
    std::fs::write(dir.join("plain.toml"), &plain).unwrap();
    let file = "plain.toml";
    let refused = |args: &[&str], says: &str| {
        let o = smpsched(args, &dir);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    // No workload, set from the command line as in the file.
    refused(
        &["run", file, "--set", "workload=[]", "--out", "o1"],
        "at least one [[workload]]",
    );
    // The trace folder is the results folder: refused before the runs, nothing written.
    refused(
        &["run", file, "--out", "o2", "--trace", "o2"],
        "it is the --out folder",
    );
    refused(
        &["run", file, "--out", "o3", "--trace", file],
        "it exists and is not a folder",
    );
    for o in ["o1", "o2", "o3"] {
        assert!(!dir.join(o).exists(), "{o} was written");
    }
    // A file's own field swept: said so, not called unknown.
    std::fs::write(
        dir.join("swept.toml"),
        format!("{plain}[sweep]\n\"seed\" = [1, 2]\n"),
    )
    .unwrap();
    refused(
        &["run", "swept.toml", "--out", "o4"],
        "`seed` is the file's own",
    );
}
