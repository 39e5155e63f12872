//! The ready threads of the affinity policy (Gupta, Tucker and Urushibara 1991, section 5.2),
//! kept so that a processor finds its cheapest thread without costing every ready one.
//!
//! A thread's cost on processor p is `T + c * l / ldfactor` with l the time since it left p,
//! capped at 20 slices (`smpsched_policy::affinity`). Every thread that has not left p within
//! the cap costs `T` plus the same constant, so among those the cheapest is the one of least
//! usage: the ready threads are ordered by (usage, the order they became ready), and the first
//! allowed on p that is cold there starts the answer. The threads warm on p are few (those that
//! left it in the last 20 slices), kept per processor in the order they left, and costed one by
//! one. The answer is the thread of least (cost, order), the first of least cost in the order
//! the threads became ready, as a scan of them all would find (debug builds check it does).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ops::Bound;

use crate::ids::{Cycles, ThreadId};

/// The affinity policy's ready threads.
#[derive(Debug, Default)]
pub(crate) struct AffinityQueue {
    /// Every ready thread as (usage when queued or last charged, order, thread).
    cold: BTreeSet<(u64, u64, ThreadId)>,
    /// Each ready thread's key in `cold` (usage, order), by thread.
    queued: Vec<Option<(u64, u64)>>,
    /// The order the next thread made ready takes.
    next: u64,
    /// Per processor, the threads that left it, oldest first, with when. Entries older than
    /// the cap, or overtaken by a later departure of the same thread, are skipped or dropped.
    /// By processor in a map: a large machine's processors mostly have none.
    warm: HashMap<u32, VecDeque<(Cycles, ThreadId)>>,
}

/// What the queue needs to know of the threads to choose for a processor.
pub(crate) struct Costs<'a> {
    /// The cost of running a thread of recent usage `usage` here, `since` cycles after it left
    /// (`None`: it never ran here, or left more than the cap ago). Never less for more usage.
    pub cost: &'a dyn Fn(u64, Option<Cycles>) -> f64,
    /// Whether the thread may run here.
    pub allowed: &'a dyn Fn(ThreadId) -> bool,
    /// When the thread last left this processor.
    pub left: &'a dyn Fn(ThreadId) -> Option<Cycles>,
    /// Now.
    pub now: Cycles,
    /// The time away after which a thread is cold here (20 slices).
    pub cap: Cycles,
}

impl AffinityQueue {
    /// How many threads are ready.
    pub(crate) fn len(&self) -> usize {
        self.cold.len()
    }

    /// Whether no thread is ready.
    pub(crate) fn is_empty(&self) -> bool {
        self.cold.is_empty()
    }

    /// Makes `t`, of recent usage `usage`, ready (after every thread already ready).
    pub(crate) fn push(&mut self, t: ThreadId, usage: u64) {
        if self.queued.len() <= t.index() {
            self.queued.resize(t.index() + 1, None);
        }
        let order = self.next;
        self.next += 1;
        self.queued[t.index()] = Some((usage, order));
        self.cold.insert((usage, order, t));
    }

    /// Takes `t` off the ready threads; `false` if it was not ready.
    pub(crate) fn remove(&mut self, t: ThreadId) -> bool {
        match self.queued.get_mut(t.index()).and_then(Option::take) {
            Some((usage, order)) => self.cold.remove(&(usage, order, t)),
            None => false,
        }
    }

    /// Ready thread `t`'s usage is now `usage` (charged, or decayed); its order is kept.
    pub(crate) fn set_usage(&mut self, t: ThreadId, usage: u64) {
        if let Some(Some((old, order))) = self.queued.get_mut(t.index()) {
            if *old != usage {
                self.cold.remove(&(*old, *order, t));
                self.cold.insert((usage, *order, t));
                *old = usage;
            }
        }
    }

    /// Every ready thread's usage is now `usage[t]` (after a decay), their order kept.
    pub(crate) fn set_all_usage(&mut self, usage: &[u64]) {
        let keys: Vec<_> = std::mem::take(&mut self.cold).into_iter().collect();
        self.cold = keys
            .into_iter()
            .map(|(_, order, t)| {
                let u = usage[t.index()];
                self.queued[t.index()] = Some((u, order));
                (u, order, t)
            })
            .collect();
    }

    /// `t` left processor `p` at `now`.
    pub(crate) fn left(&mut self, p: u32, t: ThreadId, now: Cycles) {
        self.warm.entry(p).or_default().push_back((now, t));
    }

