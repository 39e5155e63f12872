//! A hash of bytes that is the same on every build and machine (FNV-1a), for the names the lab
//! gives what it writes: content-addressed run folders ([`crate::store::output`]) and the file
//! names of values set from the command line ([`crate::input::setting`]).

/// The FNV-1a offset basis: where a hash starts.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, continuing from `h` (start from [`FNV_START`]).
pub fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
