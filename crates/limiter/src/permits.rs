//! Global and per-keyspace concurrency permits with a bounded wait queue.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::clock::{Clock, SystemClock};
use crate::config::{PermitCounts, WorkerLimiterConfig};
use crate::error::{BusyReason, Error, Result};
use crate::keyspace::KeyspaceId;
use crate::metrics::{LimiterMetrics, WAIT_TYPE_PERMIT};

/// Concurrency limits: a request holds one permit of its keyspace and one global permit.
///
/// Acquisition takes the keyspace permit first, then the global one (as upstream), so a
/// keyspace at its own limit queues on its own semaphore without taking global permits from
/// the others. A request that must wait joins a queue bounded globally (`max-queue-size`) and
/// per keyspace (`keyspace-max-queue-size`); a full queue rejects at once
/// ([`BusyReason::QueueFull`]) and the request's deadline ends the wait
/// ([`BusyReason::PermitWaitTimeout`]). Waiters are served in FIFO order per semaphore.
#[derive(Debug)]
pub struct WorkerLimiter {
    counts: PermitCounts,
    global: Arc<Semaphore>,
    keyspaces: RwLock<HashMap<KeyspaceId, Arc<KeyspaceSlot>>>,
    waiting: AtomicUsize,
    max_queue: usize,
    keyspace_max_queue: usize,
    clock: Arc<dyn Clock>,
    metrics: Option<LimiterMetrics>,
}

#[derive(Debug)]
struct KeyspaceSlot {
    permits: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// A held admission: one keyspace permit and one global permit, both given back on drop
/// (including when the task holding it is cancelled or panics).
#[derive(Debug)]
#[must_use = "the permits are released as soon as this is dropped"]
pub struct Permit {
    // Field order is drop order: the global permit goes back first.
    _global: OwnedSemaphorePermit,
    _keyspace: OwnedSemaphorePermit,
}

/// A place in the wait queue; leaves it on drop.
struct QueueSlot<'a> {
    global: &'a AtomicUsize,
    keyspace: &'a AtomicUsize,
}

impl Drop for QueueSlot<'_> {
    fn drop(&mut self) {
        self.global.fetch_sub(1, Ordering::AcqRel);
        self.keyspace.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Takes a place in a queue bounded by `max`; false if it is full.
fn join(counter: &AtomicUsize, max: usize) -> bool {
    if counter.fetch_add(1, Ordering::AcqRel) >= max {
        counter.fetch_sub(1, Ordering::AcqRel);
        return false;
    }
    true
}

impl WorkerLimiter {
    /// Permits for `cores` cores (`max(2, cores × factor)`), on the system clock, without
    /// metrics. Fails if the config does not validate.
    pub fn new(config: &WorkerLimiterConfig, cores: usize) -> Result<Self> {
        config.validate()?;
        let counts = config.permits(cores);
        Ok(WorkerLimiter {
            counts,
            global: Arc::new(Semaphore::new(counts.global)),
            keyspaces: RwLock::new(HashMap::new()),
            waiting: AtomicUsize::new(0),
            max_queue: config.max_queue_size,
            keyspace_max_queue: config.keyspace_max_queue_size,
            clock: Arc::new(SystemClock),
            metrics: None,
        })
    }

    /// Uses `clock` for deadlines and wait times.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Reports waits and rejections to `metrics`.
    pub fn with_metrics(mut self, metrics: LimiterMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The global and per-keyspace permit counts.
    pub fn permits(&self) -> PermitCounts {
        self.counts
    }

    /// Global permits free now.
    pub fn available_global(&self) -> usize {
        self.global.available_permits()
    }

    /// Permits of `keyspace` free now.
    pub fn available(&self, keyspace: KeyspaceId) -> usize {
        match self.keyspaces.read().unwrap_or_else(PoisonError::into_inner).get(&keyspace) {
            Some(slot) => slot.permits.available_permits(),
            None => self.counts.keyspace,
        }
    }

    /// Requests waiting for a permit now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Takes both permits if they are free now, without waiting.
    pub fn try_acquire(&self, keyspace: KeyspaceId) -> Option<Permit> {
        let slot = self.slot(keyspace);
        let keyspace = Arc::clone(&slot.permits).try_acquire_owned().ok()?;
        let global = Arc::clone(&self.global).try_acquire_owned().ok()?;
        Some(Permit { _global: global, _keyspace: keyspace })
    }

    /// Takes both permits, waiting in the queue until `deadline` if they are not free.
    ///
    /// Fails at once with [`BusyReason::QueueFull`] when the queue is full and with
    /// [`BusyReason::PermitWaitTimeout`] at `deadline`. Dropping the future leaves the queue
    /// and returns any permit already taken.
    pub async fn acquire(&self, keyspace: KeyspaceId, deadline: Instant) -> Result<Permit> {
        let slot = self.slot(keyspace);
        let held = match Arc::clone(&slot.permits).try_acquire_owned() {
            Ok(keyspace) => match Arc::clone(&self.global).try_acquire_owned() {
                Ok(global) => return Ok(Permit { _global: global, _keyspace: keyspace }),
                Err(_) => Some(keyspace),
            },
            Err(_) => None,
        };
        let result = self.wait(&slot, held, deadline).await;
        if let (Err(e), Some(m)) = (&result, &self.metrics) {
            m.reject(e.rejection_label().unwrap_or(BusyReason::PermitWaitTimeout.label()));
        }
        result
    }

    async fn wait(
        &self,
        slot: &KeyspaceSlot,
        held: Option<OwnedSemaphorePermit>,
        deadline: Instant,
    ) -> Result<Permit> {
        if !join(&self.waiting, self.max_queue) {
            return Err(Error::busy(BusyReason::QueueFull));
        }
        if !join(&slot.waiting, self.keyspace_max_queue) {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::busy(BusyReason::QueueFull));
        }
        let _queued = QueueSlot { global: &self.waiting, keyspace: &slot.waiting };
        let _gauge = self.metrics.as_ref().map(|m| m.waiting_guard(WAIT_TYPE_PERMIT));
        let start = self.clock.now();
        let permits = async {
            let keyspace = match held {
                Some(permit) => permit,
                None => Arc::clone(&slot.permits).acquire_owned().await?,
            };
            let global = Arc::clone(&self.global).acquire_owned().await?;
            Ok::<_, tokio::sync::AcquireError>(Permit { _global: global, _keyspace: keyspace })
        };
        let result = tokio::select! {
            biased;
            permit = permits => permit.map_err(|_closed| Error::busy(BusyReason::PermitWaitTimeout)),
            () = self.clock.sleep_until(deadline) => Err(Error::busy(BusyReason::PermitWaitTimeout)),
        };
        if let Some(m) = &self.metrics {
            let waited = self.clock.now().saturating_duration_since(start);
            m.observe_wait(WAIT_TYPE_PERMIT, waited.as_secs_f64());
        }
        result
    }

    /// The keyspace's semaphore, created on first use.
    fn slot(&self, keyspace: KeyspaceId) -> Arc<KeyspaceSlot> {
        if let Some(slot) =
            self.keyspaces.read().unwrap_or_else(PoisonError::into_inner).get(&keyspace)
        {
            return Arc::clone(slot);
        }
        let mut map = self.keyspaces.write().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(map.entry(keyspace).or_insert_with(|| {
            Arc::new(KeyspaceSlot {
                permits: Arc::new(Semaphore::new(self.counts.keyspace)),
                waiting: AtomicUsize::new(0),
            })
        }))
    }
}
