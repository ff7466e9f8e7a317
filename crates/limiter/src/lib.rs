//! Worker admission for the remote coprocessor: keep the worker alive under memory pressure
//! and keep one keyspace (tenant) from starving the others.
//!
//! Three limiters, usable alone or together through [`Limiter`]:
//! - [`CopLimiter`] (`[cop-limiter]`): when the process RSS is above `high-mem-ratio` × the
//!   memory limit, requests of keyspaces whose recent response bytes are at or above the
//!   per-keyspace average wait, with jitter, until memory drops or their deadline passes;
//! - [`WorkerLimiter`] (`[worker-limiter]`): a global and a per-keyspace concurrency
//!   [`Permit`], with a bounded wait queue;
//! - [`MemoryLimiter`] (`memory-upper-threshold`): byte [`MemoryReservation`]s that fail at once
//!   with the shortfall.
//!
//! Every rejection is an [`Error`] with [`Error::is_retryable`] true: the service answers 503 so
//! that the storage node retries. Time ([`Clock`]), randomness ([`RandomSource`]) and memory
//! ([`MemoryProbe`]) are injectable; [`ManualClock`], [`FastRandom::with_seed`] and
//! [`ManualMemoryProbe`] make tests deterministic. Metrics ([`LimiterMetrics`]) register in a
//! registry the caller passes in.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use rcop_limiter::{Clock, KeyspaceId, Limiter, LimiterConfig, ManualClock, ManualMemoryProbe};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let config: LimiterConfig = toml::from_str(r#"
//!     memory-upper-threshold = "50%"
//!     [cop-limiter]
//!     high-mem-ratio = 0.8
//! "#).unwrap();
//! let clock = Arc::new(ManualClock::new());
//! let limiter = Limiter::builder(config)
//!     .probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30))) // 1 GiB used of 8 GiB
//!     .clock(clock.clone())
//!     .cores(2)
//!     .build()?;
//!
//! let deadline = clock.now() + Duration::from_secs(20);
//! let permit = limiter.admit(KeyspaceId(1), deadline).await?;
//! let snapshot_memory = limiter.reserve_memory(64 << 20)?;
//! // ... rebuild the snapshot, run the request ...
//! limiter.record_response(KeyspaceId(1), 4096);
//! drop((snapshot_memory, permit));
//!
//! // Half of 8 GiB can be reserved: what does not fit beside others' reservations fails at
//! // once, retryably; more than the whole half can never fit.
//! let held = limiter.reserve_memory(3 << 30)?;
//! assert!(limiter.reserve_memory(2 << 30).unwrap_err().is_retryable());
//! drop(held);
//! let err = limiter.reserve_memory(5 << 30).unwrap_err();
//! assert!(!err.is_retryable() && err.never_fits());
//! # Ok::<(), rcop_limiter::Error>(())
//! # }).unwrap();
//! ```

#![warn(missing_docs)]

mod clock;
mod config;
mod cop;
mod error;
mod keyspace;
mod limiter;
mod memory;
mod metrics;
mod permits;
mod probe;
mod random;
mod threshold;
mod window;

pub use clock::{BoxFuture, Clock, ManualClock, SystemClock};
pub use config::{CopLimiterConfig, LimiterConfig, PermitCounts, WorkerLimiterConfig};
pub use cop::CopLimiter;
pub use error::{BusyReason, Error, Result};
pub use keyspace::KeyspaceId;
pub use limiter::{Limiter, LimiterBuilder};
pub use memory::{MemoryLimiter, MemoryReservation};
pub use metrics::{LimiterMetrics, WAIT_TYPE_COP_LIMITER, WAIT_TYPE_PERMIT};
pub use permits::{KEYSPACE_SWEEP_AT, Permit, WorkerLimiter};
pub use probe::{
    MEMORY_SAMPLE_INTERVAL, ManualMemoryProbe, MemoryMonitor, MemoryProbe, ProcessMemoryProbe,
    SamplerHandle, SamplerThread, SystemMemoryProbe,
};
pub use random::{FastRandom, RandomSource};
pub use rcop_units::{ParseError, ReadableDuration, ReadableSize};
pub use threshold::MemoryThreshold;
