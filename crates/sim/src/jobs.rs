//! Per-job measures (design.md, "Metrics"): every thread is a job, from its arrival (creation:
//! time 0 in a closed workload, the arrival in an open one) through its first dispatch to its
//! exit. Response time is exit minus arrival, waiting time first run minus arrival, slowdown the
//! response over the processor time the job held. Percentiles are nearest-rank over the jobs
//! that exited, so each is a response some job really had.

use serde::{Deserialize, Serialize};

use crate::ids::Cycles;

/// One job's times, in cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobTimes {
    /// Its thread's rank among its application's threads, in creation order (from 0).
    pub rank: u32,
    /// When it arrived (was created).
    pub arrived: Cycles,
    /// When it was first dispatched.
    pub first_run: Cycles,
    /// When it exited.
    pub exited: Cycles,
    /// Processor time it held (all categories but idle).
    pub held: Cycles,
}

impl JobTimes {
    /// Response time: exit minus arrival.
    pub fn response(&self) -> Cycles {
        self.exited.saturating_sub(self.arrived)
    }

    /// Waiting time before the first dispatch.
    pub fn wait(&self) -> Cycles {
        self.first_run.saturating_sub(self.arrived)
    }

    /// Slowdown: response over the processor time held (1 for a job never kept waiting).
    pub fn slowdown(&self) -> f64 {
        self.response() as f64 / self.held.max(1) as f64
    }
}

/// An application's per-job measures over the jobs that exited. With none exited, every
/// measure but `jobs` is 0 here and has no value (`null`) in the results: no response was seen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "JobStatsText", from = "JobStatsText")]
pub struct JobStats {
    /// Jobs that exited.
    pub jobs: u64,
    /// Mean response time (arrival to exit), cycles.
    pub mean_response: f64,
    /// Median response time, cycles.
    pub p50_response: Cycles,
    /// 95th percentile of response time, cycles.
    pub p95_response: Cycles,
    /// 99th percentile of response time, cycles.
    pub p99_response: Cycles,
    /// Longest response time, cycles.
    pub max_response: Cycles,
    /// Mean waiting time before the first dispatch, cycles.
    pub mean_wait: f64,
    /// Mean slowdown: response over processor time held (1 for a job never kept waiting).
    pub mean_slowdown: f64,
}

/// [`JobStats`] as the results write it: each measure `null` when no job exited.
#[derive(Clone, Serialize, Deserialize)]
struct JobStatsText {
    jobs: u64,
    mean_response: Option<f64>,
    p50_response: Option<Cycles>,
    p95_response: Option<Cycles>,
    p99_response: Option<Cycles>,
    max_response: Option<Cycles>,
    mean_wait: Option<f64>,
    mean_slowdown: Option<f64>,
}

impl From<JobStats> for JobStatsText {
    fn from(s: JobStats) -> Self {
        let some = s.jobs > 0;
        JobStatsText {
            jobs: s.jobs,
            mean_response: some.then_some(s.mean_response),
            p50_response: some.then_some(s.p50_response),
            p95_response: some.then_some(s.p95_response),
            p99_response: some.then_some(s.p99_response),
            max_response: some.then_some(s.max_response),
            mean_wait: some.then_some(s.mean_wait),
            mean_slowdown: some.then_some(s.mean_slowdown),
        }
    }
}

impl From<JobStatsText> for JobStats {
    fn from(t: JobStatsText) -> Self {
        JobStats {
            jobs: t.jobs,
            mean_response: t.mean_response.unwrap_or_default(),
            p50_response: t.p50_response.unwrap_or_default(),
            p95_response: t.p95_response.unwrap_or_default(),
            p99_response: t.p99_response.unwrap_or_default(),
            max_response: t.max_response.unwrap_or_default(),
            mean_wait: t.mean_wait.unwrap_or_default(),
            mean_slowdown: t.mean_slowdown.unwrap_or_default(),
        }
    }
}

