//! The offload decision (upstream `try_remote_dag_handler`, reference §2.3), in upstream order.

use std::fmt;
use std::time::Duration;

use rcop_proto::coprocessor::Request;
use rcop_proto::tipb::{DagRequest, ExecType};
use rcop_proto::{REQ_TYPE_ANALYZE, REQ_TYPE_CHECKSUM, REQ_TYPE_DAG};

use crate::error::SourceError;
use crate::pattern::{PatternStats, RemotePattern};
use crate::source::SnapshotSource;

/// Paging requests scanning only an index with at most this many rows per page stay local
/// (upstream `REMOTE_MIN_PAGING_SIZE`: "the upper operator may finish quickly").
pub const REMOTE_MIN_PAGING_SIZE: u64 = 4096;

/// Bits of a TSO timestamp below its physical milliseconds (`physical = ts >> 18`).
pub const TSO_PHYSICAL_SHIFT: u32 = 18;

/// Why a request stays on the storage node.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalReason {
    /// No worker URL is configured (`remote-coprocessor-addr` for a DAG,
    /// `remote-worker-addr` for analyze and checksum).
    NoWorker,
    /// Only DAG requests (tp 103), and analyze and checksum requests (104, 105) when
    /// `remote-worker-addr` is set, are offloaded.
    NotDag {
        /// The request type.
        tp: i64,
    },
    /// The request sets a field the `Coprocessor` path does not serve (TiCI's versioned
    /// ranges, full-text shard infos): local execution answers the error.
    UnservedField {
        /// Which (`versioned ranges`, `full-text shard infos`).
        field: &'static str,
    },
    /// The request carries batched store tasks (`tasks`): the host splits it
    /// ([`crate::batch::split_tasks`]) and dispatches each part on its own region's source.
    BatchedTasks,
    /// The request bytes given to [`Offloader::dispatch_raw`](crate::Offloader::dispatch_raw)
    /// are not a `coprocessor.Request`; local execution reports the error.
    MalformedRequest,
    /// `data` is not a DAG request the engine can build (undecodable, or malformed in a way
    /// the capability check found); local execution reports the error.
    MalformedDag,
    /// The DAG uses something the worker's engine does not run (the capability check of
    /// `rcop-exec` named it).
    Unsupported {
        /// What kind of thing.
        feature: rcop_exec::Feature,
        /// Which one, e.g. `RegexpSig (4311)`.
        detail: String,
    },
    /// A paging scan of only an index with a small page (≤ [`REMOTE_MIN_PAGING_SIZE`]).
    SmallPagingIndexScan {
        /// The request's paging size.
        paging_size: u64,
    },
    /// A lazy pattern whose recent local runs were light (or too few to judge).
    PatternHistory,
    /// No lazy pattern and the last executor is a Limit.
    Limit,
    /// The estimate is below the (aged) threshold.
    BelowThreshold {
        /// Estimated block bytes.
        estimate: u64,
        /// The threshold after ageing.
        threshold: u64,
    },
}

impl fmt::Display for LocalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalReason::NoWorker => f.write_str("no worker configured"),
            LocalReason::NotDag { tp } => write!(f, "request type {tp} is not DAG"),
            LocalReason::BatchedTasks => f.write_str("batched store tasks (split by the host)"),
            LocalReason::UnservedField { field } => write!(f, "request sets {field}"),
            LocalReason::MalformedRequest => f.write_str("malformed coprocessor request"),
            LocalReason::MalformedDag => f.write_str("malformed DAG request"),
            LocalReason::Unsupported { feature, detail } => {
                write!(f, "unsupported {feature}: {detail}")
            }
            LocalReason::SmallPagingIndexScan { paging_size } => {
                write!(f, "paging index scan of {paging_size} rows")
            }
            LocalReason::PatternHistory => f.write_str("lazy pattern history is light"),
            LocalReason::Limit => f.write_str("ends in Limit"),
            LocalReason::BelowThreshold { estimate, threshold } => {
                write!(f, "estimate {estimate} < threshold {threshold}")
            }
        }
    }
}

impl LocalReason {
    /// A short stable label for the `rcop_offload_local_total{reason}` metric.
    pub fn label(&self) -> String {
        match self {
            LocalReason::NoWorker => "no_worker".into(),
            LocalReason::NotDag { .. } => "not_dag".into(),
            LocalReason::MalformedRequest => "malformed_request".into(),
            LocalReason::BatchedTasks => "batched_tasks".into(),
            LocalReason::UnservedField { .. } => "unserved_field".into(),
            LocalReason::MalformedDag => "malformed_dag".into(),
            LocalReason::Unsupported { feature, .. } => format!("unsupported_{}", feature.label()),
            LocalReason::SmallPagingIndexScan { .. } => "small_paging_index_scan".into(),
            LocalReason::PatternHistory => "pattern_history".into(),
            LocalReason::Limit => "limit".into(),
            LocalReason::BelowThreshold { .. } => "below_threshold".into(),
        }
    }
}

/// The outcome of the decision rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Execute on the storage node.
    Local(LocalReason),
    /// Offload: the estimate reached the threshold.
    Remote {
        /// Estimated block bytes (the configured threshold itself when the request has at
        /// least `remote-coprocessor-num-ranges` ranges and the estimate was skipped).
        estimate: u64,
        /// The threshold after ageing.
        threshold: u64,
    },
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Local(reason) => write!(f, "local ({reason})"),
            Decision::Remote { estimate, threshold } => {
                write!(f, "remote (estimate {estimate} >= threshold {threshold})")
            }
        }
    }
}

