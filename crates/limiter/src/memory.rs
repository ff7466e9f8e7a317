//! Byte reservations against `memory-upper-threshold`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, MEMORY_LIMIT_EXCEEDED_LABEL, Result};
use crate::metrics::LimiterMetrics;
use crate::threshold::MemoryThreshold;

/// Accounts bytes that requests are about to use (a snapshot being rebuilt, a response being
/// built) against a capacity.
///
/// A reservation that does not fit fails at once with the shortfall; nothing waits. Reserved
/// bytes come back when the [`MemoryReservation`] is dropped. [`MemoryLimiter::set_capacity`]
/// changes the capacity at runtime.
#[derive(Debug)]
pub struct MemoryLimiter {
    capacity: AtomicU64,
    used: AtomicU64,
    metrics: Option<LimiterMetrics>,
}

impl MemoryLimiter {
    /// A limiter of `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        MemoryLimiter { capacity: AtomicU64::new(capacity), used: AtomicU64::new(0), metrics: None }
    }

    /// A limiter of `threshold` resolved against a memory limit of `limit` bytes.
    pub fn from_threshold(threshold: &MemoryThreshold, limit: u64) -> Self {
        Self::new(threshold.resolve(limit))
    }

    /// Reports reserved bytes (`tikv_worker_memory_limiter_current_used`) and rejections.
    pub fn with_metrics(mut self, metrics: LimiterMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity.load(Ordering::Acquire)
    }

    /// Sets the capacity for reservations made from now on.
    ///
    /// Held reservations stay valid: if they exceed a smaller capacity, nothing more fits
    /// until enough of them are dropped.
    pub fn set_capacity(&self, bytes: u64) {
        self.capacity.store(bytes, Ordering::Release);
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// Bytes free now.
    pub fn available(&self) -> u64 {
        self.capacity().saturating_sub(self.used())
    }

    /// Reserves `bytes`, or fails with [`Error::MemoryLimitExceeded`] if fewer are free.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Result<MemoryReservation> {
        self.take(bytes)?;
        Ok(MemoryReservation { limiter: Arc::clone(self), bytes })
    }

    fn take(&self, bytes: u64) -> Result<()> {
        let mut used = self.used.load(Ordering::Acquire);
        loop {
            let capacity = self.capacity();
            let available = capacity.saturating_sub(used);
            if bytes > available {
                if let Some(m) = &self.metrics {
                    m.reject(MEMORY_LIMIT_EXCEEDED_LABEL);
                }
                return Err(Error::MemoryLimitExceeded {
                    requested: bytes,
                    available,
                    capacity,
                    shortfall: bytes - available,
                });
            }
            // `used + bytes <= capacity` here, so no overflow.
            match self.used.compare_exchange_weak(
                used,
                used + bytes,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => used = now,
            }
        }
        self.gauge_add(bytes, true);
        Ok(())
    }

    fn give_back(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
        self.gauge_add(bytes, false);
    }

    fn gauge_add(&self, bytes: u64, add: bool) {
        if let Some(m) = &self.metrics {
            let delta = i64::try_from(bytes).unwrap_or(i64::MAX);
            m.memory_used().add(if add { delta } else { -delta });
        }
    }
}

/// Bytes reserved in a [`MemoryLimiter`], given back on drop.
#[derive(Debug)]
#[must_use = "the bytes are released as soon as this is dropped"]
pub struct MemoryReservation {
    limiter: Arc<MemoryLimiter>,
    bytes: u64,
}

impl MemoryReservation {
    /// The bytes this reservation holds.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Reserves `bytes` more in the same limiter, or fails with
    /// [`Error::MemoryLimitExceeded`] (holding what it held) if fewer are free.
    pub fn try_grow(&mut self, bytes: u64) -> Result<()> {
        self.limiter.take(bytes)?;
        self.bytes = self.bytes.saturating_add(bytes);
        Ok(())
    }

    /// Gives `bytes` back early (at most what the reservation holds).
    pub fn shrink(&mut self, bytes: u64) {
        let bytes = bytes.min(self.bytes);
        self.limiter.give_back(bytes);
        self.bytes -= bytes;
    }

