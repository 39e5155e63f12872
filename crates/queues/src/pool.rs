//! A worker pool whose queue structure is a type parameter: `Pool<Global<Task>>`,
//! `Pool<Ddq<Task>>`, ... run the same closures over the papers' different ready queues.
//!
//! Workers are threads pinned to cores where the OS allows. A worker takes tasks from the queue
//! with its index; when it finds none it spins a little, then *parks* (no CPU burned while idle)
//! until a post wakes it. Tasks may spawn tasks (from a worker they post as
//! [`Client::worker`], so per-worker structures keep them local). A panicking task does not take
//! its worker down: the panic is caught and handed to the spawner through the task's
//! [`JoinHandle`] (or counted, for [`Pool::execute`]). [`Pool::shutdown`] refuses new tasks from
//! outside, runs every task already queued or spawned by running tasks, then stops the workers:
//! nothing is lost.
//!
//! # The sleep protocol (no lost wake-ups)
//!
//! A worker about to park sets its `sleeping` flag and the `idle` count, issues a SeqCst fence
//! and asks the queue [`ReadyQueue::has_work_for`] itself; only if not does it park. A poster
//! publishes its item, issues a SeqCst fence and reads `idle`: if some worker sleeps it wakes the
//! one the post names ([`Wake`]) by clearing its flag and unparking it. By the fences, either the
//! poster sees the sleeper or the sleeper sees the item. A bounded queue that is full makes a
//! worker run the task inline (George's rule: a task that cannot be migrated runs locally) and
//! an outside spawner back off and retry.

use std::any::Any;
use std::cell::RefCell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::{self, JoinHandle as ThreadHandle, Thread};
use std::time::Duration;

use crossbeam_utils::{Backoff, CachePadded};

use crate::{Client, Post, PostError, ReadyQueue, Take, Wake};

/// A unit of work: a closure run once on some worker, given that worker's [`Ctx`].
pub struct Task(Box<dyn FnOnce(&Ctx<'_>) + Send>);

impl Task {
    /// Wraps a closure as a task.
    pub fn new(f: impl FnOnce(&Ctx<'_>) + Send + 'static) -> Task {
        Task(Box::new(f))
    }
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Task")
    }
}

/// What a running task sees of its worker: its index, and a way to spawn more tasks.
pub struct Ctx<'a> {
    pool: &'a dyn Spawner,
    worker: usize,
    client: &'a RefCell<Client>,
}

impl Ctx<'_> {
    /// The index of the worker running this task.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Spawns a task from inside the pool (accepted even while the pool shuts down).
    pub fn spawn<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Ctx<'_>) -> R + Send + 'static,
    ) -> JoinHandle<R> {
        let (task, handle) = with_handle(f);
        self.pool
            .submit_inside(self.worker, self.client, task, Post::default());
        handle
    }

    /// Spawns a detached task from inside the pool; a panic in it is only counted.
    pub fn execute(&self, f: impl FnOnce(&Ctx<'_>) + Send + 'static) {
        self.pool
            .submit_inside(self.worker, self.client, Task::new(f), Post::default());
    }
}

/// The type-erased side of a pool that tasks spawn through.
trait Spawner: Sync {
    fn submit_inside(&self, worker: usize, client: &RefCell<Client>, task: Task, how: Post);
}

/// Why a spawn from outside was refused; the closure is handed back.
#[derive(thiserror::Error)]
pub enum SpawnError<F> {
    /// The pool is shutting down and takes no more tasks from outside.
    #[error("the pool is shutting down")]
    ShutDown(F),
    /// The queue cannot honour the post's priority or affinity.
    #[error("the queue cannot honour this post: {0}")]
    Unsupported(&'static str, F),
}

impl<F> fmt::Debug for SpawnError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::ShutDown(_) => f.write_str("ShutDown(..)"),
            SpawnError::Unsupported(w, _) => write!(f, "Unsupported({w})"),
        }
    }
}

/// A task's panic, handed to whoever joins it.
#[derive(thiserror::Error, Debug)]
#[error("task panicked: {message}")]
pub struct TaskPanicked {
    /// The panic message, when it was a string.
    pub message: String,
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a non-string panic payload)".to_string()
    }
}

struct Packet<R> {
    result: Mutex<Option<Result<R, TaskPanicked>>>,
    ready: Condvar,
}

/// The spawner's end of a task: its result, or its panic.
pub struct JoinHandle<R> {
    packet: Arc<Packet<R>>,
}

