//! Memory budget: how much memory a run will take (from its threads and processors) and how
//! much the machine can give, so that a point that cannot fit is refused before anything runs
//! (a bad-input error naming the file, line and field) and parallel runs are capped so that
//! together they fit, instead of the system killing the process halfway through a sweep.
//!
//! The decisions are pure functions of the estimates; [`available`] is the one probe of the
//! machine (`SMPSCHED_MEMORY`, else the cgroup limit and `MemAvailable` on Linux).

use std::path::PathBuf;

use smpsched_sim::engine::{PROC_FOOTPRINT_BYTES, THREAD_FOOTPRINT_BYTES};

use crate::input::error::InputError;

/// Memory a simulation needs besides its threads and processors (tables, queues, buffers).
const BASE_BYTES: u64 = 16 << 20;

/// The environment variable that states the memory available to smpsched, in bytes or with a
/// `K`, `M`, `G` or `T` suffix (powers of 1,024), overriding what the machine reports.
pub const MEMORY_ENV: &str = "SMPSCHED_MEMORY";

/// Estimated bytes for one run of a point with `threads` threads on `processors` processors,
/// besides its memory model ([`smpsched_sim::memory::footprint_bytes`]).
pub fn run_bytes(threads: u64, processors: u32) -> u64 {
    BASE_BYTES
        .saturating_add(threads.saturating_mul(THREAD_FOOTPRINT_BYTES))
        .saturating_add(u64::from(processors).saturating_mul(PROC_FOOTPRINT_BYTES))
}

/// Peak memory of the results over their records' own size: the records, and their text
/// (`results.json`, `results.csv`) made in memory before the files are written. Measured:
/// 100,000 runs of a 4-processor synthetic point peaked at 1.05 GB (results.json 290 MB)
/// against 154 MiB for the records, 6.8 times; before the factor, a million runs that the
/// estimate let through aborted after every run was made, losing them all.
const RESULTS_OVER_RECORDS: u64 = 7;

/// Estimated bytes the results of `runs` runs take until they are written: each run's report
/// (a time split per processor and measures per application) and its record, and their text
/// (`RESULTS_OVER_RECORDS`).
pub fn records_bytes(runs: u64, processors: u32, apps: usize) -> u64 {
    const RECORD_BYTES: u64 = 1024;
    const PER_PROCESSOR: u64 = std::mem::size_of::<smpsched_sim::TimeSplit>() as u64;
    const PER_APP: u64 = std::mem::size_of::<smpsched_sim::AppReport>() as u64 + 64;
    let one = RECORD_BYTES
        .saturating_add(u64::from(processors).saturating_mul(PER_PROCESSOR))
        .saturating_add((apps as u64).saturating_mul(PER_APP));
    runs.saturating_mul(one)
        .saturating_mul(RESULTS_OVER_RECORDS)
}

/// How many runs may go at once: at most `jobs`, and no more than fit in `available` bytes
/// when each may need `largest`; always at least one.
pub fn concurrent_runs(jobs: usize, largest: u64, available: Option<u64>) -> usize {
    match available {
        Some(avail) if largest > 0 => {
            let fit = usize::try_from(avail / largest).unwrap_or(usize::MAX);
            jobs.min(fit).max(1)
        }
        _ => jobs.max(1),
    }
}

