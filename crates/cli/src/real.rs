//! `smpsched real`: DiBella's client/scheduler request test on real threads, over the real
//! ready queues of `smpsched-queues` (the logic lives in `smpsched_queues::requests`; this file
//! only parses arguments and prints the table).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::stdout;
use smpsched_policy::dibella::{compatible_clients, ClientPolicy, SchedulerPolicy};
use smpsched_queues::requests::{self, Load, RequestReport, RequestTest, STRUCTURES};

/// Arguments of `smpsched real`.
#[derive(Args, Debug)]
pub struct RealArgs {
    /// Ready-queue structure: multi-access, global, distributed-fcfs, ddq, mach or per-core
    /// [default: the one --scheduler implies, multi-access for the paper's policies].
    #[arg(long, value_name = "NAME")]
    structure: Option<String>,
    /// Scheduler policy (multi-access: static, random, sequential, primary-fixed,
    /// primary-random, primary-sequential; or global, distributed-fcfs) [default: sequential].
    #[arg(long, value_name = "POLICY")]
    scheduler: Option<String>,
    /// Client policy (static, random, sequential, primary-random, primary-fixed; global;
    /// static-fcfs, random-fcfs), compatible with the scheduler policy as in DiBella's Table 3
    /// [default: primary-random, or the structure's own].
    #[arg(long, value_name = "POLICY")]
    client: Option<String>,
    /// Cutoff capacity of the Primary client policies [default: the number of clients].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    cutoff: Option<usize>,
    /// Scheduler threads (one queue each), 1 to 64.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        allow_negative_numbers = true
    )]
    schedulers: usize,
    /// Client threads, 1 to 256.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        allow_negative_numbers = true
    )]
    clients: usize,
    /// Load: synchronous, uniform (asynchronous) or non-uniform (asynchronous)
    /// [default: non-uniform].
    #[arg(long, value_name = "LOAD")]
    load: Option<String>,
    /// Service time per request in microseconds, spent spinning by the scheduler (0: NULL),
    /// at most 1,000,000 [default: 0].
    #[arg(long, value_name = "US", allow_hyphen_values = true)]
    service_us: Option<f64>,
    /// Time an asynchronous client waits between requests, in microseconds, at most
    /// 1,000,000 [default: 50]. Under the non-uniform load only the slow clients wait (those
    /// not in the first of --schedulers sets): with one scheduler or one client, none does.
    #[arg(long, value_name = "US", allow_hyphen_values = true)]
    interarrival_us: Option<f64>,
    /// Requests in all (the paper: 20,000), at most 2,000,000; with --george, items per
    /// producer (producers x items at most 2,000,000). A test that would take more than 600 s
    /// by its own arithmetic (services spread over the schedulers, or a client's waits) is
    /// refused. Schedulers and clients spin while they wait, one core each.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20_000,
        allow_negative_numbers = true
    )]
    requests: usize,
    /// Mailboxes per multi-access queue, 1 to 1,024 (the paper: 32) [default: 32].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    mailboxes: Option<usize>,
    /// Run every pair of Table 3's first block (the 30 rows of Table 4) instead of one pair.
    #[arg(long, conflicts_with_all = ["structure", "scheduler", "client"])]
    table4: bool,
    /// Instead of DiBella's test, run George's: producer/consumer (--clients producers of
    /// --requests items each against --schedulers consumers) and a prime sieve up to 2,000,000
    /// as tasks on a pool of --schedulers workers, over every structure.
    #[arg(long, conflicts_with_all = [
        "table4", "structure", "scheduler", "client", "cutoff", "load", "service_us",
        "interarrival_us", "mailboxes",
    ])]
    george: bool,
}

/// Most requests (or items per producer) one run takes: their delays are kept in memory.
pub const MAX_REQUESTS: usize = 2_000_000;
/// Most client (producer) threads.
pub const MAX_CLIENTS: usize = 256;
/// Longest service or interarrival time, in microseconds (one second).
pub const MAX_US: f64 = 1e6;
/// Longest a run may take at the least, by its own arithmetic (requests x service spread over
/// the schedulers, or each client's requests x interarrival), in seconds.
pub const MAX_RUN_SECONDS: f64 = 600.0;

/// A time in microseconds as given, checked: finite, 0 to [`MAX_US`].
fn micros(flag: &str, v: f64) -> Result<Duration, String> {
    if !v.is_finite() || !(0.0..=MAX_US).contains(&v) {
        return Err(format!(
            "{flag}: must be a number of microseconds from 0 to {MAX_US:.0}, got {v}"
        ));
    }
    Ok(Duration::from_secs_f64(v / 1e6))
}

