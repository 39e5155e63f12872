"""smpsched from Python: run experiments and reproductions of the shared-memory scheduling
papers, and get their results as data frames (polars; ``.to_pandas()`` where pandas is
installed).

>>> import smpsched
>>> r = smpsched.run("experiments/quickstart.toml", seed=1)
>>> r.runs.group_by("scheduler.policy").agg(pl.col("utilization").mean())

Everything goes through the same library as the ``smpsched`` command (smpsched-lab), so the
same experiment and seed give the same numbers: ``Result.to_json()`` is byte for byte the
command's ``results.json``.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _args, _native
from ._frames import (APP_COLUMNS, JOB_COLUMNS, PROCESSOR_COLUMNS, RUN_COLUMNS, frames,
                      job_frame, params_of)
from ._progress import bar
from ._toml import experiment_toml

__all__ = [
    "ExperimentError", "Result", "Reproduction", "SeedsReproduction", "VaryReproduction", "run",
    "reproduce",
    "policies", "workloads",
    "presets", "experiment_toml", "RUN_COLUMNS", "PROCESSOR_COLUMNS", "APP_COLUMNS",
    "JOB_COLUMNS",
]
__version__: str = _native.__version__

ExperimentError = _native.ExperimentError
ExperimentError.__module__ = "smpsched"

Experiment = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class Result:
    """The runs of one experiment: every point of its sweep, every repetition.

    ``runs``, ``processors``, ``apps`` and ``jobs`` are polars data frames (built on first
    use); ``to_json()`` is the command's ``results.json`` and ``jobs_csv()`` its ``jobs.csv``
    (``smpsched run --per-job``); ``stopped`` says which runs reached a bound
    (``time_limit_cycles``, ``event_limit``, ``reference_limit``) or could not go on (a
    deadlock, a livelock), each kept with what it measured up to then, or is None.
    """

    def __init__(self, json_text: str, stopped: Optional[str],
                 jobs_csv: Optional[str] = None) -> None:
        self._json = json_text
        self._jobs_csv = jobs_csv
        self._doc: Optional[Dict[str, Any]] = None
        self._frames: Optional[Dict[str, Any]] = None
        self._jobs: Any = None
        self.stopped: Optional[str] = stopped

    @property
    def data(self) -> Dict[str, Any]:
        """The parsed ``results.json`` document."""
        if self._doc is None:
            self._doc = json.loads(self._json)
        return self._doc

    @property
    def experiment(self) -> str:
        """The experiment's name."""
        return self.data["experiment"]

    @property
    def seed(self) -> int:
        """The base seed the runs used."""
        return self.data["seed"]

    def _frame(self, name: str) -> Any:
        if self._frames is None:
            self._frames = frames(self.data)
        return self._frames[name]

    @property
    def runs(self) -> Any:
        """One row per run: ``RUN_COLUMNS`` then the swept parameters."""
        return self._frame("runs")

    @property
    def processors(self) -> Any:
        """One row per processor of each run: ``PROCESSOR_COLUMNS``."""
        return self._frame("processors")

    @property
    def apps(self) -> Any:
        """One row per application of each run: ``APP_COLUMNS`` then the swept parameters."""
        return self._frame("apps")

    @property
    def jobs(self) -> Any:
        """One row per job that exited, of each run (every thread a job): ``JOB_COLUMNS`` then
        the swept parameters. Needs ``run(..., per_job=True)``, the default."""
        if self._jobs is None:
            self._jobs = job_frame(self.jobs_csv(), params_of(self.data))
        return self._jobs

    def to_json(self) -> str:
        """The command's ``results.json`` for this experiment and seed, byte for byte."""
        return self._json

    def jobs_csv(self) -> str:
        """The command's ``jobs.csv`` (``smpsched run --per-job``) for this experiment and seed,
        byte for byte; ``ValueError`` when the run was made with ``per_job=False``."""
        if self._jobs_csv is None:
            raise ValueError("this result kept no per-job rows: run it with per_job=True")
        return self._jobs_csv

    def __repr__(self) -> str:
        d = self.data
        return f"<smpsched.Result {d['experiment']!r} seed={d['seed']} runs={len(d['runs'])}>"


def _source(experiment: Experiment) -> "tuple[str, Optional[str]]":
    """(path for messages, text or None to read the path) of any accepted experiment form."""
    if isinstance(experiment, Mapping):
        return "<dict>", experiment_toml(experiment)
    if isinstance(experiment, os.PathLike):
        return os.fspath(experiment), None
    if isinstance(experiment, str):
        if not experiment:
            raise ValueError("experiment: expected a path, the text of an experiment file, or a "
                             "dict, got an empty string")
        if "\n" in experiment or ("=" in experiment and not Path(experiment).exists()):
            return "<string>", experiment
        return experiment, None
    raise TypeError("an experiment is a path, the text of an experiment file, or a dict")


