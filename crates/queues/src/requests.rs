//! DiBella's client/scheduler request test on real threads (DiBella et al. 1992, sections 2.3,
//! 3 and 4): client threads post requests that carry a service time; one scheduler thread per
//! queue index takes them, spins for the service time, and posts a reply in the client's
//! OUT-box. Measured as in the paper: *delay* (from the request's generation to the end of its
//! service), *throughput* (the rate at which requests were generated, per ms; beside it the
//! rate they were served at, which is less while the queues fill) and *load
//! distribution* (each scheduler's share of the requests, in % off the balanced share).
//!
//! Loads (section 2.3): *synchronous* (a client posts its next request only after the reply to
//! the previous one), *uniform asynchronous* (every client waits the same interarrival time
//! between requests, not for replies), *non-uniform asynchronous* (clients are split into as
//! many sets as schedulers; one set posts at the maximum rate, the others wait the interarrival
//! time). Like the paper's schedulers, ours poll the queues (section 3.1); replies are counted in
//! the OUT-box that the client polls.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use smpsched_policy::dibella::{check_pair, ClientPolicy, Incompatible, SchedulerPolicy};

use crate::{
    Client, Ddq, DistributedFcfs, Global, MachRunQueue, MultiAccess, MultiAccessConfig, PerCore,
    Post, PostError, ReadyQueue, Take,
};

/// The structures the request test can run on, by name.
pub const STRUCTURES: [&str; 6] = [
    "multi-access",
    "global",
    "distributed-fcfs",
    "ddq",
    "mach",
    "per-core",
];

/// How clients generate requests (section 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Each client waits for the reply to its previous request.
    Synchronous,
    /// Every client waits `interarrival` between requests.
    UniformAsync,
    /// One set of clients posts at the maximum rate, the others wait `interarrival`.
    NonUniformAsync,
}

impl Load {
    /// Parses `synchronous`, `uniform` or `non-uniform`.
    pub fn parse(s: &str) -> Option<Load> {
        match s {
            "synchronous" | "sync" => Some(Load::Synchronous),
            "uniform" | "uniform-async" => Some(Load::UniformAsync),
            "non-uniform" | "non-uniform-async" => Some(Load::NonUniformAsync),
            _ => None,
        }
    }

    /// The load's name.
    pub fn name(self) -> &'static str {
        match self {
            Load::Synchronous => "synchronous",
            Load::UniformAsync => "uniform",
            Load::NonUniformAsync => "non-uniform",
        }
    }
}

/// One request test: structure, policies, threads, load and sizes.
#[derive(Clone, Debug)]
pub struct RequestTest {
    /// One of [`STRUCTURES`].
    pub structure: String,
    /// The scheduler policy (multi-access, global and distributed FCFS only).
    pub scheduler: SchedulerPolicy,
    /// The client policy (multi-access, global and distributed FCFS only).
    pub client: ClientPolicy,
    /// Scheduler threads (queue indices).
    pub schedulers: usize,
    /// Client threads.
    pub clients: usize,
    /// How clients generate requests.
    pub load: Load,
    /// CPU time a scheduler spends on each request (spinning).
    pub service: Duration,
    /// Time an asynchronous client waits between requests.
    pub interarrival: Duration,
    /// Requests in all (20,000 in the paper), spread over the clients.
    pub requests: usize,
    /// Mailboxes per multi-access queue.
    pub mailboxes: usize,
}

/// Why a request test cannot run.
#[derive(thiserror::Error, Debug)]
pub enum RequestError {
    /// Not a known structure.
    #[error("unknown structure `{0}`; known structures: {known}", known = STRUCTURES.join(", "))]
    UnknownStructure(String),
    /// The scheduler/client pair is not in Table 3.
    #[error(transparent)]
    Incompatible(#[from] Incompatible),
    /// The scheduler policy belongs to another structure.
    #[error(
        "scheduler policy `{scheduler}` belongs to structure `{belongs}`, not `{structure}` \
         (whose scheduler policies are: {policies})"
    )]
    WrongStructure {
        /// The scheduler policy asked for.
        scheduler: &'static str,
        /// The structure asked for.
        structure: String,
        /// The structure the policy belongs to.
        belongs: &'static str,
        /// The scheduler policies of the structure asked for.
        policies: String,
    },
    /// A count is zero or too large.
    #[error("{0}")]
    Size(String),
}

