//! The offload path above the [`Transport`] trait, driven by in-memory transports and
//! `futures::executor::block_on` — no Tokio runtime anywhere: retries, backoff on the
//! transport's timer, failover order, classification, the worker refusals that send a
//! request back to the node, and whole answers assembled from a worker's pages (the worker
//! here is `rcop-exec`'s engine answering from the envelope's request).

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns unwrap known-good setup"
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::executor::block_on;
use prometheus::{IntCounterVec, Opts, Registry};
use prost::Message;
use rcop_datum::key;
use rcop_datum::row::RowEncoder;
use rcop_exec::{Engine, EngineConfig, MemStore};
use rcop_offload::{
    BoxFuture, Config, Dispatch, LocalReason, ManualClock, Offloader, Post, RemoteError,
    SnapshotSource, SourceError, Transport, TransportError, TransportReply,
};
use rcop_proto::coprocessor::{KeyRange, Request, Response};
use rcop_proto::enginepb::ChangeSet;
use rcop_proto::kvrpcpb::Context;
use rcop_proto::tipb;
use rcop_wire::{Envelope, MemDataWriter};

const NOW_MS: u64 = 1_700_000_000_000;
const TABLE: i64 = 70;

/// A source that says every request is heavy and exports nothing.
struct Heavy;

impl SnapshotSource for Heavy {
    fn estimated_range_blocks_size(&self, _: &[KeyRange]) -> Result<u64, SourceError> {
        Ok(u64::MAX)
    }

    fn export(&self, _: &Request, _: &mut MemDataWriter<'_>) -> Result<ChangeSet, SourceError> {
        Ok(ChangeSet { shard_id: 1, ..ChangeSet::default() })
    }
}

type Script = dyn Fn(&str, &Request, usize) -> Result<TransportReply, TransportError> + Send + Sync;

/// A transport answering from a script; records every POST and every sleep.
struct Scripted {
    script: Box<Script>,
    posts: Mutex<Vec<(String, Request)>>,
    sleeps: Mutex<Vec<Duration>>,
    calls: AtomicUsize,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

impl Scripted {
    fn new(
        script: impl Fn(&str, &Request, usize) -> Result<TransportReply, TransportError>
        + Send
        + Sync
        + 'static,
    ) -> Arc<Scripted> {
        Arc::new(Scripted {
            script: Box::new(script),
            posts: Mutex::new(Vec::new()),
            sleeps: Mutex::new(Vec::new()),
            calls: AtomicUsize::new(0),
        })
    }

    fn posts(&self) -> Vec<(String, Request)> {
        self.posts.lock().unwrap().clone()
    }
}

impl Transport for Scripted {
    fn post<'a>(&'a self, post: Post<'a>) -> BoxFuture<'a, Result<TransportReply, TransportError>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let request = Envelope::decode(post.body.clone()).unwrap().decode_request().unwrap();
        self.posts.lock().unwrap().push((post.url.to_owned(), request.clone()));
        let reply = (self.script)(post.url, &request, n);
        Box::pin(async move {
            match reply {
                Ok(r) if r.body.len() as u64 > post.max_response_bytes => {
                    Err(TransportError::TooLarge { limit: post.max_response_bytes })
                }
                other => other,
            }
        })
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.sleeps.lock().unwrap().push(duration);
        // A real wait, so deadlines mean something; the tests keep backoff in milliseconds.
        Box::pin(async move { std::thread::sleep(duration) })
    }
}

fn ok(response: &Response) -> Result<TransportReply, TransportError> {
    Ok(TransportReply::new(200, None, Bytes::from(response.encode_to_vec())))
}

fn status(code: u16, body: &str) -> Result<TransportReply, TransportError> {
    Ok(TransportReply::new(code, Some("text/plain".into()), Bytes::from(body.to_owned())))
}

