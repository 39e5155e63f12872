//! The loom shim (as in tokio): under `--cfg loom` the structures use loom's atomics and mutexes
//! so that `tests/loom.rs` can explore their interleavings; otherwise std's.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use parking_lot::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

/// Locks a mutex. Under loom (std-like mutexes) poisoning is ignored: no structure leaves its
/// state half-updated across a panic (items are moved in and out whole).
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(loom)]
    return m.lock().unwrap_or_else(|e| e.into_inner());
    #[cfg(not(loom))]
    m.lock()
}

/// Tries to lock a mutex without waiting (oneTBB's task_stream: a busy lane is skipped, not
/// waited for); poisoning is ignored as in [`lock`].
#[inline]
pub(crate) fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    #[cfg(loom)]
    {
        use std::sync::TryLockError; // loom's try_lock returns std's result type
        match m.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
    #[cfg(not(loom))]
    m.try_lock()
}

/// One turn of a spin-wait loop: a CPU hint, or a yield to loom's scheduler under loom.
#[inline]
pub(crate) fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
