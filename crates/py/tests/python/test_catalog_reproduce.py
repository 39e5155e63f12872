"""smpsched.reproduce gives the command's verdicts; the catalogs list what `smpsched list`
lists, with parameters."""

import json
from pathlib import Path

import pytest

import smpsched


def test_reproduce_gives_the_commands_verdicts(cli, tmp_path):
    cli("reproduce", "black90", "--scale", "0.1", "--reports", str(tmp_path / "cli"))
    want = json.loads((tmp_path / "cli" / "black90-scale-0.1.json").read_text())
    r = smpsched.reproduce("black90", scale=0.1, reports=tmp_path / "py", progress=False)
    want_claims = [(f["experiment_file"], c["text"], c["verdict"]["verdict"])
                   for f in want["files"] for c in f["claims"]]
    got_claims = list(zip(r.claims["file"], r.claims["claim"], r.claims["verdict"]))
    assert got_claims == want_claims
    want_values = [(p["point"], p["metric"], p["ours"], p.get("paper"))
                   for f in want["files"] for p in f["points"]]
    got_values = list(zip(r.values["point"], r.values["metric"], r.values["ours"],
                          r.values["paper"]))
    assert got_values == want_values
    assert r.claims.columns == ["file", "title", "claim", "verdict", "detail", "reason"]
    assert r.values.columns == ["file", "point", "metric", "ours", "paper", "distance",
                                "tolerance", "within", "note"]
    s = r.summary
    assert s["holds"] + s["fails"] + s["known_differences"] + s["errors"] == s["claims"]
    assert s["claims"] == len(want_claims)
    v = r.values.drop_nulls("paper")
    for ours, paper, d in zip(v["ours"], v["paper"], v["distance"]):
        if paper != 0:
            assert d == pytest.approx(abs(ours - paper) / abs(paper))
    assert Path(r.report).is_file()


def test_reproduce_at_another_seed_is_the_commands(cli, tmp_path):
    cli("reproduce", "black90", "--scale", "0.1", "--seed", "7", "--reports", str(tmp_path / "cli"))
    want = json.loads((tmp_path / "cli" / "black90-scale-0.1-seed-7.json").read_text())
    assert want["generated_by"] == "smpsched reproduce black90 --scale 0.1 --seed 7"
    r = smpsched.reproduce("black90", scale=0.1, seed=7, reports=tmp_path / "py", progress=False)
    assert Path(r.report).name == "black90-scale-0.1-seed-7.md"
    got = list(zip(r.values["point"], r.values["metric"], r.values["ours"]))
    assert got == [(p["point"], p["metric"], p["ours"])
                   for f in want["files"] for p in f["points"]]


def test_reproduce_at_several_seeds_is_the_commands(cli, tmp_path):
    cli("reproduce", "black90", "--scale", "0.1", "--seeds", "1-2", "--reports",
        str(tmp_path / "cli"))
    want = json.loads((tmp_path / "cli" / "black90-scale-0.1-seeds-1-2.json").read_text())
    assert want["generated_by"] == "smpsched reproduce black90 --scale 0.1 --seeds 1-2"
    r = smpsched.reproduce("black90", scale=0.1, seeds=[1, 2], reports=tmp_path / "py",
                           progress=False)
    assert isinstance(r, smpsched.SeedsReproduction)
    assert r.seeds == [1, 2]
    assert Path(r.report).name == "black90-scale-0.1-seeds-1-2.md"
    assert Path(r.report).read_text() == (tmp_path / "cli" / Path(r.report).name).read_text()
    assert r.summary.startswith("over 2 seeds, of ")
    got = list(zip(r.claims["claim"], r.claims["seed"], r.claims["verdict"]))
    assert got == [(c["text"], s, m) for c in want["claims"]
                   for s, m in zip(want["seeds"], c["marks"])]
    assert r.claims.columns == ["file", "claim", "seed", "verdict"]
    assert r.agreement.columns == ["file", "metric", "seed", "values", "within_25",
                                   "rank_correlation"]
    assert r.values.columns == ["file", "point", "metric", "paper", "seed", "ours", "within"]
    got = list(zip(r.values["point"], r.values["seed"], r.values["ours"], r.values["within"]))
    assert got == [(v["point"], s, o, w) for v in want["values"]
                   for s, o, w in zip(want["seeds"], v["ours"], v["within"])]
    assert len(got) == 2 * len(want["values"]) > 0
    # Each seed's own report is the one `seed=` writes.
    one = smpsched.reproduce("black90", scale=0.1, seed=2, reports=tmp_path / "one",
                             progress=False)
    assert (Path(one.report).read_text()
            == (tmp_path / "py" / "black90-scale-0.1-seed-2.md").read_text())
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("black90", seeds=[3], progress=False)
    assert e.value.field == "seeds"
    with pytest.raises(ValueError):
        smpsched.reproduce("black90", seed=1, seeds=[1, 2], progress=False)