/// Bytes rendered for people: `1.5 GiB`, `640 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses a byte count: digits with an optional `K`, `M`, `G` or `T` suffix (powers of 1,024,
/// an optional trailing `B` or `iB`).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'K' | 'k') => (&t[..i], 10),
        (i, 'M' | 'm') => (&t[..i], 20),
        (i, 'G' | 'g') => (&t[..i], 30),
        (i, 'T' | 't') => (&t[..i], 40),
        _ => (t, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The memory smpsched may use, in bytes: `SMPSCHED_MEMORY` if set, else the least of the
/// cgroup's remaining allowance and the system's `MemAvailable` (Linux); `None` where neither
/// can be read (then no limit is applied). An unreadable `SMPSCHED_MEMORY` is bad input.
pub fn available() -> Result<Option<u64>, InputError> {
    if let Some(v) = std::env::var_os(MEMORY_ENV) {
        let text = v.to_string_lossy();
        return parse_bytes(&text).map(Some).ok_or_else(|| InputError {
            file: PathBuf::from(MEMORY_ENV),
            line: None,
            field: String::new(),
            message: format!(
                "must be a number of bytes, optionally with a K, M, G or T suffix (e.g. 8G), \
                 got `{text}`"
            ),
        });
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| mem_available(&s));
    let cgroup = cgroup_room(
        std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok(),
        std::fs::read_to_string("/sys/fs/cgroup/memory.current").ok(),
    );
    Ok(match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

/// `MemAvailable` from the text of `/proc/meminfo`, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// Room left under a cgroup v2 memory limit (`memory.max` minus `memory.current`).
fn cgroup_room(max: Option<String>, current: Option<String>) -> Option<u64> {
    let max: u64 = max?.trim().parse().ok()?; // "max" (no limit) does not parse
    let current: u64 = current.and_then(|c| c.trim().parse().ok()).unwrap_or(0);
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hint of a run stopped at the memory's thread bound names this module's variable.
    #[test]
    fn the_thread_bound_hint_names_the_memory_variable() {
        let stopped = smpsched_sim::SimError::TooManyThreads(1_000);
        assert!(crate::input::error::run_hint(&stopped).contains(MEMORY_ENV));
        let engine = smpsched_sim::SimError::TooManyThreads(smpsched_sim::config::MAX_THREADS);
        assert_eq!(crate::input::error::run_hint(&engine), "");
    }

    #[test]
    fn a_run_grows_with_its_threads() {
        let small = run_bytes(10, 8);
        let big = run_bytes(10_000_000, 8);
        assert!(small < 32 << 20, "{small}");
        // Ten million threads take gigabytes (about 510 bytes each were measured).
        assert!(big > 4 << 30 && big < 8 << 30, "{big}");
        assert_eq!(run_bytes(u64::MAX, u32::MAX), u64::MAX);
    }

    #[test]
    fn results_held_in_memory_grow_with_runs_and_processors() {
        let small = records_bytes(10, 4, 1);
        assert!(small < 1 << 20, "{small}");
        // A billion runs of a 1,024-processor machine cannot be held.
        assert!(records_bytes(1_000_000_000, 1024, 2) > 1 << 40);
        assert_eq!(records_bytes(u64::MAX, u32::MAX, usize::MAX), u64::MAX);
    }

    #[test]
    fn parallel_runs_are_capped_to_fit() {
        let gib = 1u64 << 30;
        assert_eq!(concurrent_runs(16, 5 * gib, Some(24 * gib)), 4);
        assert_eq!(concurrent_runs(2, 5 * gib, Some(24 * gib)), 2);
        assert_eq!(concurrent_runs(16, 5 * gib, None), 16);
        // Never below one: a point that does not fit at all is refused elsewhere.
        assert_eq!(concurrent_runs(16, 30 * gib, Some(24 * gib)), 1);
        assert_eq!(concurrent_runs(0, gib, Some(gib)), 1);
    }

    #[test]
    fn byte_counts_parse_and_print() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("512M"), Some(512 << 20));
        assert_eq!(parse_bytes("2GiB"), Some(2 << 30));
        assert_eq!(parse_bytes(" 1 T "), Some(1 << 40));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("-1G"), None);
        assert_eq!(parse_bytes("99999999999T"), None);
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 29), "1.5 GiB");
    }

    #[test]
    fn machine_reports_are_read() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(mem_available(meminfo), Some(20_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(
            cgroup_room(Some("1000\n".into()), Some("300\n".into())),
            Some(700)
        );
        assert_eq!(cgroup_room(Some("max\n".into()), Some("300".into())), None);
        assert_eq!(cgroup_room(None, None), None);
    }
}
