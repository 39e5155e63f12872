//! One processor's cache at line granularity with LRU replacement (Gupta et al. 1991, section 3:
//! a 64 KB cache per CPU with 16-byte lines). Holds only which lines are resident and in which
//! coherence state; the directory ([`super::directory`]) knows who shares what.
//!
//! Every lookup is O(1) whatever the associativity: caches with at most [`SCAN_MAX_WAYS`] ways
//! (direct-mapped, 2-, 4-, 8-way) scan their set and keep LRU order with use stamps; more
//! associative caches (fully associative in particular) find a line through hash chains threaded
//! through their slots and keep each set's LRU order in an intrusive doubly-linked list over the
//! same slot vector. Storage is allocated on first use, and for the linked-list form grows with
//! the lines actually resident, so 1,024 idle processors cost almost nothing.

use serde::{Deserialize, Serialize};

use super::config::MemoryConfig;

/// Set sizes up to this many ways are searched by scanning the set.
pub const SCAN_MAX_WAYS: u64 = 8;

const NIL: u32 = u32::MAX;

/// Coherence state of a line in one cache (MESI without the I: an invalid line is simply absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LineState {
    /// Clean; other caches may hold copies. A write needs an ownership transaction (a miss).
    Shared,
    /// Clean and the only copy; a write upgrades it to `Modified` silently (a hit).
    Exclusive,
    /// Dirty and the only copy; reads and writes hit.
    Modified,
}

/// One processor's cache: geometry plus one of two storage forms.
#[derive(Clone, Debug)]
pub(crate) struct Cache {
    lines: u64,
    ways: u64,
    sets: u64,
    /// `sets - 1` when `sets` is a power of two, else `u64::MAX` (use `%`).
    set_mask: u64,
    store: Store,
}

#[derive(Clone, Debug)]
enum Store {
    Scan(ScanStore),
    List(ListStore),
}

/// Fixed positions `set * ways + way`; `tags` hold `line + 1` (0 = empty); LRU by use stamp.
#[derive(Clone, Debug, Default)]
struct ScanStore {
    tags: Vec<u64>,
    states: Vec<LineState>,
    stamps: Vec<u64>,
    clock: u64,
    resident: u64,
}

/// Slots allocated on demand from a pool; per-set MRU..LRU lists through `prev` / `next`; a free
/// list through `next`; hash chains from line to slot through `chain`, their heads in
/// `buckets` (at least two buckets per resident line, a power of two, so that most lines not
/// resident find an empty bucket and most chains hold one slot). A slot's fields sit
/// together in one [`Node`] and a set's in one [`SetList`], so a miss reaches each with one
/// bounds check, and a miss installs and evicts a line with a few stores: no probing, no
/// shifting of a table's entries.
#[derive(Clone, Debug, Default)]
struct ListStore {
    nodes: Vec<Node>,
    lists: Vec<SetList>,
    free: u32,
    buckets: Vec<u32>,
    /// `64 - log2(buckets.len())`: the multiplicative hash keeps the top bits.
    shift: u32,
    resident: u64,
}

impl Cache {
    /// An empty cache with the geometry of `cfg` (which must have been validated).
    pub(crate) fn new(cfg: &MemoryConfig) -> Self {
        let lines = cfg.lines();
        let ways = cfg.ways();
        let sets = cfg.sets();
        let set_mask = if sets.is_power_of_two() {
            sets - 1
        } else {
            u64::MAX
        };
        let store = if ways <= SCAN_MAX_WAYS {
            Store::Scan(ScanStore::default())
        } else {
            Store::List(ListStore {
                free: NIL,
                ..ListStore::default()
            })
        };
        Cache {
            lines,
            ways,
            sets,
            set_mask,
            store,
        }
    }

    #[inline(always)]
    fn set_of(&self, line: u64) -> u64 {
        if self.set_mask != u64::MAX {
            line & self.set_mask
        } else {
            line % self.sets
        }
    }

    /// Number of lines resident.
    pub(crate) fn resident(&self) -> u64 {
        match &self.store {
            Store::Scan(s) => s.resident,
            Store::List(s) => s.resident,
        }
    }

    /// Looks `line` up as a reference would: on a hit makes it most recently used and returns its
    /// slot.
    #[inline(always)]
    pub(crate) fn touch(&mut self, line: u64) -> Option<u32> {
        let set = self.set_of(line);
        let ways = self.ways;
        match &mut self.store {
            Store::Scan(s) => {
                let slot = s.find(set, ways, line)?;
                s.clock += 1;
                s.stamps[slot as usize] = s.clock;
                Some(slot)
            }
            Store::List(s) => {
                let slot = s.lookup(line)?;
                let set = set as usize;
                if s.lists[set].head != slot {
                    s.unlink(set, slot);
                    s.push_front(set, slot);
                }
                Some(slot)
            }
        }
    }

    /// Looks `line` up without changing the LRU order.
    pub(crate) fn find(&self, line: u64) -> Option<u32> {
        match &self.store {
            Store::Scan(s) => s.find(self.set_of(line), self.ways, line),
            Store::List(s) => s.lookup(line),
        }
    }

