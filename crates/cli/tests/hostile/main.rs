//! The hostile-input suite: well over a thousand inputs a careless or hostile user might give,
//! each run as the real command in a process of its own, with its memory capped at 1 GiB (and
//! `SMPSCHED_MEMORY` at 768 MiB) and its time at 30 s. Every case must end with exit code 0,
//! 1 or 2, never a panic, an abort or a signal; a refusal (2) says `error:`.
//!
//! The classes: experiment files with every field of a dozen small experiments (one per
//! workload and policy family) replaced by junk; every option of every command with junk;
//! special files (FIFOs, devices, folders, binary and huge files, link loops) as experiment
//! files, arrival traces and under the folders `list` and `reproduce` walk; output folders and
//! links (`--out`, `--trace`, `--force`, `latest`). Interruptions are in `results_safety.rs`.

#[path = "../common/mod.rs"]
mod common;
mod findings;
mod inputs;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::tempdir;
use inputs::{BASES, JUNK};

/// The longest one case may take.
const WALL: Duration = Duration::from_secs(30);

/// The memory one case may map (KiB, for `ulimit -v`): 1 GiB.
const MEMORY_KIB: u64 = 1 << 20;

/// One case's outcome.
struct Ran {
    code: Option<i32>,
    stderr: String,
    took: Duration,
}

