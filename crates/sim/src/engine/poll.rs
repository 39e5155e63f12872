//! Polling a word until it reads 0 ([`Op::Poll`](crate::Op::Poll)): the read loop of the
//! test-and-test-and-set spin lock DiBella et al. 1992 build every queue lock on (section 2.1).
//! The engine runs it as the program would (a pause as computation, then a load through the
//! memory model), and parks the poller once a load hits with the word non-zero: while the line
//! stays in its cache every load hits, costs the fixed hit time and makes no bus traffic, so
//! the poller is stepped no more until the line leaves its cache (another processor's write
//! invalidates it) or something interrupts it. It is then brought up to date at once: the hits
//! it made are counted as [`MemorySystem::access`](crate::memory::MemorySystem::access) would
//! have counted them, its time is charged as useful as the pauses and hits would have been, and
//! it resumes in the pause or the load it is in, its next load missing.
//!
//! Exactness: the same cycles, charges and outcomes as stepping every poll, and the same order
//! of simultaneous events. A poller is woken at the access that invalidates its line, before
//! that access schedules anything; a load of the poller's at that very cycle counts as made
//! when stepping would have scheduled it before the event being handled; and the poller's next
//! event is queued where stepping would have queued it among the events of its cycle
//! ([`EventQueue::push_before`](crate::event_queue::EventQueue::push_before)), pollers woken
//! together in the order their chains of events would have had. Two events scheduled at the
//! same cycle by different processors are ordered by what each processor last did, one level
//! deep; a tie beyond that can still order them differently (at scale 0.1, 8 of the 294
//! values of `reproduce dibella92` moved, by at most 0.12%). A processor is parked only under
//! no quantum (a slice's end would need an event). `tests/poll.rs` checks the stepped and the
//! polled runs equal on two to sixteen processors.

use super::segment::{Seg, Step};
use super::{EventKind, Simulation};
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::metrics::Category;
use crate::outcome::{Outcome, WordOp};
use crate::pause::{Pause, STREAK};

/// A thread's poll in progress.
#[derive(Clone, Debug)]
pub(super) struct Polling {
    addr: u64,
    pause: Pause,
    /// Pauses made so far (the index of the next).
    n: u32,
    /// Whether the load comes next (else the pause).
    load_next: bool,
    /// While parked: where.
    parked: Option<Park>,
}

impl Simulation {
    /// Starts thread `ti`'s poll of `addr`, paced by `pause`, `pauses` pauses made so far.
    pub(super) fn start_poll(&mut self, ti: usize, addr: u64, pause: Pause, pauses: u32) {
        self.polls.insert(
            ti,
            Polling {
                addr,
                pause,
                n: pauses,
                load_next: false,
                parked: None,
            },
        );
        self.cx.threads[ti].exec.polling = true;
    }

    /// One step of thread `t`'s poll on `p`: `None` when a pause was set as the thread's
    /// compute (the interpreter runs it), else the step of the load it issued.
    pub(super) fn poll_step(&mut self, p: usize, t: ThreadId) -> Option<Step> {
        let ti = t.index();
        let pl = self
            .polls
            .get_mut(&ti)
            .expect("a polling thread has a poll");
        if !pl.load_next {
            let c = pl.pause.nth(pl.n);
            pl.n = pl.n.saturating_add(1);
            pl.load_next = true;
            self.cx.threads[ti].exec.remaining = c;
            return None;
        }
        pl.load_next = false;
        let addr = pl.addr;
        let charge = self.word(p, t, addr, WordOp::Load);
        let old = self.words.get(&addr).copied().unwrap_or(0);
        if old == 0 {
            let pauses = self.polls.remove(&ti).map_or(0, |pl| pl.n);
            self.cx.threads[ti].exec.polling = false;
            self.set_outcome(ti, Outcome::Polled { old, pauses });
            return Some(self.start_word(p, t, charge));
        }
        let hit = charge.stall == 0 && charge.misses == 0;
        if hit
            && self.procs[p].quantum_end == Cycles::MAX
            && self.memory.watch(ProcId(p as u32), addr)
        {
            let task = self.cx.threads[ti].info.task.index();
            self.apps[task].mem += charge;
            self.parks += 1;
            let park = Park {
                load: self.cx.now,
                pushed: self.procs[p].pushed,
                hit: charge.total(),
                seq: self.parks,
            };
            if let Some(pl) = self.polls.get_mut(&ti) {
                pl.parked = Some(park);
            }
            self.start_seg(p, Seg::Poll, Cycles::MAX);
            return Some(Step::Busy);
        }
        Some(self.start_word(p, t, charge))
    }

