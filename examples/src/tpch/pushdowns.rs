//! The coprocessor tasks TiDB pushes down for the 22 TPC-H queries over go-tpc's schema
//! ([`super::schema`]), each with the SQL that computes the same rows in a reference
//! engine, and the helpers that run them and compare their answers.
//!
//! A *task* is one `cop[tikv]` subtree of a TiDB plan: the TableFullScan / TableRangeScan /
//! IndexFullScan / IndexRangeScan of one table, its pushed Selection, a partial HashAgg or
//! StreamAgg (`Partial1`) and TopN/Limit where TiDB pushes them. With TiDB's defaults
//! (`tidb_opt_agg_push_down` and `tidb_opt_projection_push_down` off) aggregation is pushed
//! only where it sits directly on one table, and no TPC-H query pushes a Projection, TopN or
//! Limit: their ORDER BY … LIMIT sit above joins or aggregates. Each query's function in
//! `pushdowns/queries.rs` says in its doc comment which of its tasks are here; bare scans
//! that only feed a join (no selection, no aggregation: nothing pushed but the scan) are
//! named there and left out, except a few read through a covering index.
//!
//! Row-returning tasks scan one region-sized key range (a cop task covers one region), so
//! that their answers stay small; aggregating ones mostly scan the whole table.
//!
//! The reference answers are computed by DuckDB (`tools/tpch-oracle.py`) over the rows
//! [`write_reference_input`] exports from the same generator, at [`SCALE_FACTOR`], and committed as
//! `testdata/tpch/<task>.expected`; [`format_rows`] renders an engine answer the same way.

use std::io::Write;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::{Datum, Decimal, Mode, Time, TimeType, codec, key};
use rcop_proto::{REQ_TYPE_DAG, coprocessor, kvrpcpb, tipb};

use super::schema::{self, Kind, TableDef, Val};

mod queries;

pub use queries::all;

/// The scale factor of the committed reference answers.
pub const SCALE_FACTOR: f64 = 0.01;

/// The collation of every string column (`utf8mb4_bin`, new-collation id).
const BIN: i32 = -46;

/// The key range a task scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// Every record of the table.
    Table,
    /// Records whose first primary-key column is in `[lo, hi)` (the int handle, or the first
    /// column of a clustered common handle).
    Handles(i64, i64),
    /// Every entry of index `id`.
    IndexFull(i64),
    /// Entries of index `id` whose first column is in `[lo, hi)`.
    Index(i64, i64, i64),
}

/// One pushed-down task.
#[derive(Debug, Clone)]
pub struct Task {
    /// `qNN_table` (with a suffix when a query has two tasks on a table).
    pub name: String,
    /// The table scanned.
    pub table: &'static TableDef,
    /// What the task computes, as DuckDB SQL over the exported tables (its columns in the
    /// task's output order: partial aggregates, AVG as COUNT then SUM, then group keys).
    pub sql: String,
    /// The DAG.
    pub dag: tipb::DagRequest,
    /// The range scanned.
    pub range: Range,
    /// The type of each output column.
    pub outputs: Vec<Kind>,
    /// True when the row order is part of the answer (TopN); otherwise rows are compared
    /// as a multiset.
    pub ordered: bool,
}

// ---- field types ----

fn ft(tp: u8, flen: i32, decimal: i32, collate: i32) -> tipb::FieldType {
    tipb::FieldType {
        tp: Some(i32::from(tp)),
        flag: Some(1), // NOT NULL
        flen: Some(flen),
        decimal: Some(decimal),
        collate: Some(collate),
        ..Default::default()
    }
}

/// BIGINT.
fn bigint() -> tipb::FieldType {
    ft(mt::LONG_LONG, 20, 0, 63)
}

/// A comparison's or logical function's result.
fn boolean() -> tipb::FieldType {
    ft(mt::LONG_LONG, 1, 0, 63)
}

/// DECIMAL(flen, frac).
fn dec_ft(flen: i32, frac: i32) -> tipb::FieldType {
    ft(mt::NEW_DECIMAL, flen, frac, 63)
}

