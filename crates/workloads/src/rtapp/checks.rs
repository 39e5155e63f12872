//! Whole-file checks of an rt-app load, made before anything runs: forks name tasks of the file
//! and make no cycle, barriers are not used with forks (rt-app's rule) and count their
//! parties, a task that loops for ever needs a duration and an event that lets time pass, the
//! threads started at once stay within [`MAX_INSTANCES`] and those the forks make within
//! [`MAX_THREADS`], and each thread takes and releases its mutexes in order. An error at an
//! event names its line, its task and its phase.

use std::collections::BTreeSet;

use smpsched_sim::config::MAX_THREADS;

use super::spec::{At, Event, RtAppError, Spec, Task, MAX_INSTANCES};

/// Checks forks (known tasks, no cycle), barriers (not with forks; parties counted), the
/// run's end (a task looping forever needs a duration) and the threads a run creates. An error
/// at an event names its line, its task and its phase; `line`, the `tasks` object's, is for
/// the others.
pub(super) fn check_references(spec: &mut Spec, line: usize) -> Result<(), RtAppError> {
    let names: BTreeSet<&str> = spec.tasks.iter().map(|t| t.name.as_str()).collect();
    for t in &spec.tasks {
        let at = At {
            task: Some(t.name.clone()),
            phase: None,
        };
        for (p, line, f) in forks_of(t) {
            if !names.contains(f) {
                return Err(at_phase(t, p).error(
                    "fork",
                    line,
                    format!("forks `{f}`, which is no task of the file"),
                ));
            }
        }
        if let Some((p, event, line)) = t.loops.is_none().then(|| idle_loop(t)).flatten() {
            return Err(at_phase(t, p).error(
                event,
                line,
                "none of the task's events takes time, waits or gives up the processor (a \
                 signal, broad or resume with no one to wake, a mem of 0 bytes, does nothing by \
                 itself), so looping until the duration it would never let time pass: add a \
                 run, a sleep, a timer or a wait",
            ));
        }
        if t.loops.is_none() && spec.duration.is_none() {
            return Err(at.error(
                "loop",
                line,
                "loops forever (-1, the default) but global.duration is -1: give the task a \
                 loop count or the file a duration",
            ));
        }
    }
    check_fork_cycles(spec)?;
    count_barriers(spec)?;
    let total: u64 = spec.tasks.iter().map(|t| t.instances).sum();
    if total > MAX_INSTANCES {
        return Err(At::default().error(
            "instance",
            line,
            format!("more than {MAX_INSTANCES} threads"),
        ));
    }
    count_threads(spec)
}

/// Where task `t`'s phase number `p` is, for an error.
fn at_phase(t: &Task, p: usize) -> At {
    At {
        task: Some(t.name.clone()),
        phase: Some(t.phases[p].name.clone()),
    }
}

/// When none of task `t`'s events hands the simulator an operation of its own (signal,
/// broad and resume give one only when someone waits; a mem of 0 bytes none), the first
/// phase (its number), event and line of it: a thread looping over them forever would never
/// let time pass. Every other event is an operation (a compute or a sleep of 0 included, which
/// the engine's bound on operations at one instant catches).
fn idle_loop(t: &Task) -> Option<(usize, &'static str, usize)> {
    let mut first = None;
    for (i, p) in t.phases.iter().enumerate() {
        for (e, &line) in p.events.iter().zip(&p.lines) {
            let name = match e {
                Event::Signal(_) => "signal",
                Event::Broad(_) => "broad",
                Event::Resume(_) => "resume",
                Event::Mem(0) => "mem",
                Event::IoRun(0) => "iorun",
                _ => return None,
            };
            first = first.or(Some((i, name, line)));
        }
    }
    first
}

/// The forks of task `t`, in the order of its events: each one's phase (its number), line and
/// the task it forks.
fn forks_of(t: &Task) -> impl Iterator<Item = (usize, usize, &str)> {
    t.phases.iter().enumerate().flat_map(|(i, p)| {
        p.events
            .iter()
            .zip(&p.lines)
            .filter_map(move |(e, &line)| match e {
                Event::Fork(n) => Some((i, line, n.as_str())),
                _ => None,
            })
    })
}

/// A fork of a task: the task it forks (its index), how many times one run of the forking
/// task's phases makes it (its phase's loops), and where it is (its phase's number, its line).
struct Fork {
    to: usize,
    each: u64,
    phase: usize,
    line: usize,
}

