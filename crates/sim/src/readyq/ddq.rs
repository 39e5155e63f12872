//! George 1990's Distributed Dual Queues (section 2) and the centralized dual queue they replace
//! (section 1), laid out in simulated NUMA memory, with the insert and remove protocols the
//! threads' own programs drive.
//!
//! A DDQ is a binary tree stored as an array (node 1 the root, node k's children 2k and 2k+1,
//! leaves `leaves..2*leaves`), whose shape, home leaves and direction choice come from
//! [`smpsched_policy::ddq`], the same decisions the real queue uses. The array of static D fields
//! is replicated read-only on every node (the programs hold it, section 2.2); each dynamic N field
//! is a word placed on a processor that may wait below its node, each leaf's dual queue on its
//! first home processor, each processor's spin word on its own node. Several trees (section 2.4)
//! split the processors into clusters; an insert polls their roots round robin.
//!
//! Every N word holds the node's *deficit* D - N, so that it starts at 0 like every simulated
//! word: "atomically decrement N" is a fetch-and-add of +1 on the deficit and "N > 0" reads as
//! D - deficit > 0. The atomics are the paper's, one for one.
//!
//! - [`DdqInsert`]: (optionally first a lazily freed slot of the home leaf, 2.3), then at each
//!   tree root in turn read N and, if positive, reserve by an atomic decrement that is undone if
//!   it found N <= 0; descend, reading both children's N and choosing by
//!   [`choose_child`] (idle processors below, N > D, first; then room; the item's bits break
//!   ties), reserving at the child by a decrement with undo; when neither child shows room, or
//!   the reservation at the chosen one fails, pause and re-read both (the starvation case of
//!   Figure 4: the inserter goes back to the branch that was refilled). At the leaf, put the
//!   item into the dual queue: to a waiting processor's spin word, or into the ring.
//! - [`DdqRemove`]: at the home leaf dequeue data or enqueue the processor's spin word, then
//!   ascend adding the owed count to every N from the leaf to the root ([`Ascend`] says when the
//!   count is owed), then spin on the local word until an insert writes it.
//!
//! Invariant (section 2.1): a node's N never exceeds the items that can still be inserted below
//! it (free ring slots plus waiting processors, over its leaves), so an insert that has reserved
//! a node finds room below it, and the leaf's put never finds the queue full. The tests in
//! `tests/ddq.rs` check it over randomized interleavings.

use std::rc::Rc;

use smpsched_policy::ddq::{choose_child, preferred, Side};

pub use super::ddq_layout::{GeorgeLayout, Scheme, Tree};
use super::dual::{Ascend, Backoff, DualAccess, Put, Take};
use super::spin::{word, word_outcome, Step};
use crate::ids::Cycles;
use crate::outcome::{Outcome, WordOp};
use crate::program::Op;

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// Into a lazily freed slot of the home leaf, without touching the tree (2.3).
    Local,
    /// Handed to a waiting processor.
    Delivered,
    /// Buffered in a leaf's (or the central) queue.
    Buffered,
    /// No tree had room (every root's N was 0), or the central queue's lock was busy on a
    /// single attempt or it was full: the caller backs off or runs the task itself.
    Failed,
}

#[derive(Clone, Debug)]
enum InState {
    Start,
    Local(DualAccess),
    RootRead,
    RootDec,
    RootUndo,
    ReadLeft,
    ReadRight(u64),
    Retry,
    ChildDec(usize),
    ChildUndo,
    Leaf(DualAccess),
}

/// Costs and options of the protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// The backoff on queue locks.
    pub backoff: Backoff,
    /// Cycles between two reads of a spin word, and before re-reading children in the
    /// starvation case.
    pub pause: Cycles,
    /// When ascends are made.
    pub ascend: Ascend,
    /// Try the home leaf's lazily freed slots first.
    pub local_first: bool,
    /// A single attempt at the central queue's lock.
    pub once: bool,
}

