//! The Python package's tests, run by `cargo test`: a virtual environment under the target
//! folder (made once, reinstalled when `requirements-test.txt` changes) gets maturin, pytest and
//! polars; the package is built into it with `maturin develop --release`, the `smpsched`
//! command built beside it, and pytest runs `crates/py/tests/python/` against both. Every step
//! must succeed: there is no silent skip. Both builds use their own target folder
//! (`TARGET/py`), so they never wait on the lock of the build running this test, and are reused
//! between runs. `SMPSCHED_PYTHON` names the interpreter (default `python3`, 3.9 or later).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `cmd`, failing the test with its output if it fails.
fn must(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn python_package_builds_and_its_tests_pass() {
    let root = root().canonicalize().expect("repository root");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_absolute() { t } else { root.join(t) })
        .unwrap_or_else(|| root.join("target"))
        .join("py");
    let venv = target.join("venv");
    let reqs = root.join("crates/py/requirements-test.txt");
    let wanted = std::fs::read_to_string(&reqs).expect("requirements-test.txt");
    let stamp = venv.join("smpsched-requirements.txt");
    let python = venv.join("bin/python");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        let interpreter = std::env::var("SMPSCHED_PYTHON").unwrap_or_else(|_| "python3".into());
        must(
            Command::new(&interpreter)
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
            "making the virtual environment",
        );
        must(
            Command::new(&python)
                .args(["-m", "pip", "install", "-q", "-r"])
                .arg(&reqs),
            "installing maturin, pytest, polars and ray",
        );
        std::fs::write(&stamp, &wanted).expect("writing the venv's stamp");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    must(
        Command::new(&cargo)
            .args([
                "build",
                "--release",
                "-q",
                "-p",
                "smpsched",
                "--bin",
                "smpsched",
            ])
            .current_dir(&root)
            .env("CARGO_TARGET_DIR", &target),
        "building the smpsched command",
    );
    must(
        Command::new(venv.join("bin/maturin"))
            .args(["develop", "--release", "-q"])
            .current_dir(root.join("crates/py"))
            .env("VIRTUAL_ENV", &venv)
            .env("CARGO_TARGET_DIR", &target),
        "building the package (maturin develop --release)",
    );
    must(
        Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "crates/py/tests/python",
            ])
            .current_dir(&root)
            .env("SMPSCHED_BIN", target.join("release/smpsched")),
        "pytest crates/py/tests/python",
    );
}
