//! Work before a timed run, so that the host has raised the core's clock when the timing
//! starts. On a lent 16-core Xeon (a virtual machine, 2026-11-27) a 50 ms run of an example
//! started on an idle core took up to 1.9 times as long as the same run right after two
//! seconds of work (docs/performance.md); the 2-core development host showed no such
//! difference. Off unless `SMPSCHED_WARM_MS` names the milliseconds to spin (`benches/ab --warm
//! MS` sets it): a spin timed by the clock would make the instruction counts that cachegrind
//! gives of an example vary from run to run.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Spins the calling thread for `SMPSCHED_WARM_MS` milliseconds (not at all when it is unset
/// or 0); exits with status 2 when it is not a number of milliseconds up to a minute.
pub fn warm_up() {
    let ms = match std::env::var("SMPSCHED_WARM_MS") {
        Err(_) => 0,
        Ok(v) => v.trim().parse::<u64>().unwrap_or_else(|_| {
            eprintln!("SMPSCHED_WARM_MS={v:?}: not a number of milliseconds");
            std::process::exit(2)
        }),
    };
    if ms > 60_000 {
        eprintln!("SMPSCHED_WARM_MS={ms}: more than a minute of spinning (60000) is not a warm-up");
        std::process::exit(2)
    }
    let end = Instant::now() + Duration::from_millis(ms);
    let mut x = 1u64;
    while Instant::now() < end {
        for _ in 0..4096 {
            x = black_box(x.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1));
        }
    }
    black_box(x);
}
