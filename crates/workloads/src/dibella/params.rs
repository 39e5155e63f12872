//! The parameters of DiBella et al. 1992's request test as an experiment file gives them: the
//! policies (checked against Table 3), the load, the machine-time costs of the clients' and
//! schedulers' steps, and their bounds.

use serde::Deserialize;
use smpsched_policy::dibella::{check_pair, ClientPolicy, SchedulerPolicy};
use smpsched_sim::readyq::multi_access::MAX_MAILBOXES;
use smpsched_sim::readyq::Spin;
use smpsched_sim::Cycles;

use crate::dist::Dist;

/// How clients generate requests (section 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Load {
    /// The next request only after the reply to the previous one.
    Synchronous,
    /// Every client waits `gap_ms` on average between requests.
    Uniform,
    /// Set 0 of the clients at the maximum rate, the other sets `gap_ms` on average.
    NonUniform,
}

/// How a time (a request's service, a client's composing) is drawn around its mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceDist {
    /// Exactly the mean.
    #[default]
    Fixed,
    /// Exponential with the mean.
    Exponential,
}

impl ServiceDist {
    /// A time with mean `mean` drawn as `self` says, from `rng` (which only `Exponential`
    /// draws from, as [`Dist::sample`] does).
    pub fn draw(self, mean: Cycles, rng: &mut impl rand::Rng) -> Cycles {
        match self {
            ServiceDist::Fixed => mean,
            ServiceDist::Exponential => Dist::Exponential { mean: mean as f64 }.sample(rng),
        }
    }
}

