//! The decision rules one by one (reference §2.3–2.5), the upstream pattern vectors and
//! threshold ages, and configuration parsing.

#![expect(clippy::unwrap_used, reason = "test helpers outside #[test] fns unwrap known-good setup")]
#![allow(clippy::panic, reason = "test assertions")]

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use rcop_offload::{
    Config, Decision, Error, LocalReason, ManualClock, Offloader, PatternStats, Plan,
    RemotePattern, Rules, Sample, SnapshotSource, SourceError, aged_threshold, decide,
    forwarded_request,
};
use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::enginepb::ChangeSet;
use rcop_proto::kvrpcpb::Context;
use rcop_proto::tipb::{
    ColumnInfo, DagRequest, ExecType, Executor, Expr, ExprType, FieldType, IndexScan, Limit,
    Selection, TableScan,
};
use rcop_wire::MemDataWriter;

const NOW_MS: u64 = 1_700_000_000_000;
const MIB: u64 = 1 << 20;

/// A source with a fixed estimate that counts how often it was asked.
struct Fixed {
    estimate: u64,
    calls: Cell<u32>,
}

impl Fixed {
    fn new(estimate: u64) -> Self {
        Fixed { estimate, calls: Cell::new(0) }
    }
}

impl SnapshotSource for Fixed {
    fn estimated_range_blocks_size(&self, _: &[KeyRange]) -> Result<u64, SourceError> {
        self.calls.set(self.calls.get() + 1);
        Ok(self.estimate)
    }

    fn export(&self, _: &Request, _: &mut MemDataWriter<'_>) -> Result<ChangeSet, SourceError> {
        Ok(ChangeSet::default())
    }
}

/// `BIGINT` (MySQL type 8).
fn bigint() -> FieldType {
    FieldType { tp: Some(8), ..FieldType::default() }
}

fn columns(ids: &[i64]) -> Vec<ColumnInfo> {
    ids.iter()
        .map(|&id| ColumnInfo { column_id: Some(id), tp: Some(8), ..ColumnInfo::default() })
        .collect()
}

fn table_scan(table: i64, cols: &[i64]) -> Executor {
    Executor {
        tp: Some(ExecType::TypeTableScan as i32),
        tbl_scan: Some(TableScan {
            table_id: Some(table),
            columns: columns(cols),
            ..TableScan::default()
        }),
        ..Executor::default()
    }
}

fn index_scan(table: i64, index: i64, cols: &[i64]) -> Executor {
    Executor {
        tp: Some(ExecType::TypeIndexScan as i32),
        idx_scan: Some(IndexScan {
            table_id: Some(table),
            index_id: Some(index),
            columns: columns(cols),
            ..IndexScan::default()
        }),
        ..Executor::default()
    }
}

fn column_ref(offset: i64) -> Expr {
    Expr {
        tp: Some(ExprType::ColumnRef as i32),
        val: Some(((offset as u64) ^ (1 << 63)).to_be_bytes().to_vec().into()),
        field_type: Some(bigint()),
        ..Expr::default()
    }
}

/// `col[a] < col[b]` (`LTInt`) for two references, `col[a] IS NULL` (`IntIsNull`) for one.
fn selection(refs: &[i64]) -> Executor {
    let cond = Expr {
        tp: Some(ExprType::ScalarFunc as i32),
        sig: Some(if refs.len() == 2 { 100 } else { 3116 }),
        children: refs.iter().map(|&o| column_ref(o)).collect(),
        field_type: Some(bigint()),
        ..Expr::default()
    };
    Executor {
        tp: Some(ExecType::TypeSelection as i32),
        selection: Some(Box::new(Selection { conditions: vec![cond], ..Selection::default() })),
        ..Executor::default()
    }
}

fn limit(n: u64) -> Executor {
    Executor {
        tp: Some(ExecType::TypeLimit as i32),
        limit: Some(Box::new(Limit { limit: Some(n), ..Limit::default() })),
        ..Executor::default()
    }
}