    /// Wakes the parked pollers whose line was invalidated. Their next events are scheduled in
    /// the order stepping would have had them at one cycle: by when each would have been
    /// scheduled, then by when the event that scheduled it was, and so on back (pollers whose
    /// pauses fell into step keep the order they had), then by when they parked.
    pub(super) fn wake_pollers(&mut self) {
        let mut woken = std::mem::take(&mut self.woken);
        self.memory.take_woken(&mut woken);
        if woken.len() > 1 {
            let mut keyed: Vec<(Option<Resume>, u32)> = woken
                .iter()
                .map(|&p| (self.resume_of(p as usize), p))
                .collect();
            keyed.sort_by(|(a, pa), (b, pb)| {
                match (a, b) {
                    (Some(a), Some(b)) => a.wake_order(b),
                    (a, b) => a.is_some().cmp(&b.is_some()),
                }
                .then(pa.cmp(pb))
            });
            woken.clear();
            woken.extend(keyed.iter().map(|&(_, p)| p));
            // Each brought up to now with the place just computed for the order (waking one
            // poller changes no other's), not walked again.
            for (r, p) in keyed {
                self.unpark_then(p as usize, true, r);
            }
        } else {
            for &p in &woken {
                self.unpark(p as usize);
            }
        }
        self.woken = woken;
    }

    /// Where processor `p`'s parked poller (if it has one) stands now, without changing it.
    fn resume_of(&self, p: usize) -> Option<Resume> {
        let t = self.procs[p].thread?;
        let pl = self.polls.get(&t.index())?;
        let park = pl.parked?;
        Some(park.resume(pl, self.cx.now, self.event_pushed))
    }

    /// Brings processor `p`'s parked poller (if it has one) up to now: counts the loads it made
    /// (a load at this very cycle counts when it would have been scheduled before the event
    /// being handled), charges its time, and starts the segment it is in: the rest of a load,
    /// or the rest of a pause (ending at the next load, which will miss).
    pub(super) fn unpark(&mut self, p: usize) {
        self.unpark_then(p, true, None);
    }

    /// [`Simulation::unpark`] at the end of a run: the poller's loads so far are counted and
    /// its time charged, and nothing more is scheduled (a run stopped at a bound may have
    /// handled events past its last time).
    pub(super) fn unpark_at_end(&mut self, p: usize) {
        self.unpark_then(p, false, None);
    }

    /// [`Simulation::unpark`], with where the poller stands (`known`) when the caller has just
    /// computed it ([`Simulation::resume_of`]) and the poller is still parked.
    fn unpark_then(&mut self, p: usize, schedule: bool, known: Option<Resume>) {
        let still_parked = || {
            let t = self.procs[p].thread?;
            self.polls.get(&t.index())?.parked
        };
        let r = match known {
            Some(r) if still_parked().is_some() => r,
            _ => match self.resume_of(p) {
                Some(r) => r,
                None => return,
            },
        };
        let ti = self.procs[p].thread.expect("a parked poller runs").index();
        let pid = ProcId(p as u32);
        self.memory.unwatch(pid);
        self.settle(p);
        let pl = self.polls.get_mut(&ti).expect("still polling");
        pl.parked = None;
        pl.n = r.n;
        pl.load_next = r.in_pause;
        if r.loads > 0 {
            let c = self.memory.record_hits(pid, r.loads);
            let task = self.cx.threads[ti].info.task.index();
            self.apps[task].mem += c;
        }
        let now = self.cx.now;
        let seg = if r.in_pause {
            self.cx.threads[ti].exec.remaining = r.end - now;
            Seg::Compute
        } else {
            Seg::fixed(&[(Category::Useful, r.end - now)])
        };
        self.start_seg(p, seg, Cycles::MAX);
        if !schedule {
            return;
        }
        // Scheduled where stepping would have scheduled it: among the events of its cycle,
        // before those scheduled after it.
        let pushed = r.chain().next().expect("a chain holds the park's event");
        let proc = &mut self.procs[p];
        proc.pushed = pushed;
        let kind = EventKind::Proc {
            p: p as u32,
            epoch: proc.epoch,
        };
        self.pending_work += 1;
        let procs = &self.procs;
        self.agenda
            .push_before(r.end, kind.pack(), |e| match EventKind::unpack(e) {
                EventKind::Proc { p, epoch } => {
                    let q = &procs[p as usize];
                    q.epoch == epoch && q.pushed > pushed
                }
                _ => false,
            });
    }
}

/// A parked poller: when its last (hit) load began and when the event that began it was
/// scheduled, the hit time, and its place in the order pollers parked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Park {
    load: Cycles,
    pushed: Cycles,
    hit: Cycles,
    seq: u64,
}

/// Where a parked poller stands at a time: the hit loads made since it parked, the index of its
/// next pause, whether it is in a pause (else in a load) and when that ends; with what it
/// takes to recompute, latest first, when stepping would have scheduled that end's event, the
/// event before, and so on back to the park ([`Resume::chain`]).
struct Resume {
    loads: u64,
    n: u32,
    in_pause: bool,
    end: Cycles,
    seq: u64,
    park: Park,
    pause: Pause,
    /// The index of the first pause after the park.
    n0: u32,
}