fn config(workers: &[&str], extra: &str) -> Config {
    let list: Vec<String> = workers.iter().map(|u| format!("{u:?}")).collect();
    Config::from_toml_str(&format!(
        "remote-coprocessor-addr = [{}]\n\
         remote-coprocessor-backoff-base = \"5ms\"\n\
         remote-coprocessor-backoff-max = \"20ms\"\n{extra}",
        list.join(", ")
    ))
    .unwrap()
}

fn offloader(config: Config, transport: Arc<dyn Transport>, registry: &Registry) -> Offloader {
    Offloader::builder(config)
        .transport(transport)
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .registry(registry)
        .build()
        .unwrap()
}

fn counter(registry: &Registry, name: &str, label: (&str, &str)) -> u64 {
    registry
        .gather()
        .iter()
        .filter(|f| f.name() == name)
        .flat_map(|f| f.get_metric().iter())
        .filter(|m| m.get_label().iter().any(|l| l.name() == label.0 && l.value() == label.1))
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}

fn column(id: i64, tp: i32) -> tipb::ColumnInfo {
    tipb::ColumnInfo { column_id: Some(id), tp: Some(tp), ..Default::default() }
}

/// `SELECT handle, c1, c2 FROM t` (c1 BIGINT = 3 × handle, c2 VARCHAR of 40 bytes), with an
/// optional Limit, ascending or descending, in either encoding.
fn scan_dag(desc: bool, limit: Option<u64>, chunk: bool) -> tipb::DagRequest {
    let mut executors = vec![tipb::Executor {
        tp: Some(tipb::ExecType::TypeTableScan as i32),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(TABLE),
            columns: vec![
                tipb::ColumnInfo { pk_handle: Some(true), ..column(-1, 8) },
                column(1, 8),
                column(2, 15),
            ],
            desc: Some(desc),
            ..Default::default()
        }),
        ..Default::default()
    }];
    if let Some(n) = limit {
        executors.push(tipb::Executor {
            tp: Some(tipb::ExecType::TypeLimit as i32),
            limit: Some(Box::new(tipb::Limit { limit: Some(n), ..Default::default() })),
            ..Default::default()
        });
        // A projection on top, so the decision's "ends in Limit" rule does not keep it local.
        let col = |o: u64, tp: i32| tipb::Expr {
            tp: Some(tipb::ExprType::ColumnRef as i32),
            val: Some((o ^ (1 << 63)).to_be_bytes().to_vec().into()),
            field_type: Some(tipb::FieldType { tp: Some(tp), ..Default::default() }),
            ..Default::default()
        };
        executors.push(tipb::Executor {
            tp: Some(tipb::ExecType::TypeProjection as i32),
            projection: Some(Box::new(tipb::Projection {
                exprs: vec![col(0, 8), col(1, 8), col(2, 15)],
                ..Default::default()
            })),
            ..Default::default()
        });
    }
    tipb::DagRequest {
        executors,
        output_offsets: vec![0, 1, 2],
        encode_type: Some(if chunk { 1 } else { 0 }),
        collect_execution_summaries: Some(true),
        ..Default::default()
    }
}

fn record(h: i64) -> Vec<u8> {
    let mut k = Vec::new();
    key::encode_record_key(&mut k, TABLE, h);
    k
}

fn store(rows: i64) -> MemStore {
    MemStore::from_pairs((1..=rows).map(|h| {
        let mut v = Vec::new();
        let text = format!("{h:040}");
        RowEncoder::new().int(1, 3 * h).bytes(2, text.as_bytes()).finish(&mut v).unwrap();
        (record(h), v)
    }))
}

fn dag_request(dag: &tipb::DagRequest, ranges: Vec<KeyRange>, paging_size: u64) -> Request {
    Request {
        context: Some(Context { region_id: 3, keyspace_id: Some(1), ..Context::default() }),
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        start_ts: NOW_MS << 18,
        ranges,
        paging_size,
        ..Request::default()
    }
}

