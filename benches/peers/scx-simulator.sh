#!/usr/bin/env bash
# Side by side with scx_simulator (docs/performance.md, "Targets"): the same periodic rt-app
# files run by smpsched and by scx_simulator's `scxsim`, wall time, peak memory, dispatches and
# per-task runtime printed in one table. Building scx_simulator is its own step (README.md
# here), not CI's.
#
#   SCX_SIM=/work/scx-build/target/release/scxsim benches/peers/scx-simulator.sh
#
# Environment (all optional but SCX_SIM; without it the scx_simulator rows print n/a):
#   SCX_SIM      the built scxsim binary
#   SCX_SCHED    scx_simulator's scheduler (default simple)
#   SCX_ARGS     more scxsim flags (default --no-rbc: no scheduler overhead measured on this
#                host's PMU, so the counts do not depend on the machine; "" keeps scxsim's default)
#   SMPSCHED     the smpsched binary (default target/release/smpsched, built if missing)
#   SMP_POLICY   smpsched's policy (default scx-simple)
#   SMP_PRESET   smpsched's machine preset (default tango-12: 10 ms slice, 25 MHz; scx-simple's
#                slice is SCX_SLICE_DFL, 20 ms, whatever the preset)
#   IDEAL        1: no switch or scheduling cost on either side (scxsim --no-overhead --no-noise;
#                smpsched's context_switch_cycles, sched_op_cycles, kernel.timer, kernel.wake and
#                kernel.block 0), so counts and runtimes compare the policies alone (default 0)
#   LOADS        "TASKS:CPUS ..." (default "256:16 1024:64")
#   DURATION     simulated seconds (default 10)
#   RUN_US PERIOD_US  each task's run and period in microseconds (default 500 and 10000: 80% load)
#   MODE         timer (rt-app's run + timer, default) or sleep (run + sleep of period - run, read
#                the same way by both simulators; scx_simulator reads a timer as a sleep of the
#                whole period)
#   REPS         timed runs of each simulator and load; the least wall time is printed (default 3:
#                wall times on a shared machine vary by 2x and more from run to run)
#   COUNTS       1 (default): a second scxsim run with --dump-trace to count dispatches and
#                per-task runtime (not timed; scxsim writes its trace unbuffered, a line per
#                write: about 1.5 min for 256/16 and 4 min for 1024/64); 0 skips it
#   FLOOR        1 (default): also a row for the floor, the `dispatch_floor` example of
#                smpsched-sim (built if missing): the same load in a bare event loop (the engine's
#                event queue, one virtual-time heap, nothing else), the least a simulation of it
#                costs on this host; its wall time is the simulation's own (the process's start
#                is left out), the others' the whole command's
#   OUT          where the files, logs and results go (default a new folder under /tmp)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SCX_SCHED=${SCX_SCHED:-simple}
SCX_ARGS=${SCX_ARGS---no-rbc}
SMP_POLICY=${SMP_POLICY:-scx-simple}
IDEAL=${IDEAL:-0}
SMP_PRESET=${SMP_PRESET:-tango-12}
LOADS=${LOADS:-"256:16 1024:64"}
DURATION=${DURATION:-10}
RUN_US=${RUN_US:-500}
PERIOD_US=${PERIOD_US:-10000}
MODE=${MODE:-timer}
COUNTS=${COUNTS:-1}
REPS=${REPS:-3}
FLOOR=${FLOOR:-1}
OUT=${OUT:-$(mktemp -d /tmp/peers.XXXXXX)}
SMP_COSTS=
if [ "$IDEAL" = 1 ]; then
    SCX_ARGS="$SCX_ARGS --no-overhead --no-noise"
    SMP_COSTS=$'context_switch_cycles = 0\nsched_op_cycles = 0\nkernel.timer = 0\nkernel.wake = 0\nkernel.block = 0'
fi
mkdir -p "$OUT"