impl Park {
    /// Where the poller `pl` parked so stands at `now`, while handling an event scheduled at
    /// `pushed`: a load at `now` came first if it would have been scheduled before that.
    fn resume(self, pl: &Polling, now: Cycles, pushed: Cycles) -> Resume {
        let (mut load, mut n, mut loads) = (self.load, pl.n, 0u64);
        // Whether stepping's event at `at`, scheduled at `by`, was handled before now's.
        let fired = |at: Cycles, by: Cycles| at < now || (at == now && by < pushed);
        // The rounds (a load, then a pause of the constant first pauses) that ended before now
        // all fired: taken at once, as the walk below would take them one by one.
        let stride = self.hit + pl.pause.cycles;
        let constant = u64::from(STREAK.saturating_sub(n));
        if now > load && constant > 0 {
            let rounds = ((now - 1 - load) / stride).min(constant);
            load += rounds * stride;
            n += rounds as u32;
            loads += rounds;
        }
        let (in_pause, end) = loop {
            // The load's end, scheduled as it began; then the pause's end, as it began.
            let start = load + self.hit;
            if !fired(start, load) {
                break (false, start);
            }
            let next = start + pl.pause.nth(n);
            n = n.saturating_add(1);
            if !fired(next, start) {
                break (true, next);
            }
            load = next;
            loads += 1;
        };
        Resume {
            loads,
            n,
            in_pause,
            end,
            seq: self.seq,
            park: self,
            pause: pl.pause,
            n0: pl.n,
        }
    }
}

impl Resume {
    /// The `k`-th pause since the park, as the walk drew it (the index saturates).
    fn pause_nth(&self, k: u64) -> Cycles {
        let n = (u64::from(self.n0) + k).min(u64::from(u32::MAX)) as u32;
        self.pause.nth(n)
    }

    /// When stepping would have scheduled the end's event, the event before it, and so on back
    /// to the event that parked the poller, latest first: each load's end was scheduled as the
    /// load began, each pause's end as the pause began. Recomputed backwards from the end, so a
    /// long park stores nothing per poll.
    fn chain(&self) -> Chain<'_> {
        let m = self.loads;
        let state = if self.in_pause {
            Link::Start(m, self.end - self.pause_nth(m))
        } else {
            Link::Load(m, self.end - self.park.hit)
        };
        Chain { r: self, state }
    }

    /// The order of two woken pollers' next events at one cycle: by their time, then by their
    /// chains (compared latest first, a chain that ends first before a longer one), then by
    /// when they parked.
    fn wake_order(&self, other: &Resume) -> std::cmp::Ordering {
        self.end
            .cmp(&other.end)
            .then_with(|| self.chain().cmp(other.chain()))
            .then(self.seq.cmp(&other.seq))
    }
}

/// A link of a [`Resume::chain`]: the start (end of the hit) of load `k` since the park, the
/// beginning of load `k`, the event that parked, or none left.
#[derive(Clone, Copy)]
enum Link {
    Start(u64, Cycles),
    Load(u64, Cycles),
    Parked,
    Done,
}

/// The iterator of [`Resume::chain`].
struct Chain<'a> {
    r: &'a Resume,
    state: Link,
}

impl Iterator for Chain<'_> {
    type Item = Cycles;

    fn next(&mut self) -> Option<Cycles> {
        let (item, next) = match self.state {
            Link::Start(k, t) => (t, Link::Load(k, t - self.r.park.hit)),
            Link::Load(0, t) => (t, Link::Parked),
            Link::Load(k, t) => (t, Link::Start(k - 1, t - self.r.pause_nth(k - 1))),
            Link::Parked => (self.r.park.pushed, Link::Done),
            Link::Done => return None,
        };
        self.state = next;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain as the walk forward would list it, latest first (the stored form it replaces).
    fn forward(park: Park, pl: &Polling, now: Cycles, pushed: Cycles) -> Vec<Cycles> {
        let (mut load, mut n) = (park.load, pl.n);
        let mut pushes = vec![park.pushed];
        let fired = |at: Cycles, by: Cycles| at < now || (at == now && by < pushed);
        loop {
            let start = load + park.hit;
            pushes.push(load);
            if !fired(start, load) {
                break;
            }
            let next = start + pl.pause.nth(n);
            n = n.saturating_add(1);
            pushes.push(start);
            if !fired(next, start) {
                break;
            }
            load = next;
        }
        pushes.reverse();
        pushes
    }

    #[test]
    fn the_chain_recomputed_backwards_is_the_walk_forward() {
        for (n0, cycles) in [(0, 32), (60, 7), (u32::MAX - 3, 5)] {
            let pl = Polling {
                addr: 0,
                pause: Pause::new(cycles, 99),
                n: n0,
                load_next: false,
                parked: None,
            };
            let park = Park {
                load: 1000,
                pushed: 990,
                hit: 2,
                seq: 1,
            };
            for now in [1000, 1001, 1002, 1003, 1040, 1500, 20_000] {
                for pushed in [0, 1001, Cycles::MAX] {
                    let r = park.resume(&pl, now, pushed);
                    let chain: Vec<Cycles> = r.chain().collect();
                    assert_eq!(chain, forward(park, &pl, now, pushed), "n0 {n0} now {now}");
                    assert_eq!(chain.len() as u64, 2 + 2 * r.loads + u64::from(r.in_pause));
                }
            }
        }
    }
}
