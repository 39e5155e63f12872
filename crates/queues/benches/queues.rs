//! Ready-queue benchmarks, each structure side by side with crossbeam-deque (the Injector alone,
//! and Injector + Worker/Stealer as rayon uses it), crossbeam-channel and a `Mutex<VecDeque>`,
//! in the same run:
//!
//! - `handoff/cas_round_trip`: two threads pass a token by compare-and-swap; one iteration is a
//!   round trip (two core-to-core handoffs). Every other figure is read against it.
//! - `uncontended/NAME`: one thread posts an item and takes it back.
//! - `contended/pPcC/NAME`: P producers post 100,000 items while C consumers take them all
//!   (a fresh queue and fresh threads per iteration), for P, C up to the core count
//!   (`SMPSCHED_BENCH_MIXES=1x15,15x1` names the mixes instead).
//!
//! At the end a summary prints each structure's throughput as a ratio to crossbeam's Injector
//! measured in the same run. Run standalone: `queues-HASH --bench` (criterion's usual filters
//! and `--warm-up-time`/`--measurement-time` apply).

mod support;

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use smpsched_queues::{
    Client, Ddq, DistributedFcfs, Global, MachRunQueue, MultiAccess, PerCore, Post, PostError,
    ReadyQueue, Take,
};

const ITEMS: u64 = 100_000;

/// A queue as the harness drives it: a producer or consumer closure per thread (dynamic
/// dispatch costs every contender the same).
trait Contender: Send + Sync {
    fn producer(&self, id: usize) -> Box<dyn FnMut(u64) + Send + '_>;
    fn consumer(&self, w: usize) -> Box<dyn FnMut() -> Option<u64> + Send + '_>;
}

struct Ours<Q>(Q);

impl<Q: ReadyQueue<u64>> Contender for Ours<Q> {
    fn producer(&self, id: usize) -> Box<dyn FnMut(u64) + Send + '_> {
        let mut c = Client::new(id);
        Box::new(move |x| {
            let mut x = x;
            loop {
                match self.0.post(&mut c, x, Post::default()) {
                    Ok(_) => return,
                    Err(PostError::Full(back)) => {
                        x = back;
                        std::thread::yield_now();
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        })
    }
    fn consumer(&self, w: usize) -> Box<dyn FnMut() -> Option<u64> + Send + '_> {
        Box::new(move || match self.0.take(w) {
            Take::Item(x) => Some(x),
            _ => None,
        })
    }
}

struct CbInjector(Injector<u64>);

impl Contender for CbInjector {
    fn producer(&self, _id: usize) -> Box<dyn FnMut(u64) + Send + '_> {
        Box::new(move |x| self.0.push(x))
    }
    fn consumer(&self, _w: usize) -> Box<dyn FnMut() -> Option<u64> + Send + '_> {
        Box::new(move || loop {
            match self.0.steal() {
                Steal::Success(x) => return Some(x),
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        })
    }
}

/// rayon's pattern: an Injector for outside work, a Worker deque per consumer, Stealers.
struct CbRayon {
    injector: Injector<u64>,
    workers: Mutex<Vec<Option<Worker<u64>>>>,
    stealers: Vec<Stealer<u64>>,
}

impl CbRayon {
    fn new(consumers: usize) -> CbRayon {
        let workers: Vec<Worker<u64>> = (0..consumers).map(|_| Worker::new_fifo()).collect();
        let stealers = workers.iter().map(|w| w.stealer()).collect();
        CbRayon {
            injector: Injector::new(),
            workers: Mutex::new(workers.into_iter().map(Some).collect()),
            stealers,
        }
    }
}

impl Contender for CbRayon {
    fn producer(&self, _id: usize) -> Box<dyn FnMut(u64) + Send + '_> {
        Box::new(move |x| self.injector.push(x))
    }
    fn consumer(&self, w: usize) -> Box<dyn FnMut() -> Option<u64> + Send + '_> {
        let local = self.workers.lock().unwrap()[w]
            .take()
            .expect("one consumer per worker");
        Box::new(move || {
            local.pop().or_else(|| loop {
                let s = self.injector.steal_batch_and_pop(&local).or_else(|| {
                    self.stealers
                        .iter()
                        .map(|s| s.steal())
                        .collect::<Steal<u64>>()
                });
                match s {
                    Steal::Success(x) => return Some(x),
                    Steal::Empty => return None,
                    Steal::Retry => {}
                }
            })
        })
    }
}