/// What a request test measured.
#[derive(Clone, Debug)]
pub struct RequestReport {
    /// Requests served.
    pub requests: usize,
    /// Mean delay per request, ms.
    pub delay_ms: f64,
    /// Median delay, ms.
    pub delay_p50_ms: f64,
    /// 99th percentile delay, ms.
    pub delay_p99_ms: f64,
    /// Requests generated per ms, until the last client posted its last (the paper's
    /// throughput, 4.1: it exceeds what the schedulers can serve while the queues have room).
    pub throughput_per_ms: f64,
    /// Requests served per ms over the whole test, until the last was served.
    pub served_per_ms: f64,
    /// Requests served by each scheduler.
    pub served: Vec<usize>,
    /// Each scheduler's share in % off the balanced share (0 is balanced).
    pub off_balanced: Vec<f64>,
    /// Wall-clock time of the whole test.
    pub elapsed: Duration,
}

/// A request in a mailbox's IN-box: who posted it, when, and how long it takes to serve.
pub struct Request {
    client: usize,
    posted: Instant,
    service: Duration,
}

/// A client's OUT-box: the replies it has received.
#[derive(Default)]
struct OutBox {
    replies: AtomicUsize,
}

/// The structure a scheduler policy implies (DiBella's three; Table 3's blocks).
pub fn structure_of(scheduler: SchedulerPolicy) -> &'static str {
    match scheduler {
        SchedulerPolicy::Global => "global",
        SchedulerPolicy::DistributedFcfs => "distributed-fcfs",
        _ => "multi-access",
    }
}

fn build(t: &RequestTest) -> Result<Arc<dyn ReadyQueue<Request>>, RequestError> {
    let n = t.schedulers;
    let paired = ["multi-access", "global", "distributed-fcfs"].contains(&t.structure.as_str());
    if paired {
        check_pair(t.scheduler, t.client)?;
        let belongs = structure_of(t.scheduler);
        if belongs != t.structure {
            let policies: Vec<&str> = SchedulerPolicy::ALL
                .iter()
                .filter(|p| structure_of(**p) == t.structure)
                .map(|p| p.name())
                .collect();
            return Err(RequestError::WrongStructure {
                scheduler: t.scheduler.name(),
                structure: t.structure.clone(),
                belongs,
                policies: policies.join(", "),
            });
        }
    }
    Ok(match t.structure.as_str() {
        "multi-access" => Arc::new(MultiAccess::with_config(
            n,
            MultiAccessConfig {
                client: t.client,
                scheduler: t.scheduler,
                mailboxes: t.mailboxes,
                bidirectional: true,
            },
        )),
        "global" => Arc::new(Global::new(n)),
        "distributed-fcfs" => Arc::new(DistributedFcfs::with_client_policy(n, t.client)),
        "ddq" => Arc::new(Ddq::new(n)),
        "mach" => Arc::new(MachRunQueue::new(n)),
        "per-core" => Arc::new(PerCore::new(n)),
        other => return Err(RequestError::UnknownStructure(other.to_string())),
    })
}

/// Spins (yielding) until `until`.
fn wait_until(until: Instant) {
    while Instant::now() < until {
        std::thread::yield_now();
    }
}

/// Checks a test without running it: sizes, structure name and the policy pair.
pub fn validate(t: &RequestTest) -> Result<(), RequestError> {
    check_sizes(t)?;
    build(t).map(|_| ())
}

fn check_sizes(t: &RequestTest) -> Result<(), RequestError> {
    if t.schedulers == 0 || t.schedulers > crate::MAX_WORKERS || t.clients == 0 || t.requests == 0 {
        return Err(RequestError::Size(format!(
            "need 1 to {} schedulers, at least one client and one request",
            crate::MAX_WORKERS
        )));
    }
    if t.mailboxes == 0 || t.mailboxes > crate::multi_access::MAX_MAILBOXES {
        return Err(RequestError::Size(format!(
            "mailboxes per queue: 1 to {}, got {}",
            crate::multi_access::MAX_MAILBOXES,
            t.mailboxes
        )));
    }
    Ok(())
}

