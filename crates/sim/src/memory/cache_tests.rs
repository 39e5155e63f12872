//! Tests of the cache (cache.rs): both storage forms against LRU, and the list form's hash
//! chains kept short under the access patterns simulations make.

use super::*;

fn cache(lines: u64, assoc: u32) -> Cache {
    let cfg = MemoryConfig {
        cache_bytes: lines * 16,
        associativity: assoc,
        ..MemoryConfig::tango()
    };
    cfg.validate(1).unwrap();
    Cache::new(&cfg)
}

fn lines(c: &Cache) -> Vec<u64> {
    let mut v = Vec::new();
    c.for_each_line(|l| v.push(l));
    v.sort_unstable();
    v
}

#[test]
fn fully_associative_lru_order() {
    let mut c = cache(4, 0);
    for line in 0..4 {
        assert_eq!(c.insert(line, LineState::Shared), None);
    }
    assert_eq!(c.resident(), 4);
    assert!(c.touch(0).is_some()); // order LRU..MRU: 1 2 3 0
    assert_eq!(c.insert(10, LineState::Shared), Some(1));
    assert_eq!(c.insert(11, LineState::Shared), Some(2));
    assert!(c.remove(3));
    assert!(!c.remove(3));
    assert_eq!(c.insert(12, LineState::Modified), None); // reuses the freed slot
    assert_eq!(lines(&c), vec![0, 10, 11, 12]);
    let slot = c.find(12).unwrap();
    assert_eq!(c.state(slot), LineState::Modified);
    assert_eq!(c.insert(13, LineState::Shared), Some(0));
    c.clear();
    assert_eq!(c.resident(), 0);
    assert_eq!(c.touch(10), None);
}

#[test]
fn scan_form_lru_and_sets() {
    // 8 lines, 2-way: 4 sets; lines 0, 4, 8 share set 0.
    let mut c = cache(8, 2);
    assert_eq!(c.insert(0, LineState::Shared), None);
    assert_eq!(c.insert(4, LineState::Shared), None);
    assert_eq!(c.insert(1, LineState::Shared), None);
    assert!(c.touch(0).is_some());
    assert_eq!(c.insert(8, LineState::Shared), Some(4));
    assert_eq!(c.insert(12, LineState::Shared), Some(0));
    assert_eq!(lines(&c), vec![1, 8, 12]);
    assert!(c.remove(8));
    assert_eq!(c.insert(16, LineState::Shared), None);
    assert_eq!(c.resident(), 3);
}

#[test]
fn list_form_with_several_sets() {
    // 64 lines, 16-way: 4 sets, linked-list form.
    let mut c = cache(64, 16);
    for k in 0..16 {
        assert_eq!(c.insert(k * 4, LineState::Shared), None);
    }
    assert_eq!(c.insert(1, LineState::Shared), None);
    assert!(c.touch(0).is_some());
    assert_eq!(c.insert(64, LineState::Shared), Some(4));
    assert_eq!(c.resident(), 17);
}

proptest::proptest! {
    /// The linked-list form (hash chains from 16 buckets up, evictions, invalidations)
    /// against a fully associative LRU model: the same residents, hits and victims.
    #[test]
    fn list_form_agrees_with_an_lru_model(
        ops in proptest::collection::vec((0u8..3, 0u64..200), 1..600)
    ) {
        let mut c = cache(64, 0);
        let mut model: std::collections::VecDeque<u64> = Default::default(); // MRU first
        for (op, line) in ops {
            let at = model.iter().position(|&l| l == line);
            match op {
                0 => {
                    proptest::prop_assert_eq!(c.touch(line).is_some(), at.is_some());
                    if let Some(i) = at {
                        model.remove(i);
                        model.push_front(line);
                    }
                }
                1 if at.is_none() => {
                    let victim = (model.len() == 64).then(|| model.pop_back()).flatten();
                    model.push_front(line);
                    proptest::prop_assert_eq!(c.insert(line, LineState::Shared), victim);
                }
                _ => {
                    proptest::prop_assert_eq!(c.remove(line), at.is_some());
                    if let Some(i) = at {
                        model.remove(i);
                    }
                }
            }
            proptest::prop_assert_eq!(c.resident(), model.len() as u64);
        }
        let mut want: Vec<u64> = model.into_iter().collect();
        want.sort_unstable();
        proptest::prop_assert_eq!(lines(&c), want);
    }
}

#[test]
fn direct_mapped_and_non_power_of_two_sets() {
    let mut c = cache(6, 1);
    assert_eq!(c.insert(1, LineState::Shared), None);
    assert_eq!(c.insert(7, LineState::Shared), Some(1));
    assert_eq!(c.insert(2, LineState::Shared), None);
}

/// The list form's chains stay short (a lookup stays O(1)) for the patterns simulations make:
/// sequential sweeps, power-of-two strides (matrix columns, per-processor blocks) and strides
/// one line off a power of two, which defeat a hash that keeps low bits or adds the high ones.
#[test]
fn hash_chains_stay_short_under_strided_sweeps() {
    for stride in [
        1u64, 2, 3, 16, 17, 64, 128, 4096, 8191, 8192, 8193, 65536, 65537,
    ] {
        let mut c = cache(4096, 0);
        for k in 0..3 * 4096u64 {
            c.insert(1_000 + k * stride, LineState::Shared);
        }
        let Store::List(list) = &c.store else {
            panic!("a fully associative cache takes the list form")
        };
        let longest = list.longest_chain();
        assert!(longest <= 8, "stride {stride}: a chain of {longest} slots");
    }
}
