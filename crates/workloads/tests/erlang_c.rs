//! An open workload against queueing theory: Poisson arrivals of jobs with exponential demands,
//! served first come first served on c processors with no dispatch costs, is the M/M/c queue.
//! The mean response time measured over independent replications must match Erlang C's
//! W = 1/mu + C(c, a) / (c mu - lambda) within four standard errors of the replications'
//! mean (the tolerance comes from the measurement, not from a number we chose).

use smpsched_sim::sched::policy;
use smpsched_sim::{MachineConfig, Simulation};
use smpsched_workloads::workload;

/// Erlang C: the probability that an arriving job waits, with offered load `a` on `c` servers.
fn erlang_c(c: u32, a: f64) -> f64 {
    let rho = a / f64::from(c);
    let mut term = 1.0; // a^k / k!
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    let tail = term / (1.0 - rho);
    tail / (sum + tail)
}

/// The mean response time of M/M/c with mean service `s` at utilization `rho`.
fn mm_c_response(c: u32, rho: f64, s: f64) -> f64 {
    let mu = 1.0 / s;
    let lambda = rho * f64::from(c) * mu;
    s + erlang_c(c, lambda / mu) / (f64::from(c) * mu - lambda)
}

/// The mean response of one replication: `jobs` jobs at utilization `rho` on `c` processors.
fn replicate(c: u32, rho: f64, s: f64, jobs: u64, seed: u64) -> f64 {
    let mut m = MachineConfig::tango_12();
    m.processors = c;
    m.context_switch_cycles = 0;
    m.sched_op_cycles = 0;
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    let fcfs = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, fcfs, seed).unwrap();
    let task = sim.add_task("jobs");
    let params: toml::Table = toml::from_str(&format!(
        "jobs = {jobs}\ninterarrival = {{ dist = \"exponential\", mean = {} }}\n\
         service = {{ dist = \"exponential\", mean = {s} }}\n",
        s / (rho * f64::from(c))
    ))
    .unwrap();
    let w = (workload("arrivals").unwrap().build)(params).unwrap();
    w.install(&mut sim, task).unwrap();
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    let j = &r.apps[0].jobs;
    assert_eq!(j.jobs, jobs);
    j.mean_response
}

#[test]
fn mm_c_mean_response_matches_erlang_c() {
    let s = 10_000.0;
    let reps = 8u64;
    for c in [1u32, 4, 16] {
        for rho in [0.5, 0.8, 0.9] {
            let jobs = 25_000;
            let means: Vec<f64> = (0..reps)
                .map(|r| replicate(c, rho, s, jobs, 1 + r))
                .collect();
            let n = reps as f64;
            let mean = means.iter().sum::<f64>() / n;
            let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let se = (var / n).sqrt();
            let theory = mm_c_response(c, rho, s);
            eprintln!("c={c} rho={rho}: {mean:.0} vs {theory:.0} (se {se:.0})");
            assert!(
                se < 0.05 * theory,
                "c={c} rho={rho}: the measurement is too noisy to test (se {se:.0})"
            );
            assert!(
                (mean - theory).abs() <= 4.0 * se,
                "c={c} rho={rho}: mean response {mean:.0} vs Erlang C {theory:.0} \
                 (se {se:.0}, off by {:.2} se)",
                (mean - theory).abs() / se
            );
        }
    }
}

#[test]
fn erlang_c_formula_has_its_known_values() {
    // M/M/1: C = rho; W = s / (1 - rho).
    assert!((erlang_c(1, 0.8) - 0.8).abs() < 1e-12);
    assert!((mm_c_response(1, 0.9, 1.0) - 10.0).abs() < 1e-9);
    // M/M/2 at a = 1 (rho = 0.5): C = 1/3.
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
}
