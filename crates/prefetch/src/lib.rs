//! smpsched-prefetch: a hint to the host processor to bring a cache line into its caches,
//! for the simulator's hot path (with hundreds of thousands of simulated threads,
//! the records of the thread dispatched next come from host memory unless fetched ahead).
//!
//! The engine's one `unsafe` block lives here, alone, so that Miri checks it in seconds
//! (`cargo +nightly miri test -p smpsched-prefetch`, run by `.ci/run`) and the simulator's
//! crates can forbid `unsafe` code (the workspace's only other `unsafe` is smpsched-ring's). A prefetch neither reads nor writes anything a program can see:
//! it cannot fault, whatever the address, and nothing computed depends on it.

#![deny(unsafe_op_in_unsafe_fn)]

/// Asks the host to bring the cache line holding `r` into its first-level cache, without
/// waiting for it. Any pointer is allowed (null, dangling, unmapped): it is not dereferenced.
/// Does nothing on targets other than x86-64, whose prefetch instruction Rust exposes stably.
#[inline(always)]
pub fn prefetch<T: ?Sized>(r: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` (SSE, present in every x86-64 processor) is a hint: it never
    // faults, whatever the address, and has no effect the program can observe; the language
    // sees no read through `r`.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(r.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod tests {
    use super::prefetch;

    /// Live, far out of bounds, null, zero-sized, freed and unsized pointers: none faults,
    /// and the data prefetched is unchanged. Under Miri this also finds any undefined
    /// behaviour the `unsafe` block might have.
    #[test]
    fn prefetch_of_any_pointer_is_harmless() {
        let v = vec![7u64; 16];
        prefetch(v.as_ptr());
        prefetch(v.as_ptr().wrapping_add(1 << 40));
        prefetch(std::ptr::null::<u8>());
        let zst: Box<()> = Box::new(());
        prefetch(&*zst);
        let freed = Box::new(3u32);
        let gone: *const u32 = &*freed;
        drop(freed);
        prefetch(gone);
        let unsized_: &[u64] = &v[2..];
        prefetch(unsized_);
        let dynamic: &dyn std::fmt::Debug = &v;
        prefetch(dynamic);
        assert_eq!(v.iter().sum::<u64>(), 112, "a prefetch changes nothing");
    }
}
