//! The sliding window of response sizes per keyspace, behind the cop-limiter's "is this keyspace
//! heavy" test.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::keyspace::KeyspaceId;

#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Instant,
    keyspace: KeyspaceId,
    bytes: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct KeyspaceTotal {
    bytes: u128,
    samples: usize,
}

/// Response bytes per keyspace over the last `ttl`.
///
/// Insertion is O(1) amortised (push, then evict from the front); [`ThroughputWindow::is_high`]
/// is O(1) apart from evicting expired samples.
#[derive(Debug)]
pub(crate) struct ThroughputWindow {
    ttl: Duration,
    /// Oldest first; times never decrease (a late sample takes the newest time seen).
    samples: VecDeque<Sample>,
    /// Only keyspaces with at least one sample in the window.
    per_keyspace: HashMap<KeyspaceId, KeyspaceTotal>,
    total: u128,
}

impl ThroughputWindow {
    pub(crate) fn new(ttl: Duration) -> Self {
        ThroughputWindow { ttl, samples: VecDeque::new(), per_keyspace: HashMap::new(), total: 0 }
    }

    /// Counts samples for `ttl` from now on; a shorter ttl drops the samples that have become
    /// too old at the next [`ThroughputWindow::add`] or [`ThroughputWindow::evict`].
    pub(crate) fn set_ttl(&mut self, ttl: Duration) {
        self.ttl = ttl;
    }

    /// Adds a sample taken at `at`, then drops samples older than `ttl` relative to the newest.
    pub(crate) fn add(&mut self, keyspace: KeyspaceId, bytes: u64, at: Instant) {
        let at = self.samples.back().map_or(at, |newest| newest.at.max(at));
        self.samples.push_back(Sample { at, keyspace, bytes });
        let entry = self.per_keyspace.entry(keyspace).or_default();
        entry.bytes += u128::from(bytes);
        entry.samples += 1;
        self.total += u128::from(bytes);
        self.evict(at);
    }

    /// Drops samples more than `ttl` older than `now`.
    pub(crate) fn evict(&mut self, now: Instant) {
        while let Some(&oldest) = self.samples.front() {
            if now.saturating_duration_since(oldest.at) <= self.ttl {
                break;
            }
            self.samples.pop_front();
            self.total -= u128::from(oldest.bytes);
            if let Some(entry) = self.per_keyspace.get_mut(&oldest.keyspace) {
                entry.bytes -= u128::from(oldest.bytes);
                entry.samples -= 1;
                if entry.samples == 0 {
                    self.per_keyspace.remove(&oldest.keyspace);
                }
            }
        }
    }

    /// True when `keyspace` has samples and its bytes are at or above the average over the
    /// keyspaces in the window (`bytes × keyspaces ≥ total`, exact). An empty window or a
    /// keyspace without samples is not high; a lone keyspace always is.
    pub(crate) fn is_high(&self, keyspace: KeyspaceId) -> bool {
        let Some(entry) = self.per_keyspace.get(&keyspace) else {
            return false;
        };
        let keyspaces = self.per_keyspace.len() as u128;
        entry.bytes.saturating_mul(keyspaces) >= self.total
    }

    /// Keyspaces with samples in the window.
    #[cfg(test)]
    pub(crate) fn keyspaces(&self) -> usize {
        self.per_keyspace.len()
    }

    /// Samples in the window.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.samples.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn average_rule() {
        let t0 = Instant::now();
        let mut w = ThroughputWindow::new(TTL);
        assert!(!w.is_high(KeyspaceId(1)), "no samples: not high");
        w.add(KeyspaceId(1), 100, t0);
        assert!(w.is_high(KeyspaceId(1)), "a lone keyspace is always high");
        w.add(KeyspaceId(2), 300, t0);
        // Average 200: ks2 high, ks1 low, ks3 (no samples) low.
        assert!(w.is_high(KeyspaceId(2)));
        assert!(!w.is_high(KeyspaceId(1)));
        assert!(!w.is_high(KeyspaceId(3)));
        w.add(KeyspaceId(1), 200, t0);
        // 300 vs 300: both exactly at the average.
        assert!(w.is_high(KeyspaceId(1)) && w.is_high(KeyspaceId(2)));
        assert_eq!((w.keyspaces(), w.len(), w.total), (2, 3, 600));
    }

    #[test]
    fn eviction_is_relative_to_the_newest_sample() {
        let t0 = Instant::now();
        let mut w = ThroughputWindow::new(TTL);
        w.add(KeyspaceId(1), 1000, t0);
        w.add(KeyspaceId(2), 10, t0 + Duration::from_secs(30));
        assert!(w.is_high(KeyspaceId(1)) && !w.is_high(KeyspaceId(2)));
        // Exactly ttl old: kept.
        w.add(KeyspaceId(2), 10, t0 + TTL);
        assert_eq!(w.len(), 3);
        // Older than ttl: ks1's sample goes, ks2 is alone and therefore high.
        w.add(KeyspaceId(2), 10, t0 + TTL + Duration::from_millis(1));
        assert_eq!((w.len(), w.keyspaces()), (3, 1));
        assert!(w.is_high(KeyspaceId(2)) && !w.is_high(KeyspaceId(1)));
        // A late sample (earlier time) is stamped with the newest time, keeping the order.
        w.add(KeyspaceId(3), 5, t0);
        assert_eq!(w.samples.back().map(|s| s.at), Some(t0 + TTL + Duration::from_millis(1)));
        w.evict(t0 + 3 * TTL);
        assert_eq!((w.len(), w.keyspaces(), w.total), (0, 0, 0));
    }

    #[test]
    fn zero_byte_samples_keep_their_keyspace_in_the_window() {
        let t0 = Instant::now();
        let mut w = ThroughputWindow::new(TTL);
        w.add(KeyspaceId(1), 0, t0);
        w.add(KeyspaceId(2), 0, t0);
        assert_eq!(w.keyspaces(), 2);
        assert!(w.is_high(KeyspaceId(1)) && w.is_high(KeyspaceId(2)));
    }

    proptest! {
        /// The window agrees with a naive model that keeps every sample and filters by age.
        #[test]
        fn matches_naive_model(
            ops in prop::collection::vec((0u32..5, 0u64..10_000, 0u64..30_000), 1..200)
        ) {
            let ttl = Duration::from_secs(10);
            let t0 = Instant::now();
            let mut w = ThroughputWindow::new(ttl);
            let mut all: Vec<(Duration, u32, u64)> = Vec::new();
            let mut now = Duration::ZERO;
            for (ks, bytes, step_ms) in ops {
                now += Duration::from_millis(step_ms);
                w.add(KeyspaceId(ks), bytes, t0 + now);
                all.push((now, ks, bytes));
                let live: Vec<_> = all.iter().filter(|(at, _, _)| now - *at <= ttl).collect();
                let mut sums: HashMap<u32, u128> = HashMap::new();
                for (_, k, b) in &live {
                    *sums.entry(*k).or_default() += u128::from(*b);
                }
                let total: u128 = sums.values().sum();
                prop_assert_eq!(w.len(), live.len());
                prop_assert_eq!(w.keyspaces(), sums.len());
                for k in 0..5 {
                    let expected = sums
                        .get(&k)
                        .is_some_and(|s| *s as f64 >= total as f64 / sums.len() as f64);
                    prop_assert_eq!(w.is_high(KeyspaceId(k)), expected, "ks {}", k);
                }
            }
        }
    }
}
