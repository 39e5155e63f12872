//! One conformance suite run over every structure (the `conformance!` macro instantiates it per
//! structure, like tokio's `rt_test!`): single-threaded behaviour, affinity, a small concurrent
//! run, and proptest sequences of operations against a sequential model.

mod common;

use std::collections::BTreeMap;

use common::{drain, honours_masks, makers, producers_consumers, Maker};
use proptest::prelude::*;
use smpsched_queues::{Affinity, Client, Post, PostError, Take};

fn maker(name: &str) -> Maker {
    makers()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, m)| m)
        .expect("a known structure")
}

fn empty_takes_are_empty(name: &str) {
    let q = maker(name)(3);
    for w in 0..3 {
        assert!(q.take(w).is_empty(), "{name}");
        assert!(!q.has_work_for(w), "{name}");
    }
    assert_eq!(q.len_hint(), 0);
}

fn every_item_comes_out_once(name: &str) {
    let q = maker(name)(3);
    let mut clients: Vec<Client> = (0..5).map(Client::new).collect();
    let mut got: Vec<u64> = Vec::new();
    let mut inside = 0;
    for i in 0..120u64 {
        let c = &mut clients[i as usize % 5];
        match q.post(c, i, Post::default()) {
            Ok(_) => inside += 1,
            Err(PostError::Full(x)) => {
                // A bounded structure: empty it and post again.
                assert!(inside > 0, "{name}: full while empty");
                got.extend(drain(&q).into_iter().map(|(_, x)| x));
                inside = 0;
                let _ = q.post(c, x, Post::default()).expect("room after a drain");
                inside += 1;
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    assert_eq!(q.len_hint(), inside, "{name}");
    assert!((0..3).any(|w| q.has_work_for(w)), "{name}");
    got.extend(drain(&q).into_iter().map(|(_, x)| x));
    got.sort();
    assert_eq!(got, (0..120).collect::<Vec<_>>(), "{name}");
    assert!((0..3).all(|w| !q.has_work_for(w)), "{name}");
}

fn worker_posts_come_back(name: &str) {
    // A worker posting its own work (tasks spawning tasks) finds it again.
    let q = maker(name)(2);
    let mut me = Client::worker(1);
    let _ = q.post(&mut me, 7, Post::default()).unwrap();
    let got = drain(&q);
    assert_eq!(
        got.iter().map(|x| x.1).collect::<Vec<_>>(),
        vec![7],
        "{name}"
    );
}

fn masks_are_honoured_or_refused(name: &str) {
    let q = maker(name)(3);
    let mut c = Client::new(0);
    let r = q.post(&mut c, 1, Post::default().affinity(Affinity::only(2)));
    if honours_masks(name) {
        assert!(r.is_ok(), "{name}");
        assert!(
            q.take(0).is_empty() && q.take(1).is_empty(),
            "{name}: only worker 2 may run it"
        );
        assert_eq!(q.take(2), Take::Item(1), "{name}");
        let r = q.post(&mut c, 2, Post::default().affinity(Affinity(1 << 5)));
        assert!(
            matches!(r, Err(PostError::Unsupported { .. })),
            "{name}: mask outside the workers"
        );
        // A worker past the 64 a structure may have names no worker, not another one's bit
        // (it shifted past 64 bits: a panic in debug builds, worker 1 for 65 in release).
        for w in [64, 65, 1000] {
            assert_eq!(Affinity::only(w), Affinity(0));
            let r = q.post(&mut c, 3, Post::default().affinity(Affinity::only(w)));
            assert!(
                matches!(r, Err(PostError::Unsupported { .. })),
                "{name}: worker {w}"
            );
        }
    } else {
        match r {
            Err(PostError::Unsupported { item, .. }) => assert_eq!(item, 1),
            other => panic!("{name}: a narrow mask must be refused, got {other:?}"),
        }
        assert_eq!(q.len_hint(), 0);
    }
}

fn small_concurrent_run(name: &str) {
    producers_consumers(maker(name), name, 2, 3, 20_000);
}

/// An operation of the sequential model: post a fresh item from a client (with a priority and
/// maybe a mask), or take for a worker.
#[derive(Clone, Debug)]
enum Op {
    Post {
        client: usize,
        priority: u8,
        narrow: Option<usize>,
    },
    Take {
        worker: usize,
    },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            (0usize..4, 0u8..40, prop::option::weighted(0.2, 0usize..3)).prop_map(
                |(client, priority, narrow)| Op::Post {
                    client,
                    priority,
                    narrow
                }
            ),
            (0usize..3).prop_map(|worker| Op::Take { worker }),
        ],
        0..200,
    )
}

/// Runs `ops` against the structure and a model (the multiset of items inside, with their
/// priority and mask): every take returns an item inside, allowed to its worker; the global
/// queue is exactly FIFO; Mach's global queue gives the highest priority first; at the end a
/// drain returns exactly what the model holds.
fn against_model(name: &str, ops: &[Op]) -> Result<(), TestCaseError> {
    let q = maker(name)(3);
    let mut clients: Vec<Client> = (0..4).map(Client::new).collect();
    let mut inside: BTreeMap<u64, (u8, u64)> = BTreeMap::new();
    let mut next = 0u64;
    for op in ops {
        match *op {
            Op::Post {
                client,
                priority,
                narrow,
            } => {
                let mut how = Post::default().priority(priority);
                if let Some(w) = narrow {
                    how = how.affinity(Affinity::only(w));
                }
                let mask = narrow.map_or(0b111, |w| 1 << w);
                match q.post(&mut clients[client], next, how) {
                    Ok(_) => {
                        inside.insert(next, (priority.min(31), mask));
                    }
                    Err(PostError::Full(x)) => prop_assert_eq!(x, next),
                    Err(PostError::Unsupported { item, .. }) => {
                        prop_assert!(narrow.is_some() && !honours_masks(name));
                        prop_assert_eq!(item, next);
                    }
                }
                next += 1;
            }
            Op::Take { worker } => match q.take(worker) {
                Take::Item(x) => {
                    let Some((prio, mask)) = inside.remove(&x) else {
                        return Err(TestCaseError::fail(format!("{name}: took {x}, not inside")));
                    };
                    prop_assert!(mask >> worker & 1 == 1, "{}: mask violated", name);
                    if name == "global" {
                        prop_assert!(inside.keys().all(|&k| k > x), "global is FIFO");
                    }
                    if name == "mach" && mask == 0b111 {
                        // Taken from the global queue, so the local one was empty and no
                        // global item has a higher priority (a lower number) or is older at
                        // the same level.
                        for (&k, &(p, m)) in &inside {
                            if m == 0b111 {
                                prop_assert!(
                                    p > prio || (p == prio && k > x),
                                    "mach priority order"
                                );
                            } else {
                                prop_assert!(m >> worker & 1 == 0, "mach: local queue first");
                            }
                        }
                    }
                }
                Take::Empty | Take::Retry => {}
            },
        }
        prop_assert_eq!(q.len_hint(), inside.len());
    }
    let mut rest: Vec<u64> = drain(&q).into_iter().map(|(_, x)| x).collect();
    rest.sort();
    prop_assert_eq!(rest, inside.keys().copied().collect::<Vec<_>>());
    Ok(())
}

macro_rules! conformance {
    ($($module:ident => $name:literal),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn empty_takes_are_empty() {
                super::empty_takes_are_empty($name);
            }

            #[test]
            fn every_item_comes_out_once() {
                super::every_item_comes_out_once($name);
            }

            #[test]
            fn worker_posts_come_back() {
                super::worker_posts_come_back($name);
            }

            #[test]
            fn masks_are_honoured_or_refused() {
                super::masks_are_honoured_or_refused($name);
            }

            #[test]
            fn small_concurrent_run() {
                super::small_concurrent_run($name);
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(64))]
                #[test]
                fn sequences_match_the_model(ops in ops()) {
                    against_model($name, &ops)?;
                }
            }
        }
    )*};
}

