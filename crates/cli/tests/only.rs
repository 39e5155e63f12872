//! `smpsched reproduce PAPER --only FILE`: some files of a paper reproduced alone, their report
//! kept apart from the paper's own and each file's section the one the whole paper's report
//! gives it; a name that is no file of the paper, or `--only` without a paper, exits 2.

mod common;

use std::path::{Path, PathBuf};

use common::{reproduce_tiny as reproduce, tiny_repro_dir, TINY_REPRO as TINY};

/// The tiny paper with a second file, `u.toml`: the same reproduction with more syncs, so its
/// values differ from `t.toml`'s.
fn two_files(name: &str) -> PathBuf {
    let dir = tiny_repro_dir(name, TINY);
    let second = TINY
        .replace("name = \"tiny\"", "name = \"tiny-u\"")
        .replace("syncs = 50", "syncs = 80");
    assert_ne!(second, TINY);
    std::fs::write(dir.join("exp/tiny/u.toml"), second).unwrap();
    dir
}

fn json(dir: &Path, p: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// What file `f.toml`'s section of a paper report's JSON measured: its values and its claims'
/// verdicts (its plots lie in the run's own folder).
fn section(report: &serde_json::Value, f: &str) -> (serde_json::Value, serde_json::Value) {
    let s = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["experiment_file"]
                .as_str()
                .is_some_and(|p| Path::new(p).file_stem() == Some(f.as_ref()))
        })
        .unwrap_or_else(|| panic!("no section for {f}.toml in {report}"));
    (s["points"].clone(), s["claims"].clone())
}

#[test]
fn only_some_files_are_reproduced_each_as_the_whole_paper_gives_it() {
    let dir = two_files("only");
    assert!(reproduce(&dir, &[]).status.success());
    let whole = json(&dir, "rep/tiny.json");
    assert_eq!(whole["files"].as_array().unwrap().len(), 2);
    let own = std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap();

    let o = reproduce(&dir, &["--only", "u"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let only = json(&dir, "rep/tiny-only-u.json");
    assert_eq!(only["files"].as_array().unwrap().len(), 1);
    assert_eq!(only["only"], serde_json::json!(["u"]));
    assert_eq!(section(&only, "u"), section(&whole, "u"));
    assert_ne!(section(&whole, "u"), section(&whole, "t"));
    // The paper's own report is left as it was, and has no `only`.
    assert_eq!(
        std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap(),
        own
    );
    assert!(whole.get("only").is_none());
    let md = std::fs::read_to_string(dir.join("rep/tiny-only-u.md")).unwrap();
    assert!(md.contains("**Some files only:** `u.toml`"), "{md}");
    assert!(md.contains("`smpsched reproduce tiny --only u`"), "{md}");

    // One set of files is one report, however it is asked for.
    for args in [&["--only", "u,t"][..], &["--only", "t", "--only", "u"]] {
        let o = reproduce(&dir, args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let both = json(&dir, "rep/tiny-only-t,u.json");
        for f in ["t", "u"] {
            assert_eq!(section(&both, f), section(&whole, f), "{args:?}");
        }
    }
    common::check_files_well_formed(&dir.join("rep"));
}

#[test]
fn only_composes_with_seeds_and_settings() {
    let dir = two_files("only-seeds");
    let o = reproduce(
        &dir,
        &[
            "--only",
            "t",
            "--seeds",
            "1,2",
            "--set",
            "workload.0.syncs=60",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let at2 = json(&dir, "rep/tiny-only-t-seed-2-set-workload.0.syncs-60.json");
    assert_eq!(at2["files"].as_array().unwrap().len(), 1);
    let names: Vec<String> = std::fs::read_dir(dir.join("rep"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    let across = names
        .iter()
        .find(|n| n.starts_with("tiny-only-t-set-workload.0.syncs-60-seeds-") && n.ends_with(".md"))
        .unwrap_or_else(|| panic!("no report across seeds in {names:?}"));
    let md = std::fs::read_to_string(dir.join("rep").join(across)).unwrap();
    assert!(
        md.contains("smpsched reproduce tiny --only t --set workload.0.syncs=60 --seeds"),
        "{md}"
    );
}

#[test]
fn a_file_the_paper_lacks_or_no_paper_exits_2_and_says_why() {
    let dir = two_files("only-bad");
    let o = reproduce(&dir, &["--only", "v"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--only") && err.contains("v.toml"), "{err}");
    assert!(err.contains("the paper's files: t, u"), "{err}");
    // Nothing was written.
    assert!(!dir.join("rep/tiny-only-v.md").exists());
    // A file of the folder that is no reproduction is refused by name, not passed over.
    let plain = &TINY[..TINY.find("[reproduce]").unwrap()];
    std::fs::write(dir.join("exp/tiny/plain.toml"), plain).unwrap();
    let o = reproduce(&dir, &["--only", "plain,t"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("plain.toml")
            && err.contains("no [reproduce] section); run it with `smpsched run FILE`"),
        "{err}"
    );
    assert!(!dir.join("rep/tiny-only-plain,t.md").exists());
    for bad in ["../tiny/t", ""] {
        let o = reproduce(&dir, &["--only", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    let o = common::smpsched(
        &[
            "reproduce",
            "--only",
            "t",
            "--experiments",
            "exp",
            "--reports",
            "rep",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--only") && err.contains("name the paper"),
        "{err}"
    );
}

#[test]
fn a_file_in_a_subfolder_is_named_by_its_path_and_not_taken_for_its_namesake() {
    let dir = two_files("only-sub");
    // A repository's root, so that reports record each file's path under it, not its bare name.
    std::fs::create_dir(dir.join(".git")).unwrap();
    std::fs::create_dir(dir.join("exp/tiny/sub")).unwrap();
    let deeper = TINY
        .replace("name = \"tiny\"", "name = \"tiny-sub\"")
        .replace("syncs = 50", "syncs = 80");
    std::fs::write(dir.join("exp/tiny/sub/t.toml"), deeper).unwrap();
    let files = |report: &serde_json::Value| -> Vec<String> {
        let mut v: Vec<String> = report["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["experiment_file"].as_str().unwrap().replace('\\', "/"))
            .collect();
        v.sort();
        v
    };
    let o = reproduce(&dir, &["--only", "t"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let top = files(&json(&dir, "rep/tiny-only-t.json"));
    assert_eq!(top, ["exp/tiny/t.toml"]);

    let o = reproduce(&dir, &["--only", "sub/t"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let name = std::fs::read_dir(dir.join("rep"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .find(|n| n.starts_with("tiny-only-sub_t") && n.ends_with(".json"))
        .expect("a report for sub/t");
    let sub = files(&json(&dir, &format!("rep/{name}")));
    assert_eq!(sub, ["exp/tiny/sub/t.toml"]);

    let o = reproduce(&dir, &["--only", "x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the paper's files: sub/t, t, u"), "{err}");
}
