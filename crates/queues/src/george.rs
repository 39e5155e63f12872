//! George's test programs (George 1990, section 3): the producer/consumer load (half the workers
//! insert, half remove; a producer that finds the queue full backs off exponentially and
//! retries) and a prime-sieve task program.
//!
//! Two departures, both forced by running on real threads: consumers stop when every item has
//! been consumed (a count) rather than on a termination message, because in a non-FIFO structure
//! a message can overtake data; and the sieve is a segmented sieve of Eratosthenes whose segments
//! are tasks that split themselves (each task spawns tasks), not CoF's lazy stream of filters.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::pool::{Ctx, Pool, Task};
use crate::{Client, Post, PostError, ReadyQueue, Take};

/// What the producer/consumer test measured.
#[derive(Clone, Debug)]
pub struct PcReport {
    /// Items produced and consumed.
    pub items: u64,
    /// Wall-clock time from the first insert to the last remove.
    pub elapsed: Duration,
    /// Backoffs of the producer that backed off most (George's Figure 1 statistic).
    pub max_backoffs: u64,
    /// Backoffs of all producers.
    pub total_backoffs: u64,
}

/// George's `backoff(j)`: spin about 2^j turns (capped), yielding once the wait is long.
fn backoff(j: u64) {
    let turns = 1u64 << j.min(10);
    if turns >= 64 {
        std::thread::yield_now();
    } else {
        for _ in 0..turns {
            std::hint::spin_loop();
        }
    }
}

/// Runs the producer/consumer load: `producers` client threads insert `iterations` items each
/// while one consumer thread per worker index removes until all are consumed.
pub fn producer_consumer(
    q: &(dyn ReadyQueue<u64> + '_),
    producers: usize,
    iterations: u64,
) -> PcReport {
    let total = producers as u64 * iterations;
    let consumed = AtomicU64::new(0);
    let backoffs: Vec<AtomicU64> = (0..producers).map(|_| AtomicU64::new(0)).collect();
    let start = Instant::now();
    std::thread::scope(|s| {
        for (p, b) in backoffs.iter().enumerate() {
            s.spawn(move || {
                let mut client = Client::new(p);
                for i in 0..iterations {
                    let mut j = 0;
                    let mut item = i;
                    loop {
                        match q.post(&mut client, item, Post::default()) {
                            Ok(_) => break,
                            Err(PostError::Full(back)) => {
                                item = back;
                                backoff(j);
                                j += 1;
                            }
                            Err(e) => unreachable!("a default post is always supported: {e}"),
                        }
                    }
                    b.fetch_add(j, Ordering::Relaxed);
                }
            });
        }
        for w in 0..q.workers() {
            let consumed = &consumed;
            s.spawn(move || {
                let mut misses = 0u32;
                while consumed.load(Ordering::Acquire) < total {
                    match q.take(w) {
                        Take::Item(_) => {
                            consumed.fetch_add(1, Ordering::AcqRel);
                            misses = 0;
                        }
                        Take::Retry => {}
                        Take::Empty => {
                            misses += 1;
                            if misses > 16 {
                                std::thread::yield_now();
                            }
                        }
                    }
                }
            });
        }
    });
    let b: Vec<u64> = backoffs.iter().map(|b| b.load(Ordering::Relaxed)).collect();
    PcReport {
        items: total,
        elapsed: start.elapsed(),
        max_backoffs: b.iter().copied().max().unwrap_or(0),
        total_backoffs: b.iter().sum(),
    }
}

/// Primes up to `n` by a small sequential sieve (the base primes of the segmented sieve).
fn base_primes(n: u64) -> Vec<u64> {
    let n = n as usize;
    let mut composite = vec![false; n + 1];
    let mut primes = Vec::new();
    for i in 2..=n {
        if !composite[i] {
            primes.push(i as u64);
            let mut k = i * i;
            while k <= n {
                composite[k] = true;
                k += i;
            }
        }
    }
    primes
}

/// Segments at most this long are sieved by one task; longer ones split in two tasks.
const SEGMENT: u64 = 4096;

fn sieve_task(
    ctx: &Ctx<'_>,
    lo: u64,
    hi: u64,
    base: Arc<Vec<u64>>,
    count: Arc<AtomicUsize>,
    left: Arc<AtomicUsize>,
    done: mpsc::SyncSender<()>,
) {
    if hi - lo > SEGMENT {
        let mid = lo + (hi - lo) / 2;
        left.fetch_add(1, Ordering::AcqRel);
        let (b, c, l, d) = (base.clone(), count.clone(), left.clone(), done.clone());
        ctx.execute(move |ctx| sieve_task(ctx, mid, hi, b, c, l, d));
        sieve_task(ctx, lo, mid, base, count, left, done);
        return;
    }
    let mut composite = vec![false; (hi - lo) as usize];
    for &p in base.iter() {
        if p * p >= hi {
            break;
        }
        let mut k = lo.div_ceil(p).max(p) * p;
        while k < hi {
            composite[(k - lo) as usize] = true;
            k += p;
        }
    }
    let found = (lo..hi)
        .filter(|&x| x >= 2 && !composite[(x - lo) as usize])
        .count();
    count.fetch_add(found, Ordering::AcqRel);
    if left.fetch_sub(1, Ordering::AcqRel) == 1 {
        let _ = done.send(());
    }
}

/// Counts the primes up to `n` with sieve tasks on `pool`.
pub fn sieve<Q: ReadyQueue<Task> + 'static>(pool: &Pool<Q>, n: u64) -> usize {
    let base = Arc::new(base_primes((n as f64).sqrt() as u64 + 1));
    let count = Arc::new(AtomicUsize::new(0));
    let left = Arc::new(AtomicUsize::new(1));
    let (tx, rx) = mpsc::sync_channel(1);
    let c = count.clone();
    pool.execute(move |ctx| sieve_task(ctx, 0, n + 1, base, c, left, tx));
    let _ = rx.recv();
    count.load(Ordering::Acquire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::PoolConfig;
    use crate::{Ddq, DdqConfig, Global, MultiAccess, PerCore};

    #[test]
    fn base_primes_are_primes() {
        assert_eq!(base_primes(30), vec![2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
    }

    #[test]
    fn producer_consumer_consumes_everything_and_backs_off_when_full() {
        let small = Ddq::with_config(
            2,
            DdqConfig {
                per_leaf: 1,
                capacity: 2,
                trees: 1,
            },
        );
        let r = producer_consumer(&small, 2, 5_000);
        assert_eq!(r.items, 10_000);
        assert_eq!(small.len_hint(), 0);
        let g: Global<u64> = Global::new(2);
        let r = producer_consumer(&g, 2, 5_000);
        assert_eq!(r.total_backoffs, 0, "an unbounded queue is never full");
        let m: MultiAccess<u64> = MultiAccess::new(2);
        assert_eq!(producer_consumer(&m, 1, 3_000).items, 3_000);
    }

    #[test]
    fn sieve_counts_primes_on_any_pool() {
        let cfg = PoolConfig {
            pin: false,
            spin_rounds: 8,
        };
        let p = Pool::with_config(PerCore::new(2), cfg.clone());
        assert_eq!(sieve(&p, 100_000), 9_592);
        let d = Pool::with_config(Ddq::new(2), cfg);
        assert_eq!(sieve(&d, 10_000), 1_229);
        assert_eq!(sieve(&d, 1), 0);
    }
}
