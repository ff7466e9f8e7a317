//! The DAG fuzz harness: shared by the `dag` fuzz target and by rcop-exec's regression test
//! (`crates/exec/tests/fuzz_dag.rs` includes this file), so every kept input replays
//! through exactly what the fuzzer ran.
//!
//! The first input byte picks the mode. Even: the rest is a `tipb.DAGRequest` as protobuf
//! (its table scan pointed at the test table). Odd: the rest drives a builder of well-formed
//! DAGs — a table scan, then up to four of Selection, Projection, hash or stream
//! aggregation, TopN and Limit, with expression trees of the engine's own function table
//! (`rcop_exec::function_shapes`: right arity, argument and result types), columns and
//! constants — so the fuzzer reaches evaluation rather than the builder's checks.
//!
//! Every run goes through `Engine::handle_limited` under a memory budget and a deadline,
//! over a small in-memory table of every column type (NULLs, extremes, invalid UTF-8).
//! Checked: no panic; the budget is given back whole; the response decodes; a DAG the
//! engine answered without error passes the capability check.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prost::Message;
use rcop_datum::row::encode_row_v1;
use rcop_datum::{Datum, Decimal, Json, Time, TimeType, codec, key};
use rcop_exec::{
    CappedBudget, EvalConfig, EvalType, ExecLimits, FieldType, FunctionShape, MemStore,
    build_executors, check_dag, function_shapes,
};
use rcop_proto::{coprocessor, tipb};

/// The test table's id.
pub const TID: i64 = 7;

/// The memory one run may hold.
const BUDGET: usize = 256 << 20;

/// The harness: the table and the function table, built once.
#[derive(Debug)]
pub struct Harness {
    store: MemStore,
    shapes: Vec<FunctionShape>,
}

/// `(column id, tipb field type)` of the table's columns; id -1 is the int handle.
fn columns() -> Vec<(i64, tipb::FieldType)> {
    let f = |tp: u8, flag: u32, flen: i32, decimal: i32, collate: i32| tipb::FieldType {
        tp: Some(i32::from(tp)),
        flag: Some(flag),
        flen: Some(flen),
        decimal: Some(decimal),
        collate: Some(collate),
        ..Default::default()
    };
    vec![
        (-1, f(8, 2, 20, 0, 63)),
        (1, f(8, 0, 20, 0, 63)),
        (2, f(8, 32, 20, 0, 63)),
        (3, f(5, 0, 22, -1, 63)),
        (4, f(246, 0, 10, 2, 63)),
        (5, f(15, 0, 64, 0, -46)),
        (6, f(15, 0, 64, 0, -45)),
        (7, f(12, 0, 23, 3, 63)),
        (8, f(11, 0, 10, 0, 63)),
        (9, f(245, 0, 0, 0, 63)),
        (10, f(10, 0, 10, 0, 63)),
    ]
}