fn request(executors: Vec<Executor>, ranges: usize, start_ts: u64) -> Request {
    let dag = DagRequest { executors, ..DagRequest::default() };
    Request {
        context: Some(Context { keyspace_id: Some(1), region_id: 7, ..Context::default() }),
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        start_ts,
        ranges: (0..ranges)
            .map(|i| KeyRange {
                start: vec![b'x', 0, 0, 1, i as u8].into(),
                end: vec![b'x', 0, 0, 1, i as u8, 0xff].into(),
            })
            .collect(),
        ..Request::default()
    }
}

/// A TSO timestamp whose physical part is `age` before [`NOW_MS`].
fn ts_aged(age: Duration) -> u64 {
    (NOW_MS - age.as_millis() as u64) << 18
}

fn offloader(extra: &str) -> Offloader {
    let text = format!(
        "remote-coprocessor-addr = \"http://127.0.0.1:1/coprocessor\"\n\
         remote-coprocessor-num-ranges = 4\n{extra}"
    );
    let config = Config::from_toml_str(&text).unwrap();
    Offloader::builder(config).clock(Arc::new(ManualClock::new(NOW_MS))).build().unwrap()
}

fn plan(o: &Offloader, req: &Request, source: &Fixed) -> Plan {
    o.plan(req, source).unwrap()
}

fn pattern_of(req: &Request, num_ranges: usize) -> Option<String> {
    let dag = DagRequest::decode(req.data.clone()).unwrap();
    RemotePattern::extract(req, &dag, num_ranges).map(|p| p.to_string())
}

#[test]
fn upstream_pattern_vectors() {
    let ts = ts_aged(Duration::ZERO);
    // Many ranges: `r`.
    let many = request(vec![table_scan(1, &[1, 2, 3])], 4, ts);
    assert_eq!(pattern_of(&many, 4).as_deref(), Some("k1t1c1c2c3r"));
    // Selection → Limit over a table scan.
    let sel = request(vec![table_scan(1, &[1, 2, 3]), selection(&[1, 2]), limit(10)], 1, ts);
    assert_eq!(pattern_of(&sel, 4).as_deref(), Some("k1t1c1c2c3sc1c2"));
    // … over an index scan.
    let idx = request(vec![index_scan(3, 2, &[1, 2, 3]), selection(&[1, 2]), limit(10)], 1, ts);
    assert_eq!(pattern_of(&idx, 4).as_deref(), Some("k1t3i2c1c2c3sc1c2"));
    // No pattern: few ranges and no Selection → Limit tail.
    assert_eq!(pattern_of(&request(vec![table_scan(1, &[1])], 1, ts), 4), None);
    assert_eq!(pattern_of(&request(vec![table_scan(1, &[1]), limit(1)], 1, ts), 4), None);
    assert_eq!(pattern_of(&request(vec![selection(&[1]), limit(1)], 1, ts), 4), None);
    // A malformed column reference gives no pattern rather than a wrong one.
    let mut bad = selection(&[1]);
    if let Some(s) = bad.selection.as_mut() {
        s.conditions[0].children[0].val = Some(vec![1, 2, 3].into());
    }
    let bad_req = request(vec![table_scan(1, &[1]), bad, limit(1)], 1, ts);
    assert_eq!(pattern_of(&bad_req, 4), None);
}

#[test]
fn upstream_threshold_ages() {
    let s = Duration::from_secs;
    assert_eq!(aged_threshold(512, ts_aged(s(70)), NOW_MS), 64);
    assert_eq!(aged_threshold(512, ts_aged(s(40)), NOW_MS), 128);
    assert_eq!(aged_threshold(512, ts_aged(s(20)), NOW_MS), 256);
    assert_eq!(aged_threshold(512, ts_aged(s(10)), NOW_MS), 512);
    assert_eq!(aged_threshold(512, 0, NOW_MS), 64, "default ts is ancient");
    assert_eq!(aged_threshold(512, u64::MAX, NOW_MS), 512, "max ts is in the future");
    assert_eq!(aged_threshold(512, (NOW_MS + 5_000) << 18, NOW_MS), 512, "future");
    // The boundaries are strict: exactly 15 s is not older than 15 s.
    assert_eq!(aged_threshold(512, ts_aged(s(15)), NOW_MS), 512);
    assert_eq!(aged_threshold(512, ts_aged(Duration::from_millis(15_001)), NOW_MS), 256);
}