    /// The ready thread of least cost on processor `p`, the earliest made ready among equals,
    /// with its cost.
    pub(crate) fn cheapest(&mut self, p: u32, costs: &Costs) -> Option<(ThreadId, f64)> {
        if self.is_empty() {
            return None;
        }
        let mut best: Option<(f64, u64, ThreadId)> = None;
        let mut offer = |c: f64, order: u64, t: ThreadId| {
            if best.is_none_or(|(bc, bo, _)| c < bc || (c == bc && order < bo)) {
                best = Some((c, order, t));
            }
        };
        let warm_since = |t: ThreadId| {
            (costs.left)(t)
                .map(|left| costs.now.saturating_sub(left))
                .filter(|&since| since < costs.cap)
        };
        // The threads warm here: those that left within the cap, each at its last departure.
        if let Some(list) = self.warm.get_mut(&p) {
            while list
                .front()
                .is_some_and(|&(at, _)| costs.now.saturating_sub(at) >= costs.cap)
            {
                list.pop_front();
            }
            if list.is_empty() {
                self.warm.remove(&p);
            } else {
                for &(at, t) in list.iter() {
                    let Some(Some((usage, order))) = self.queued.get(t.index()) else {
                        continue;
                    };
                    if (costs.left)(t) != Some(at) || !(costs.allowed)(t) {
                        continue; // it left here again later (that entry counts), or masked
                    }
                    offer((costs.cost)(*usage, Some(costs.now - at)), *order, t);
                }
            }
        }
        // The cold ones: cost rises with usage, so from the least used until the cost passes
        // the first cold thread's (equal costs go to the earliest made ready). Of equal usage
        // only the first allowed cold one can win: the rest of that usage is skipped.
        let mut first: Option<f64> = None;
        let mut from = Bound::Unbounded;
        while let Some(&(usage, order, t)) = self.cold.range((from, Bound::Unbounded)).next() {
            let c = (costs.cost)(usage, None);
            if first.is_some_and(|f| c > f) {
                break;
            }
            if warm_since(t).is_some() || !(costs.allowed)(t) {
                from = Bound::Excluded((usage, order, t));
                continue;
            }
            first.get_or_insert(c);
            offer(c, order, t);
            match usage.checked_add(1) {
                Some(next) => from = Bound::Included((next, 0, ThreadId(0))),
                None => break,
            }
        }
        best.map(|(c, _, t)| (t, c))
    }

    /// The same answer by costing every ready thread in the order they became ready (the
    /// definition; debug builds check [`AffinityQueue::cheapest`] against it).
    pub(crate) fn cheapest_by_scan(&self, costs: &Costs) -> Option<(ThreadId, f64)> {
        let mut ready: Vec<_> = self.cold.iter().map(|&(u, o, t)| (o, u, t)).collect();
        ready.sort_unstable();
        let mut best: Option<(ThreadId, f64)> = None;
        for (_, usage, t) in ready {
            let since = (costs.left)(t).map(|left| costs.now.saturating_sub(left));
            let since = since.filter(|&s| s < costs.cap);
            if !(costs.allowed)(t) {
                continue;
            }
            let c = (costs.cost)(usage, since);
            if best.is_none_or(|(_, b)| c < b) {
                best = Some((t, c));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One step of a run, on 8 threads and 4 processors.
    #[derive(Clone, Debug)]
    enum Step {
        Ready(u32),
        Pick(u32),
        Charge(u32, u64),
        Leave(u32, u32),
        Wait(u64),
        Decay,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..8u32).prop_map(Step::Ready),
            (0..4u32).prop_map(Step::Pick),
            // Usages near 2^60 make distinct usages cost the same after rounding.
            (
                0..8u32,
                prop_oneof![0..50u64, (1u64 << 60)..(1u64 << 60) + 300]
            )
                .prop_map(|(t, u)| Step::Charge(t, u)),
            (0..8u32, 0..4u32).prop_map(|(t, p)| Step::Leave(t, p)),
            (0..300u64).prop_map(Step::Wait),
            Just(Step::Decay),
        ]
    }

    proptest! {
        #[test]
        fn the_cheapest_is_the_first_of_least_cost_in_ready_order(
            steps in proptest::collection::vec(step(), 1..200),
            c in prop_oneof![Just(0.0), Just(0.5), Just(1e-12), Just(1000.0)],
        ) {
            let mut q = AffinityQueue::default();
            let mut usage = [0u64; 8];
            let mut left: Vec<Vec<Option<Cycles>>> = vec![vec![None; 4]; 8];
            let mut now: Cycles = 1;
            let (slice, cap) = (10, 200);
            for s in steps {
                match s {
                    Step::Ready(t) => {
                        let t = ThreadId(t);
                        if !q.remove(t) {
                            q.push(t, usage[t.index()]);
                        }
                    }
                    Step::Charge(t, u) => {
                        usage[t as usize] = usage[t as usize].saturating_add(u);
                        q.set_usage(ThreadId(t), usage[t as usize]);
                    }
                    Step::Leave(t, p) => {
                        left[t as usize][p as usize] = Some(now);
                        q.left(p, ThreadId(t), now);
                    }
                    Step::Wait(d) => now += d,
                    Step::Decay => {
                        usage.iter_mut().for_each(|u| *u = *u * 2 / 3);
                        q.set_all_usage(&usage);
                    }
                    Step::Pick(p) => {
                        let load = q.len().max(1) as f64 / 4.0;
                        let costs = Costs {
                            cost: &|u, since| {
                                smpsched_policy::affinity::cost(u, since, slice, c, load)
                            },
                            // Thread 7 may not run on processor 0.
                            allowed: &|t| !(t.0 == 7 && p == 0),
                            left: &|t| left[t.index()][p as usize],
                            now,
                            cap,
                        };
                        let fast = q.cheapest(p, &costs);
                        prop_assert_eq!(fast, q.cheapest_by_scan(&costs));
                        if let Some((t, _)) = fast {
                            prop_assert!(q.remove(t));
                        }
                    }
                }
            }
        }
    }
}
