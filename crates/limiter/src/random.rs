//! Injectable randomness for jittered waits.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

/// A source of uniformly distributed numbers.
pub trait RandomSource: Send + Sync + fmt::Debug {
    /// A uniformly random number in `low..=high`; `low` when `high < low`.
    fn u64_in(&self, low: u64, high: u64) -> u64;

    /// A uniformly random duration in `min..=max` at nanosecond resolution; `min` when
    /// `max < min`.
    fn duration_in(&self, min: Duration, max: Duration) -> Duration {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(self.u64_in(nanos(min), nanos(max)))
    }
}

/// [`fastrand`] behind a mutex: seeded from the OS by default, or from a fixed seed for tests.
#[derive(Debug)]
pub struct FastRandom {
    rng: Mutex<fastrand::Rng>,
}

impl Default for FastRandom {
    fn default() -> Self {
        FastRandom { rng: Mutex::new(fastrand::Rng::new()) }
    }
}

impl FastRandom {
    /// A generator seeded from the OS.
    pub fn new() -> Self {
        Self::default()
    }

    /// A generator that yields the same sequence for the same seed.
    pub fn with_seed(seed: u64) -> Self {
        FastRandom { rng: Mutex::new(fastrand::Rng::with_seed(seed)) }
    }
}

impl RandomSource for FastRandom {
    fn u64_in(&self, low: u64, high: u64) -> u64 {
        if high <= low {
            return low;
        }
        match self.rng.lock() {
            Ok(mut rng) => rng.u64(low..=high),
            Err(poisoned) => poisoned.into_inner().u64(low..=high),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_uniform_within_bounds() {
        let r = FastRandom::with_seed(7);
        let (min, max) = (Duration::from_millis(100), Duration::from_secs(3));
        let n = 20_000u32;
        let mut sum = Duration::ZERO;
        let mut below_mid = 0;
        for _ in 0..n {
            let d = r.duration_in(min, max);
            assert!(min <= d && d <= max, "{d:?}");
            sum += d;
            below_mid += u32::from(d < Duration::from_millis(1550));
        }
        let mean = sum / n;
        assert!(
            mean > Duration::from_millis(1500) && mean < Duration::from_millis(1600),
            "{mean:?}"
        );
        assert!((9_500..10_500).contains(&below_mid), "{below_mid}");
    }

    #[test]
    fn seeded_sources_repeat_and_degenerate_ranges_return_low() {
        let a: Vec<u64> = (0..5).map(|_| FastRandom::with_seed(1).u64_in(0, 1 << 40)).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let r = FastRandom::new();
        assert_eq!(r.u64_in(5, 5), 5);
        assert_eq!(r.u64_in(9, 3), 9);
        assert_eq!(
            r.duration_in(Duration::from_secs(2), Duration::from_secs(1)),
            Duration::from_secs(2)
        );
    }
}