fn range(a: i64, b: i64) -> KeyRange {
    KeyRange { start: record(a).into(), end: record(b).into() }
}

/// A worker: `rcop-exec` with a small response cap answering the envelope's request.
fn engine_worker(store: MemStore, cap: usize) -> Arc<Scripted> {
    let engine = Engine::new(EngineConfig::default().with_max_response_bytes(cap));
    let store = Mutex::new(store);
    Scripted::new(move |_, request, _| {
        let store = store.lock().unwrap();
        ok(&engine.handle(request, &mut store.scanner()))
    })
}

fn local(store: &MemStore, request: &Request) -> tipb::SelectResponse {
    let resp = Engine::default().handle(request, &mut store.scanner());
    tipb::SelectResponse::decode(resp.data).unwrap()
}

/// The rows of a response as `(handle, c1, c2)`, whatever the encoding and chunking.
fn rows(sel: &tipb::SelectResponse) -> Vec<(i64, i64, Vec<u8>)> {
    use rcop_datum::chunk::ChunkColumnRef;
    use rcop_datum::{Datum, Reader};
    let mut out = Vec::new();
    for c in &sel.chunks {
        let data = c.rows_data.as_deref().unwrap_or(&[]);
        if sel.encode_type() == tipb::EncodeType::TypeChunk {
            let mut r = Reader::new(data);
            let h = ChunkColumnRef::decode(&mut r, Some(8)).unwrap();
            let c1 = ChunkColumnRef::decode(&mut r, Some(8)).unwrap();
            let c2 = ChunkColumnRef::decode(&mut r, None).unwrap();
            let int = |c: &ChunkColumnRef<'_>, i| {
                i64::from_le_bytes(c.get(i).unwrap().try_into().unwrap())
            };
            for i in 0..h.len() {
                out.push((int(&h, i), int(&c1, i), c2.get(i).unwrap().to_vec()));
            }
        } else {
            let datums = Datum::decode_all(data).unwrap();
            for row in datums.chunks(3) {
                match row {
                    [Datum::Int(h), Datum::Int(c1), Datum::Bytes(c2)] => {
                        out.push((*h, *c1, c2.clone()))
                    }
                    other => panic!("unexpected row {other:?}"),
                }
            }
        }
    }
    out
}

fn plain_counter(registry: &Registry, name: &str) -> u64 {
    registry
        .gather()
        .iter()
        .filter(|f| f.name() == name)
        .flat_map(|f| f.get_metric().iter())
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}

