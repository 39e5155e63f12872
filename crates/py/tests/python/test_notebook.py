"""The notebook example runs end to end (a sweep, a plot, two policies compared on their jobs),
and every frame converts to pandas with its columns and rows."""

import os
import subprocess
import sys

import smpsched
from test_run import small


def test_the_notebook_example_runs_and_draws_its_plot(root, tmp_path):
    out = tmp_path / "figures"
    svg = out / "notebook-sweep.svg"
    env = {**os.environ, "SMPSCHED_NOTEBOOK_OUT": str(out)}
    p = subprocess.run([sys.executable, "examples/notebook.py"], cwd=root, capture_output=True,
                       text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr
    assert svg.read_text().lstrip().startswith("<?xml")
    # The last cell compares the two policies over the interactive application's jobs.
    assert "round-robin" in p.stdout and "priority" in p.stdout and "p95_response" in p.stdout


def test_every_frame_converts_to_pandas():
    r = smpsched.run(small(), progress=False)
    for name in ("runs", "processors", "apps", "jobs"):
        frame = getattr(r, name)
        pd = frame.to_pandas()
        assert list(pd.columns) == frame.columns, name
        assert len(pd) == frame.height, name
    assert r.jobs.to_pandas()["response"].sum() == r.jobs["response"].sum()
