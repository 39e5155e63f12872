//! Pull migration: which queue an idle worker takes work from (Weibel, per-core run queues with
//! pull migration and affinity sets).
//!
//! An idle worker pulls from the busiest queue among those holding something it may run. The
//! decision is a pure function of queue lengths and a bitmask of eligible queues; ties go to the
//! first queue after the puller's own index, so that pullers spread over equal victims. A pull
//! moves half the imbalance ([`pull_batch`]), so that one lock acquisition serves many items.

/// The queue an idle worker `me` should pull from: the longest of the queues whose bit is set in
/// `eligible` (bit q for queue q; the puller's own queue is never chosen), `None` when all are
/// empty. Ties go to the nearest queue after `me` (cyclically).
pub fn pull_victim(lengths: &[usize], eligible: u64, me: usize) -> Option<usize> {
    pull_victim_where(lengths, |q| q < 64 && eligible >> q & 1 == 1, me)
}

/// [`pull_victim`] over any number of queues: `eligible(q)` says whether queue q holds something
/// the puller may run.
pub fn pull_victim_where(
    lengths: &[usize],
    eligible: impl Fn(usize) -> bool,
    me: usize,
) -> Option<usize> {
    let n = lengths.len();
    let mut best: Option<(usize, usize)> = None;
    for k in 1..n {
        let q = (me + k) % n;
        let len = lengths[q];
        if len > 0 && best.is_none_or(|(_, b)| len > b) && eligible(q) {
            best = Some((q, len));
        }
    }
    best.map(|(q, _)| q)
}

/// Push migration at preemption (Weibel): the queue a thread leaving core `me` should go to
/// instead of its own — the shortest eligible queue, if it is at least `threshold` shorter than
/// `me`'s (ties to the nearest after `me`); `None` keeps it home.
pub fn push_target(
    lengths: &[usize],
    eligible: impl Fn(usize) -> bool,
    me: usize,
    threshold: usize,
) -> Option<usize> {
    let n = lengths.len();
    let mine = *lengths.get(me)?;
    let mut best: Option<(usize, usize)> = None;
    for k in 1..n {
        let q = (me + k) % n;
        let len = lengths[q];
        if best.is_none_or(|(_, b)| len < b) && eligible(q) {
            best = Some((q, len));
        }
    }
    best.filter(|&(_, len)| mine >= len.saturating_add(threshold.max(1)))
        .map(|(q, _)| q)
}

/// The most items one pull moves.
pub const MAX_PULL: usize = 32;

/// How many items a pull moves from a victim of length `victim` to a puller of length `own`:
/// half the difference, rounded up, at least one and at most [`MAX_PULL`] (0 when the victim
/// is not longer than the puller).
pub fn pull_batch(victim: usize, own: usize) -> usize {
    if victim <= own {
        return 0;
    }
    (victim - own).div_ceil(2).clamp(1, MAX_PULL)
}

/// How often a worker looks at the injection lanes (work posted from outside the workers) before
/// its own queue: on every `INJECTION_CHECK_EVERY`-th take. Go's scheduler does the same with its
/// global run queue on every 61st schedule, so that outside work is not starved by the work the
/// workers spawn for themselves.
pub const INJECTION_CHECK_EVERY: u64 = 61;

/// Whether a worker's `take`-th take (counting from 0) looks at the injection lanes first.
pub fn injected_first(take: u64) -> bool {
    take % INJECTION_CHECK_EVERY == INJECTION_CHECK_EVERY - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_moves_half_the_imbalance() {
        assert_eq!(pull_batch(1, 0), 1);
        assert_eq!(pull_batch(9, 0), 5);
        assert_eq!(pull_batch(9, 3), 3);
        assert_eq!(pull_batch(3, 3), 0);
        assert_eq!(pull_batch(1000, 0), MAX_PULL);
    }

    #[test]
    fn busiest_eligible_queue_wins() {
        assert_eq!(pull_victim(&[0, 3, 7, 2], u64::MAX, 0), Some(2));
        assert_eq!(
            pull_victim(&[0, 3, 7, 2], 0b1010, 0),
            Some(1),
            "queue 2 is not eligible"
        );
        assert_eq!(
            pull_victim(&[9, 0, 0], u64::MAX, 0),
            None,
            "never the own queue"
        );
        assert_eq!(pull_victim(&[0, 0, 0], u64::MAX, 1), None);
    }

    #[test]
    fn push_goes_to_a_sufficiently_emptier_queue() {
        let all = |_| true;
        assert_eq!(push_target(&[5, 3, 1, 1], all, 0, 2), Some(2));
        assert_eq!(
            push_target(&[2, 1, 1, 1], all, 0, 2),
            None,
            "not emptier enough"
        );
        assert_eq!(push_target(&[5, 3, 1, 1], |q| q != 2, 0, 2), Some(3));
        assert_eq!(push_target(&[5], all, 0, 1), None);
        assert_eq!(
            pull_victim_where(&[0, 3, 7, 2], |q| q != 2, 0),
            pull_victim(&[0, 3, 7, 2], 0b1010, 0)
        );
    }

    #[test]
    fn outside_work_comes_first_once_in_61_takes() {
        let first: Vec<u64> = (0..200).filter(|&t| injected_first(t)).collect();
        assert_eq!(first, vec![60, 121, 182]);
    }

    #[test]
    fn ties_go_to_the_next_queue_after_the_puller() {
        assert_eq!(pull_victim(&[4, 4, 4, 4], u64::MAX, 1), Some(2));
        assert_eq!(pull_victim(&[4, 4, 4, 4], u64::MAX, 3), Some(0));
    }

    proptest::proptest! {
        #[test]
        fn victim_is_eligible_nonempty_and_maximal(lens in proptest::collection::vec(0usize..10, 1..20), elig in proptest::prelude::any::<u64>(), me in 0usize..20) {
            let me = me % lens.len();
            match pull_victim(&lens, elig, me) {
                Some(q) => {
                    proptest::prop_assert!(q != me && elig >> q & 1 == 1 && lens[q] > 0);
                    for (i, &l) in lens.iter().enumerate() {
                        if i != me && elig >> i & 1 == 1 { proptest::prop_assert!(l <= lens[q]); }
                    }
                }
                None => {
                    for (i, &l) in lens.iter().enumerate() {
                        proptest::prop_assert!(i == me || elig >> i & 1 == 0 || l == 0);
                    }
                }
            }
        }
    }
}
