"""Data frames of an experiment's results (the ``results.json`` of ``smpsched run``, and its
``jobs.csv`` with ``--per-job``): one row per run, per processor of a run, per application of
a run, and per job.

Column names are those of ``results.csv``, ``results.json`` and ``jobs.csv``
(docs/experiment-files.md, "Outputs"); times are in simulated cycles, shares and rates are
fractions (0 to 1), not %.
"""

from __future__ import annotations

import io
import json
from typing import Any, Dict, List

SPLIT = ["useful", "stall", "spin", "idle", "switch", "kernel"]
"""Where processor time went (Gupta et al. 1991's breakdown), in cycles."""

RUN_COLUMNS = ["point", "repetition", "seed", "elapsed_cycles", "events", *SPLIT,
               "utilization", "stopped"]
"""The columns of ``Result.runs`` (then one column per swept parameter, e.g.
``scheduler.policy``)."""

PROCESSOR_COLUMNS = ["point", "repetition", "seed", "processor", *SPLIT]
"""The columns of ``Result.processors``."""

APP_COLUMNS = ["point", "repetition", "seed", "app", "threads", "completion_cycles", *SPLIT,
               "machine_share", "utilization", "context_switches",
               "switches_per_slice_per_proc", "migrations", "same_processor_rate",
               "median_intervening", "refs", "misses", "miss_rate", "invalidations", "remote",
               "jobs", "mean_response", "p50_response", "p95_response", "p99_response",
               "max_response", "mean_wait", "mean_slowdown"]
"""The columns of ``Result.apps`` (then the swept parameters): its time split, scheduling and
memory measures, and the summary of its jobs (every thread a job, from arrival to exit)."""

JOB_COLUMNS = ["point", "repetition", "seed", "app", "job", "arrived", "first_run", "exited",
               "held", "response", "wait", "slowdown", "stopped"]
"""The columns of ``Result.jobs``, one row per job that exited (then the swept parameters): its
thread's rank among its application's threads in creation order (from 0), when it arrived,
first ran and exited, the processor time it held, its response (exit - arrival), wait (first
run - arrival) and slowdown (response / held)."""

_JOB_TYPES = {"point": "str", "repetition": "int", "seed": "uint", "app": "str", "job": "int",
              "arrived": "int", "first_run": "int", "exited": "int", "held": "int",
              "response": "int", "wait": "int", "slowdown": "float", "stopped": "str"}


def _frame(rows: List[Dict[str, Any]], columns: List[str], params: List[str]) -> Any:
    import polars as pl

    names = columns + [p for p in params if p not in columns]
    data = {c: [r.get(c) for r in rows] for c in names}
    # Seeds are unsigned 64-bit (a repetition's seed is derived from the base seed), so every
    # frame types them alike and they join.
    schema = {"seed": pl.UInt64} if "seed" in names else None
    frame = pl.DataFrame(data, strict=False, schema_overrides=schema)
    # Text even when no run stopped (an all-null column would otherwise have no type).
    if "stopped" in frame.columns:
        frame = frame.with_columns(pl.col("stopped").cast(pl.Utf8))
    return frame


def params_of(doc: Dict[str, Any]) -> List[str]:
    """The swept parameters' names over a ``results.json`` document's runs, first seen first."""
    seen: List[str] = []
    for r in doc["runs"]:
        for k in r["params"]:
            if k not in seen:
                seen.append(k)
    return seen


def frames(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The four frames of a parsed ``results.json`` document, by name."""
    params = params_of(doc)
    runs, procs, apps, jobs = [], [], [], []
    for r in doc["runs"]:
        head = {"point": r["point"], "repetition": r["repetition"], "seed": r["seed"],
                **r["params"]}
        stopped = r.get("stopped")
        runs.append({**head, "elapsed_cycles": r["elapsed_cycles"], "events": r["events"],
                     **r["total"], "utilization": r["utilization"],
                     "stopped": _stopped_text(stopped)})
        for i, p in enumerate(r["processors"]):
            procs.append({**head, "processor": i, **p})
        for a in r["apps"]:
            row = {**head, "app": a["name"], **a, **a["time"], **a["jobs"]}
            # An application still running at the run's end (``until``, a bound) has no
            # completion time, and none of its jobs' times when none of them exited.
            if a.get("unfinished"):
                row["completion_cycles"] = None
            if a["jobs"]["jobs"] == 0:
                row.update({k: None for k in a["jobs"] if k != "jobs"})
            apps.append(row)
    return {
        "runs": _frame(runs, RUN_COLUMNS, params),
        "processors": _frame(procs, PROCESSOR_COLUMNS, []),
        "apps": _frame(apps, APP_COLUMNS, params),
    }


def _stopped_text(stopped: Any) -> Any:
    """A run's ``stopped`` as ``results.csv`` writes it (the line ``results.json`` holds as its
    ``message``; results written before it had one give their object as JSON)."""
    if stopped is None:
        return None
    return stopped.get("message", json.dumps(stopped))


def job_frame(csv_text: str, params: List[str]) -> Any:
    """The ``jobs.csv`` text as a frame: ``JOB_COLUMNS`` then the swept parameters (text, as in
    the other frames)."""
    import polars as pl

    kinds = {"str": pl.Utf8, "int": pl.Int64, "uint": pl.UInt64, "float": pl.Float64}
    schema = {c: kinds[t] for c, t in _JOB_TYPES.items()}
    schema.update({p: pl.Utf8 for p in params})
    frame = pl.read_csv(io.StringIO(csv_text), schema_overrides=schema)
    return frame.select(JOB_COLUMNS + [p for p in params if p not in JOB_COLUMNS])
