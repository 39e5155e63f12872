//! DiBella's multi-access distributed ready queues: the client (enqueuing) and scheduler
//! (dequeuing) policies of DiBella, Ramamritham, Chrysanthis and Raghuram 1992, sections 2.2-2.3
//! and Tables 1-3.
//!
//! A client decides which queue receives its next request ([`client_queue`]); a scheduler decides
//! in which queues, in which order and in which direction it looks for a request
//! ([`SearchOrder`]), and where in a queue's bitmap it starts (the remembered last-serviced index,
//! [`next_mailbox`]). Not every pair makes sense: Table 3's compatibility rule is
//! [`check_pair`]. Randomness comes in as a `u64` draw; nothing here owns an RNG.

use std::fmt;

/// A client (enqueuing) policy of Table 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientPolicy {
    /// One queue for the client's lifetime, clients spread equitably over the queues.
    Static,
    /// A queue drawn at random for every request.
    Random,
    /// A starting queue from the client's id, then the next queue (mod the count) per request.
    Sequential,
    /// The static primary queue; a random other queue while the primary holds `cutoff` requests.
    PrimaryRandom {
        /// The cutoff capacity: the primary's length at which requests go elsewhere.
        cutoff: usize,
    },
    /// The static primary queue; a fixed other queue while the primary holds `cutoff` requests.
    PrimaryFixed {
        /// The cutoff capacity: the primary's length at which requests go elsewhere.
        cutoff: usize,
    },
    /// The single global FCFS queue.
    Global,
    /// Distributed FCFS with a static queue per client.
    StaticFcfs,
    /// Distributed FCFS with a random queue per request.
    RandomFcfs,
}

/// A scheduler (dequeuing) policy of Table 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedulerPolicy {
    /// Only the scheduler's own queue.
    Static,
    /// One queue drawn at random per poll.
    Random,
    /// The own queue first, then all others in turn from a remembered position.
    Sequential,
    /// The own queue, then one fixed secondary queue.
    PrimaryFixed,
    /// The own queue, then one random other queue.
    PrimaryRandom,
    /// The own queue, then the first non-empty queue searching from the own index plus one.
    PrimarySequential,
    /// The single global FCFS queue (baseline).
    Global,
    /// Per-processor FCFS queues with a sequential search of the others (Anderson et al.).
    DistributedFcfs,
}

/// The direction in which a scheduler searches a queue's bitmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Increasing mailbox index (the primary queue under bidirectional search).
    LeftToRight,
    /// Decreasing mailbox index (secondary queues under bidirectional search).
    RightToLeft,
}

impl ClientPolicy {
    /// Every client policy, with the paper's cutoff set to `cutoff` where one applies.
    pub fn all(cutoff: usize) -> [ClientPolicy; 8] {
        use ClientPolicy::*;
        [
            Static,
            Random,
            Sequential,
            PrimaryRandom { cutoff },
            PrimaryFixed { cutoff },
            Global,
            StaticFcfs,
            RandomFcfs,
        ]
    }

    /// The policy's name as written on the command line (`primary-random`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ClientPolicy::Static => "static",
            ClientPolicy::Random => "random",
            ClientPolicy::Sequential => "sequential",
            ClientPolicy::PrimaryRandom { .. } => "primary-random",
            ClientPolicy::PrimaryFixed { .. } => "primary-fixed",
            ClientPolicy::Global => "global",
            ClientPolicy::StaticFcfs => "static-fcfs",
            ClientPolicy::RandomFcfs => "random-fcfs",
        }
    }

    /// Parses a name from [`ClientPolicy::name`], giving primary policies the cutoff `cutoff`.
    pub fn parse(name: &str, cutoff: usize) -> Option<ClientPolicy> {
        Self::all(cutoff).into_iter().find(|p| p.name() == name)
    }
}

