//! loom model tests: every structure at 2-3 threads, all interleavings up to a preemption bound.
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p smpsched-queues --release --test loom`
//! (in its own target directory).

#![cfg(loom)]

use loom::thread;
use smpsched_policy::dibella::{ClientPolicy, SchedulerPolicy};
use smpsched_queues::{
    Client, Ddq, DdqConfig, DistributedFcfs, Global, MachRunQueue, MultiAccess, MultiAccessConfig,
    PerCore, Post, ReadyQueue, Take,
};
use std::sync::Arc; // the sharing is not under test; the structures inside use loom's atomics

type Queue = Arc<dyn ReadyQueue<u32>>;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

fn drain(q: &Queue, out: &mut Vec<u32>) {
    for _ in 0..64 {
        for w in 0..q.workers() {
            loop {
                match q.take(w) {
                    Take::Item(x) => out.push(x),
                    Take::Retry => continue,
                    Take::Empty => break,
                }
            }
        }
        if q.len_hint() == 0 {
            return;
        }
    }
    panic!("could not drain");
}

/// Two clients post concurrently while worker 0 takes once; afterwards exactly the two items
/// come out, once each.
fn two_posts_one_take(make: fn() -> Queue) {
    model(move || {
        let q = make();
        let posters: Vec<_> = (0..2u32)
            .map(|i| {
                let q = q.clone();
                thread::spawn(move || {
                    let mut c = Client::new(i as usize);
                    let _ = q.post(&mut c, i + 1, Post::default()).expect("room");
                })
            })
            .collect();
        let mut got = Vec::new();
        if let Take::Item(x) = q.take(0) {
            got.push(x);
        }
        for p in posters {
            p.join().unwrap();
        }
        drain(&q, &mut got);
        got.sort();
        assert_eq!(got, vec![1, 2]);
    });
}

/// One item, two workers racing to take it: exactly one wins.
fn two_takes_one_item(make: fn() -> Queue) {
    model(move || {
        let q = make();
        let mut c = Client::new(0);
        let _ = q.post(&mut c, 7, Post::default()).expect("room");
        let other = {
            let q = q.clone();
            thread::spawn(move || q.take(1).item())
        };
        let mine = q.take(0).item();
        let theirs = other.join().unwrap();
        let mut got: Vec<u32> = mine.into_iter().chain(theirs).collect();
        drain(&q, &mut got);
        assert_eq!(got, vec![7]);
    });
}

/// A post races a worker that is taking (and, in a DDQ, enqueuing itself as a waiter): the item
/// is found afterwards, either by that take or by a later one.
fn post_races_take(make: fn() -> Queue) {
    model(move || {
        let q = make();
        let poster = {
            let q = q.clone();
            thread::spawn(move || {
                let mut c = Client::new(1);
                let _ = q.post(&mut c, 9, Post::default()).expect("room");
            })
        };
        let mut got: Vec<u32> = q.take(0).item().into_iter().collect();
        poster.join().unwrap();
        assert!(got.len() == 1 || q.has_work_for(0) || q.has_work_for(1));
        drain(&q, &mut got);
        assert_eq!(got, vec![9]);
    });
}

/// Client `client` posts `item` while worker 0 takes once; then everything left is drained.
/// What came out, sorted.
fn post_while_taking(q: &Queue, client: usize, item: u32) -> Vec<u32> {
    let poster = {
        let q = q.clone();
        thread::spawn(move || {
            let _ = q
                .post(&mut Client::new(client), item, Post::default())
                .expect("room");
        })
    };
    let mut got: Vec<u32> = q.take(0).item().into_iter().collect();
    poster.join().unwrap();
    drain(q, &mut got);
    got.sort();
    got
}

/// Per-core: a client's post finds its lane's ring full and spills to an overflow queue while a
/// worker takes from that lane; every item comes out once.
#[test]
fn per_core_spill_races_take() {
    model(|| {
        let q: Queue = Arc::new(PerCore::with_injection(2, 1, 2));
        let mut c = Client::new(0);
        for x in 1..=2 {
            let _ = q.post(&mut c, x, Post::default()).expect("room");
        }
        assert_eq!(post_while_taking(&q, 1, 3), vec![1, 2, 3]);
    });
}

macro_rules! loom_suite {
    ($($module:ident => $make:expr),* $(,)?) => {$(
        mod $module {
            use super::*;

            fn make() -> Queue {
                let q: Queue = $make;
                q
            }

            #[test]
            fn two_posts_one_take() {
                super::two_posts_one_take(make);
            }

            #[test]
            fn two_takes_one_item() {
                super::two_takes_one_item(make);
            }

            #[test]
            fn post_races_take() {
                super::post_races_take(make);
            }
        }
    )*};
}

loom_suite! {
    global => Arc::new(Global::new(2)),
    distributed_fcfs => Arc::new(DistributedFcfs::new(2)),
    multi_access => Arc::new(MultiAccess::with_config(2, MultiAccessConfig {
        client: ClientPolicy::Static,
        scheduler: SchedulerPolicy::Sequential,
        mailboxes: 64,
        bidirectional: true,
    })),
    ddq => Arc::new(Ddq::with_config(2, DdqConfig { per_leaf: 1, capacity: 2, trees: 1 })),
    ddq_shared_leaf => Arc::new(Ddq::with_config(2, DdqConfig { per_leaf: 2, capacity: 2, trees: 1 })),
    mach => Arc::new(MachRunQueue::new(2)),
    per_core => Arc::new(PerCore::with_injection_lanes(2, 2)),
    per_core_one_injection_lane => Arc::new(PerCore::with_injection_lanes(2, 1)),
    per_core_two_slot_rings => Arc::new(PerCore::with_injection(2, 2, 2)),
}
