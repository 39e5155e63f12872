//! George 1990, section 2.1's correctness argument checked over randomized interleavings of the
//! simulated DDQ protocols (one operation of one processor at a time, on a word memory): every
//! node's N never exceeds the items that can still be inserted below it; an insert that passes
//! a root always finds a slot; no item is lost or duplicated. And the starvation case of
//! Figure 4, constructed step by step, resolved by going back to the refilled branch.

use std::rc::Rc;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use smpsched_sim::readyq::ddq::{DdqInsert, DdqRemove, GeorgeLayout, Inserted, Scheme, Tuning};
use smpsched_sim::readyq::dual::{Ascend, Backoff};
use smpsched_sim::readyq::{Step, TestMemory};
use smpsched_sim::{Op, Outcome};

fn layout(workers: usize, q: usize, trees: usize) -> Rc<GeorgeLayout> {
    let mut next = 1u64 << 20;
    let mut alloc = |bytes: u64, _p: usize| {
        let b = next;
        next += bytes.div_ceil(4096) * 4096;
        b
    };
    Rc::new(GeorgeLayout::trees(workers, q, trees, &mut alloc))
}

fn tuning(ascend: Ascend, local_first: bool) -> Tuning {
    Tuning {
        backoff: Backoff {
            base: 4,
            max_exp: 4,
            seed: 1,
        },
        pause: 4,
        ascend,
        local_first,
        once: false,
    }
}

/// Section 2.1's invariant: N at every node <= the free slots plus waiting processors below it.
fn check_invariant(l: &GeorgeLayout, m: &TestMemory) {
    let Scheme::Trees(trees) = &l.scheme else {
        unreachable!()
    };
    for t in trees {
        let mut room = vec![0i64; 2 * t.leaves];
        for (leaf, q) in t.queues.iter().enumerate() {
            room[t.leaves + leaf] = q.capacity() as i64 - m.get(q.count()) as i64;
        }
        for k in (1..t.leaves).rev() {
            room[k] = room[2 * k] + room[2 * k + 1];
        }
        for (k, &room) in room.iter().enumerate().skip(1) {
            let n = t.n_of(k, m.get(t.n[k]));
            assert!(n <= room, "node {k}: N = {n} > {room} insertable");
            assert!(
                n <= t.d[k] + t.workers as i64,
                "node {k}: N = {n} beyond D + waiters"
            );
        }
    }
}

enum Agent {
    Producer {
        next: u64,
        last: u64,
        ins: Option<DdqInsert>,
    },
    Consumer(Option<DdqRemove>),
}

/// Half the processors insert `items` each (retrying when every root shows N = 0), half remove,
/// and producers remove too once done (so items left at their home leaves are drained); one
/// operation of a random processor at a time. Returns the items received, in order.
fn run(workers: usize, q: usize, trees: usize, items: u64, t: Tuning, seed: u64) -> Vec<u64> {
    let l = layout(workers, q, trees);
    let mut m = TestMemory::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let producers = workers / 2;
    let mut agents: Vec<Agent> = (0..workers)
        .map(|w| {
            if w < producers {
                let first = 1 + w as u64 * items;
                Agent::Producer {
                    next: first,
                    last: first + items,
                    ins: None,
                }
            } else {
                Agent::Consumer(None)
            }
        })
        .collect();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; workers];
    let total = producers as u64 * items;
    let mut got = Vec::new();
    let mut steps = 0u64;
    while (got.len() as u64) < total {
        steps += 1;
        assert!(steps < 5_000_000, "no progress");
        let w = rng.random_range(0..workers);
        let o = outcomes[w].take();
        let step = match &mut agents[w] {
            Agent::Producer { next, last, ins } => {
                if *next == *last {
                    agents[w] = Agent::Consumer(None);
                    continue;
                }
                let p = ins.get_or_insert_with(|| DdqInsert::new(&l, w, *next, w, t));
                match p.resume(o.as_ref()) {
                    Step::Op(op) => Some(op),
                    Step::Done(r) => {
                        if r == Inserted::Failed {
                            assert!(!p.reserved(), "an insert past a root found no slot");
                        } else {
                            *next += 1;
                        }
                        *ins = None;
                        None
                    }
                }
            }
            Agent::Consumer(rem) => {
                let p = rem.get_or_insert_with(|| DdqRemove::new(&l, w, t));
                match p.resume(o.as_ref()) {
                    Step::Op(op) => Some(op),
                    Step::Done(item) => {
                        got.push(item);
                        *rem = None;
                        None
                    }
                }
            }
        };
        if let Some(op) = step {
            if !matches!(op, Op::Compute(_)) {
                outcomes[w] = m.apply(&op);
            }
            check_invariant(&l, &m);
        }
    }
    got
}

