//! The storage-node side of the remote coprocessor: decide per request whether it is heavy
//! enough to offload, and if so ship it with its snapshot to a worker over pooled HTTP(S).
//!
//! * **Capability gate**: a DAG `rcop-exec` cannot run stays local
//!   ([`LocalReason::Unsupported`]), before anything is estimated.
//! * **Decision** ([`Offloader::plan`], [`decide`]): upstream's rules in upstream order —
//!   small paging index scans stay local; lazy patterns ([`RemotePattern`]) are offloaded
//!   only when their recent local runs were heavy; otherwise a final Limit stays local; the
//!   block-size estimate (skipped for many ranges) is compared with a threshold that halves
//!   as the query ages ([`aged_threshold`]).
//! * **Assembly** ([`Offloader::prepare`]): lock checks and export through the caller's
//!   [`SnapshotSource`], then the envelope of `rcop-wire` with `paging_size = u32::MAX`.
//! * **Sending** ([`RemoteClient`] over a [`Transport`]): `POST` with upstream's headers,
//!   retries on network errors and 503 with equal-jitter [`Backoff`], workers tried in
//!   [`rendezvous_order`] of (keyspace, shard), everything bounded by the request deadline;
//!   responses classified as upstream. The default transport is hyper-util's pooled client
//!   (`HyperTransport`, features `http-client` and `tls`: rustls on ring); a host brings its
//!   own by implementing [`Transport`]. No async runtime is needed above the transport.
//! * **Whole answers**: a non-paging request whose answer a worker cut into pages is
//!   resumed and assembled on the node; a worker that cannot run the DAG (or refuses the
//!   body with 400/413) sends it back to local execution ([`Dispatch::FallbackLocal`]).
//! * **Export** ([`SnapshotSource`], [`ShardSource`], [`conformance`]): the contract a host's
//!   export follows, our shard's implementation, and a kit that checks a host's.
//! * **Delegate** ([`delegate`]): the node's half of the first way — a worker's
//!   `DelegateRequest` answered with mem-data and change set from the same
//!   [`SnapshotSource`] export, errors in the response's fields; feature `grpc` serves it as
//!   `tikvpb.Tikv/DelegateCoprocessor` (tonic).
//! * **Worker discovery** (`Resolver`, feature `http-client`): a worker URL naming a DNS
//!   name (a Kubernetes headless service) stands for every address it resolves to,
//!   re-resolved every `remote-coprocessor-resolve-interval` on a Tokio task; the rendezvous
//!   hash runs over the addresses, a failed answer keeps the last ones, and `https://`
//!   addresses are verified against the name.
//! * **Policy**: `fallback-to-local` ([`Dispatch::FallbackLocal`]), [`Metrics`] under the
//!   upstream names.
//!
//! The crate never executes a request: a local decision is returned to the caller.
//!
//! # Example
//!
//! ```
//! use rcop_offload::{Config, Dispatch, LocalReason, Offloader, SnapshotSource, SourceError};
//! use rcop_proto::coprocessor::{KeyRange, Request};
//! use rcop_proto::enginepb::ChangeSet;
//! use rcop_wire::MemDataWriter;
//!
//! struct Tiny;
//! impl SnapshotSource for Tiny {
//!     fn estimated_range_blocks_size(&self, _: &[KeyRange]) -> Result<u64, SourceError> {
//!         Ok(4096) // far below the 32 MiB default
//!     }
//!     fn export(&self, _: &Request, _: &mut MemDataWriter<'_>) -> Result<ChangeSet, SourceError> {
//!         Ok(ChangeSet::default())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::from_toml_str(r#"remote-coprocessor-addr = "http://127.0.0.1:19000""#)?;
//! let offloader = Offloader::builder(config).build()?;
//! // SELECT c1 FROM t5: a table scan of one BIGINT column.
//! use prost::Message;
//! use rcop_proto::tipb::{ColumnInfo, DagRequest, ExecType, Executor, TableScan};
//! let scan = TableScan {
//!     table_id: Some(5),
//!     columns: vec![ColumnInfo { column_id: Some(1), tp: Some(8), ..Default::default() }],
//!     ..Default::default()
//! };
//! let dag = DagRequest {
//!     executors: vec![Executor { tp: Some(ExecType::TypeTableScan as i32), tbl_scan: Some(scan), ..Default::default() }],
//!     output_offsets: vec![0],
//!     ..Default::default()
//! };
//! let request = Request { tp: rcop_proto::REQ_TYPE_DAG, data: dag.encode_to_vec().into(), ..Request::default() };
//! match offloader.dispatch(&request, &Tiny).await {
//!     Dispatch::Local { reason: LocalReason::BelowThreshold { estimate, .. }, .. } => {
//!         assert_eq!(estimate, 4096); // run it locally
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod assemble;
mod backoff;
pub mod batch;
mod client;
mod config;
pub mod conformance;
mod decision;
pub mod delegate;
mod discovery;
mod error;
#[cfg(feature = "grpc")]
mod grpc;
#[cfg(feature = "http-client")]
mod http;
mod metrics;
mod offloader;
mod pattern;
mod routing;
mod shard;
mod source;
mod swap;
mod transport;

pub use crate::backoff::Backoff;
pub use crate::client::{RemoteClient, Reply};
pub use crate::config::{
    Config, DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_MAX, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RESPONSE_SIZE, DEFAULT_MAX_WHOLE_RESPONSE_SIZE, DEFAULT_MIN_BLOCKS_SIZE,
    DEFAULT_MIN_PROCESS_DURATION, DEFAULT_NUM_RANGES, DEFAULT_POOL_IDLE_TIMEOUT,
    DEFAULT_POOL_MAX_IDLE_PER_HOST, DEFAULT_REQUEST_TIMEOUT, DEFAULT_RESOLVE_INTERVAL,
    MIN_RESOLVE_INTERVAL, ReadableDuration, ReadableSize, WorkerAddrs,
};
pub use crate::decision::{
    Decision, LocalReason, Plan, REMOTE_MIN_PAGING_SIZE, Rules, TSO_PHYSICAL_SHIFT, aged_threshold,
    decide,
};
pub use crate::delegate::{DelegatePermit, DelegatePermits, export_delegate};
#[cfg(feature = "http-client")]
pub use crate::discovery::{Resolver, SystemResolver};
pub use crate::error::{Error, RemoteError, SourceError};
#[cfg(feature = "grpc")]
pub use crate::grpc::{DelegateHost, DelegateService, parse_grpc_timeout};
#[cfg(feature = "http-client")]
pub use crate::http::HyperTransport;
pub use crate::metrics::{METRIC_NAMES, Metrics};
pub use crate::offloader::{
    Answer, Builder, Dispatch, Offloader, PrepareError, Prepared, STATS_REQUEST_TIMEOUT,
    forwarded_request,
};
pub use crate::pattern::{
    MAX_PATTERNS, PATTERN_MIN_SAMPLES, PATTERN_SAMPLES, PatternStats, RemotePattern, Sample,
};
pub use crate::routing::{RoutingKey, rendezvous_order, rendezvous_weight};
pub use crate::shard::{ShardSource, source_error};
pub use crate::source::{Clock, ManualClock, SnapshotSource, SystemClock};
pub use crate::transport::{
    BoxFuture, Post, RequestSigner, Transport, TransportError, TransportReply,
};
