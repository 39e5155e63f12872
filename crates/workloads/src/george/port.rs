//! A processor's handle on the queue under test (George 1990, sections 1 and 2): it runs one
//! insert or remove protocol of [`smpsched_sim::readyq::ddq`] at a time and keeps the measures
//! of section 3: backoffs, tree atomics per operation, time per operation, the latency of
//! atomics on a tree root (the hot spot), and each operation's wait at the hot spot
//! ([`super::hotspot`], the introduction's item 3), recorded as the operation ends.

use std::rc::Rc;

use smpsched_sim::readyq::ddq::{DdqInsert, DdqRemove, GeorgeLayout, Inserted, Tuning};
use smpsched_sim::readyq::Step;
use smpsched_sim::{Cycles, Op, Outcome};

use super::hotspot::{HotSpot, Wait};

/// The item a finishing processor writes into the others' spin words: "the run is over".
pub(crate) const TERM: u64 = u64::MAX - 1;

/// Counts of one processor's queue operations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats {
    pub inserts: u64,
    pub removes: u64,
    pub insert_cycles: Cycles,
    pub remove_cycles: Cycles,
    pub insert_atomics: u64,
    pub remove_atomics: u64,
    /// Tree operations (inserts that went through a root, removes that ascended) with fewer
    /// than H atomics.
    pub below_h: u64,
    pub backoffs: u64,
    pub root_ops: u64,
    pub root_cycles: Cycles,
    pub retries: u64,
    pub failed: u64,
    pub local: u64,
}

enum Active {
    None,
    Insert(DdqInsert, Cycles),
    Remove(DdqRemove, Cycles),
    /// The operation ended; its `hotspot_wait` record is issued, its result comes next.
    Ended(Poll),
}

/// What a step of the port gives.
pub(crate) enum Poll {
    /// Issue this operation and step again with its outcome.
    Op(Op),
    /// The insert finished.
    Inserted(Inserted),
    /// The remove got this item.
    Removed(u64),
}

/// A processor's access to the shared structure.
pub(crate) struct Port {
    layout: Rc<GeorgeLayout>,
    me: usize,
    tuning: Tuning,
    cursor: usize,
    /// H, the height of the processor's tree (0 for the centralized queue).
    height: u32,
    active: Active,
    root_issued: Option<Cycles>,
    hot: HotSpot,
    wait: Wait,
    pub stats: Stats,
}

impl Port {
    /// Processor `me`'s port; `hot`: its view of the hot spot.
    pub(crate) fn new(
        layout: &Rc<GeorgeLayout>,
        me: usize,
        tuning: Tuning,
        height: u32,
        hot: HotSpot,
    ) -> Self {
        let cursor = layout.home[me].0;
        Port {
            layout: layout.clone(),
            me,
            tuning,
            cursor,
            height,
            active: Active::None,
            root_issued: None,
            hot,
            wait: Wait::default(),
            stats: Stats::default(),
        }
    }

