//! Requests and configurations shared by the tests that run real HTTP workers.
#![allow(dead_code, reason = "each test binary uses its own subset")]

use prost::Message;
use rcop_offload::Config;
use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::kvrpcpb::Context;
use rcop_proto::tipb::{ColumnInfo, DagRequest, ExecType, Executor, TableScan};

/// The clock every test offloader reads (query ageing).
pub const NOW_MS: u64 = 1_700_000_000_000;

/// A paging table scan of shard `shard_id` (keyspace 1) with a `timeout_ms` deadline.
pub fn dag_request(shard_id: u64, timeout_ms: u64) -> Request {
    let dag = DagRequest {
        executors: vec![Executor {
            tp: Some(ExecType::TypeTableScan as i32),
            tbl_scan: Some(TableScan {
                table_id: Some(1),
                columns: vec![ColumnInfo {
                    column_id: Some(1),
                    tp: Some(8),
                    ..ColumnInfo::default()
                }],
                ..TableScan::default()
            }),
            ..Executor::default()
        }],
        ..DagRequest::default()
    };
    Request {
        context: Some(Context {
            region_id: shard_id,
            keyspace_id: Some(1),
            max_execution_duration_ms: timeout_ms,
            ..Context::default()
        }),
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        start_ts: NOW_MS << 18,
        ranges: vec![KeyRange {
            start: b"x\0\0\x01t".to_vec().into(),
            end: b"x\0\0\x01u".to_vec().into(),
        }],
        paging_size: 128,
        ..Request::default()
    }
}

/// Workers `urls` with fast test backoff and connect timeout, plus `extra` keys.
#[expect(clippy::unwrap_used, reason = "test configurations are known-valid")]
pub fn config(urls: &[&str], extra: &str) -> Config {
    let list: Vec<String> = urls.iter().map(|u| format!("{u:?}")).collect();
    Config::from_toml_str(&format!(
        "remote-coprocessor-addr = [{}]\n\
         remote-coprocessor-backoff-base = \"20ms\"\n\
         remote-coprocessor-backoff-max = \"80ms\"\n\
         remote-coprocessor-connect-timeout = \"500ms\"\n{extra}",
        list.join(", ")
    ))
    .unwrap()
}
