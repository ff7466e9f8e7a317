//! Configuration sections: `[cop-limiter]`, `[worker-limiter]` and `memory-upper-threshold`.

use rcop_units::ReadableDuration;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::threshold::MemoryThreshold;

/// `[cop-limiter]`: memory-pressure throttling of heavy keyspaces.
///
/// ```toml
/// [cop-limiter]
/// high-mem-ratio = 0.8
/// wait-min-duration = "100ms"
/// wait-max-duration = "3s"
/// sample-ttl = "60s"
/// ```
///
/// Non-exhaustive: outside this crate, start from [`CopLimiterConfig::default`] and adjust
/// with the `with_*` setters or the public fields.
///
/// ```
/// use rcop_limiter::{CopLimiterConfig, ReadableDuration};
///
/// let config = CopLimiterConfig::default().with_sample_ttl(ReadableDuration::secs(2));
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct CopLimiterConfig {
    /// Share of the memory limit above which heavy keyspaces are throttled; in `(0, 1)`.
    pub high_mem_ratio: f64,
    /// Shortest sleep between two memory checks of a throttled request; greater than zero.
    pub wait_min_duration: ReadableDuration,
    /// Longest sleep between two memory checks; greater than `wait-min-duration`.
    pub wait_max_duration: ReadableDuration,
    /// How long a response-size sample counts towards its keyspace's throughput; greater than zero.
    pub sample_ttl: ReadableDuration,
}

impl Default for CopLimiterConfig {
    fn default() -> Self {
        CopLimiterConfig {
            high_mem_ratio: 0.8,
            wait_min_duration: ReadableDuration::millis(100),
            wait_max_duration: ReadableDuration::secs(3),
            sample_ttl: ReadableDuration::secs(60),
        }
    }
}

impl CopLimiterConfig {
    /// Sets [`high_mem_ratio`](Self::high_mem_ratio).
    #[must_use]
    pub fn with_high_mem_ratio(mut self, ratio: f64) -> Self {
        self.high_mem_ratio = ratio;
        self
    }

    /// Sets [`wait_min_duration`](Self::wait_min_duration).
    #[must_use]
    pub fn with_wait_min_duration(mut self, duration: ReadableDuration) -> Self {
        self.wait_min_duration = duration;
        self
    }

    /// Sets [`wait_max_duration`](Self::wait_max_duration).
    #[must_use]
    pub fn with_wait_max_duration(mut self, duration: ReadableDuration) -> Self {
        self.wait_max_duration = duration;
        self
    }

    /// Sets [`sample_ttl`](Self::sample_ttl).
    #[must_use]
    pub fn with_sample_ttl(mut self, ttl: ReadableDuration) -> Self {
        self.sample_ttl = ttl;
        self
    }

    /// Checks every value; the error names the offending key.
    pub fn validate(&self) -> Result<()> {
        let ratio = self.high_mem_ratio;
        if !(ratio > 0.0 && ratio < 1.0) {
            return Err(Error::config(
                "cop-limiter.high-mem-ratio",
                format!("{ratio} is not in (0, 1)"),
            ));
        }
        if self.wait_min_duration.is_zero() {
            return Err(Error::config("cop-limiter.wait-min-duration", "must be greater than 0"));
        }
        if self.wait_max_duration <= self.wait_min_duration {
            return Err(Error::config(
                "cop-limiter.wait-max-duration",
                format!(
                    "{} must exceed wait-min-duration {}",
                    self.wait_max_duration, self.wait_min_duration
                ),
            ));
        }
        if self.sample_ttl.is_zero() {
            return Err(Error::config("cop-limiter.sample-ttl", "must be greater than 0"));
        }
        Ok(())
    }
}

/// `[worker-limiter]`: global and per-keyspace concurrency permits with a bounded wait queue.
///
/// Permits are `max(2, cores × factor)`. A request that finds no permit waits, unless the queue
/// is full; it gives up at its deadline.
///
/// ```toml
/// [worker-limiter]
/// global-concurrency-factor = 6.0
/// keyspace-concurrency-factor = 2.0
/// max-queue-size = 128
/// keyspace-max-queue-size = 32
/// ```
///
/// Non-exhaustive: outside this crate, start from [`WorkerLimiterConfig::default`] and
/// adjust with the `with_*` setters or the public fields.
///
/// ```
/// use rcop_limiter::WorkerLimiterConfig;
///
/// let config = WorkerLimiterConfig::default()
///     .with_global_concurrency_factor(4.0)
///     .with_keyspace_concurrency_factor(1.0)
///     .with_max_queue_size(16)
///     .with_keyspace_max_queue_size(4);
/// assert_eq!(config.permits(8).global, 32);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct WorkerLimiterConfig {
    /// Global permits per core; in `(0, 256]` and at least `keyspace-concurrency-factor`.
    pub global_concurrency_factor: f64,
    /// Permits of one keyspace per core; greater than zero.
    pub keyspace_concurrency_factor: f64,
    /// Most requests waiting for a permit at once, over all keyspaces; 0 disables waiting.
    pub max_queue_size: usize,
    /// Most requests of one keyspace waiting for a permit at once; 0 disables waiting.
    pub keyspace_max_queue_size: usize,
}