fn respond(d: Dispatch) -> (Response, u32) {
    match d {
        Dispatch::Respond { answer, pages, .. } => (answer.into_response(), pages),
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[test]
fn retries_back_off_on_the_transports_timer_and_fail_over() {
    let registry = Registry::new();
    let answer = Response { other_error: String::new(), ..Response::default() };
    let t = Scripted::new(move |_, _, n| match n {
        0 | 1 => status(503, "busy"),
        2 => Err(TransportError::network(std::io::Error::other("reset"))),
        _ => ok(&answer),
    });
    let o = offloader(config(&["http://w1", "http://w2"], ""), t.clone(), &registry);
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
    let (resp, pages) = respond(block_on(o.dispatch(&request, &Heavy)));
    assert!(resp.other_error.is_empty());
    assert_eq!(pages, 1);
    let posts = t.posts();
    assert_eq!(posts.len(), 4);
    // Each round tries both workers in the shard's rendezvous order, then backs off once.
    let order: Vec<String> = o
        .client()
        .order(rcop_offload::RoutingKey::of(&request))
        .iter()
        .map(|&i| format!("{}", o.client().workers()[i]))
        .collect();
    let urls: Vec<&str> = posts.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(urls, [&order[0], &order[1], &order[0], &order[1]].map(String::as_str));
    let sleeps = t.sleeps.lock().unwrap().clone();
    assert_eq!(sleeps.len(), 1);
    // The first step doubles the 5 ms base, then takes equal jitter: [5 ms, 10 ms].
    assert!(
        (Duration::from_millis(5)..=Duration::from_millis(10)).contains(&sleeps[0]),
        "{sleeps:?}"
    );
    assert_eq!(
        counter(
            &registry,
            "rcop_offload_request_error_total",
            ("reason", "remote_service_unavailable")
        ),
        2
    );
    assert_eq!(
        counter(&registry, "rcop_offload_request_error_total", ("reason", "remote_network")),
        1
    );
    // Forwarded as upstream: paging_size = u32::MAX.
    assert_eq!(posts[0].1.paging_size, u64::from(u32::MAX));
}

#[test]
fn the_deadline_bounds_the_retry_rounds() {
    let t = Scripted::new(|_, _, _| status(503, "busy"));
    let o = offloader(config(&["http://w1"], ""), t.clone(), &Registry::new());
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
    let started = Instant::now();
    let deadline = started + Duration::from_millis(80);
    let (resp, _) = respond(block_on(o.dispatch_with_deadline(&request, &Heavy, deadline)));
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(resp.region_error.unwrap().server_is_busy.unwrap().reason, "deadline exceeded");
    assert!(t.posts().len() >= 3, "several rounds before the deadline");
}

#[test]
fn errors_are_classified_as_upstream() {
    let cases: Vec<(Result<TransportReply, TransportError>, &str)> = vec![
        (status(500, "boom"), "answered 500: boom"),
        (Ok(TransportReply::new(200, None, Bytes::from_static(b"\xff\xff"))), "malformed response"),
        (Err(TransportError::BadRequest("bad header".into())), "bad header"),
    ];
    for (reply, want) in cases {
        let reply = Mutex::new(Some(reply));
        let t = Scripted::new(move |_, _, _| reply.lock().unwrap().take().unwrap());
        let o = offloader(config(&["http://w1"], ""), t.clone(), &Registry::new());
        let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
        let (resp, _) = respond(block_on(o.dispatch(&request, &Heavy)));
        assert!(resp.other_error.contains(want), "{want}: {}", resp.other_error);
        assert_eq!(t.posts().len(), 1, "{want}: not retried");
    }
    // A protobuf error body is relayed as it is.
    let lock = Response { other_error: "x".into(), ..Response::default() };
    let body = Bytes::from(lock.encode_to_vec());
    let t = Scripted::new(move |_, _, _| {
        Ok(TransportReply::new(500, Some("application/protobuf".into()), body.clone()))
    });
    let o = offloader(config(&["http://w1"], ""), t, &Registry::new());
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
    assert_eq!(respond(block_on(o.dispatch(&request, &Heavy))).0.other_error, "x");
}

/// What no worker can answer runs on the node, whatever `fallback-to-local` says: an
/// "unsupported" answer (ours or TiKV's wording), 400, 413, an oversized assembled answer.
#[test]
fn refusals_send_the_request_back_to_the_node() {
    let select_error = |msg: &str| Response {
        data: tipb::SelectResponse {
            error: Some(tipb::Error { code: Some(1105), msg: Some(msg.into()) }),
            ..Default::default()
        }
        .encode_to_vec()
        .into(),
        ..Response::default()
    };
    let ours = select_error("unsupported ScalarFuncSig: RegexpSig (4311)");
    let tikvs = Response {
        other_error: "ScalarFunction RegexpSig is not supported in batch mode".into(),
        ..Response::default()
    };
    type Reply = Box<dyn Fn() -> Result<TransportReply, TransportError> + Send + Sync>;
    let cases: Vec<(Reply, &str)> = vec![
        (Box::new(move || ok(&ours)), "remote_unsupported"),
        (
            Box::new(move || {
                Ok(TransportReply::new(
                    500,
                    Some("application/protobuf".into()),
                    tikvs.encode_to_vec().into(),
                ))
            }),
            "remote_unsupported",
        ),
        (Box::new(|| status(400, "malformed envelope")), "remote_bad_request"),
        (Box::new(|| status(413, "too large")), "remote_payload_too_large"),
    ];
    for (reply, label) in cases {
        let registry = Registry::new();
        let t = Scripted::new(move |_, _, _| reply());
        let o = offloader(config(&["http://w1", "http://w2"], ""), t.clone(), &registry);
        let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
        for _ in 0..3 {
            match block_on(o.dispatch(&request, &Heavy)) {
                Dispatch::FallbackLocal { error, .. } => {
                    assert!(error.requires_local(), "{label}: {error}");
                    assert_eq!(error.reason(), label);
                }
                other => panic!("{label}: {other:?}"),
            }
        }
        assert_eq!(t.posts().len(), 3, "{label}: one worker asked per request, no retry");
        let fallback = format!("fallback_{label}");
        assert_eq!(counter(&registry, "rcop_offload_local_total", ("reason", &fallback)), 3);
        assert_eq!(counter(&registry, "rcop_offload_requests_total", ("path", "local")), 3);
    }
    // A still-retryable failure goes back only with `fallback-to-local` on.
    let t = Scripted::new(|_, _, _| status(503, "busy"));
    let o = offloader(config(&["http://w1"], "fallback-to-local = true"), t, &Registry::new());
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
    assert!(matches!(block_on(o.dispatch(&request, &Heavy)), Dispatch::FallbackLocal { .. }));
}

/// A non-paging answer larger than the worker's page cap comes back whole and equal to the
/// local answer: ascending and descending, several ranges, both encodings, with a Limit.
#[test]
fn non_paging_answers_are_assembled_whole() {
    let data = store(3000);
    for (desc, limit, chunk) in [
        (false, None, true),
        (true, None, true),
        (false, None, false),
        (true, None, false),
        (false, Some(1234), true),
        (true, Some(777), false),
        (false, Some(5000), true),
    ] {
        let what = format!("desc {desc}, limit {limit:?}, chunk {chunk}");
        let dag = scan_dag(desc, limit, chunk);
        let ranges = vec![range(1, 400), range(400, 401), range(900, 2500), range(2600, 4000)];
        let request = dag_request(&dag, ranges, 0);
        let t = engine_worker(store(3000), 8 << 10);
        let registry = Registry::new();
        let o = offloader(config(&["http://w1"], ""), t.clone(), &registry);
        let (resp, pages) = respond(block_on(o.dispatch(&request, &Heavy)));
        assert!(resp.range.is_none(), "{what}: a whole answer has no range");
        assert!(pages > 3, "{what}: {pages} pages");
        let got = tipb::SelectResponse::decode(resp.data).unwrap();
        let want = local(&data, &request);
        let (got_rows, want_rows) = (rows(&got), rows(&want));
        assert!(!want_rows.is_empty());
        assert_eq!(got_rows, want_rows, "{what}");
        assert_eq!(got.output_counts, want.output_counts, "{what}");
        assert_eq!(
            rcop_exec::count_rows(&got, 3).unwrap(),
            rcop_exec::count_rows(&want, 3).unwrap(),
            "{what}"
        );
        let produced = |s: &tipb::SelectResponse| {
            s.execution_summaries.last().and_then(|e| e.num_produced_rows)
        };
        assert_eq!(produced(&got), produced(&want), "{what}");
        assert_eq!(
            plain_counter(&registry, "rcop_offload_resumed_pages_total"),
            u64::from(pages) - 1,
            "{what}"
        );
        assert_eq!(t.posts().len(), pages as usize, "{what}");
        // Every page after the first asked for the rest only, on the same snapshot.
        for (_, sent) in t.posts().iter().skip(1) {
            assert!(sent.ranges.len() <= 4);
            assert_eq!(sent.paging_size, u64::from(u32::MAX));
        }
    }
}

#[test]
fn paging_answers_keep_their_range_for_tidb() {
    let t = engine_worker(store(3000), 8 << 10);
    let o = offloader(config(&["http://w1"], ""), t.clone(), &Registry::new());
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 4000)], 1024);
    let (resp, pages) = respond(block_on(o.dispatch(&request, &Heavy)));
    assert_eq!(pages, 1);
    assert!(resp.range.is_some(), "TiDB resumes a paging request itself");
    assert_eq!(t.posts().len(), 1);
}