    /// An empty reservation in the same limiter, to grow later.
    pub fn empty_like(&self) -> MemoryReservation {
        MemoryReservation { limiter: Arc::clone(&self.limiter), bytes: 0 }
    }
}

impl Drop for MemoryReservation {
    fn drop(&mut self) {
        self.limiter.give_back(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::Registry;
    use rcop_units::ReadableSize;

    #[test]
    fn reservations_grow_and_shrink() {
        let limiter = Arc::new(MemoryLimiter::new(1000));
        let mut a = limiter.try_reserve(100).unwrap();
        a.try_grow(800).unwrap();
        assert_eq!((a.bytes(), limiter.used()), (900, 900));
        assert!(matches!(a.try_grow(101), Err(Error::MemoryLimitExceeded { shortfall: 1, .. })));
        assert_eq!((a.bytes(), limiter.used()), (900, 900), "a failed growth holds what it held");
        a.shrink(300);
        assert_eq!((a.bytes(), limiter.used()), (600, 600));
        a.shrink(10_000);
        assert_eq!((a.bytes(), limiter.used()), (0, 0));
        let mut b = a.empty_like();
        b.try_grow(1000).unwrap();
        drop(a);
        assert_eq!(limiter.used(), 1000);
        drop(b);
        assert_eq!(limiter.used(), 0);
    }

    #[test]
    fn reservations_account_and_release() {
        let metrics = LimiterMetrics::register(&Registry::new()).unwrap();
        let limiter = Arc::new(MemoryLimiter::new(1000).with_metrics(metrics.clone()));
        let a = limiter.try_reserve(600).unwrap();
        assert_eq!((a.bytes(), limiter.used(), limiter.available()), (600, 600, 400));
        assert_eq!(metrics.memory_used().get(), 600);
        match limiter.try_reserve(500) {
            Err(Error::MemoryLimitExceeded { requested, available, capacity, shortfall }) => {
                assert_eq!((requested, available, capacity, shortfall), (500, 400, 1000, 100));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(limiter.used(), 600, "a failed reservation leaves nothing behind");
        assert_eq!(
            metrics.failed_requests().with_label_values(&["memory_limit_exceeded"]).get(),
            1
        );
        let b = limiter.try_reserve(400).unwrap();
        assert_eq!(limiter.available(), 0);
        let zero = limiter.try_reserve(0).unwrap();
        drop(a);
        assert_eq!(limiter.used(), 400);
        drop((b, zero));
        assert_eq!((limiter.used(), metrics.memory_used().get()), (0, 0));
        // Larger than the whole capacity: no wait can make it fit.
        let err = limiter.try_reserve(u64::MAX).unwrap_err();
        assert!(
            matches!(err, Error::MemoryLimitExceeded { shortfall, .. } if shortfall == u64::MAX - 1000)
        );
        assert!(!err.is_retryable() && err.never_fits());
    }

    #[test]
    fn capacity_from_threshold() {
        let l = MemoryLimiter::from_threshold(&MemoryThreshold::Percent(80.0), 10 << 30);
        assert_eq!(l.capacity(), 8 << 30);
        let l = MemoryLimiter::from_threshold(
            &MemoryThreshold::Absolute(ReadableSize(512 << 20)),
            10 << 30,
        );
        assert_eq!(l.capacity(), 512 << 20);
    }

    #[test]
    fn concurrent_reservations_never_exceed_capacity() {
        let limiter = Arc::new(MemoryLimiter::new(10_000));
        let peak = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (limiter, peak) = (Arc::clone(&limiter), Arc::clone(&peak));
                std::thread::spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..5_000u64 {
                        if let Ok(r) = limiter.try_reserve(1 + (i * 7 + t) % 900) {
                            held.push(r);
                        }
                        peak.fetch_max(limiter.used(), Ordering::Relaxed);
                        if i % 3 == 0 {
                            held.clear();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(Ordering::Relaxed) <= 10_000);
        assert_eq!(limiter.used(), 0);
    }
}