impl SchedulerPolicy {
    /// Every scheduler policy.
    pub const ALL: [SchedulerPolicy; 8] = [
        SchedulerPolicy::Static,
        SchedulerPolicy::Random,
        SchedulerPolicy::Sequential,
        SchedulerPolicy::PrimaryFixed,
        SchedulerPolicy::PrimaryRandom,
        SchedulerPolicy::PrimarySequential,
        SchedulerPolicy::Global,
        SchedulerPolicy::DistributedFcfs,
    ];

    /// The policy's name as written on the command line (`primary-sequential`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SchedulerPolicy::Static => "static",
            SchedulerPolicy::Random => "random",
            SchedulerPolicy::Sequential => "sequential",
            SchedulerPolicy::PrimaryFixed => "primary-fixed",
            SchedulerPolicy::PrimaryRandom => "primary-random",
            SchedulerPolicy::PrimarySequential => "primary-sequential",
            SchedulerPolicy::Global => "global",
            SchedulerPolicy::DistributedFcfs => "distributed-fcfs",
        }
    }

    /// Parses a name from [`SchedulerPolicy::name`].
    pub fn parse(name: &str) -> Option<SchedulerPolicy> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether every scheduler may reach every queue under this policy (so that any idle
    /// scheduler can be woken for a request in any queue).
    pub fn searches_all(self) -> bool {
        !matches!(
            self,
            SchedulerPolicy::Static | SchedulerPolicy::PrimaryFixed
        )
    }
}

/// The block of Table 3 a policy belongs to: pairs are compatible within a block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    MultiAccess,
    Global,
    DistributedFcfs,
}

fn client_block(c: ClientPolicy) -> Block {
    match c {
        ClientPolicy::Global => Block::Global,
        ClientPolicy::StaticFcfs | ClientPolicy::RandomFcfs => Block::DistributedFcfs,
        _ => Block::MultiAccess,
    }
}

fn scheduler_block(s: SchedulerPolicy) -> Block {
    match s {
        SchedulerPolicy::Global => Block::Global,
        SchedulerPolicy::DistributedFcfs => Block::DistributedFcfs,
        _ => Block::MultiAccess,
    }
}

/// An incompatible scheduler/client pair (Table 3), naming both and the compatible clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incompatible {
    /// The scheduler policy asked for.
    pub scheduler: SchedulerPolicy,
    /// The client policy asked for.
    pub client: ClientPolicy,
    /// The client policies the scheduler policy may be combined with.
    pub compatible: Vec<ClientPolicy>,
}

impl fmt::Display for Incompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.compatible.iter().map(|c| c.name()).collect();
        write!(
            f,
            "scheduler policy `{}` cannot be combined with client policy `{}` (DiBella Table 3); \
             compatible client policies: {}",
            self.scheduler.name(),
            self.client.name(),
            names.join(", ")
        )
    }
}

impl std::error::Error for Incompatible {}

/// The client policies Table 3 allows with `scheduler`.
pub fn compatible_clients(scheduler: SchedulerPolicy, cutoff: usize) -> Vec<ClientPolicy> {
    let b = scheduler_block(scheduler);
    ClientPolicy::all(cutoff)
        .into_iter()
        .filter(|c| client_block(*c) == b)
        .collect()
}

/// Table 3's compatibility rule: the pair is allowed, or an error names both and the clients
/// that would be.
pub fn check_pair(scheduler: SchedulerPolicy, client: ClientPolicy) -> Result<(), Incompatible> {
    if scheduler_block(scheduler) == client_block(client) {
        return Ok(());
    }
    let cutoff = match client {
        ClientPolicy::PrimaryRandom { cutoff } | ClientPolicy::PrimaryFixed { cutoff } => cutoff,
        _ => 0,
    };
    Err(Incompatible {
        scheduler,
        client,
        compatible: compatible_clients(scheduler, cutoff),
    })
}

/// A client's primary (static) queue: clients are spread over the queues as equitably as
/// possible (footnote 4: counts differ by at most one).
#[inline]
pub fn client_primary(client: usize, queues: usize) -> usize {
    client % queues
}