/// Each task's forks in event order ([`Fork`]). Every fork names a task of the file (checked
/// before).
fn fork_edges(spec: &Spec) -> Vec<Vec<Fork>> {
    let index = spec.task_indices();
    spec.tasks
        .iter()
        .map(|t| {
            forks_of(t)
                .map(|(phase, line, name)| Fork {
                    to: index[name],
                    each: t.phases[phase].loops,
                    phase,
                    line,
                })
                .collect()
        })
        .collect()
}

/// An error when forks make a cycle, which would create threads without end (every fork names
/// a task of the file: checked before). A depth-first walk from each task in file order, the
/// last fork first; entering a task checks its forks against the path (the first in event order
/// on it makes the error, at that fork's line and phase, with the cycle it closes: a -> b -> a).
/// A task whose forks have all been walked is not entered again (no cycle is reachable from
/// it), so the walk costs one visit a task and fork.
fn check_fork_cycles(spec: &Spec) -> Result<(), RtAppError> {
    let n = spec.tasks.len();
    let forks = fork_edges(spec);
    let mut done = vec![false; n];
    let mut on_path = vec![false; n];
    // The path: its tasks, each with the number of its forks walked so far.
    let mut frames: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if done[root] {
            continue;
        }
        let mut enter = Some(root);
        loop {
            if let Some(t) = enter.take() {
                frames.push((t, 0));
                on_path[t] = true;
                if let Some(f) = forks[t].iter().find(|f| on_path[f.to]) {
                    // The cycle from the task it closes on: a -> b -> a.
                    let from = frames.iter().position(|&(i, _)| i == f.to).unwrap_or(0);
                    let names: Vec<&str> = frames[from..]
                        .iter()
                        .map(|&(i, _)| spec.tasks[i].name.as_str())
                        .collect();
                    let cycle = format!(
                        "forks make a cycle: {} -> {}",
                        names.join(" -> "),
                        spec.tasks[f.to].name
                    );
                    return Err(fork_error(spec, t, f, cycle));
                }
            }
            let Some((t, walked)) = frames.last_mut() else {
                break;
            };
            let t = *t;
            if *walked < forks[t].len() {
                let f = forks[t][forks[t].len() - 1 - *walked].to;
                *walked += 1;
                if !done[f] {
                    enter = Some(f);
                }
                continue;
            }
            frames.pop();
            on_path[t] = false;
            done[t] = true;
        }
    }
    Ok(())
}

/// An error at task `t`'s `fork` event `f`: its line, its task and its phase.
fn fork_error(spec: &Spec, t: usize, f: &Fork, message: String) -> RtAppError {
    at_phase(&spec.tasks[t], f.phase).error("fork", f.line, message)
}

/// Counts the threads a run creates ([`Spec::threads`]): a task's instances, and for each task
/// that forks it, that task's threads times the forks one of them makes, its loops run to the
/// end (a task looping until the duration counted as one loop, as few as it surely makes when
/// it starts). Forks make no cycle (checked before), so the counts follow the forks in
/// topological order. When they pass [`MAX_THREADS`], the most a simulation creates, the error
/// names the task whose `fork` makes the most of them: a chain of forks multiplies, and a file
/// of a few kilobytes could ask for millions of threads. (The instances alone are within
/// [`MAX_INSTANCES`], far below it, so only forks can pass it.)
fn count_threads(spec: &mut Spec) -> Result<(), RtAppError> {
    let n = spec.tasks.len();
    // forks[y]: y's forks, each one's `each` made the threads one thread of y makes with it in
    // its whole run.
    let mut forks = fork_edges(spec);
    let mut parents = vec![0usize; n];
    for (y, t) in spec.tasks.iter().enumerate() {
        let runs = t.loops.unwrap_or(1);
        for f in &mut forks[y] {
            f.each = f.each.saturating_mul(runs);
            parents[f.to] += 1;
        }
    }
    let mut created: Vec<u64> = spec.tasks.iter().map(|t| t.instances).collect();
    // The fork that makes the most threads: (its task, its number there, the threads).
    let mut largest = (0, 0, 0u64);
    let mut ready: Vec<usize> = (0..n).filter(|&x| parents[x] == 0).collect();
    while let Some(y) = ready.pop() {
        for (i, f) in forks[y].iter().enumerate() {
            let (x, made) = (f.to, created[y].saturating_mul(f.each));
            if made > largest.2 {
                largest = (y, i, made);
            }
            created[x] = created[x].saturating_add(made);
            parents[x] -= 1;
            if parents[x] == 0 {
                ready.push(x);
            }
        }
    }
    spec.threads = created.iter().fold(0u64, |a, &c| a.saturating_add(c));
    if spec.threads > MAX_THREADS {
        let (y, i, made) = largest;
        let f = &forks[y][i];
        // A count that passed what 64 bits hold (a long chain of forks) reads as such.
        let count = |n: u64| match n {
            u64::MAX => "more than 2^64 (a number past what the count holds)".to_string(),
            n => n.to_string(),
        };
        let message = format!(
            "its forks would make {} threads of `{}`, {} threads in all, if every thread \
             ran its loops to the end; a simulation creates at most {MAX_THREADS}",
            count(made),
            spec.tasks[f.to].name,
            count(spec.threads)
        );
        return Err(fork_error(spec, y, f, message));
    }
    Ok(())
}