    /// State of the line in `slot` (a slot returned by `touch` or `find`).
    #[inline(always)]
    pub(crate) fn state(&self, slot: u32) -> LineState {
        match &self.store {
            Store::Scan(s) => s.states[slot as usize],
            Store::List(s) => s.nodes[slot as usize].state,
        }
    }

    /// Changes the state of the line in `slot`.
    #[inline(always)]
    pub(crate) fn set_state(&mut self, slot: u32, state: LineState) {
        match &mut self.store {
            Store::Scan(s) => s.states[slot as usize] = state,
            Store::List(s) => s.nodes[slot as usize].state = state,
        }
    }

    /// Installs `line` (which must be absent) as most recently used, returning the line evicted
    /// to make room, if any.
    pub(crate) fn insert(&mut self, line: u64, state: LineState) -> Option<u64> {
        let set = self.set_of(line);
        let ways = self.ways;
        let (lines, sets) = (self.lines, self.sets);
        match &mut self.store {
            Store::Scan(s) => s.insert(lines, set, ways, line, state),
            Store::List(s) => s.insert(sets, set as usize, ways, line, state),
        }
    }

    /// Drops `line` if resident (an invalidation); returns whether it was.
    pub(crate) fn remove(&mut self, line: u64) -> bool {
        let set = self.set_of(line);
        let ways = self.ways;
        match &mut self.store {
            Store::Scan(s) => match s.find(set, ways, line) {
                Some(slot) => {
                    s.tags[slot as usize] = 0;
                    s.resident -= 1;
                    true
                }
                None => false,
            },
            Store::List(s) => match s.take_out(line) {
                Some(slot) => {
                    s.unlink(set as usize, slot);
                    s.lists[set as usize].count -= 1;
                    s.nodes[slot as usize].next = s.free;
                    s.free = slot;
                    s.resident -= 1;
                    true
                }
                None => false,
            },
        }
    }

    /// Calls `f` with every resident line, in a deterministic order.
    pub(crate) fn for_each_line(&self, mut f: impl FnMut(u64)) {
        match &self.store {
            Store::Scan(s) => s.tags.iter().filter(|&&t| t != 0).for_each(|&t| f(t - 1)),
            Store::List(s) => {
                for list in &s.lists {
                    let mut slot = list.head;
                    while slot != NIL {
                        f(s.nodes[slot as usize].tag);
                        slot = s.nodes[slot as usize].next;
                    }
                }
            }
        }
    }

    /// Empties the cache and releases its storage.
    pub(crate) fn clear(&mut self) {
        match &mut self.store {
            Store::Scan(s) => *s = ScanStore::default(),
            Store::List(s) => {
                *s = ListStore {
                    free: NIL,
                    ..ListStore::default()
                }
            }
        }
    }
}

impl ScanStore {
    #[inline(always)]
    fn find(&self, set: u64, ways: u64, line: u64) -> Option<u32> {
        if self.tags.is_empty() {
            return None;
        }
        let base = (set * ways) as usize;
        let key = line + 1;
        self.tags[base..base + ways as usize]
            .iter()
            .position(|&t| t == key)
            .map(|w| (base + w) as u32)
    }

    fn insert(
        &mut self,
        lines: u64,
        set: u64,
        ways: u64,
        line: u64,
        state: LineState,
    ) -> Option<u64> {
        if self.tags.is_empty() {
            self.tags = vec![0; lines as usize];
            self.states = vec![LineState::Shared; lines as usize];
            self.stamps = vec![0; lines as usize];
        }
        let base = (set * ways) as usize;
        let ways = ways as usize;
        let (slot, evicted) = match self.tags[base..base + ways].iter().position(|&t| t == 0) {
            Some(w) => {
                self.resident += 1;
                (base + w, None)
            }
            None => {
                let w = (0..ways)
                    .min_by_key(|&w| self.stamps[base + w])
                    .expect("a set has at least one way");
                (base + w, Some(self.tags[base + w] - 1))
            }
        };
        self.clock += 1;
        self.tags[slot] = line + 1;
        self.states[slot] = state;
        self.stamps[slot] = self.clock;
        evicted
    }
}

/// One slot of a [`ListStore`]: the line it holds, its state and its neighbours in its set's
/// MRU..LRU list.
#[derive(Clone, Copy, Debug)]
struct Node {
    tag: u64,
    prev: u32,
    next: u32,
    /// The next slot in the same hash bucket.
    chain: u32,
    state: LineState,
}

/// One set of a [`ListStore`]: its most and least recently used slots and its lines resident.
#[derive(Clone, Copy, Debug)]
struct SetList {
    head: u32,
    tail: u32,
    count: u32,
}

impl ListStore {
    #[inline(always)]
    fn unlink(&mut self, set: usize, slot: u32) {
        let Node {
            prev: p, next: n, ..
        } = self.nodes[slot as usize];
        if p == NIL {
            self.lists[set].head = n;
        } else {
            self.nodes[p as usize].next = n;
        }
        if n == NIL {
            self.lists[set].tail = p;
        } else {
            self.nodes[n as usize].prev = p;
        }
    }