#[test]
fn an_assembled_answer_past_its_bound_runs_locally() {
    let t = engine_worker(store(3000), 8 << 10);
    let o = offloader(
        config(&["http://w1"], "remote-coprocessor-max-whole-response-size = \"32KiB\""),
        t,
        &Registry::new(),
    );
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 4000)], 0);
    match block_on(o.dispatch(&request, &Heavy)) {
        Dispatch::FallbackLocal { error: RemoteError::AnswerTooLarge { limit }, .. } => {
            assert_eq!(limit, 32 << 10);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn raw_requests_and_raw_answers_pass_through_unchanged() {
    let response = Response {
        other_error: String::new(),
        data: Bytes::from_static(b"\x1a\x00"),
        ..Response::default()
    };
    let body = Bytes::from(response.encode_to_vec());
    let sent = body.clone();
    let t = Scripted::new(move |_, _, _| Ok(TransportReply::new(200, None, sent.clone())));
    let o = offloader(config(&["http://w1"], ""), t, &Registry::new());
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
    match block_on(o.dispatch_raw(Bytes::from(request.encode_to_vec()), &Heavy)) {
        Dispatch::Respond { answer, .. } => assert_eq!(answer.into_bytes(), body),
        other => panic!("{other:?}"),
    }
    match block_on(o.dispatch_raw(Bytes::from_static(b"\xff\xff\xff"), &Heavy)) {
        Dispatch::Local { reason: LocalReason::MalformedRequest, .. } => {}
        other => panic!("{other:?}"),
    }
}

/// A host registry that already holds TiKV's own coprocessor metrics takes ours too.
#[test]
fn metrics_live_beside_tikvs_own() {
    let registry = Registry::new();
    let tikv = IntCounterVec::new(
        Opts::new("tikv_coprocessor_request_error", "Total number of push down request error."),
        &["reason"],
    )
    .unwrap();
    registry.register(Box::new(tikv)).unwrap();
    let t = Scripted::new(|_, _, _| status(503, "busy"));
    let _o = offloader(config(&["http://w1"], ""), t, &registry);
}

#[test]
fn runtime_updates_keep_the_transport_and_the_pattern_history() {
    let t = Scripted::new(|_, _, _| ok(&Response::default()));
    let o = offloader(config(&["http://w1"], ""), t.clone(), &Registry::new());
    let request = dag_request(&scan_dag(false, None, true), vec![range(1, 10)], 0);
    respond(block_on(o.dispatch(&request, &Heavy)));
    o.update(&config(&["http://w2", "http://w3"], "remote-coprocessor-min-blocks-size = \"1GiB\""))
        .unwrap();
    assert_eq!(o.client().workers().len(), 2);
    assert_eq!(o.rules().min_blocks_size, 1 << 30);
    respond(block_on(o.dispatch(&request, &Heavy)));
    let urls: Vec<String> = t.posts().into_iter().map(|(u, _)| u).collect();
    assert_eq!(urls[0], "http://w1/coprocessor");
    assert!(urls[1] == "http://w2/coprocessor" || urls[1] == "http://w3/coprocessor");
    // A bad update changes nothing.
    let mut bad = config(&["http://w9"], "");
    bad.remote_coprocessor_num_ranges = 0;
    assert!(o.update(&bad).is_err());
    assert_eq!(o.client().workers().len(), 2);
}
