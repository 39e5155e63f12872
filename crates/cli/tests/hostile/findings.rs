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
