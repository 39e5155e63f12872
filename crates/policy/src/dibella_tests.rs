//! Tests of DiBella's pure decisions: Table 3's pairs, queue choice, search orders, mailbox scans.

use super::*;

#[test]
fn table3_pairs() {
    assert!(check_pair(
        SchedulerPolicy::Sequential,
        ClientPolicy::PrimaryRandom { cutoff: 10 }
    )
    .is_ok());
    assert!(check_pair(SchedulerPolicy::Global, ClientPolicy::Global).is_ok());
    assert!(check_pair(SchedulerPolicy::DistributedFcfs, ClientPolicy::RandomFcfs).is_ok());
    let e = check_pair(SchedulerPolicy::Global, ClientPolicy::Random).unwrap_err();
    assert_eq!(e.compatible, vec![ClientPolicy::Global]);
    let text = e.to_string();
    assert!(
        text.contains("`global`") && text.contains("`random`"),
        "{text}"
    );
    let e = check_pair(SchedulerPolicy::DistributedFcfs, ClientPolicy::Static).unwrap_err();
    assert!(e.to_string().contains("static-fcfs, random-fcfs"), "{e}");
    let e = check_pair(SchedulerPolicy::Static, ClientPolicy::StaticFcfs).unwrap_err();
    assert_eq!(e.compatible.len(), 5);
}

#[test]
fn names_round_trip() {
    for s in SchedulerPolicy::ALL {
        assert_eq!(SchedulerPolicy::parse(s.name()), Some(s));
    }
    for c in ClientPolicy::all(7) {
        assert_eq!(ClientPolicy::parse(c.name(), 7), Some(c));
    }
    assert_eq!(SchedulerPolicy::parse("fifo"), None);
}

#[test]
fn static_clients_spread_equitably() {
    // 13 clients on 3 queues: one queue gets 5, the others 4 (footnote 4).
    let mut counts = [0; 3];
    for c in 0..13 {
        counts[client_queue(ClientPolicy::Static, c, 0, 3, 0, 0)] += 1;
    }
    counts.sort();
    assert_eq!(counts, [4, 4, 5]);
}

#[test]
fn sequential_client_walks_from_its_start() {
    let q: Vec<usize> = (0..4)
        .map(|k| client_queue(ClientPolicy::Sequential, 2, k, 3, 0, 0))
        .collect();
    assert_eq!(q, vec![2, 0, 1, 2]);
}

#[test]
fn primary_policies_leave_a_full_primary_for_a_distinct_queue() {
    let p = ClientPolicy::PrimaryRandom { cutoff: 4 };
    assert_eq!(client_queue(p, 1, 0, 3, 3, 99), 1);
    for draw in 0..50 {
        let q = client_queue(p, 1, 0, 3, 4, draw);
        assert_ne!(q, 1);
        assert!(q < 3);
    }
    let f = ClientPolicy::PrimaryFixed { cutoff: 4 };
    let s1 = client_queue(f, 1, 0, 3, 9, 1);
    let s2 = client_queue(f, 1, 5, 3, 9, 77);
    assert_eq!(s1, s2, "a fixed secondary does not move");
    assert_ne!(s1, 1);
    // Clients sharing a primary get different fixed secondaries.
    assert_ne!(client_fixed_secondary(1, 3), client_fixed_secondary(4, 3));
}

#[test]
fn random_other_is_uniform_over_the_others() {
    let mut seen = [0; 4];
    for d in 0..300 {
        seen[other_queue(2, 4, d)] += 1;
    }
    assert_eq!(seen, [100, 100, 0, 100]);
    assert_eq!(other_queue(0, 1, 5), 0);
}

fn order(
    p: SchedulerPolicy,
    me: usize,
    n: usize,
    cursor: usize,
    draw: u64,
) -> Vec<(usize, Direction)> {
    SearchOrder::new(p, me, n, cursor, draw, true).collect()
}

#[test]
fn search_orders() {
    use Direction::*;
    use SchedulerPolicy::*;
    assert_eq!(order(Static, 1, 4, 0, 0), vec![(1, LeftToRight)]);
    assert_eq!(order(Random, 1, 4, 0, 6), vec![(2, RightToLeft)]);
    assert_eq!(order(Random, 1, 4, 0, 5), vec![(1, LeftToRight)]);
    assert_eq!(
        order(PrimaryFixed, 3, 4, 0, 0),
        vec![(3, LeftToRight), (0, RightToLeft)]
    );
    assert_eq!(
        order(PrimarySequential, 1, 4, 3, 0),
        vec![
            (1, LeftToRight),
            (2, RightToLeft),
            (3, RightToLeft),
            (0, RightToLeft)
        ]
    );
    // Sequential resumes at the remembered queue and never revisits its own.
    assert_eq!(
        order(Sequential, 1, 4, 3, 0),
        vec![
            (1, LeftToRight),
            (3, RightToLeft),
            (0, RightToLeft),
            (2, RightToLeft)
        ]
    );
    let pr = order(PrimaryRandom, 0, 3, 0, 1);
    assert_eq!(pr.len(), 2);
    assert_ne!(pr[1].0, 0);
    // Without bidirectional search everything goes left to right.
    assert!(SearchOrder::new(Sequential, 0, 3, 0, 0, false).all(|(_, d)| d == LeftToRight));
    // One queue: only the primary.
    assert_eq!(order(Sequential, 0, 1, 0, 0), vec![(0, LeftToRight)]);
}

