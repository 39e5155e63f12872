"""Sweeps on a Ray cluster (a local instance with 2 CPUs): the same bytes as local runs, from
Python and from the command (`run` and `reproduce` with --ray), a killed worker changing
nothing, a failing run reported once as locally."""

import os
import sys
from pathlib import Path

import pytest
import ray

import smpsched

POLICIES = "experiments/policies.toml"


@pytest.fixture(scope="module")
def address():
    """A local Ray instance for this module; the command's helper runs in this Python."""
    ctx = ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                   logging_level="warning")
    before = os.environ.get("SMPSCHED_PYTHON")
    os.environ["SMPSCHED_PYTHON"] = sys.executable
    yield ctx.address_info["gcs_address"]
    if before is None:
        os.environ.pop("SMPSCHED_PYTHON", None)
    else:
        os.environ["SMPSCHED_PYTHON"] = before
    ray.shutdown()


def files_of(d: Path) -> dict:
    """Every file under ``d`` by relative path, with its bytes."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_python_run_on_the_cluster_equals_the_local_run(address):
    here = smpsched.run(POLICIES, progress=False)
    there = smpsched.run(POLICIES, progress=False, cluster=address)
    assert there.to_json() == here.to_json()
    assert there.jobs_csv() == here.jobs_csv()
    assert len(there.data["runs"]) >= 10
    # With a value set over the file, the workers load it the same way.
    here = smpsched.run(POLICIES, progress=False, set={"machine.processors": 3})
    there = smpsched.run(POLICIES, progress=False, cluster=address,
                         set={"machine.processors": 3})
    assert there.to_json() == here.to_json()
    assert here.data["settings"] == ["machine.processors = 3"]


def test_the_command_writes_the_same_files_through_ray(address, cli, tmp_path):
    cli("run", POLICIES, "--out", str(tmp_path / "here"), "--quiet", "--per-job")
    cli("run", POLICIES, "--out", str(tmp_path / "there"), "--quiet", "--per-job", "--ray",
        address)
    here, there = files_of(tmp_path / "here"), files_of(tmp_path / "there")
    assert {"results.json", "results.csv", "jobs.csv", "time-split.svg"} <= set(here)
    assert here == there


def test_a_reproduction_through_ray_writes_the_same_report(address, cli, tmp_path):
    cli("reproduce", "black90", "--scale", "0.2", "--reports", str(tmp_path / "here"))
    cli("reproduce", "black90", "--scale", "0.2", "--reports", str(tmp_path / "there"),
        "--ray", address)
    here, there = files_of(tmp_path / "here"), files_of(tmp_path / "there")
    assert any(k.endswith("black90-scale-0.2.md") for k in here)
    assert here == there


def test_python_reproduce_on_the_cluster_writes_the_same_report(address, tmp_path,
                                                               monkeypatch):
    from smpsched import cluster

    shipped = []
    real = cluster.run_tasks

    def counting(bundles, tasks, address=None):
        for finished in real(bundles, tasks, address=address):
            shipped.append(finished[0])
            yield finished

    here = smpsched.reproduce("black90", scale=0.2, reports=tmp_path / "here", progress=False)
    monkeypatch.setattr(cluster, "run_tasks", counting)
    there = smpsched.reproduce("black90", scale=0.2, reports=tmp_path / "there",
                               progress=False, cluster=address)
    assert len(shipped) >= 20, "the runs were not made on the cluster"
    assert sorted(shipped) == list(range(len(shipped)))
    assert files_of(tmp_path / "here") == files_of(tmp_path / "there")
    assert there.summary == here.summary
    # Across seeds, each reproduction's runs go to the cluster too.
    shipped.clear()
    here = smpsched.reproduce("black90", scale=0.2, seeds=[1, 2], only="table2",
                              reports=tmp_path / "here-seeds", progress=False)
    there = smpsched.reproduce("black90", scale=0.2, seeds=[1, 2], only="table2",
                               reports=tmp_path / "there-seeds", progress=False,
                               cluster=address)
    assert len(shipped) >= 2 * 20
    assert files_of(tmp_path / "here-seeds") == files_of(tmp_path / "there-seeds")


def test_a_killed_worker_is_retried_and_changes_nothing(address, cli, tmp_path):
    marker = tmp_path / "a-worker-died"
    cli("run", POLICIES, "--out", str(tmp_path / "here"), "--quiet")
    os.environ["SMPSCHED_RAY_DIE_ONCE"] = str(marker)
    try:
        cli("run", POLICIES, "--out", str(tmp_path / "there"), "--quiet", "--ray", address)
    finally:
        del os.environ["SMPSCHED_RAY_DIE_ONCE"]
    assert marker.exists(), "no worker was killed"
    assert files_of(tmp_path / "here") == files_of(tmp_path / "there")


def test_a_run_that_reaches_a_bound_is_reported_once_as_locally(address, cli, tmp_path):
    exp = tmp_path / "bound.toml"
    exp.write_text(
        'name = "bound"\nrepetitions = 3\nevent_limit = 200\n[machine]\npreset = "tango-12"\n'
        'processors = 2\n[scheduler]\npolicy = "round-robin"\n'
        '[[workload]]\nkind = "synthetic"\nthreads = 4\nbursts = 50\n'
        'compute = { dist = "fixed", value = 100000 }\n'
        '[sweep]\n"scheduler.policy" = ["batch", "round-robin"]\n')
    here = cli("run", str(exp), "--out", str(tmp_path / "here"), "--quiet", check=False)
    there = cli("run", str(exp), "--out", str(tmp_path / "there"), "--quiet", "--ray", address,
                check=False)
    assert here.returncode == 2
    assert there.returncode == here.returncode
    errors = [[line for line in p.stderr.splitlines() if line.startswith("error:")]
              for p in (here, there)]
    assert len(errors[0]) == 1 and errors[1] == errors[0]
    assert files_of(tmp_path / "here") == files_of(tmp_path / "there")


def test_ctrl_c_cancels_the_tasks_on_the_cluster(address, tmp_path):
    import signal
    import subprocess
    import time

    exp = tmp_path / "long.toml"
    exp.write_text(
        'name = "long"\nrepetitions = 20\n[machine]\npreset = "tango-12"\nprocessors = 8\n'
        '[scheduler]\npolicy = "round-robin"\n[[workload]]\nkind = "synthetic"\nthreads = 64\n'
        'bursts = 100000\ncompute = { dist = "exponential", mean = 20000 }\n'
        'block = { dist = "exponential", mean = 20000 }\n')
    exe = os.environ.get("SMPSCHED_BIN") or str(Path(__file__).resolve().parents[4]
                                                / "target" / "release" / "smpsched")
    p = subprocess.Popen([exe, "run", str(exp), "--out", str(tmp_path / "out"), "--ray", address],
                         start_new_session=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while ray.available_resources().get("CPU", 0) > 0 and time.time() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 0, "the tasks never started"
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    p.wait(timeout=30)
    deadline = time.time() + 30
    while ray.available_resources().get("CPU", 0) < 2 and time.time() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2, "tasks still hold the cluster's CPUs"
    assert not (tmp_path / "out").exists()


def test_an_address_where_nothing_listens_fails_at_once_naming_it(tmp_path):
    import socket
    import time

    from smpsched import cluster

    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        t = time.time()
        with pytest.raises(ConnectionError, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
            cluster._check_reachable(f"127.0.0.1:{port}")
        assert time.time() - t < 10
    cluster._check_reachable("auto")  # left to Ray
    cluster._check_reachable("not an address")  # Ray says what is wrong with it


def test_a_bad_jobs_is_refused_before_the_cluster_is_used(tmp_path):
    with pytest.raises(smpsched.ExperimentError, match="jobs"):
        smpsched.run(POLICIES, cluster="127.0.0.1:1", jobs=2000, progress=False)


def test_the_command_refuses_a_word_taken_for_the_address_before_anything_runs(cli, tmp_path):
    p = cli("reproduce", "--ray", "black90", "--reports", str(tmp_path / "r"), check=False)
    assert p.returncode == 2, p.stderr
    assert "`black90` is not a Ray address" in p.stderr
    assert not (tmp_path / "r").exists()