#[test]
fn threshold_ages_through_the_offloader() {
    let o = offloader("remote-coprocessor-min-blocks-size = 512");
    let src = Fixed::new(300);
    let young = request(vec![table_scan(1, &[1])], 1, ts_aged(Duration::from_secs(10)));
    assert_eq!(
        plan(&o, &young, &src).decision,
        Decision::Local(LocalReason::BelowThreshold { estimate: 300, threshold: 512 })
    );
    let old = request(vec![table_scan(1, &[1])], 1, ts_aged(Duration::from_secs(20)));
    assert_eq!(plan(&o, &old, &src).decision, Decision::Remote { estimate: 300, threshold: 256 });
}

#[test]
fn size_rule_at_the_boundary() {
    let o = offloader("remote-coprocessor-min-blocks-size = \"32MiB\"");
    let ts = ts_aged(Duration::ZERO);
    let req = request(vec![table_scan(1, &[1, 2])], 2, ts);
    assert_eq!(
        plan(&o, &req, &Fixed::new(32 * MIB - 1)).decision,
        Decision::Local(LocalReason::BelowThreshold {
            estimate: 32 * MIB - 1,
            threshold: 32 * MIB
        })
    );
    assert_eq!(
        plan(&o, &req, &Fixed::new(32 * MIB)).decision,
        Decision::Remote { estimate: 32 * MIB, threshold: 32 * MIB }
    );
}

#[test]
fn small_paging_index_scan_stays_local() {
    // The rule itself (upstream step 2), through `decide`.
    let rules = Rules::new(1, 4, Duration::from_millis(30));
    let stats = PatternStats::new();
    let ts = ts_aged(Duration::ZERO);
    let decide_on = |req: &Request| {
        let dag = DagRequest::decode(req.data.clone()).unwrap();
        decide(&rules, &stats, NOW_MS, req, &dag, &Fixed::new(MIB)).unwrap().decision
    };
    let mut req = request(vec![index_scan(1, 2, &[1])], 1, ts);
    req.paging_size = 4096;
    assert_eq!(
        decide_on(&req),
        Decision::Local(LocalReason::SmallPagingIndexScan { paging_size: 4096 })
    );
    req.paging_size = 4097;
    assert!(decide_on(&req).is_remote());
    // Not an index-only DAG: the rule does not apply.
    let mut table = request(vec![table_scan(1, &[1])], 1, ts);
    table.paging_size = 64;
    assert!(decide_on(&table).is_remote());
    let o = offloader("remote-coprocessor-min-blocks-size = 1");
    assert!(plan(&o, &table, &Fixed::new(MIB)).decision.is_remote());
    let mut idx_sel = request(vec![index_scan(1, 2, &[1]), selection(&[0])], 1, ts);
    idx_sel.paging_size = 64;
    assert!(decide_on(&idx_sel).is_remote());
}

