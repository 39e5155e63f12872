//! The engine's event queue against `std::collections::BinaryHeap` keyed by (time, sequence
//! number), the structure it replaced, in the classic *hold* model: with `n` events queued, pop
//! the earliest and push one a random delay after it, over and over.
//!
//! Delays are uniform on [1, 2 * n * 1,000) cycles, so the queue spans about as many cycles per
//! event whatever its size (as 64 processors' segment ends do, or a crowd of sleeping
//! threads); `ties` draws delays of 40,000 or 40,500 cycles, so many events share a cycle, as
//! with identical threads.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use smpsched_sim::event_queue::EventQueue;

/// Hold operations per measured iteration.
const HOLDS: u64 = 100_000;

/// A tiny deterministic generator (xorshift64), so the draws cost next to nothing.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn delay(&mut self, n: u64, ties: bool) -> u64 {
        if ties {
            40_000 + self.next() % 2 * 500
        } else {
            1 + self.next() % (2 * n * 1_000 - 1)
        }
    }
}

/// The two queues, behind one face.
trait Queue: Default {
    fn push(&mut self, time: u64, payload: u64);
    fn pop(&mut self) -> Option<(u64, u64)>;
}

impl Queue for EventQueue {
    fn push(&mut self, time: u64, payload: u64) {
        EventQueue::push(self, time, payload)
    }
    fn pop(&mut self) -> Option<(u64, u64)> {
        EventQueue::pop(self)
    }
}

/// A binary heap ordered by (time, push number), as the engine used before.
#[derive(Default)]
struct Heap {
    heap: BinaryHeap<Reverse<(u64, u64, u64)>>,
    seq: u64,
}

impl Queue for Heap {
    fn push(&mut self, time: u64, payload: u64) {
        self.seq += 1;
        self.heap.push(Reverse((time, self.seq, payload)));
    }
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.heap.pop().map(|Reverse((t, _, p))| (t, p))
    }
}

fn filled<Q: Queue>(n: u64, ties: bool) -> (Q, Draw) {
    let mut q = Q::default();
    let mut d = Draw(0x9e37_79b9_7f4a_7c15);
    for i in 0..n {
        let t = d.delay(n, ties);
        q.push(t, i);
    }
    (q, d)
}

fn hold<Q: Queue>(q: &mut Q, d: &mut Draw, n: u64, ties: bool) -> u64 {
    let mut sum = 0u64;
    for _ in 0..HOLDS {
        let (t, p) = q.pop().expect("queue holds n events");
        sum = sum.wrapping_add(p);
        q.push(t + d.delay(n, ties), p);
    }
    sum
}

fn bench<Q: Queue>(c: &mut Criterion, name: &str) {
    let mut g = c.benchmark_group(format!("hold/{name}"));
    g.sample_size(20);
    g.throughput(Throughput::Elements(HOLDS));
    for (n, ties) in [(64, false), (64, true), (1_024, false), (16_384, false)] {
        let label = if ties {
            format!("{n}-ties")
        } else {
            n.to_string()
        };
        g.bench_function(BenchmarkId::from_parameter(label), |b| {
            let (mut q, mut d) = filled::<Q>(n, ties);
            b.iter(|| hold(&mut q, &mut d, n, ties))
        });
    }
    g.finish();
}

fn queues(c: &mut Criterion) {
    bench::<EventQueue>(c, "event_queue");
    bench::<Heap>(c, "binary_heap");
}

criterion_group!(benches, queues);
criterion_main!(benches);
