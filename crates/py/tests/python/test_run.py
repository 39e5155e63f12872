"""smpsched.run: the same results as the command, frames with the documented columns,
experiments from text and dicts, bad input as ExperimentError, the GIL released, Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import polars as pl
import pytest

import smpsched

QUICK = "experiments/quickstart.toml"


def small(**over):
    """A small experiment as a dict: two policies, two applications."""
    exp = {
        "name": "small",
        "seed": 3,
        "repetitions": 2,
        "machine": {"preset": "tango-12", "processors": 4},
        "scheduler": {"policy": "round-robin"},
        "workload": [
            {"kind": "synthetic", "name": "A", "threads": 6, "bursts": 10,
             "compute": {"dist": "exponential", "mean": 100000}},
            {"kind": "synthetic", "name": "B", "threads": 4, "bursts": 10,
             "compute": {"dist": "fixed", "value": 50000},
             "block": {"dist": "fixed", "value": 20000}},
        ],
        "sweep": {"scheduler.policy": ["batch", "priority"]},
    }
    exp.update(over)
    return exp


@pytest.mark.parametrize("seed", [None, 7])
def test_results_equal_the_commands(cli, root, tmp_path, seed):
    args = ["run", QUICK, "--out", str(tmp_path / "out"), "--quiet"]
    if seed is not None:
        # With --per-job the command also writes jobs.csv; results.json stays the same.
        args += ["--seed", str(seed), "--per-job"]
    cli(*args)
    want = (tmp_path / "out" / "results.json").read_text()
    got = smpsched.run(root / QUICK, seed=seed, progress=False)
    assert got.to_json() == want
    if seed is None:
        assert not (tmp_path / "out" / "jobs.csv").exists()
    else:
        assert got.jobs_csv() == (tmp_path / "out" / "jobs.csv").read_text()


def test_set_equals_the_commands_set_and_the_file_edited(cli, root, tmp_path):
    cli("run", QUICK, "--set", "machine.processors=6", "--set", "workload.2.bursts=3",
        "--out", str(tmp_path / "out"), "--quiet")
    want = (tmp_path / "out" / "results.json").read_text()
    got = smpsched.run(root / QUICK, set={"machine.processors": 6, "workload.2.bursts": 3},
                       progress=False)
    assert got.to_json() == want
    assert got.data["settings"] == ["machine.processors = 6", "workload.2.bursts = 3"]
    # A dict edited value for value gives the same runs, and records no settings.
    exp = small()
    edited = small(machine={"preset": "tango-12", "processors": 2})
    a = smpsched.run(exp, set={"machine.processors": 2}, progress=False).data
    b = smpsched.run(edited, progress=False).data
    assert a["runs"] == b["runs"]
    assert "settings" not in b


def test_set_is_refused_as_the_command_refuses_it():
    # A path the experiment's own sweep sets, a field the workload lacks, a bad value.
    for set_, words in [({"scheduler.policy": "batch"}, "sets `scheduler.policy` itself"),
                        ({"workload.0.threadz": 2}, "threadz"),
                        ({"machine.processors": -1}, "processors"),
                        ({"machine.processors": 2, "machine.processors ": 3},
                         "set the same value")]:
        with pytest.raises(smpsched.ExperimentError) as e:
            smpsched.run(small(), set=set_, progress=False)
        assert words in str(e.value), (set_, str(e.value))


def test_text_and_dict_give_the_same_runs(tmp_path):
    exp = small()
    text = smpsched.experiment_toml(exp)
    a = json.loads(smpsched.run(exp, progress=False).to_json())
    b = json.loads(smpsched.run(text, progress=False).to_json())
    f = tmp_path / "small.toml"
    f.write_text(text)
    c = json.loads(smpsched.run(str(f), progress=False).to_json())
    for d in (a, b, c):
        d.pop("file")
    assert a == b == c
    assert [r["point"] for r in a["runs"]] == [
        "policy=batch", "policy=batch", "policy=priority", "policy=priority"]


def test_same_seed_same_bytes_and_another_seed_differs():
    one = smpsched.run(small(), progress=False).to_json()
    assert smpsched.run(small(), progress=False).to_json() == one
    assert smpsched.run(small(), seed=4, progress=False).to_json() != one


def test_frames_have_the_documented_columns():
    r = smpsched.run(small(), progress=False)
    assert r.runs.columns == smpsched.RUN_COLUMNS + ["scheduler.policy"]
    assert r.processors.columns == smpsched.PROCESSOR_COLUMNS
    assert r.apps.columns == smpsched.APP_COLUMNS + ["scheduler.policy"]
    assert r.jobs.columns == smpsched.JOB_COLUMNS + ["scheduler.policy"]
    assert r.runs.height == 4
    assert r.processors.height == 4 * 4
    assert r.apps.height == 4 * 2
    assert r.jobs.height == 4 * (6 + 4)
    # The frames hold the JSON's numbers, not copies made up elsewhere.
    doc = json.loads(r.to_json())
    assert r.runs["elapsed_cycles"].to_list() == [x["elapsed_cycles"] for x in doc["runs"]]
    assert r.apps["context_switches"].to_list() == [
        a["context_switches"] for x in doc["runs"] for a in x["apps"]]
    split = r.processors.select(smpsched._frames.SPLIT).sum_horizontal()
    assert split.to_list() == [sum(p.values()) for x in doc["runs"] for p in x["processors"]]
    assert r.apps["jobs"].to_list() == [6, 4] * 4
    assert r.runs["stopped"].dtype == pl.Utf8 and r.runs["stopped"].null_count() == 4


def test_job_rows_add_up_to_each_applications_summary():
    r = smpsched.run(small(), progress=False)
    jobs = r.jobs
    assert jobs["job"].to_list() == ([*range(6), *range(4)]) * 4
    assert (jobs["response"] == jobs["exited"] - jobs["arrived"]).all()
    assert (jobs["wait"] == jobs["first_run"] - jobs["arrived"]).all()
    assert (jobs["held"] > 0).all()
    per_app = (jobs.group_by(["point", "repetition", "app"], maintain_order=True)
               .agg(pl.len().alias("jobs"), pl.col("response").mean().alias("mean_response"),
                    pl.col("response").max().alias("max_response"),
                    pl.col("wait").mean().alias("mean_wait")))
    apps = r.apps.select("point", "repetition", "app", "jobs", "mean_response", "max_response",
                         "mean_wait")
    assert per_app["jobs"].to_list() == apps["jobs"].to_list()
    assert per_app["max_response"].to_list() == apps["max_response"].to_list()
    for col in ("mean_response", "mean_wait"):
        assert per_app[col].to_list() == pytest.approx(apps[col].to_list(), rel=1e-12)
    assert jobs["scheduler.policy"].unique(maintain_order=True).to_list() == ["batch", "priority"]


def test_a_deprecated_name_warns_and_runs_as_the_new_one():
    old = small(scheduler={"policy": "round-robin", "quantum": 25000}, sweep={})
    new = small(scheduler={"policy": "round-robin", "slice_ms": 1.0}, sweep={})
    with pytest.warns(FutureWarning, match=r"scheduler\.quantum` is deprecated; write `slice_ms`"):
        a = smpsched.run(old, progress=False)
    b = smpsched.run(new, progress=False)
    assert a.data["runs"][0]["elapsed_cycles"] == b.data["runs"][0]["elapsed_cycles"]
    assert a.to_json() == b.to_json()


def test_per_job_false_keeps_no_rows_and_the_same_results():
    kept = smpsched.run(small(), progress=False)
    lean = smpsched.run(small(), progress=False, per_job=False)
    assert lean.to_json() == kept.to_json()
    with pytest.raises(ValueError, match="per_job=True"):
        lean.jobs


def test_bad_field_in_a_file_names_file_line_and_field(tmp_path):
    text = smpsched.experiment_toml(small())
    bad = text.replace("processors = 4", "processors = 0")
    assert bad != text
    f = tmp_path / "bad.toml"
    f.write_text(bad)
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.run(f, progress=False)
    err = e.value
    assert err.file == str(f)
    assert err.field == "machine.processors"
    assert err.line == bad.splitlines().index("processors = 0") + 1
    assert "bad.toml" in str(err) and err.message


def test_bad_field_in_a_dict_and_in_text():
    exp = small()
    exp["workload"][1]["threads"] = -2
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.run(exp, progress=False)
    assert e.value.file == "<dict>"
    assert e.value.field == "workload.1.threads"
    lines = smpsched.experiment_toml(exp).splitlines()
    assert lines[e.value.line - 1] == "threads = -2"
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.run('name = "x"\n[machine]\npreset = "tango-12"\n[scheduler]\npolicy = "nope"\n[[workload]]\nkind = "synthetic"\n',
                     progress=False)
    assert e.value.field == "scheduler.policy" and e.value.line == 5


def test_bad_arguments_and_unknown_files():
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.run(small(), jobs=100000, progress=False)
    assert e.value.field == "jobs"
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.run("no/such/file.toml", progress=False)
    assert e.value.file == "no/such/file.toml" and e.value.line is None
    with pytest.raises(TypeError):
        smpsched.run(small(name=object()), progress=False)


def test_the_engine_runs_without_the_gil():
    exp = small(repetitions=20)
    for w in exp["workload"]:
        w["bursts"] = 3000
    out = {}
    t = threading.Thread(target=lambda: out.update(r=smpsched.run(exp, jobs=1, progress=False)))
    ticks = 0
    start = time.perf_counter()
    t.start()
    while t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    took = time.perf_counter() - start
    assert out["r"].runs.height == 40
    # With the GIL held by the engine the loop would advance a few times in all.
    assert ticks > 20 and ticks > 0.3 * took / 0.001, (took, ticks)


# Long enough (tens of seconds of one core) that no machine finishes it before the interrupt;
# 400 repetitions finished within the test's 1-second wait on a faster host.
LONG_RUN = """
exp = {"name": "long", "repetitions": 10000, "machine": {"preset": "tango-12", "processors": 4},
       "scheduler": {"policy": "round-robin"},
       "workload": [{"kind": "synthetic", "name": "A", "threads": 16, "bursts": 2000,
                     "compute": {"dist": "exponential", "mean": 100000}}]}
