//! `smpsched real`: DiBella's client/scheduler request test on real threads, over the real
//! ready queues of `smpsched-queues` (the logic lives in `smpsched_queues::requests`; this file
//! only parses arguments and prints the table).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
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
    #[arg(long, value_name = "N")]
    cutoff: Option<usize>,
    /// Scheduler threads (one queue each).
    #[arg(long, value_name = "N", default_value_t = 3)]
    schedulers: usize,
    /// Client threads.
    #[arg(long, value_name = "N", default_value_t = 10)]
    clients: usize,
    /// Load: synchronous, uniform (asynchronous) or non-uniform (asynchronous).
    #[arg(long, value_name = "LOAD", default_value = "non-uniform")]
    load: String,
    /// Service time per request in microseconds, spent spinning by the scheduler (0: NULL).
    #[arg(long, value_name = "US", default_value_t = 0.0)]
    service_us: f64,
    /// Time an asynchronous client waits between requests, in microseconds.
    #[arg(long, value_name = "US", default_value_t = 50.0)]
    interarrival_us: f64,
    /// Requests in all (the paper: 20,000).
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    requests: usize,
    /// Mailboxes per multi-access queue (the paper: 32).
    #[arg(long, value_name = "N", default_value_t = 32)]
    mailboxes: usize,
    /// Run every pair of Table 3's first block (the 30 rows of Table 4) instead of one pair.
    #[arg(long)]
    table4: bool,
    /// Instead of DiBella's test, run George's: producer/consumer (--clients producers of
    /// --requests items each against --schedulers consumers) and a prime sieve up to 2,000,000
    /// as tasks on a pool of --schedulers workers, over every structure.
    #[arg(long, conflicts_with = "table4")]
    george: bool,
}

fn george(a: &RealArgs) -> ExitCode {
    use smpsched_queues::george::{producer_consumer, sieve};
    use smpsched_queues::pool::{Pool, PoolConfig};
    use smpsched_queues::{Ddq, DistributedFcfs, Global, MachRunQueue, MultiAccess, PerCore};
    let (w, p) = (a.schedulers, a.clients);
    if !(1..=64).contains(&w) || p == 0 || a.requests == 0 {
        return input_error("need 1 to 64 schedulers, at least one client and one request");
    }
    let items = a.requests as u64;
    println!("George's producer/consumer ({p} producers x {items} items, {w} consumers) and prime sieve to 2,000,000 ({w} workers)");
    println!(
        "{:<17} {:>12} {:>10} {:>13} {:>10} {:>8}",
        "structure", "p/c ms", "M items/s", "max backoffs", "sieve ms", "primes"
    );
    fn row(name: &str, r: smpsched_queues::george::PcReport, sieve: (std::time::Duration, usize)) {
        println!(
            "{name:<17} {:>12.2} {:>10.2} {:>13} {:>10.2} {:>8}",
            r.elapsed.as_secs_f64() * 1e3,
            r.items as f64 / r.elapsed.as_secs_f64() / 1e6,
            r.max_backoffs,
            sieve.0.as_secs_f64() * 1e3,
            sieve.1
        );
    }
    macro_rules! one {
        ($name:literal, $make:expr) => {{
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
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// Runs `smpsched real`: 0 on success, 2 on bad input.
pub fn main(a: RealArgs) -> ExitCode {
    if a.george {
        return george(&a);
    }
    let cutoff = a.cutoff.unwrap_or(a.clients);
    let Some(load) = Load::parse(&a.load) else {
        return input_error(format!(
            "unknown load `{}`; known loads: synchronous, uniform, non-uniform",
            a.load
        ));
    };
    if let Some(s) = &a.structure {
        if !STRUCTURES.contains(&s.as_str()) {
            return input_error(format!(
                "unknown structure `{s}`; known structures: {}",
                STRUCTURES.join(", ")
            ));
        }
    }
    let scheduler = match &a.scheduler {
        Some(name) => match SchedulerPolicy::parse(name) {
            Some(p) => p,
            None => {
                let known: Vec<&str> = SchedulerPolicy::ALL.iter().map(|p| p.name()).collect();
                return input_error(format!(
                    "unknown scheduler policy `{name}`; known: {}",
                    known.join(", ")
                ));
            }
        },
        None => match a.structure.as_deref() {
            Some("global") => SchedulerPolicy::Global,
            Some("distributed-fcfs") => SchedulerPolicy::DistributedFcfs,
            _ => SchedulerPolicy::Sequential,
        },
    };
    let client = match &a.client {
        Some(name) => match ClientPolicy::parse(name, cutoff) {
            Some(p) => p,
            None => {
                let known: Vec<&str> = ClientPolicy::all(cutoff).iter().map(|p| p.name()).collect();
                return input_error(format!(
                    "unknown client policy `{name}`; known: {}",
                    known.join(", ")
                ));
            }
        },
        None => compatible_clients(scheduler, cutoff)
            .into_iter()
            .find(|c| {
                matches!(
                    c,
                    ClientPolicy::PrimaryRandom { .. }
                        | ClientPolicy::Global
                        | ClientPolicy::RandomFcfs
                )
            })
            .unwrap_or(ClientPolicy::Random),
    };
    let structure = a
        .structure
        .clone()
        .unwrap_or_else(|| requests::structure_of(scheduler).to_string());
    let base = RequestTest {
        structure,
        scheduler,
        client,
        schedulers: a.schedulers,
        clients: a.clients,
        load,
        service: Duration::from_secs_f64(a.service_us.max(0.0) / 1e6),
        interarrival: Duration::from_secs_f64(a.interarrival_us.max(0.0) / 1e6),
        requests: a.requests,
        mailboxes: a.mailboxes,
    };
    let tests: Vec<RequestTest> = if a.table4 {
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
                compatible_clients(s, cutoff).into_iter().map({
                    let base = base.clone();
                    move |c| RequestTest {
                        structure: "multi-access".into(),
                        scheduler: s,
                        client: c,
                        ..base.clone()
                    }
                })
            })
            .collect()
    } else {
        vec![base]
    };
    for t in &tests {
        if let Err(e) = requests::validate(t) {
            return input_error(e);
        }
    }
    println!(
        "DiBella request test on real threads: {} schedulers, {} clients, {} load, service {} us, interarrival {} us, {} requests",
        a.schedulers, a.clients, load.name(), a.service_us, a.interarrival_us, a.requests
    );
    println!(
        "{:<17} {:<19} {:<15} {:>9} {:>9} {:>9} {:>10}  load distribution (% off balanced)",
        "structure", "scheduler", "client", "delay ms", "p50 ms", "p99 ms", "req/ms"
    );
    for t in &tests {
        match requests::run(t) {
            Ok(r) => print_row(t, &r),
            Err(e) => return input_error(e),
        }
    }
    ExitCode::SUCCESS
}

fn print_row(t: &RequestTest, r: &RequestReport) {
    let paired = ["multi-access", "global", "distributed-fcfs"].contains(&t.structure.as_str());
    let (s, c) = if paired {
        (t.scheduler.name(), t.client.name())
    } else {
        ("-", "-")
    };
    let dist: Vec<String> = r.off_balanced.iter().map(|x| format!("{x:+.1}")).collect();
    println!(
        "{:<17} {:<19} {:<15} {:>9.4} {:>9.4} {:>9.4} {:>10.2}  {}",
        t.structure,
        s,
        c,
        r.delay_ms,
        r.delay_p50_ms,
        r.delay_p99_ms,
        r.throughput_per_ms,
        dist.join(" ")
    );
}
