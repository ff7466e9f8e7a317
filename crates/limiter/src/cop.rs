//! The cop-limiter: under memory pressure, heavy keyspaces wait (jittered) until memory drops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use crate::clock::{Clock, SystemClock};
use crate::config::CopLimiterConfig;
use crate::error::{BusyReason, Error, Result};
use crate::keyspace::KeyspaceId;
use crate::metrics::{LimiterMetrics, WAIT_TYPE_COP_LIMITER};
use crate::probe::MemoryMonitor;
use crate::random::{FastRandom, RandomSource};
use crate::window::ThroughputWindow;

/// Throttles heavy keyspaces while the process's memory is above `high-mem-ratio` × the limit.
///
/// - usage below the line: every request passes (one atomic load);
/// - above the line, a keyspace whose response bytes in the last `sample-ttl` are below the
///   per-keyspace average passes; so does any keyspace when no samples exist;
/// - an at-or-above-average keyspace sleeps a uniformly random duration in
///   `[wait-min-duration, wait-max-duration]`, re-reads the memory usage, and passes as soon as
///   it is below the line; at its deadline it fails with [`BusyReason::MemoryPressure`].
///
/// Feed it the size of every response with [`CopLimiter::record_response`].
///
/// [`CopLimiter::update`] changes the ratio, the sleep range and the window's ttl at runtime.
#[derive(Debug)]
pub struct CopLimiter {
    waits: RwLock<WaitRange>,
    high_mem_bytes: AtomicU64,
    memory: Arc<MemoryMonitor>,
    window: Mutex<ThroughputWindow>,
    clock: Arc<dyn Clock>,
    random: Arc<dyn RandomSource>,
    metrics: Option<LimiterMetrics>,
}

/// The range a throttled request's sleeps are drawn from; replaced as a whole by an update so
/// that a sleep never sees a new minimum with an old maximum.
#[derive(Debug, Clone, Copy)]
struct WaitRange {
    min: Duration,
    max: Duration,
}

impl WaitRange {
    fn of(config: &CopLimiterConfig) -> Self {
        WaitRange {
            min: config.wait_min_duration.as_duration(),
            max: config.wait_max_duration.as_duration(),
        }
    }
}

/// `high-mem-ratio × limit` in bytes.
fn memory_line(limit: u64, ratio: f64) -> u64 {
    // `as` saturates; the ratio is in (0, 1), so the product is below the limit.
    (limit as f64 * ratio) as u64
}

impl CopLimiter {
    /// A limiter on the system clock with OS-seeded randomness and no metrics; the line is
    /// `high-mem-ratio × memory.limit()`. Fails if the config does not validate.
    pub fn new(config: &CopLimiterConfig, memory: Arc<MemoryMonitor>) -> Result<Self> {
        config.validate()?;
        let high_mem_bytes = memory_line(memory.limit(), config.high_mem_ratio);
        Ok(CopLimiter {
            waits: RwLock::new(WaitRange::of(config)),
            high_mem_bytes: AtomicU64::new(high_mem_bytes),
            memory,
            window: Mutex::new(ThroughputWindow::new(config.sample_ttl.as_duration())),
            clock: Arc::new(SystemClock),
            random: Arc::new(FastRandom::new()),
            metrics: None,
        })
    }

    /// Uses `clock` for sample times, sleeps and deadlines.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `random` for the jittered sleeps.
    pub fn with_random(mut self, random: Arc<dyn RandomSource>) -> Self {
        self.random = random;
        self
    }

    /// Reports waits and rejections to `metrics`.
    pub fn with_metrics(mut self, metrics: LimiterMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Applies `config` from now on; fails, changing nothing, if it does not validate.
    ///
    /// The new line (`high-mem-ratio × limit`) holds for the next admission and for requests
    /// already throttled at their next memory check; the new sleep range from their next
    /// sleep; the new `sample-ttl` from the next time the window is read or written (a shorter
    /// ttl then drops the samples that have become too old).
    pub fn update(&self, config: &CopLimiterConfig) -> Result<()> {
        config.validate()?;
        self.apply(config);
        Ok(())
    }

    /// [`CopLimiter::update`] with a config already validated.
    pub(crate) fn apply(&self, config: &CopLimiterConfig) {
        let line = memory_line(self.memory.limit(), config.high_mem_ratio);
        *self.waits.write().unwrap_or_else(PoisonError::into_inner) = WaitRange::of(config);
        self.window().set_ttl(config.sample_ttl.as_duration());
        self.high_mem_bytes.store(line, Ordering::Release);
    }

    /// The memory line in bytes: `high-mem-ratio × limit`.
    pub fn high_mem_bytes(&self) -> u64 {
        self.high_mem_bytes.load(Ordering::Acquire)
    }

    /// The range throttled requests draw their sleeps from: `(wait-min, wait-max)`.
    pub fn wait_range(&self) -> (Duration, Duration) {
        let waits = *self.waits.read().unwrap_or_else(PoisonError::into_inner);
        (waits.min, waits.max)
    }

    /// True when the latest memory sample is at or above the line.
    pub fn is_memory_high(&self) -> bool {
        self.memory.used() >= self.high_mem_bytes()
    }

    /// Records the size of a response served for `keyspace`, now.
    pub fn record_response(&self, keyspace: KeyspaceId, bytes: u64) {
        let now = self.clock.now();
        self.window().add(keyspace, bytes, now);
    }

    /// True when `keyspace`'s response bytes in the window are at or above the per-keyspace
    /// average (a lone keyspace always is; without samples none is).
    pub fn is_high_throughput(&self, keyspace: KeyspaceId) -> bool {
        let now = self.clock.now();
        let mut window = self.window();
        window.evict(now);
        window.is_high(keyspace)
    }

    /// Waits while memory is high and `keyspace` is heavy; fails with
    /// [`Error::ServerBusy`] ([`BusyReason::MemoryPressure`]) once `deadline` passes.
    ///
    /// Dropping the future abandons the wait; nothing is held.
    pub async fn wait_for_memory(&self, keyspace: KeyspaceId, deadline: Instant) -> Result<()> {
        if !self.is_memory_high() || !self.is_high_throughput(keyspace) {
            return Ok(());
        }
        let _waiting = self.metrics.as_ref().map(|m| m.waiting_guard(WAIT_TYPE_COP_LIMITER));
        let start = self.clock.now();
        let result = loop {
            let now = self.clock.now();
            let Some(left) = deadline.checked_duration_since(now).filter(|d| !d.is_zero()) else {
                break Err(Error::busy(BusyReason::MemoryPressure));
            };
            let (min, max) = self.wait_range();
            let nap = self.random.duration_in(min, max).min(left);
            self.clock.sleep(nap).await;
            if self.memory.refresh() < self.high_mem_bytes() {
                break Ok(());
            }
        };
        if let Some(m) = &self.metrics {
            let waited = self.clock.now().saturating_duration_since(start);
            m.observe_wait(WAIT_TYPE_COP_LIMITER, waited.as_secs_f64());
            if let Err(e) = &result {
                m.reject(e.rejection_label().unwrap_or(BusyReason::MemoryPressure.label()));
            }
        }
        result
    }

    fn window(&self) -> MutexGuard<'_, ThroughputWindow> {
        // The window's invariants hold between statements, so a poisoned lock is still usable.
        self.window.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
