//! How the engine examples (`engine_load`, `engine_floor`) report a load: run it five times and
//! print the events handled and the least nanoseconds an event, the line `benches/ab` reads.

use std::time::Duration;

/// Runs `one` five times (each returns the time it measured and the events it handled) and
/// prints `events TOTAL, least NS ns per event`.
pub fn print_least_of_five(mut one: impl FnMut() -> (Duration, u64)) {
    let mut total = 0;
    let mut least = f64::MAX;
    for _ in 0..5 {
        let (took, events) = one();
        least = least.min(took.as_nanos() as f64 / events.max(1) as f64);
        total += events;
    }
    println!("events {total}, least {least:.1} ns per event");
}