/// An insert of a non-zero item, driven one operation at a time.
#[derive(Clone, Debug)]
pub struct DdqInsert {
    layout: Rc<GeorgeLayout>,
    me: usize,
    item: u64,
    tuning: Tuning,
    state: InState,
    tree: usize,
    tried: usize,
    node: usize,
    level: u32,
    root_op: bool,
    reserved: bool,
    result: Option<Inserted>,
    /// Atomic operations on N fields (decrements and undos).
    pub tree_atomics: u32,
    /// Lock attempts that backed off.
    pub backoffs: u32,
    /// Re-reads of a node's children because none showed room or a reservation failed.
    pub retries: u32,
}

impl DdqInsert {
    /// Processor `me` inserting `item`, polling the trees from `start_tree`.
    pub fn new(
        layout: &Rc<GeorgeLayout>,
        me: usize,
        item: u64,
        start_tree: usize,
        tuning: Tuning,
    ) -> Self {
        DdqInsert {
            layout: layout.clone(),
            me,
            item,
            tuning,
            state: InState::Start,
            tree: start_tree % layout.tree_count().max(1),
            tried: 0,
            node: 1,
            level: 0,
            root_op: false,
            reserved: false,
            result: None,
            tree_atomics: 0,
            backoffs: 0,
            retries: 0,
        }
    }

    /// Whether the operation returned last is an atomic on a tree root (the hot spot).
    pub fn root_op(&self) -> bool {
        self.root_op
    }

    /// Whether the insert has reserved a slot at a tree root (it must then find one below).
    pub fn reserved(&self) -> bool {
        self.reserved
    }

    /// What the insert did, once done.
    pub fn result(&self) -> Option<Inserted> {
        self.result
    }

    fn tree(&self) -> &Tree {
        match &self.layout.scheme {
            Scheme::Trees(t) => &t[self.tree],
            Scheme::Central(_) => unreachable!("a centralized queue has no tree"),
        }
    }

    fn atomic(&mut self, addr: u64, delta: i64) -> Step<Inserted> {
        self.tree_atomics += 1;
        self.root_op = self.node == 1 && matches!(self.state, InState::RootDec | InState::RootUndo);
        Step::Op(word(addr, WordOp::FetchAdd(delta as u64)))
    }

    fn finish(&mut self, r: Inserted) -> Step<Inserted> {
        self.result = Some(r);
        Step::Done(r)
    }

    /// The next step, given the outcome of the operation issued last.
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<Inserted> {
        self.root_op = false;
        let v = word_outcome(outcome).0;
        match std::mem::replace(&mut self.state, InState::Start) {
            InState::Start => self.start(),
            InState::Local(a) => self.local(a, outcome),
            InState::RootRead => {
                if self.tree().n_of(1, v) > 0 {
                    self.state = InState::RootDec;
                    let a = self.tree().n[1];
                    return self.atomic(a, 1);
                }
                self.next_tree()
            }
            InState::RootDec => {
                if self.tree().n_of(1, v) > 0 {
                    self.reserved = true;
                    self.level = 0;
                    return self.descend();
                }
                self.state = InState::RootUndo;
                let a = self.tree().n[1];
                self.atomic(a, -1)
            }
            InState::RootUndo => self.next_tree(),
            InState::ReadLeft => {
                self.state = InState::ReadRight(v);
                Step::Op(word(self.tree().n[2 * self.node + 1], WordOp::Load))
            }
            InState::ReadRight(left) => self.choose(left, v),
            InState::Retry => self.descend(),
            InState::ChildDec(c) => {
                if self.tree().n_of(c, v) > 0 {
                    self.node = c;
                    self.level += 1;
                    return self.descend();
                }
                self.state = InState::ChildUndo;
                let a = self.tree().n[c];
                self.atomic(a, -1)
            }
            InState::ChildUndo => self.retry(),
            InState::Leaf(a) => self.leaf(a, outcome),
        }
    }

