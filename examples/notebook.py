# %% [markdown]
# # smpsched from a notebook: a sweep, a plot, two policies compared
#
# A percent-format notebook (open it in Jupyter with jupytext, in VS Code, or run it with
# `python examples/notebook.py` from the repository root). Needs the package
# (`pip install ./crates/py`) and matplotlib.
#
# The experiment is built in Python as a dict with the shape of an experiment file
# (docs/experiment-files.md): a compute-bound parallel application and an interactive one
# multiprogrammed on a Tango-like machine. We sweep the number of processors ourselves, under
# two kernel policies, and compare where the machine's time goes.

# %%
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # remove in Jupyter to draw inline
import matplotlib.pyplot as plt
import polars as pl

import smpsched

print([p["name"] for p in smpsched.policies()])


def experiment(processors: int, policy: str) -> dict:
    return {
        "name": f"mix-{policy}-{processors}",
        "seed": 1,
        "repetitions": 3,
        "machine": {"preset": "tango-12", "processors": processors},
        "scheduler": {"policy": policy},
        "workload": [
            {"kind": "synthetic", "name": "compute", "threads": 8, "bursts": 40,
             "compute": {"dist": "exponential", "mean": 400000},
             "block": {"dist": "fixed", "value": 20000}},
            {"kind": "synthetic", "name": "interactive", "threads": 8, "bursts": 100,
             "compute": {"dist": "uniform", "min": 10000, "max": 50000},
             "block": {"dist": "exponential", "mean": 300000}},
        ],
    }


# %% [markdown]
# ## The sweep: processors 2 to 12 under round-robin and priority scheduling

# %%
frames = []
for policy in ["round-robin", "priority"]:
    for processors in range(2, 13, 2):
        r = smpsched.run(experiment(processors, policy), progress=False)
        frames.append(r.apps.with_columns(pl.lit(policy).alias("policy"),
                                          pl.lit(processors).alias("processors")))
apps = pl.concat(frames)
summary = (apps.group_by("policy", "processors", "app")
           .agg(pl.col("utilization").mean(), pl.col("completion_cycles").mean())
           .sort("policy", "app", "processors"))
print(summary)

# %% [markdown]
# ## Plot: each application's completion time against the processors it shares

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for (policy, app), g in summary.group_by("policy", "app", maintain_order=True):
    ax.plot(g["processors"], g["completion_cycles"] / 1e6, marker="o", label=f"{app}, {policy}")
ax.set_xlabel("processors")
ax.set_ylabel("completion (millions of cycles)")
ax.legend()
# The plot goes to target/ (or $SMPSCHED_NOTEBOOK_OUT), made if absent.
out = Path(os.environ.get("SMPSCHED_NOTEBOOK_OUT", "target"))
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "notebook-sweep.svg")

# %% [markdown]
# ## Two policies compared on the interactive application's jobs

# %%
jobs = pl.concat([
    smpsched.run(experiment(4, p), progress=False).jobs.with_columns(pl.lit(p).alias("policy"))
    for p in ["round-robin", "priority"]
])
# One row per job: the whole distribution of response times, not only its summary.
print(jobs.filter(pl.col("app") == "interactive")
      .group_by("policy", maintain_order=True)
      .agg(pl.col("response").mean().alias("mean_response"),
           pl.col("response").quantile(0.95, "nearest").alias("p95_response"),
           pl.col("wait").mean().alias("mean_wait")))