impl<R> JoinHandle<R> {
    /// Waits for the task and returns its result, or the panic that ended it. Do not join from
    /// inside a task unless another worker is sure to run the joined one.
    pub fn join(self) -> Result<R, TaskPanicked> {
        let mut g = self.packet.result.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = g.take() {
                return r;
            }
            g = self.packet.ready.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Like [`JoinHandle::join`], but gives up after `timeout` (handing the handle back).
    pub fn join_timeout(self, timeout: Duration) -> Result<Result<R, TaskPanicked>, Self> {
        let deadline = std::time::Instant::now() + timeout;
        {
            let mut g = self.packet.result.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(r) = g.take() {
                    return Ok(r);
                }
                let now = std::time::Instant::now();
                if now >= deadline {
                    break;
                }
                g = self
                    .packet
                    .ready
                    .wait_timeout(g, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        Err(self)
    }

    /// Whether the task has finished (or panicked).
    pub fn is_finished(&self) -> bool {
        self.packet
            .result
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

fn with_handle<R: Send + 'static>(
    f: impl FnOnce(&Ctx<'_>) -> R + Send + 'static,
) -> (Task, JoinHandle<R>) {
    let packet = Arc::new(Packet {
        result: Mutex::new(None),
        ready: Condvar::new(),
    });
    let p = packet.clone();
    let task = Task::new(move |ctx| {
        let (r, payload) = match catch_unwind(AssertUnwindSafe(|| f(ctx))) {
            Ok(r) => (Ok(r), None),
            Err(e) => {
                let message = panic_message(&*e);
                (Err(TaskPanicked { message }), Some(e))
            }
        };
        *p.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        p.ready.notify_all();
        if let Some(e) = payload {
            // On to the worker, which counts it (the hook has already reported it once).
            std::panic::resume_unwind(e);
        }
    });
    (task, JoinHandle { packet })
}

/// How a pool runs: pinning, and how long an idle worker spins before it parks.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Pin worker i to core i (mod the cores) where the OS allows.
    pub pin: bool,
    /// Empty takes an idle worker makes (with exponential backoff) before it parks.
    pub spin_rounds: u32,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            pin: true,
            spin_rounds: 64,
        }
    }
}

struct Sleeper {
    sleeping: AtomicBool,
    thread: OnceLock<Thread>,
    /// The worker thread's Linux thread id, for CPU-time accounting.
    tid: OnceLock<u32>,
}

struct Shared<Q> {
    queue: Q,
    sleepers: Box<[CachePadded<Sleeper>]>,
    idle: CachePadded<AtomicUsize>,
    pending: CachePadded<AtomicUsize>,
    next_wake: CachePadded<AtomicUsize>,
    closing: AtomicBool,
    stop: AtomicBool,
    done: (Mutex<()>, Condvar),
    panics: AtomicUsize,
    live: AtomicUsize,
    spin_rounds: u32,
}

/// A worker pool over ready-queue structure `Q`.
pub struct Pool<Q: ReadyQueue<Task> + 'static> {
    shared: Arc<Shared<Q>>,
    threads: Mutex<Vec<ThreadHandle<()>>>,
}

thread_local! {
    static OUTSIDE_CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
}
static NEXT_CLIENT: AtomicUsize = AtomicUsize::new(0);

impl<Q: ReadyQueue<Task> + 'static> Pool<Q> {
    /// Starts one worker thread per index of `queue`, with the default configuration.
    pub fn new(queue: Q) -> Pool<Q> {
        Self::with_config(queue, PoolConfig::default())
    }

    /// Starts one worker thread per index of `queue`.
    pub fn with_config(queue: Q, config: PoolConfig) -> Pool<Q> {
        let n = queue.workers();
        let shared = Arc::new(Shared {
            queue,
            sleepers: (0..n)
                .map(|_| {
                    CachePadded::new(Sleeper {
                        sleeping: AtomicBool::new(false),
                        thread: OnceLock::new(),
                        tid: OnceLock::new(),
                    })
                })
                .collect(),
            idle: CachePadded::new(AtomicUsize::new(0)),
            pending: CachePadded::new(AtomicUsize::new(0)),
            next_wake: CachePadded::new(AtomicUsize::new(0)),
            closing: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            done: (Mutex::new(()), Condvar::new()),
            panics: AtomicUsize::new(0),
            live: AtomicUsize::new(n),
            spin_rounds: config.spin_rounds,
        });
        let cores = if config.pin {
            core_affinity::get_core_ids().unwrap_or_default()
        } else {
            Vec::new()
        };
        let threads = (0..n)
            .map(|i| {
                let s = shared.clone();
                let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
                thread::Builder::new()
                    .name(format!("smpsched-worker-{i}"))
                    .spawn(move || {
                        if let Some(c) = core {
                            core_affinity::set_for_current(c);
                        }
                        s.work(i)
                    })
                    .expect("spawning a worker thread")
            })
            .collect();
        Pool {
            shared,
            threads: Mutex::new(threads),
        }
    }