    fn start(&mut self) -> Step<Inserted> {
        let t = self.tuning;
        match &self.layout.scheme {
            Scheme::Central(q) => {
                let a = DualAccess::put(*q, self.item, false, t.backoff, t.once);
                self.leaf(a, None)
            }
            Scheme::Trees(trees) if t.local_first => {
                let (tr, leaf) = self.layout.home[self.me];
                let a = DualAccess::put(trees[tr].queues[leaf], self.item, true, t.backoff, false);
                self.local(a, None)
            }
            Scheme::Trees(_) => self.poll(),
        }
    }

    fn poll(&mut self) -> Step<Inserted> {
        self.node = 1;
        self.state = InState::RootRead;
        Step::Op(word(self.tree().n[1], WordOp::Load))
    }

    fn next_tree(&mut self) -> Step<Inserted> {
        self.tried += 1;
        let trees = self.layout.tree_count();
        if self.tried >= trees {
            return self.finish(Inserted::Failed);
        }
        self.tree = (self.tree + 1) % trees;
        self.poll()
    }

    fn local(&mut self, mut a: DualAccess, outcome: Option<&Outcome>) -> Step<Inserted> {
        match a.resume(outcome) {
            Step::Op(op) => {
                self.state = InState::Local(a);
                Step::Op(op)
            }
            Step::Done(_) => {
                self.backoffs += a.backoffs();
                if a.put_result() == Some(Put::Buffered) {
                    return self.finish(Inserted::Local);
                }
                self.tree = self.layout.home[self.me].0;
                self.poll()
            }
        }
    }

    fn descend(&mut self) -> Step<Inserted> {
        let layout = Rc::clone(&self.layout);
        let Scheme::Trees(trees) = &layout.scheme else {
            unreachable!("a centralized queue has no tree")
        };
        let tree = &trees[self.tree];
        if self.node >= tree.leaves {
            let q = tree.queues[self.node - tree.leaves];
            let t = self.tuning;
            let a = DualAccess::put(q, self.item, false, t.backoff, false);
            return self.leaf(a, None);
        }
        self.state = InState::ReadLeft;
        Step::Op(word(tree.n[2 * self.node], WordOp::Load))
    }

    fn choose(&mut self, left: u64, right: u64) -> Step<Inserted> {
        let layout = Rc::clone(&self.layout);
        let Scheme::Trees(trees) = &layout.scheme else {
            unreachable!("a centralized queue has no tree")
        };
        let tree = &trees[self.tree];
        let (l, r) = (2 * self.node, 2 * self.node + 1);
        let nl = (tree.n_of(l, left), tree.d[l]);
        let nr = (tree.n_of(r, right), tree.d[r]);
        match choose_child(nl, nr, preferred(self.item, self.level)) {
            Some(side) => {
                let c = if side == Side::Left { l } else { r };
                self.state = InState::ChildDec(c);
                let a = tree.n[c];
                self.atomic(a, 1)
            }
            None => self.retry(),
        }
    }

    /// Neither child showed room, or the reservation at one failed: pause, then re-read both
    /// (Figure 4: go back and try the branch that was refilled).
    fn retry(&mut self) -> Step<Inserted> {
        self.retries += 1;
        self.state = InState::Retry;
        Step::Op(Op::Compute(self.tuning.pause))
    }

    fn leaf(&mut self, mut a: DualAccess, outcome: Option<&Outcome>) -> Step<Inserted> {
        match a.resume(outcome) {
            Step::Op(op) => {
                self.state = InState::Leaf(a);
                Step::Op(op)
            }
            Step::Done(_) => {
                self.backoffs += a.backoffs();
                let r = match a.put_result() {
                    Some(Put::Delivered) => Inserted::Delivered,
                    Some(Put::Buffered) => Inserted::Buffered,
                    Some(Put::Full) | None => Inserted::Failed,
                };
                self.finish(r)
            }
        }
    }
}

// The take is the common state; boxing it would allocate once per remove.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum OutState {
    Take(DualAccess),
    Ascend(usize),
    Spin,
    Clear(u64),
}