[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

SMPSCHED=${SMPSCHED:-$repo/target/release/smpsched}
if [ ! -x "$SMPSCHED" ]; then
    echo "building smpsched (cargo build --release -p smpsched) ..." >&2
    (cd "$repo" && cargo build --release -p smpsched >&2)
fi
FLOOR_BIN=$repo/target/release/examples/dispatch_floor
if [ "$FLOOR" = 1 ] && [ ! -x "$FLOOR_BIN" ]; then
    echo "building the floor (cargo build --release -p smpsched-sim --example dispatch_floor) ..." >&2
    (cd "$repo" && cargo build --release -p smpsched-sim --example dispatch_floor >&2)
fi
if [ -n "${SCX_SIM:-}" ] && [ ! -x "$SCX_SIM" ]; then
    echo "SCX_SIM=$SCX_SIM is not an executable; see benches/peers/README.md to build it" >&2
    exit 1
fi

# timed LOG CMD... -> "WALL_S PEAK_KB USER_S" on stdout, the least wall time, the largest peak
# resident memory and the least processor time (user + system) of REPS runs (on a shared machine the
# processor time is the steadier figure); the command's own output goes to LOG. Before each run, $pre
# (if set) is run: smpsched will not write into an --out folder that exists. The wall time is taken
# around the command to the tenth of a millisecond (`time`'s own %e has hundredths of a second,
# too coarse for smpsched's runs of a few hundredths), so it includes `time`'s start and exit.
timed() {
    local log=$1; shift
    local i best= t0 t1
    for ((i = 0; i < REPS; i++)); do
        [ -n "${pre:-}" ] && $pre
        t0=$(date +%s%N)
        /usr/bin/time -f 'TIME %e %M %U %S' -o "$log.time" "$@" > "$log" 2>&1 || {
            echo "failed: $* (see $log)" >&2; tail -5 "$log" >&2; return 1; }
        t1=$(date +%s%N)
        best=$(awk -v best="$best" -v t0="$t0" -v t1="$t1" '/^TIME/ {
            c = $4 + $5; e = sprintf("%.4f", (t1 - t0) / 1e9)
            if (best == "") { print e, $3, c; exit }
            split(best, b, " "); w = (e + 0 < b[1] + 0 ? e : b[1]); m = ($3 > b[2] ? $3 : b[2]); u = (c < b[3] ? c : b[3]); print w, m, u }' "$log.time")
    done
    echo "$best"
}

# smpsched: dispatches = the sum of the threads' dispatches (results.json's per_thread, kept for
# rt-app applications); per-task runtime = each thread's runtime_cycles (cycles it held a
# processor), mean, min and max over the threads.
smp_row() {
    local tasks=$1 cpus=$2 json=$3 dir=$OUT/smp-$tasks-$cpus
    rm -rf "$dir"; mkdir -p "$dir"; cp "$json" "$dir/load.json"
    cat > "$dir/load.toml" <<EOF
name = "peers-$tasks-$cpus"
description = "$tasks periodic rt-app tasks on $cpus processors (benches/peers)"
seed = 1

[machine]
preset = "$SMP_PRESET"
processors = $cpus
$SMP_COSTS

[scheduler]
policy = "$SMP_POLICY"

[[workload]]
kind = "rt-app"
name = "rt"
file = "load.json"
EOF
    local wm; wm=$(pre="rm -rf $dir/out" timed "$dir/run.log" "$SMPSCHED" run "$dir/load.toml" --out "$dir/out") || { echo "n/a n/a n/a n/a n/a n/a n/a"; return; }
    python3 - "$dir/out/results.json" "$DURATION" "$wm" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
app = r["apps"][0]
hz = r["elapsed_cycles"] / float(sys.argv[2])          # cycles per simulated second
wall, kb, user = sys.argv[3].split()
ms = [t["runtime_cycles"] / hz * 1e3 for t in app["per_thread"]]
disp = sum(t["dispatches"] for t in app["per_thread"])
print(wall, kb, user, disp, f"{sum(ms) / len(ms):.2f}", f"{min(ms):.2f}", f"{max(ms):.2f}")
EOF
}

# scx_simulator: one timed run without tracing, then (COUNTS=1) one with --dump-trace read as it
# streams: a dispatch is a SCHED line (TaskScheduled: the task put on a CPU), a task's runtime the
# sum of SCHED to its next PREEMPT / YIELD / SLEEP / COMPLETE (as Trace::total_runtime counts it).
scx_row() {
    local tasks=$1 cpus=$2 json=$3 dir=$OUT/scx-$tasks-$cpus
    if [ -z "${SCX_SIM:-}" ]; then echo "n/a n/a n/a n/a n/a n/a n/a"; return; fi
    rm -rf "$dir"; mkdir -p "$dir"
    local wm; wm=$(timed "$dir/run.log" "$SCX_SIM" -s "$SCX_SCHED" -c "$cpus" $SCX_ARGS "$json") || { echo "n/a n/a n/a n/a n/a n/a n/a"; return; }
    if [ "$COUNTS" != 1 ]; then echo "$wm n/a n/a n/a n/a"; return; fi
    "$SCX_SIM" -s "$SCX_SCHED" -c "$cpus" $SCX_ARGS --dump-trace "$json" 2>&1 >/dev/null | awk -v wm="$wm" '
        /^\[/ {
            s = $0; sub(/^\[ */, "", s)
            t = s; sub(/:.*/, "", t); gsub(/_/, "", t); t += 0
            sub(/^[^]]*\] */, "", s); split(s, f, " ")
            ev = f[2]; pid = f[3]; sub(/pid=/, "", pid)
            if (ev == "SCHED") { n++; since[pid] = t; seen[pid] = 1 }
            else if (ev == "PREEMPT" || ev == "YIELD" || ev == "SLEEP" || ev == "COMPLETE") {
                if (pid in since) { run[pid] += t - since[pid]; delete since[pid] }
            }
        }
        END {
            k = 0; sum = 0; mn = -1; mx = 0
            for (p in seen) { k++; v = run[p] / 1e6; sum += v; if (mn < 0 || v < mn) mn = v; if (v > mx) mx = v }
            if (k == 0) { print wm, "n/a n/a n/a n/a"; exit }
            printf "%s %d %.2f %.2f %.2f\n", wm, n, sum / k, mn, mx
        }'
}

# The floor: the least wall time of REPS runs as the example measures it, the largest peak memory,
# the least processor time, its dispatches and per-task runtime.
floor_row() {
    local tasks=$1 cpus=$2 dir=$OUT/floor-$tasks-$cpus
    rm -rf "$dir"; mkdir -p "$dir"
    local wm; wm=$(timed "$dir/run.log" "$FLOOR_BIN" "$tasks" "$cpus" "$RUN_US" "$PERIOD_US" "$DURATION") || { echo "n/a n/a n/a n/a n/a n/a n/a"; return; }
    local best; best=$(awk '/dispatches in/ { for (i = 1; i <= NF; i++) if ($i == "in") w = $(i + 1); if (b == "" || w < b) b = w } END { print b }' "$dir"/run.log*)
    awk -v wm="$wm" -v w="$best" '/dispatches in/ {
        for (i = 1; i <= NF; i++) { if ($i == "processors:") d = $(i + 1); if ($i == "runtime") m = $(i + 1); if ($i == "(least") lo = $(i + 1); if ($i == "most") hi = $(i + 1) }
        sub(/,/, "", lo); sub(/\)/, "", hi); split(wm, a, " ")
        printf "%s %s %s %s %s %s %s\n", w, a[2], a[3], d, m, lo, hi; exit }' "$dir/run.log"
}

