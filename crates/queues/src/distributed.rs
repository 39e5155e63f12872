//! Distributed FCFS ready queues (Anderson, Lazowska and Levy 1989, as DiBella's baseline in
//! section 2.2): a FIFO and a lock per worker; a worker serves its own queue and, when it is
//! empty, searches the others in order from its own index plus one.
//!
//! Clients choose a queue with DiBella's Static FCFS or Random FCFS policy
//! ([`smpsched_policy::dibella`]); a worker posting its own work keeps it on its own queue.
//! Each queue's count is updated under its lock and read without it to skip empty queues.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;
use smpsched_policy::dibella::{client_queue, ClientPolicy, SchedulerPolicy, SearchOrder};

use crate::sync::{lock, AtomicUsize, Mutex, Ordering};
use crate::{check_workers, require_any, Client, Post, PostError, ReadyQueue, Take, Wake};

struct Lane<T> {
    queue: Mutex<VecDeque<T>>,
    count: AtomicUsize,
}

/// Per-worker FIFOs with their own locks, searched in order by idle workers.
pub struct DistributedFcfs<T> {
    lanes: Box<[CachePadded<Lane<T>>]>,
    client: ClientPolicy,
}

impl<T> DistributedFcfs<T> {
    /// Distributed FCFS queues for `workers` workers, clients posting at random (Random FCFS).
    pub fn new(workers: usize) -> DistributedFcfs<T> {
        Self::with_client_policy(workers, ClientPolicy::RandomFcfs)
    }

    /// Distributed FCFS queues with client policy `client`: `StaticFcfs` or `RandomFcfs`
    /// (any other policy is treated as `RandomFcfs`).
    pub fn with_client_policy(workers: usize, client: ClientPolicy) -> DistributedFcfs<T> {
        check_workers(workers);
        let client = match client {
            ClientPolicy::StaticFcfs => ClientPolicy::StaticFcfs,
            _ => ClientPolicy::RandomFcfs,
        };
        DistributedFcfs {
            lanes: (0..workers)
                .map(|_| {
                    CachePadded::new(Lane {
                        queue: Mutex::new(VecDeque::new()),
                        count: AtomicUsize::new(0),
                    })
                })
                .collect(),
            client,
        }
    }

    fn pop(&self, q: usize) -> Option<T> {
        let lane = &self.lanes[q];
        if lane.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut g = lock(&lane.queue);
        let item = g.pop_front();
        lane.count.store(g.len(), Ordering::Release);
        item
    }
}

impl<T: Send> ReadyQueue<T> for DistributedFcfs<T> {
    fn name(&self) -> &'static str {
        "distributed-fcfs"
    }

    fn workers(&self) -> usize {
        self.lanes.len()
    }

    fn post(&self, client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>> {
        let n = self.lanes.len();
        let item = require_any("distributed-fcfs", n, item, &how)?;
        let q = match client.home() {
            Some(w) if w < n => w,
            _ => {
                let seq = client.next_sequence();
                let draw = client.draw();
                client_queue(self.client, client.id(), seq, n, 0, draw)
            }
        };
        let lane = &self.lanes[q];
        let mut g = lock(&lane.queue);
        g.push_back(item);
        lane.count.store(g.len(), Ordering::Release);
        Ok(Wake::Prefer(q))
    }

    fn take(&self, worker: usize) -> Take<T> {
        let n = self.lanes.len();
        for (q, _) in SearchOrder::new(SchedulerPolicy::DistributedFcfs, worker, n, 0, 0, false) {
            if let Some(t) = self.pop(q) {
                return Take::Item(t);
            }
        }
        Take::Empty
    }

    fn len_hint(&self) -> usize {
        self.lanes
            .iter()
            .map(|l| l.count.load(Ordering::Acquire))
            .sum()
    }

    fn has_work_for(&self, _worker: usize) -> bool {
        self.lanes
            .iter()
            .any(|l| l.count.load(Ordering::SeqCst) > 0)
    }
}