fn kind_ft(kind: Kind) -> tipb::FieldType {
    match kind {
        Kind::Int => bigint(),
        Kind::Dec => dec_ft(15, 2),
        Kind::Date => ft(mt::DATE, 10, 0, 63),
        Kind::Char(n) => ft(mt::STRING, n, 0, BIN),
        Kind::Varchar(n) => ft(mt::VARCHAR, n, 0, BIN),
    }
}

// ---- expressions ----

/// A typed expression: the tipb node and the kind of its value.
#[derive(Debug, Clone)]
struct E {
    expr: tipb::Expr,
}

impl E {
    fn ft(&self) -> tipb::FieldType {
        self.expr.field_type.clone().unwrap_or_default()
    }

    fn tp(&self) -> u8 {
        u8::try_from(self.expr.field_type.as_ref().and_then(|f| f.tp).unwrap_or(0)).unwrap_or(0)
    }
}

fn constant(tp: i32, val: Vec<u8>, f: tipb::FieldType) -> E {
    E {
        expr: tipb::Expr {
            tp: Some(tp),
            val: Some(val.into()),
            field_type: Some(f),
            ..Default::default()
        },
    }
}

fn int(x: i64) -> E {
    let mut v = Vec::new();
    codec::encode_i64(&mut v, x);
    constant(tipb::ExprType::Int64 as i32, v, bigint())
}

fn dec(s: &str) -> Result<E> {
    let d: Decimal = s.parse().context("decimal literal")?;
    let (p, f) = d.prec_and_frac();
    let mut v = Vec::new();
    let _ = d.write_bin(p, f, &mut v).context("decimal literal")?;
    Ok(constant(tipb::ExprType::MysqlDecimal as i32, v, dec_ft(i32::from(p), i32::from(f))))
}

fn date(s: &str) -> Result<E> {
    let t = Time::parse(s, TimeType::Date, 0).context("date literal")?;
    let mut v = Vec::new();
    codec::encode_u64(&mut v, t.to_packed_u64());
    Ok(constant(tipb::ExprType::MysqlTime as i32, v, kind_ft(Kind::Date)))
}

fn string(s: &str) -> E {
    let n = i32::try_from(s.len()).unwrap_or(i32::MAX);
    constant(tipb::ExprType::String as i32, s.as_bytes().to_vec(), ft(mt::VARCHAR, n, 0, BIN))
}