/// The sizes shared by DiBella's and George's tests, checked.
fn check_counts(a: &RealArgs) -> Result<(), String> {
    let max_w = smpsched_queues::MAX_WORKERS;
    if !(1..=max_w).contains(&a.schedulers) {
        return Err(format!(
            "--schedulers: must be 1 to {max_w}, got {}",
            a.schedulers
        ));
    }
    if !(1..=MAX_CLIENTS).contains(&a.clients) {
        return Err(format!(
            "--clients: must be 1 to {MAX_CLIENTS}, got {}",
            a.clients
        ));
    }
    if !(1..=MAX_REQUESTS).contains(&a.requests) {
        return Err(format!(
            "--requests: must be 1 to {MAX_REQUESTS}, got {} (the paper: 20,000)",
            a.requests
        ));
    }
    Ok(())
}

fn george(a: &RealArgs) -> ExitCode {
    use smpsched_queues::george::{producer_consumer, sieve};
    use smpsched_queues::pool::{Pool, PoolConfig};
    use smpsched_queues::{Ddq, DistributedFcfs, Global, MachRunQueue, MultiAccess, PerCore};
    if let Err(e) = check_counts(a) {
        return input_error(e);
    }
    let (w, p) = (a.schedulers, a.clients);
    // Every producer's items are in the queue at once at worst.
    if p.saturating_mul(a.requests) > MAX_REQUESTS {
        return input_error(format!(
            "--clients x --requests: {p} producers of {} items each is more than {MAX_REQUESTS} \
             items in all",
            a.requests
        ));
    }
    let items = a.requests as u64;
    stdout::line(&format!(
        "George's producer/consumer ({} x {}, {}) and prime sieve to 2,000,000 ({})",
        count(p, "producer"),
        count(a.requests, "item"),
        count(w, "consumer"),
        count(w, "worker")
    ));
    stdout::line(&format!(
        "{:<17} {:>12} {:>10} {:>13} {:>10} {:>8}",
        "structure", "p/c ms", "M items/s", "max backoffs", "sieve ms", "primes"
    ));
    fn row(name: &str, r: smpsched_queues::george::PcReport, sieve: (std::time::Duration, usize)) {
        stdout::line(&format!(
            "{name:<17} {:>12.2} {:>10.2} {:>13} {:>10.2} {:>8}",
            r.elapsed.as_secs_f64() * 1e3,
            r.items as f64 / r.elapsed.as_secs_f64() / 1e6,
            r.max_backoffs,
            sieve.0.as_secs_f64() * 1e3,
            sieve.1
        ));
    }
    macro_rules! one {
        ($name:literal, $make:expr) => {{
            if stdout::failed() {
                return ExitCode::SUCCESS;
            }
            let r = producer_consumer(&$make, p, items);
            let pool = Pool::with_config($make, PoolConfig::default());
            let t = std::time::Instant::now();
            let primes = sieve(&pool, 2_000_000);
            let s = (t.elapsed(), primes);
            pool.shutdown();
            row($name, r, s);
        }};
    }
    one!("global", Global::new(w));
    one!("distributed-fcfs", DistributedFcfs::new(w));
    one!("multi-access", MultiAccess::new(w));
    one!("ddq", Ddq::new(w));
    one!("mach", MachRunQueue::new(w));
    one!("per-core", PerCore::new(w));
    ExitCode::SUCCESS
}

fn input_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: smpsched real: {msg}");
    ExitCode::from(2)
}

/// The scheduler policy named, or the one the structure implies.
fn scheduler_of(a: &RealArgs) -> Result<SchedulerPolicy, String> {
    match &a.scheduler {
        Some(name) => SchedulerPolicy::parse(name).ok_or_else(|| {
            let known: Vec<&str> = SchedulerPolicy::ALL.iter().map(|p| p.name()).collect();
            format!(
                "--scheduler: unknown scheduler policy `{name}`; known: {}",
                known.join(", ")
            )
        }),
        // The structure's own, or the one the client's policy belongs with.
        None => Ok(match (a.structure.as_deref(), a.client.as_deref()) {
            (Some("global"), _) | (None, Some("global")) => SchedulerPolicy::Global,
            (Some("distributed-fcfs"), _) | (None, Some("static-fcfs" | "random-fcfs")) => {
                SchedulerPolicy::DistributedFcfs
            }
            _ => SchedulerPolicy::Sequential,
        }),
    }
}

