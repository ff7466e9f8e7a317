//! Global and per-keyspace concurrency permits with a bounded wait queue.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use tokio::sync::Semaphore;

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
///
/// [`WorkerLimiter::update`] changes the permit counts and queue bounds at runtime. Growth is
/// immediate: the new permits go to queued waiters first. Shrinking never revokes a held
/// permit: free permits are withdrawn at once, and the rest of the reduction is withdrawn as
/// held permits come back (each returned permit is dropped instead of freed until the new
/// count holds). Until then nothing new is admitted beyond the new count.
#[derive(Debug)]
pub struct WorkerLimiter {
    cores: usize,
    global: Arc<Pool>,
    state: RwLock<State>,
    waiting: AtomicUsize,
    max_queue: AtomicUsize,
    keyspace_max_queue: AtomicUsize,
    clock: Arc<dyn Clock>,
    metrics: Option<LimiterMetrics>,
}

/// Keyspace slots kept before idle ones are swept out: a worker serving many tenants keeps a
/// bounded table (a slot is idle when no request holds, waits for or is taking its permits).
/// The bound grows to twice the busy slots when a sweep finds most of them busy, so sweeps
/// stay amortized O(1) per new keyspace.
pub const KEYSPACE_SWEEP_AT: usize = 1024;

/// The permit counts and the keyspaces' semaphores, under one lock so that a keyspace created
/// during an update gets the new count.
#[derive(Debug)]
struct State {
    counts: PermitCounts,
    keyspaces: HashMap<KeyspaceId, Arc<KeyspaceSlot>>,
    /// Table size at which the next new keyspace sweeps idle slots first.
    sweep_at: usize,
}

#[derive(Debug)]
struct KeyspaceSlot {
    permits: Arc<Pool>,
    waiting: AtomicUsize,
}

impl KeyspaceSlot {
    /// No request holds this slot (taking or waiting for a permit) and no permit of its pool
    /// is out. Checked under the state's write lock, where no new reference can be taken.
    fn is_idle(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) == 1
            && Arc::strong_count(&self.permits) == 1
            && self.waiting.load(Ordering::Acquire) == 0
    }
}

/// A semaphore whose capacity can change while permits are held.
///
/// Invariant: `free + held - debt` is the capacity, where `debt` counts the permits a shrink
/// could not withdraw because they were held. A returned permit pays one unit of debt (it is
/// forgotten rather than freed); growth pays the debt before it adds permits.
#[derive(Debug)]
struct Pool {
    semaphore: Semaphore,
    debt: AtomicUsize,
    /// Returns take it shared and resizes exclusively, so a permit returned during a resize
    /// either is free before the resize withdraws free permits or sees the new debt.
    gate: RwLock<()>,
}

impl Pool {
    fn new(permits: usize) -> Arc<Self> {
        Arc::new(Pool {
            semaphore: Semaphore::new(permits),
            debt: AtomicUsize::new(0),
            gate: RwLock::new(()),
        })
    }

    fn available(&self) -> usize {
        self.semaphore.available_permits()
    }

    // A permit is taken out of the semaphore (`forget`) and handed back by `PoolPermit`'s drop,
    // so that the drop can decide between freeing it and paying debt. Nothing awaits between
    // the two, so a cancelled acquisition leaks nothing.
    fn try_acquire(self: &Arc<Self>) -> Option<PoolPermit> {
        self.semaphore.try_acquire().ok()?.forget();
        Some(PoolPermit { pool: Arc::clone(self) })
    }

    async fn acquire(self: &Arc<Self>) -> Result<PoolPermit, tokio::sync::AcquireError> {
        self.semaphore.acquire().await?.forget();
        Ok(PoolPermit { pool: Arc::clone(self) })
    }