smpsched.run(exp, jobs=1, progress=False)
"""

LONG_REPRODUCE = """
smpsched.reproduce("dibella92", scale=0.1, jobs=1, progress=False, reports=tempfile.mkdtemp())
"""


def cpu_after_ctrl_c(body: str, root, wait: float) -> float:
    """Runs `body` in a fresh interpreter, sends it SIGINT (Ctrl-C) after `wait` seconds, and
    returns the CPU seconds it used in a second taken one second after the interrupt: near 0
    when no further run started (the run under way finishes on the engine's thread)."""
    script = (
        "import smpsched, sys, tempfile, time\n"
        "print('start', flush=True)\n"
        "try:\n" + "".join("    " + line + "\n" for line in body.strip().splitlines()) +
        "    print('finished', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    time.sleep(1.0)\n"
        "    cpu = time.process_time()\n"
        "    time.sleep(1.0)\n"
        "    print('interrupted %.3f' % (time.process_time() - cpu), flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                         cwd=root)
    assert p.stdout.readline().strip() == "start"
    time.sleep(wait)
    os.kill(p.pid, signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=60)
    finally:
        p.kill()
    assert out.startswith("interrupted"), out
    return float(out.split()[1])


def test_ctrl_c_interrupts_a_long_run(root):
    cpu = cpu_after_ctrl_c(LONG_RUN, root, 1.0)
    assert cpu < 0.3, f"runs went on after Ctrl-C: {cpu} s of CPU in 1 s"


def test_ctrl_c_interrupts_a_reproduction_and_no_further_run_starts(root):
    cpu = cpu_after_ctrl_c(LONG_REPRODUCE, root, 1.5)
    assert cpu < 0.3, f"runs went on after Ctrl-C: {cpu} s of CPU in 1 s"


def test_progress_reports_each_run():
    seen = []
    out, stopped, _, _ = smpsched._native.run_experiment(
        "<dict>", smpsched.experiment_toml(small()), None, 0,
        lambda done, total, label: seen.append((done, total, label)))
    assert stopped is None and json.loads(out)["experiment"] == "small"
    assert seen[-1] == (4, 4, "small")
    assert all(0 <= d <= t == 4 for d, t, _ in seen)


def test_a_run_stopped_at_a_bound_is_kept_marked_and_warned():
    with pytest.warns(RuntimeWarning, match="event_limit"):
        r = smpsched.run(small(event_limit=50), progress=False)
    assert r.stopped is not None
    assert r.runs["stopped"].null_count() == 0
    assert all(e <= 50 for e in r.runs["events"])