/// The client policy named, or the first of the scheduler's compatible ones.
fn client_of(
    a: &RealArgs,
    scheduler: SchedulerPolicy,
    cutoff: usize,
) -> Result<ClientPolicy, String> {
    match &a.client {
        Some(name) => ClientPolicy::parse(name, cutoff).ok_or_else(|| {
            let known: Vec<&str> = ClientPolicy::all(cutoff).iter().map(|p| p.name()).collect();
            format!(
                "--client: unknown client policy `{name}`; known: {}",
                known.join(", ")
            )
        }),
        None => Ok(compatible_clients(scheduler, cutoff)
            .into_iter()
            .find(|c| {
                matches!(
                    c,
                    ClientPolicy::PrimaryRandom { .. }
                        | ClientPolicy::Global
                        | ClientPolicy::RandomFcfs
                )
            })
            .unwrap_or(ClientPolicy::Random)),
    }
}

/// Every argument of DiBella's test checked, as `smpsched run` checks a file: the tests to run.
pub fn plan(a: &RealArgs) -> Result<Vec<RequestTest>, String> {
    check_counts(a)?;
    let cutoff = a.cutoff.unwrap_or(a.clients);
    if !(1..=MAX_REQUESTS).contains(&cutoff) {
        return Err(format!(
            "--cutoff: must be 1 to {MAX_REQUESTS}, got {cutoff}"
        ));
    }
    let load_name = a.load.as_deref().unwrap_or("non-uniform");
    let load = Load::parse(load_name).ok_or_else(|| {
        format!(
            "--load: unknown load `{load_name}`; known loads: synchronous, uniform, non-uniform"
        )
    })?;
    let service = micros("--service-us", a.service_us.unwrap_or(0.0))?;
    let interarrival = micros("--interarrival-us", a.interarrival_us.unwrap_or(50.0))?;
    let mailboxes = a.mailboxes.unwrap_or(32);
    if let Some(s) = &a.structure {
        if !STRUCTURES.contains(&s.as_str()) {
            return Err(format!(
                "--structure: unknown structure `{s}`; known structures: {}",
                STRUCTURES.join(", ")
            ));
        }
        let paired = ["multi-access", "global", "distributed-fcfs"].contains(&s.as_str());
        if !paired && (a.scheduler.is_some() || a.client.is_some() || a.cutoff.is_some()) {
            return Err(format!(
                "--structure {s}: has no scheduler or client policies (DiBella's policies \
                 belong to multi-access, global and distributed-fcfs); leave out --scheduler, \
                 --client and --cutoff"
            ));
        }
    }
    let scheduler = scheduler_of(a)?;
    let client = client_of(a, scheduler, cutoff)?;
    let structure = a
        .structure
        .clone()
        .unwrap_or_else(|| requests::structure_of(scheduler).to_string());
    check_applies(a, &structure, scheduler, client)?;
    let least = least_seconds(a, load, service, interarrival);
    if least > MAX_RUN_SECONDS {
        return Err(format!(
            "--requests, --service-us, --interarrival-us: this test would take at least {least:.0} s \
             on this machine, whose cores spin the services (more than {MAX_RUN_SECONDS:.0} s); \
             lower one of them"
        ));
    }
    let base = RequestTest {
        structure,
        scheduler,
        client,
        schedulers: a.schedulers,
        clients: a.clients,
        load,
        service,
        interarrival,
        requests: a.requests,
        mailboxes,
    };
    let tests: Vec<RequestTest> = if a.table4 {
        table4_pairs(&base, cutoff)
    } else {
        vec![base]
    };
    for t in &tests {
        requests::validate(t).map_err(|e| e.to_string())?;
    }
    Ok(tests)
}

/// Refuses `--mailboxes` for a structure without mailboxes and `--cutoff` for a client policy
/// without a cutoff capacity (every pair of `--table4` has its Primary clients), rather than
/// leave either unused.
fn check_applies(
    a: &RealArgs,
    structure: &str,
    scheduler: SchedulerPolicy,
    client: ClientPolicy,
) -> Result<(), String> {
    if let (Some(n), false) = (a.mailboxes, structure == "multi-access") {
        return Err(format!(
            "--mailboxes {n}: only multi-access queues have mailboxes, not {structure} (the \
             structure of scheduler policy `{}`)",
            scheduler.name()
        ));
    }
    let primary = matches!(
        client,
        ClientPolicy::PrimaryRandom { .. } | ClientPolicy::PrimaryFixed { .. }
    );
    if let (Some(n), false) = (a.cutoff, primary || a.table4) {
        return Err(format!(
            "--cutoff {n}: only the Primary client policies (primary-random, primary-fixed) \
             have a cutoff capacity, not `{}`",
            client.name()
        ));
    }
    Ok(())
}