    /// The queue structure the pool runs on.
    pub fn queue(&self) -> &Q {
        &self.shared.queue
    }

    /// Spawns a task from outside the pool; its handle gives its result or its panic.
    pub fn spawn<R, F>(&self, f: F) -> Result<JoinHandle<R>, SpawnError<F>>
    where
        R: Send + 'static,
        F: FnOnce(&Ctx<'_>) -> R + Send + 'static,
    {
        self.spawn_with(Post::default(), f)
    }

    /// Spawns a task from outside the pool with a priority and affinity mask.
    pub fn spawn_with<R, F>(&self, how: Post, f: F) -> Result<JoinHandle<R>, SpawnError<F>>
    where
        R: Send + 'static,
        F: FnOnce(&Ctx<'_>) -> R + Send + 'static,
    {
        if self.shared.closing.load(Ordering::SeqCst) {
            return Err(SpawnError::ShutDown(f));
        }
        // Refuse a post the queue cannot honour before wrapping the closure.
        let q = &self.shared.queue;
        let n = q.workers();
        if how.affinity.within(n) == 0 {
            return Err(SpawnError::Unsupported(
                "an affinity mask with none of its workers",
                f,
            ));
        }
        if !how.affinity.is_any(n) && !q.honours_affinity() {
            return Err(SpawnError::Unsupported("a narrow affinity mask", f));
        }
        let (task, handle) = with_handle(f);
        if let Err(what) = self.shared.submit_outside(task, how) {
            // Not expected after the checks above; the handle reports it rather than hang.
            *handle
                .packet
                .result
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(Err(TaskPanicked {
                message: format!("the queue refused the task: {what}"),
            }));
        }
        Ok(handle)
    }

    /// Spawns a detached task from outside the pool; a panic in it is only counted
    /// ([`Pool::panics`]). Returns false if the pool is shutting down or refuses the post.
    pub fn execute(&self, f: impl FnOnce(&Ctx<'_>) + Send + 'static) -> bool {
        if self.shared.closing.load(Ordering::SeqCst) {
            return false;
        }
        self.shared
            .submit_outside(Task::new(f), Post::default())
            .is_ok()
    }

    /// Tasks whose panic was caught (joined or not).
    pub fn panics(&self) -> usize {
        self.shared.panics.load(Ordering::Relaxed)
    }

    /// Worker threads still running (all of them until shutdown: panics do not kill workers).
    pub fn live_workers(&self) -> usize {
        self.shared.live.load(Ordering::SeqCst)
    }

    /// Tasks spawned and not yet finished.
    pub fn pending(&self) -> usize {
        self.shared.pending.load(Ordering::SeqCst)
    }

    /// User plus system CPU time the worker threads have used so far (Linux: from
    /// `/proc/self/task/TID/stat`, in clock ticks of usually 10 ms); `None` elsewhere.
    pub fn worker_cpu_time(&self) -> Option<Duration> {
        let mut ticks = 0u64;
        for s in self.shared.sleepers.iter() {
            let tid = s.tid.get()?;
            let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
            let after = stat.rsplit_once(')')?.1;
            let f: Vec<&str> = after.split_whitespace().collect();
            // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the comm.
            ticks += f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        }
        Some(Duration::from_millis(ticks * 10))
    }

    /// Refuses new tasks from outside, runs every task queued or spawned by running tasks, then
    /// stops and joins the workers. Idempotent; also done on drop.
    pub fn shutdown(&self) {
        let s = &self.shared;
        s.closing.store(true, Ordering::SeqCst);
        {
            let mut g = s.done.0.lock().unwrap_or_else(|e| e.into_inner());
            while s.pending.load(Ordering::SeqCst) != 0 {
                g = s
                    .done
                    .1
                    .wait_timeout(g, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        s.stop.store(true, Ordering::SeqCst);
        for sl in s.sleepers.iter() {
            sl.sleeping.store(false, Ordering::SeqCst);
            if let Some(t) = sl.thread.get() {
                t.unpark();
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

impl<Q: ReadyQueue<Task> + 'static> Drop for Pool<Q> {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl<Q: ReadyQueue<Task>> Spawner for Shared<Q> {
    fn submit_inside(&self, worker: usize, client: &RefCell<Client>, task: Task, how: Post) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        let posted = self.queue.post(&mut client.borrow_mut(), task, how);
        match posted {
            Ok(wake) => self.notify(wake),
            // Full: run it here and now (George: a task that cannot migrate runs locally).
            Err(e) => self.run(worker, client, e.into_item()),
        }
    }
}

impl<Q: ReadyQueue<Task>> Shared<Q> {
    fn submit_outside(&self, task: Task, how: Post) -> Result<(), &'static str> {
        self.pending.fetch_add(1, Ordering::SeqCst);
        OUTSIDE_CLIENT.with(|c| {
            let mut c = c.borrow_mut();
            let client =
                c.get_or_insert_with(|| Client::new(NEXT_CLIENT.fetch_add(1, Ordering::Relaxed)));
            let mut task = task;
            let backoff = Backoff::new();
            loop {
                match self.queue.post(client, task, how) {
                    Ok(wake) => {
                        self.notify(wake);
                        return Ok(());
                    }
                    Err(PostError::Full(t)) => {
                        task = t;
                        if backoff.is_completed() {
                            thread::yield_now();
                        } else {
                            backoff.snooze();
                        }
                    }
                    Err(PostError::Unsupported { what, .. }) => {
                        self.finish_one();
                        return Err(what);
                    }
                }
            }
        })
    }

    fn notify(&self, wake: Wake) {
        fence(Ordering::SeqCst);
        if self.idle.load(Ordering::Relaxed) == 0 {
            return;
        }
        match wake {
            Wake::None => {}
            Wake::Worker(w) => {
                self.wake(w);
            }
            Wake::Prefer(w) => {
                if !self.wake(w) {
                    self.wake_any();
                }
            }
            Wake::Any => self.wake_any(),
        }
    }

    fn wake(&self, w: usize) -> bool {
        let s = &self.sleepers[w];
        if s.sleeping.load(Ordering::Relaxed) && s.sleeping.swap(false, Ordering::AcqRel) {
            if let Some(t) = s.thread.get() {
                t.unpark();
            }
            true
        } else {
            false
        }
    }

    fn wake_any(&self) {
        let n = self.sleepers.len();
        let start = self.next_wake.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            if self.wake((start + k) % n) {
                return;
            }
        }
    }

    fn finish_one(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) == 1 && self.closing.load(Ordering::SeqCst) {
            let _g = self.done.0.lock().unwrap_or_else(|e| e.into_inner());
            self.done.1.notify_all();
        }
    }

    fn run(&self, worker: usize, client: &RefCell<Client>, task: Task) {
        let ctx = Ctx {
            pool: self,
            worker,
            client,
        };
        if catch_unwind(AssertUnwindSafe(|| (task.0)(&ctx))).is_err() {
            self.panics.fetch_add(1, Ordering::Relaxed);
        }
        self.finish_one();
    }

    fn work(&self, me: usize) {
        let sl = &self.sleepers[me];
        let _ = sl.thread.set(thread::current());
        if let Some(tid) = std::fs::read_link("/proc/thread-self")
            .ok()
            .and_then(|p| p.file_name()?.to_str()?.parse().ok())
        {
            let _ = sl.tid.set(tid);
        }
        // The worker's own client state (its random stream feeds the DDQ's direction bits).
        let client = RefCell::new(Client::worker(me));
        let backoff = Backoff::new();
        let mut spins = 0;
        loop {
            match self.queue.take(me) {
                Take::Item(task) => {
                    self.run(me, &client, task);
                    backoff.reset();
                    spins = 0;
                    continue;
                }
                Take::Retry => continue,
                Take::Empty => {}
            }
            if self.stop.load(Ordering::Acquire) {
                break;
            }
            if spins < self.spin_rounds {
                spins += 1;
                backoff.snooze();
                continue;
            }
            // Announce the sleep, then look once more (see the module doc).
            sl.sleeping.store(true, Ordering::SeqCst);
            self.idle.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.queue.has_work_for(me) || self.stop.load(Ordering::SeqCst) {
                sl.sleeping.store(false, Ordering::SeqCst);
            } else {
                while sl.sleeping.load(Ordering::Acquire) {
                    thread::park();
                }
            }
            self.idle.fetch_sub(1, Ordering::SeqCst);
            spins = 0;
            backoff.reset();
        }
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}
