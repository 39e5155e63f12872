//! Latency and idle-CPU measurements that criterion does not express (a plain executable; it
//! accepts and ignores `--bench` so that it runs like the others):
//!
//! - the core-to-core handoff: a compare-and-swap ping-pong between two threads (median of
//!   batches; one-way = half a round trip), against which the other figures are read;
//! - wake-to-run: a task spawned from outside while every worker is parked, timed from the spawn
//!   to the first instruction of the task, p50 and p99 over 1,000 spawns;
//! - CPU burned after work runs out: after a burst of 100,000 tiny tasks, the CPU time all the
//!   process's threads use in the next 100 ms and in the 900 ms after that (Linux: summed from
//!   `/proc/self/task/*/schedstat`, in ns), for each pool, tokio and rayon.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use smpsched_queues::pool::{Pool, PoolConfig, Task};
use smpsched_queues::{
    Ddq, DistributedFcfs, Global, MachRunQueue, MultiAccess, PerCore, ReadyQueue,
};

const SAMPLES: usize = 1_000;
const BURST: usize = 100_000;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// CPU time of every thread of the process, in ns (Linux; 0 elsewhere).
fn process_cpu_ns() -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn cas_round_trip_ns() -> f64 {
    let iters = 100_000u64;
    let mut batches: Vec<f64> = (0..21)
        .map(|_| support::cas_round_trips(iters).as_nanos() as f64 / iters as f64)
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Wake-to-run samples: `spawn` starts a closure on the runtime that reports the elapsed time.
fn wake_to_run(spawn: &dyn Fn(Box<dyn FnOnce() + Send>)) -> (Duration, Duration) {
    let mut v = Vec::with_capacity(SAMPLES);
    let (tx, rx) = mpsc::channel();
    for _ in 0..SAMPLES {
        std::thread::sleep(Duration::from_millis(1)); // let every worker park
        let tx = tx.clone();
        let t0 = Instant::now();
        spawn(Box::new(move || tx.send(t0.elapsed()).unwrap()));
        v.push(rx.recv().unwrap());
    }
    (percentile(&mut v, 0.5), percentile(&mut v, 0.99))
}

/// CPU burned in the 100 ms and the following 900 ms after a burst of tiny tasks finishes.
fn burn_after(spawn: &dyn Fn(Box<dyn FnOnce() + Send>)) -> (Duration, Duration) {
    let rem = Arc::new(AtomicUsize::new(BURST));
    let (tx, rx) = mpsc::sync_channel(1);
    for _ in 0..BURST {
        let (rem, tx) = (rem.clone(), tx.clone());
        spawn(Box::new(move || {
            if rem.fetch_sub(1, Ordering::AcqRel) == 1 {
                tx.send(()).unwrap();
            }
        }));
    }
    rx.recv().unwrap();
    let c0 = process_cpu_ns();
    std::thread::sleep(Duration::from_millis(100));
    let c1 = process_cpu_ns();
    std::thread::sleep(Duration::from_millis(900));
    let c2 = process_cpu_ns();
    (Duration::from_nanos(c1 - c0), Duration::from_nanos(c2 - c1))
}

fn report(name: &str, spawn: &dyn Fn(Box<dyn FnOnce() + Send>), one_way: f64) {
    let (p50, p99) = wake_to_run(spawn);
    let (b1, b2) = burn_after(spawn);
    println!(
        "{name:<18} {:>9.1} {:>9.1} {:>9.0} {:>11.2} {:>11.2}",
        p50.as_nanos() as f64 / 1e3,
        p99.as_nanos() as f64 / 1e3,
        p50.as_nanos() as f64 / one_way,
        b1.as_secs_f64() * 1e3,
        b2.as_secs_f64() * 1e3,
    );
}

fn ours<Q: ReadyQueue<Task> + 'static>(name: &str, q: Q, one_way: f64) {
    let pool = Pool::with_config(q, PoolConfig::default());
    report(
        name,
        &|f| {
            pool.execute(move |_| f());
        },
        one_way,
    );
    pool.shutdown();
}

fn main() {
    let n = cores();
    let rt = cas_round_trip_ns();
    let one_way = rt / 2.0;
    println!("== latency ({n} cores, {n} workers per pool)");
    println!("handoff: CAS round trip {rt:.1} ns, one-way {one_way:.1} ns\n");
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>11} {:>11}",
        "runtime", "wake p50", "wake p99", "p50/hand", "burn 100ms", "burn 900ms"
    );
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>11} {:>11}",
        "", "us", "us", "off", "ms CPU", "ms CPU"
    );
    ours("global", Global::new(n), one_way);
    ours("distributed-fcfs", DistributedFcfs::new(n), one_way);
    ours("multi-access", MultiAccess::new(n), one_way);
    ours("ddq", Ddq::new(n), one_way);
    ours("mach", MachRunQueue::new(n), one_way);
    ours("per-core", PerCore::new(n), one_way);
    {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .build()
            .expect("a tokio runtime");
        report(
            "tokio",
            &|f| {
                rt.spawn(async move { f() });
            },
            one_way,
        );
    }
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .expect("a rayon pool");
        report("rayon", &|f| pool.spawn(f), one_way);
    }
}