fn rows() -> Vec<Vec<Datum>> {
    let dec = |s: &str| s.parse::<Decimal>().map_or(Datum::Null, Datum::Decimal);
    let time = |s: &str, tt, fsp| Time::parse(s, tt, fsp).map_or(Datum::Null, Datum::Time);
    let dur = |s: &str| rcop_datum::Duration::parse(s, 0).map_or(Datum::Null, Datum::Duration);
    let json = |s: &str| Json::parse(s).map_or(Datum::Null, |j| Datum::Json(j.into_bytes()));
    vec![
        vec![
            Datum::Int(1),
            Datum::Uint(1),
            Datum::Float(1.5),
            dec("12.34"),
            Datum::Bytes(b"abc".to_vec()),
            Datum::Bytes("Caf\u{e9}".as_bytes().to_vec()),
            time("2024-02-29 12:34:56.789", TimeType::DateTime, 3),
            dur("12:34:56"),
            json(r#"{"a": [1, 2.5, "x"], "b": null}"#),
            time("2024-02-29", TimeType::Date, 0),
        ],
        vec![
            Datum::Int(i64::MIN),
            Datum::Uint(u64::MAX),
            Datum::Float(-0.0),
            dec("-99999999.99"),
            Datum::Bytes(Vec::new()),
            Datum::Bytes(b"a\xFF\xC3".to_vec()),
            time("0000-00-00 00:00:00", TimeType::DateTime, 3),
            dur("-838:59:59"),
            json("[]"),
            time("1000-01-01", TimeType::Date, 0),
        ],
        vec![Datum::Null; 10],
        vec![
            Datum::Int(i64::MAX),
            Datum::Uint(0),
            Datum::Float(1e308),
            dec("0.01"),
            Datum::Bytes("a%_\\ \u{3000}z".as_bytes().to_vec()),
            Datum::Bytes(b"ABC ".to_vec()),
            time("9999-12-31 23:59:59.999", TimeType::DateTime, 3),
            dur("838:59:59"),
            json(r#""text""#),
            time("9999-12-31", TimeType::Date, 0),
        ],
        vec![
            Datum::Int(-1),
            Datum::Null,
            Datum::Float(-2.25),
            Datum::Null,
            Datum::Bytes(b"abc".to_vec()),
            Datum::Null,
            time("1970-01-01 00:00:01.000", TimeType::DateTime, 3),
            Datum::Null,
            json("3.5"),
            Datum::Null,
        ],
        vec![
            Datum::Int(1),
            Datum::Uint(7),
            Datum::Float(1.5),
            dec("12.340"),
            Datum::Bytes(b"2024-01-01 10:00:00".to_vec()),
            Datum::Bytes(b"42".to_vec()),
            time("2024-02-29 12:34:56.789", TimeType::DateTime, 3),
            dur("00:00:00"),
            json("true"),
            time("2024-02-29", TimeType::Date, 0),
        ],
    ]
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    /// The table and the function table.
    pub fn new() -> Harness {
        let store = MemStore::from_pairs(rows().into_iter().enumerate().map(|(h, r)| {
            let mut k = Vec::new();
            key::encode_record_key(&mut k, TID, h as i64 + 1);
            let cols: Vec<(i64, Datum)> =
                r.into_iter().enumerate().map(|(c, d)| (c as i64 + 1, d)).collect();
            let mut v = Vec::new();
            // The rows are fixed and well-formed: an encoding failure leaves the row out.
            if encode_row_v1(&cols, &mut v).is_err() {
                v.clear();
            }
            (k, v)
        }));
        let shapes = function_shapes()
            .into_iter()
            .filter(|f| !f.args.contains(&EvalType::Enum) && f.ret != Some(EvalType::Enum))
            .collect();
        Harness { store, shapes }
    }

    /// Runs one input.
    pub fn run(&self, data: &[u8]) {
        let Some((&mode, rest)) = data.split_first() else { return };
        let dag = if mode % 2 == 0 {
            let Ok(mut dag) = tipb::DagRequest::decode(rest) else { return };
            if let Some(ts) = dag.executors.first_mut().and_then(|e| e.tbl_scan.as_mut()) {
                ts.table_id = Some(TID);
            }
            dag
        } else {
            Builder { input: Input { data: rest, pos: 0 }, shapes: &self.shapes }.dag()
        };
        self.execute(dag, mode);
    }

    fn execute(&self, mut dag: tipb::DagRequest, mode: u8) {
        // A kernel's result is bounded by max_allowed_packet (up to 1 GiB): kept small here
        // so one row cannot take the fuzzer's whole memory.
        dag.max_allowed_packet = Some(dag.max_allowed_packet.unwrap_or(1 << 20).min(1 << 20));
        let (mut start, mut end) = (Vec::new(), Vec::new());
        key::encode_record_prefix(&mut start, TID);
        key::encode_record_prefix(&mut end, TID + 1);
        let req = coprocessor::Request {
            tp: rcop_proto::REQ_TYPE_DAG,
            data: dag.encode_to_vec().into(),
            ranges: vec![coprocessor::KeyRange { start: start.into(), end: end.into() }],
            paging_size: if mode & 2 != 0 { u64::from(mode >> 4) } else { 0 },
            start_ts: 100,
            ..Default::default()
        };
        let budget = Arc::new(CappedBudget::new(BUDGET));
        let limits = ExecLimits::default()
            .with_memory(budget.clone())
            .with_deadline(Instant::now() + Duration::from_secs(5));
        let result =
            rcop_exec::Engine::default().handle_limited(&req, &mut self.store.scanner(), &limits);
        assert_eq!(budget.used(), 0, "the budget is given back whole");
        let Ok(resp) = result else { return };
        if !resp.other_error.is_empty() || resp.region_error.is_some() || resp.locked.is_some() {
            return;
        }
        let sel = match tipb::SelectResponse::decode(resp.data) {
            Ok(sel) => sel,
            Err(e) => panic!("undecodable SelectResponse: {e}"),
        };
        if sel.error.is_none() {
            assert_eq!(check_dag(&dag).err(), None, "answered, but the capability check refuses");
        }
    }
}

/// The fuzz input as a source of choices (zeros once it runs out).
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { usize::from(self.u8()) % n }
    }

    fn pick<'b, T>(&mut self, items: &'b [T]) -> Option<&'b T> {
        let i = self.below(items.len());
        items.get(i)
    }

    fn i64(&mut self) -> i64 {
        let mut b = [0u8; 8];
        b.iter_mut().for_each(|x| *x = self.u8());
        i64::from_le_bytes(b)
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.u8()).collect()
    }

    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
}

