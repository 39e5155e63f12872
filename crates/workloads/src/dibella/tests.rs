//! The request test's invariants under every Table 3 pair: every posted request is serviced
//! exactly once, no request waits forever (the remembered-index bound), the load distribution
//! sums to zero, the optimistic protocol really loses re-checks, bad pairs are refused.

use proptest::prelude::*;
use smpsched_policy::dibella::{compatible_clients, SchedulerPolicy};
use smpsched_sim::sched::policy;
use smpsched_sim::{Cycles, Limits, MachineConfig, RunReport, Simulation};

use super::*;

fn params(s: &str, c: &str, schedulers: u32, clients: u32, requests: u64, load: Load) -> DiBella {
    let mut t = toml::Table::new();
    t.insert("scheduler".into(), s.into());
    t.insert("client".into(), c.into());
    t.insert("schedulers".into(), i64::from(schedulers).into());
    t.insert("clients".into(), i64::from(clients).into());
    t.insert("requests".into(), (requests as i64).into());
    let l = match load {
        Load::Synchronous => "synchronous",
        Load::Uniform => "uniform",
        Load::NonUniform => "non-uniform",
    };
    t.insert("load".into(), l.into());
    toml::Value::Table(t).try_into().unwrap()
}

fn run(w: &DiBella, seed: u64) -> (Rc<RefCell<Shared>>, RunReport) {
    let sched = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(MachineConfig::sequent_symmetry(), sched, seed).unwrap();
    let task = sim.add_task("requests");
    let shared = w.install_shared(&mut sim, task).unwrap();
    // Bounded, so that a configuration that never finishes fails (and shrinks) instead of
    // hanging the suite: the largest configurations here take well under a million events.
    sim.set_limits(Limits {
        cycles: Cycles::MAX,
        events: 20_000_000,
        ..Limits::NONE
    });
    let report = sim.run().unwrap();
    report.check_conservation().unwrap();
    (shared, report)
}

fn every_pair() -> Vec<(SchedulerPolicy, &'static str)> {
    SchedulerPolicy::ALL
        .into_iter()
        .flat_map(|s| {
            compatible_clients(s, 1)
                .into_iter()
                .map(move |c| (s, c.name()))
        })
        .collect()
}

fn check_exactly_once(w: &DiBella, seed: u64) -> Result<(), TestCaseError> {
    let (shared, report) = run(w, seed);
    let sh = shared.borrow();
    prop_assert_eq!(sh.reqs.len() as u64, w.requests);
    prop_assert_eq!(sh.serviced, w.requests);
    for (id, r) in sh.reqs.iter().enumerate() {
        prop_assert_eq!(
            r.serviced,
            1,
            "request {} serviced {} times",
            id,
            r.serviced
        );
    }
    let rec = &report.apps[0].recorded;
    prop_assert_eq!(rec["delay"].count, w.requests);
    let sum: f64 = (0..w.schedulers as usize)
        .map(|k| rec[LOAD_NAMES[k]].sum)
        .sum();
    prop_assert!(sum.abs() < 1e-9, "load distribution sums to {}", sum);
    Ok(())
}