impl Default for WorkerLimiterConfig {
    fn default() -> Self {
        WorkerLimiterConfig {
            global_concurrency_factor: 6.0,
            keyspace_concurrency_factor: 2.0,
            max_queue_size: 128,
            keyspace_max_queue_size: 32,
        }
    }
}

/// Permit counts resolved for a number of cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermitCounts {
    /// Permits shared by all keyspaces.
    pub global: usize,
    /// Permits of each keyspace.
    pub keyspace: usize,
}

/// Upper bound of `global-concurrency-factor` (upstream's first generation).
const MAX_GLOBAL_FACTOR: f64 = 256.0;

impl WorkerLimiterConfig {
    /// Sets [`global_concurrency_factor`](Self::global_concurrency_factor).
    #[must_use]
    pub fn with_global_concurrency_factor(mut self, factor: f64) -> Self {
        self.global_concurrency_factor = factor;
        self
    }

    /// Sets [`keyspace_concurrency_factor`](Self::keyspace_concurrency_factor).
    #[must_use]
    pub fn with_keyspace_concurrency_factor(mut self, factor: f64) -> Self {
        self.keyspace_concurrency_factor = factor;
        self
    }

    /// Sets [`max_queue_size`](Self::max_queue_size).
    #[must_use]
    pub fn with_max_queue_size(mut self, size: usize) -> Self {
        self.max_queue_size = size;
        self
    }

    /// Sets [`keyspace_max_queue_size`](Self::keyspace_max_queue_size).
    #[must_use]
    pub fn with_keyspace_max_queue_size(mut self, size: usize) -> Self {
        self.keyspace_max_queue_size = size;
        self
    }

    /// Checks every value; the error names the offending key.
    pub fn validate(&self) -> Result<()> {
        let g = self.global_concurrency_factor;
        let k = self.keyspace_concurrency_factor;
        if !(g > 0.0 && g <= MAX_GLOBAL_FACTOR) {
            return Err(Error::config(
                "worker-limiter.global-concurrency-factor",
                format!("{g} is not in (0, {MAX_GLOBAL_FACTOR}]"),
            ));
        }
        if !(k > 0.0 && k.is_finite()) {
            return Err(Error::config(
                "worker-limiter.keyspace-concurrency-factor",
                format!("{k} must be greater than 0"),
            ));
        }
        if k > g {
            return Err(Error::config(
                "worker-limiter.keyspace-concurrency-factor",
                format!("{k} exceeds global-concurrency-factor {g}"),
            ));
        }
        Ok(())
    }

    /// `max(2, cores × factor)` for the global and the per-keyspace permits.
    pub fn permits(&self, cores: usize) -> PermitCounts {
        // `as` saturates; validated factors are finite and positive.
        let count = |factor: f64| ((cores as f64 * factor).floor() as usize).max(2);
        PermitCounts {
            global: count(self.global_concurrency_factor),
            keyspace: count(self.keyspace_concurrency_factor),
        }
    }
}

/// Everything the limiter reads from the worker's configuration file.
///
/// Meant to be embedded with `#[serde(flatten)]` in the worker's top-level config, so the keys
/// sit where upstream puts them: `memory-upper-threshold` at the top, `[cop-limiter]` and
/// `[worker-limiter]` as sections.
///
/// Non-exhaustive: outside this crate, start from [`LimiterConfig::default`] and adjust with
/// the `with_*` setters or the public fields.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
#[non_exhaustive]
pub struct LimiterConfig {
    /// `[cop-limiter]`.
    pub cop_limiter: CopLimiterConfig,
    /// `[worker-limiter]`.
    pub worker_limiter: WorkerLimiterConfig,
    /// Capacity of memory reservations: absolute or a percentage of the memory limit (80%).
    pub memory_upper_threshold: MemoryThreshold,
    /// The memory limit, when it cannot or should not be read from the system (0: read it
    /// from cgroups and `/proc/meminfo`). Where `/proc` is absent (macOS, BSDs) it is needed,
    /// and RSS reads as unknown: the cop-limiter then sees no memory pressure.
    pub memory_limit: rcop_units::ReadableSize,
}

impl LimiterConfig {
    /// Sets [`cop_limiter`](Self::cop_limiter).
    #[must_use]
    pub fn with_cop_limiter(mut self, cop_limiter: CopLimiterConfig) -> Self {
        self.cop_limiter = cop_limiter;
        self
    }

    /// Sets [`worker_limiter`](Self::worker_limiter).
    #[must_use]
    pub fn with_worker_limiter(mut self, worker_limiter: WorkerLimiterConfig) -> Self {
        self.worker_limiter = worker_limiter;
        self
    }

    /// Sets [`memory_upper_threshold`](Self::memory_upper_threshold).
    #[must_use]
    pub fn with_memory_upper_threshold(mut self, threshold: impl Into<MemoryThreshold>) -> Self {
        self.memory_upper_threshold = threshold.into();
        self
    }

