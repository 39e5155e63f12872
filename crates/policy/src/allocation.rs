//! Processor allocation servers' decisions (Black 1990, section 6): given the requests waiting
//! first come first served and the processors free, which request is granted now. The first
//! policy is Black's gang server: greedy, first come first served (a request that does not fit
//! holds back those behind it), never more than a share of the machine or a time per request.

/// What a server decides about a request when it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// It waits its turn.
    Queue,
    /// It asks for more than the server ever grants one request.
    Refuse(&'static str),
}

/// Black's gang server's limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GangLimits {
    /// Most processors one request may have.
    pub max_processors: u32,
    /// Longest one request may hold them, in the caller's time unit.
    pub max_hold: u64,
}

impl GangLimits {
    /// The limits on a machine of `processors`: `fraction` of it (rounded down), never its
    /// last processor (the default set keeps one), and `max_hold`.
    pub fn of(processors: u32, fraction: f64, max_hold: u64) -> GangLimits {
        let share = (f64::from(processors) * fraction).floor().max(0.0) as u32;
        GangLimits {
            max_processors: share.min(processors.saturating_sub(1)),
            max_hold,
        }
    }

    /// Whether a request for `processors` for `hold` is queued or refused.
    pub fn admit(&self, processors: u32, hold: u64) -> Admission {
        if processors == 0 {
            Admission::Refuse("a request asks for at least one processor")
        } else if processors > self.max_processors {
            Admission::Refuse("more processors than the server grants one request")
        } else if hold > self.max_hold {
            Admission::Refuse("longer than the server grants one request")
        } else {
            Admission::Queue
        }
    }
}

/// Greedy first come first served: the head request is granted when it fits in `free`
/// processors; nothing behind it is (no overtaking).
pub fn grant_head(waiting: &[u32], free: usize) -> Option<usize> {
    let &head = waiting.first()?;
    ((head as usize) <= free).then_some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_limits_are_three_quarters_and_fifteen_minutes() {
        let l = GangLimits::of(16, 0.75, 900);
        assert_eq!(l.max_processors, 12);
        assert_eq!(l.admit(12, 900), Admission::Queue);
        assert!(matches!(l.admit(13, 1), Admission::Refuse(_)));
        assert!(matches!(l.admit(1, 901), Admission::Refuse(_)));
        assert!(matches!(l.admit(0, 1), Admission::Refuse(_)));
        assert_eq!(
            GangLimits::of(2, 1.0, 1).max_processors,
            1,
            "the default set keeps one"
        );
    }

    #[test]
    fn only_the_head_is_granted_and_only_when_it_fits() {
        assert_eq!(grant_head(&[4, 1], 3), None, "no overtaking");
        assert_eq!(grant_head(&[4, 1], 4), Some(0));
        assert_eq!(grant_head(&[], 16), None);
    }
}
