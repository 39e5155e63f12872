//! The vacant processors of [`SchedCtx`]: a set beside `running` ([`ProcSet`], a bitmap)
//! holding `p` while nothing runs on processor `p`, which the engine keeps in step through
//! [`SchedCtx::set_running`] and a policy reads through [`SchedCtx::vacant`], lowest-numbered
//! first, 64 processors a word (sched_ext's idle-CPU pick, `scx_bpf_select_cpu_dfl`, was a scan
//! over every processor).

use super::SchedCtx;
use crate::config::MachineConfig;
use crate::ids::{ProcId, ThreadId};
use crate::procset::ProcSet;

impl SchedCtx {
    /// The view of `machine` before anything runs: no thread yet, every processor vacant.
    pub(crate) fn new(machine: MachineConfig) -> SchedCtx {
        let n = machine.processors as usize;
        SchedCtx {
            now: 0,
            machine,
            threads: Vec::new(),
            cold: Vec::new(),
            tasks: Vec::new(),
            running: vec![None; n],
            vacant: ProcSet::all(n),
            any_masked: false,
        }
    }

    /// Puts `t` (or nothing) on processor `p`, keeping [`SchedCtx::vacant`] in step.
    #[inline]
    pub(crate) fn set_running(&mut self, p: usize, t: Option<ThreadId>) {
        self.running[p] = t;
        if t.is_some() {
            self.vacant.remove(p);
        } else {
            self.vacant.insert(p);
        }
    }

    /// How many processors run a thread: the count of `running`'s entries that are `Some`,
    /// kept beside them (a policy that counted them at every pick paid a scan of every
    /// processor: 65,536 processors made it most of a run's time).
    #[inline]
    pub fn busy(&self) -> usize {
        self.running.len() - self.vacant.len()
    }

    /// The processors with nothing running on them, lowest-numbered first (those whose
    /// `running` entry is `None`), found a word of 64 at a time rather than by a scan.
    pub fn vacant(&self) -> impl Iterator<Item = ProcId> + '_ {
        let mut from = 0;
        std::iter::from_fn(move || {
            let p = self.vacant.next_from(from)?;
            from = p + 1;
            Some(ProcId(p as u32))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vacant_bitmap_follows_running() {
        let mut cx = SchedCtx::new(MachineConfig {
            processors: 130,
            ..MachineConfig::tango_12()
        });
        let none = |cx: &SchedCtx| -> Vec<ProcId> {
            (0..cx.running.len() as u32)
                .map(ProcId)
                .filter(|p| cx.running[p.index()].is_none())
                .collect()
        };
        assert_eq!(cx.vacant().count(), 130);
        for (k, p) in [0usize, 63, 64, 129, 5, 63, 127, 0].into_iter().enumerate() {
            let t = (k % 3 != 2).then_some(ThreadId(k as u32));
            cx.set_running(p, t);
            assert_eq!(
                cx.vacant().collect::<Vec<_>>(),
                none(&cx),
                "after {p} <- {t:?}"
            );
            assert_eq!(cx.busy(), cx.running.iter().flatten().count());
        }
        assert_eq!(cx.vacant().next(), Some(ProcId(1)));
    }
}