fn func(sig: tipb::ScalarFuncSig, f: tipb::FieldType, children: Vec<E>) -> E {
    E {
        expr: tipb::Expr {
            tp: Some(tipb::ExprType::ScalarFunc as i32),
            sig: Some(sig as i32),
            field_type: Some(f),
            children: children.into_iter().map(|c| c.expr).collect(),
            ..Default::default()
        },
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// `a op b`, the signature chosen by `a`'s type as TiDB does once both sides agree.
fn cmp(op: Op, a: E, b: E) -> E {
    use tipb::ScalarFuncSig as S;
    #[rustfmt::skip]
    let sig = match (a.tp(), op) {
        (mt::NEW_DECIMAL, Op::Lt) => S::LtDecimal, (mt::NEW_DECIMAL, Op::Le) => S::LeDecimal,
        (mt::NEW_DECIMAL, Op::Gt) => S::GtDecimal, (mt::NEW_DECIMAL, Op::Ge) => S::GeDecimal,
        (mt::NEW_DECIMAL, Op::Eq) => S::EqDecimal, (mt::NEW_DECIMAL, Op::Ne) => S::NeDecimal,
        (mt::DATE, Op::Lt) => S::LtTime, (mt::DATE, Op::Le) => S::LeTime,
        (mt::DATE, Op::Gt) => S::GtTime, (mt::DATE, Op::Ge) => S::GeTime,
        (mt::DATE, Op::Eq) => S::EqTime, (mt::DATE, Op::Ne) => S::NeTime,
        (mt::STRING | mt::VARCHAR, Op::Lt) => S::LtString,
        (mt::STRING | mt::VARCHAR, Op::Le) => S::LeString,
        (mt::STRING | mt::VARCHAR, Op::Gt) => S::GtString,
        (mt::STRING | mt::VARCHAR, Op::Ge) => S::GeString,
        (mt::STRING | mt::VARCHAR, Op::Eq) => S::EqString,
        (mt::STRING | mt::VARCHAR, Op::Ne) => S::NeString,
        (_, Op::Lt) => S::LtInt, (_, Op::Le) => S::LeInt, (_, Op::Gt) => S::GtInt,
        (_, Op::Ge) => S::GeInt, (_, Op::Eq) => S::EqInt, (_, Op::Ne) => S::NeInt,
    };
    // String comparisons carry the comparison's collation on their own field type.
    let mut f = boolean();
    if a.ft().collate == Some(BIN) {
        f.collate = Some(BIN);
    }
    func(sig, f, vec![a, b])
}

fn and(a: E, b: E) -> E {
    func(tipb::ScalarFuncSig::LogicalAnd, boolean(), vec![a, b])
}

/// `a OR b OR …`, nested to the right as TiDB builds it.
fn or(mut items: Vec<E>) -> E {
    let mut acc = items.pop().unwrap_or_else(|| int(0));
    while let Some(e) = items.pop() {
        acc = func(tipb::ScalarFuncSig::LogicalOr, boolean(), vec![e, acc]);
    }
    acc
}

fn not(a: E) -> E {
    func(tipb::ScalarFuncSig::UnaryNotInt, boolean(), vec![a])
}

/// `a BETWEEN lo AND hi`, as TiDB rewrites it: `a >= lo AND a <= hi`.
fn between(a: &E, lo: E, hi: E) -> E {
    and(cmp(Op::Ge, a.clone(), lo), cmp(Op::Le, a.clone(), hi))
}

/// `a LIKE pattern` (escape `\`).
fn like(a: E, pattern: &str) -> E {
    let f = tipb::FieldType { collate: Some(BIN), ..boolean() };
    func(tipb::ScalarFuncSig::LikeSig, f, vec![a, string(pattern), int(92)])
}

/// `a IN (strings…)`.
fn in_str(a: E, items: &[&str]) -> E {
    let mut c = vec![a];
    c.extend(items.iter().map(|s| string(s)));
    let f = tipb::FieldType { collate: Some(BIN), ..boolean() };
    func(tipb::ScalarFuncSig::InString, f, c)
}

/// `a IN (ints…)`.
fn in_int(a: E, items: &[i64]) -> E {
    let mut c = vec![a];
    c.extend(items.iter().map(|&x| int(x)));
    func(tipb::ScalarFuncSig::InInt, boolean(), c)
}

/// `SUBSTRING(a, pos, len)`.
fn substring(a: E, pos: i64, len: i64) -> E {
    let f = ft(mt::VARCHAR, i32::try_from(len).unwrap_or(-1), 0, BIN);
    func(tipb::ScalarFuncSig::Substring3Args, f, vec![a, int(pos), int(len)])
}

/// Decimal `a - b`, `a + b`, `a * b` with TiDB's result types.
fn arith(sig: tipb::ScalarFuncSig, a: E, b: E) -> E {
    let (fa, fb) = (a.ft(), b.ft());
    let (pa, sa) = (fa.flen.unwrap_or(0), fa.decimal.unwrap_or(0));
    let (pb, sb) = (fb.flen.unwrap_or(0), fb.decimal.unwrap_or(0));
    let f = match sig {
        tipb::ScalarFuncSig::MultiplyDecimal => dec_ft((pa + pb).min(65), (sa + sb).min(30)),
        _ => {
            let frac = sa.max(sb);
            dec_ft(((pa - sa).max(pb - sb) + frac + 1).min(65), frac)
        }
    };
    func(sig, f, vec![a, b])
}

/// `l_extendedprice * (1 - l_discount)`, TPC-H's discounted price.
fn disc_price(price: E, discount: E) -> Result<E> {
    let one_minus = arith(tipb::ScalarFuncSig::MinusDecimal, dec("1")?, discount);
    Ok(arith(tipb::ScalarFuncSig::MultiplyDecimal, price, one_minus))
}

// ---- executors ----

/// An aggregate function.
#[derive(Debug, Clone, Copy)]
enum AggFn {
    Count,
    Sum,
    Avg,
}

/// The scan of a task and the columns it reads, to refer to them by name.
struct Scan {
    table: &'static TableDef,
    cols: Vec<i64>,
}

impl Scan {
    fn new(table: &str, names: &[&str]) -> Result<Scan> {
        let t = schema::table(table).with_context(|| format!("unknown table {table}"))?;
        let cols = names.iter().map(|n| col_id(t, n)).collect::<Result<_>>()?;
        Ok(Scan { table: t, cols })
    }

    /// The column `name`, as a reference to its scan offset.
    fn c(&self, name: &str) -> E {
        let id = col_id(self.table, name).unwrap_or(0);
        let offset = self.cols.iter().position(|&c| c == id).unwrap_or(usize::MAX);
        let mut v = Vec::new();
        codec::encode_i64(&mut v, i64::try_from(offset).unwrap_or(i64::MAX));
        let f = kind_ft(self.table.kind(id).unwrap_or(Kind::Int));
        constant(tipb::ExprType::ColumnRef as i32, v, f)
    }

    fn kinds(&self) -> Vec<Kind> {
        self.cols.iter().map(|&id| self.table.kind(id).unwrap_or(Kind::Int)).collect()
    }

    fn column_info(&self, id: i64) -> tipb::ColumnInfo {
        let mut f = kind_ft(self.table.kind(id).unwrap_or(Kind::Int));
        let int_handle = !self.table.common_handle() && self.table.pk == [id];
        if self.table.pk.contains(&id) {
            f.flag = Some(1 | 2); // NOT NULL, PRIMARY KEY
        }
        tipb::ColumnInfo {
            column_id: Some(id),
            tp: f.tp,
            collation: f.collate,
            column_len: f.flen,
            decimal: f.decimal,
            flag: f.flag.and_then(|x| i32::try_from(x).ok()),
            pk_handle: Some(int_handle),
            ..Default::default()
        }
    }

    fn primary_column_ids(&self) -> Vec<i64> {
        if self.table.common_handle() { self.table.pk.to_vec() } else { Vec::new() }
    }

    /// A TableFullScan / TableRangeScan of the columns.
    fn table_scan(&self) -> tipb::Executor {
        tipb::Executor {
            tp: Some(tipb::ExecType::TypeTableScan as i32),
            tbl_scan: Some(tipb::TableScan {
                table_id: Some(self.table.id),
                columns: self.cols.iter().map(|&id| self.column_info(id)).collect(),
                desc: Some(false),
                primary_column_ids: self.primary_column_ids(),
                ..Default::default()
            }),
            executor_id: Some("TableFullScan_1".into()),
            ..Default::default()
        }
    }

    /// An IndexFullScan / IndexRangeScan of index `index` reading the columns (the index's
    /// columns, then handle columns).
    fn index_scan(&self, index: i64) -> tipb::Executor {
        tipb::Executor {
            tp: Some(tipb::ExecType::TypeIndexScan as i32),
            idx_scan: Some(tipb::IndexScan {
                table_id: Some(self.table.id),
                index_id: Some(index),
                columns: self.cols.iter().map(|&id| self.column_info(id)).collect(),
                desc: Some(false),
                unique: Some(false),
                primary_column_ids: self.primary_column_ids(),
            }),
            executor_id: Some("IndexFullScan_1".into()),
            ..Default::default()
        }
    }
}

fn col_id(t: &TableDef, name: &str) -> Result<i64> {
    let i = t.cols.iter().position(|c| c.0 == name);
    let Some(i) = i else { bail!("{} has no column {name}", t.name) };
    Ok(i64::try_from(i)? + 1)
}

fn selection(conditions: Vec<E>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(tipb::ExecType::TypeSelection as i32),
        selection: Some(Box::new(tipb::Selection {
            conditions: conditions.into_iter().map(|c| c.expr).collect(),
            ..Default::default()
        })),
        executor_id: Some("Selection_2".into()),
        ..Default::default()
    }
}

/// A partial (`Partial1`) HashAgg, or a StreamAgg when `stream`. Returns the executor and
/// the kinds of its outputs (per function: COUNT one Int, SUM one Dec, AVG an Int count and
/// a Dec sum; then the group keys).
fn aggregation(
    stream: bool,
    group_by: Vec<E>,
    funcs: Vec<(AggFn, E)>,
) -> (tipb::Executor, Vec<Kind>) {
    let mut kinds = Vec::new();
    let mut agg_func = Vec::new();
    for (f, arg) in funcs {
        let frac = arg.ft().decimal.unwrap_or(0);
        let (tp, out) = match f {
            AggFn::Count => {
                kinds.push(Kind::Int);
                (tipb::ExprType::Count, ft(mt::LONG_LONG, 21, 0, 63))
            }
            AggFn::Sum => {
                kinds.push(Kind::Dec);
                (tipb::ExprType::Sum, dec_ft(38, frac))
            }
            AggFn::Avg => {
                kinds.extend([Kind::Int, Kind::Dec]);
                (tipb::ExprType::Avg, dec_ft(38, (frac + 4).min(30)))
            }
        };
        agg_func.push(tipb::Expr {
            tp: Some(tp as i32),
            field_type: Some(out),
            children: vec![arg.expr],
            agg_func_mode: Some(tipb::AggFunctionMode::Partial1Mode as i32),
            ..Default::default()
        });
    }
    for g in &group_by {
        kinds.push(kind_of(&g.ft()));
    }
    let (tp, id) = if stream {
        (tipb::ExecType::TypeStreamAgg, "StreamAgg_3")
    } else {
        (tipb::ExecType::TypeAggregation, "HashAgg_3")
    };
    let exec = tipb::Executor {
        tp: Some(tp as i32),
        aggregation: Some(Box::new(tipb::Aggregation {
            group_by: group_by.into_iter().map(|g| g.expr).collect(),
            agg_func,
            streamed: Some(stream),
            ..Default::default()
        })),
        executor_id: Some(id.into()),
        ..Default::default()
    };
    (exec, kinds)
}

fn kind_of(f: &tipb::FieldType) -> Kind {
    let n = f.flen.unwrap_or(-1);
    match u8::try_from(f.tp.unwrap_or(0)).unwrap_or(0) {
        mt::NEW_DECIMAL => Kind::Dec,
        mt::DATE => Kind::Date,
        mt::STRING => Kind::Char(n),
        mt::VARCHAR | mt::VAR_STRING => Kind::Varchar(n),
        _ => Kind::Int,
    }
}

fn dag(executors: Vec<tipb::Executor>, width: usize) -> tipb::DagRequest {
    tipb::DagRequest {
        executors,
        output_offsets: (0..u32::try_from(width).unwrap_or(0)).collect(),
        time_zone_offset: Some(0),
        flags: Some(0),
        encode_type: Some(tipb::EncodeType::TypeDefault as i32),
        ..Default::default()
    }
}

/// A task whose output is the scan's columns (after an optional selection).
fn rows_task(name: &str, s: &Scan, range: Range, conds: Vec<E>, sql: &str) -> Task {
    let scan = match range {
        Range::IndexFull(ix) | Range::Index(ix, _, _) => s.index_scan(ix),
        Range::Table | Range::Handles(..) => s.table_scan(),
    };
    let mut execs = vec![scan];
    if !conds.is_empty() {
        execs.push(selection(conds));
    }
    Task {
        name: name.into(),
        table: s.table,
        sql: sql.into(),
        dag: dag(execs, s.cols.len()),
        range,
        outputs: s.kinds(),
        ordered: false,
    }
}

/// A task ending in a partial aggregation.
#[expect(clippy::too_many_arguments, reason = "one task's parts, each a plain value")]
fn agg_task(
    name: &str,
    s: &Scan,
    range: Range,
    conds: Vec<E>,
    stream: bool,
    group_by: Vec<E>,
    funcs: Vec<(AggFn, E)>,
    sql: &str,
) -> Task {
    let mut execs = vec![s.table_scan()];
    if !conds.is_empty() {
        execs.push(selection(conds));
    }
    let (agg, outputs) = aggregation(stream, group_by, funcs);
    execs.push(agg);
    Task {
        name: name.into(),
        table: s.table,
        sql: sql.into(),
        dag: dag(execs, outputs.len()),
        range,
        outputs,
        ordered: false,
    }
}

// ---- requests and answers ----

fn key_of(v: i64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    Datum::Int(v).encode(Mode::Key, &mut out).context("key datum")?;
    Ok(out)
}

/// `[start, end)` of `task`'s range under `prefix`.
///
/// # Errors
///
/// Never in practice (key encoding).
pub fn key_range(task: &Task, prefix: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let t = task.table;
    let (mut start, mut end) = (prefix.to_vec(), prefix.to_vec());
    match task.range {
        Range::Table => {
            key::encode_record_prefix(&mut start, t.id);
            end = key::prefix_next(&start);
        }
        Range::Handles(lo, hi) if t.common_handle() => {
            key::encode_record_prefix(&mut start, t.id);
            key::encode_record_prefix(&mut end, t.id);
            start.extend_from_slice(&key_of(lo)?);
            end.extend_from_slice(&key_of(hi)?);
        }
        Range::Handles(lo, hi) => {
            key::encode_record_key(&mut start, t.id, lo);
            key::encode_record_key(&mut end, t.id, hi);
        }
        Range::IndexFull(ix) => {
            key::encode_index_key(&mut start, t.id, ix, &[]);
            end = key::prefix_next(&start);
        }
        Range::Index(ix, lo, hi) => {
            key::encode_index_key(&mut start, t.id, ix, &key_of(lo)?);
            key::encode_index_key(&mut end, t.id, ix, &key_of(hi)?);
        }
    }
    Ok((start, end))
}

/// The `coprocessor.Request` of `task` over keyspace `keyspace` (API v2), region
/// `region_id`, read at `start_ts`.
///
/// # Errors
///
/// A keyspace id that does not fit 3 bytes.
pub fn request(
    task: &Task,
    keyspace: u32,
    region_id: u64,
    start_ts: u64,
) -> Result<coprocessor::Request> {
    let prefix = super::keyspace_prefix(keyspace)?;
    let (start, end) = key_range(task, &prefix)?;
    Ok(coprocessor::Request {
        context: Some(kvrpcpb::Context {
            region_id,
            keyspace_id: Some(keyspace),
            api_version: 2,
            max_execution_duration_ms: 60_000,
            ..Default::default()
        }),
        tp: REQ_TYPE_DAG,
        data: Bytes::from(task.dag.encode_to_vec()),
        ranges: vec![coprocessor::KeyRange { start: start.into(), end: end.into() }],
        start_ts,
        ..Default::default()
    })
}

/// The answer of a TypeDefault `SelectResponse` for `task`, one line per row, its values
/// tab-separated as `tools/tpch-oracle.py` writes them (integers, decimals with their
/// scale, `YYYY-MM-DD` dates, strings as they are, `NULL`); sorted unless the task is
/// ordered.
///
/// # Errors
///
/// An error response, undecodable data, a value that does not fit the output's type.
pub fn format_rows(task: &Task, resp: &coprocessor::Response) -> Result<Vec<String>> {
    let rows = decode_rows(task, resp)?;
    render(task, &rows)
}

/// As [`format_rows`], for an answer a worker may have computed in parts (a heavy request
/// split across its compute pool, each part a partial aggregation of its own): the rows of
/// a partial aggregation that share their group keys are first merged into one, as TiDB's
/// final aggregation merges them (COUNT added, SUM added with NULL as nothing, AVG's count
/// and sum added), so the answer compares with the reference's one row per group. Other
/// tasks' answers are as [`format_rows`] gives them.
///
/// # Errors
///
/// As [`format_rows`]; an aggregate function other than those the tasks push (COUNT, SUM,
/// AVG); a partial value of the wrong type.
pub fn format_rows_merged(task: &Task, resp: &coprocessor::Response) -> Result<Vec<String>> {
    let rows = decode_rows(task, resp)?;
    let Some(agg) = task.dag.executors.last().and_then(|e| e.aggregation.as_deref()) else {
        return render(task, &rows);
    };
    // The partial results come first (AVG's as a count then a sum), the group keys after.
    let mut keys = 0;
    for f in &agg.agg_func {
        keys += match f.tp.and_then(|t| tipb::ExprType::try_from(t).ok()) {
            Some(tipb::ExprType::Count | tipb::ExprType::Sum) => 1,
            Some(tipb::ExprType::Avg) => 2,
            other => bail!("{}: no merge for aggregate {other:?}", task.name),
        };
    }
    let mut merged: Vec<Vec<Datum>> = Vec::new();
    let mut by_group: std::collections::HashMap<Vec<(bool, String)>, usize> =
        std::collections::HashMap::new();
    for row in rows {
        // Each key rendered, tagged so that NULL and the string "NULL" stay apart.
        let group: Vec<(bool, String)> = row
            .get(keys..)
            .unwrap_or_default()
            .iter()
            .zip(task.outputs.get(keys..).unwrap_or_default())
            .map(|(d, k)| Ok((matches!(d, Datum::Null), value(d, *k)?)))
            .collect::<Result<_>>()?;
        let Some(&at) = by_group.get(&group) else {
            by_group.insert(group, merged.len());
            merged.push(row);
            continue;
        };
        let Some(into) = merged.get_mut(at) else { bail!("{}: lost group", task.name) };
        for (i, (acc, part)) in into.iter_mut().zip(&row).take(keys).enumerate() {
            *acc = add_partial(acc, part).with_context(|| format!("{} column {i}", task.name))?;
        }
    }
    render(task, &merged)
}

/// Two partial COUNTs or SUMs added: NULL (a SUM over no row) adds nothing.
fn add_partial(a: &Datum, b: &Datum) -> Result<Datum> {
    Ok(match (a, b) {
        (Datum::Null, x) | (x, Datum::Null) => x.clone(),
        (Datum::Int(x), Datum::Int(y)) => Datum::Int(x.checked_add(*y).context("count")?),
        (Datum::Uint(x), Datum::Uint(y)) => Datum::Uint(x.checked_add(*y).context("count")?),
        (Datum::Decimal(x), Datum::Decimal(y)) => {
            Datum::Decimal(x.add(y).into_result().context("sum")?)
        }
        (a, b) => bail!("partials {a:?} and {b:?} do not add"),
    })
}

/// The datums of a TypeDefault answer, a row of `task.outputs.len()` at a time.
fn decode_rows(task: &Task, resp: &coprocessor::Response) -> Result<Vec<Vec<Datum>>> {
    if !resp.other_error.is_empty() {
        bail!("{}: {}", task.name, resp.other_error);
    }
    let sel = tipb::SelectResponse::decode(resp.data.clone()).context("SelectResponse")?;
    if let Some(e) = &sel.error {
        bail!("{}: {e:?}", task.name);
    }
    let mut datums = Vec::new();
    for c in &sel.chunks {
        datums.extend(Datum::decode_all(c.rows_data.as_deref().unwrap_or(&[])).context("rows")?);
    }
    let width = task.outputs.len().max(1);
    if datums.len() % width != 0 {
        bail!("{}: {} datums for {width} columns", task.name, datums.len());
    }
    Ok(datums.chunks(width).map(<[Datum]>::to_vec).collect())
}

/// One line per row, sorted unless the task is ordered.
fn render(task: &Task, rows: &[Vec<Datum>]) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for row in rows {
        let vals: Vec<String> =
            row.iter().zip(&task.outputs).map(|(d, k)| value(d, *k)).collect::<Result<_>>()?;
        lines.push(vals.join("\t"));
    }
    if !task.ordered {
        lines.sort();
    }
    Ok(lines)
}

