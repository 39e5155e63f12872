//! Process control (Gupta, Tucker and Urushibara 1991, section 7.2; Tucker and Gupta 1989): the
//! partitioned scheduler of `partition` ([`Partition::telling`]), with a policy module that tells
//! each application how many processors it has whenever that changes
//! ([`Notice::Processors`](crate::outcome::Notice::Processors)), so that an
//! application written in task-queue style suspends or resumes worker processes until its
//! runnable workers match its processors. The application does the suspending; the kernel
//! only divides and tells.

use serde::Deserialize;

use super::partition::{Params, Partition};
use super::{ParamInfo, PolicyInfo, PolicyParams, Scheduler, Settings};

/// Parameters of `process-control`: those of `partition`.
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub struct Telling(Params);

impl PolicyParams for Telling {
    fn check(&self) -> Result<(), super::ParamError> {
        self.0.check()
    }
}

impl Settings for Telling {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Partition::new(self.0.clone()).telling())
    }
}

/// Registry entry of `process-control`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "process-control",
    summary: "partitioning that tells each application its processor count",
    description: "The processors are divided equally among the applications as in `partition`, \
                  and at every slice boundary each application whose share changed is told its \
                  processor count (a notice every thread sees at its next operation). \
                  Applications in task-queue style (the `taskqueue` workload) then suspend or \
                  resume workers so that their runnable workers match their processors.",
    paper: "Gupta et al. 1991 section 7.2 (two-level scheduling with process control, Figure 10); \
            Tucker and Gupta 1989",
    params: &[ParamInfo {
        name: "c",
        default: "0",
        doc: "affinity weight within a partition (0: plain priority)",
    }],
    processor_sets: false,
    parse: super::settings::<Telling>,
};