/// The least time a test can take by its own arithmetic: every request's service (a spin)
/// spread over the schedulers, as many at once as the host has cores, and each waiting
/// client's requests one interarrival apart.
fn least_seconds(a: &RealArgs, load: Load, service: Duration, interarrival: Duration) -> f64 {
    let n = a.requests as f64;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let serving = n * service.as_secs_f64() / a.schedulers.min(cores).max(1) as f64;
    let posting = if (0..a.clients).any(|c| requests::client_waits(load, c, a.schedulers)) {
        n / a.clients as f64 * interarrival.as_secs_f64()
    } else {
        0.0
    };
    let pairs = if a.table4 { 30.0 } else { 1.0 };
    pairs * serving.max(posting)
}

/// A note when a test's `threads` outnumber the host's cores: schedulers and clients spin (as
/// the paper's processes did, each on a processor of its own), so a spinning thread holds a core
/// its peer needs until the operating system preempts it, and the test can take many times the
/// least its arithmetic gives; its delays then measure the host's time slices.
fn oversubscribed(threads: usize) -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    (threads > cores).then(|| {
        format!(
            "note: {} on {} spin waiting for each other (the paper gave each process a              processor of its own): the test can take far longer than its arithmetic, and its              delays include the operating system's time slices",
            count(threads, "thread"),
            count(cores, "core")
        )
    })
}

/// The 30 pairs of DiBella's Table 4 on multi-access queues, with `base`'s sizes and load.
fn table4_pairs(base: &RequestTest, cutoff: usize) -> Vec<RequestTest> {
    let schedulers = [
        SchedulerPolicy::Static,
        SchedulerPolicy::Random,
        SchedulerPolicy::PrimaryRandom,
        SchedulerPolicy::PrimaryFixed,
        SchedulerPolicy::Sequential,
        SchedulerPolicy::PrimarySequential,
    ];
    schedulers
        .into_iter()
        .flat_map(|s| {
            compatible_clients(s, cutoff)
                .into_iter()
                .map(move |c| (s, c))
        })
        .map(|(s, c)| RequestTest {
            structure: "multi-access".into(),
            scheduler: s,
            client: c,
            ..base.clone()
        })
        .collect()
}

/// Runs `smpsched real`: 0 on success, 2 on bad input.
pub fn main(a: RealArgs) -> ExitCode {
    if a.george {
        return george(&a);
    }
    let tests = match plan(&a) {
        Ok(t) => t,
        Err(e) => return input_error(e),
    };
    let t0 = &tests[0];
    if a.interarrival_us.is_some()
        && !(0..a.clients).any(|c| requests::client_waits(t0.load, c, a.schedulers))
    {
        eprintln!(
            "note: no client waits between requests here ({} load, {}, {}), so --interarrival-us \
             has no effect",
            t0.load.name(),
            count(a.schedulers, "scheduler"),
            count(a.clients, "client")
        );
    }
    if let Some(note) = oversubscribed(a.schedulers + a.clients) {
        eprintln!("{note}");
    }
    stdout::line(&format!(
        "DiBella request test on real threads: {}, {}, {} load, service {} us, interarrival {} us, {}",
        count(a.schedulers, "scheduler"),
        count(a.clients, "client"),
        t0.load.name(),
        t0.service.as_secs_f64() * 1e6,
        t0.interarrival.as_secs_f64() * 1e6,
        count(a.requests, "request")
    ));
    stdout::line(&format!(
        "{:<17} {:<19} {:<15} {:>9} {:>9} {:>9} {:>8} {:>8}  load distribution (points off balanced)",
        "structure", "scheduler", "client", "delay ms", "p50 ms", "p99 ms", "gen/ms", "done/ms"
    ));
    for t in &tests {
        if stdout::failed() {
            break;
        }
        match requests::run(t) {
            Ok(r) => print_row(t, &r),
            Err(e) => return input_error(e),
        }
    }
    ExitCode::SUCCESS
}

