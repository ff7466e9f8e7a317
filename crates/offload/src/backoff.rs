//! Equal-jitter exponential backoff (upstream `ExponentialBackoff`): the step doubles up to
//! a cap, `d = min(2d, max)`, and each sleep is uniform in `[d/2, d]`, so with a 1 s base
//! the first sleep is 1–2 s and sleeps never drop below half the step.

use std::time::Duration;

/// Backoff state of one request.
#[derive(Clone, Debug)]
pub struct Backoff {
    step: Duration,
    max: Duration,
    rng: fastrand::Rng,
}

impl Backoff {
    /// A backoff starting at `base` and capped at `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff { step: base, max, rng: fastrand::Rng::new() }
    }

    /// As [`Backoff::new`] with a seeded jitter source (reproducible sleeps).
    pub fn with_seed(base: Duration, max: Duration, seed: u64) -> Self {
        Backoff { step: base, max, rng: fastrand::Rng::with_seed(seed) }
    }

    /// The next sleep: doubles the step (up to the cap), then picks uniformly in
    /// `[step/2, step]`.
    pub fn next_delay(&mut self) -> Duration {
        self.step = self.step.saturating_mul(2).min(self.max);
        let hi = u64::try_from(self.step.as_nanos()).unwrap_or(u64::MAX);
        let lo = hi / 2;
        Duration::from_nanos(self.rng.u64(lo..=hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_schedule() {
        let s = Duration::from_secs;
        for seed in 0..50 {
            let mut b = Backoff::with_seed(s(1), s(30), seed);
            let bounds = [(1, 2), (2, 4), (4, 8), (8, 16), (15, 30), (15, 30), (15, 30)];
            for (lo, hi) in bounds {
                let d = b.next_delay();
                assert!(d >= s(lo) && d <= s(hi), "seed {seed}: {d:?} not in [{lo}, {hi}] s");
            }
        }
    }

    #[test]
    fn jitter_covers_the_interval() {
        let mut lo_half = 0;
        for seed in 0..200 {
            let d = Backoff::with_seed(Duration::from_secs(1), Duration::from_secs(30), seed)
                .next_delay();
            if d < Duration::from_millis(1500) {
                lo_half += 1;
            }
        }
        assert!((60..=140).contains(&lo_half), "{lo_half}");
    }

    #[test]
    fn cap_below_double_base() {
        let mut b = Backoff::with_seed(Duration::from_millis(10), Duration::from_millis(15), 1);
        for _ in 0..5 {
            let d = b.next_delay();
            assert!(d >= Duration::from_micros(7_500) && d <= Duration::from_millis(15));
        }
    }
}