/// A remove by a processor at its home leaf (or the central queue), driven one operation at a
/// time: done with the item it got.
#[derive(Clone, Debug)]
pub struct DdqRemove {
    layout: Rc<GeorgeLayout>,
    me: usize,
    tuning: Tuning,
    state: OutState,
    owed: u64,
    item: Option<u64>,
    started: bool,
    root_op: bool,
    /// Atomic operations on N fields (the ascend).
    pub tree_atomics: u32,
    /// Lock attempts that backed off.
    pub backoffs: u32,
    /// Whether the processor had to wait for an item.
    pub waited: bool,
}

impl DdqRemove {
    /// Processor `me` removing an item.
    pub fn new(layout: &Rc<GeorgeLayout>, me: usize, tuning: Tuning) -> Self {
        let spin = layout.spin[me];
        let q = match &layout.scheme {
            Scheme::Central(q) => *q,
            Scheme::Trees(t) => {
                let (tr, leaf) = layout.home[me];
                t[tr].queues[leaf]
            }
        };
        let ascend = match layout.scheme {
            Scheme::Central(_) => Ascend::Eager,
            Scheme::Trees(_) => tuning.ascend,
        };
        DdqRemove {
            layout: layout.clone(),
            me,
            tuning,
            state: OutState::Take(DualAccess::take(q, spin, ascend, tuning.backoff)),
            owed: 0,
            item: None,
            started: false,
            root_op: false,
            tree_atomics: 0,
            backoffs: 0,
            waited: false,
        }
    }

    /// Whether the operation returned last is an atomic on a tree root (the hot spot).
    pub fn root_op(&self) -> bool {
        self.root_op
    }

    /// The next step, given the outcome of the operation issued last.
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<u64> {
        self.root_op = false;
        let outcome = if self.started { outcome } else { None };
        self.started = true;
        let v = word_outcome(outcome).0;
        match std::mem::replace(&mut self.state, OutState::Spin) {
            OutState::Take(mut a) => match a.resume(outcome) {
                Step::Op(op) => {
                    self.state = OutState::Take(a);
                    Step::Op(op)
                }
                Step::Done(_) => {
                    self.backoffs += a.backoffs();
                    let t = a.take_result().expect("a take always completes");
                    self.owed = t.ascend();
                    if let Take::Data(item, _) = t {
                        self.item = Some(item);
                    }
                    self.waited = self.item.is_none();
                    self.ascend_from(None)
                }
            },
            OutState::Ascend(k) => self.ascend_from(Some(k)),
            OutState::Spin => {
                if v != 0 && outcome.is_some() {
                    self.state = OutState::Clear(v - 1);
                    return Step::Op(word(self.layout.spin[self.me], WordOp::Store(0)));
                }
                self.spin_read(outcome.is_some())
            }
            OutState::Clear(item) => Step::Done(item),
        }
    }

    /// Adds the owed count to the next N on the path (`done`: the node just incremented), then
    /// returns the item or starts spinning.
    fn ascend_from(&mut self, done: Option<usize>) -> Step<u64> {
        let next = match (&self.layout.scheme, done) {
            (Scheme::Trees(t), None) if self.owed > 0 => {
                let (tr, leaf) = self.layout.home[self.me];
                Some(t[tr].leaves + leaf)
            }
            (Scheme::Trees(_), Some(k)) if k > 1 => Some(k / 2),
            _ => None,
        };
        if let (Some(k), Scheme::Trees(t)) = (next, &self.layout.scheme) {
            let tr = self.layout.home[self.me].0;
            self.tree_atomics += 1;
            self.root_op = k == 1;
            self.state = OutState::Ascend(k);
            return Step::Op(word(t[tr].n[k], WordOp::FetchAdd(self.owed.wrapping_neg())));
        }
        match self.item {
            Some(item) => Step::Done(item),
            None => self.spin_read(false),
        }
    }

    /// Reads the spin word, pausing first after an empty read.
    fn spin_read(&mut self, after_read: bool) -> Step<u64> {
        if after_read {
            self.state = OutState::Spin;
            return Step::Op(Op::Compute(self.tuning.pause));
        }
        self.state = OutState::Spin;
        Step::Op(word(self.layout.spin[self.me], WordOp::Load))
    }
}