    /// Changes the capacity from `from` to `to` permits.
    fn resize(&self, from: usize, to: usize) {
        let _gate = self.gate.write().unwrap_or_else(PoisonError::into_inner);
        // No permit is being returned while the gate is held exclusively: plain load/store.
        let debt = self.debt.load(Ordering::Acquire);
        if to >= from {
            let grow = to - from;
            let paid = debt.min(grow);
            self.debt.store(debt - paid, Ordering::Release);
            if grow > paid {
                self.semaphore.add_permits(grow - paid);
            }
        } else {
            let shrink = from - to;
            let withdrawn = self.semaphore.forget_permits(shrink);
            self.debt.store(debt + (shrink - withdrawn), Ordering::Release);
        }
    }

    /// Takes one permit's worth of debt if there is any.
    fn pay_debt(&self) -> bool {
        self.debt.fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| d.checked_sub(1)).is_ok()
    }
}

/// One permit of a [`Pool`]; freed on drop, or forgotten if the pool has shrunk since.
#[derive(Debug)]
struct PoolPermit {
    pool: Arc<Pool>,
}

impl Drop for PoolPermit {
    fn drop(&mut self) {
        let _gate = self.pool.gate.read().unwrap_or_else(PoisonError::into_inner);
        if !self.pool.pay_debt() {
            self.pool.semaphore.add_permits(1);
        }
    }
}

/// A held admission: one keyspace permit and one global permit, both given back on drop
/// (including when the task holding it is cancelled or panics).
///
/// A permit stays valid across [`WorkerLimiter::update`]; if the limiter has shrunk, giving it
/// back completes the shrink instead of freeing a place.
#[derive(Debug)]
#[must_use = "the permits are released as soon as this is dropped"]
pub struct Permit {
    // Field order is drop order: the global permit goes back first.
    _global: PoolPermit,
    _keyspace: PoolPermit,
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
fn join(counter: &AtomicUsize, max: &AtomicUsize) -> bool {
    if counter.fetch_add(1, Ordering::AcqRel) >= max.load(Ordering::Acquire) {
        counter.fetch_sub(1, Ordering::AcqRel);
        return false;
    }
    true
}

/// `counts` capped at what a tokio semaphore can hold.
fn clamp(counts: PermitCounts) -> PermitCounts {
    PermitCounts {
        global: counts.global.min(Semaphore::MAX_PERMITS),
        keyspace: counts.keyspace.min(Semaphore::MAX_PERMITS),
    }
}

impl WorkerLimiter {
    /// Permits for `cores` cores (`max(2, cores × factor)`), on the system clock, without
    /// metrics. Fails if the config does not validate.
    pub fn new(config: &WorkerLimiterConfig, cores: usize) -> Result<Self> {
        config.validate()?;
        let counts = clamp(config.permits(cores));
        Ok(WorkerLimiter {
            cores,
            global: Pool::new(counts.global),
            state: RwLock::new(State {
                counts,
                keyspaces: HashMap::new(),
                sweep_at: KEYSPACE_SWEEP_AT,
            }),
            waiting: AtomicUsize::new(0),
            max_queue: AtomicUsize::new(config.max_queue_size),
            keyspace_max_queue: AtomicUsize::new(config.keyspace_max_queue_size),
            clock: Arc::new(SystemClock),
            metrics: None,
        })
    }

    /// Applies `config` to requests admitted from now on: the permit counts (for the cores
    /// this limiter was built for) and the queue bounds. Fails, changing nothing, if the config
    /// does not validate.
    ///
    /// Held permits stay valid. Growth lets queued waiters in at once. A shrink withdraws free
    /// permits now and the rest as held permits are given back, so the new count holds for
    /// new admissions from now on and for in-flight requests once enough have finished. A
    /// smaller queue bound turns new waiters away; requests already queued keep waiting.
    pub fn update(&self, config: &WorkerLimiterConfig) -> Result<()> {
        config.validate()?;
        self.apply(config);
        Ok(())
    }