#[test]
fn every_pair_services_every_request_exactly_once() {
    let pairs = every_pair();
    assert_eq!(pairs.len(), 6 * 5 + 1 + 2, "Table 3's pairs");
    for (k, (s, c)) in pairs.into_iter().enumerate() {
        for load in [Load::Synchronous, Load::Uniform, Load::NonUniform] {
            for sigpause in [false, true] {
                let mut w = params(s.name(), c, 3, 4, 60, load);
                w.mailboxes = 2; // small, so that queues fill and posts are refused
                w.gap_ms = 0.3;
                w.sigpause = sigpause;
                check_exactly_once(&w, k as u64 + 1).unwrap();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_configuration_services_every_request_exactly_once(
        pair in 0usize..33,
        schedulers in 1u32..5,
        clients in 1u32..7,
        requests in 1u64..80,
        mailboxes in 1u32..6,
        load in 0u8..3,
        service in 0.0f64..0.5,
        bidirectional in any::<bool>(),
        words in 0u32..3,
        search in prop_oneof![Just(0.0), 0.0f64..0.01],
        tick_signals in any::<bool>(),
        sigpause in any::<bool>(),
        send_varies in any::<bool>(),
        seed in 1u64..1000,
    ) {
        let (s, c) = every_pair()[pair];
        let load = [Load::Synchronous, Load::Uniform, Load::NonUniform][load as usize];
        let mut w = params(s.name(), c, schedulers, clients, requests, load);
        w.mailboxes = mailboxes;
        w.service_ms = service;
        w.bidirectional = bidirectional;
        w.request_words = words;
        w.search_ms = search;
        w.tick_signals = tick_signals;
        w.sigpause = sigpause;
        if send_varies {
            w.send_dist = ServiceDist::Exponential;
        }
        check_exactly_once(&w, seed)?;
    }

    #[test]
    fn load_distribution_sums_to_zero(counts in proptest::collection::vec(0u64..10_000, 1..17)) {
        let d = load_distribution(&counts);
        prop_assert_eq!(d.len(), counts.len());
        prop_assert!(d.iter().sum::<f64>().abs() < 1e-9);
    }
}

/// Static clients all on queue 0, which the Static scheduler alone serves: the queue stays full.
fn full_queue(sigpause: bool) -> DiBella {
    let mut w = params("static", "static", 3, 10, 3000, Load::NonUniform);
    w.service_ms = 0.11;
    w.send_ms = 0.335;
    w.post_ms = 1.05;
    w.interrupt_ms = 0.1;
    w.sigpause = sigpause;
    w
}

#[test]
fn with_sigpause_a_client_meets_a_full_queue_once_a_reply_and_spins_less() {
    let (spin_shared, spin) = run(&full_queue(false), 7);
    let (pause_shared, paused) = run(&full_queue(true), 7);
    for sh in [&spin_shared, &pause_shared] {
        let sh = sh.borrow();
        assert_eq!(sh.serviced, 3000);
        // Every wait in sigpause was woken and nothing is left waiting.
        assert!(sh.paused.iter().all(|p| !p), "{:?}", sh.paused);
    }
    assert!(spin_shared.borrow().paused.is_empty());
    let full = |r: &RunReport| r.apps[0].recorded["full"].sum;
    // Spinning, a fast client retries queue 0 every pause until a mailbox frees; in sigpause
    // it meets the full queue at most once for each reply it then collects.
    assert!(full(&paused) <= 3000.0, "{}", full(&paused));
    assert!(
        full(&spin) > 3.0 * full(&paused),
        "{} {}",
        full(&spin),
        full(&paused)
    );
    assert!(
        paused.events < spin.events,
        "{} {}",
        paused.events,
        spin.events
    );
    // The Static scheduler 0 is saturated either way: the rate it serves differs little.
    let load0 = |r: &RunReport| r.apps[0].recorded["load0"].sum;
    assert!(
        (load0(&spin) - load0(&paused)).abs() < 1.5,
        "{} {}",
        load0(&spin),
        load0(&paused)
    );
    // Deterministic.
    assert_eq!(run(&full_queue(true), 7).1.events, paused.events);
}

#[test]
fn the_remembered_index_bounds_how_often_a_request_is_overtaken() {
    // One scheduler on one queue, clients posting as fast as they can: with the remembered
    // last-serviced mailbox, a request waits at most one sweep of the bitmap, so at most
    // MaxReqs requests (the one in service when it was posted, then at most one per other
    // mailbox) are serviced between its posting and the end of its own service.
    for mailboxes in [4u32, 8, 32] {
        let mut w = params("static", "static", 1, 6, 1500, Load::NonUniform);
        w.mailboxes = mailboxes;
        let (shared, _) = run(&w, 7);
        let sh = shared.borrow();
        let worst = sh
            .reqs
            .iter()
            .map(|r| r.serviced_after - r.posted_after)
            .max()
            .unwrap();
        assert!(
            worst <= u64::from(mailboxes),
            "a request was overtaken {worst} times with {mailboxes} mailboxes"
        );
        assert!(worst > 0, "requests do overtake each other (not FIFO)");
    }
}

#[test]
fn schedulers_sharing_a_bitmap_lose_rechecks() {
    // Sequential schedulers search each other's queues: some find a bit set without the lock
    // that another scheduler resets before they get the lock.
    let w = params("sequential", "static", 3, 10, 3000, Load::NonUniform);
    let (_, report) = run(&w, 1);
    let lost = report.apps[0]
        .recorded
        .get("lost_recheck")
        .map_or(0.0, |r| r.sum);
    assert!(lost > 0.0, "no re-check was ever lost");
    // Static schedulers never share a queue: nothing to lose.
    let w = params("static", "static", 3, 10, 3000, Load::NonUniform);
    let (_, report) = run(&w, 1);
    assert!(!report.apps[0].recorded.contains_key("lost_recheck"));
}

#[test]
fn an_incompatible_pair_is_refused_naming_both_and_the_compatible_clients() {
    let mut t = toml::Table::new();
    for (k, v) in [
        ("scheduler", "global"),
        ("client", "random"),
        ("load", "synchronous"),
    ] {
        t.insert(k.into(), v.into());
    }
    for k in ["schedulers", "clients", "requests"] {
        t.insert(k.into(), 3i64.into());
    }
    let e = (INFO.build)(t).err().unwrap().to_string();
    assert!(
        e.contains("`global`")
            && e.contains("`random`")
            && e.contains("compatible client policies: global"),
        "{e}"
    );
}

#[test]
fn a_cutoff_of_zero_is_refused_and_left_out_is_the_number_of_clients() {
    let table = |cutoff: Option<i64>| {
        let mut t = toml::Table::new();
        for (k, v) in [
            ("scheduler", "sequential"),
            ("client", "primary-fixed"),
            ("load", "synchronous"),
        ] {
            t.insert(k.into(), v.into());
        }
        for k in ["schedulers", "clients", "requests"] {
            t.insert(k.into(), 3i64.into());
        }
        if let Some(c) = cutoff {
            t.insert("cutoff".into(), c.into());
        }
        t
    };
    let e = (INFO.build)(table(Some(0))).err().unwrap().to_string();
    assert!(e.contains("cutoff") && e.contains("1 or more"), "{e}");
    assert!((INFO.build)(table(None)).is_ok());
    assert!((INFO.build)(table(Some(1))).is_ok());
}

#[test]
fn too_many_processes_for_the_machine_is_an_error() {
    let w = params("sequential", "random", 8, 9, 10, Load::Synchronous);
    let sched = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(MachineConfig::sequent_symmetry(), sched, 1).unwrap();
    let task = sim.add_task("requests");
    let e = w.install_shared(&mut sim, task).err().unwrap().to_string();
    assert!(e.contains("17 processors") && e.contains("has 16"), "{e}");
}

#[test]
fn a_client_is_not_starved_by_schedulers_polling_an_empty_global_queue() {
    // Found by the property test above: four schedulers polling the one Global queue hold its
    // lock nearly all the time, and with exact costs their loops phase-locked against the one
    // client's test-and-test-and-set so that it never got the lock. A waiter's pauses are
    // drawn at random once its wait is long (`sim::readyq::spin::STREAK`), as timing noise
    // would break the lock on a real bus.
    for schedulers in 1..=4 {
        let mut w = params("global", "global", schedulers, 1, 3, Load::Synchronous);
        w.mailboxes = 1;
        w.service_ms = 0.0;
        let (shared, _) = run(&w, 1);
        assert_eq!(shared.borrow().serviced, 3, "{schedulers} schedulers");
    }
}

/// What a run of `w` at seed 3 recorded: `mean(name)` of a per-request record, `sum(name)` of a
/// once-a-run one.
struct Recorded(std::collections::BTreeMap<String, smpsched_sim::recorded::Recorded>);

impl Recorded {
    fn of(w: &DiBella) -> Self {
        Recorded(run(w, 3).1.apps.swap_remove(0).recorded)
    }
    fn mean(&self, name: &str) -> f64 {
        self.0[name].sum / self.0[name].count as f64
    }
    fn sum(&self, name: &str) -> f64 {
        self.0[name].sum
    }
}

/// The mean `post` time (ms) and the generation rate (requests per ms) of a NULL non-uniform
/// run with `bookkeeping_ms` done under the IN-box (FCFS: queue) lock.
fn post_and_rate(s: &str, c: &str, bookkeeping_ms: f64) -> (f64, f64) {
    let mut w = params(s, c, 3, 10, 3000, Load::NonUniform);
    w.bookkeeping_ms = bookkeeping_ms;
    let rec = Recorded::of(&w);
    (rec.mean("post"), rec.sum("throughput"))
}

#[test]
fn bookkeeping_under_the_global_lock_slows_posting_not_under_an_inbox_lock() {
    // Global: three schedulers each hold the one queue lock through 0.11 ms of bookkeeping per
    // request, so clients wait for it and generate fewer requests; the multi-access clients
    // post into free mailboxes whose IN-box locks the schedulers seldom hold.
    let (g0, gr0) = post_and_rate("global", "global", 0.0);
    let (g1, gr1) = post_and_rate("global", "global", 0.11);
    assert!(g1 > g0 + 0.02, "Global post {g0:.3} -> {g1:.3} ms");
    assert!(gr1 < 0.98 * gr0, "Global rate {gr0:.3} -> {gr1:.3} req/ms");
    let (m0, _) = post_and_rate("sequential", "primary-random", 0.0);
    let (m1, _) = post_and_rate("sequential", "primary-random", 0.11);
    assert!(
        m1 - m0 < 0.25 * (g1 - g0),
        "multi-access post {m0:.3} -> {m1:.3} ms"
    );
}

/// `w` with the times the reproduction's files set (`experiments/dibella92/`).
fn reproduction_times(mut w: DiBella) -> DiBella {
    (w.bookkeeping_ms, w.send_ms, w.interrupt_ms) = (0.11, 0.335, 0.1);
    (w.fill_ms, w.post_ms, w.count_ms) = (0.11, 1.05, 0.0016);
    w.search_ms = 0.0012;
    w
}

/// The generation rate (requests per ms) and the mean delay (ms) of a NULL non-uniform run in
/// which each client processes its request for `fill_ms` under the IN-box (FCFS: queue) lock,
/// composing for `1.16 - fill_ms` so that its cycle is the same; the other times are the
/// reproduction's (experiments/dibella92).
fn rate_and_delay_with_fill(s: &str, c: &str, fill_ms: f64) -> (f64, f64) {
    rate_and_delay(s, c, |w| (w.fill_ms, w.post_ms) = (fill_ms, 1.16 - fill_ms))
}

/// The generation rate (requests per ms) and the mean delay (ms) of a non-uniform run of
/// 3,000 requests, 3 schedulers and 10 clients with the reproduction's times, changed by `set`.
fn rate_and_delay(s: &str, c: &str, set: impl FnOnce(&mut DiBella)) -> (f64, f64) {
    let mut w = reproduction_times(params(s, c, 3, 10, 3000, Load::NonUniform));
    set(&mut w);
    let rec = Recorded::of(&w);
    (rec.sum("throughput"), rec.mean("delay"))
}

#[test]
fn a_client_processing_its_request_under_the_queue_lock_makes_one_lock_bad() {
    // Section 2.1: a multi-access client processes its request under its own IN-box lock, which
    // no other process waits for; under Global's one lock every post holds up every other
    // post and take, so the lock, held 0.22 ms a request, caps the rate below 1 / 0.22.
    let (g0, _) = rate_and_delay_with_fill("global", "global", 0.0);
    let (g1, _) = rate_and_delay_with_fill("global", "global", 0.11);
    assert!(
        g1 < 1.0 / 0.22 && g1 < 0.8 * g0,
        "Global {g0:.3} -> {g1:.3} req/ms"
    );
    let (m0, md0) = rate_and_delay_with_fill("sequential", "primary-random", 0.0);
    let (m1, md1) = rate_and_delay_with_fill("sequential", "primary-random", 0.11);
    assert!(
        (m1 / m0 - 1.0).abs() < 0.02,
        "multi-access {m0:.3} -> {m1:.3} req/ms"
    );
    assert!(
        md1 < 1.1 * md0,
        "multi-access delay {md0:.3} -> {md1:.3} ms"
    );
}

#[test]
fn a_copied_request_costs_misses_under_the_lock_in_every_structure() {
    // Eight words more a request are four 16-byte lines stored by the poster and loaded by the
    // scheduler, each side missing them (another processor wrote them last): about eight
    // more misses a request, made by the memory model, and the clients' posts take longer.
    for (s, c) in [("global", "global"), ("sequential", "primary-random")] {
        let mut w = params(s, c, 3, 10, 2000, Load::NonUniform);
        w.bookkeeping_ms = 0.11;
        let (_, r0) = run(&w, 3);
        w.request_words = 8;
        let (shared, r8) = run(&w, 3);
        assert_eq!(shared.borrow().serviced, 2000);
        let extra = (r8.memory.misses as f64 - r0.memory.misses as f64) / 2000.0;
        assert!(
            (6.0..10.0).contains(&extra),
            "{s}: {extra:.2} more misses a request"
        );
        assert!(
            r8.memory.stall_cycles > r0.memory.stall_cycles,
            "{s}: no more stall"
        );
    }
}

/// The mean `post` time (ms) of a NULL non-uniform run composing for exactly `post_ms`, with
/// `count_ms` per bitmap bit counted.
fn post_with_count(s: &str, c: &str, count_ms: f64) -> f64 {
    let mut w = params(s, c, 3, 10, 3000, Load::NonUniform);
    w.post_dist = ServiceDist::Fixed;
    w.count_ms = count_ms;
    Recorded::of(&w).mean("post")
}

#[test]
fn a_primary_client_pays_for_counting_its_primarys_bits_a_sequential_client_does_not() {
    // 32 mailboxes at 0.0016 ms a bit: 0.0512 ms more per post for Primary/Random, which reads
    // its primary's bitmap before every post; the Sequential client never reads it.
    let (p0, p1) = (
        post_with_count("sequential", "primary-random", 0.0),
        post_with_count("sequential", "primary-random", 0.0016),
    );
    assert!(
        (0.045..0.06).contains(&(p1 - p0)),
        "Primary/Random post {p0:.4} -> {p1:.4} ms"
    );
    let (s0, s1) = (
        post_with_count("sequential", "sequential", 0.0),
        post_with_count("sequential", "sequential", 0.0016),
    );
    assert!(
        (s1 - s0).abs() < 0.005,
        "Sequential post {s0:.4} -> {s1:.4} ms"
    );
}

#[test]
fn a_random_scheduler_draws_a_queue_only_when_the_one_it_served_is_empty() {
    // Section 3.1: a scheduler keeps servicing a queue while it holds requests. With a draw
    // costing 1 ms, a scheduler drawing before every request would serve at most
    // 3 / (0.11 + 0.3 + 1.0) = 2.1 requests per ms, and the clients, throttled by full
    // mailboxes, would generate no faster; drawing only on an empty queue, it serves near
    // its service rate.
    // Sequential clients draw nothing, so the draws' cost falls on the schedulers alone.
    let mut w = params("random", "sequential", 3, 10, 3000, Load::NonUniform);
    w.random_ms = 1.0;
    let (_, report) = run(&w, 3);
    let rate = report.apps[0].recorded["throughput"].sum;
    assert!(rate > 3.5, "{rate:.3} requests per ms");
}

/// The mean delay (ms) and scheduler 0's load (points over its share) of a NULL run with the
/// reproduction's times and `search_ms` per bit a scheduler's search examines.
fn delay_and_load0_searching(s: &str, c: &str, load: Load, search_ms: f64) -> (f64, f64) {
    let mut w = reproduction_times(params(s, c, 3, 10, 3000, load));
    w.search_ms = search_ms;
    let rec = Recorded::of(&w);
    (rec.mean("delay"), rec.sum("load0"))
}

#[test]
fn a_scheduler_searching_bit_by_bit_finds_requests_later_and_helps_less() {
    // Section 2.2: a scheduler searches the bitmap bit by bit from the mailbox it served last,
    // the whole bitmap when it is empty (32 bits at 0.0016 ms: 0.05 ms a look).
    let (d0, _) = delay_and_load0_searching("static", "static", Load::Synchronous, 0.0);
    let (d1, _) = delay_and_load0_searching("static", "static", Load::Synchronous, 0.0016);
    assert!(
        (0.02..0.2).contains(&(d1 - d0)),
        "Static:Static synchronous delay {d0:.4} -> {d1:.4} ms"
    );
    // The single-access queues have no bitmap to search: nothing changes.
    let fcfs =
        |x| delay_and_load0_searching("distributed-fcfs", "random-fcfs", Load::Synchronous, x);
    assert_eq!(fcfs(0.0), fcfs(0.0016));
    // The four fast Static clients' queue 0: helpers that search it from afar leave more of it
    // to scheduler 0 (the paper's 0.8 points over its share with the Sequential scheduler).
    let (_, l0) = delay_and_load0_searching("sequential", "static", Load::NonUniform, 0.0);
    let (_, l1) = delay_and_load0_searching("sequential", "static", Load::NonUniform, 0.0016);
    assert!(
        l1 > l0 + 0.3,
        "scheduler 0's load {l0:.3} -> {l1:.3} points"
    );
}

/// The generation rate and the mean delay of Sequential:Random at 0.319 ms of service, where
/// the three schedulers are saturated (Table 6), the replies' signals taken at the clock's ticks
/// while spinning or not.
fn saturated_rate_and_delay(tick_signals: bool) -> (f64, f64) {
    rate_and_delay("sequential", "random", |w| {
        (w.service_ms, w.tick_signals) = (0.319, tick_signals)
    })
}

#[test]
fn a_client_spinning_on_a_full_queue_takes_its_signals_at_the_clock_tick() {
    // Saturated, the clients find every mailbox in use and retry. Taking the replies' signals
    // only at the clock's interrupts (Dynix's 10 ms, section 3.1), they keep answered requests'
    // mailboxes longer, so fewer requests wait in the queues and each waits less, at the rate
    // the saturated schedulers set.
    let (r0, d0) = saturated_rate_and_delay(false);
    let (r1, d1) = saturated_rate_and_delay(true);
    assert!(d1 < 0.95 * d0, "delay {d0:.3} -> {d1:.3} ms");
    assert!(
        (r1 / r0 - 1.0).abs() < 0.02,
        "rate {r0:.3} -> {r1:.3} req/ms"
    );
}

/// The generation rate and the mean delay of Sequential:Primary/Random at NULL with the reply
/// signal's sending time drawn as `send_dist` says around the same mean, the search free so
/// that a scheduler's time per request is the service and the signal alone.
fn rate_and_delay_sending(send_dist: ServiceDist) -> (f64, f64) {
    rate_and_delay("sequential", "primary-random", |w| {
        (w.send_dist, w.search_ms) = (send_dist, 0.0);
    })
}

#[test]
fn a_sending_time_that_varies_lengthens_the_wait_at_the_same_rate() {
    // The schedulers' capacity depends on the mean time a request costs them, their queues'
    // wait on its variance too (Pollaczek-Khinchine): drawn exponentially, the reply signal's
    // 0.335 ms of a 0.445 ms request leave the rate where it was and lengthen the delay.
    let (r0, d0) = rate_and_delay_sending(ServiceDist::Fixed);
    let (r1, d1) = rate_and_delay_sending(ServiceDist::Exponential);
    assert!(
        (r1 / r0 - 1.0).abs() < 0.02,
        "rate {r0:.3} -> {r1:.3} req/ms"
    );
    assert!(d1 > 1.05 * d0, "delay {d0:.3} -> {d1:.3} ms");
}

#[test]
fn composing_before_the_generation_stamp_leaves_the_delay_not_the_rate() {
    // Sequential:Primary/Random at NULL with the whole composing time after the stamp (the
    // files), half and all of it before: the clients' cycle, hence their rate, is the same,
    // and the delay loses what moved before the stamp (1.05 ms of composing on average).
    let at = |share: f64| rate_and_delay("sequential", "primary-random", |w| w.post_before = share);
    let (rate0, delay0) = at(0.0);
    let (rate_half, delay_half) = at(0.5);
    let (rate1, delay1) = at(1.0);
    for rate in [rate_half, rate1] {
        assert!((rate / rate0 - 1.0).abs() < 0.01, "{rate} against {rate0}");
    }
    // Not exactly 0.525 and 1.05: the same requests meet different queues once stamped later.
    assert!(
        (0.35..0.7).contains(&(delay0 - delay_half)),
        "{delay0} {delay_half}"
    );
    assert!((0.8..1.3).contains(&(delay0 - delay1)), "{delay0} {delay1}");
    // A share outside 0..1 is refused.
    let mut w = params("sequential", "primary-random", 3, 10, 30, Load::NonUniform);
    w.post_before = 1.5;
    assert!(w.validate().unwrap_err().contains("post_before"));
}

#[test]
fn throughput_counts_the_generations_after_the_first_over_their_span() {
    // Generations every 100 cycles: 1 request per 100 cycles, however many (a consistency probe
    // found N / span, N/(N-1) times the rate, and 1 request per cycle for a single request).
    assert_eq!(throughput(50, 1_000, 1_000 + 49 * 100), Some(0.01));
    assert_eq!(throughput(2, 0, 100), Some(0.01));
    assert_eq!(throughput(1, 5, 5), None);
    assert_eq!(throughput(3, 7, 7), None);
    // One client and one scheduler, synchronous: the same cycle whatever the count, and no
    // throughput record at all for a single request.
    let rate = |n: u64| {
        let mut w = params("static", "static", 1, 1, n, Load::Synchronous);
        w.post_dist = ServiceDist::Fixed;
        let (_, report) = run(&w, 1);
        report.apps[0].recorded.get("throughput").map(|r| r.sum)
    };
    assert_eq!(rate(1), None);
    let (two, fifty) = (rate(2).unwrap(), rate(50).unwrap());
    assert!((two - fifty).abs() < 0.01 * fifty, "{two} against {fifty}");
}