fn value(d: &Datum, kind: Kind) -> Result<String> {
    Ok(match (d, kind) {
        (Datum::Null, _) => "NULL".into(),
        (Datum::Int(x), Kind::Int) => x.to_string(),
        (Datum::Uint(x), Kind::Int) => x.to_string(),
        (Datum::Decimal(x), Kind::Dec) => x.to_string(),
        (Datum::Uint(p), Kind::Date) => {
            Time::from_packed_u64(*p, TimeType::Date, 0).context("packed date")?.to_string()
        }
        (Datum::Time(t), Kind::Date) => t.to_string(),
        (Datum::Bytes(b), Kind::Char(_) | Kind::Varchar(_)) => {
            String::from_utf8(b.clone()).context("string value")?
        }
        (d, k) => bail!("{d:?} is not a {k:?}"),
    })
}

/// The rows of a committed `.expected` file (lines not starting with `#`), in the order
/// [`format_rows`] gives.
pub fn parse_expected(text: &str, ordered: bool) -> Vec<String> {
    let mut lines: Vec<String> =
        text.lines().filter(|l| !l.starts_with('#')).map(str::to_owned).collect();
    if !ordered {
        lines.sort();
    }
    lines
}

// ---- the reference engine's input ----

fn csv_value(v: &Val) -> String {
    match v {
        Val::Int(x) => x.to_string(),
        Val::Dec(c) => {
            let sign = if *c < 0 { "-" } else { "" };
            let a = c.unsigned_abs();
            format!("{sign}{}.{:02}", a / 100, a % 100)
        }
        Val::Date(t) => t.to_string(),
        Val::Str(b) => String::from_utf8_lossy(b).into_owned(),
    }
}