/// Runs the test and reports delay, throughput and load distribution.
pub fn run(t: &RequestTest) -> Result<RequestReport, RequestError> {
    check_sizes(t)?;
    let q = build(t)?;
    let shared = Shared {
        q: &*q,
        outboxes: (0..t.clients).map(|_| OutBox::default()).collect(),
        served_total: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
    };
    let delays = Mutex::new(Vec::with_capacity(t.requests));
    let last_post = Mutex::new(Instant::now());
    let start = Instant::now();
    let served: Vec<usize> = std::thread::scope(|s| {
        let scheds: Vec<_> = (0..t.schedulers)
            .map(|i| {
                let (shared, delays) = (&shared, &delays);
                s.spawn(move || {
                    let mine = scheduler(i, t, shared);
                    let count = mine.len();
                    delays
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(mine);
                    count
                })
            })
            .collect();
        for c in 0..t.clients {
            let (shared, last_post) = (&shared, &last_post);
            s.spawn(move || {
                client(c, t, shared);
                let now = Instant::now();
                let mut l = last_post.lock().unwrap_or_else(|e| e.into_inner());
                if now > *l {
                    *l = now;
                }
            });
        }
        scheds.into_iter().map(|h| h.join().unwrap_or(0)).collect()
    });
    let elapsed = start.elapsed();
    let generating = last_post
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .duration_since(start);
    let delays = delays.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(report(t, &delays, served, generating, elapsed))
}

/// What the test's threads share: the queue, the clients' OUT-boxes, the count of requests
/// served and the flag that stops the schedulers once all are.
struct Shared<'q> {
    q: &'q dyn ReadyQueue<Request>,
    outboxes: Vec<OutBox>,
    served_total: AtomicUsize,
    stop: AtomicBool,
}

/// Scheduler `i`: polls its queue index (section 3.1), spins each request's service time and
/// replies in its client's OUT-box, until every request is served; returns its delays.
fn scheduler(i: usize, t: &RequestTest, sh: &Shared) -> Vec<Duration> {
    let mut mine = Vec::new();
    let mut misses = 0u32;
    while !sh.stop.load(Ordering::Acquire) {
        match sh.q.take(i) {
            Take::Item(r) => {
                let end = Instant::now() + r.service;
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
                mine.push(r.posted.elapsed());
                sh.outboxes[r.client]
                    .replies
                    .fetch_add(1, Ordering::Release);
                if sh.served_total.fetch_add(1, Ordering::AcqRel) + 1 == t.requests {
                    sh.stop.store(true, Ordering::Release);
                }
                misses = 0;
            }
            Take::Retry => {}
            Take::Empty => {
                misses += 1;
                if misses > 8 {
                    std::thread::yield_now();
                }
            }
        }
    }
    mine
}

/// Whether client `c` waits the interarrival time between its requests under `load` (section
/// 2.3): under the non-uniform load the clients of set 0 (`c % schedulers == 0`) post at the
/// full rate, so with one scheduler (or one client) none waits.
pub fn client_waits(load: Load, c: usize, schedulers: usize) -> bool {
    match load {
        Load::Synchronous => false,
        Load::UniformAsync => true,
        Load::NonUniformAsync => c % schedulers.max(1) != 0,
    }
}

/// Client `c`: posts its share of the requests under the test's load (section 2.3), retrying a
/// post that finds the queue full.
fn client(c: usize, t: &RequestTest, sh: &Shared) {
    let quota = t.requests / t.clients + usize::from(c < t.requests % t.clients);
    let mut client = Client::with_seed(c, 0x5eed ^ c as u64);
    let waits = client_waits(t.load, c, t.schedulers);
    let mut next = Instant::now();
    for k in 0..quota {
        if t.load == Load::Synchronous {
            while sh.outboxes[c].replies.load(Ordering::Acquire) < k {
                std::thread::yield_now();
            }
        } else if waits {
            wait_until(next);
            next += t.interarrival;
        }
        let mut r = Request {
            client: c,
            posted: Instant::now(),
            service: t.service,
        };
        loop {
            match sh.q.post(&mut client, r, Post::default()) {
                Ok(_) => break,
                Err(PostError::Full(back)) => {
                    r = back;
                    std::thread::yield_now();
                }
                Err(e) => unreachable!("a default post is always supported: {e}"),
            }
        }
    }
}