/// Runs the binary in `cwd` with memory and time capped; `None` if it ran past [`WALL`].
fn run(args: &[&str], cwd: &Path) -> Result<Ran, String> {
    let start = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_smpsched"))
        .args(args)
        .current_dir(cwd)
        .env("SMPSCHED_MEMORY", "768M")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Read stderr on a thread so that a chatty child cannot block on a full pipe.
    let mut pipe = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut s);
        s
    });
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let stderr = reader.join().unwrap_or_default();
            return Ok(Ran {
                code: status.code(),
                stderr,
                took: start.elapsed(),
            });
        }
        if start.elapsed() > WALL {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("ran past {WALL:?}: smpsched {args:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A case: a label, the arguments, the folder it runs in, and the exit code it must end with
/// when one is known (an unspoiled experiment must run).
struct Case {
    label: String,
    args: Vec<String>,
    cwd: PathBuf,
    want: Option<i32>,
}

/// Cases of `lines` (argument lists) run in `cwd`, labelled `what: smpsched ARGS`.
fn cases_of(what: &str, lines: Vec<Vec<String>>, cwd: &Path) -> Vec<Case> {
    lines
        .into_iter()
        .map(|args| Case {
            label: format!("{what}: smpsched {}", args.join(" ")),
            args,
            cwd: cwd.to_path_buf(),
            want: None,
        })
        .collect()
}

/// Runs every case on two threads and checks each: no panic, no abort or signal, exit 0, 1 or
/// 2, and a refusal that says `error:` (or shows the usage). Returns the number of cases, how
/// many ran to exit 0, and the slowest.
fn check_all(cases: Vec<Case>) -> (usize, usize, Duration) {
    let n = cases.len();
    let next = AtomicUsize::new(0);
    let succeeded = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let slowest = Mutex::new(Duration::ZERO);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
                let verdict = match run(&args, &case.cwd) {
                    Err(e) => Some(e),
                    Ok(r) => {
                        let mut s = slowest.lock().unwrap();
                        *s = (*s).max(r.took);
                        drop(s);
                        if r.code == Some(0) {
                            succeeded.fetch_add(1, Ordering::Relaxed);
                        }
                        if r.stderr.contains("panicked") {
                            Some(format!("panicked: {}", r.stderr))
                        } else if case.want.is_some_and(|w| r.code != Some(w)) {
                            Some(format!(
                                "exit {:?}, not {:?}: {}",
                                r.code, case.want, r.stderr
                            ))
                        } else {
                            match r.code {
                                Some(0 | 1) => None,
                                Some(2) if r.stderr.contains("error") => None,
                                Some(2) if r.stderr.contains("Usage:") => None,
                                Some(2) => Some(format!("exit 2 without an error: {}", r.stderr)),
                                other => Some(format!("exit {other:?}: {}", r.stderr)),
                            }
                        }
                    }
                };
                if let Some(v) = verdict {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {v}", case.label));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {n} hostile cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (n, succeeded.into_inner(), slowest.into_inner().unwrap())
}

/// Every leaf of a TOML table, as (dotted path, is in an array of tables, index).
fn leaves(t: &toml::Table, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for (k, v) in t {
        let mut path = prefix.to_vec();
        path.push(k.clone());
        match v {
            toml::Value::Table(inner) => leaves(inner, &path, out),
            toml::Value::Array(items)
                if items.iter().all(|i| i.is_table()) && !items.is_empty() =>
            {
                for (i, item) in items.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(i.to_string());
                    if let toml::Value::Table(inner) = item {
                        leaves(inner, &p, out);
                    }
                }
            }
            _ => out.push(path),
        }
    }
}

/// `t` with the leaf at `path` set to `value`.
fn with_value(t: &toml::Table, path: &[String], value: toml::Value) -> toml::Table {
    let mut t = t.clone();
    let mut at: &mut toml::Value = t.get_mut(&path[0]).expect("a leaf");
    for key in &path[1..] {
        at = match at {
            toml::Value::Table(inner) => inner.get_mut(key).expect("a leaf"),
            toml::Value::Array(items) => &mut items[key.parse::<usize>().expect("an index")],
            _ => unreachable!("leaves end at values"),
        };
    }
    *at = value;
    t
}

/// Experiment files: every field of every base replaced by every junk value.
fn experiment_cases(dir: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for (name, text) in BASES {
        let base: toml::Table = toml::from_str(text).unwrap();
        let mut paths = Vec::new();
        leaves(&base, &[], &mut paths);
        // The unspoiled base too: it must run.
        let mut variants = vec![("base".to_string(), text.to_string())];
        for path in &paths {
            // The junk goes in as text, so that values TOML libraries refuse to hold (past
            // i64) reach the file as a user would write them.
            let marked = with_value(&base, path, toml::Value::String("@JUNK@".into()));
            let marked = toml::to_string(&marked).unwrap();
            for junk in JUNK {
                variants.push((
                    format!("{} = {junk}", path.join(".")),
                    marked.replace("\"@JUNK@\"", junk),
                ));
            }
        }
        for (i, (what, body)) in variants.into_iter().enumerate() {
            let file = dir.join(format!("{name}-{i}.toml"));
            std::fs::write(&file, body).unwrap();
            let out = format!("out-{name}-{i}");
            cases.push(Case {
                want: (i == 0).then_some(0),
                label: format!("{name}: {what}"),
                args: vec![
                    "run".into(),
                    file.display().to_string(),
                    "--out".into(),
                    out,
                    "--quiet".into(),
                ],
                cwd: dir.to_path_buf(),
            });
        }
    }
    cases
}

/// Every option of every command with junk.
fn option_cases(dir: &Path, good: &Path) -> Vec<Case> {
    let junk_words = [
        "-1",
        "0",
        "3",
        "nan",
        "inf",
        "1e30",
        "18446744073709551616",
        "100000000000",
        "abc",
        "",
        "../..",
        "/dev/null",
    ];
    let good = good.display().to_string();
    let mut lines: Vec<Vec<String>> = Vec::new();
    let with = |base: &[&str], flag: &str, v: &str| -> Vec<String> {
        base.iter()
            .map(|s| s.to_string())
            .chain([flag.to_string(), v.to_string()])
            .collect()
    };
    for v in junk_words {
        for (i, flag) in ["--seed", "--jobs", "--trace-events", "--trace-window"]
            .iter()
            .enumerate()
        {
            let out = format!("opt-out-{i}-{}", lines.len());
            let mut l = with(&["run", &good, "--out", &out, "--quiet"], flag, v);
            if flag.starts_with("--trace-") {
                l.extend(["--trace".into(), format!("opt-trace-{}", lines.len())]);
            }
            lines.push(l);
        }
        for flag in ["--out", "--trace"] {
            lines.push(with(&["run", &good, "--quiet"], flag, v));
        }
        lines.push(vec!["run".into(), v.into(), "--quiet".into()]);
        // Values set over the file from the command line (`--set`, `--vary`).
        for (k, set) in [
            format!("machine.processors={v}"),
            v.to_string(),
            format!("{v}={v}"),
        ]
        .iter()
        .enumerate()
        {
            let out = format!("opt-set-{k}-{}", lines.len());
            lines.push(with(
                &["run", &good, "--out", &out, "--quiet"],
                "--set",
                set,
            ));
        }
        let vary = format!("machine.processors={v},{v}0");
        lines.push(with(&["reproduce", "nothing-here"], "--vary", &vary));
        // A hostile value as a second path varied with a good one (a grid).
        let mut grid = with(&["reproduce", "nothing-here"], "--vary", &vary);
        grid.extend(["--vary".into(), "machine.clock_mhz=16,33".into()]);
        lines.push(grid);
        for flag in ["--scale", "--jobs", "--experiments", "--reports"] {
            lines.push(with(&["reproduce", "nothing-here"], flag, v));
        }
        // A file of a real paper's that is not there (`--only`), alone and in a list.
        let papers = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
        let only = [
            "reproduce",
            "black90",
            "--experiments",
            papers,
            "--reports",
            "opt-only",
        ];
        lines.push(with(&only, "--only", v));
        lines.push(with(&only, "--only", &format!("table1,{v}")));
        lines.push(vec![
            "reproduce".into(),
            v.into(),
            "--scale".into(),
            "0.05".into(),
        ]);
        lines.push(with(&["list"], "--dir", v));
        lines.push(vec!["explain".into(), v.into()]);
        lines.push(with(&["explain", "black90"], "--experiments", v));
        for flag in [
            "--structure",
            "--scheduler",
            "--client",
            "--cutoff",
            "--schedulers",
            "--clients",
            "--load",
            "--service-us",
            "--interarrival-us",
            "--requests",
            "--mailboxes",
        ] {
            lines.push(with(&["real", "--requests", "50"], flag, v));
        }
    }
    for extra in [
        &["real", "--table4", "--structure", "global"][..],
        &["real", "--george", "--scheduler", "static"],
        &["real", "--structure", "ddq", "--scheduler", "static"],
        &[
            "real",
            "--george",
            "--requests",
            "100000000",
            "--clients",
            "100",
        ],
        &["run", "--force", "x.toml"],
        &["nonsense"],
        &[],
        &["--help"],
        &["run", "--help"],
        &["reproduce", "--help"],
        &["list"],
        &["explain", "gupta91"],
    ] {
        lines.push(extra.iter().map(|s| s.to_string()).collect());
    }
    // Two levels below the test's folder, so that `../..` is that folder: `list --dir ../..`
    // then walks only it, never the machine's whole file system.
    let cwd = dir.join("options").join("here");
    std::fs::create_dir_all(&cwd).unwrap();
    cases_of("options", lines, &cwd)
}

/// Special files as experiments and traces, and under the folders `list` and `reproduce` walk.
fn special_cases(dir: &Path) -> Vec<Case> {
    let sp = dir.join("special");
    std::fs::create_dir_all(sp.join("paper")).unwrap();
    std::fs::create_dir_all(sp.join("folder.toml")).unwrap();
    let fifo = sp.join("fifo.toml");
    let made_fifo = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    std::fs::write(sp.join("binary.toml"), b"name = \"\xff\xfe\"\n\x00\x01").unwrap();
    std::fs::write(sp.join("huge.toml"), vec![b'#'; 5 << 20]).unwrap();
    std::fs::write(sp.join("empty.toml"), b"").unwrap();
    #[cfg(unix)]
    {
        let _ = std::os::unix::fs::symlink(sp.join("loop.toml"), sp.join("loop.toml"));
        let _ = std::os::unix::fs::symlink(&sp, sp.join("up"));
        let _ = std::os::unix::fs::symlink(sp.join("gone"), sp.join("broken.toml"));
    }
    // A paper folder with one good reproduction and the same special files beside it.
    let repro = BASES[0].1.to_string()
        + "\n[reproduce]\npaper = \"paper\"\nmetric = \"elapsed_ms\"\ntolerance = \"50%\"\n";
    std::fs::write(sp.join("paper/good.toml"), repro).unwrap();
    if made_fifo {
        let _ = Command::new("mkfifo")
            .arg(sp.join("paper/fifo.toml"))
            .status();
    }
    std::fs::write(sp.join("paper/binary.toml"), b"\xff\xfe").unwrap();
    let arrivals = |trace: &str| {
        format!(
            "name = \"h-trace\"\n[machine]\npreset = \"tango-12\"\n[scheduler]\npolicy = \
             \"batch\"\n[[workload]]\nkind = \"arrivals\"\ntrace = \"{trace}\"\n"
        )
    };
    let mut files = vec![
        "fifo.toml",
        "folder.toml",
        "binary.toml",
        "huge.toml",
        "empty.toml",
        "loop.toml",
        "broken.toml",
        "/dev/zero",
        "/dev/urandom",
        "/dev/null",
        "/proc/self/mem",
    ];
    for (i, trace) in [
        "/dev/zero",
        "/dev/urandom",
        "fifo.toml",
        "folder.toml",
        "binary.toml",
    ]
    .iter()
    .enumerate()
    {
        let name = format!("trace-{i}.toml");
        std::fs::write(sp.join(&name), arrivals(trace)).unwrap();
        files.push(Box::leak(name.into_boxed_str()));
    }
    let mut cases: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            vec![
                "run".into(),
                f.to_string(),
                "--out".into(),
                format!("o-{f}").replace('/', "_"),
            ]
        })
        .collect();
    cases.push(vec!["list".into(), "--dir".into(), ".".into()]);
    cases.push(vec!["list".into(), "--dir".into(), "/nonexistent".into()]);
    cases.push(vec!["list".into(), "--dir".into(), "fifo.toml".into()]);
    cases.push(vec![
        "reproduce".into(),
        "paper".into(),
        "--experiments".into(),
        ".".into(),
        "--reports".into(),
        "reps".into(),
    ]);
    cases.push(vec![
        "reproduce".into(),
        "all".into(),
        "--experiments".into(),
        "folder.toml".into(),
    ]);
    cases.push(vec![
        "explain".into(),
        "paper".into(),
        "--experiments".into(),
        ".".into(),
    ]);
    cases_of("special", cases, &sp)
}

