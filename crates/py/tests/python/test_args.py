"""Arguments of the Python API checked before they reach the engine (a probe of the package,
2026-11-29): a wrong type raises TypeError and a value out of range ValueError or
ExperimentError, each naming the argument; set= writes dicts and lists as TOML; a stopped run's
`stopped` is the sentence of results.csv in every frame; nothing is written for a refused call."""

import json

import pytest

import smpsched

TINY = {
    "name": "tiny",
    "seed": 1,
    "machine": {"preset": "tango-12", "processors": 2},
    "scheduler": {"policy": "round-robin"},
    "workload": [{"kind": "synthetic", "name": "A", "threads": 2, "bursts": 3,
                  "compute": {"dist": "fixed", "value": 10000}}],
}


@pytest.mark.parametrize("kwargs, error, name", [
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": 2**64}, ValueError, "seed"),
    ({"seed": 1.5}, TypeError, "seed"),
    ({"jobs": -1}, ValueError, "jobs"),
    ({"jobs": True}, TypeError, "jobs"),
    ({"set": [("machine.processors", 4)]}, TypeError, "set"),
    ({"set": "machine.processors=4"}, TypeError, "set"),
    ({"set": {"workload.0.name": None}}, TypeError, "workload.0.name"),
    ({"cluster": 0}, TypeError, "cluster"),
    ({"cluster": " "}, ValueError, "cluster"),
    ({"progress": "no"}, TypeError, "progress"),
    ({"per_job": 1}, TypeError, "per_job"),
])
def test_run_names_a_bad_argument(kwargs, error, name):
    with pytest.raises(error, match=name):
        smpsched.run(TINY, **kwargs)


def test_run_refuses_an_empty_path():
    with pytest.raises(ValueError, match="empty"):
        smpsched.run("")


def test_set_writes_dicts_and_lists_as_toml():
    # As `--set 'workload.0.compute={dist="fixed",value=5}'` does on the command line.
    got = smpsched.run(TINY, set={"workload.0.compute": {"dist": "fixed", "value": 5}},
                       progress=False)
    [setting] = got.data["settings"]
    assert setting.startswith("workload.0.compute") and "fixed" in setting, setting
    assert got.apps["useful"].to_list() == [2 * 3 * 5]
    with pytest.raises(smpsched.ExperimentError, match="processors"):
        smpsched.run(TINY, set={"machine.processors": float("nan")}, progress=False)


@pytest.mark.parametrize("kwargs, error, name", [
    ({"seeds": "12"}, TypeError, "seeds"),
    ({"seeds": [1.5, 2]}, TypeError, "seeds"),
    ({"seeds": [-1, 2]}, ValueError, "seeds"),
    ({"vary": []}, ValueError, "vary"),
    ({"vary": ("machine.processors", "48")}, TypeError, "vary"),
    ({"vary": ["machine.processors", [4, 8]]}, TypeError, "vary"),
    ({"vary": ("machine.processors", ["4,8", 16])}, smpsched.ExperimentError, "comma"),
    ({"only": 5}, TypeError, "only"),
    ({"scale": None}, TypeError, "scale"),
    ({"reports": None}, TypeError, "reports"),
    ({"jobs": 10**9}, smpsched.ExperimentError, "jobs"),
])
def test_reproduce_names_a_bad_argument(kwargs, error, name, tmp_path):
    kwargs.setdefault("reports", str(tmp_path / "r"))
    with pytest.raises(error, match=name):
        smpsched.reproduce("black90", only="table2", progress=False, **kwargs)
    assert not (tmp_path / "r").exists()


def test_an_empty_reports_folder_is_refused_before_anything_is_written(root, tmp_path,
                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="reports"):
        smpsched.reproduce("black90", only="table2", reports="", progress=False,
                           experiments=str(root / "experiments"))
    assert list(tmp_path.iterdir()) == []


def test_a_dicts_bad_value_is_named_by_its_dotted_path():
    bad = dict(TINY, machine={"preset": "tango-12", "processors": None})
    with pytest.raises(TypeError, match=r"^machine\.processors:"):
        smpsched.experiment_toml(bad)
    bad = dict(TINY, workload=[{"kind": "synthetic", "threads": None}])
    with pytest.raises(TypeError, match=r"^workload\.0\.threads:"):
        smpsched.experiment_toml(bad)


def test_what_toml_cannot_hold_is_refused_naming_where():
    # TOML's integers are 64-bit signed; `seed=2**63` as an argument is a u64 and works.
    with pytest.raises(ValueError, match=r"^seed: 9223372036854775808 is outside"):
        smpsched.experiment_toml(dict(TINY, seed=2**63))
    assert "seed = -9223372036854775808" in smpsched.experiment_toml(dict(TINY, seed=-2**63))
    # A lone surrogate (a bad decode) is not text TOML can hold, in a value or a key.
    with pytest.raises(ValueError, match=r"^name: 'a\\ud800' is not valid Unicode"):
        smpsched.experiment_toml(dict(TINY, name="a\ud800"))
    with pytest.raises(ValueError, match=r"^machine: the key 'x\\udc80'"):
        smpsched.experiment_toml(dict(TINY, machine={"x\udc80": 1}))
    deep: dict = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(ValueError, match="nested too deeply"):
        smpsched.experiment_toml(dict(TINY, machine=deep))
    with pytest.raises(ValueError, match="nested too deeply"):
        smpsched.run(TINY, set={"machine.x": deep}, progress=False)


def test_a_stopped_runs_reason_is_the_csv_sentence_in_every_frame():
    exp = dict(TINY, time_limit_cycles=15000)
    with pytest.warns(RuntimeWarning):
        r = smpsched.run(exp, progress=False)
    stopped = json.loads(r.to_json())["runs"][0]["stopped"]
    assert stopped["message"].startswith("stopped at the time limit")
    assert r.runs["stopped"].to_list() == [stopped["message"]]
    assert set(r.jobs["stopped"].to_list()) <= {stopped["message"]}