/// Parameters of `dibella` (times in milliseconds of the simulated machine).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiBella {
    /// Scheduler (dequeuing) policy, Table 1.
    pub scheduler: String,
    /// Client (enqueuing) policy, Table 2.
    pub client: String,
    /// Scheduler processes (= queues, one per processor).
    pub schedulers: u32,
    /// Client processes.
    pub clients: u32,
    /// Requests generated in all.
    pub requests: u64,
    /// How clients generate requests.
    pub load: Load,
    /// Service time of a request including the scheduler's bookkeeping (NULL: 0.11 ms).
    #[serde(default = "d_service")]
    pub service_ms: f64,
    /// Whether each request's service time is exactly `service_ms` (`fixed`) or drawn with that
    /// mean (`exponential`; section 4.3: "each request has the same average service time").
    #[serde(default)]
    pub service_dist: ServiceDist,
    /// Mailboxes per queue, MaxReqs (32 in the paper; at most 64). Also the capacity of each
    /// FCFS queue (the global queue holds this many per scheduler).
    #[serde(default = "d_mailboxes")]
    pub mailboxes: u32,
    /// The Primary client policies' cutoff capacity, 1 or more (left out: the number of
    /// clients, as in the paper).
    #[serde(default)]
    pub cutoff: Option<u32>,
    /// Search secondary queues right to left (section 2.2; the paper's tests always do).
    #[serde(default = "d_true")]
    pub bidirectional: bool,
    /// Mean time a (slow) client waits between two requests in asynchronous loads.
    #[serde(default = "d_gap")]
    pub gap_ms: f64,
    /// Propagation time of the reply signal (Dynix: 0.6-0.7 ms, section 3.1).
    #[serde(default = "d_signal")]
    pub signal_ms: f64,
    /// The part of a request's service the scheduler spends on its bookkeeping while it still
    /// holds the IN-box lock (Global and Distributed FCFS: the queue lock), section 2.1: "the
    /// remainder of the request information is processed while a process has sole access to an
    /// IN-box or OUT-box lock"; the rest of `service_ms` is served after the release (a drawn
    /// service shorter than this is served within it). 0: the lock is let go at once.
    #[serde(default)]
    pub bookkeeping_ms: f64,
    /// The client's side of the same rule: the time a client spends processing its request's
    /// information after filling its IN-box (Global and Distributed FCFS: its queue slot) and
    /// before it lets the box's (FCFS: the queue's) lock go, section 2.1. It is part of the
    /// client's cycle with `post_ms`; 0: the lock is let go at once.
    #[serde(default)]
    pub fill_ms: f64,
    /// Scheduler processor time to send the reply signal (a system call).
    #[serde(default = "d_send")]
    pub send_ms: f64,
    /// Whether sending takes exactly `send_ms` (`fixed`, the default) or a time drawn with that
    /// mean (`exponential`: a system call whose kernel path varies, as section 3.1's signal
    /// propagation does).
    #[serde(default)]
    pub send_dist: ServiceDist,
    /// Client processor time to service the reply's interrupt.
    #[serde(default = "d_interrupt")]
    pub interrupt_ms: f64,
    /// Client processor time to compose a request.
    #[serde(default = "d_post")]
    pub post_ms: f64,
    /// Whether composing takes exactly `post_ms` (`fixed`) or a time drawn with that mean
    /// (`exponential`, the default: the paper's clients did not post on a clock, section 2.3).
    #[serde(default = "d_exponential")]
    pub post_dist: ServiceDist,
    /// The share of each composing time that comes before the request is generated (the
    /// client's loop before it stamps the request, section 4.1's "request generation"), the
    /// rest after, inside the request's delay. 0 (the default): all of it after.
    #[serde(default)]
    pub post_before: f64,
    /// Processor time to draw a random number (section 5.3: "generating a random number takes
    /// a certain amount of time").
    #[serde(default = "d_random")]
    pub random_ms: f64,
    /// Client processor time per mailbox bit counted: the Primary client policies learn their
    /// primary queue's length by counting the set bits of its MaxReqs-bit bitmap (section 2.3),
    /// a loop on the client's processor before each post. 0: the count is free.
    #[serde(default)]
    pub count_ms: f64,
    /// Scheduler processor time per bitmap bit examined in its search for a request, which
    /// goes bit by bit from its remembered mailbox (section 2.2); a search of an empty bitmap
    /// examines every bit. 0: the search is free.
    #[serde(default)]
    pub search_ms: f64,
    /// Client processor time per bitmap bit examined looking for a free mailbox before a
    /// multi-access post, from the bit after its remembered mailbox (a full bitmap: every bit),
    /// the clients' side of the schedulers' `search_ms`. 0: the clients' search is free.
    #[serde(default)]
    pub free_search_ms: f64,
    /// Scheduler processor time per queue visited in its polling loop.
    #[serde(default = "d_visit")]
    pub visit_ms: f64,
    /// How a waiter retries a held queue or mailbox lock: `test-and-test-and-set` (the default:
    /// reads its cached copy) or `test-and-set` (every retry a locked bus transaction).
    #[serde(default)]
    pub lock: Spin,
    /// Words of a request beyond the word that marks its box full, copied one word at a time
    /// into the IN-box (FCFS: the slot) by the poster and out of it by the scheduler, each under
    /// the box's (FCFS: the queue's) lock (section 2.1). 0: a request is one word.
    #[serde(default)]
    pub request_words: u32,
    /// Pause between two retries of a held spin lock, and before a client retries a full queue.
    #[serde(default = "d_pause")]
    pub pause_ms: f64,
    /// A client retrying a full queue spins in user mode, entering no kernel; with this, the
    /// reply signals that reach it meanwhile are delivered at its processor's next clock
    /// interrupt (the machine's `tick_cycles`: Dynix's 10 ms clock, section 3.1), not at once.
    #[serde(default)]
    pub tick_signals: bool,
    /// An asynchronous multi-access client that finds every mailbox of its chosen queue in use
    /// waits for its next reply signal (sigpause), collects that reply (freeing its mailbox)
    /// and posts again, rather than retrying after a pause; with no request outstanding, no
    /// signal can come, and it retries as without. The paper does not say which its clients
    /// did.
    #[serde(default)]
    pub sigpause: bool,
}

