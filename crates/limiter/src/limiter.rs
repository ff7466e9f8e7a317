//! The worker's admission in one object: cop-limiter, permits and memory reservations.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crate::clock::{Clock, SystemClock};
use crate::config::LimiterConfig;
use crate::cop::CopLimiter;
use crate::error::Result;
use crate::keyspace::KeyspaceId;
use crate::memory::{MemoryLimiter, MemoryReservation};
use crate::metrics::LimiterMetrics;
use crate::permits::{Permit, WorkerLimiter};
use crate::probe::{
    MEMORY_SAMPLE_INTERVAL, MemoryMonitor, MemoryProbe, SamplerHandle, SamplerThread,
    SystemMemoryProbe,
};
use crate::random::{FastRandom, RandomSource};

/// Admission for a worker: [`Limiter::admit`] runs the cop-limiter, then takes the permits;
/// [`Limiter::reserve_memory`] accounts bytes; [`Limiter::record_response`] feeds the
/// throughput window.
///
/// Built with [`Limiter::builder`]. Start the memory sampler with
/// [`Limiter::spawn_memory_sampler`] inside a tokio runtime, or on a thread of its own with
/// [`Limiter::start_memory_sampler`]. [`Limiter::update`] applies a new
/// config at runtime (for an online-config manager).
#[derive(Debug)]
pub struct Limiter {
    /// The config last applied; its lock also serialises updates.
    config: Mutex<LimiterConfig>,
    cop: CopLimiter,
    permits: WorkerLimiter,
    memory: Arc<MemoryLimiter>,
    monitor: Arc<MemoryMonitor>,
    clock: Arc<dyn Clock>,
}

impl Limiter {
    /// A builder with the real probe, system clock, OS-seeded randomness, the machine's cores
    /// and no metrics.
    pub fn builder(config: LimiterConfig) -> LimiterBuilder {
        LimiterBuilder {
            config,
            probe: None,
            clock: Arc::new(SystemClock),
            random: None,
            metrics: None,
            cores: None,
        }
    }

    /// Admits a request of `keyspace` that must finish by `deadline`: waits out memory pressure
    /// if the keyspace is heavy, then takes a keyspace and a global permit.
    ///
    /// The cop-limiter runs first so that throttled requests sleep without holding permits
    /// that lighter keyspaces could use. Errors are retryable ([`crate::Error::is_retryable`]).
    pub async fn admit(&self, keyspace: KeyspaceId, deadline: Instant) -> Result<Permit> {
        self.cop.wait_for_memory(keyspace, deadline).await?;
        self.permits.acquire(keyspace, deadline).await
    }

    /// Reserves `bytes` of the memory capacity, failing at once with the shortfall.
    pub fn reserve_memory(&self, bytes: u64) -> Result<MemoryReservation> {
        self.memory.try_reserve(bytes)
    }

    /// Records the size of a response served for `keyspace`.
    pub fn record_response(&self, keyspace: KeyspaceId, bytes: u64) {
        self.cop.record_response(keyspace, bytes);
    }

    /// Applies `config` to requests admitted from now on, without dropping anything in flight;
    /// fails, changing nothing, if any part of it does not validate.
    ///
    /// - `[cop-limiter]`: see [`CopLimiter::update`];
    /// - `[worker-limiter]`: permit counts (for the cores the limiter was built for) and queue
    ///   bounds, see [`WorkerLimiter::update`]: held permits stay valid, growth admits queued
    ///   waiters at once, a shrink completes as held permits come back;
    /// - `memory-upper-threshold`: resolved against the memory limit read at build time, as
    ///   [`LimiterBuilder::build`] does; held reservations stay valid
    ///   ([`MemoryLimiter::set_capacity`]).
    ///
    /// Concurrent updates are applied one after the other.
    pub fn update(&self, config: &LimiterConfig) -> Result<()> {
        config.validate()?;
        let mut current = self.config.lock().unwrap_or_else(PoisonError::into_inner);
        self.cop.apply(&config.cop_limiter);
        self.permits.apply(&config.worker_limiter);
        self.memory.set_capacity(config.memory_upper_threshold.resolve(self.monitor.limit()));
        *current = config.clone();
        Ok(())
    }