const COLLATIONS: &[i32] = &[63, -46, -45, -224, -255, -192, -28, -87, -249, -309, 46, 33];

const LIMITS: &[u64] = &[0, 1, 2, 3, 5, 100, 1 << 40, u64::MAX];

/// Aggregate `ExprType`s: Count, Sum, Avg, Min, Max, First, GroupConcat, BitAnd, BitOr,
/// BitXor, Std, Stddev, VarPop, VarSamp, StddevPop, StddevSamp, Variance, ApproxCountDistinct.
const AGGS: &[i32] = &[
    3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008, 3009, 3010, 3011, 3012, 3013, 3014, 3015, 3016,
    3017, 3018,
];

/// Builds a DAG from the input's choices.
struct Builder<'a, 'd> {
    input: Input<'d>,
    shapes: &'a [FunctionShape],
}

impl Builder<'_, '_> {
    fn dag(&mut self) -> tipb::DagRequest {
        let all = columns();
        let mut infos = Vec::new();
        for (id, f) in &all {
            if self.input.done() || self.input.below(4) != 0 {
                infos.push(tipb::ColumnInfo {
                    column_id: Some(*id),
                    tp: f.tp,
                    collation: f.collate,
                    column_len: f.flen,
                    decimal: f.decimal,
                    flag: f.flag.map(|x| x as i32),
                    pk_handle: Some(*id == -1),
                    ..Default::default()
                });
            }
        }
        let scan = tipb::Executor {
            tp: Some(tipb::ExecType::TypeTableScan as i32),
            tbl_scan: Some(tipb::TableScan {
                table_id: Some(TID),
                columns: infos,
                desc: Some(self.input.below(4) == 0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut dag = tipb::DagRequest {
            executors: vec![scan],
            time_zone_offset: Some(0),
            flags: Some([0u64, 1, 2, 64, 256][self.input.below(5)]),
            sql_mode: Some(if self.input.below(2) == 0 { 0 } else { 1 << 21 }),
            encode_type: Some(self.input.below(2) as i32),
            collect_execution_summaries: Some(self.input.below(2) == 0),
            ..Default::default()
        };
        let n = self.input.below(5);
        for _ in 0..n {
            let Some(schema) = schema_of(&dag) else { break };
            let e = self.executor(&schema);
            dag.executors.push(e);
        }
        let width = schema_of(&dag).map_or(1, |s| s.len());
        let outputs = 1 + self.input.below(width.max(1));
        dag.output_offsets = (0..outputs).map(|_| self.input.below(width + 1) as u32).collect();
        dag
    }

    fn executor(&mut self, schema: &[tipb::FieldType]) -> tipb::Executor {
        let exprs = |b: &mut Self, most: usize, least: usize| -> Vec<tipb::Expr> {
            let n = least + b.input.below(most - least + 1);
            (0..n).map(|_| b.expr(schema, None, 3)).collect()
        };
        match self.input.below(7) {
            0 => tipb::Executor {
                tp: Some(tipb::ExecType::TypeSelection as i32),
                selection: Some(Box::new(tipb::Selection {
                    conditions: exprs(self, 3, 1),
                    ..Default::default()
                })),
                ..Default::default()
            },
            1 => tipb::Executor {
                tp: Some(tipb::ExecType::TypeProjection as i32),
                projection: Some(Box::new(tipb::Projection {
                    exprs: exprs(self, 4, 1),
                    ..Default::default()
                })),
                ..Default::default()
            },
            k @ (2 | 3) => {
                let group_by = exprs(self, 2, 0);
                let agg_func = (0..1 + self.input.below(3)).map(|_| self.agg(schema)).collect();
                tipb::Executor {
                    tp: Some(if k == 2 {
                        tipb::ExecType::TypeAggregation as i32
                    } else {
                        tipb::ExecType::TypeStreamAgg as i32
                    }),
                    aggregation: Some(Box::new(tipb::Aggregation {
                        group_by,
                        agg_func,
                        ..Default::default()
                    })),
                    ..Default::default()
                }
            }
            4 | 5 => {
                let order_by = (0..1 + self.input.below(2))
                    .map(|_| tipb::ByItem {
                        expr: Some(self.expr(schema, None, 2)),
                        desc: Some(self.input.below(2) == 0),
                        ..Default::default()
                    })
                    .collect();
                let partition_by = if self.input.below(4) == 0 {
                    vec![tipb::ByItem {
                        expr: Some(self.expr(schema, None, 1)),
                        ..Default::default()
                    }]
                } else {
                    Vec::new()
                };
                tipb::Executor {
                    tp: Some(tipb::ExecType::TypeTopN as i32),
                    top_n: Some(Box::new(tipb::TopN {
                        order_by,
                        limit: self.input.pick(LIMITS).copied(),
                        partition_by,
                        ..Default::default()
                    })),
                    ..Default::default()
                }
            }
            _ => tipb::Executor {
                tp: Some(tipb::ExecType::TypeLimit as i32),
                limit: Some(Box::new(tipb::Limit {
                    limit: self.input.pick(LIMITS).copied(),
                    ..Default::default()
                })),
                ..Default::default()
            },
        }
    }

    fn agg(&mut self, schema: &[tipb::FieldType]) -> tipb::Expr {
        let tp = self.input.pick(AGGS).copied().unwrap_or(3001);
        let arg = self.expr(schema, None, 2);
        let arg_ft = arg.field_type.clone().unwrap_or_default();
        // The aggregate's own type as TiDB gives it (a wrong one is the builder's to refuse).
        let own = match (tp, self.input.below(4)) {
            (3001 | 3018 | 3008..=3010, _) => field_type(EvalType::Int, 32, 0),
            (3002 | 3003, 0) | (3011..=3017, _) => field_type(EvalType::Real, 0, 0),
            (3002 | 3003, _) => field_type(EvalType::Decimal, 0, 0),
            _ => arg_ft,
        };
        tipb::Expr {
            tp: Some(tp),
            children: vec![arg],
            field_type: Some(own),
            agg_func_mode: Some([0, 1, 2, 3][self.input.below(4)]),
            has_distinct: Some(self.input.below(8) == 0),
            ..Default::default()
        }
    }

    /// An expression over `schema`, of eval type `want` when given.
    fn expr(
        &mut self,
        schema: &[tipb::FieldType],
        want: Option<EvalType>,
        depth: u8,
    ) -> tipb::Expr {
        let choice =
            if depth == 0 || self.input.done() { self.input.below(2) } else { self.input.below(5) };
        match choice {
            0 => {
                let fits: Vec<usize> = (0..schema.len())
                    .filter(|&i| {
                        want.is_none_or(|w| {
                            schema
                                .get(i)
                                .and_then(|f| FieldType::from_proto(Some(f)).eval_type().ok())
                                == Some(w)
                        })
                    })
                    .collect();
                match self.input.pick(&fits) {
                    Some(&i) => {
                        let mut val = Vec::new();
                        codec::encode_i64(&mut val, i as i64);
                        tipb::Expr {
                            tp: Some(201),
                            val: Some(val.into()),
                            field_type: schema.get(i).cloned(),
                            ..Default::default()
                        }
                    }
                    None => self.constant(want),
                }
            }
            1 => self.constant(want),
            _ => {
                let fits: Vec<&FunctionShape> = self
                    .shapes
                    .iter()
                    .filter(|f| want.is_none_or(|w| f.ret.is_none_or(|r| r == w)))
                    .collect();
                let Some(shape) = self.input.pick(&fits).copied() else {
                    return self.constant(want);
                };
                let mut args = shape.args.clone();
                let extra = self.input.below(shape.more.len() + 1);
                args.extend(shape.more.iter().take(extra));
                let children =
                    args.iter().map(|t| self.expr(schema, Some(*t), depth - 1)).collect();
                let ret = shape.ret.or(want).unwrap_or(EvalType::Int);
                let flag = if self.input.below(8) == 0 { 32 } else { 0 };
                let mut f = field_type(ret, flag, self.input.below(7) as i32);
                if ret == EvalType::Bytes {
                    f.collate = self.input.pick(COLLATIONS).copied();
                }
                tipb::Expr {
                    tp: Some(10000),
                    sig: Some(shape.sig),
                    children,
                    field_type: Some(f),
                    ..Default::default()
                }
            }
        }
    }

    fn constant(&mut self, want: Option<EvalType>) -> tipb::Expr {
        let et = want.unwrap_or_else(|| {
            [EvalType::Int, EvalType::Real, EvalType::Decimal, EvalType::Bytes, EvalType::DateTime]
                [self.input.below(5)]
        });
        let mut val = Vec::new();
        let tp = if self.input.below(10) == 0 {
            0
        } else {
            match et {
                EvalType::Int => {
                    let v = [0, 1, -1, 2, 10, 63, 64, i64::MIN, i64::MAX][self.input.below(9)];
                    let v = if self.input.below(3) == 0 { self.input.i64() } else { v };
                    codec::encode_i64(&mut val, v);
                    1
                }
                EvalType::Real => {
                    let v = [0.0, -0.0, 1.5, -2.5, 1e300, f64::MIN_POSITIVE][self.input.below(6)];
                    codec::encode_f64(&mut val, v);
                    4
                }
                EvalType::Decimal => {
                    let s = ["0", "1.5", "-12.345", "99999999999999999999.9999", "0.000001"]
                        [self.input.below(5)];
                    let d: Decimal = s.parse().unwrap_or_default();
                    let (p, f) = d.prec_and_frac();
                    if d.write_bin(p, f, &mut val).is_err() {
                        val.clear();
                    }
                    102
                }
                EvalType::Bytes => {
                    val = match self.input.below(4) {
                        0 => self.input.bytes(12),
                        1 => b"%a%".to_vec(),
                        2 => b"2024-02-29 12:00:00".to_vec(),
                        _ => br#"{"a": 1}"#.to_vec(),
                    };
                    6
                }
                EvalType::DateTime => {
                    let t = Time::parse("2024-02-29 12:34:56", TimeType::DateTime, 0);
                    codec::encode_u64(&mut val, t.map_or(0, |t| t.to_packed_u64()));
                    107
                }
                EvalType::Duration => {
                    codec::encode_i64(&mut val, self.input.i64() % 3_000_000_000_000_000);
                    103
                }
                EvalType::Json => {
                    val = Json::parse(r#"{"k": [1, "two", null]}"#)
                        .map_or(Vec::new(), Json::into_bytes);
                    108
                }
                EvalType::Enum | EvalType::VectorFloat32 => 0,
            }
        };
        let f = field_type(et, 0, self.input.below(7) as i32);
        tipb::Expr {
            tp: Some(tp),
            val: Some(val.into()),
            field_type: Some(f),
            ..Default::default()
        }
    }
}

/// A plain field type of `et` (decimals get `decimal` fraction digits, times an fsp).
fn field_type(et: EvalType, flag: u32, decimal: i32) -> tipb::FieldType {
    let (tp, flen, decimal) = match et {
        EvalType::Int => (8, 20, 0),
        EvalType::Real => (5, 22, -1),
        EvalType::Decimal => (246, 30, decimal),
        EvalType::Bytes => (15, 255, 0),
        EvalType::DateTime => (12, 26, decimal % 7),
        EvalType::Duration => (11, 17, decimal % 7),
        EvalType::Json => (245, 0, 0),
        EvalType::Enum => (247, 0, 0),
        EvalType::VectorFloat32 => (225, 0, 0),
    };
    tipb::FieldType {
        tp: Some(tp),
        flag: Some(flag),
        flen: Some(flen),
        decimal: Some(decimal),
        collate: Some(63),
        ..Default::default()
    }
}

/// The output column types of a DAG's executors, when they build.
fn schema_of(dag: &tipb::DagRequest) -> Option<Vec<tipb::FieldType>> {
    let cfg = EvalConfig::from_dag(dag).ok()?;
    let root = build_executors(dag, &[], &cfg, 100).ok()?;
    Some(
        root.schema()
            .iter()
            .map(|f| tipb::FieldType {
                tp: Some(i32::from(f.tp)),
                flag: Some(f.flag),
                flen: Some(f.flen),
                decimal: Some(f.decimal),
                collate: Some(f.collate),
                ..Default::default()
            })
            .collect(),
    )
}
