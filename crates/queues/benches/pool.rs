//! The worker pool over each structure against tokio's multi-thread runtime, on the scenarios of
//! tokio's own `benches/rt_multi_threaded.rs` (one worker per core, in the same run):
//!
//! - `spawn_many_local`: a task spawns 10,000 tasks from inside the pool;
//! - `spawn_many_remote_idle`: 10,000 tasks spawned from outside, then all joined;
//! - `ping_pong`: 1,000 pings, each a task that spawns a pong that answers by spawning the
//!   ping's continuation (our tasks run to completion: a message is a spawned continuation);
//! - `chained_spawn`: a chain of 1,000 tasks, each spawning the next;
//! - `yield_many`: 200 tasks that yield 1,000 times each (for us: re-spawn their continuation).
//!
//! Run standalone: `pool-HASH --bench`. A summary prints each pool's time as a ratio to tokio's.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

use criterion::Criterion;
use smpsched_queues::pool::{Ctx, Pool, PoolConfig, Task};
use smpsched_queues::{
    Ddq, DistributedFcfs, Global, MachRunQueue, MultiAccess, PerCore, ReadyQueue,
};

const NUM_SPAWN: usize = 10_000;
const NUM_PINGS: usize = 1_000;
const CHAIN: usize = 1_000;
const YIELD_TASKS: usize = 200;
const NUM_YIELD: usize = 1_000;

const SCENARIOS: [&str; 5] = [
    "spawn_many_local",
    "spawn_many_remote_idle",
    "ping_pong",
    "chained_spawn",
    "yield_many",
];

/// Counts down and signals when it reaches zero.
fn latch(n: usize) -> (Arc<AtomicUsize>, mpsc::SyncSender<()>, mpsc::Receiver<()>) {
    let (tx, rx) = mpsc::sync_channel(1);
    (Arc::new(AtomicUsize::new(n)), tx, rx)
}

fn count_down(rem: &AtomicUsize, tx: &mpsc::SyncSender<()>) {
    if rem.fetch_sub(1, Ordering::AcqRel) == 1 {
        tx.send(()).unwrap();
    }
}

fn chain(ctx: &Ctx<'_>, n: usize, tx: mpsc::SyncSender<()>) {
    if n == 0 {
        tx.send(()).unwrap();
    } else {
        ctx.execute(move |ctx| chain(ctx, n - 1, tx));
    }
}

fn yielder(ctx: &Ctx<'_>, left: usize, rem: Arc<AtomicUsize>, tx: mpsc::SyncSender<()>) {
    if left == 0 {
        count_down(&rem, &tx);
    } else {
        ctx.execute(move |ctx| yielder(ctx, left - 1, rem, tx));
    }
}

fn run_ours<Q: ReadyQueue<Task> + 'static>(pool: &Pool<Q>, scenario: &str) {
    match scenario {
        "spawn_many_local" => {
            let (rem, tx, rx) = latch(NUM_SPAWN);
            pool.execute(move |ctx| {
                for _ in 0..NUM_SPAWN {
                    let (rem, tx) = (rem.clone(), tx.clone());
                    ctx.execute(move |_| count_down(&rem, &tx));
                }
            });
            rx.recv().unwrap();
        }
        "spawn_many_remote_idle" => {
            let handles: Vec<_> = (0..NUM_SPAWN)
                .map(|_| pool.spawn(|_| ()).unwrap())
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        }
        "ping_pong" => {
            let (rem, tx, rx) = latch(NUM_PINGS);
            pool.execute(move |ctx| {
                for _ in 0..NUM_PINGS {
                    let (rem, tx) = (rem.clone(), tx.clone());
                    ctx.execute(move |ctx| {
                        // ping: spawn the pong, which answers by spawning our continuation.
                        ctx.execute(move |ctx| ctx.execute(move |_| count_down(&rem, &tx)));
                    });
                }
            });
            rx.recv().unwrap();
        }
        "chained_spawn" => {
            let (tx, rx) = mpsc::sync_channel(1);
            pool.execute(move |ctx| chain(ctx, CHAIN, tx));
            rx.recv().unwrap();
        }
        "yield_many" => {
            let (rem, tx, rx) = latch(YIELD_TASKS);
            for _ in 0..YIELD_TASKS {
                let (rem, tx) = (rem.clone(), tx.clone());
                pool.execute(move |ctx| yielder(ctx, NUM_YIELD, rem, tx));
            }
            rx.recv().unwrap();
        }
        _ => unreachable!(),
    }
}

