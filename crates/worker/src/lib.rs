//! The remote-coprocessor worker: an HTTP/1.1 service that rebuilds a storage node's
//! snapshot from object storage and runs the pushed-down DAG on it.
//!
//! A storage node POSTs an envelope v1 (`rcop-wire`) to `/coprocessor`. The worker
//!
//! 1. caps the body (`max-request-size`, 413) and decodes it (400 with a message);
//! 2. admits the request through `rcop-limiter` — cop-limiter, then keyspace and global
//!    permits — until the request's deadline (`context.max_execution_duration_ms`, 0 → 20 s;
//!    503 when the wait ends);
//! 3. plans the snapshot rebuild (`rcop-snap`), reserves the bytes it needs
//!    (`memory-upper-threshold`, 503), fetches the blocks under the deadline (503 on timeout)
//!    through the block cache, the disk cache of SST segments under `data-dir` (`[ia]`, when
//!    set) and object storage;
//! 4. runs `rcop-exec` on a dedicated compute pool, never on the I/O runtime, with
//!    `cop-max-resp-size` as the page byte cap;
//! 5. answers 200 with the `coprocessor.Response` (with `exec_details_v2`), or 500 for a
//!    coprocessor error — a protobuf `coprocessor.Response` with
//!    `Content-Type: application/protobuf` when the client accepts it.
//!
//! The first way (feature `grpc`, [`GrpcServer`] on `cop-addr`): TiDB sends the
//! `coprocessor.Request` itself over gRPC (`tikvpb.Tikv/Coprocessor`); the worker asks the
//! region's storage node for a delegate (mem-data and change set) and continues at step 2;
//! errors go back in the response's fields. See [`delegate`] and `docs/wire-format.md`.
//!
//! `GET /healthz` and `GET /metrics` (Prometheus text, upstream's `tikv_worker_*` names plus
//! the limiter's) complete the service. Logs carry upstream's tag
//! `dag ks{keyspace}:{region}:{epoch}:{start_ts}` and one "finished remote coprocessor" line
//! per request.
//!
//! ```no_run
//! use rcop_worker::{Worker, WorkerConfig};
//!
//! # async fn demo() -> Result<(), rcop_worker::Error> {
//! let config = WorkerConfig::from_toml(r#"
//!     addr = "127.0.0.1:0"
//!     [dfs]
//!     backend = "local"
//!     root = "/tmp/rcop-sst"
//! "#)?;
//! let server = Worker::builder(config).build()?.bind().await?;
//! println!("listening on {}", server.local_addr());
//! let handle = server.spawn();
//! // ... serve requests ...
//! handle.shutdown().await?;
//! # Ok(())
//! # }
//! ```
//!
//! Decisions are in `docs/design/0007-worker.md`; every configuration key is in
//! `docs/configuration.md`.

#![warn(missing_docs)]

mod cache;
mod config;
pub mod delegate;
mod error;
#[cfg(feature = "grpc")]
mod grpc;
mod metrics;
#[cfg(feature = "pd")]
mod pd;
mod pool;
#[cfg(feature = "server")]
pub mod remote_cache;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "http")]
mod service;
mod source;
mod worker;

pub use cache::{DEFAULT_IA_DISK_CAP_PERCENT, DEFAULT_IA_MEM_CAP, IaSection, LocalGcSection};
pub use config::{
    DEFAULT_ADDR, DEFAULT_BLOCK_CACHE_PERCENT, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_COP_TIMEOUT,
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_EXECUTION_DURATION,
    DEFAULT_MAX_REQUEST_SIZE, DEFAULT_MAX_RESP_SIZE, DfsBackend, DfsConfig,
    THREAD_POOL_SIZE_FACTOR_RANGE, WorkerConfig,
};
pub use error::{Error, Result};
#[cfg(feature = "grpc")]
pub use grpc::{CopService, DelegateClient, DelegateOutcome, GrpcHandle, GrpcServer};
pub use metrics::{MAX_KEYSPACE_LABELS, StorageCollector, WorkerMetrics};
#[cfg(feature = "pd")]
pub use pd::PdResolver;
#[cfg(feature = "server")]
pub use server::{SHUTDOWN_GRACE, Server, WorkerHandle};
#[cfg(feature = "http")]
pub use service::{HEALTHZ_PATH, METRICS_PATH, READYZ_PATH, WorkerService};
pub use source::{ScanStats, SnapScan};
pub use worker::{CopRequest, Reply, SIZE_DISCOUNT_PERCENT, Worker, WorkerBuilder};