conformance! {
    global => "global",
    distributed_fcfs => "distributed-fcfs",
    distributed_fcfs_static => "distributed-fcfs-static",
    multi_access => "multi-access",
    multi_access_static_static => "multi-access-static-static",
    multi_access_random_random => "multi-access-random-random",
    multi_access_fixed_fixed => "multi-access-fixed-fixed",
    multi_access_pseq_seq => "multi-access-pseq-seq",
    multi_access_prand_prand => "multi-access-prand-prand",
    ddq => "ddq",
    ddq_shared_leaves_two_trees => "ddq-shared-leaves-two-trees",
    mach => "mach",
    per_core => "per-core",
    per_core_one_injection_lane => "per-core-one-injection-lane",
    per_core_two_slot_rings => "per-core-two-slot-rings",
}

#[test]
fn every_structure_is_in_the_suite() {
    // The macro above must list every maker: a structure added to `makers()` and not here fails.
    assert_eq!(makers().len(), 15);
}

#[test]
#[should_panic(expected = "a leaf's capacity is at most")]
fn a_ddq_refuses_a_capacity_its_counts_cannot_hold() {
    // Past 2^62 the D fields' sums overflowed (a panic when adding, or every post refused).
    use smpsched_queues::ddq::{Ddq, DdqConfig};
    let config = DdqConfig {
        per_leaf: 1,
        capacity: 1 << 62,
        trees: 1,
    };
    let _ = Ddq::<u8>::with_config(4, config);
}

#[test]
#[should_panic(expected = "a power of two from 2 to 2^24")]
fn per_core_injection_lanes_have_a_stated_bound() {
    let _ = smpsched_queues::percore::PerCore::<u8>::with_injection(1, 1, 1 << 60);
}