#[test]
fn remembered_index_moves_past_the_last_serviced() {
    use Direction::*;
    let bm = [0b1001_0010u64, 0];
    assert_eq!(next_mailbox(&bm, 1, LeftToRight), Some(4));
    assert_eq!(next_mailbox(&bm, 4, LeftToRight), Some(7));
    assert_eq!(next_mailbox(&bm, 7, LeftToRight), Some(1), "wraps around");
    assert_eq!(next_mailbox(&bm, 7, RightToLeft), Some(4));
    assert_eq!(
        next_mailbox(&bm, 1, RightToLeft),
        Some(7),
        "wraps around downwards"
    );
    let hi = [0u64, 1 << 63];
    assert_eq!(next_mailbox(&hi, 0, LeftToRight), Some(127));
    assert_eq!(next_mailbox(&hi, 0, RightToLeft), Some(127));
    assert_eq!(next_mailbox(&[0, 0], 5, LeftToRight), None);
    assert_eq!(
        next_mailbox(&[1], 0, LeftToRight),
        Some(0),
        "the only request, again"
    );
}

proptest::proptest! {
    #[test]
    fn next_mailbox_finds_the_nearest_set_bit(words in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..4), last in 0usize..256, fwd in proptest::prelude::any::<bool>()) {
        let total = words.len() * 64;
        let dir = if fwd { Direction::LeftToRight } else { Direction::RightToLeft };
        let got = next_mailbox(&words, last, dir);
        let set = |i: usize| words[i / 64] >> (i % 64) & 1 == 1;
        let last = last % total;
        let expected = (1..=total).map(|k| if fwd { (last + k) % total } else { (last + total * 2 - k) % total }).find(|&i| set(i));
        proptest::prop_assert_eq!(got, expected);
    }

    #[test]
    fn client_queues_are_in_range(c in 0usize..100, seq in 0u64..1000, n in 1usize..17, len in 0usize..50, draw in proptest::prelude::any::<u64>()) {
        for p in ClientPolicy::all(10) {
            let q = client_queue(p, c, seq, n, len, draw);
            proptest::prop_assert!(q < n);
        }
    }

    #[test]
    fn search_orders_visit_queues_at_most_once(p in 0usize..8, me in 0usize..16, n in 1usize..17, cursor in 0usize..32, draw in proptest::prelude::any::<u64>()) {
        let me = me % n;
        let v: Vec<usize> = SearchOrder::new(SchedulerPolicy::ALL[p], me, n, cursor, draw, true).map(|x| x.0).collect();
        let mut s = v.clone();
        s.sort();
        s.dedup();
        proptest::prop_assert_eq!(s.len(), v.len());
        proptest::prop_assert!(v.iter().all(|&q| q < n));
    }
}

#[test]
fn bits_examined_counts_from_the_bit_after_last_in_the_search_direction() {
    use Direction::{LeftToRight as L, RightToLeft as R};
    assert_eq!(bits_examined(32, 4, Some(5), L), 1, "the next bit");
    assert_eq!(bits_examined(32, 4, Some(9), L), 5);
    assert_eq!(
        bits_examined(32, 30, Some(1), L),
        3,
        "31, 0, 1: wraps round"
    );
    assert_eq!(
        bits_examined(32, 4, Some(4), L),
        32,
        "all the way round to last itself"
    );
    assert_eq!(bits_examined(32, 4, Some(3), R), 1);
    assert_eq!(bits_examined(32, 0, Some(30), R), 2, "31, 30: wraps round");
    assert_eq!(
        bits_examined(32, 7, None, L),
        32,
        "an empty bitmap: every bit"
    );
    assert_eq!(bits_examined(32, 7, None, R), 32);
}

#[test]
fn bits_examined_agrees_with_a_walk_bit_by_bit() {
    // The bits a search visits one at a time, counted by walking them, against the closed form
    // and against next_mailbox's answer, for every start, direction and a spread of bitmaps.
    let n = 32usize;
    let maps = [
        0u64,
        1,
        1 << 31,
        0b1010_0000,
        0xF0F0_0F0F,
        0xFFFF_FFFF,
        0x8000_0001,
    ];
    for &bm in &maps {
        for last in 0..n {
            for dir in [Direction::LeftToRight, Direction::RightToLeft] {
                let step = |i: usize| match dir {
                    Direction::LeftToRight => (i + 1) % n,
                    Direction::RightToLeft => (i + n - 1) % n,
                };
                let (mut i, mut walked, mut found) = (last, 0, None);
                while walked < n {
                    i = step(i);
                    walked += 1;
                    if bm >> i & 1 == 1 {
                        found = Some(i);
                        break;
                    }
                }
                assert_eq!(
                    next_mailbox(&[bm], last, dir),
                    found,
                    "{bm:#x} {last} {dir:?}"
                );
                assert_eq!(
                    bits_examined(n, last, found, dir),
                    walked,
                    "{bm:#x} {last} {dir:?}"
                );
            }
        }
    }
}