fn sql_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Int => "BIGINT",
        Kind::Dec => "DECIMAL(15, 2)",
        Kind::Date => "DATE",
        Kind::Char(_) | Kind::Varchar(_) => "VARCHAR",
    }
}

/// Writes what the reference engine needs into `dir`: `<table>.csv` for each of go-tpc's
/// tables at `sf` (`|`-separated, no header, exactly the rows the loader stores),
/// `schema.sql` (a `CREATE TABLE` per table) and `tasks.tsv` (per task: name, `1` when
/// ordered else `0`, the SQL).
///
/// # Errors
///
/// I/O errors, a generator error.
pub fn write_reference_input(dir: &std::path::Path, sf: f64) -> Result<()> {
    let mut ddl = String::new();
    for t in schema::TABLES {
        let cols: Vec<String> =
            t.cols.iter().map(|(n, k)| format!("{n} {}", sql_type(*k))).collect();
        ddl.push_str(&format!("CREATE TABLE {} ({});\n", t.name, cols.join(", ")));
        let path = dir.join(format!("{}.csv", t.name));
        let file = std::fs::File::create(&path).with_context(|| path.display().to_string())?;
        let mut out = std::io::BufWriter::new(file);
        for row in schema::rows(t.name, sf)? {
            let row = row?;
            let line: Vec<String> = row.iter().map(csv_value).collect();
            writeln!(out, "{}", line.join("|"))?;
        }
        out.flush()?;
    }
    std::fs::write(dir.join("schema.sql"), ddl)?;
    let mut tasks = String::new();
    for task in all()? {
        tasks.push_str(&format!("{}\t{}\t{}\n", task.name, u8::from(task.ordered), task.sql));
    }
    std::fs::write(dir.join("tasks.tsv"), tasks)?;
    Ok(())
}