    /// The config last applied (at build time or by [`Limiter::update`]).
    pub fn config(&self) -> LimiterConfig {
        self.config.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Starts refreshing the memory usage every 100 ms on the limiter's clock; stops when the
    /// handle is dropped. Needs a tokio runtime.
    pub fn spawn_memory_sampler(&self) -> SamplerHandle {
        self.monitor.spawn_sampler(Arc::clone(&self.clock))
    }

    /// Starts a thread (`rcop-mem-sampler`) that refreshes the memory usage every 100 ms
    /// ([`MEMORY_SAMPLE_INTERVAL`]) of real time, not on the limiter's clock; needs no tokio
    /// runtime. Dropping the handle stops and joins the thread.
    ///
    /// # Errors
    ///
    /// [`crate::Error::SamplerThread`] if the OS refuses a new thread.
    pub fn start_memory_sampler(&self) -> Result<SamplerThread> {
        self.monitor.start_sampler_thread(MEMORY_SAMPLE_INTERVAL)
    }

    /// The cop-limiter.
    pub fn cop_limiter(&self) -> &CopLimiter {
        &self.cop
    }

    /// The permits.
    pub fn worker_limiter(&self) -> &WorkerLimiter {
        &self.permits
    }

    /// The memory reservations.
    pub fn memory_limiter(&self) -> &Arc<MemoryLimiter> {
        &self.memory
    }

    /// The sampled process memory.
    pub fn memory_monitor(&self) -> &Arc<MemoryMonitor> {
        &self.monitor
    }
}

/// Assembles a [`Limiter`]; every dependency is injectable for tests.
#[derive(Debug)]
pub struct LimiterBuilder {
    config: LimiterConfig,
    probe: Option<Arc<dyn MemoryProbe>>,
    clock: Arc<dyn Clock>,
    random: Option<Arc<dyn RandomSource>>,
    metrics: Option<LimiterMetrics>,
    cores: Option<usize>,
}

impl LimiterBuilder {
    /// Reads memory through `probe` instead of `/proc` and cgroups.
    pub fn probe(mut self, probe: Arc<dyn MemoryProbe>) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Uses `clock` for sleeps, deadlines and sample times.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `random` for the cop-limiter's jittered sleeps.
    pub fn random(mut self, random: Arc<dyn RandomSource>) -> Self {
        self.random = Some(random);
        self
    }

    /// Reports to `metrics` (see [`LimiterMetrics::register`]).
    pub fn metrics(mut self, metrics: LimiterMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Sizes the permits for `cores` cores instead of the machine's parallelism.
    pub fn cores(mut self, cores: usize) -> Self {
        self.cores = Some(cores);
        self
    }

    /// Validates the config, reads the memory limit and a first usage sample, and builds.
    pub fn build(self) -> Result<Limiter> {
        self.config.validate()?;
        let configured = self.config.memory_limit.0;
        let probe = self.probe.unwrap_or_else(|| Arc::new(SystemMemoryProbe::new(configured)));
        let monitor = Arc::new(MemoryMonitor::new(probe)?);
        let cores = self
            .cores
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
        let random = self.random.unwrap_or_else(|| Arc::new(FastRandom::new()));

        let mut cop = CopLimiter::new(&self.config.cop_limiter, Arc::clone(&monitor))?
            .with_clock(Arc::clone(&self.clock))
            .with_random(random);
        let mut permits = WorkerLimiter::new(&self.config.worker_limiter, cores)?
            .with_clock(Arc::clone(&self.clock));
        let mut memory =
            MemoryLimiter::from_threshold(&self.config.memory_upper_threshold, monitor.limit());
        if let Some(m) = self.metrics {
            cop = cop.with_metrics(m.clone());
            permits = permits.with_metrics(m.clone());
            memory = memory.with_metrics(m);
        }
        Ok(Limiter {
            config: Mutex::new(self.config),
            cop,
            permits,
            memory: Arc::new(memory),
            monitor,
            clock: self.clock,
        })
    }
}