    /// [`WorkerLimiter::update`] with a config already validated.
    pub(crate) fn apply(&self, config: &WorkerLimiterConfig) {
        let counts = clamp(config.permits(self.cores));
        let mut state = self.state_mut();
        let old = state.counts;
        self.global.resize(old.global, counts.global);
        for slot in state.keyspaces.values() {
            slot.permits.resize(old.keyspace, counts.keyspace);
        }
        state.counts = counts;
        self.max_queue.store(config.max_queue_size, Ordering::Release);
        self.keyspace_max_queue.store(config.keyspace_max_queue_size, Ordering::Release);
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

    /// The global and per-keyspace permit counts (the latest update's, even while a shrink
    /// is still waiting for held permits to come back).
    pub fn permits(&self) -> PermitCounts {
        self.read_state().counts
    }

    /// The bounds of the wait queues: `(max-queue-size, keyspace-max-queue-size)`.
    pub fn queue_bounds(&self) -> (usize, usize) {
        (self.max_queue.load(Ordering::Acquire), self.keyspace_max_queue.load(Ordering::Acquire))
    }

    /// Global permits free now.
    pub fn available_global(&self) -> usize {
        self.global.available()
    }

    /// Permits of `keyspace` free now.
    pub fn available(&self, keyspace: KeyspaceId) -> usize {
        let state = self.read_state();
        match state.keyspaces.get(&keyspace) {
            Some(slot) => slot.permits.available(),
            None => state.counts.keyspace,
        }
    }

    /// Keyspaces with a permit table now (idle ones are swept once there are
    /// [`KEYSPACE_SWEEP_AT`]).
    pub fn keyspaces(&self) -> usize {
        self.read_state().keyspaces.len()
    }

    /// Requests waiting for a permit now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Takes both permits if they are free now, without waiting.
    pub fn try_acquire(&self, keyspace: KeyspaceId) -> Option<Permit> {
        let slot = self.slot(keyspace);
        let keyspace = slot.permits.try_acquire()?;
        let global = self.global.try_acquire()?;
        Some(Permit { _global: global, _keyspace: keyspace })
    }

    /// Takes both permits, waiting in the queue until `deadline` if they are not free.
    ///
    /// Fails at once with [`BusyReason::QueueFull`] when the queue is full and with
    /// [`BusyReason::PermitWaitTimeout`] at `deadline`. Dropping the future leaves the queue
    /// and returns any permit already taken.
    pub async fn acquire(&self, keyspace: KeyspaceId, deadline: Instant) -> Result<Permit> {
        let slot = self.slot(keyspace);
        let held = match slot.permits.try_acquire() {
            Some(keyspace) => match self.global.try_acquire() {
                Some(global) => return Ok(Permit { _global: global, _keyspace: keyspace }),
                None => Some(keyspace),
            },
            None => None,
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
        held: Option<PoolPermit>,
        deadline: Instant,
    ) -> Result<Permit> {
        if !join(&self.waiting, &self.max_queue) {
            return Err(Error::busy(BusyReason::QueueFull));
        }
        if !join(&slot.waiting, &self.keyspace_max_queue) {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::busy(BusyReason::QueueFull));
        }
        let _queued = QueueSlot { global: &self.waiting, keyspace: &slot.waiting };
        let _gauge = self.metrics.as_ref().map(|m| m.waiting_guard(WAIT_TYPE_PERMIT));
        let start = self.clock.now();
        let permits = async {
            let keyspace = match held {
                Some(permit) => permit,
                None => slot.permits.acquire().await?,
            };
            let global = self.global.acquire().await?;
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

    /// The keyspace's semaphore, created on first use with the current count.
    fn slot(&self, keyspace: KeyspaceId) -> Arc<KeyspaceSlot> {
        if let Some(slot) = self.read_state().keyspaces.get(&keyspace) {
            return Arc::clone(slot);
        }
        let mut state = self.state_mut();
        if !state.keyspaces.contains_key(&keyspace) && state.keyspaces.len() >= state.sweep_at {
            state.keyspaces.retain(|_, slot| !slot.is_idle());
            state.sweep_at = (state.keyspaces.len() * 2).max(KEYSPACE_SWEEP_AT);
        }
        let permits = state.counts.keyspace;
        Arc::clone(state.keyspaces.entry(keyspace).or_insert_with(|| {
            Arc::new(KeyspaceSlot { permits: Pool::new(permits), waiting: AtomicUsize::new(0) })
        }))
    }

    // The state's invariants hold between statements, so a poisoned lock is still usable.
    fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn state_mut(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}