impl JobStats {
    /// The measures of `jobs` (reordered in place).
    pub fn of(jobs: &mut [JobTimes]) -> JobStats {
        if jobs.is_empty() {
            return JobStats::default();
        }
        let n = jobs.len() as f64;
        let mean = |f: &dyn Fn(&JobTimes) -> f64| jobs.iter().map(f).sum::<f64>() / n;
        let mean_response = mean(&|j| j.response() as f64);
        let mean_wait = mean(&|j| j.wait() as f64);
        let mean_slowdown = mean(&JobTimes::slowdown);
        // Nearest rank: the ceil(p n)-th smallest response.
        let rank = |p: f64| ((p * n).ceil() as usize).clamp(1, jobs.len()) - 1;
        let ranks = [rank(0.50), rank(0.95), rank(0.99), rank(1.0)];
        select_ranks(jobs, &ranks);
        JobStats {
            jobs: jobs.len() as u64,
            mean_response,
            p50_response: jobs[ranks[0]].response(),
            p95_response: jobs[ranks[1]].response(),
            p99_response: jobs[ranks[2]].response(),
            max_response: jobs[ranks[3]].response(),
            mean_wait,
            mean_slowdown,
        }
    }
}

/// Puts the job of each of `ranks` (ascending indices) where a sort by response would put it,
/// without sorting the rest: each selection works on what lies above the previous rank, so the
/// whole costs time linear in the jobs, not a sort's n log n (a run of 409,600 threads spent
/// about 2% of its time sorting them).
fn select_ranks(jobs: &mut [JobTimes], ranks: &[usize]) {
    let mut from = 0;
    for &k in ranks {
        if k >= from {
            jobs[from..].select_nth_unstable_by_key(k - from, JobTimes::response);
            from = k + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(arrived: u64, first_run: u64, exited: u64, held: u64) -> JobTimes {
        JobTimes {
            rank: 0,
            arrived,
            first_run,
            exited,
            held,
        }
    }

    #[test]
    fn percentiles_are_nearest_rank_and_means_exact() {
        // Responses 1..=100 (arrival 0, exit r), each held for half its response.
        let mut jobs: Vec<JobTimes> = (1..=100)
            .rev()
            .map(|r| job(0, 0, r, r.div_ceil(2)))
            .collect();
        let s = JobStats::of(&mut jobs);
        assert_eq!(s.jobs, 100);
        assert_eq!(s.mean_response, 50.5);
        assert_eq!(
            (s.p50_response, s.p95_response, s.p99_response),
            (50, 95, 99)
        );
        assert_eq!(s.max_response, 100);
        assert_eq!(s.mean_wait, 0.0);
        assert!(
            s.mean_slowdown > 1.9 && s.mean_slowdown <= 2.0,
            "{}",
            s.mean_slowdown
        );
        assert_eq!(JobStats::of(&mut []), JobStats::default());
        let s = JobStats::of(&mut [job(10, 15, 30, 15)]);
        assert_eq!(
            (s.mean_response, s.mean_wait, s.p99_response),
            (20.0, 5.0, 20)
        );
    }

    proptest::proptest! {
        #[test]
        fn selected_ranks_are_those_of_a_sort(
            responses in proptest::collection::vec(0u64..50, 1..300),
        ) {
            let mut jobs: Vec<JobTimes> = responses.iter().map(|&r| job(0, 0, r, 1)).collect();
            let mut sorted = responses.clone();
            sorted.sort_unstable();
            let n = sorted.len() as f64;
            let at = |p: f64| sorted[((p * n).ceil() as usize).clamp(1, sorted.len()) - 1];
            let s = JobStats::of(&mut jobs);
            proptest::prop_assert_eq!(
                (s.p50_response, s.p95_response, s.p99_response, s.max_response),
                (at(0.5), at(0.95), at(0.99), at(1.0))
            );
        }
    }
}
