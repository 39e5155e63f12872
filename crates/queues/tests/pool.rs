//! The worker pool over every structure (one suite, instantiated per structure): every task
//! runs, tasks spawn tasks, a panic reaches its spawner and takes no worker down, shutdown runs
//! everything queued and refuses new outside work, no wake-up is lost, idle workers park.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use smpsched_queues::pool::{Ctx, Pool, PoolConfig, SpawnError, Task};
use smpsched_queues::{
    Affinity, Ddq, DdqConfig, DistributedFcfs, Global, MachRunQueue, MultiAccess, PerCore, Post,
    ReadyQueue,
};

const WORKERS: usize = 3;

fn config() -> PoolConfig {
    PoolConfig {
        pin: false,
        spin_rounds: 16,
    }
}

fn runs_every_task<Q: ReadyQueue<Task> + 'static>(q: Q) {
    let pool = Pool::with_config(q, config());
    let count = Arc::new(AtomicUsize::new(0));
    for _ in 0..5_000 {
        let c = count.clone();
        assert!(pool.execute(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        }));
    }
    pool.shutdown();
    assert_eq!(count.load(Ordering::Relaxed), 5_000);
    assert_eq!(pool.pending(), 0);
}

fn tree(ctx: &Ctx<'_>, depth: u32, count: Arc<AtomicUsize>) {
    count.fetch_add(1, Ordering::Relaxed);
    if depth > 0 {
        for _ in 0..2 {
            let c = count.clone();
            ctx.execute(move |ctx| tree(ctx, depth - 1, c));
        }
    }
}

fn tasks_spawn_tasks<Q: ReadyQueue<Task> + 'static>(q: Q) {
    let pool = Pool::with_config(q, config());
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    assert!(pool.execute(move |ctx| tree(ctx, 11, c)));
    pool.shutdown(); // runs the whole tree, spawned from inside while shutting down
    assert_eq!(count.load(Ordering::Relaxed), (1 << 12) - 1);
}

fn panics_reach_the_spawner<Q: ReadyQueue<Task> + 'static>(q: Q) {
    let pool = Pool::with_config(q, config());
    let h = pool.spawn(|_| -> u32 { panic!("boom in a task") }).unwrap();
    let err = h.join().unwrap_err();
    assert!(err.message.contains("boom in a task"), "{err}");
    for _ in 0..20 {
        assert!(pool.execute(|_| panic!("detached boom")));
    }
    let handles: Vec<_> = (0..200u32)
        .map(|i| pool.spawn(move |_| i * 2).unwrap())
        .collect();
    let sum: u32 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(sum, (0..200).map(|i| i * 2).sum::<u32>());
    assert_eq!(
        pool.live_workers(),
        WORKERS,
        "no worker was lost to a panic"
    );
    pool.shutdown();
    assert_eq!(pool.panics(), 21);
    assert_eq!(pool.live_workers(), 0);
}

fn shutdown_runs_queued_and_refuses_new<Q: ReadyQueue<Task> + 'static>(q: Q) {
    let pool = Arc::new(Pool::with_config(q, config()));
    let count = Arc::new(AtomicUsize::new(0));
    for _ in 0..300 {
        let c = count.clone();
        assert!(pool.execute(move |_| {
            std::thread::sleep(Duration::from_micros(50));
            c.fetch_add(1, Ordering::Relaxed);
        }));
    }
    pool.shutdown();
    assert_eq!(count.load(Ordering::Relaxed), 300, "every queued task ran");
    assert!(matches!(pool.spawn(|_| ()), Err(SpawnError::ShutDown(_))));
    assert!(!pool.execute(|_| ()));
}

fn no_lost_wakeups<Q: ReadyQueue<Task> + 'static>(q: Q) {
    // Workers park between spawns; each spawn must wake one that can run it.
    let pool = Pool::with_config(
        q,
        PoolConfig {
            pin: false,
            spin_rounds: 0,
        },
    );
    for i in 0..400u32 {
        let h = pool.spawn(move |_| i).unwrap();
        match h.join_timeout(Duration::from_secs(20)) {
            Ok(r) => assert_eq!(r.unwrap(), i),
            Err(_) => panic!("task {i} never ran: a lost wake-up"),
        }
        if i % 100 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

macro_rules! pool_suite {
    ($($module:ident => $make:expr),* $(,)?) => {$(
        mod $module {
            use super::*;

            fn make() -> impl ReadyQueue<Task> + 'static {
                let f: fn(usize) -> _ = $make;
                f(WORKERS)
            }

            #[test]
            fn runs_every_task() {
                super::runs_every_task(make());
            }

            #[test]
            fn tasks_spawn_tasks() {
                super::tasks_spawn_tasks(make());
            }

            #[test]
            fn panics_reach_the_spawner() {
                super::panics_reach_the_spawner(make());
            }

            #[test]
            fn shutdown_runs_queued_and_refuses_new() {
                super::shutdown_runs_queued_and_refuses_new(make());
            }

            #[test]
            fn no_lost_wakeups() {
                super::no_lost_wakeups(make());
            }
        }
    )*};
}

pool_suite! {
    global => |n| Global::<Task>::new(n),
    distributed_fcfs => |n| DistributedFcfs::<Task>::new(n),
    multi_access => |n| MultiAccess::<Task>::new(n),
    ddq => |n| Ddq::<Task>::with_config(n, DdqConfig { per_leaf: 1, capacity: 16, trees: 1 }),
    mach => |n| MachRunQueue::<Task>::new(n),
    per_core => |n| PerCore::<Task>::new(n),
}

#[test]
fn affinity_masks_hold_in_the_pool() {
    let pool = Pool::with_config(PerCore::<Task>::new(WORKERS), config());
    let handles: Vec<_> = (0..300)
        .map(|i| {
            let w = i % WORKERS;
            pool.spawn_with(Post::default().affinity(Affinity::only(w)), move |ctx| {
                (w, ctx.worker())
            })
            .unwrap()
        })
        .collect();
    for h in handles {
        let (want, ran) = h.join().unwrap();
        assert_eq!(want, ran);
    }
    let g = Pool::with_config(Global::<Task>::new(WORKERS), config());
    assert!(matches!(
        g.spawn_with(Post::default().affinity(Affinity::only(1)), |_| ()),
        Err(SpawnError::Unsupported(..))
    ));
}

#[cfg(target_os = "linux")]
#[test]
fn idle_workers_burn_no_cpu() {
    let pool = Pool::with_config(
        Global::<Task>::new(WORKERS),
        PoolConfig {
            pin: false,
            spin_rounds: 64,
        },
    );
    for _ in 0..10_000 {
        pool.execute(|_| {
            std::hint::black_box(0);
        });
    }
    while pool.pending() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(50));
    let before = pool.worker_cpu_time().expect("worker CPU time on Linux");
    std::thread::sleep(Duration::from_millis(500));
    let after = pool.worker_cpu_time().unwrap();
    // Spinning workers would burn 3 x 500 ms; parked ones burn nothing (ticks are 10 ms).
    assert!(
        after - before <= Duration::from_millis(30),
        "{:?} burned while idle",
        after - before
    );
}