printf '%-9s %-20s %7s %7s %8s %10s %12s %12s %9s %9s %9s\n' load simulator "wall s" "cpu s" "peak MB" dispatches "disp/wall s" "disp/cpu s" "run ms" "min ms" "max ms"
for load in $LOADS; do
    tasks=${load%%:*}; cpus=${load##*:}
    json=$OUT/periodic-$tasks-$MODE.json
    python3 "$here/gen-periodic.py" "$tasks" "$json" --run "$RUN_US" --period "$PERIOD_US" --duration "$DURATION" --mode "$MODE"
    sims="smpsched scx"; [ "$FLOOR" = 1 ] && sims="$sims floor"
    declare -A walls=()
    for sim in $sims; do
        case $sim in
            smpsched) row=$(smp_row "$tasks" "$cpus" "$json"); name="smpsched/$SMP_POLICY" ;;
            scx) row=$(scx_row "$tasks" "$cpus" "$json"); name="scx/$SCX_SCHED" ;;
            floor) row=$(floor_row "$tasks" "$cpus"); name="floor (bare loop)" ;;
        esac
        read -r wall kb user disp mean mn mx <<< "$row"
        mb=n/a; rate=n/a; urate=n/a
        [ "$kb" != n/a ] && mb=$(awk -v k="$kb" 'BEGIN{printf "%.1f", k/1024}')
        # A time of 0 (the processor time: GNU time counts hundredths) gives no rate.
        [ "$disp" != n/a ] && [ "$wall" != n/a ] && rate=$(awk -v d="$disp" -v w="$wall" 'BEGIN{if (w > 0) printf "%.0f", d / w; else print "n/a"}')
        [ "$disp" != n/a ] && [ "$user" != n/a ] && urate=$(awk -v d="$disp" -v w="$user" 'BEGIN{if (w > 0) printf "%.0f", d / w; else print "n/a"}')
        printf '%-9s %-20s %7s %7s %8s %10s %12s %12s %9s %9s %9s\n' "$tasks/$cpus" "$name" "$wall" "$user" "$mb" "$disp" "$rate" "$urate" "$mean" "$mn" "$mx"
        walls[$sim]=$wall
    done
    # The same load's dispatches take scx_simulator this many times smpsched's (and the floor's)
    # wall time: the ratio of dispatches per wall second the target speaks of.
    awk -v l="$tasks/$cpus" -v x="${walls[scx]:-n/a}" -v s="${walls[smpsched]:-n/a}" -v f="${walls[floor]:-n/a}" 'BEGIN {
        if (x + 0 <= 0 || s + 0 <= 0) exit
        printf "%-9s scx_simulator'"'"'s wall time over smpsched'"'"'s: %.1fx", l, x / s
        if (f + 0 > 0) printf "; over the floor'"'"'s: %.1fx", x / f
        printf "\n" }'
done
echo "(files and logs in $OUT; run ms = per-task runtime over the run, mean over tasks; $MODE mode, ${RUN_US} us every ${PERIOD_US} us, ${DURATION} s; IDEAL=$IDEAL)"
