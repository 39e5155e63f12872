//! loom models of the ring alone: posters and takers at 2-3 threads, all interleavings up to a
//! preemption bound, with loom checking every access to a slot's item against the sequence
//! protocol (a write not ordered before the read of the same item fails the model). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p smpsched-ring --release --test loom` (in its own target
//! directory).

#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use smpsched_ring::Ring;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// Takes until `n` items came out (spinning while the next is being written).
fn take_n(r: &Ring<u32>, n: usize, most: usize) -> Vec<u32> {
    let mut got = Vec::new();
    while got.len() < n {
        match r.claim(most) {
            Some(c) => {
                let mut rest = Vec::new();
                got.push(r.take(c, &mut rest));
                got.extend(rest);
            }
            None => thread::yield_now(),
        }
    }
    got
}

fn push_all(r: &Ring<u32>, items: impl IntoIterator<Item = u32>) {
    for mut x in items {
        while let Err(back) = r.push(x) {
            x = back;
            thread::yield_now();
        }
    }
}

#[test]
fn a_taker_sees_what_one_poster_published_in_order() {
    model(|| {
        let r = Arc::new(Ring::new(4));
        let p = {
            let r = r.clone();
            thread::spawn(move || push_all(&r, [1, 2]))
        };
        assert_eq!(take_n(&r, 2, 1), [1, 2]);
        p.join().unwrap();
    });
}

#[test]
fn a_slot_is_reused_only_after_its_taker_emptied_it() {
    model(|| {
        let r = Arc::new(Ring::new(2));
        let p = {
            let r = r.clone();
            thread::spawn(move || push_all(&r, [1, 2, 3]))
        };
        assert_eq!(take_n(&r, 3, 0), [1, 2, 3]);
        p.join().unwrap();
    });
}

#[test]
fn two_posters_and_two_takers_hand_over_each_item_once() {
    model(|| {
        let r = Arc::new(Ring::new(2));
        let posters: Vec<_> = [1, 2]
            .map(|x| {
                let r = r.clone();
                thread::spawn(move || push_all(&r, [x]))
            })
            .into_iter()
            .collect();
        let taker = {
            let r = r.clone();
            thread::spawn(move || {
                let mut got = Vec::new();
                if let Some(c) = r.claim(1) {
                    let first = r.take(c, &mut got);
                    got.push(first);
                }
                got
            })
        };
        for p in posters {
            p.join().unwrap();
        }
        let mut all = taker.join().unwrap();
        all.extend(take_n(&r, 2 - all.len(), 1));
        all.sort_unstable();
        assert_eq!(all, [1, 2]);
        assert_eq!(r.len(), 0);
    });
}

#[test]
fn items_left_behind_are_dropped_with_the_ring() {
    model(|| {
        let r = Arc::new(Ring::new(2));
        let p = {
            let r = r.clone();
            thread::spawn(move || {
                let _ = r.push(String::from("left"));
            })
        };
        p.join().unwrap();
        drop(r); // its drop reads the item: loom checks that the poster's write came first
    });
}