def run(experiment: Experiment, seed: Optional[int] = None, jobs: Optional[int] = None,
        progress: bool = True, cluster: Any = None, per_job: bool = True,
        set: Optional[Dict[str, Any]] = None) -> Result:
    """Runs every point and repetition of an experiment and returns its results.

    ``experiment``: a path to an experiment file, its TOML text, or a dict of the same shape
    (see ``experiment_toml``). ``seed`` overrides the file's base seed; ``jobs`` is the number
    of runs at once (None: one per core); ``progress`` shows a bar (tqdm where installed).
    ``per_job`` keeps every job's times for ``Result.jobs`` (40 bytes a job while the runs
    are held; turn it off for open workloads with many millions of jobs).
    The engine runs with the GIL released; Ctrl-C raises ``KeyboardInterrupt``. Bad input
    raises ``ExperimentError`` with ``file``, ``line`` and ``field``.

    ``set``: a dict of dotted paths and values (``{"machine.processors": 32}``) set over the
    experiment before its points are expanded, as ``smpsched run --set`` does: validated as if
    the file had written them, refused for a path its ``[sweep]`` or ``[[point]]`` sets, and
    listed under ``"settings"`` in ``Result.data`` (``to_json()``, as ``results.json``).

    ``cluster``: run every point and repetition as a task on a Ray cluster instead (its
    address, e.g. ``"ray://head:10001"`` or ``"127.0.0.1:6379"``, or ``True`` for
    ``RAY_ADDRESS`` or a local instance); needs ``pip install 'smpsched[ray]'`` here and on
    the workers. The results are byte-identical to a local run (see ``smpsched.cluster``).
    """
    path, text = _source(experiment)
    settings = _args.settings(set)
    seed = _args.whole("seed", seed)
    jobs = _args.whole("jobs", jobs)
    per_job = _args.flag("per_job", per_job)
    cluster = _args.cluster(cluster)
    cb = bar(_args.flag("progress", progress))
    try:
        if cluster is None or cluster is False:
            out = _native.run_experiment(path, text, seed, 0 if jobs is None else jobs, cb,
                                         per_job, settings)
        else:
            out = _run_on_cluster(path, text, seed, jobs, cluster, cb, per_job, settings)
    finally:
        if cb is not None:
            cb.close()
    json_text, stopped, jobs_csv, notes = out
    for note in notes:
        warnings.warn(note.removeprefix("note: "), FutureWarning, stacklevel=2)
    if stopped is not None:
        warnings.warn(stopped, RuntimeWarning, stacklevel=2)
    return Result(json_text, stopped, jobs_csv)


def _run_on_cluster(path: str, text: Optional[str], seed: Optional[int], jobs: Optional[int],
                    address: Any, cb: Any, per_job: bool,
                    settings: List[str]) -> "tuple[str, Optional[str], Optional[str], List[str]]":
    """``run`` with its runs made on a Ray cluster, then merged here in plan order."""
    from . import cluster as _cluster

    bundle, tasks = _native.shard_plan(path, text, seed, per_job, settings,
                                       0 if jobs is None else jobs)
    shipped = []
    runs = _cluster.run_tasks([bundle], [(0, p, r) for p, r in tasks], address=address)
    for i, run_bytes, code, message in runs:
        p, r = tasks[i]
        shipped.append((p, r, run_bytes, code, message))
        if cb is not None:
            cb(len(shipped), len(tasks), "on the cluster")
    return _native.run_shipped(bundle, shipped, 0 if jobs is None else jobs, None)


class Reproduction:
    """A paper reproduced: ``claims`` (one row per claim with its verdict) and ``values``
    (one row per compared value with the paper's, its relative distance and tolerance) as data
    frames, ``summary`` the counts, ``report`` the path of the Markdown report written."""

    def __init__(self, json_text: str) -> None:
        self.data: Dict[str, Any] = json.loads(json_text)
        self.paper: str = self.data["paper"]
        self.summary: Dict[str, int] = self.data["summary"]
        self.failed_claims: int = self.data["failed_claims"]
        self.report: str = self.data["latest"]
        self.run_dir: str = self.data["run_dir"]

    @property
    def claims(self) -> Any:
        """Columns file, title, claim, verdict (holds, fails, known_difference, error),
        detail, reason."""
        import polars as pl

        cols = ["file", "title", "claim", "verdict", "detail", "reason"]
        rows = self.data["claims"]
        return pl.DataFrame({c: [r[c] for r in rows] for c in cols},
                            schema={c: pl.Utf8 for c in cols})

    @property
    def values(self) -> Any:
        """Columns file, point, metric, ours, paper, distance (|ours - paper| / |paper|),
        tolerance, within, note."""
        import polars as pl

        schema = {"file": pl.Utf8, "point": pl.Utf8, "metric": pl.Utf8, "ours": pl.Float64,
                  "paper": pl.Float64, "distance": pl.Float64, "tolerance": pl.Utf8,
                  "within": pl.Boolean, "note": pl.Utf8}
        rows = self.data["values"]
        return pl.DataFrame({c: [r[c] for r in rows] for c in schema}, schema=schema)

    def __repr__(self) -> str:
        s = self.summary
        return (f"<smpsched.Reproduction {self.paper}: {s['holds']} of {s['claims']} claims "
                f"hold, {s['known_differences']} known differences, {s['fails']} fail>")