struct CbChannel(
    crossbeam_channel::Sender<u64>,
    crossbeam_channel::Receiver<u64>,
);

impl Contender for CbChannel {
    fn producer(&self, _id: usize) -> Box<dyn FnMut(u64) + Send + '_> {
        Box::new(move |x| self.0.send(x).unwrap())
    }
    fn consumer(&self, _w: usize) -> Box<dyn FnMut() -> Option<u64> + Send + '_> {
        Box::new(move || self.1.try_recv().ok())
    }
}

struct MutexDeque(Mutex<VecDeque<u64>>);

impl Contender for MutexDeque {
    fn producer(&self, _id: usize) -> Box<dyn FnMut(u64) + Send + '_> {
        Box::new(move |x| self.0.lock().unwrap().push_back(x))
    }
    fn consumer(&self, _w: usize) -> Box<dyn FnMut() -> Option<u64> + Send + '_> {
        Box::new(move || self.0.lock().unwrap().pop_front())
    }
}

type Make = fn(usize) -> Box<dyn Contender>;

/// Every contender: ours first, then the peers. The Injector is the reference.
fn contenders() -> Vec<(&'static str, Make)> {
    vec![
        ("global", |n| Box::new(Ours(Global::new(n)))),
        ("distributed-fcfs", |n| {
            Box::new(Ours(DistributedFcfs::new(n)))
        }),
        ("multi-access", |n| Box::new(Ours(MultiAccess::new(n)))),
        ("ddq", |n| Box::new(Ours(Ddq::new(n)))),
        ("mach", |n| Box::new(Ours(MachRunQueue::new(n)))),
        ("per-core", |n| Box::new(Ours(PerCore::new(n)))),
        ("cb-injector", |_| Box::new(CbInjector(Injector::new()))),
        ("cb-rayon-deque", |n| Box::new(CbRayon::new(n))),
        ("cb-channel", |_| {
            let (s, r) = crossbeam_channel::unbounded();
            Box::new(CbChannel(s, r))
        }),
        ("mutex-vecdeque", |_| {
            Box::new(MutexDeque(Mutex::new(VecDeque::new())))
        }),
    ]
}

/// The producer/consumer mixes: up to the core count, plus one oversubscribed; or those that
/// `SMPSCHED_BENCH_MIXES` lists (`1x15,15x1`: producers x consumers).
fn mixes() -> Vec<(usize, usize)> {
    if let Ok(list) = std::env::var("SMPSCHED_BENCH_MIXES") {
        return list.split(',').map(parse_mix).collect();
    }
    let n = support::cores();
    let mut v = vec![
        (1, 1),
        (1, (n - 1).max(1)),
        (n / 2, n / 2),
        ((n - 1).max(1), 1),
        (n, n),
    ];
    v.retain(|&(p, c)| p > 0 && c > 0);
    v.sort();
    v.dedup();
    v
}

/// One `PxC` of `SMPSCHED_BENCH_MIXES`; anything else stops the run with exit status 2.
fn parse_mix(m: &str) -> (usize, usize) {
    let count = |s: &str| {
        s.trim()
            .parse::<usize>()
            .ok()
            .filter(|k| (1..=64).contains(k))
    };
    match m.split_once('x').map(|(p, c)| (count(p), count(c))) {
        Some((Some(p), Some(c))) => (p, c),
        _ => {
            eprintln!("SMPSCHED_BENCH_MIXES: `{m}` is not PxC with counts 1 to 64 (e.g. 1x15)");
            std::process::exit(2);
        }
    }
}

fn handoff(c: &mut Criterion) {
    let mut g = c.benchmark_group("handoff");
    g.bench_function("cas_round_trip", |b| {
        b.iter_custom(support::cas_round_trips)
    });
    g.finish();
}