/// A queue other than `primary`, chosen by `draw` uniformly among the `queues - 1` others
/// (`primary` itself when there is only one queue).
#[inline]
pub fn other_queue(primary: usize, queues: usize, draw: u64) -> usize {
    if queues <= 1 {
        return primary;
    }
    (primary + 1 + (draw % (queues as u64 - 1)) as usize) % queues
}

/// A client's fixed secondary queue (Primary/Fixed): distinct from its primary, spread so that
/// the clients sharing a primary use different secondaries.
#[inline]
pub fn client_fixed_secondary(client: usize, queues: usize) -> usize {
    other_queue(
        client_primary(client, queues),
        queues,
        (client / queues) as u64,
    )
}

/// The queue receiving a client's next request. `sequence` counts the client's earlier
/// requests, `primary_len` is the current length of its primary queue (read only by the
/// Primary policies, against their cutoff), and `draw` is a fresh random number.
pub fn client_queue(
    policy: ClientPolicy,
    client: usize,
    sequence: u64,
    queues: usize,
    primary_len: usize,
    draw: u64,
) -> usize {
    debug_assert!(queues > 0);
    let primary = client_primary(client, queues);
    match policy {
        ClientPolicy::Global => 0,
        ClientPolicy::Static | ClientPolicy::StaticFcfs => primary,
        ClientPolicy::Random | ClientPolicy::RandomFcfs => (draw % queues as u64) as usize,
        ClientPolicy::Sequential => ((primary as u64 + sequence) % queues as u64) as usize,
        ClientPolicy::PrimaryRandom { cutoff } => {
            if primary_len >= cutoff {
                other_queue(primary, queues, draw)
            } else {
                primary
            }
        }
        ClientPolicy::PrimaryFixed { cutoff } => {
            if primary_len >= cutoff {
                client_fixed_secondary(client, queues)
            } else {
                primary
            }
        }
    }
}

/// A scheduler's fixed secondary queue (Primary/Fixed): the next queue after its own.
#[inline]
pub fn scheduler_fixed_secondary(me: usize, queues: usize) -> usize {
    (me + 1) % queues
}

/// The queues one scheduler looks in for its next request, in order, each with the direction
/// in which its bitmap is searched. An iterator, so the hot path allocates nothing.
#[derive(Clone, Debug)]
pub struct SearchOrder {
    me: usize,
    queues: usize,
    /// Queue indices still to visit after the primary, as (next, remaining).
    next: usize,
    remaining: usize,
    primary_pending: bool,
    reverse_secondary: bool,
    skip_me: bool,
}

impl SearchOrder {
    /// The search of scheduler `me` over `queues` queues under `policy`. `cursor` is the
    /// Sequential policy's remembered queue; `draw` a fresh random number; `bidirectional`
    /// searches secondary queues right to left.
    pub fn new(
        policy: SchedulerPolicy,
        me: usize,
        queues: usize,
        cursor: usize,
        draw: u64,
        bidirectional: bool,
    ) -> SearchOrder {
        let mut s = SearchOrder {
            me,
            queues,
            next: 0,
            remaining: 0,
            primary_pending: true,
            reverse_secondary: bidirectional,
            skip_me: true,
        };
        match policy {
            SchedulerPolicy::Static | SchedulerPolicy::Global => {}
            SchedulerPolicy::Random => {
                s.primary_pending = false;
                s.skip_me = false;
                s.next = (draw % queues as u64) as usize;
                s.remaining = 1;
            }
            SchedulerPolicy::Sequential => {
                // All other queues, starting at the remembered one.
                let start = if cursor % queues == me {
                    (me + 1) % queues
                } else {
                    cursor % queues
                };
                s.next = start;
                s.remaining = queues;
            }
            SchedulerPolicy::PrimaryFixed => {
                s.next = scheduler_fixed_secondary(me, queues);
                s.remaining = usize::from(queues > 1);
            }
            SchedulerPolicy::PrimaryRandom => {
                s.next = other_queue(me, queues, draw);
                s.remaining = usize::from(queues > 1);
            }
            SchedulerPolicy::PrimarySequential | SchedulerPolicy::DistributedFcfs => {
                s.next = (me + 1) % queues;
                s.remaining = queues.saturating_sub(1);
            }
        }
        s
    }
}

