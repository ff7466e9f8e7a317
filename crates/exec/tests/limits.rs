//! Requests sized to hurt: long executor chains, huge column lists, unbounded warning counts.
//! Each must give an error response (or a bounded one), never a crash.

use prost::Message;
use rcop_exec::{Engine, EngineConfig, MAX_COLUMNS, MAX_EXECUTORS, MemStore};
use rcop_proto::coprocessor;
use rcop_proto::tipb::{self, ColumnInfo, DagRequest, ExecType, Executor, Limit, TableScan};

fn scan() -> Executor {
    Executor {
        tp: Some(ExecType::TypeTableScan as i32),
        tbl_scan: Some(TableScan {
            table_id: Some(1),
            columns: vec![ColumnInfo { column_id: Some(1), tp: Some(8), ..Default::default() }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[expect(clippy::unwrap_used, reason = "the engine always answers a decodable SelectResponse")]
fn run(dag: &DagRequest) -> tipb::SelectResponse {
    let req = coprocessor::Request {
        tp: 103,
        start_ts: 10,
        data: dag.encode_to_vec().into(),
        ranges: vec![coprocessor::KeyRange {
            start: b"t".to_vec().into(),
            end: b"u".to_vec().into(),
        }],
        ..Default::default()
    };
    let store = MemStore::from_pairs(Vec::new());
    let resp = Engine::new(EngineConfig::default()).handle(&req, &mut store.scanner());
    tipb::SelectResponse::decode(resp.data).unwrap()
}

#[test]
fn a_long_executor_chain_is_rejected_not_a_stack_overflow() {
    let limit = Executor {
        tp: Some(ExecType::TypeLimit as i32),
        limit: Some(Box::new(Limit { limit: Some(1), ..Default::default() })),
        ..Default::default()
    };
    let mut executors = vec![scan()];
    executors.extend(std::iter::repeat_n(limit.clone(), 100_000));
    let dag = DagRequest { executors, output_offsets: vec![0], ..Default::default() };
    let resp = run(&dag);
    let err = resp.error.expect("an error response");
    assert!(err.msg.unwrap_or_default().contains("executors"));

    // At the cap the chain still runs.
    let mut executors = vec![scan()];
    executors.extend(std::iter::repeat_n(limit, MAX_EXECUTORS - 1));
    let dag = DagRequest { executors, output_offsets: vec![0], ..Default::default() };
    assert!(run(&dag).error.is_none());
}

#[test]
fn huge_column_lists_are_rejected() {
    let mut s = scan();
    if let Some(ts) = s.tbl_scan.as_mut() {
        ts.columns = (0..=MAX_COLUMNS as i64)
            .map(|i| ColumnInfo { column_id: Some(i + 1), tp: Some(8), ..Default::default() })
            .collect();
    }
    let dag = DagRequest { executors: vec![s], output_offsets: vec![0], ..Default::default() };
    assert!(run(&dag).error.is_some());
    let dag = DagRequest {
        executors: vec![scan()],
        output_offsets: vec![0; MAX_COLUMNS + 1],
        ..Default::default()
    };
    assert!(run(&dag).error.is_some());
}