    /// Checks every section; the error names the offending key.
    pub fn validate(&self) -> Result<()> {
        self.cop_limiter.validate()?;
        self.worker_limiter.validate()?;
        self.memory_upper_threshold.validate("memory-upper-threshold")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use rcop_units::ReadableSize;

    fn parse(text: &str) -> LimiterConfig {
        toml::from_str(text).unwrap()
    }

    fn invalid_key(text: &str) -> &'static str {
        match parse(text).validate() {
            Err(Error::InvalidConfig { key, .. }) => key,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_match_upstream() {
        let c = parse("");
        assert_eq!(c, LimiterConfig::default());
        c.validate().unwrap();
        assert_eq!(c.cop_limiter.high_mem_ratio, 0.8);
        assert_eq!(c.cop_limiter.wait_min_duration.0, Duration::from_millis(100));
        assert_eq!(c.cop_limiter.wait_max_duration.0, Duration::from_secs(3));
        assert_eq!(c.cop_limiter.sample_ttl.0, Duration::from_secs(60));
        assert_eq!(c.memory_upper_threshold, MemoryThreshold::Percent(80.0));
        assert_eq!(c.worker_limiter.permits(2), PermitCounts { global: 12, keyspace: 4 });
    }

    #[test]
    fn full_snippet_parses() {
        let c = parse(
            r#"
            memory-upper-threshold = "4GiB"

            [cop-limiter]
            high-mem-ratio = 0.7
            wait-min-duration = "50ms"
            wait-max-duration = "1s"
            sample-ttl = "2m"

            [worker-limiter]
            global-concurrency-factor = 4.0
            keyspace-concurrency-factor = 0.5
            max-queue-size = 10
            keyspace-max-queue-size = 3
            "#,
        );
        c.validate().unwrap();
        assert_eq!(c.memory_upper_threshold, MemoryThreshold::Absolute(ReadableSize(4 << 30)));
        assert_eq!(c.cop_limiter.high_mem_ratio, 0.7);
        assert_eq!(c.cop_limiter.wait_min_duration.0, Duration::from_millis(50));
        assert_eq!(c.cop_limiter.wait_max_duration.0, Duration::from_secs(1));
        assert_eq!(c.cop_limiter.sample_ttl.0, Duration::from_secs(120));
        assert_eq!(c.worker_limiter.max_queue_size, 10);
        assert_eq!(c.worker_limiter.keyspace_max_queue_size, 3);
        // 1 core: max(2, 4) and max(2, 0.5 floored to 0).
        assert_eq!(c.worker_limiter.permits(1), PermitCounts { global: 4, keyspace: 2 });
        assert_eq!(c.worker_limiter.permits(16), PermitCounts { global: 64, keyspace: 8 });
    }

    #[test]
    fn out_of_range_values_name_their_key() {
        for (text, key) in [
            ("[cop-limiter]\nhigh-mem-ratio = 1.0", "cop-limiter.high-mem-ratio"),
            ("[cop-limiter]\nhigh-mem-ratio = 0.0", "cop-limiter.high-mem-ratio"),
            ("[cop-limiter]\nhigh-mem-ratio = nan", "cop-limiter.high-mem-ratio"),
            ("[cop-limiter]\nwait-min-duration = \"0s\"", "cop-limiter.wait-min-duration"),
            ("[cop-limiter]\nwait-max-duration = \"100ms\"", "cop-limiter.wait-max-duration"),
            (
                "[cop-limiter]\nwait-min-duration = \"5s\"\nwait-max-duration = \"4s\"",
                "cop-limiter.wait-max-duration",
            ),
            ("[cop-limiter]\nsample-ttl = \"0ms\"", "cop-limiter.sample-ttl"),
            (
                "[worker-limiter]\nglobal-concurrency-factor = 300.0",
                "worker-limiter.global-concurrency-factor",
            ),
            (
                "[worker-limiter]\nglobal-concurrency-factor = -1.0",
                "worker-limiter.global-concurrency-factor",
            ),
            (
                "[worker-limiter]\nkeyspace-concurrency-factor = 0.0",
                "worker-limiter.keyspace-concurrency-factor",
            ),
            (
                "[worker-limiter]\nkeyspace-concurrency-factor = 7.0",
                "worker-limiter.keyspace-concurrency-factor",
            ),
            ("memory-upper-threshold = \"0%\"", "memory-upper-threshold"),
            ("memory-upper-threshold = 0", "memory-upper-threshold"),
        ] {
            assert_eq!(invalid_key(text), key, "{text}");
        }
    }

    #[test]
    fn malformed_values_are_parse_errors_naming_the_key() {
        for (text, needle) in [
            ("[cop-limiter]\nwait-min-duration = \"100\"", "wait-min-duration"),
            ("[cop-limiter]\nsample-ttl = 60", "sample-ttl"),
            ("[cop-limiter]\nhigh-mem-ration = 0.5", "high-mem-ration"),
            ("[worker-limiter]\nmax-queue-size = -1", "max-queue-size"),
            ("memory-upper-threshold = \"80 percent\"", "memory-upper-threshold"),
        ] {
            let err = toml::from_str::<LimiterConfig>(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