impl Iterator for SearchOrder {
    type Item = (usize, Direction);

    fn next(&mut self) -> Option<(usize, Direction)> {
        if self.primary_pending {
            self.primary_pending = false;
            return Some((self.me, Direction::LeftToRight));
        }
        while self.remaining > 0 {
            let q = self.next;
            self.next = (self.next + 1) % self.queues;
            self.remaining -= 1;
            if q == self.me && self.skip_me {
                continue; // the primary was searched first
            }
            let dir = if self.reverse_secondary && q != self.me {
                Direction::RightToLeft
            } else {
                Direction::LeftToRight
            };
            return Some((q, dir));
        }
        None
    }
}

/// The remembered last-serviced index rule: the first set bit of `bitmap` (a mailbox holding a
/// request) strictly after `last` in direction `dir`, wrapping around, so that every mailbox is
/// eventually serviced (no starvation). `bitmap` is split into 64-bit words, bit `i % 64` of
/// word `i / 64` standing for mailbox `i`.
pub fn next_mailbox(bitmap: &[u64], last: usize, dir: Direction) -> Option<usize> {
    let total = bitmap.len() * 64;
    if total == 0 {
        return None;
    }
    let last = last % total;
    match dir {
        Direction::LeftToRight => {
            let start = (last + 1) % total;
            // Scan from `start` to the end, then from 0 to `start`.
            first_set_from(bitmap, start, total).or_else(|| first_set_from(bitmap, 0, start))
        }
        Direction::RightToLeft => {
            let start = if last == 0 { total - 1 } else { last - 1 };
            last_set_upto(bitmap, start, 0).or_else(|| last_set_upto(bitmap, total - 1, start + 1))
        }
    }
}

/// The cost side of [`next_mailbox`]'s search for an `n`-mailbox queue: how many bits it examines
/// one by one (section 2.2: the scheduler "increments its mailbox index by one and sequentially
/// searches the queue") from the bit after `last` in direction `dir` to bit `found`, wrapping
/// round; all `n` when it finds none.
pub fn bits_examined(n: usize, last: usize, found: Option<usize>, dir: Direction) -> usize {
    let last = last % n;
    match (found, dir) {
        (None, _) => n,
        (Some(i), Direction::LeftToRight) => (i + n - (last + 1) % n) % n + 1,
        (Some(i), Direction::RightToLeft) => ((last + n - 1) % n + n - i) % n + 1,
    }
}

/// First set bit with index in `from..to`.
fn first_set_from(bitmap: &[u64], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while i < to {
        let w = i / 64;
        let word = bitmap[w] >> (i % 64);
        if word != 0 {
            let found = i + word.trailing_zeros() as usize;
            return (found < to).then_some(found);
        }
        i = (w + 1) * 64;
    }
    None
}

/// Last set bit with index in `down_to..=from` (searching downwards from `from`).
fn last_set_upto(bitmap: &[u64], from: usize, down_to: usize) -> Option<usize> {
    if from < down_to {
        return None;
    }
    let mut i = from as isize;
    while i >= down_to as isize {
        let w = i as usize / 64;
        let shift = 63 - (i as usize % 64);
        let word = bitmap[w] << shift;
        if word != 0 {
            let found = i as usize - word.leading_zeros() as usize;
            return (found >= down_to).then_some(found);
        }
        i = (w * 64) as isize - 1;
    }
    None
}

#[cfg(test)]
#[path = "dibella_tests.rs"]
mod tests;
