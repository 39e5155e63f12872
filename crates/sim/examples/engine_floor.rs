//! The floor under the engine benchmark (`engine_load`): its load simulated in a bare event
//! loop, with none of the engine's work but ordering the events. 10,000 threads on 64 processors
//! under round-robin (one first-in first-out queue, a 100,000-cycle slice), each thread computing
//! in chunks of 40,000 cycles (`random`: uniform on [1, 80,000), drawn as the benchmark's threads
//! draw them) with a sleep of 20,000 cycles every fourth operation; the engine's own event queue
//! (`EventQueue`). No switch costs, memory model, policy interface or statistics.
//!
//! ```sh
//! cargo build --release -p smpsched-sim --example engine_floor
//! target/release/examples/engine_floor random      # or identical
//! ```
//!
//! Like `engine_load`, it runs the load five times and prints the events handled and the least
//! nanoseconds per event, so that `benches/ab engine_floor random --vs identical` sets the two
//! demands side by side, and the engine's cost per event can be read against the floor's measured
//! in the same run: how much of the random demands' extra cost is the ordering of events that
//! rarely tie (docs/performance.md).

use std::collections::VecDeque;
use std::time::Instant;

use smpsched_policy::mix::splitmix;
use smpsched_sim::event_queue::EventQueue;

#[path = "../benches/common/least.rs"]
mod least;
#[path = "../benches/common/warm.rs"]
mod warm;

const MEAN: u64 = 40_000;
const SLICE: u64 = 100_000;
const SLEEP: u64 = 20_000;
/// An event's payload: a thread's wake-up, or (with this bit) a processor's segment ending.
const CPU: u64 = 1 << 32;

/// One SplitMix64 step (Steele, Lea and Flood 2014): the draw `splitmix64` of
/// `benches/common/load.rs` makes, through the project's mixing function.
fn splitmix64(state: &mut u64) -> u64 {
    let z = splitmix(*state);
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z
}

/// A thread: operations left, its draws' state, and the compute it has left.
#[derive(Clone, Copy)]
struct Thread {
    left: u32,
    state: u64,
    remaining: u64,
}

/// What a thread does next.
enum Next {
    Compute(u64),
    Sleep,
    Exit,
}

impl Thread {
    /// Its next operation, as the benchmark's `Chunky` makes them (`benches/common/load.rs`).
    fn next(&mut self, random: bool) -> Next {
        if self.left == 0 {
            return Next::Exit;
        }
        self.left -= 1;
        if self.left % 4 == 0 {
            Next::Sleep
        } else if random {
            Next::Compute(1 + splitmix64(&mut self.state) % (2 * MEAN - 1))
        } else {
            Next::Compute(MEAN)
        }
    }
}

/// A processor: its thread, when its slice ends and when its current segment began.
#[derive(Clone, Copy)]
struct Proc {
    thread: Option<u32>,
    slice_end: u64,
    seg_start: u64,
}

/// The load's state.
struct Floor {
    random: bool,
    threads: Vec<Thread>,
    procs: Vec<Proc>,
    ready: VecDeque<u32>,
    idle: Vec<usize>,
    events: EventQueue,
}

impl Floor {
    /// Starts processor `c`'s segment of `n` cycles at `now` (to its compute's end or its
    /// slice's, whichever comes first).
    fn segment(&mut self, c: usize, now: u64, n: u64) {
        self.procs[c].seg_start = now;
        let end = (now + n).min(self.procs[c].slice_end);
        self.events.push(end, CPU | c as u64);
    }

    /// Gives processor `c` the next ready thread at `now`, with a fresh slice, or leaves it idle.
    fn dispatch(&mut self, c: usize, now: u64) {
        while let Some(th) = self.ready.pop_front() {
            let thread = &mut self.threads[th as usize];
            if thread.remaining == 0 {
                match thread.next(self.random) {
                    Next::Compute(n) => thread.remaining = n,
                    Next::Sleep => {
                        self.events.push(now + SLEEP, u64::from(th));
                        continue;
                    }
                    Next::Exit => continue,
                }
            }
            let n = thread.remaining;
            self.procs[c].thread = Some(th);
            self.procs[c].slice_end = now + SLICE;
            self.segment(c, now, n);
            return;
        }
        self.procs[c].thread = None;
        self.idle.push(c);
    }

    /// A thread wakes at `now`: to the back of the queue, and onto an idle processor if any.
    fn wake(&mut self, th: u32, now: u64) {
        self.ready.push_back(th);
        if let Some(c) = self.idle.pop() {
            self.dispatch(c, now);
        }
    }

    /// Processor `c`'s segment ends at `now`: its thread's compute or its slice is over.
    fn segment_end(&mut self, c: usize, now: u64) {
        let th = self.procs[c]
            .thread
            .expect("a segment ends on a busy processor");
        let ran = now - self.procs[c].seg_start;
        let slice_over = now >= self.procs[c].slice_end;
        let thread = &mut self.threads[th as usize];
        thread.remaining -= ran;
        if thread.remaining > 0 {
            // The slice ended first: round-robin puts it at the back.
            self.ready.push_back(th);
            return self.dispatch(c, now);
        }
        match thread.next(self.random) {
            Next::Compute(n) => {
                thread.remaining = n;
                if slice_over {
                    self.ready.push_back(th);
                    self.dispatch(c, now);
                } else {
                    // It goes on until its slice ends.
                    self.segment(c, now, n);
                }
            }
            Next::Sleep => {
                self.events.push(now + SLEEP, u64::from(th));
                self.dispatch(c, now);
            }
            Next::Exit => self.dispatch(c, now),
        }
    }
}

/// Runs the load; the events handled.
fn run(random: bool, procs: usize, threads: u32, ops: u32) -> u64 {
    let mut f = Floor {
        random,
        threads: (0..threads)
            .map(|i| Thread {
                left: ops,
                state: u64::from(i),
                remaining: 0,
            })
            .collect(),
        procs: vec![
            Proc {
                thread: None,
                slice_end: 0,
                seg_start: 0,
            };
            procs
        ],
        ready: (0..threads).collect(),
        idle: Vec::new(),
        events: EventQueue::default(),
    };
    for c in 0..procs {
        f.dispatch(c, 0);
    }
    let mut handled = 0u64;
    while let Some((now, e)) = f.events.pop() {
        handled += 1;
        if e & CPU == 0 {
            f.wake(e as u32, now);
        } else {
            f.segment_end((e & !CPU) as usize, now);
        }
    }
    handled
}

fn main() {
    let random = std::env::args().nth(1).as_deref() == Some("random");
    warm::warm_up();
    least::print_least_of_five(|| {
        let start = Instant::now();
        let events = run(random, 64, 10_000, 40);
        (start.elapsed(), events)
    });
}
