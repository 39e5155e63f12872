//! A reproduction's runs made here in one pool before its files are reported. Each file's runs
//! in a pool of their own left a tail per file: the cores idle while the file's slowest run
//! finished. Here every file's runs (a run several files share, once) go to the same worker
//! threads, each run its own task, and the files then find all of them in the memo, so every
//! number is the one a file-by-file reproduction gives.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::runner::{plan_jobs, run_one, DoneCount, JobPlan, RunMemo, RunOptions};
use super::shard::{plan, Task};
use crate::{Experiment, LabError};

/// The runs of a reproduction's files still to be made, in plan order (file, point, repetition).
pub struct Pool<'a> {
    exps: &'a [&'a Experiment],
    work: Vec<(usize, Task)>,
}

impl<'a> Pool<'a> {
    /// The runs of `exps` not yet in `memo`, each (point key, seed) once.
    pub fn plan(exps: &'a [&'a Experiment], memo: &RunMemo) -> Self {
        Pool {
            exps,
            work: plan(exps, memo),
        }
    }

    /// How many runs there are to make.
    pub fn len(&self) -> usize {
        self.work.len()
    }

    /// Whether there is nothing to make.
    pub fn is_empty(&self) -> bool {
        self.work.is_empty()
    }

    /// How many runs go at once when `jobs` are asked for (0: one per core): the plan of the
    /// file whose largest run leaves room for the fewest, as every file's runs share the pool.
    pub fn job_plan(&self, jobs: usize) -> JobPlan {
        self.exps
            .iter()
            .map(|e| plan_jobs(e, jobs))
            .min_by_key(|p| p.jobs)
            .unwrap_or(JobPlan {
                jobs: 1,
                capped_from: None,
                largest_run: 0,
                available: None,
            })
    }

    /// Makes every run, as many at once as `plan` says ([`Self::job_plan`]), keeping each in
    /// `memo` and telling `progress(done, total)` after each. Stops starting runs at the first
    /// that fails (its error is returned) or once `cancel` is set.
    pub fn run(
        self,
        plan: &JobPlan,
        memo: &RunMemo,
        cancel: Option<&AtomicBool>,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<(), LabError> {
        let threads = plan.jobs.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| LabError::Internal(format!("cannot start worker threads: {e}")))?;
        let options = RunOptions {
            memo: Some(memo),
            cancel,
            ..RunOptions::default()
        };
        let (total, done) = (self.work.len(), DoneCount::default());
        pool.install(|| {
            self.work
                .par_iter()
                .with_max_len(1)
                .map(|&(e, task)| {
                    let exp = self.exps[e];
                    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                        return Err(LabError::Internal(format!("{}: cancelled", exp.name)));
                    }
                    run_one(exp, &exp.points[task.point], task.repetition, &options)?;
                    done.tick(total, Some(progress));
                    Ok(())
                })
                .collect::<Result<Vec<()>, LabError>>()
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::runner::run_experiment;
    use crate::results::to_json;
    use std::sync::atomic::AtomicUsize;

    const SWEEP: &str = "name = \"pool\"\nseed = 3\nrepetitions = 3\n[machine]\n\
        preset = \"tango-12\"\nprocessors = 2\n[scheduler]\npolicy = \"batch\"\n\
        [[workload]]\nkind = \"synthetic\"\nname = \"w\"\nthreads = 3\nbursts = 4\n\
        compute = { dist = \"exponential\", mean = 20000 }\n\
        [sweep]\n\"scheduler.policy\" = [\"batch\", \"round-robin\"]\n";

    #[test]
    fn runs_made_in_one_pool_give_the_bytes_of_runs_made_file_by_file() {
        let exp = Experiment::parse(std::path::Path::new("pool.toml"), SWEEP.to_string()).unwrap();
        let here = run_experiment(&exp, &RunOptions::default()).unwrap();
        // Two files with the same points: their runs are planned once.
        let memo = RunMemo::default();
        let files = [&exp, &exp];
        let pool = Pool::plan(&files, &memo);
        assert_eq!(pool.len(), 6);
        let told = AtomicUsize::new(0);
        let plan = pool.job_plan(2);
        assert!((1..=2).contains(&plan.jobs));
        pool.run(&plan, &memo, None, &|done, total| {
            assert!(done <= total && total == 6);
            told.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(told.into_inner(), 6);
        assert!(
            Pool::plan(&files, &memo).is_empty(),
            "every run is in the memo"
        );
        let options = RunOptions {
            memo: Some(&memo),
            ..RunOptions::default()
        };
        let pooled = run_experiment(&exp, &options).unwrap();
        assert_eq!(to_json(&exp, &here), to_json(&exp, &pooled));
    }
}