def test_reproduce_with_settings_and_across_values_is_the_commands(cli, tmp_path):
    cli("reproduce", "black90", "--scale", "0.1", "--vary", "machine.clock_mhz=16,33",
        "--reports", str(tmp_path / "cli"))
    name = "black90-scale-0.1-vary-machine.clock_mhz-16,33"
    want = json.loads((tmp_path / "cli" / f"{name}.json").read_text())
    assert want["generated_by"] == "smpsched reproduce black90 --scale 0.1 --vary machine.clock_mhz=16,33"
    r = smpsched.reproduce("black90", scale=0.1, vary=("machine.clock_mhz", [16, 33]),
                           reports=tmp_path / "py", progress=False)
    assert isinstance(r, smpsched.VaryReproduction)
    assert (r.path, r.paths, r.settings) == ("machine.clock_mhz", ["machine.clock_mhz"],
                                             ["16", "33"])
    assert Path(r.report).name == f"{name}.md"
    assert Path(r.report).read_text() == (tmp_path / "cli" / f"{name}.md").read_text()
    assert r.summary.startswith("over 2 values of machine.clock_mhz, of ")
    assert r.claims.columns == ["file", "claim", "value", "verdict"]
    got = list(zip(r.claims["claim"], r.claims["value"], r.claims["verdict"]))
    assert got == [(c["text"], v, m) for c in want["claims"]
                   for v, m in zip(["16", "33"], c["marks"])]
    assert r.values.columns == ["file", "point", "metric", "paper", "value", "ours", "within"]
    # Each value's report is the one `set=` writes, and says what was set.
    one = smpsched.reproduce("black90", scale=0.1, set={"machine.clock_mhz": 33},
                             reports=tmp_path / "one", progress=False)
    assert Path(one.report).name == "black90-scale-0.1-set-machine.clock_mhz-33.md"
    text = Path(one.report).read_text()
    assert text == (tmp_path / "py" / Path(one.report).name).read_text()
    assert "`machine.clock_mhz = 33`" in text
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("black90", scale=0.1, set={"machine.clock_mhzz": 33}, progress=False)
    assert "machine.clock_mhzz" in str(e.value)
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("black90", vary=("machine.clock_mhz", [16]), progress=False)
    assert e.value.field == "vary"
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("black90", set={"seed": 2}, progress=False)
    assert e.value.field == "set"
    with pytest.raises(ValueError):
        smpsched.reproduce("black90", seeds=[1, 2], vary=("machine.clock_mhz", [16, 33]),
                           progress=False)


# The command's tests' tiny reproduction (paper `tiny`: two points, one value, one claim).
TINY = "crates/cli/tests/common/tiny.toml"


def test_vary_over_several_paths_is_the_commands_grid(cli, root, tmp_path):
    (tmp_path / "exp" / "tiny").mkdir(parents=True)
    (tmp_path / "exp" / "tiny" / "t.toml").write_text((root / TINY).read_text())
    cli("reproduce", "tiny", "--experiments", str(tmp_path / "exp"), "--vary",
        "workload.0.syncs=50,80", "--vary", "workload.0.threads=3,4",
        "--reports", str(tmp_path / "cli"))
    name = "tiny-vary-workload.0.syncs-50,80-workload.0.threads-3,4"
    r = smpsched.reproduce("tiny", experiments=tmp_path / "exp", reports=tmp_path / "py",
                           vary=[("workload.0.syncs", [50, 80]), ("workload.0.threads", [3, 4])],
                           progress=False)
    assert isinstance(r, smpsched.VaryReproduction)
    assert r.path == "workload.0.syncs, workload.0.threads"
    assert r.paths == ["workload.0.syncs", "workload.0.threads"]
    assert r.settings == ["50, 3", "50, 4", "80, 3", "80, 4"]
    assert Path(r.report).name == f"{name}.md"
    assert Path(r.report).read_text() == (tmp_path / "cli" / f"{name}.md").read_text()
    assert list(r.values["value"]) == r.settings
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("tiny", experiments=tmp_path / "exp", progress=False,
                           vary=[("workload.0.syncs", [50, 80]), ("workload.0", [1, 2])])
    assert e.value.field == "vary" and "set the same value" in str(e.value)


def test_only_some_files_is_the_commands(cli, root, tmp_path):
    tiny = (root / TINY).read_text()
    (tmp_path / "exp" / "tiny").mkdir(parents=True)
    (tmp_path / "exp" / "tiny" / "t.toml").write_text(tiny)
    (tmp_path / "exp" / "tiny" / "u.toml").write_text(
        tiny.replace('name = "tiny"', 'name = "tiny-u"').replace("syncs = 50", "syncs = 80"))
    cli("reproduce", "tiny", "--only", "u", "--experiments", str(tmp_path / "exp"),
        "--reports", str(tmp_path / "cli"))
    r = smpsched.reproduce("tiny", only="u", experiments=tmp_path / "exp",
                           reports=tmp_path / "py", progress=False)
    assert Path(r.report).name == "tiny-only-u.md"
    assert Path(r.report).read_text() == (tmp_path / "cli" / "tiny-only-u.md").read_text()
    assert set(r.values["file"]) == {"u.toml"}
    both = smpsched.reproduce("tiny", only=["u", "t"], experiments=tmp_path / "exp",
                              reports=tmp_path / "py", progress=False)
    assert Path(both.report).name == "tiny-only-t,u.md"
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("tiny", only="v", experiments=tmp_path / "exp", progress=False)
    assert "only" in e.value.field and "t, u" in str(e.value)


def test_reproduce_bad_input():
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("nosuchpaper", progress=False)
    assert "nosuchpaper" in str(e.value)
    with pytest.raises(smpsched.ExperimentError) as e:
        smpsched.reproduce("black90", scale=0, progress=False)
    assert e.value.field == "scale"


def test_catalogs_match_the_listing(cli):
    listing = cli("list").stdout
    for rows in (smpsched.policies(), smpsched.workloads(), smpsched.presets()):
        assert rows
        for row in rows:
            assert row["name"] in listing and row["summary"]
    rr = next(p for p in smpsched.policies() if p["name"] == "round-robin")
    assert all({"name", "default", "doc"} <= set(p) for p in rr["params"])
    syn = next(w for w in smpsched.workloads() if w["name"] == "synthetic")
    assert "threads" in [p["name"] for p in syn["params"]]
    tango = next(p for p in smpsched.presets() if p["name"] == "tango-12")
    assert "processors" in tango["fields"]