fn d_service() -> f64 {
    0.11
}
fn d_mailboxes() -> u32 {
    32
}
fn d_true() -> bool {
    true
}
fn d_gap() -> f64 {
    0.5
}
fn d_signal() -> f64 {
    0.65
}
fn d_send() -> f64 {
    0.3
}
fn d_interrupt() -> f64 {
    0.65
}
fn d_post() -> f64 {
    0.6
}
fn d_exponential() -> ServiceDist {
    ServiceDist::Exponential
}
fn d_random() -> f64 {
    0.02
}
fn d_visit() -> f64 {
    0.005
}
fn d_pause() -> f64 {
    0.002
}

impl DiBella {
    /// The scheduler and client policies, checked against Table 3.
    pub fn policies(&self) -> Result<(SchedulerPolicy, ClientPolicy), String> {
        let cutoff = self.cutoff.unwrap_or(self.clients) as usize;
        let s = SchedulerPolicy::parse(&self.scheduler).ok_or_else(|| {
            let names: Vec<&str> = SchedulerPolicy::ALL.iter().map(|p| p.name()).collect();
            format!(
                "scheduler: unknown policy `{}`; policies: {}",
                self.scheduler,
                names.join(", ")
            )
        })?;
        let c = ClientPolicy::parse(&self.client, cutoff).ok_or_else(|| {
            let names: Vec<&str> = ClientPolicy::all(0).iter().map(|p| p.name()).collect();
            format!(
                "client: unknown policy `{}`; policies: {}",
                self.client,
                names.join(", ")
            )
        })?;
        check_pair(s, c).map_err(|e| format!("client: {e}"))?;
        Ok((s, c))
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        if self.cutoff == Some(0) {
            return Err(
                "cutoff: must be 1 or more (leave it out for the number of clients, \
                        as in the paper)"
                    .into(),
            );
        }
        self.policies()?;
        if self.schedulers == 0 || self.schedulers > 64 {
            return Err(format!(
                "schedulers: must be between 1 and 64, got {}",
                self.schedulers
            ));
        }
        if self.clients == 0 || self.clients > 4096 {
            return Err(format!(
                "clients: must be between 1 and 4096, got {}",
                self.clients
            ));
        }
        // Each request keeps about 64 bytes of bookkeeping outside the simulated memory.
        if self.requests == 0 || self.requests > 10_000_000 {
            return Err(format!(
                "requests: must be between 1 and 1e7, got {}",
                self.requests
            ));
        }
        if self.mailboxes == 0 || self.mailboxes as usize > MAX_MAILBOXES {
            return Err(format!(
                "mailboxes: must be between 1 and {MAX_MAILBOXES}, got {}",
                self.mailboxes
            ));
        }
        if !(0.0..=1.0).contains(&self.post_before) {
            return Err(format!(
                "post_before: must be a share between 0 and 1, got {}",
                self.post_before
            ));
        }
        if self.request_words > 64 {
            return Err(format!(
                "request_words: must be between 0 and 64, got {}",
                self.request_words
            ));
        }
        for (name, v) in [
            ("service_ms", self.service_ms),
            ("gap_ms", self.gap_ms),
            ("signal_ms", self.signal_ms),
            ("send_ms", self.send_ms),
            ("bookkeeping_ms", self.bookkeeping_ms),
            ("fill_ms", self.fill_ms),
            ("interrupt_ms", self.interrupt_ms),
            ("post_ms", self.post_ms),
            ("random_ms", self.random_ms),
            ("count_ms", self.count_ms),
            ("search_ms", self.search_ms),
            ("free_search_ms", self.free_search_ms),
            ("visit_ms", self.visit_ms),
            ("pause_ms", self.pause_ms),
        ] {
            if !(v.is_finite() && (0.0..=10_000.0).contains(&v)) {
                return Err(format!("{name}: must be between 0 and 10000 ms, got {v}"));
            }
        }
        Ok(())
    }
}
