#!/usr/bin/env python3
"""Write a periodic rt-app load (plain JSON, no comments: scx_simulator's serde_json reads no comments).

    gen-periodic.py TASKS OUT.json [--run US] [--period US] [--duration S] [--mode timer|sleep]

Each task is its own entry (t0000, t0001, ...), so both simulators report per-task figures
under the same names, and each has its own timer ("ref": the task's name): rt-app's timers are
shared by the threads that name the same ref, so one ref per task keeps rt-app's meaning too.

--mode timer (default): "run" then "timer" with "period": rt-app's periodic task. smpsched keeps
  the period (the timer's next expiry is the last one plus the period); scx_simulator reads the
  timer as a sleep of the whole period (rtapp.rs: "approximate as sleep"), so its tasks run every
  run + wait + period, not every period.
--mode sleep: "run" then "sleep" of period - run: both simulators read it the same way, the
  load to compare counts on.
"""
import argparse
import json

p = argparse.ArgumentParser()
p.add_argument("tasks", type=int)
p.add_argument("out")
p.add_argument("--run", type=int, default=500, help="run per period, us (default 500)")
p.add_argument("--period", type=int, default=10000, help="period, us (default 10000)")
p.add_argument("--duration", type=int, default=10, help="seconds (default 10)")
p.add_argument("--mode", choices=["timer", "sleep"], default="timer")
a = p.parse_args()

tasks = {}
for i in range(a.tasks):
    name = f"t{i:04d}"
    t = {"loop": -1, "run": a.run}
    if a.mode == "timer":
        t["timer"] = {"ref": name, "period": a.period}
    else:
        t["sleep"] = a.period - a.run
    tasks[name] = t

doc = {
    "global": {"duration": a.duration, "calibration": "CPU0", "default_policy": "SCHED_OTHER"},
    "tasks": tasks,
}
with open(a.out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