/// `n` and `what`, plural but for one: "1 scheduler", "3 schedulers".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn print_row(t: &RequestTest, r: &RequestReport) {
    let paired = ["multi-access", "global", "distributed-fcfs"].contains(&t.structure.as_str());
    let (s, c) = if paired {
        (t.scheduler.name(), t.client.name())
    } else {
        ("-", "-")
    };
    // Rounded first, so that a share just under balanced prints +0.0, not -0.0.
    let dist: Vec<String> = r
        .off_balanced
        .iter()
        .map(|x| format!("{:+.1}", (x * 10.0).round() / 10.0 + 0.0))
        .collect();
    stdout::line(&format!(
        "{:<17} {:<19} {:<15} {:>9.4} {:>9.4} {:>9.4} {:>8.2} {:>8.2}  {}",
        t.structure,
        s,
        c,
        r.delay_ms,
        r.delay_p50_ms,
        r.delay_p99_ms,
        r.throughput_per_ms,
        r.served_per_ms,
        dist.join(" ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use proptest::prelude::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        real: RealArgs,
    }

    fn parse(args: &[&str]) -> Result<RealArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("real").chain(args.iter().copied())).map(|c| c.real)
    }

    #[test]
    fn hostile_numbers_are_refused_by_name() {
        for (args, flag) in [
            (&["--service-us", "inf"][..], "--service-us"),
            (&["--service-us", "1e30"], "--service-us"),
            (&["--service-us", "NaN"], "--service-us"),
            (&["--interarrival-us", "-1"], "--interarrival-us"),
            (&["--requests", "100000000000"], "--requests"),
            (&["--requests", "0"], "--requests"),
            (&["--clients", "100000"], "--clients"),
            (&["--schedulers", "0"], "--schedulers"),
            (&["--cutoff", "0"], "--cutoff"),
            (
                &["--structure", "ddq", "--scheduler", "static"],
                "--structure ddq",
            ),
            (&["--structure", "ddq", "--mailboxes", "4"], "--mailboxes"),
            (
                &["--service-us", "1000000", "--requests", "2000000"],
                "at least",
            ),
        ] {
            let a = parse(args).unwrap();
            let e = plan(&a)
                .err()
                .unwrap_or_else(|| panic!("{args:?} accepted"));
            assert!(e.contains(flag), "{args:?}: {e}");
        }
        // Conflicting flags are refused by the parser (exit 2), never ignored.
        for args in [
            &["--table4", "--structure", "global"][..],
            &["--table4", "--scheduler", "static"],
            &["--george", "--scheduler", "static"],
            &["--george", "--service-us", "5"],
            &["--requests", "18446744073709551616"],
        ] {
            let e = parse(args)
                .err()
                .unwrap_or_else(|| panic!("{args:?} accepted"));
            assert_eq!(e.exit_code(), 2, "{args:?}");
        }
        assert_eq!(plan(&parse(&["--table4"]).unwrap()).unwrap().len(), 30);
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            (0u64..100).prop_map(|v| v.to_string()),
            Just("0".to_string()),
            Just("-1".to_string()),
            Just("nan".to_string()),
            Just("inf".to_string()),
            Just("1e30".to_string()),
            Just("18446744073709551615".to_string()),
            Just("100000000000".to_string()),
            Just("abc".to_string()),
            Just("".to_string()),
            Just("static".to_string()),
            Just("ddq".to_string()),
            Just("global".to_string()),
            Just("primary-random".to_string()),
            Just("uniform".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any arguments: refused by the parser or the plan, or a plan within every bound.
        #[test]
        fn any_arguments_are_refused_or_bounded(
            picks in proptest::collection::vec((0usize..13, value()), 0..6)
        ) {
            const FLAGS: [&str; 13] = [
                "--structure", "--scheduler", "--client", "--cutoff", "--schedulers",
                "--clients", "--load", "--service-us", "--interarrival-us", "--requests",
                "--mailboxes", "--table4", "--george",
            ];
            let mut args: Vec<String> = Vec::new();
            for (f, v) in picks {
                args.push(FLAGS[f].to_string());
                if f < 11 {
                    args.push(v);
                }
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            if let Ok(a) = parse(&refs) {
                if !a.george {
                    if let Ok(tests) = plan(&a) {
                        for t in tests {
                            prop_assert!(t.requests <= MAX_REQUESTS && t.clients <= MAX_CLIENTS);
                            prop_assert!(t.service.as_secs_f64() <= 1.0);
                            prop_assert!(t.interarrival.as_secs_f64() <= 1.0);
                        }
                    }
                } else {
                    let _ = check_counts(&a);
                }
            }
        }
    }

    #[test]
    fn more_threads_than_cores_are_noted() {
        assert_eq!(oversubscribed(1), None);
        let note = oversubscribed(100_000).expect("no host has 100,000 cores");
        assert!(note.starts_with("note: 100000 threads on "), "{note}");
    }
}