    #[inline(always)]
    fn push_front(&mut self, set: usize, slot: u32) {
        let old = self.lists[set].head;
        let node = &mut self.nodes[slot as usize];
        node.prev = NIL;
        node.next = old;
        if old == NIL {
            self.lists[set].tail = slot;
        } else {
            self.nodes[old as usize].prev = slot;
        }
        self.lists[set].head = slot;
    }

    fn insert(
        &mut self,
        sets: u64,
        set: usize,
        ways: u64,
        line: u64,
        state: LineState,
    ) -> Option<u64> {
        if self.lists.is_empty() {
            let empty = SetList {
                head: NIL,
                tail: NIL,
                count: 0,
            };
            self.lists = vec![empty; sets as usize];
        }
        let mut evicted = None;
        let slot = if u64::from(self.lists[set].count) < ways {
            self.lists[set].count += 1;
            self.resident += 1;
            if self.free != NIL {
                let slot = self.free;
                self.free = self.nodes[slot as usize].next;
                slot
            } else {
                let slot = u32::try_from(self.nodes.len()).expect("cache slots fit in u32");
                self.nodes.push(Node {
                    tag: 0,
                    prev: NIL,
                    next: NIL,
                    chain: NIL,
                    state,
                });
                slot
            }
        } else {
            let slot = self.lists[set].tail;
            let old = self.nodes[slot as usize].tag;
            self.take_out(old);
            self.unlink(set, slot);
            evicted = Some(old);
            slot
        };
        let node = &mut self.nodes[slot as usize];
        node.tag = line;
        node.state = state;
        self.push_front(set, slot);
        self.chain_in(slot);
        evicted
    }

    /// The bucket of `line`: the line's 16-line group hashed multiplicatively (Fibonacci
    /// hashing keeps the top bits), its place in the group kept. Sixteen consecutive lines
    /// take sixteen consecutive buckets, one 64-byte host line of heads, so a sweep reaches
    /// its new line's and its victim's buckets in order rather than at random (the all-miss
    /// sweep 13-16% faster); strides of whole groups still spread over every bucket.
    #[inline(always)]
    fn bucket(&self, line: u64) -> usize {
        let hashed = ((line >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        hashed ^ (line as usize & 15)
    }

    /// The slot holding `line`, if it is resident.
    #[inline(always)]
    fn lookup(&self, line: u64) -> Option<u32> {
        if self.buckets.is_empty() {
            return None;
        }
        let mut slot = self.buckets[self.bucket(line)];
        while slot != NIL {
            let node = &self.nodes[slot as usize];
            if node.tag == line {
                return Some(slot);
            }
            slot = node.chain;
        }
        None
    }

    /// Threads `slot` (holding its line, already in its set's list and counted in `resident`)
    /// into its line's chain.
    #[inline(always)]
    fn chain_in(&mut self, slot: u32) {
        if self.resident as usize * 2 > self.buckets.len() {
            // Every listed slot is threaded afresh, this one with them.
            self.grow();
            return;
        }
        self.link(slot);
    }

    /// Puts `slot` at the head of its line's chain.
    #[inline(always)]
    fn link(&mut self, slot: u32) {
        let b = self.bucket(self.nodes[slot as usize].tag);
        self.nodes[slot as usize].chain = self.buckets[b];
        self.buckets[b] = slot;
    }

    /// Takes `line`'s slot out of its chain, if the line is resident: one walk of the chain.
    #[inline(always)]
    fn take_out(&mut self, line: u64) -> Option<u32> {
        if self.buckets.is_empty() {
            return None;
        }
        let b = self.bucket(line);
        let mut before = NIL;
        let mut slot = self.buckets[b];
        while slot != NIL {
            let node = self.nodes[slot as usize];
            if node.tag == line {
                if before == NIL {
                    self.buckets[b] = node.chain;
                } else {
                    self.nodes[before as usize].chain = node.chain;
                }
                return Some(slot);
            }
            before = slot;
            slot = node.chain;
        }
        None
    }

    /// The longest hash chain (for tests of the bucket hash).
    #[cfg(test)]
    fn longest_chain(&self) -> usize {
        let chain = |mut slot: u32| {
            let mut n = 0;
            while slot != NIL {
                n += 1;
                slot = self.nodes[slot as usize].chain;
            }
            n
        };
        self.buckets.iter().map(|&b| chain(b)).max().unwrap_or(0)
    }

    /// Doubles the buckets (16 at first) and threads every resident slot again.
    #[cold]
    fn grow(&mut self) {
        let n = (self.buckets.len() * 2).max(16);
        self.buckets = vec![NIL; n];
        self.shift = 64 - n.trailing_zeros();
        for set in 0..self.lists.len() {
            let mut slot = self.lists[set].head;
            while slot != NIL {
                self.link(slot);
                slot = self.nodes[slot as usize].next;
            }
        }
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