class SeedsReproduction:
    """A paper reproduced from several base seeds: ``claims`` (one row per claim and seed with
    its verdict), ``values`` (one row per compared value and seed) and ``agreement`` (one row
    per measure and seed) as data frames, ``seeds``,
    ``summary`` (a line: how many claims hold at every seed, how many turn on the seed) and
    ``report`` the path of the Markdown report across the seeds."""

    #: The frames' column naming each run, and its type.
    _column = "seed"

    def __init__(self, json_text: str) -> None:
        self.data: Dict[str, Any] = json.loads(json_text)
        self.paper: str = self.data["paper_id"]
        self.seeds: List[int] = self.data["seeds"]
        self.summary: str = self.data["summary_line"]
        self.report: str = self.data["latest"]

    def _runs(self) -> List[Any]:
        return self.seeds

    def _dtype(self) -> Any:
        import polars as pl

        return pl.Int64

    @property
    def claims(self) -> Any:
        """Columns file, claim, seed (value), verdict (holds, fails, known_difference,
        not_evaluated)."""
        import polars as pl

        rows = [(c["file"], c["text"], run, mark) for c in self.data["claims"]
                for run, mark in zip(self._runs(), c["marks"])]
        return pl.DataFrame(rows, schema={"file": pl.Utf8, "claim": pl.Utf8,
                                          self._column: self._dtype(), "verdict": pl.Utf8},
                            orient="row")

    @property
    def agreement(self) -> Any:
        """Columns file, metric, seed (value), values, within_25, rank_correlation (null where
        the measure is summed over several files)."""
        import polars as pl

        rows = [(a["file"], a["metric"], run, a["values"], w, r)
                for a in self.data["agreement"]
                for run, w, r in zip(self._runs(), a["within_25"], a["rank_correlation"])]
        schema = {"file": pl.Utf8, "metric": pl.Utf8, self._column: self._dtype(),
                  "values": pl.Int64, "within_25": pl.Int64, "rank_correlation": pl.Float64}
        return pl.DataFrame(rows, schema=schema, orient="row")

    @property
    def values(self) -> Any:
        """Columns file, point, metric, paper, seed (value), ours, within (within the file's
        tolerance): a row per value compared with the paper's and seed (value)."""
        import polars as pl

        rows = [(v["file"], v["point"], v["metric"], v["paper"], run, o, w)
                for v in self.data["values"]
                for run, o, w in zip(self._runs(), v["ours"], v["within"])]
        schema = {"file": pl.Utf8, "point": pl.Utf8, "metric": pl.Utf8, "paper": pl.Float64,
                  self._column: self._dtype(), "ours": pl.Float64, "within": pl.Boolean}
        return pl.DataFrame(rows, schema=schema, orient="row")

    def __repr__(self) -> str:
        return f"<smpsched.SeedsReproduction {self.paper}: {self.summary}>"


class VaryReproduction(SeedsReproduction):
    """A paper reproduced at several values of one setting (``vary``), or at every combination
    of the values of several: as a ``SeedsReproduction``, with ``path`` the setting (several:
    ``"a, b"``, and ``paths`` each of them), ``settings`` its values as written (a
    combination's: ``"0.02, 0.3"``; in the frames, column ``value`` in place of ``seed``) and
    ``report`` the Markdown report across them."""

    _column = "value"

    def __init__(self, json_text: str) -> None:
        super().__init__(json_text)
        self.path: str = self.data["varied"]["path"]
        #: Every path varied, in order (one unless ``vary`` was a list of pairs).
        self.paths: List[str] = self.path.split(", ")
        self.settings: List[str] = self.data["varied"]["values"]

    def _runs(self) -> List[Any]:
        return self.settings

    def _dtype(self) -> Any:
        import polars as pl

        return pl.Utf8

    def __repr__(self) -> str:
        return f"<smpsched.VaryReproduction {self.paper}: {self.summary}>"


