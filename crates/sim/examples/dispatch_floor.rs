//! The floor under the peers comparison (`benches/peers/`): the least a
//! discrete-event simulation of its load can cost on this host, with none of a lab's work. 1,024
//! periodic tasks (500 us of run every 10 ms, the sleep mode's load) on 64 processors for 10 s
//! simulated; one shared queue in weighted virtual-time order, as `scx_simple`'s; a woken task
//! taken at once by an idle processor, else queued; the engine's own event queue
//! (`EventQueue`). No memory model, no policy interface, no statistics but dispatches and each
//! task's runtime.
//!
//! ```sh
//! cargo build --release -p smpsched-sim --example dispatch_floor
//! target/release/examples/dispatch_floor TASKS CPUS [RUN_US PERIOD_US SECONDS]
//! ```
//!
//! Each task wakes at the start of each period (rt-app's timer; with no waiting, as its sleep
//! mode does too). It prints the dispatches, the wall time of the simulation and each task's
//! runtime (mean, least, most), which `benches/peers/scx-simulator.sh` sets beside `smpsched
//! run` and `scxsim` on the same load.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use smpsched_sim::event_queue::EventQueue;

#[path = "../benches/common/warm.rs"]
mod warm;

/// An event's payload: a task's wake-up, or (with this bit) a processor's run ending.
const CPU: u64 = 1 << 32;

fn main() {
    let mut args = std::env::args().skip(1);
    let tasks: u64 = args.next().map_or(1024, |s| s.parse().expect("TASKS"));
    let cpus: u64 = args.next().map_or(64, |s| s.parse().expect("CPUS"));
    let mut number = |default: u64| {
        args.next()
            .map_or(default, |s| s.parse().expect("a number"))
    };
    // In nanoseconds.
    let (run, period, end) = (
        number(500) * 1_000,
        number(10_000) * 1_000,
        number(10) * 1_000_000_000,
    );
    warm::warm_up();
    let start = Instant::now();
    let mut events = EventQueue::default();
    // (vtime, insertion number, task) packed in one key: one comparison a step of the heap.
    let mut queue: BinaryHeap<Reverse<u128>> = BinaryHeap::new();
    let mut inserted = 0u128;
    let mut vtime = vec![0u64; tasks as usize];
    let mut runtime = vec![0u64; tasks as usize];
    let mut running = vec![(0u64, 0u64); cpus as usize];
    let mut idle: Vec<u64> = (0..cpus).rev().collect();
    let (mut dispatches, mut global) = (0u64, 0u64);
    for t in 0..tasks {
        events.push(0, t);
    }
    while let Some((now, e)) = events.pop() {
        if now > end {
            break;
        }
        if e & CPU == 0 {
            if let Some(c) = idle.pop() {
                running[c as usize] = (e, now);
                dispatches += 1;
                events.push(now + run, CPU | c);
            } else {
                // scx_simple: at most one slice (20 ms) behind the global vtime.
                let v = vtime[e as usize].max(global.saturating_sub(20_000_000));
                inserted += 1;
                queue.push(Reverse(
                    (u128::from(v) << 64) | (inserted << 32) | u128::from(e),
                ));
            }
            continue;
        }
        let c = e & !CPU;
        let (t, began) = running[c as usize];
        runtime[t as usize] += now - began;
        vtime[t as usize] += now - began;
        global = global.max(vtime[t as usize]);
        events.push((now / period + 1) * period, t);
        match queue.pop() {
            Some(Reverse(k)) => {
                running[c as usize] = ((k as u64) & 0xffff_ffff, now);
                dispatches += 1;
                events.push(now + run, CPU | c);
            }
            None => idle.push(c),
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let ms = |ns: u64| ns as f64 / 1e6;
    let mean = ms(runtime.iter().sum::<u64>()) / tasks as f64;
    let (least, most) = (runtime.iter().min(), runtime.iter().max());
    println!(
        "{tasks} tasks on {cpus} processors: {dispatches} dispatches in {wall:.4} s, {:.2} M a \
         second ({:.0} ns each); runtime {mean:.2} ms a task (least {:.2}, most {:.2})",
        dispatches as f64 / wall / 1e6,
        wall * 1e9 / dispatches as f64,
        ms(*least.unwrap_or(&0)),
        ms(*most.unwrap_or(&0)),
    );
}