/// Output folders and links.
fn folder_cases(dir: &Path) -> Vec<Case> {
    let f = dir.join("folders");
    std::fs::create_dir_all(f.join("exps")).unwrap();
    std::fs::create_dir_all(f.join("mine")).unwrap();
    std::fs::write(f.join("mine/keep.txt"), "mine").unwrap();
    std::fs::write(f.join("exps/e.toml"), BASES[0].1).unwrap();
    std::fs::write(f.join("a-file"), "x").unwrap();
    #[cfg(unix)]
    {
        let _ = std::os::unix::fs::symlink(f.join("mine"), f.join("link"));
        std::fs::create_dir_all(f.join("results/h-synthetic")).unwrap();
        let _ = std::os::unix::fs::symlink("nowhere", f.join("results/h-synthetic/latest"));
    }
    let outs = [
        "mine",
        "link",
        ".",
        "..",
        "exps",
        "a-file",
        "a-file/sub",
        "results/h-synthetic/latest",
        "/proc/x",
        "/",
        "new/deep/folder",
    ];
    let mut cases = Vec::new();
    for (i, out) in outs.iter().enumerate() {
        for force in [false, true] {
            let mut args = vec!["run".to_string(), "exps/e.toml".into(), "--quiet".into()];
            args.extend(["--out".into(), out.to_string()]);
            if force {
                args.push("--force".into());
            }
            cases.push((format!("--out {out} force={force}"), args));
            let trace = format!("--trace {out} ({i}, {force})");
            let mut args = vec![
                "run".to_string(),
                "exps/e.toml".into(),
                "--quiet".into(),
                "--out".into(),
                format!("t-out-{i}-{force}"),
            ];
            args.extend(["--trace".into(), out.to_string()]);
            cases.push((trace, args));
        }
    }
    cases
        .into_iter()
        .map(|(label, args)| Case {
            label: format!("folders: {label}"),
            args,
            cwd: f.clone(),
            want: None,
        })
        .collect()
}