impl Decision {
    /// Whether the request is offloaded.
    pub fn is_remote(&self) -> bool {
        matches!(self, Decision::Remote { .. })
    }
}

/// A decision plus the request's lazy pattern, which the caller feeds back after a local
/// execution ([`Offloader::record_local`](crate::Offloader::record_local)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// What to do.
    pub decision: Decision,
    /// The request's lazy pattern, if it has one.
    pub pattern: Option<RemotePattern>,
}

/// The knobs the rules read.
///
/// Non-exhaustive: outside this crate, make one with [`Rules::new`] (or read an offloader's
/// with [`Offloader::rules`](crate::Offloader::rules)).
///
/// ```
/// use std::time::Duration;
/// use rcop_offload::Rules;
///
/// let rules = Rules::new(32 << 20, 2048, Duration::from_millis(30));
/// assert_eq!(rules.num_ranges, 2048);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rules {
    /// `remote-coprocessor-min-blocks-size`.
    pub min_blocks_size: u64,
    /// `remote-coprocessor-num-ranges`.
    pub num_ranges: usize,
    /// `remote-coprocessor-min-process-duration`.
    pub min_process_duration: Duration,
}

impl Rules {
    /// Rules with the given `remote-coprocessor-min-blocks-size`,
    /// `remote-coprocessor-num-ranges` and `remote-coprocessor-min-process-duration`.
    pub fn new(min_blocks_size: u64, num_ranges: usize, min_process_duration: Duration) -> Self {
        Rules { min_blocks_size, num_ranges, min_process_duration }
    }
}

/// Upstream `calc_min_blocks_size`: the threshold halves once the query is older than 15 s,
/// again after 30 s and again after 60 s. The query's age is `now_unix_ms` minus the
/// physical part of `start_ts`; a start in the future keeps the full threshold.
///
/// ```
/// use rcop_offload::aged_threshold;
///
/// let ts_at = |ms: u64| ms << 18;
/// let now = 1_700_000_000_000;
/// assert_eq!(aged_threshold(512, ts_at(now - 10_000), now), 512);
/// assert_eq!(aged_threshold(512, ts_at(now - 20_000), now), 256);
/// assert_eq!(aged_threshold(512, ts_at(now - 40_000), now), 128);
/// assert_eq!(aged_threshold(512, ts_at(now - 70_000), now), 64);
/// ```
pub fn aged_threshold(min_blocks_size: u64, start_ts: u64, now_unix_ms: u64) -> u64 {
    let physical = start_ts >> TSO_PHYSICAL_SHIFT;
    let Some(age_ms) = now_unix_ms.checked_sub(physical) else {
        return min_blocks_size;
    };
    match age_ms {
        a if a > 60_000 => min_blocks_size / 8,
        a if a > 30_000 => min_blocks_size / 4,
        a if a > 15_000 => min_blocks_size / 2,
        _ => min_blocks_size,
    }
}

/// Runs the rules in upstream order (reference §2.3) for a DAG request whose `data` decoded
/// to `dag`. `has_worker` is step 1; the estimate comes from `source` (step 4).
///
/// # Errors
///
/// What `source.estimated_range_blocks_size` reports.
pub fn decide(
    rules: &Rules,
    stats: &PatternStats,
    now_unix_ms: u64,
    request: &Request,
    dag: &DagRequest,
    source: &(impl SnapshotSource + ?Sized),
) -> Result<Plan, SourceError> {
    let pattern = RemotePattern::extract(request, dag, rules.num_ranges);
    let local = |reason, pattern| Ok(Plan { decision: Decision::Local(reason), pattern });
    // 2. Small pages of an index-only scan.
    if request.paging_size > 0
        && request.paging_size <= REMOTE_MIN_PAGING_SIZE
        && matches!(dag.executors.as_slice(), [only] if only.tp() == ExecType::TypeIndexScan)
    {
        let reason = LocalReason::SmallPagingIndexScan { paging_size: request.paging_size };
        return local(reason, pattern);
    }
    // 3. Lazy pattern history, or a final Limit.
    match &pattern {
        Some(p) => {
            if !stats.should_offload(p, rules.min_blocks_size, rules.min_process_duration) {
                return local(LocalReason::PatternHistory, pattern);
            }
        }
        None => {
            if dag.executors.last().is_some_and(|e| e.tp() == ExecType::TypeLimit) {
                return local(LocalReason::Limit, pattern);
            }
        }
    }
    // 4. The estimate (skipped for many ranges).
    let estimate = if request.ranges.len() < rules.num_ranges {
        source.estimated_range_blocks_size(&request.ranges)?
    } else {
        rules.min_blocks_size
    };
    // 5–6. The aged threshold.
    let threshold = aged_threshold(rules.min_blocks_size, request.start_ts, now_unix_ms);
    if estimate < threshold {
        return local(LocalReason::BelowThreshold { estimate, threshold }, pattern);
    }
    Ok(Plan { decision: Decision::Remote { estimate, threshold }, pattern })
}

/// Whether `request` is a DAG request (offloaded by the decision rules).
pub(crate) fn is_dag(request: &Request) -> bool {
    request.tp == REQ_TYPE_DAG
}

/// Whether `request` is an analyze (104) or checksum (105) request: these go to
/// `remote-worker-addr` whenever it is set, whatever their size.
pub(crate) fn is_stats(request: &Request) -> bool {
    request.tp == REQ_TYPE_ANALYZE || request.tp == REQ_TYPE_CHECKSUM
}