fn assert_exactly_once(mut got: Vec<u64>, total: u64) {
    got.sort_unstable();
    let want: Vec<u64> = (1..=total).collect();
    assert_eq!(got, want, "items lost or duplicated");
}

#[test]
fn producer_consumer_keeps_the_invariant_and_every_item() {
    // 8 processors, one per leaf (H = 3); 2 per leaf; two trees; lazy ascends and local-first.
    for (q, trees, ascend, local) in [
        (1, 1, Ascend::Eager, false),
        (1, 2, Ascend::LastData, false),
        (2, 1, Ascend::LastData, true),
        (4, 1, Ascend::FirstWaiter, true),
    ] {
        let got = run(8, q, trees, 100, tuning(ascend, local), 7);
        assert_exactly_once(got, 4 * 100);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn randomized_interleavings_keep_the_invariant(
        workers in 2usize..12,
        q in 1usize..4,
        trees in 1usize..3,
        ascend in 0u8..3,
        local in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let ascend = [Ascend::Eager, Ascend::LastData, Ascend::FirstWaiter][ascend as usize];
        let got = run(workers, q, trees.min(workers / 2).max(1), 30, tuning(ascend, local), seed);
        assert_exactly_once(got, (workers / 2) as u64 * 30);
    }
}

fn drive_remove(l: &Rc<GeorgeLayout>, m: &mut TestMemory, w: usize, t: Tuning) -> u64 {
    let mut r = DdqRemove::new(l, w, t);
    m.drive(|o| r.resume(o)).0
}

#[test]
fn figure_4_a_lost_branch_is_resolved_by_going_back() {
    // Two leaves of one processor each (H = 1), q = 1: root D = 2.
    let l = layout(2, 1, 1);
    let Scheme::Trees(trees) = &l.scheme else {
        unreachable!()
    };
    let t = trees[0].clone();
    let n = |m: &TestMemory, k: usize| t.n_of(k, m.get(t.n[k]));
    let mut m = TestMemory::default();
    let tu = tuning(Ascend::Eager, false);
    // Both leaves full: every N is 0.
    for item in [2u64, 3] {
        let mut i = DdqInsert::new(&l, 0, item, 0, tu);
        assert_eq!(m.drive(|o| i.resume(o)).0, Inserted::Buffered);
    }
    assert_eq!((n(&m, 1), n(&m, 2), n(&m, 3)), (0, 0, 0));
    // The right processor takes its item: N(right) = N(root) = 1.
    drive_remove(&l, &mut m, 1, tu);
    // (a) X reserves the root (1 -> 0), reads the children (left 0, right 1) and is about to
    // reserve the right one: it is delayed there.
    let mut x = DdqInsert::new(&l, 0, 0b10, 0, tu);
    let mut xo = None;
    let pending = loop {
        match x.resume(xo.as_ref()) {
            Step::Op(
                op @ Op::Word {
                    addr,
                    op: smpsched_sim::WordOp::FetchAdd(_),
                },
            ) if addr == t.n[3] => break op,
            Step::Op(op) => xo = m.apply(&op),
            Step::Done(r) => panic!("X finished early: {r:?}"),
        }
    };
    assert_eq!(n(&m, 1), 0, "X holds the root's last reservation");
    // (b)-(d) Meanwhile the left processor takes its item (left and root back to 1), and P's
    // insert goes through the root and takes the right leaf's slot that X had seen.
    drive_remove(&l, &mut m, 0, tu);
    let mut p = DdqInsert::new(&l, 1, 0b0, 0, tu); // bit 0 clear: prefers Right
    assert_eq!(m.drive(|o| p.resume(o)).0, Inserted::Buffered);
    assert_eq!(n(&m, 3), 0);
    // X's reservation of the right child now fails; it undoes it, goes back, re-reads both
    // children and descends the refilled left branch.
    xo = m.apply(&pending);
    let mut first = Some(xo);
    let (res, _) = m.drive(|o| match first.take() {
        Some(xo) => x.resume(xo.as_ref()),
        None => x.resume(o),
    });
    assert_eq!(res, Inserted::Buffered);
    assert!(x.retries >= 1, "X went back");
    assert_eq!((n(&m, 1), n(&m, 2), n(&m, 3)), (0, 0, 0));
    check_invariant(&l, &m);
    // Both leaves hold an item again, and the next remove of each gets one.
    assert_eq!(drive_remove(&l, &mut m, 0, tu), 0b10);
    assert_eq!(drive_remove(&l, &mut m, 1, tu), 0b0);
}
