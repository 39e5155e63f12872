//! The release build's profile-guided optimization is wired as pgo/README.md says: cargo runs
//! rustc for the workspace's crates through `pgo/rustc`, which adds the recorded profile to an
//! optimized build of the simulator's crates only, or instruments them when asked, and the
//! profile in the repository is one rustc can read (LLVM's indexed format).
#![cfg(unix)]

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The arguments `pgo/rustc` passes on, with `echo` standing in for rustc.
fn through_wrapper(args: &[&str], generate: Option<&str>) -> Vec<String> {
    let mut cmd = Command::new("sh");
    cmd.arg(repo().join("pgo/rustc")).arg("echo").args(args);
    cmd.env_remove("SMPSCHED_PGO_GENERATE");
    if let Some(dir) = generate {
        cmd.env("SMPSCHED_PGO_GENERATE", dir);
    }
    let out = cmd.output().expect("run sh pgo/rustc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn an_optimized_build_of_a_simulator_crate_gets_the_profile() {
    for krate in [
        "smpsched_sim",
        "smpsched_workloads",
        "smpsched_policy",
        "smpsched",
        "smpsched_lab",
    ] {
        let args = ["--crate-name", krate, "-C", "opt-level=3", "src/lib.rs"];
        let got = through_wrapper(&args, None);
        assert_eq!(got[..args.len()], args, "{krate}: arguments kept in order");
        assert_eq!(
            got.len(),
            args.len() + 1,
            "{krate}: one flag added: {got:?}"
        );
        let path = got[args.len()]
            .strip_prefix("-Cprofile-use=")
            .unwrap_or_else(|| panic!("{krate}: {got:?}"));
        assert!(path.ends_with("pgo/smpsched.profdata"), "{path}");
        assert!(PathBuf::from(path).is_file(), "{path} is not a file");
    }
}

#[test]
fn other_crates_and_unoptimized_builds_are_left_alone() {
    for args in [
        // A dependency, optimized.
        &["--crate-name", "serde", "-C", "opt-level=3"][..],
        // The real queues: not trained, so not profiled.
        &["--crate-name", "smpsched_queues", "-C", "opt-level=3"][..],
        // A simulator crate in a test build.
        &["--crate-name", "smpsched_sim", "-C", "opt-level=1"][..],
        &["--crate-name", "smpsched_sim"][..],
        // rustc asked for its version (as cargo does first).
        &["-vV"][..],
    ] {
        assert_eq!(through_wrapper(args, None), args, "{args:?}");
    }
}

#[test]
fn regenerating_instruments_the_simulator_crates() {
    let args = ["--crate-name", "smpsched_sim", "-C", "opt-level=3"];
    let got = through_wrapper(&args, Some("/tmp/profraw"));
    assert_eq!(got.last().unwrap(), "-Cprofile-generate=/tmp/profraw");
    assert!(
        !got.iter().any(|a| a.starts_with("-Cprofile-use")),
        "{got:?}"
    );
    let dep = ["--crate-name", "serde", "-C", "opt-level=3"];
    assert_eq!(through_wrapper(&dep, Some("/tmp/profraw")), dep);
}

#[test]
fn the_recorded_profile_is_an_indexed_llvm_profile() {
    let bytes = std::fs::read(repo().join("pgo/smpsched.profdata")).expect("pgo/smpsched.profdata");
    // LLVM's indexed profile magic: 0xff, "lprofi", 0x81 (a raw profile starts "\x81rforpl\xff").
    assert_eq!(&bytes[..8], b"\xfflprofi\x81", "not an indexed profile");
    assert!(bytes.len() > 100_000, "a profile of {} bytes", bytes.len());
}

#[test]
fn cargo_runs_the_workspace_crates_through_the_wrapper() {
    let config = std::fs::read_to_string(repo().join(".cargo/config.toml")).unwrap();
    let table: toml::Table = config.parse().unwrap();
    assert_eq!(
        table["build"]["rustc-workspace-wrapper"].as_str(),
        Some("pgo/rustc")
    );
}
