//! The single global FCFS ready queue: one FIFO behind one lock, the baseline of every paper
//! (DiBella's "Global", George's centralized queue, Mach's global run queue without levels).
//!
//! An atomic count beside the lock lets a worker test emptiness without taking the lock (Mach's
//! count, Black 3.1); it is updated under the lock, so it is exact whenever the lock is free.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;

use crate::sync::{lock, AtomicUsize, Mutex, Ordering};
use crate::{check_workers, require_any, Client, Post, PostError, ReadyQueue, Take, Wake};

/// One FIFO, one lock, shared by every client and worker.
pub struct Global<T> {
    /// The lock and the count share a cache line: a post or take that takes the lock then
    /// writes the count touches one line, not two.
    inner: CachePadded<Inner<T>>,
    workers: usize,
}

struct Inner<T> {
    queue: Mutex<VecDeque<T>>,
    count: AtomicUsize,
}

impl<T> Global<T> {
    /// A global queue served by `workers` workers.
    pub fn new(workers: usize) -> Global<T> {
        check_workers(workers);
        Global {
            inner: CachePadded::new(Inner {
                queue: Mutex::new(VecDeque::new()),
                count: AtomicUsize::new(0),
            }),
            workers,
        }
    }
}

impl<T: Send> ReadyQueue<T> for Global<T> {
    fn name(&self) -> &'static str {
        "global"
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn post(&self, _client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>> {
        let item = require_any("global", self.workers, item, &how)?;
        let mut q = lock(&self.inner.queue);
        q.push_back(item);
        self.inner.count.store(q.len(), Ordering::Release);
        Ok(Wake::Any)
    }

    fn take(&self, _worker: usize) -> Take<T> {
        if self.inner.count.load(Ordering::Acquire) == 0 {
            return Take::Empty;
        }
        let mut q = lock(&self.inner.queue);
        let item = q.pop_front();
        self.inner.count.store(q.len(), Ordering::Release);
        match item {
            Some(t) => Take::Item(t),
            None => Take::Empty,
        }
    }

    fn len_hint(&self) -> usize {
        self.inner.count.load(Ordering::Acquire)
    }

    fn has_work_for(&self, _worker: usize) -> bool {
        self.inner.count.load(Ordering::SeqCst) > 0
    }
}