/// The report: mean and percentile delays in ms, the rate requests were generated at over
/// `generating`, and each scheduler's share off the balanced one.
fn report(
    t: &RequestTest,
    delays: &[Duration],
    served: Vec<usize>,
    generating: Duration,
    elapsed: Duration,
) -> RequestReport {
    let mut d: Vec<f64> = delays.iter().map(|x| x.as_secs_f64() * 1e3).collect();
    d.sort_by(f64::total_cmp);
    let total: usize = served.iter().sum();
    let pct = |p: f64| d[((d.len() - 1) as f64 * p).round() as usize];
    let balanced = 100.0 / t.schedulers as f64;
    RequestReport {
        requests: total,
        delay_ms: d.iter().sum::<f64>() / d.len() as f64,
        delay_p50_ms: pct(0.5),
        delay_p99_ms: pct(0.99),
        throughput_per_ms: total as f64 / (generating.as_secs_f64() * 1e3).max(1e-9),
        served_per_ms: total as f64 / (elapsed.as_secs_f64() * 1e3).max(1e-9),
        off_balanced: served
            .iter()
            .map(|&s| 100.0 * s as f64 / total as f64 - balanced)
            .collect(),
        served,
        elapsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(structure: &str, load: Load) -> RequestTest {
        RequestTest {
            structure: structure.to_string(),
            scheduler: SchedulerPolicy::Sequential,
            client: ClientPolicy::PrimaryRandom { cutoff: 10 },
            schedulers: 2,
            clients: 3,
            load,
            service: Duration::from_micros(2),
            interarrival: Duration::from_micros(20),
            requests: 600,
            mailboxes: 32,
        }
    }

    #[test]
    fn every_request_is_served_and_shares_sum_to_zero() {
        for load in [Load::Synchronous, Load::UniformAsync, Load::NonUniformAsync] {
            let r = run(&test("multi-access", load)).unwrap();
            assert_eq!(r.requests, 600);
            assert_eq!(r.served.iter().sum::<usize>(), 600);
            assert!(r.off_balanced.iter().sum::<f64>().abs() < 1e-6);
            assert!(r.delay_ms > 0.0 && r.delay_p50_ms <= r.delay_p99_ms);
            assert!(r.throughput_per_ms > 0.0);
            // Served over the whole test, generated until the last post: never more.
            assert!(r.served_per_ms > 0.0 && r.served_per_ms <= r.throughput_per_ms);
        }
    }

    #[test]
    fn static_pairs_keep_requests_on_their_queue() {
        // Static scheduler with static clients: client c's requests go to queue c % 2 and only
        // scheduler c % 2 serves them, so the shares follow the client counts (2 and 1 of 3).
        let mut t = test("multi-access", Load::Synchronous);
        t.scheduler = SchedulerPolicy::Static;
        t.client = ClientPolicy::Static;
        let r = run(&t).unwrap();
        assert_eq!(r.served, vec![400, 200]);
    }

    #[test]
    fn bad_pairs_and_names_are_refused() {
        let mut t = test("multi-access", Load::Synchronous);
        t.client = ClientPolicy::Global;
        let e = run(&t).unwrap_err().to_string();
        assert!(e.contains("`sequential`") && e.contains("`global`"), "{e}");
        let e = run(&test("fifo", Load::Synchronous))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown structure `fifo`"), "{e}");
        let mut t = test("global", Load::Synchronous);
        t.scheduler = SchedulerPolicy::Sequential;
        let e = run(&t).unwrap_err().to_string();
        assert!(e.contains("belongs to structure `multi-access`"), "{e}");
    }

    #[test]
    fn other_structures_run_the_same_test() {
        for s in ["ddq", "mach", "per-core"] {
            let r = run(&test(s, Load::UniformAsync)).unwrap();
            assert_eq!(r.requests, 600, "{s}");
        }
    }
}
