//! The coprocessor engine: runs the DAGs TiDB pushes down, batch at a time, and answers
//! exactly what TiKV would.
//!
//! Data reaches the engine only through the [`ScanSource`] trait (the MVCC snapshot
//! implements it; [`MemStore`] is an in-memory implementation). [`Engine::handle`] takes a
//! `coprocessor.Request` whose `data` is a tipb `DAGRequest` and returns the
//! `coprocessor.Response`: a `SelectResponse` with TypeDefault or TypeChunk rows, or an
//! error in the field TiKV would use. The engine never does I/O and never panics on bad input.
//! Analyze requests (tp 104, TiDB's statistics: row samples, histograms, sketches) are
//! answered by [`analyze`], checksums (tp 105) by [`checksum`].
//! [`Engine::handle_limited`] runs a request under [`ExecLimits`] — a deadline, a cancel flag
//! and a [`MemoryBudget`] — and stops it with an [`Abort`] when one is reached.
//! One request runs on many cores by parts of its key ranges: [`Engine::plan_split`] cuts it
//! at split keys ([`SplitPlan`], or [`Whole`] when it must run on one thread),
//! [`Engine::execute_part`] runs a part on any thread and [`Engine::combine_parts`] joins
//! the parts' answers as TiKV would answer the whole ([`Engine::handle_split`] does all
//! three on scoped threads).
//!
//! Executors ([`Executor`]) pass [`Batch`]es: physical columns decoded lazily (only the
//! columns an expression reads, only for rows still selected) plus a selection vector.
//! Expressions ([`build_expr`], [`eval_expr`]) are built once per request and evaluated over
//! whole batches; constants stay scalars. Decimals of at most 38 digits run in exact fixed
//! point ([`FixedVec`]) on the hot paths.
//!
//! ```
//! use prost::Message;
//! use rcop_datum::{key, row::RowEncoder};
//! use rcop_exec::{Engine, MemStore};
//! use rcop_proto::{coprocessor, tipb};
//!
//! // Table 5: (handle, c1 BIGINT) rows 1..=3 with c1 = 10 * handle.
//! let store = MemStore::from_pairs((1..=3).map(|h| {
//!     let mut k = Vec::new();
//!     key::encode_record_key(&mut k, 5, h);
//!     let mut v = Vec::new();
//!     RowEncoder::new().int(1, 10 * h).finish(&mut v).unwrap();
//!     (k, v)
//! }));
//! let col = |id, pk| tipb::ColumnInfo { column_id: Some(id), tp: Some(8), pk_handle: Some(pk), ..Default::default() };
//! let dag = tipb::DagRequest {
//!     executors: vec![tipb::Executor {
//!         tp: Some(tipb::ExecType::TypeTableScan as i32),
//!         tbl_scan: Some(tipb::TableScan { table_id: Some(5), columns: vec![col(-1, true), col(1, false)], ..Default::default() }),
//!         ..Default::default()
//!     }],
//!     output_offsets: vec![1],
//!     encode_type: Some(tipb::EncodeType::TypeDefault as i32),
//!     ..Default::default()
//! };
//! let (mut start, mut end) = (Vec::new(), Vec::new());
//! key::encode_record_prefix(&mut start, 5);
//! key::encode_record_prefix(&mut end, 6);
//! let req = coprocessor::Request {
//!     tp: rcop_proto::REQ_TYPE_DAG,
//!     data: dag.encode_to_vec().into(),
//!     ranges: vec![coprocessor::KeyRange { start: start.into(), end: end.into() }],
//!     ..Default::default()
//! };
//! let resp = Engine::default().handle(&req, &mut store.scanner());
//! let sel = tipb::SelectResponse::decode(resp.data).unwrap();
//! assert!(sel.error.is_none());
//! assert_eq!(sel.output_counts, [3]);
//! let rows = rcop_datum::Datum::decode_all(sel.chunks[0].rows_data.as_deref().unwrap()).unwrap();
//! assert_eq!(rows, [10, 20, 30].map(rcop_datum::Datum::Int));
//! ```

#![warn(missing_docs)]

mod analyze;
mod batch;
mod capability;
mod checksum;
mod collation;
mod column;
mod ctx;
mod encode;
mod engine;
mod error;
mod exec;
mod expr;
mod fixed;
mod limits;
mod parallel;
mod scan;
mod types;

pub use analyze::{
    MAX_BUCKETS, MAX_CMSKETCH_CELLS, MAX_SAMPLE_SIZE, MAX_SKETCH_SIZE, MAX_TOP_N, analyze,
};
pub use batch::{Batch, LazyCol};
pub use capability::{Capabilities, FunctionShape, check_dag, function_shapes};
pub use checksum::checksum;
pub use collation::{COLLATIONS, Collation, CollationInfo, collation_name};
pub use column::{
    Arg, Bitmap, BytesT, BytesVec, ColData, DecT, DurT, Elem, FixedVec, IntT, RealT, Scalar, TimeT,
    VecCol,
};
pub use ctx::{
    DEFAULT_MAX_ALLOWED_PACKET, EvalConfig, EvalContext, FLAG_DIVIDED_BY_ZERO_AS_WARNING,
    FLAG_IGNORE_TRUNCATE, FLAG_IN_INSERT_STMT, FLAG_IN_UPDATE_OR_DELETE_STMT,
    FLAG_OVERFLOW_AS_WARNING, FLAG_TRUNCATE_AS_WARNING, MODE_ERROR_FOR_DIVISION_BY_ZERO,
    MODE_STRICT_ALL_TABLES, MODE_STRICT_TRANS_TABLES,
};
pub use encode::{count_rows, encode_chunk, encode_datum, encode_default};
pub use engine::{
    BATCH_GROW_FACTOR, BATCH_INITIAL_SIZE, BATCH_MAX_SIZE, DagOutput, ENCODE_TYPES, EXECUTORS,
    Engine, EngineConfig, MAX_COLUMNS, MAX_EXECUTORS, PageLimits, build_executors, error_response,
    unserved_field,
};
pub use error::{Error, Feature, Result};
pub use exec::{
    AggregationExecutor, BatchResult, ExecEnv, ExecStats, Executor, IndexScanExecutor,
    LimitExecutor, PartitionTopNExecutor, ProjectionExecutor, RawRows, ScanCounters,
    SelectionExecutor, SimpleAggregationExecutor, StreamAggregationExecutor, TableScanExecutor,
    TopNExecutor,
};
pub use expr::build::build as build_expr;
pub use expr::eval::eval as eval_expr;
pub use expr::like::MAX_LIKE_PATTERN;
pub use expr::{DEFAULT_MAX_DEPTH, Node, Value};
pub use limits::{Abort, CHECK_EVERY, CappedBudget, ExecLimits, MemoryBudget};
pub use parallel::{
    Combine, MIN_SPLIT_PAGING_SIZE, PartOutput, SplitPlan, Whole, pick_split_keys, scan_split_keys,
};
pub use scan::{KeyRange, KvBatch, MemScanner, MemStore, ScanError, ScanSource, ScanStatus};
pub use types::{Charset, EvalType, FLAG_NOT_NULL, FLAG_UNSIGNED, FieldType};