fn uncontended(c: &mut Criterion) {
    let mut g = c.benchmark_group("uncontended");
    g.throughput(Throughput::Elements(1));
    for (name, make) in contenders() {
        let q = make(1);
        let mut post = q.producer(0);
        let mut take = q.consumer(0);
        g.bench_function(name, |b| {
            b.iter(|| {
                post(black_box(7));
                black_box(take())
            })
        });
    }
    g.finish();
}

/// One batch: a fresh queue, P producers and C consumers; the time from the start barrier until
/// every item is taken.
fn batch(make: Make, p: usize, c: usize) -> Duration {
    let q = make(c);
    let taken = AtomicUsize::new(0);
    let start = Barrier::new(p + c + 1);
    let t = std::thread::scope(|s| {
        for id in 0..p {
            let (q, start) = (&q, &start);
            s.spawn(move || {
                let mut post = q.producer(id);
                start.wait();
                let mut i = id as u64;
                while i < ITEMS {
                    post(i);
                    i += p as u64;
                }
            });
        }
        for w in 0..c {
            let (q, start, taken) = (&q, &start, &taken);
            s.spawn(move || {
                let mut take = q.consumer(w);
                start.wait();
                let mut mine = 0usize;
                let mut misses = 0u32;
                loop {
                    if take().is_some() {
                        mine += 1;
                        misses = 0;
                        if mine % 256 != 0 {
                            continue;
                        }
                    }
                    let total = if mine > 0 {
                        let t = taken.fetch_add(mine, Ordering::AcqRel) + mine;
                        mine = 0;
                        t
                    } else {
                        taken.load(Ordering::Acquire)
                    };
                    if total >= ITEMS as usize {
                        break;
                    }
                    misses += 1;
                    if misses > 64 {
                        std::thread::yield_now();
                    }
                }
            });
        }
        start.wait();
        Instant::now()
    });
    t.elapsed()
}

fn contended(c: &mut Criterion) {
    for (p, cons) in mixes() {
        let mut g = c.benchmark_group(format!("contended/p{p}c{cons}"));
        g.throughput(Throughput::Elements(ITEMS));
        for (name, make) in contenders() {
            g.bench_function(name, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| batch(make, p, cons)).sum())
            });
        }
        g.finish();
    }
}

fn summary() {
    let out = support::output_dir();
    let rt = support::median_ns(&out, "handoff", "cas_round_trip");
    println!("\n== summary ({} cores)", support::cores());
    if let Some(rt) = rt {
        println!(
            "handoff: CAS round trip {rt:.1} ns (one-way {:.1} ns)",
            rt / 2.0
        );
    }
    println!(
        "\n{:<18} {:>14} {:>12}",
        "uncontended", "post+take ns", "x handoff"
    );
    for (name, _) in contenders() {
        if let Some(ns) = support::median_ns(&out, "uncontended", name) {
            let x = rt.map_or(f64::NAN, |rt| ns / (rt / 2.0));
            println!("{name:<18} {ns:>14.1} {x:>12.2}");
        }
    }
    for (p, c) in mixes() {
        let group = format!("contended/p{p}c{c}");
        let Some(inj) = support::median_ns(&out, &group, "cb-injector") else {
            continue;
        };
        println!(
            "\n{group}: throughput as a ratio to cb-injector ({:.1} M items/s)",
            ITEMS as f64 / inj * 1e3
        );
        for (name, _) in contenders() {
            if let Some(ns) = support::median_ns(&out, &group, name) {
                println!(
                    "  {name:<18} {:>8.2}  ({:.1} M items/s)",
                    inj / ns,
                    ITEMS as f64 / ns * 1e3
                );
            }
        }
    }
}

fn main() {
    mixes(); // a bad SMPSCHED_BENCH_MIXES stops the run before anything is measured
    let mut c = support::criterion();
    handoff(&mut c);
    uncontended(&mut c);
    contended(&mut c);
    c.final_summary();
    summary();
}
