"""Data frames of an experiment's results (the ``results.json`` of ``smpsched run``): one row
per run, per processor of a run, per application of a run, and per application's jobs.

Column names are those of ``results.csv`` and ``results.json`` (docs/experiment-files.md,
"Outputs"); times are in simulated cycles, shares and rates are fractions (0 to 1), not %.
"""

from __future__ import annotations

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
               "median_intervening", "refs", "misses", "miss_rate", "invalidations", "remote"]
"""The columns of ``Result.apps`` (then the swept parameters)."""

JOB_COLUMNS = ["point", "repetition", "seed", "app", "jobs", "mean_response", "p50_response",
               "p95_response", "p99_response", "max_response", "mean_wait", "mean_slowdown"]
"""The columns of ``Result.jobs``: each application's job measures (every thread a job, from
arrival to exit), one row per run and application (then the swept parameters)."""


def _frame(rows: List[Dict[str, Any]], columns: List[str], params: List[str]) -> Any:
    import polars as pl

    names = columns + [p for p in params if p not in columns]
    data = {c: [r.get(c) for r in rows] for c in names}
    frame = pl.DataFrame(data, strict=False)
    # Text even when no run stopped (an all-null column would otherwise have no type).
    if "stopped" in frame.columns:
        frame = frame.with_columns(pl.col("stopped").cast(pl.Utf8))
    return frame


def _params(doc: Dict[str, Any]) -> List[str]:
    seen: List[str] = []
    for r in doc["runs"]:
        for k in r["params"]:
            if k not in seen:
                seen.append(k)
    return seen


def frames(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The four frames of a parsed ``results.json`` document, by name."""
    params = _params(doc)
    runs, procs, apps, jobs = [], [], [], []
    for r in doc["runs"]:
        head = {"point": r["point"], "repetition": r["repetition"], "seed": r["seed"],
                **r["params"]}
        stopped = r.get("stopped")
        runs.append({**head, "elapsed_cycles": r["elapsed_cycles"], "events": r["events"],
                     **r["total"], "utilization": r["utilization"],
                     "stopped": None if stopped is None else json.dumps(stopped)})
        for i, p in enumerate(r["processors"]):
            procs.append({**head, "processor": i, **p})
        for a in r["apps"]:
            row = {**head, "app": a["name"], **a, **a["time"]}
            apps.append(row)
            jobs.append({**head, "app": a["name"], **a["jobs"]})
    return {
        "runs": _frame(runs, RUN_COLUMNS, params),
        "processors": _frame(procs, PROCESSOR_COLUMNS, []),
        "apps": _frame(apps, APP_COLUMNS, params),
        "jobs": _frame(jobs, JOB_COLUMNS, params),
    }