def reproduce(paper: str, scale: float = 1.0, jobs: Optional[int] = None, progress: bool = True,
              experiments: "Union[str, os.PathLike[str]]" = "experiments",
              reports: "Union[str, os.PathLike[str]]" = "reports",
              seed: Optional[int] = None,
              seeds: Optional[List[int]] = None,
              set: Optional[Dict[str, Any]] = None,
              vary: "Union[None, Tuple[str, List[Any]], List[Tuple[str, List[Any]]]]" = None,
              only: "Union[None, str, List[str]]" = None,
              cluster: Any = None,
              ) -> "Union[Reproduction, SeedsReproduction, VaryReproduction]":
    """Reproduces a paper's tables and figures as ``smpsched reproduce PAPER`` does (the same
    report written under ``reports``) and returns its claims and values as data frames.

    ``scale`` multiplies problem sizes and run lengths (0.1 for a quick look); ``seed``, when
    given, is every file's base seed in place of its own (``--seed``). ``seeds``, a list of
    two or more, reproduces the paper from each (``--seeds``) and returns a
    ``SeedsReproduction``: each claim's verdict at each seed. ``set``, a dict of dotted paths
    and values (``{"workload.0.random_ms": 0.05}``), sets each value over every file
    (``--set``); ``vary``, a path and two or more values (``("workload.0.random_ms", [0.02,
    0.09])``), reproduces the paper at each value (``--vary``) and returns a
    ``VaryReproduction``; a list of such pairs reproduces it at every combination of their
    values (``--vary`` once per path; at most 100 reproductions). ``only``, a file's name
    without ``.toml`` or a list of them (``"table4"``), reproduces those files of the paper
    alone (``--only``). Raises ``ExperimentError`` for an unknown paper or file, a bad file,
    bad seeds or a bad setting.

    ``cluster``: make every run on a Ray cluster instead, as ``run``'s ``cluster`` does and as
    ``smpsched reproduce --ray`` does (its address, or ``True`` for ``RAY_ADDRESS`` or a local
    instance); the reports written are byte-identical to a local reproduction's.
    """
    if seed is not None and seeds is not None:
        raise ValueError("give seed or seeds, not both")
    if seeds is not None and vary is not None:
        raise ValueError("give seeds or vary, not both")
    if not isinstance(paper, str):
        raise TypeError(f"paper: expected a paper's name, got {type(paper).__name__} {paper!r}")
    settings = _args.settings(set)
    files = _args.names("only", only)
    seed = _args.whole("seed", seed)
    scale = _args.number("scale", scale)
    experiments = _args.folder("experiments", experiments)
    reports = _args.folder("reports", reports)
    jobs = _args.whole("jobs", jobs) or 0
    seed_list = None if seeds is None else _args.seeds(seeds)
    texts = None if vary is None else _args.vary(vary)
    remote = _remote(_args.cluster(cluster))
    cb = bar(_args.flag("progress", progress))
    try:
        if seed_list is not None:
            out = _native.reproduce_seeds(paper, seed_list, scale, jobs, experiments, reports,
                                          cb, settings, files, remote)
        elif texts is not None:
            out = _native.reproduce_vary(paper, texts, scale, jobs, experiments, reports, cb,
                                         seed, settings, files, remote)
        else:
            out = _native.reproduce_paper(paper, scale, jobs, experiments, reports, cb, seed,
                                          settings, files, remote)
    finally:
        if cb is not None:
            cb.close()
    if seeds is not None:
        return SeedsReproduction(out)
    return VaryReproduction(out) if vary is not None else Reproduction(out)


def _remote(cluster: Any) -> Any:
    """What makes a reproduction's runs on ``cluster``: ``smpsched.cluster.run_tasks`` with
    its address bound, connected here first (so a cluster that cannot be reached fails before
    anything runs); ``None`` to run here."""
    if cluster is None or cluster is False:
        return None
    from . import cluster as _cluster

    _cluster.connect(cluster)
    return functools.partial(_cluster.run_tasks, address=cluster)


def policies() -> List[Dict[str, Any]]:
    """Every scheduling policy: name, summary, description, paper, params (name, default,
    doc), processor_sets."""
    return json.loads(_native.policies_json())


def workloads() -> List[Dict[str, Any]]:
    """Every workload kind: name, summary, description, paper, params (name, default, doc)."""
    return json.loads(_native.workloads_json())


def presets() -> List[Dict[str, Any]]:
    """Every machine preset: name, summary, fields (every machine field it sets)."""
    return json.loads(_native.presets_json())
