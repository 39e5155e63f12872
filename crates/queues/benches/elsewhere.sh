#!/usr/bin/env bash
# The queue benchmarks on another machine (a lent many-core one, without Rust): builds the three
# benchmark executables here into DIR with a runner, `DIR/run.sh`, to copy there and start.
#
#   crates/queues/benches/elsewhere.sh DIR [BASE]
#
# With BASE (a commit), DIR also gets that commit's `queues` executable as `queues-base`, and the
# runner measures its per-core queues and crossbeam's Injector in the same run, for an old
# against new comparison on the same machine (docs/queues.md, "Measured figures"). The runner
# writes criterion's logs to $OUT (or DIR/logs) and prints every summary at the end; about 5
# minutes on 16 cores. `ROUNDS=N DIR/run.sh` instead measures per-core and the Injector only, N
# rounds of the mixes in $MIXES (default 1x15,8x8,15x1,16x16; about 20 s a round), printing
# per-core's ratio to the Injector for each mix a line a round: figures that swing from one
# machine start to the next want several rounds, not one.
set -euo pipefail
dir="${1:?usage: elsewhere.sh DIR [BASE]}"
base="${2:-}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
built() { # the newest executable of bench $2 under target folder $1
    ls -t "$1"/release/deps/"$2"-* | grep -v '\.d$' | head -1
}
(cd "$root" && cargo bench -p smpsched-queues --no-run --locked)
for b in queues pool latency; do
    cp "$(built "$root/target" "$b")" "$dir/$b"
done
if [ -n "$base" ]; then
    tree="$(mktemp -d)"
    trap 'git -C "$root" worktree remove --force "$tree"' EXIT
    git -C "$root" worktree add -q --detach "$tree" "$base"
    (cd "$tree" && CARGO_TARGET_DIR="$root/target-base" cargo bench -p smpsched-queues --no-run --locked)
    cp "$(built "$root/target-base" queues)" "$dir/queues-base"
fi
strip "$dir"/queues* "$dir"/pool "$dir"/latency 2>/dev/null || true
cat > "$dir/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the queue benchmarks built by elsewhere.sh; logs go to $OUT, else ./logs.
set -o pipefail
cd "$(dirname "$0")"
out="${OUT:-logs}"
mkdir -p "$out"
F="--bench --noplot --warm-up-time 0.5 --measurement-time 1 --sample-size 10"
nproc
if [ -n "${ROUNDS:-}" ]; then
    export SMPSCHED_BENCH_MIXES="${MIXES:-1x15,8x8,15x1,16x16}"
    echo "per-core / Injector, mixes $SMPSCHED_BENCH_MIXES in order"
    for r in $(seq 1 "$ROUNDS"); do
        CRITERION_HOME=/tmp/rounds-$r timeout 120 ./queues $F 'contended/.*/(per-core|cb-injector)$' \
            > "$out/round-$r.log" 2>&1
        echo "round $r (exit $?): $(sed -n '/^== summary/,$p' "$out/round-$r.log" \
            | awk '$1 == "per-core" {printf "%s ", $2}')"
    done
    exit 0
fi
CRITERION_HOME=/tmp/q1 timeout 240 ./queues $F > "$out/queues.log" 2>&1
echo "queues: exit $?"
if [ -x queues-base ]; then
    CRITERION_HOME=/tmp/q2 timeout 90 ./queues-base $F 'contended/.*/(per-core|cb-injector)$' \
        > "$out/base.log" 2>&1
    echo "queues-base: exit $?"
fi
CRITERION_HOME=/tmp/q3 timeout 120 ./pool $F > "$out/pool.log" 2>&1
echo "pool: exit $?"
timeout 120 ./latency --bench > "$out/latency.log" 2>&1
echo "latency: exit $?"
for f in queues base pool latency; do
    [ -f "$out/$f.log" ] && { echo "#### $f"; sed -n '/^== \(summary\|latency\)/,$p' "$out/$f.log" | grep -v '^$'; }
done
RUN
chmod +x "$dir/run.sh"
echo "elsewhere.sh: $dir holds $(ls "$dir" | tr '\n' ' ')"