/// Registers every barrier with its parties (the instances of the tasks that use it); an error
/// when a barrier is used in a file with forks (rt-app's rule).
fn count_barriers(spec: &mut Spec) -> Result<(), RtAppError> {
    let any_fork = spec.tasks.iter().any(|t| forks_of(t).next().is_some());
    for t in &spec.tasks {
        for p in &t.phases {
            for (e, &line) in p.events.iter().zip(&p.lines) {
                if let Event::Barrier(b) = e {
                    if any_fork {
                        return Err(At {
                            task: Some(t.name.clone()),
                            phase: Some(p.name.clone()),
                        }
                        .error(
                            "barrier",
                            line,
                            "a barrier cannot be used with fork events (rt-app's rule)",
                        ));
                    }
                    spec.barriers.entry(b.clone()).or_insert(0);
                }
            }
        }
    }
    for (b, parties) in spec.barriers.iter_mut() {
        *parties = spec
            .tasks
            .iter()
            .filter(|t| {
                t.phases
                    .iter()
                    .flat_map(|p| &p.events)
                    .any(|e| *e == Event::Barrier(b.clone()))
            })
            .map(|t| t.instances)
            .sum();
    }
    Ok(())
}

/// Each thread's mutexes, walked through one loop of its phases: an unlock or a wait needs the
/// mutex held, a lock needs it free (the simulator's locks are not recursive), and every mutex
/// is released by the end of the phases.
pub(super) fn check_mutexes(spec: &mut Spec) -> Result<(), RtAppError> {
    for t in &mut spec.tasks {
        // The mutexes held, each with the line of the lock that took it.
        let mut held: Vec<(String, usize)> = Vec::new();
        for p in &mut t.phases {
            for _ in 0..p.loops.min(2) {
                for (e, &line) in p.events.iter_mut().zip(&p.lines) {
                    let err = |event: &str, message: String| RtAppError {
                        task: Some(t.name.clone()),
                        phase: Some(p.name.clone()),
                        event: Some(event.to_string()),
                        line,
                        message,
                    };
                    let holds = |m: &str| held.iter().any(|h| h.0 == m);
                    match e {
                        Event::Lock(m) => {
                            if holds(m) {
                                return Err(err(
                                    "lock",
                                    format!("takes `{m}`, which it holds already"),
                                ));
                            }
                            held.push((m.clone(), line));
                        }
                        Event::Unlock(m) => {
                            let Some(i) = held.iter().position(|h| h.0 == *m) else {
                                return Err(err(
                                    "unlock",
                                    format!("releases `{m}`, which it does not hold"),
                                ));
                            };
                            held.remove(i);
                        }
                        Event::Wait { mutex, .. } if !holds(mutex) => {
                            return Err(err(
                                "wait",
                                format!("waits with `{mutex}`, which it does not hold"),
                            ));
                        }
                        // Held (rt-app's examples lock before a sync, as its code needs), the
                        // sync neither takes nor releases it; free, it takes it around its
                        // signal and wait (as rt-app's tutorial describes it).
                        Event::Sync {
                            mutex, held: flag, ..
                        } => *flag = holds(mutex),
                        _ => {}
                    }
                }
            }
        }
        if let Some((m, line)) = held.first() {
            let (m, line) = (m.clone(), *line);
            return Err(RtAppError {
                task: Some(t.name.clone()),
                phase: None,
                event: Some("lock".into()),
                line,
                message: format!("ends its phases holding `{m}`, taken here"),
            });
        }
    }
    Ok(())
}
