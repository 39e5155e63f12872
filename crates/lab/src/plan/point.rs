//! A point of an experiment: one machine, scheduler and set of applications, validated and
//! ready to simulate ([`Point::simulate`]).

use std::sync::Arc;

use smpsched_sim::sched::PolicyInfo;
use smpsched_sim::trace::TraceConfig;
use smpsched_sim::{Limits, MachineConfig, Progress, RunReport, SimError, Simulation};
use smpsched_workloads::{Workload, WorkloadInfo};

/// One application of a point: its name and its validated workload.
#[derive(Clone)]
pub struct App {
    /// Name of the application in reports.
    pub name: String,
    /// The registered workload kind.
    pub kind: &'static WorkloadInfo,
    /// The validated workload.
    pub workload: Arc<dyn Workload>,
}

/// One fully resolved configuration of an experiment: everything needed to simulate it.
#[derive(Clone)]
pub struct Point {
    /// Human-readable label (`policy=priority/processors=8`), unique within the experiment.
    pub label: String,
    /// The values this point sets, as (dotted path, value) in file order.
    pub params: Vec<(String, crate::input::param_value::ParamValue)>,
    /// The machine.
    pub machine: MachineConfig,
    /// The kernel scheduling policy.
    pub policy: &'static PolicyInfo,
    /// The policy's settings: its `[scheduler]` table parsed and checked once, typed.
    pub settings: std::sync::Arc<dyn smpsched_sim::sched::Settings>,
    /// The applications, in task order.
    pub apps: Vec<App>,
    /// Bounds on simulated time, events and memory references (`time_limit_cycles`,
    /// `event_limit`, `reference_limit`), defaults applied.
    pub limits: Limits,
    /// The application whose completion ends the run (`until = "LU"`): the others are measured
    /// up to that moment (Gupta et al. 1991, footnote 3); `None` runs until every thread exits.
    pub until: Option<String>,
    /// The most threads one run may create, those it starts with and those its programs spawn
    /// ([`Simulation::set_thread_limit`]): see `plan::threads::thread_limit`.
    pub threads: u64,
    /// Everything the point's runs depend on, as canonical text (the file's folder and the
    /// resolved document, keys sorted): two points with equal keys simulate identically under
    /// the same seed, so a reproduction runs them once (see [`crate::exec::runner::RunMemo`]).
    pub key: String,
    /// Measures every application's threads whatever the run's options: a reproduction whose
    /// measures read `wake_lat_us`, which only measured threads record (part of `key`).
    pub measure_threads: bool,
}

impl Point {
    /// Unit operations of all applications (synchronizations, exchanges), if any declares them.
    pub fn operations(&self) -> Option<u64> {
        let ops: Vec<u64> = self
            .apps
            .iter()
            .filter_map(|a| a.workload.operations())
            .collect();
        (!ops.is_empty()).then(|| ops.iter().sum())
    }
}

/// How to simulate a point: whom to show its progress, how often, and what to trace. The
/// default shows no one and traces nothing.
pub struct SimOptions<'a> {
    /// Events between two calls of `observe`.
    pub every: u64,
    /// Shown the run's progress every `every` events.
    pub observe: Option<&'a mut dyn FnMut(Progress)>,
    /// Records a trace of what each processor ran (in the report's `trace`).
    pub trace: Option<TraceConfig>,
    /// Keeps every job's times in the report (`AppReport::job_times`).
    pub per_job: bool,
    /// Measures every application's threads (`AppReport::per_thread`).
    pub per_thread: bool,
}

impl Default for SimOptions<'_> {
    fn default() -> Self {
        SimOptions {
            every: u64::MAX,
            observe: None,
            trace: None,
            per_job: false,
            per_thread: false,
        }
    }
}

impl Point {
    /// Builds and runs the simulation of this point with `seed`, as `options` say.
    pub fn simulate(&self, seed: u64, options: SimOptions<'_>) -> Result<RunReport, SimError> {
        let mut sim = Simulation::new(self.machine.clone(), self.settings.build(), seed)?;
        sim.set_limits(self.limits);
        sim.set_thread_limit(self.threads);
        if let Some(config) = options.trace {
            sim.set_trace(config);
        }
        if options.per_job {
            sim.keep_job_times();
        }
        for app in &self.apps {
            let task = sim.add_task(app.name.clone());
            if options.per_thread || self.measure_threads {
                sim.measure_threads(task);
            }
            app.workload.install(&mut sim, task)?;
            if self.until.as_deref() == Some(app.name.as_str()) {
                sim.end_when_done(task);
            }
        }
        match options.observe {
            Some(observe) => sim.run_observed(options.every, observe),
            None => sim.run_observed(u64::MAX, &mut |_| {}),
        }
    }
}