fn run_tokio(rt: &tokio::runtime::Runtime, scenario: &str) {
    match scenario {
        "spawn_many_local" => {
            let (rem, tx, rx) = latch(NUM_SPAWN);
            rt.spawn(async move {
                for _ in 0..NUM_SPAWN {
                    let (rem, tx) = (rem.clone(), tx.clone());
                    tokio::spawn(async move { count_down(&rem, &tx) });
                }
            });
            rx.recv().unwrap();
        }
        "spawn_many_remote_idle" => {
            let handles: Vec<_> = (0..NUM_SPAWN).map(|_| rt.spawn(async {})).collect();
            rt.block_on(async {
                for h in handles {
                    h.await.unwrap();
                }
            });
        }
        "ping_pong" => {
            let (rem, tx, rx) = latch(NUM_PINGS);
            rt.spawn(async move {
                for _ in 0..NUM_PINGS {
                    let (rem, tx) = (rem.clone(), tx.clone());
                    tokio::spawn(async move {
                        let (tx1, rx1) = tokio::sync::oneshot::channel::<()>();
                        let (tx2, rx2) = tokio::sync::oneshot::channel::<()>();
                        tokio::spawn(async move {
                            rx1.await.unwrap();
                            tx2.send(()).unwrap();
                        });
                        tx1.send(()).unwrap();
                        rx2.await.unwrap();
                        count_down(&rem, &tx);
                    });
                }
            });
            rx.recv().unwrap();
        }
        "chained_spawn" => {
            fn iter(tx: mpsc::SyncSender<()>, n: usize) {
                if n == 0 {
                    tx.send(()).unwrap();
                } else {
                    tokio::spawn(async move { iter(tx, n - 1) });
                }
            }
            let (tx, rx) = mpsc::sync_channel(1);
            rt.spawn(async move { iter(tx, CHAIN) });
            rx.recv().unwrap();
        }
        "yield_many" => {
            let (rem, tx, rx) = latch(YIELD_TASKS);
            for _ in 0..YIELD_TASKS {
                let (rem, tx) = (rem.clone(), tx.clone());
                rt.spawn(async move {
                    for _ in 0..NUM_YIELD {
                        tokio::task::yield_now().await;
                    }
                    count_down(&rem, &tx);
                });
            }
            rx.recv().unwrap();
        }
        _ => unreachable!(),
    }
}

fn bench_ours<Q: ReadyQueue<Task> + 'static>(c: &mut Criterion, name: &str, q: Q) {
    let pool = Pool::with_config(q, PoolConfig::default());
    for s in SCENARIOS {
        c.benchmark_group(format!("pool/{s}"))
            .bench_function(name, |b| b.iter(|| run_ours(&pool, s)));
    }
    pool.shutdown();
}

fn names() -> [&'static str; 7] {
    [
        "global",
        "distributed-fcfs",
        "multi-access",
        "ddq",
        "mach",
        "per-core",
        "tokio",
    ]
}

fn main() {
    let mut c = support::criterion();
    let n = support::cores();
    bench_ours(&mut c, "global", Global::new(n));
    bench_ours(&mut c, "distributed-fcfs", DistributedFcfs::new(n));
    bench_ours(&mut c, "multi-access", MultiAccess::new(n));
    bench_ours(&mut c, "ddq", Ddq::new(n));
    bench_ours(&mut c, "mach", MachRunQueue::new(n));
    bench_ours(&mut c, "per-core", PerCore::new(n));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(n)
        .build()
        .expect("a tokio runtime");
    for s in SCENARIOS {
        c.benchmark_group(format!("pool/{s}"))
            .bench_function("tokio", |b| b.iter(|| run_tokio(&rt, s)));
    }
    drop(rt);
    c.final_summary();

    let out = support::output_dir();
    println!("\n== summary ({n} cores, {n} workers): time per scenario, ratio to tokio (below 1: faster)");
    for s in SCENARIOS {
        let group = format!("pool/{s}");
        let Some(tokio) = support::median_ns(&out, &group, "tokio") else {
            continue;
        };
        println!("{s} (tokio {:.1} us)", tokio / 1e3);
        for name in names() {
            if let Some(ns) = support::median_ns(&out, &group, name) {
                println!("  {name:<18} {:>10.1} us {:>8.2}", ns / 1e3, ns / tokio);
            }
        }
    }
}