    /// Gives the processor's backoffs their own stream, drawn from its thread's stream.
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.tuning.backoff.seed = seed;
    }

    /// Starts inserting `item` (below [`TERM`]); `once`: a single attempt at a central lock.
    pub(crate) fn insert(&mut self, item: u64, now: Cycles, once: bool) {
        let t = Tuning {
            once,
            ..self.tuning
        };
        let p = DdqInsert::new(&self.layout, self.me, item, self.cursor, t);
        self.cursor = self.cursor.wrapping_add(1);
        self.active = Active::Insert(p, now);
    }

    /// Starts a remove.
    pub(crate) fn remove(&mut self, now: Cycles) {
        self.active = Active::Remove(DdqRemove::new(&self.layout, self.me, self.tuning), now);
    }

    /// Advances the protocol under way with the outcome of the operation issued last. An
    /// operation ends with its `hotspot_wait` record, then its result.
    pub(crate) fn step(&mut self, outcome: Option<&Outcome>, now: Cycles) -> Poll {
        match self.active {
            Active::Insert(..) | Active::Remove(..) => {}
            Active::None => return Poll::Inserted(Inserted::Failed),
            Active::Ended(_) => {
                let Active::Ended(r) = std::mem::replace(&mut self.active, Active::None) else {
                    unreachable!("matched above")
                };
                return r;
            }
        }
        self.wait.complete(now);
        match self.advance(outcome, now) {
            Poll::Op(op) => {
                if let Some(a) = self.hot.access(&op) {
                    self.wait.issue(a, now);
                }
                Poll::Op(op)
            }
            r => {
                self.active = Active::Ended(r);
                Poll::Op(rec("hotspot_wait", self.wait.take() as f64))
            }
        }
    }

    /// The protocol's next step (an operation is under way).
    fn advance(&mut self, outcome: Option<&Outcome>, now: Cycles) -> Poll {
        if let Some(at) = self.root_issued.take() {
            self.stats.root_ops += 1;
            self.stats.root_cycles += now - at;
        }
        let tree = self.layout.tree_count() > 0;
        match std::mem::replace(&mut self.active, Active::None) {
            Active::None | Active::Ended(_) => Poll::Inserted(Inserted::Failed),
            Active::Insert(mut p, start) => match p.resume(outcome) {
                Step::Op(op) => {
                    if p.root_op() {
                        self.root_issued = Some(now);
                    }
                    self.active = Active::Insert(p, start);
                    Poll::Op(op)
                }
                Step::Done(r) => {
                    let s = &mut self.stats;
                    s.inserts += 1;
                    s.insert_cycles += now - start;
                    s.insert_atomics += u64::from(p.tree_atomics);
                    s.backoffs += u64::from(p.backoffs);
                    s.retries += u64::from(p.retries);
                    s.failed += u64::from(r == Inserted::Failed);
                    s.local += u64::from(r == Inserted::Local);
                    if tree && p.reserved() && p.tree_atomics < self.height {
                        s.below_h += 1;
                    }
                    Poll::Inserted(r)
                }
            },
            Active::Remove(mut p, start) => match p.resume(outcome) {
                Step::Op(op) => {
                    if p.root_op() {
                        self.root_issued = Some(now);
                    }
                    self.active = Active::Remove(p, start);
                    Poll::Op(op)
                }
                Step::Done(item) => {
                    let s = &mut self.stats;
                    s.removes += 1;
                    s.remove_cycles += now - start;
                    s.remove_atomics += u64::from(p.tree_atomics);
                    s.backoffs += u64::from(p.backoffs);
                    if tree && p.tree_atomics > 0 && p.tree_atomics < self.height {
                        s.below_h += 1;
                    }
                    Poll::Removed(item)
                }
            },
        }
    }

    /// The store that tells processor `p` the run is over: [`TERM`] into its spin word.
    pub(crate) fn terminate(&self, p: usize) -> Op {
        Op::Word {
            addr: self.layout.spin[p],
            op: smpsched_sim::WordOp::Store(TERM + 1),
        }
    }

    /// The records of the measures, given the clock rate: `backoffs`, `failed_inserts`, `insert_us`,
    /// `remove_us`, `insert_atomics`, `remove_atomics`, `below_h`, `root_cycles`, `root_ops`, `retries`.
    pub(crate) fn records(&self, mhz: f64) -> Vec<Op> {
        let s = &self.stats;
        let mut out = vec![
            rec("backoffs", s.backoffs as f64),
            rec("failed_inserts", s.failed as f64),
        ];
        let mean = |sum: u64, n: u64| sum as f64 / n as f64;
        if s.inserts > 0 {
            out.push(rec("insert_us", mean(s.insert_cycles, s.inserts) / mhz));
        }
        if s.removes > 0 {
            out.push(rec("remove_us", mean(s.remove_cycles, s.removes) / mhz));
        }
        if self.layout.tree_count() > 0 {
            if s.inserts > s.local {
                let n = s.inserts - s.local;
                out.push(rec("insert_atomics", mean(s.insert_atomics, n)));
            }
            if s.removes > 0 {
                out.push(rec("remove_atomics", mean(s.remove_atomics, s.removes)));
            }
            out.push(rec("below_h", s.below_h as f64));
            out.push(rec("retries", s.retries as f64));
            out.push(rec("local_inserts", s.local as f64));
        }
        if s.root_ops > 0 {
            out.push(rec("root_cycles", mean(s.root_cycles, s.root_ops)));
            out.push(rec("root_ops", s.root_ops as f64));
        }
        out
    }
}

fn rec(name: &'static str, value: f64) -> Op {
    Op::Record { name, value }
}
