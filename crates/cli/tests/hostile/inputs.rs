//! The hostile-input suite's inputs: junk values a careless or hostile file or command line might
//! hold, and the small experiments whose every field the suite replaces with them.

/// Values a careless or hostile file or command line might hold, as TOML.
pub const JUNK: &[&str] = &[
    "-1",
    "0",
    "1",
    "1e30",
    "nan",
    "-inf",
    "18446744073709551615",
    "9223372036854775807",
    "\"\"",
    "\"*\"",
    "\"x\"",
    "[]",
    "{}",
    "true",
];

/// Small experiments, one per workload and policy family, each bounded so a valid run is quick.
pub const BASES: &[(&str, &str)] = &[
    (
        "synthetic",
        r#"name = "h-synthetic"
event_limit = 20000
[machine]
preset = "tango-12"
processors = 2
slice_cycles = 50000
[scheduler]
policy = "round-robin"
quantum = 40000
[[workload]]
kind = "synthetic"
name = "a"
threads = 3
bursts = 2
compute = { dist = "exponential", mean = 20000 }
block = { dist = "fixed", value = 5000 }
[sweep]
"machine.processors" = [1, 2]
"#,
    ),
    (
        "arrivals",
        r#"name = "h-arrivals"
event_limit = 20000
seed = 3
repetitions = 2
[machine]
preset = "tango-12"
processors = 2
[scheduler]
policy = "batch"
[[workload]]
kind = "arrivals"
jobs = 20
interarrival = { dist = "exponential", mean = 10000 }
service = { dist = "uniform", min = 1000, max = 9000 }
"#,
    ),
    (
        "psets",
        r#"name = "h-psets"
event_limit = 20000
[machine]
preset = "multimax"
processors = 4
[scheduler]
policy = "mach"
create_set_us = 2250
[[workload]]
kind = "psets"
rounds = 2
"#,
    ),
    (
        "gang-server",
        r#"name = "h-gang-server"
event_limit = 20000
[machine]
preset = "multimax"
processors = 8
[scheduler]
policy = "mach"
[[workload]]
kind = "gang-server"
clients = 2
processors = 2
hold_ms = 1
spacing_ms = 1
"#,
    ),
    (
        "parallel",
        r#"name = "h-parallel"
event_limit = 20000
[machine]
preset = "multimax"
processors = 4
[scheduler]
policy = "mach"
usage_per_level_ms = 100
[[workload]]
kind = "parallel"
threads = 2
phases = 3
phase_cycles = 2000
dedicated = true
[[workload]]
kind = "synthetic"
name = "background"
threads = 2
bursts = 2
compute = { dist = "fixed", value = 3000 }
"#,
    ),
    (
        "taskqueue",
        r#"name = "h-taskqueue"
event_limit = 20000
[machine]
preset = "tango-12"
processors = 4
[scheduler]
policy = "process-control"
c = 0.5
[[workload]]
kind = "taskqueue"
workers = 4
tasks = 8
task = { dist = "fixed", value = 3000 }
"#,
    ),
    (
        "pingpong",
        r#"name = "h-pingpong"
event_limit = 20000
[machine]
preset = "multimax"
processors = 1
[scheduler]
policy = "mach"
[[workload]]
kind = "pingpong"
threads = 3
syncs = 4
hint = "handoff"
"#,
    ),
    (
        "gang",
        r#"name = "h-gang"
event_limit = 20000
[machine]
preset = "tango-12"
processors = 2
[scheduler]
policy = "gang"
slice_ms = 1
fill = true
[[workload]]
kind = "synthetic"
name = "a"
threads = 2
bursts = 2
compute = { dist = "fixed", value = 3000 }
[[workload]]
kind = "synthetic"
name = "b"
threads = 2
bursts = 2
compute = { dist = "fixed", value = 3000 }
"#,
    ),
    (
        "memory",
        r#"name = "h-memory"
event_limit = 20000
[machine]
preset = "tango-12"
processors = 2
[machine.memory]
cache_bytes = 4096
[scheduler]
policy = "affinity"
c = 0.5
[[workload]]
kind = "sweep"
threads = 2
bytes = 8192
stride = 16
passes = 2
"#,
    ),
    (
        "per-core",
        r#"name = "h-per-core"
event_limit = 20000
[machine]
preset = "rpi3"
[scheduler]
policy = "per-core"
pull = true
balance_ms = 1
push = true
push_threshold = 2
[[workload]]
kind = "synthetic"
threads = 6
bursts = 2
compute = { dist = "fixed", value = 3000 }
"#,
    ),
    (
        "priority",
        r#"name = "h-priority"
event_limit = 20000
until = "a"
[machine]
preset = "tango-12"
processors = 2
[scheduler]
policy = "priority"
decay = 0.66
decay_interval = 100000
[[workload]]
kind = "synthetic"
name = "a"
threads = 2
bursts = 2
compute = { dist = "fixed", value = 3000 }
[[point]]
name = "p"
set = { "machine.processors" = 1 }
"#,
    ),
    (
        "weibel-pool",
        r#"name = "h-weibel-pool"
event_limit = 20000
[machine]
preset = "rpi3"
[machine.memory.l2]
cache_bytes = 131072
[scheduler]
policy = "per-core"
pull = true
pull_ms = 1
[[workload]]
kind = "weibel-pool"
items = 8
workers = 2
matrices = 2
matrix_bytes = 1024
passes = 2
alu = 1.5
"#,
    ),
    (
        "weibel-mix",
        r#"name = "h-weibel-mix"
event_limit = 20000
[machine]
preset = "rpi3"
[scheduler]
policy = "per-core"
global = true
pull = false
[[workload]]
kind = "weibel-mix"
tasks = 6
data_bytes = 1024
short_passes = 2
alu = 1.5
order = "early-exit"
"#,
    ),
    (
        "dibella",
        r#"name = "h-dibella"
event_limit = 20000
[machine]
preset = "sequent-symmetry"
processors = 6
[scheduler]
policy = "batch"
[[workload]]
kind = "dibella"
schedulers = 2
clients = 3
requests = 30
scheduler = "sequential"
client = "primary-random"
load = "uniform"
"#,
    ),
];
