//! Stress: producers and consumers on every structure, each item checked to be taken exactly
//! once (and by a worker its mask allows). `SMPSCHED_STRESS_ITEMS` sets the items per structure
//! (default 100,000, for CI); the long run is e.g.
//! `SMPSCHED_STRESS_ITEMS=300000000 cargo test -p smpsched-queues --release --test stress`.

mod common;

use common::{makers, producers_consumers};

fn items() -> usize {
    std::env::var("SMPSCHED_STRESS_ITEMS")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(100_000)
}

#[test]
fn every_item_is_taken_exactly_once() {
    let items = items();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = threads.clamp(3, 8);
    let producers = (threads / 2).clamp(2, 4);
    for (name, make) in makers() {
        let t = std::time::Instant::now();
        producers_consumers(make, name, producers, workers, items);
        eprintln!(
            "{name}: {items} items, {producers} producers, {workers} consumers, {:.2} s",
            t.elapsed().as_secs_f64()
        );
    }
}
