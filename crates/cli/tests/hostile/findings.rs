//! The findings of the wide hostile-input probe, each a case that must be refused naming its
//! field before anything runs.

use super::common::{self, tempdir};
use super::inputs::BASES;

/// The findings of the hostile-input probe, each refused by name before anything runs.
#[test]
fn the_probes_findings_are_refused_naming_the_field() {
    let dir = tempdir("hostile-findings");
    let mach = |procs: u32, workloads: &str| {
        format!(
            "name = \"f\"\n[machine]\npreset = \"multimax\"\nprocessors = {procs}\n[scheduler]\n\
             policy = \"mach\"\n{workloads}"
        )
    };
    let psets = "[[workload]]\nkind = \"psets\"\nrounds = 2\n";
    let cases: Vec<(String, &str)> = vec![
        (mach(1, psets), "needs at least 2 processors"),
        (
            mach(2, &format!("{psets}{}", psets.replace("psets\"\nr", "psets\"\nname = \"b\"\nr"))),
            "default set must keep",
        ),
        (
            mach(1, "[[workload]]\nkind = \"parallel\"\nthreads = 1\nphases = 2\nphase_cycles = 10\ndedicated = true\n"),
            "workload.0",
        ),
        (mach(4, psets).replace("\"mach\"", "\"round-robin\""), "processor sets"),
        (
            "name = \"g\"\n[machine]\npreset = \"bbn-gp1000\"\nprocessors = 1\n[scheduler]\n\
             policy = \"batch\"\n[[workload]]\nkind = \"george-pc\"\nstructure = \"ddq\"\nitems = 10\n"
                .to_string(),
            "`george-pc` needs at least 2 processors",
        ),
        (
            mach(4, "[[workload]]\nkind = \"gang-server\"\nclients = 1\nprocessors = 2\nhold_ms = 1\n")
                .replace("\"mach\"", "\"round-robin\""),
            "processor sets",
        ),
        (
            mach(4, "[[workload]]\nkind = \"gang-server\"\nclients = 1\nprocessors = 0\nhold_ms = 1\n"),
            "workload.0.processors",
        ),
        (mach(4, psets).replace("\"mach\"", "\"mach\"\ncreate_set_us = 1e30"), "scheduler.create_set_us"),
        (mach(4, psets).replace("\"mach\"", "\"gang\"\nslice_ms = 1e-12"), "scheduler.slice_ms"),
        (mach(4, psets).replace("name = \"f\"", "name = \"\""), "field `name`"),
        (BASES[0].1.replace("name = \"a\"", "name = \"*\""), "workload.0.name"),
        (BASES[0].1.replace("threads = 3", "threads = 99999999999999999999"), "workload.0.threads"),
        (BASES[0].1.replace("preset = \"tango-12\"\n", ""), "valid presets"),
        (BASES[BASES.len() - 1].1.replace("processors = 6", "processors = 4"), "workload.0"),
        (
            BASES[0].1.to_string()
                + "[reproduce]\npaper = \"x\"\ntitle = \"t\"\nmetric = \"elapsed_ms\"\n[[reproduce.expect]]\n\
                   point = \"processors=1\"\npaper = nan\ntolerance = \"5%\"\n",
            "reproduce.expect.0.paper",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let file = dir.join(format!("f{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let o = common::smpsched(
            &["run", file.to_str().unwrap(), "--out", &format!("o{i}")],
            &dir,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "case {i}: {err}");
        assert!(
            err.contains(want) && err.contains(&format!("f{i}.toml")),
            "case {i}: want `{want}` in {err}"
        );
    }
    // rt-app files: the error names the file, the line, the task, the phase and the event.
    let rtapp = |json: &str| {
        std::fs::write(dir.join("load.json"), json).unwrap();
        std::fs::write(
            dir.join("rt.toml"),
            "name = \"rt\"\n[machine]\npreset = \"tango-12\"\n[scheduler]\npolicy = \
             \"round-robin\"\n[[workload]]\nkind = \"rt-app\"\nfile = \"load.json\"\n",
        )
        .unwrap();
        common::smpsched(&["run", "rt.toml", "--out", "rt-out"], &dir)
    };
    for (json, want) in [
        (
            "{ \"tasks\": { \"a\": { \"loop\": 1, \"phases\": { \"p\": {\n \"jump\": 1 } } } } }",
            "line 2, task `a`, phase `p`, event `jump`: unknown event",
        ),
        (
            "{ \"tasks\": { \"a\": { \"loop\": 1, \"sleep\": -3 } } }",
            "event `sleep`",
        ),
        (
            "{ \"tasks\": { \"a\": { \"loop\": 1, \"fork\": \"a\" } } }",
            "forks make a cycle",
        ),
        ("{ \"tasks\": { \"a\": { \"loop\": 1 } } }", "has no event"),
        // The second probe's: a loop that never lets time pass, lines of the whole-file
        // checks, the default policy, a processor the machine lacks.
        (
            "{ \"global\": { \"duration\": 1 }, \"tasks\": { \"a\": { \"signal\": \"x\" } } }",
            "task `a`, phase `phase0`, event `signal`: none of the task's events takes time",
        ),
        (
            "{ \"global\": { \"duration\": 1 },\n \"tasks\": { \"a\": { \"run\": 1,\n \"unlock\": \"m\" } } }",
            "line 3, task `a`, phase `phase0`, event `unlock`",
        ),
        (
            "{ \"global\": { \"duration\": 1,\n \"default_policy\": \"X\" }, \"tasks\": { \"a\": { \"run\": 1 } } }",
            "line 2, event `global.default_policy`: unknown policy `X`",
        ),
        (
            "{ \"global\": { \"duration\": 1 }, \"tasks\": { \"a\": {\n \"cpus\": [12], \"run\": 1 } } }",
            "line 2, task `a`, event `cpus`: names CPU 12, but the machine has 12",
        ),
    ] {
        let o = rtapp(json);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(want) && err.contains("workload.0.file") && err.contains("load.json"),
            "want `{want}` in {err}"
        );
    }
    // Commands: a folder named that does not exist, a folder holding no reproduction.
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    for (args, want) in [
        (
            &["list", "--dir", "/nonexistent"][..],
            "no experiments folder",
        ),
        (
            &["reproduce", "all", "--experiments", "empty"],
            "holds no reproduction",
        ),
        (&["run", "f0.toml", "--jobs", "-1"], "from 0"),
    ] {
        let o = common::smpsched(args, &dir);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want `{want}` in {err}");
    }
    let o = common::smpsched(&["explain", "black90"], &dir);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("Mach"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The second probe's findings that only show while a run goes (a loop of events that give the
/// simulator nothing to do, a fork in a loop, a write many times its buffer) and its special
/// files: each stops cleanly, within the memory given, and never hangs.
#[test]
fn the_second_probes_runs_stop_cleanly() {
    let dir = tempdir("hostile-findings-2");
    let toml = "name = \"rt\"\n[machine]\npreset = \"tango-12\"\n[scheduler]\npolicy = \
                \"round-robin\"\n[[workload]]\nkind = \"rt-app\"\nfile = \"load.json\"\n";
    std::fs::write(dir.join("rt.toml"), toml).unwrap();
    // Each run capped: 1 GiB of address space, 60 s.
    let capped = |args: &str, memory: &str| {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "ulimit -v 1048576; exec timeout 60 {} {args}",
                env!("CARGO_BIN_EXE_smpsched")
            ))
            .current_dir(&dir)
            .env("SMPSCHED_MEMORY", memory)
            .output()
            .unwrap()
    };
    for (i, (json, code, want)) in [
        (
            "{\"tasks\":{\"a\":{\"loop\":1000000000,\"phases\":{\"p\":{\"loop\":1000000000,\"signal\":\"x\"}}}}}",
            2,
            "made no progress",
        ),
        (
            "{\"global\":{\"duration\":1000},\"tasks\":{\"d\":{\"fork\":\"j\"},\"j\":{\"instance\":0,\"loop\":1,\"sleep\":100000000}}}",
            2,
            "too many threads: at most",
        ),
        (
            "{\"global\":{\"duration\":1,\"mem_buffer_size\":64},\"tasks\":{\"a\":{\"instance\":10,\"mem\":1073741824}}}",
            0,
            "",
        ),
        // The probe's period below a cycle is no integer of microseconds: refused, as rt-app
        // refuses it (a shorter period than a cycle, on a clock below 1 MHz, is made a cycle).
        (
            "{\"global\":{\"duration\":1},\"tasks\":{\"a\":{\"timer\":{\"ref\":\"t\",\"period\":0.0001}}}}",
            2,
            "event `timer`: must be an integer",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        std::fs::write(dir.join("load.json"), json).unwrap();
        let o = capped(&format!("run rt.toml --quiet --jobs 1 --out o{i}"), "256M");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "case {i}: {err}");
        assert!(err.contains(want), "case {i}: want `{want}` in {err}");
    }
    // A paper folder whose README.md is a FIFO or a link to an endless device: passed over.
    #[cfg(unix)]
    for special in ["fifo", "zero"] {
        let papers = dir.join(format!("papers-{special}"));
        std::fs::create_dir_all(papers.join("black90")).unwrap();
        let table2 = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../experiments/black90/table2.toml");
        std::fs::copy(table2, papers.join("black90/table2.toml")).unwrap();
        let readme = papers.join("black90/README.md");
        if special == "fifo" {
            let made = std::process::Command::new("mkfifo").arg(&readme).status();
            assert!(made.is_ok_and(|s| s.success()));
        } else {
            std::os::unix::fs::symlink("/dev/zero", &readme).unwrap();
        }
        let p = papers.to_str().unwrap();
        for args in [
            format!("explain black90 --experiments {p}"),
            format!("list --dir {p}"),
        ] {
            let o = capped(&args, "256M");
            assert_eq!(o.status.code(), Some(0), "{special}: {args}: {o:?}");
            assert!(
                String::from_utf8_lossy(&o.stdout).contains("Mach"),
                "{args}"
            );
        }
    }
    // `real` counts the cores that spin the services: 64 schedulers on a few cores cannot
    // serve 500,000 requests of 10 ms in 600 s.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores <= 8 {
        let o = capped(
            "real --schedulers 64 --clients 64 --service-us 10000 --requests 500000",
            "256M",
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("would take at least"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The probe of extreme but valid machines and policies: each run stays within its memory and
/// ends in seconds (before: a slow clock stepped Mach's aging once a cycle, an affinity table
/// of threads by processors aborted at 2.6 GB, per-core pulls scanned every queue for every
/// idle processor at every event), and a too-short tick names the policy's own field.
#[test]
fn extreme_machines_run_within_their_bounds() {
    let dir = tempdir("hostile-findings-3");
    let file = |name: &str, machine: &str, policy: &str, workload: &str| {
        let text = format!(
            "name = \"{name}\"\n[machine]\npreset = \"tango-12\"\n{machine}\n[scheduler]\n\
             {policy}\n[[workload]]\nkind = \"synthetic\"\nname = \"w\"\n{workload}\n"
        );
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    };
    let big = "processors = 65536\n[machine.memory]\nenabled = false";
    let fixed = |threads: u32, cycles: u64| {
        format!(
            "threads = {threads}\nbursts = 5\ncompute = {{ dist = \"fixed\", value = {cycles} }}"
        )
    };
    file(
        "slow-clock",
        "processors = 1\nclock_mhz = 1e-6",
        "policy = \"mach\"",
        &fixed(1, 2_000_000_000),
    );
    file(
        "affinity-big",
        big,
        "policy = \"affinity\"",
        &fixed(2000, 100_000),
    );
    file(
        "per-core-big",
        big,
        "policy = \"per-core\"",
        &fixed(2, 100_000),
    );
    for name in ["slow-clock", "affinity-big", "per-core-big"] {
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "ulimit -v 1048576; exec timeout 60 {} run {name}.toml --quiet --jobs 1",
                env!("CARGO_BIN_EXE_smpsched")
            ))
            .current_dir(&dir)
            .env("SMPSCHED_MEMORY", "512M")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
    }
    file(
        "short-tick",
        "processors = 4",
        "policy = \"priority\"\ndecay_interval = 1",
        &fixed(4, 100_000),
    );
    // `NAME.toml` is refused (exit 2) with `expected` in the message, under `memory` if given.
    let refused = |name: &str, memory: Option<&str>, expected: &[&str]| {
        let file = format!("{name}.toml");
        let o = common::smpsched_with_memory(&["run", &file, "--quiet"], &dir, memory);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        for e in expected {
            assert!(err.contains(e), "{name}: {err}");
        }
    };
    refused(
        "short-tick",
        None,
        &["short-tick.toml:7: field `scheduler.decay_interval`"],
    );
    // Too many jobs for the memory of an open load: the error names `jobs`, the field that sets
    // its thread count (it named `workload.0.threads`, a field `arrivals` does not have).
    std::fs::write(
        dir.join("many-jobs.toml"),
        "name = \"many-jobs\"\n[machine]\npreset = \"tango-12\"\nprocessors = 4\n\
         [scheduler]\npolicy = \"batch\"\n[[workload]]\nkind = \"arrivals\"\nname = \"jobs\"\n\
         jobs = 9000000\ninterarrival = { dist = \"fixed\", value = 1000 }\n\
         service = { dist = \"fixed\", value = 1000 }\n",
    )
    .unwrap();
    refused(
        "many-jobs",
        Some("64M"),
        &["many-jobs.toml:10: field `workload.0.jobs`: a run of this point"],
    );
    // weibel-scalar's parts too small for one sweep point: refused at load, before the other
    // points run (it was found only when that point's run installed the workload).
    std::fs::write(
        dir.join("scalar-parts.toml"),
        "name = \"scalar-parts\"\n[machine]\npreset = \"tango-12\"\nprocessors = 4\n\
         [scheduler]\npolicy = \"round-robin\"\n[[workload]]\nkind = \"weibel-scalar\"\n\
         name = \"w\"\nprocesses = 4\ndata_bytes = 16384\npasses = 1\n\
         [sweep]\n\"workload.0.processes\" = [4, 300]\n",
    )
    .unwrap();
    refused(
        "scalar-parts",
        None,
        &["field `workload.0.data_bytes`: 16384 bytes split among 300 processes"],
    );
    assert!(!dir.join("results/scalar-parts").exists(), "a point ran");
    // A slow clock shortens a policy's own default slice (gang's 10 ms), which the file does
    // not name: the error names the policy's field and says it was left at its default.
    file(
        "slow-gang",
        "processors = 4\nclock_mhz = 0.001",
        "policy = \"gang\"",
        &fixed(4, 100_000),
    );
    refused(
        "slow-gang",
        None,
        &[
            "field `scheduler.slice_ms`",
            "left at its default, 10 ms at clock_mhz = 0.001",
        ],
    );
    // Memory the estimate missed, now refused before anything runs: each thread's kernel
    // memory (`kernel.thread_bytes`), and the results' text (100,000 runs took 1.05 GB where
    // 154 MiB was estimated; a million aborted after every run was made).
    let tb = "name = \"tb\"\n[machine]\npreset = \"rpi3\"\nprocessors = 4\n[machine.kernel]\n\
              thread_bytes = 1048576\n[scheduler]\npolicy = \"per-core\"\n[[workload]]\n\
              kind = \"weibel-pool\"\nname = \"w\"\nitems = 100000\nworkers = 0\nmatrices = 4\nmatrix_bytes = 1024\npasses = 2\n";
    std::fs::write(dir.join("tb.toml"), tb).unwrap();
    let reps = format!(
        "repetitions = 10000\n{}",
        std::fs::read_to_string(dir.join("short-tick.toml"))
            .unwrap()
            .replace("decay_interval = 1\n", "")
            .replace("policy = \"priority\"", "policy = \"round-robin\"")
    );
    std::fs::write(
        dir.join("reps.toml"),
        reps + "[sweep]\n\"workload.0.compute.value\" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n",
    )
    .unwrap();
    for (name, field) in [
        ("tb", "field `workload.0`"),
        ("reps", "field `repetitions`"),
    ] {
        let file = format!("{name}.toml");
        let o = common::smpsched_with_memory(&["run", &file, "--quiet"], &dir, Some("300M"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(field) && err.contains("300.0 MiB"),
            "{name}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