#[test]
fn a_thousand_hostile_inputs_end_in_exit_0_1_or_2_within_bounds() {
    let dir = tempdir("hostile");
    let good = dir.join("good.toml");
    std::fs::write(&good, BASES[0].1).unwrap();
    let mut cases = experiment_cases(&dir);
    cases.extend(option_cases(&dir, &good));
    cases.extend(special_cases(&dir));
    let folders = folder_cases(&dir);
    let mine = dir.join("folders/mine/keep.txt");
    let exp = dir.join("folders/exps/e.toml");
    cases.extend(folders);
    assert!(cases.len() >= 1000, "only {} cases", cases.len());
    let (n, succeeded, slowest) = check_all(cases);
    // Enough of them were valid to run whole: the suite exercises runs, not only the parser.
    assert!(succeeded >= 100, "only {succeeded} cases ran to exit 0");
    // Nothing of the user's was removed by --force.
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine");
    assert!(exp.exists());
    println!("hostile input: {n} cases ({succeeded} ran whole), 0 panics, slowest {slowest:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_runs_into_one_new_out_folder_never_both_claim_it() {
    let dir = tempdir("hostile-race");
    std::fs::write(dir.join("e.toml"), BASES[1].1).unwrap();
    let spawn = || {
        common::command(&["run", "e.toml", "--quiet", "--out", "same"], &dir, None)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(dir.join("same"));
        let (a, b) = (spawn(), spawn());
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let codes = [a.status.code(), b.status.code()];
        // One run wins; the other is refused (the lock, or the folder taken at the rename) and
        // says where its results went, or both ran one after the other... never two exit 0s
        // with one run's results silently gone.
        assert!(codes.contains(&Some(0)), "{codes:?}");
        assert!(
            codes.contains(&Some(2)),
            "{codes:?}: {}{}",
            String::from_utf8_lossy(&a.stderr),
            String::from_utf8_lossy(&b.stderr)
        );
        assert!(dir.join("same/results.json").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