#[test]
fn what_the_worker_cannot_run_stays_local_before_any_estimate() {
    let o = offloader("remote-coprocessor-min-blocks-size = 1");
    let src = Fixed::new(u64::MAX);
    let ts = ts_aged(Duration::ZERO);
    // An index scan over a collation the engine lacks.
    let mut ci = index_scan(1, 2, &[1]);
    if let Some(c) = ci.idx_scan.as_mut().and_then(|i| i.columns.first_mut()) {
        c.tp = Some(15);
        c.collation = Some(-248); // gb18030_chinese_ci
    }
    let idx = request(vec![ci], 1, ts);
    match plan(&o, &idx, &src).decision {
        Decision::Local(LocalReason::Unsupported { feature, detail }) => {
            assert_eq!(feature, rcop_exec::Feature::Collation);
            assert!(detail.contains("-248"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    // A scalar function the engine lacks (AES_ENCRYPT).
    let mut sel = selection(&[0, 0]);
    if let Some(s) = sel.selection.as_mut() {
        s.conditions[0].sig = Some(4502);
    }
    let req = request(vec![table_scan(1, &[1]), sel], 1, ts);
    let decision = plan(&o, &req, &src).decision;
    assert_eq!(
        decision,
        Decision::Local(LocalReason::Unsupported {
            feature: rcop_exec::Feature::ScalarFunc,
            detail: "AesEncrypt (4502)".into()
        })
    );
    if let Decision::Local(reason) = &decision {
        assert_eq!(reason.label(), "unsupported_scalar_func");
        assert_eq!(reason.to_string(), "unsupported ScalarFuncSig: AesEncrypt (4502)");
    }
    // A malformed DAG (a column reference past the scan) is not offloaded either.
    let req = request(vec![table_scan(1, &[1]), selection(&[3])], 1, ts);
    assert_eq!(plan(&o, &req, &src).decision, Decision::Local(LocalReason::MalformedDag));
    assert_eq!(src.calls.get(), 0, "no estimate for what stays local");
}

#[test]
fn limit_without_pattern_stays_local_without_estimating() {
    let o = offloader("remote-coprocessor-min-blocks-size = 1");
    let src = Fixed::new(u64::MAX);
    let req = request(vec![table_scan(1, &[1]), limit(5)], 1, ts_aged(Duration::ZERO));
    let p = plan(&o, &req, &src);
    assert_eq!(p.decision, Decision::Local(LocalReason::Limit));
    assert_eq!(p.pattern, None);
    assert_eq!(src.calls.get(), 0);
}

#[test]
fn lazy_pattern_needs_two_heavy_samples_of_the_last_five() {
    let o = offloader(
        "remote-coprocessor-min-blocks-size = \"1MiB\"\n\
         remote-coprocessor-min-process-duration = \"30ms\"",
    );
    let src = Fixed::new(2 * MIB);
    let req = request(
        vec![table_scan(1, &[1, 2, 3]), selection(&[1, 2]), limit(10)],
        1,
        ts_aged(Duration::ZERO),
    );
    let first = plan(&o, &req, &src);
    assert_eq!(first.decision, Decision::Local(LocalReason::PatternHistory));
    let pattern = first.pattern.unwrap();
    assert_eq!(pattern.as_str(), "k1t1c1c2c3sc1c2");
    assert_eq!(src.calls.get(), 0, "history decides before the estimate");

    let heavy = Sample { processed_size: 3 * MIB, duration: Duration::from_millis(1) };
    let light = Sample { processed_size: 10, duration: Duration::from_millis(1) };
    o.record_local(&pattern, heavy);
    assert_eq!(plan(&o, &req, &src).decision, Decision::Local(LocalReason::PatternHistory));
    o.record_local(&pattern, heavy);
    // Average size 3 MiB > 1 MiB: the history lets it through to the estimate.
    assert_eq!(
        plan(&o, &req, &src).decision,
        Decision::Remote { estimate: 2 * MIB, threshold: MIB }
    );
    assert_eq!(src.calls.get(), 1);
    // And then the estimate still applies.
    assert_eq!(
        plan(&o, &req, &Fixed::new(10)).decision,
        Decision::Local(LocalReason::BelowThreshold { estimate: 10, threshold: MIB })
    );
    // Five light samples push the heavy ones out of the window.
    for _ in 0..5 {
        o.record_local(&pattern, light);
    }
    assert_eq!(o.pattern_stats().sample_count(&pattern), 5);
    assert_eq!(plan(&o, &req, &src).decision, Decision::Local(LocalReason::PatternHistory));
}

#[test]
fn lazy_pattern_by_duration() {
    let o = offloader("remote-coprocessor-min-process-duration = \"30ms\"");
    let req = request(vec![table_scan(1, &[1]), selection(&[0]), limit(1)], 1, 0);
    let pattern = plan(&o, &req, &Fixed::new(0)).pattern.unwrap();
    let ms = |n| Sample { processed_size: 0, duration: Duration::from_millis(n) };
    o.record_local(&pattern, ms(20));
    o.record_local(&pattern, ms(40));
    // Average exactly 30 ms is not above 30 ms.
    assert_eq!(
        plan(&o, &req, &Fixed::new(u64::MAX)).decision,
        Decision::Local(LocalReason::PatternHistory)
    );
    o.record_local(&pattern, ms(60));
    // Average 40 ms: offload (start_ts 0 is ancient, threshold 32 MiB / 8).
    assert_eq!(
        plan(&o, &req, &Fixed::new(u64::MAX)).decision,
        Decision::Remote { estimate: u64::MAX, threshold: 4 * MIB }
    );
}

#[test]
fn many_ranges_skip_the_estimate() {
    let o = offloader("remote-coprocessor-min-blocks-size = \"8MiB\"");
    let src = Fixed::new(0);
    // 4 ranges = remote-coprocessor-num-ranges: pattern `r`, which needs history first.
    let req = request(vec![table_scan(1, &[1, 2, 3])], 4, ts_aged(Duration::ZERO));
    let first = plan(&o, &req, &src);
    assert_eq!(first.decision, Decision::Local(LocalReason::PatternHistory));
    let pattern = first.pattern.unwrap();
    assert_eq!(pattern.as_str(), "k1t1c1c2c3r");
    let slow = Sample { processed_size: 0, duration: Duration::from_secs(1) };
    o.record_local(&pattern, slow);
    o.record_local(&pattern, slow);
    assert_eq!(
        plan(&o, &req, &src).decision,
        Decision::Remote { estimate: 8 * MIB, threshold: 8 * MIB }
    );
    assert_eq!(src.calls.get(), 0, "estimate skipped");
    // Three ranges: estimated.
    let few = request(vec![table_scan(1, &[1, 2, 3])], 3, ts_aged(Duration::ZERO));
    assert_eq!(
        plan(&o, &few, &src).decision,
        Decision::Local(LocalReason::BelowThreshold { estimate: 0, threshold: 8 * MIB })
    );
    assert_eq!(src.calls.get(), 1);
}

#[test]
fn eligibility() {
    let src = Fixed::new(u64::MAX);
    let none = Offloader::builder(Config::default()).build().unwrap();
    let req = request(vec![table_scan(1, &[1])], 1, 0);
    assert_eq!(plan(&none, &req, &src).decision, Decision::Local(LocalReason::NoWorker));
    let o = offloader("");
    // Analyze and checksum: local without `remote-worker-addr`, whatever
    // `remote-coprocessor-addr` says; remote with it, whatever their size.
    let analyze = Request { tp: rcop_proto::REQ_TYPE_ANALYZE, ..req.clone() };
    let checksum = Request { tp: rcop_proto::REQ_TYPE_CHECKSUM, ..req.clone() };
    let small = Fixed::new(0);
    for r in [&analyze, &checksum] {
        assert_eq!(plan(&o, r, &src).decision, Decision::Local(LocalReason::NoWorker));
    }
    let stats = offloader("remote-worker-addr = \"http://127.0.0.1:2\"");
    for r in [&analyze, &checksum] {
        assert!(plan(&stats, r, &small).decision.is_remote(), "{:?}", r.tp);
    }
    assert_eq!(small.calls.get(), 0, "never estimated");
    let other = Request { tp: 106, ..req.clone() };
    assert_eq!(
        plan(&stats, &other, &src).decision,
        Decision::Local(LocalReason::NotDag { tp: 106 })
    );
    assert!(Config::from_toml_str("remote-worker-addr = \"ftp://x\"").is_err());
    // Versioned ranges (TiCI) are not served on this path: local, where the engine refuses.
    let versioned = Request { versioned_ranges: vec![vec![1, 2].into()], ..req.clone() };
    assert_eq!(
        plan(&o, &versioned, &src).decision,
        Decision::Local(LocalReason::UnservedField { field: "versioned ranges" })
    );
    // Each list has its own worker gauge.
    let registry = prometheus::Registry::new();
    let config = Config::from_toml_str(
        "remote-coprocessor-addr = [\"http://127.0.0.1:1\", \"http://127.0.0.1:2\"]\n\
         remote-worker-addr = \"http://127.0.0.1:3\"",
    )
    .unwrap();
    let _o = Offloader::builder(config).registry(&registry).build().unwrap();
    let gauge = |name: &str| {
        registry
            .gather()
            .iter()
            .find(|f| f.name() == name)
            .map(|f| f.get_metric()[0].get_gauge().get_value())
    };
    assert_eq!(
        (gauge("rcop_offload_workers"), gauge("rcop_offload_stats_workers")),
        (Some(2.0), Some(1.0))
    );
    // Their deadline without `max_execution_duration_ms` is upstream's 5 minutes.
    let now = std::time::Instant::now();
    assert_eq!(stats.deadline_of(&checksum, now), now + rcop_offload::STATS_REQUEST_TIMEOUT);
    assert_eq!(stats.deadline_of(&req, now), now + Duration::from_secs(20));
    let garbage = Request { data: vec![0xff, 0xff, 0xff].into(), ..req.clone() };
    assert_eq!(plan(&o, &garbage, &src).decision, Decision::Local(LocalReason::MalformedDag));
    assert!(plan(&o, &req, &src).decision.is_remote());
}

#[test]
fn forwarded_request_is_upstreams_reassembly() {
    let mut req = request(vec![table_scan(1, &[1])], 2, 42);
    req.paging_size = 256;
    req.is_cache_enabled = true;
    req.schema_ver = 9;
    let fwd = forwarded_request(&req);
    assert_eq!(fwd.paging_size, u64::from(u32::MAX));
    assert_eq!((fwd.context, fwd.tp, fwd.start_ts), (req.context.clone(), 103, 42));
    assert_eq!((fwd.data, fwd.ranges), (req.data.clone(), req.ranges.clone()));
    assert!(!fwd.is_cache_enabled);
    assert_eq!(fwd.schema_ver, 0);
}

#[test]
fn config_from_toml() {
    let c = Config::from_toml_str(
        r#"
        remote-coprocessor-addr = "https://w1:19000"
        remote-coprocessor-min-blocks-size = "32000000"
        remote-coprocessor-num-ranges = 100
        remote-coprocessor-min-process-duration = "1s"
        fallback-to-local = true
        remote-coprocessor-backoff-base = "10ms"
        remote-coprocessor-backoff-max = "50ms"
        dfs-remote-cache-addr = "10.0.0.9:20180"
        some-other-kvengine-key = 3
        "#,
    )
    .unwrap();
    assert_eq!(c.remote_coprocessor_addr.0, ["https://w1:19000"]);
    assert_eq!(c.worker_urls().unwrap()[0].to_string(), "https://w1:19000/coprocessor");
    assert_eq!(c.remote_coprocessor_min_blocks_size.as_u64(), 32_000_000);
    assert_eq!(c.remote_coprocessor_num_ranges, 100);
    assert_eq!(c.remote_coprocessor_min_process_duration.as_duration(), Duration::from_secs(1));
    assert!(c.fallback_to_local);
    assert_eq!(c.remote_coprocessor_backoff_max.as_duration(), Duration::from_millis(50));

    let d = Config::from_toml_str("").unwrap();
    assert_eq!(d, Config::default());
    assert_eq!(d.remote_coprocessor_min_blocks_size.as_u64(), 32 * MIB);
    assert_eq!(d.remote_coprocessor_num_ranges, 2048);
    assert_eq!(d.remote_coprocessor_min_process_duration.as_duration(), Duration::from_millis(30));
    assert!(!d.fallback_to_local);
    assert!(d.remote_coprocessor_addr.is_empty());

    let list = Config::from_toml_str(
        "remote-coprocessor-addr = [\"http://a:1\", \"\", \"http://b:2/x\"]\n\
         remote-coprocessor-min-blocks-size = 1048576",
    )
    .unwrap();
    assert_eq!(list.remote_coprocessor_addr.0, ["http://a:1", "http://b:2/x"]);
    assert_eq!(list.remote_coprocessor_min_blocks_size.as_u64(), MIB);

    // The struct nests as the `[kvengine]` section of a larger file.
    #[derive(serde::Deserialize)]
    struct Node {
        kvengine: Config,
    }
    let node: Node =
        toml::from_str("[kvengine]\nremote-coprocessor-min-blocks-size = \"2MiB\"").unwrap();
    assert_eq!(node.kvengine.remote_coprocessor_min_blocks_size.as_u64(), 2 * MIB);
}

#[test]
fn config_errors_name_the_key() {
    let parse_err = |text: &str| Config::from_toml_str(text).unwrap_err().to_string();
    for (text, key, what) in [
        (
            "remote-coprocessor-min-blocks-size = \"32XB\"",
            "remote-coprocessor-min-blocks-size",
            "unknown unit",
        ),
        (
            "remote-coprocessor-min-blocks-size = -1",
            "remote-coprocessor-min-blocks-size",
            "negative",
        ),
        (
            "remote-coprocessor-min-process-duration = \"30\"",
            "remote-coprocessor-min-process-duration",
            "needs a unit",
        ),
        (
            "remote-coprocessor-num-ranges = \"many\"",
            "remote-coprocessor-num-ranges",
            "invalid type",
        ),
        ("remote-coprocessor-addr = 5", "remote-coprocessor-addr", "URL"),
        ("fallback-to-local = \"yes\"", "fallback-to-local", "invalid type"),
    ] {
        let msg = parse_err(text);
        assert!(msg.contains(key) && msg.contains(what), "{text}: {msg}");
    }
    let invalid = |text: &str| match Config::from_toml_str(text) {
        Err(Error::Config { key, reason }) => (key, reason),
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(invalid("remote-coprocessor-num-ranges = 0").0, "remote-coprocessor-num-ranges");
    let (key, reason) = invalid("remote-coprocessor-addr = \"ftp://w:1\"");
    assert_eq!(key, "remote-coprocessor-addr");
    assert!(reason.contains("ftp://w:1"), "{reason}");
    assert_eq!(invalid("remote-coprocessor-addr = [\"http://\"]").0, "remote-coprocessor-addr");
    assert_eq!(
        invalid(
            "remote-coprocessor-backoff-base = \"2s\"\nremote-coprocessor-backoff-max = \"1s\""
        )
        .0,
        "remote-coprocessor-backoff-max"
    );
    assert_eq!(
        invalid("remote-coprocessor-request-timeout = \"0ms\"").0,
        "remote-coprocessor-request-timeout"
    );
    assert_eq!(
        invalid("remote-coprocessor-connect-timeout = \"0s\"").0,
        "remote-coprocessor-connect-timeout"
    );
    assert_eq!(invalid("dfs-remote-cache-addr = \"a\\nb\"").0, "dfs-remote-cache-addr");
    // The error display names the key too.
    let msg = Config::from_toml_str("remote-coprocessor-num-ranges = 0").unwrap_err().to_string();
    assert!(msg.contains("`remote-coprocessor-num-ranges`"), "{msg}");
}

#[test]
fn decisions_display_for_logs() {
    let remote = Decision::Remote { estimate: 64, threshold: 32 };
    assert_eq!(remote.to_string(), "remote (estimate 64 >= threshold 32)");
    let below = Decision::Local(LocalReason::BelowThreshold { estimate: 1, threshold: 2 });
    assert_eq!(below.to_string(), "local (estimate 1 < threshold 2)");
    let paging = LocalReason::SmallPagingIndexScan { paging_size: 64 };
    assert_eq!(paging.to_string(), "paging index scan of 64 rows");
}
