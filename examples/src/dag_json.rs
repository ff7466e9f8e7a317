//! A readable JSON form of a `tipb.DAGRequest`, for `rcop query --dag file.json` and
//! `rcop dag` (which prints a built-in query in this form as a starting point).
//!
//! ```json
//! {
//!   "names": ["l_orderkey", "l_quantity"],
//!   "ranges": [{"handles": [1, 201]}],
//!   "executors": [
//!     {"table_scan": {"table_id": 70, "columns": [
//!        {"id": 1, "type": "bigint(20,0) not null"},
//!        {"id": 5, "type": "decimal(15,2) not null"}]}},
//!     {"selection": [{"func": "GTDecimal", "args": [{"col": 1}, {"decimal": "45"}]}]}
//!   ],
//!   "output": [0, 1]
//! }
//! ```
//!
//! - **Types** are strings: a MySQL type name, `(flen[,decimal])` (omitted: both `-1`,
//!   TiDB's "unspecified"), then flags (`unsigned`, `binary`, `not null`, `pk`, `flag N` for
//!   the other bits), `collate NAME|ID` (omitted: `utf8mb4_bin` for strings, `binary` for
//!   the rest; `collate none` for an absent one) and `charset NAME`.
//! - **Expressions** are objects: `{"col": N}`, constants (`{"int": 1}`, `{"uint": 1}`,
//!   `{"real": 1.5}`, `{"string": "a"}`, `{"bytes_hex": "00ff"}`, `{"decimal": "0.05"}`,
//!   `{"date": "1994-01-01"}`, `{"datetime": "1994-01-01 10:00:00"}`,
//!   `{"duration_nanos": 0}`, `{"null": null}`), `{"func": "LETime", "args": [...]}`
//!   (tipb's `ScalarFuncSig` names), `{"agg": "Sum", "args": [...]}` (`ExprType` names;
//!   `distinct`, `mode`, `order_by`), and for anything else the exact form
//!   `{"expr": "MysqlJson", "val_hex": "…", "args": [...], "sig": N}`. Each may carry
//!   `"type"`; without it the type is inferred (a column's from its input, a comparison's
//!   `bigint(1,0)`, a function's from its first argument, a constant's from its value).
//! - **Executors**: `table_scan`, `index_scan`, `selection`, `aggregation` / `stream_agg`,
//!   `top_n`, `limit`, `projection`, each optionally with `"id"` (the `executor_id`).
//! - **Ranges** (optional; default the whole table or index the first executor scans):
//!   `{"handles": [lo, hi]}` (int handles `[lo, hi)`), `{"index": [lo, hi]}` (first index
//!   column, an integer), `{"start_hex": …, "end_hex": …}` (keys without the keyspace prefix).
//!
//! [`to_json`] prints any DAG it can represent exactly and checks that by parsing its own
//! output back: a DAG with fields this form does not hold is an error, never a silent loss.

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::codec::{self, Reader};
use rcop_datum::{Datum, Decimal, Duration, Mode, Time, TimeType, key};
use rcop_proto::{coprocessor, tipb};
use serde_json::{Map, Value, json};

/// A parsed JSON DAG: the request, the ranges it asks for and its output's names and types.
#[derive(Debug, Clone, PartialEq)]
pub struct DagFile {
    /// The DAG.
    pub dag: tipb::DagRequest,
    /// The ranges (empty: the whole table or index of the first executor).
    pub ranges: Vec<RangeSpec>,
    /// A name per output column (`c0`, `c1`, … when the file gives none).
    pub names: Vec<String>,
    /// The type of each output column.
    pub types: Vec<tipb::FieldType>,
}

/// A key range of a JSON DAG, relative to the table or index its first executor scans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeSpec {
    /// Int handles `[lo, hi)`.
    Handles(i64, i64),
    /// Index entries whose first column (an integer) is in `[lo, hi)`.
    Index(i64, i64),
    /// Raw keys without the keyspace prefix.
    Raw(Vec<u8>, Vec<u8>),
}

const TYPE_NAMES: &[(&str, u8)] = &[
    ("unspecified", mt::UNSPECIFIED),
    ("tinyint", mt::TINY),
    ("smallint", mt::SHORT),
    ("int", mt::LONG),
    ("float", mt::FLOAT),
    ("double", mt::DOUBLE),
    ("null", mt::NULL),
    ("timestamp", mt::TIMESTAMP),
    ("bigint", mt::LONG_LONG),
    ("mediumint", mt::INT24),
    ("date", mt::DATE),
    ("time", mt::DURATION),
    ("datetime", mt::DATETIME),
    ("year", mt::YEAR),
    ("newdate", mt::NEW_DATE),
    ("varchar", mt::VARCHAR),
    ("bit", mt::BIT),
    ("vector", mt::TIDB_VECTOR_FLOAT32),
    ("json", mt::JSON),
    ("decimal", mt::NEW_DECIMAL),
    ("enum", mt::ENUM),
    ("set", mt::SET),
    ("tinyblob", mt::TINY_BLOB),
    ("mediumblob", mt::MEDIUM_BLOB),
    ("longblob", mt::LONG_BLOB),
    ("blob", mt::BLOB),
    ("var_string", mt::VAR_STRING),
    ("char", mt::STRING),
    ("geometry", mt::GEOMETRY),
];

const FLAG_NOT_NULL: u32 = 1;
const FLAG_PRI_KEY: u32 = 2;
const FLAG_UNSIGNED: u32 = 32;
const FLAG_BINARY: u32 = 128;
const COLLATE_BINARY: i32 = 63;
const COLLATE_UTF8MB4_BIN: i32 = -46;

fn is_string_type(tp: i32) -> bool {
    u8::try_from(tp).is_ok_and(|t| {
        matches!(
            t,
            mt::VARCHAR
                | mt::VAR_STRING
                | mt::STRING
                | mt::TINY_BLOB
                | mt::MEDIUM_BLOB
                | mt::LONG_BLOB
                | mt::BLOB
                | mt::ENUM
                | mt::SET
        )
    })
}

fn default_collate(tp: i32) -> i32 {
    if is_string_type(tp) { COLLATE_UTF8MB4_BIN } else { COLLATE_BINARY }
}

fn collate_name(id: i32) -> String {
    if id == COLLATE_BINARY {
        return "binary".into();
    }
    match rcop_exec::COLLATIONS.iter().find(|c| c.id == id) {
        Some(c) => c.name.to_owned(),
        None => id.to_string(),
    }
}

fn collate_id(name: &str) -> Result<i32> {
    if name == "binary" {
        return Ok(COLLATE_BINARY);
    }
    if let Some(c) = rcop_exec::COLLATIONS.iter().find(|c| c.name == name) {
        return Ok(c.id);
    }
    name.parse().map_err(|_| anyhow!("unknown collation {name:?}"))
}

/// Renders a field type as a type string.
pub fn type_string(ft: &tipb::FieldType) -> String {
    let tp = ft.tp.unwrap_or(0);
    let mut s = match TYPE_NAMES.iter().find(|(_, code)| i32::from(*code) == tp) {
        Some((name, _)) => (*name).to_owned(),
        None => format!("type{tp}"),
    };
    let (flen, dec) = (ft.flen.unwrap_or(-1), ft.decimal.unwrap_or(-1));
    if dec != -1 {
        s.push_str(&format!("({flen},{dec})"));
    } else if flen != -1 {
        s.push_str(&format!("({flen})"));
    }
    let mut flag = ft.flag.unwrap_or(0);
    for (bit, word) in [
        (FLAG_UNSIGNED, "unsigned"),
        (FLAG_BINARY, "binary"),
        (FLAG_NOT_NULL, "not null"),
        (FLAG_PRI_KEY, "pk"),
    ] {
        if flag & bit != 0 {
            s.push(' ');
            s.push_str(word);
            flag &= !bit;
        }
    }
    if flag != 0 {
        s.push_str(&format!(" flag {flag}"));
    }
    match ft.collate {
        None => s.push_str(" collate none"),
        Some(c) if c == default_collate(tp) => {}
        Some(c) => s.push_str(&format!(" collate {}", collate_name(c))),
    }
    if let Some(cs) = &ft.charset {
        s.push_str(&format!(" charset {cs}"));
    }
    s
}

/// Parses a type string.
///
/// # Errors
///
/// An unknown type name, flag word or collation; bad numbers.
pub fn parse_type(text: &str) -> Result<tipb::FieldType> {
    let text = text.trim();
    let name_end = text.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(text.len());
    let name = text[..name_end].to_ascii_lowercase();
    let tp = match TYPE_NAMES.iter().find(|(n, _)| *n == name) {
        Some((_, code)) => i32::from(*code),
        None => match name.strip_prefix("type").and_then(|n| n.parse().ok()) {
            Some(code) => code,
            None => bail!("unknown type {name:?} in {text:?}"),
        },
    };
    let mut rest = &text[name_end..];
    let (mut flen, mut dec) = (-1, -1);
    if let Some(inner) = rest.strip_prefix('(') {
        let close = inner.find(')').with_context(|| format!("unclosed '(' in {text:?}"))?;
        let mut parts = inner[..close].split(',').map(str::trim);
        let num = |p: Option<&str>| -> Result<Option<i32>> {
            p.map(|p| p.parse().with_context(|| format!("bad number {p:?} in {text:?}")))
                .transpose()
        };
        flen = num(parts.next())?.unwrap_or(-1);
        dec = num(parts.next())?.unwrap_or(-1);
        if parts.next().is_some() {
            bail!("more than two numbers in {text:?}");
        }
        rest = &inner[close + 1..];
    }
    let mut flag = 0u32;
    let mut collate = Some(default_collate(tp));
    let mut charset = None;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].to_ascii_lowercase();
        let next = words.get(i + 1).copied();
        match (word.as_str(), next) {
            ("unsigned", _) => flag |= FLAG_UNSIGNED,
            ("binary", _) => flag |= FLAG_BINARY,
            ("pk", _) => flag |= FLAG_PRI_KEY,
            ("not", Some(n)) if n.eq_ignore_ascii_case("null") => {
                flag |= FLAG_NOT_NULL;
                i += 1;
            }
            ("flag", Some(n)) => {
                flag |= n.parse::<u32>().with_context(|| format!("bad flag {n:?} in {text:?}"))?;
                i += 1;
            }
            ("collate", Some(n)) => {
                collate = if n == "none" { None } else { Some(collate_id(n)?) };
                i += 1;
            }
            ("charset", Some(n)) => {
                charset = Some(n.to_owned());
                i += 1;
            }
            _ => bail!("unexpected {:?} in type {text:?}", words[i]),
        }
        i += 1;
    }
    Ok(tipb::FieldType {
        tp: Some(tp),
        flag: Some(flag),
        flen: Some(flen),
        decimal: Some(dec),
        collate,
        charset,
        ..Default::default()
    })
}

fn column_type(c: &tipb::ColumnInfo) -> tipb::FieldType {
    tipb::FieldType {
        tp: c.tp,
        flag: c.flag.and_then(|f| u32::try_from(f).ok()),
        flen: c.column_len,
        decimal: c.decimal,
        collate: c.collation,
        elems: c.elems.clone(),
        ..Default::default()
    }
}

fn bigint(flen: i32) -> tipb::FieldType {
    tipb::FieldType {
        tp: Some(i32::from(mt::LONG_LONG)),
        flag: Some(FLAG_NOT_NULL | FLAG_BINARY),
        flen: Some(flen),
        decimal: Some(0),
        collate: Some(COLLATE_BINARY),
        ..Default::default()
    }
}

// ---- printing ----

fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key)
}

fn hex_of(b: &[u8]) -> String {
    hex::encode(b)
}

fn expr_json(e: &tipb::Expr) -> Value {
    let mut o = Map::new();
    let tp = e.tp.unwrap_or(0);
    let val = e.val.as_deref();
    let ft_tp = e.field_type.as_ref().and_then(|f| f.tp).unwrap_or(0);
    let sugar: Option<(&str, Value)> = match (tp, val) {
        (201, Some(v)) => codec::decode_i64(&mut Reader::new(v)).ok().map(|c| ("col", json!(c))),
        (1, Some(v)) => codec::decode_i64(&mut Reader::new(v)).ok().map(|x| ("int", json!(x))),
        (2, Some(v)) => codec::decode_u64(&mut Reader::new(v)).ok().map(|x| ("uint", json!(x))),
        (4, Some(v)) => codec::decode_f64(&mut Reader::new(v))
            .ok()
            .filter(|x| x.is_finite())
            .map(|x| ("real", json!(x))),
        (5, Some(v)) => std::str::from_utf8(v).ok().map(|s| ("string", json!(s))),
        (6, Some(v)) => Some(("bytes_hex", json!(hex_of(v)))),
        (102, Some(v)) => Decimal::decode_bin(&mut Reader::new(v)).ok().map(|(d, p, f)| {
            if d.prec_and_frac() != (p, f) {
                o.insert("prec".into(), json!(p));
                o.insert("frac".into(), json!(f));
            }
            ("decimal", json!(d.to_string()))
        }),
        (103, Some(v)) => {
            codec::decode_i64(&mut Reader::new(v)).ok().map(|x| ("duration_nanos", json!(x)))
        }
        (107, Some(v)) => codec::decode_u64(&mut Reader::new(v)).ok().and_then(|p| {
            let (key, tt) = if ft_tp == i32::from(mt::DATE) {
                ("date", TimeType::Date)
            } else {
                ("datetime", TimeType::DateTime)
            };
            let fsp = e.field_type.as_ref().and_then(|f| f.decimal).unwrap_or(0).clamp(0, 6);
            Time::from_packed_u64(p, tt, fsp as u8).ok().map(|t| (key, json!(t.to_string())))
        }),
        (0, None) => Some(("null", Value::Null)),
        (10000, _) => e.sig.map(|sig| {
            let name = tipb::ScalarFuncSig::try_from(sig)
                .map_or_else(|_| json!(sig), |s| json!(s.as_str_name()));
            ("func", name)
        }),
        (t, None) if (3000..4000).contains(&t) => {
            tipb::ExprType::try_from(t).ok().map(|name| ("agg", json!(name.as_str_name())))
        }
        _ => None,
    };
    match sugar {
        Some((key, v)) => {
            o.insert(key.into(), v);
        }
        None => {
            let name =
                tipb::ExprType::try_from(tp).map_or_else(|_| json!(tp), |t| json!(t.as_str_name()));
            o.insert("expr".into(), name);
            if let Some(v) = val {
                o.insert("val_hex".into(), json!(hex_of(v)));
            }
            if let Some(sig) = e.sig {
                o.insert("sig".into(), json!(sig));
            }
        }
    }
    if !e.children.is_empty() {
        o.insert("args".into(), Value::Array(e.children.iter().map(expr_json).collect()));
    }
    if let Some(d) = e.has_distinct {
        o.insert("distinct".into(), json!(d));
    }
    if let Some(m) = e.agg_func_mode {
        let name = tipb::AggFunctionMode::try_from(m)
            .map_or_else(|_| json!(m), |m| json!(m.as_str_name()));
        o.insert("mode".into(), name);
    }
    if !e.order_by.is_empty() {
        o.insert("order_by".into(), Value::Array(e.order_by.iter().map(by_item_json).collect()));
    }
    if let Some(ft) = &e.field_type {
        o.insert("type".into(), json!(type_string(ft)));
    }
    Value::Object(o)
}

fn by_item_json(b: &tipb::ByItem) -> Value {
    let mut o = Map::new();
    if let Some(e) = &b.expr {
        o.insert("expr".into(), expr_json(e));
    }
    if let Some(d) = b.desc {
        o.insert("desc".into(), json!(d));
    }
    Value::Object(o)
}

fn column_json(c: &tipb::ColumnInfo) -> Value {
    let mut o = Map::new();
    if let Some(id) = c.column_id {
        o.insert("id".into(), json!(id));
    }
    o.insert("type".into(), json!(type_string(&column_type(c))));
    if let Some(pk) = c.pk_handle {
        o.insert("pk_handle".into(), json!(pk));
    }
    if let Some(d) = &c.default_val {
        o.insert("default_hex".into(), json!(hex_of(d)));
    }
    if let Some(a) = c.array {
        o.insert("array".into(), json!(a));
    }
    Value::Object(o)
}

fn opt_insert<T: serde::Serialize>(o: &mut Map<String, Value>, key: &str, v: Option<T>) {
    if let Some(v) = v {
        o.insert(key.into(), json!(v));
    }
}

fn executor_json(e: &tipb::Executor) -> Result<Value> {
    use tipb::ExecType as T;
    let mut o = Map::new();
    let tp = e.tp.unwrap_or(0);
    match T::try_from(tp) {
        Ok(T::TypeTableScan) => {
            let s = e.tbl_scan.as_ref().context("table scan without tbl_scan")?;
            let mut m = Map::new();
            opt_insert(&mut m, "table_id", s.table_id);
            m.insert("columns".into(), Value::Array(s.columns.iter().map(column_json).collect()));
            opt_insert(&mut m, "desc", s.desc);
            if !s.primary_column_ids.is_empty() {
                m.insert("primary_column_ids".into(), json!(s.primary_column_ids));
            }
            if !s.primary_prefix_column_ids.is_empty() {
                m.insert("primary_prefix_column_ids".into(), json!(s.primary_prefix_column_ids));
            }
            opt_insert(&mut m, "keep_order", s.keep_order);
            o.insert("table_scan".into(), Value::Object(m));
        }
        Ok(T::TypeIndexScan) => {
            let s = e.idx_scan.as_ref().context("index scan without idx_scan")?;
            let mut m = Map::new();
            opt_insert(&mut m, "table_id", s.table_id);
            opt_insert(&mut m, "index_id", s.index_id);
            m.insert("columns".into(), Value::Array(s.columns.iter().map(column_json).collect()));
            opt_insert(&mut m, "desc", s.desc);
            opt_insert(&mut m, "unique", s.unique);
            if !s.primary_column_ids.is_empty() {
                m.insert("primary_column_ids".into(), json!(s.primary_column_ids));
            }
            o.insert("index_scan".into(), Value::Object(m));
        }
        Ok(T::TypeSelection) => {
            let s = e.selection.as_ref().context("selection without its message")?;
            o.insert(
                "selection".into(),
                Value::Array(s.conditions.iter().map(expr_json).collect()),
            );
        }
        Ok(T::TypeProjection) => {
            let s = e.projection.as_ref().context("projection without its message")?;
            o.insert("projection".into(), Value::Array(s.exprs.iter().map(expr_json).collect()));
        }
        Ok(k @ (T::TypeAggregation | T::TypeStreamAgg)) => {
            let a = e.aggregation.as_ref().context("aggregation without its message")?;
            let mut m = Map::new();
            m.insert("group_by".into(), Value::Array(a.group_by.iter().map(expr_json).collect()));
            m.insert("aggs".into(), Value::Array(a.agg_func.iter().map(expr_json).collect()));
            opt_insert(&mut m, "streamed", a.streamed);
            let key = if k == T::TypeStreamAgg { "stream_agg" } else { "aggregation" };
            o.insert(key.into(), Value::Object(m));
        }
        Ok(T::TypeTopN) => {
            let t = e.top_n.as_ref().context("top_n without its message")?;
            let mut m = Map::new();
            m.insert(
                "order_by".into(),
                Value::Array(t.order_by.iter().map(by_item_json).collect()),
            );
            opt_insert(&mut m, "limit", t.limit);
            o.insert("top_n".into(), Value::Object(m));
        }
        Ok(T::TypeLimit) => {
            let l = e.limit.as_ref().context("limit without its message")?;
            o.insert("limit".into(), json!(l.limit));
        }
        _ => bail!("executor type {tp} has no JSON form"),
    }
    opt_insert(&mut o, "id", e.executor_id.as_deref());
    Ok(Value::Object(o))
}

/// Prints `dag` (with its `ranges` and output `names`, which may be empty) in the JSON form.
///
/// # Errors
///
/// A DAG with executors or fields the form does not hold (checked by parsing the output
/// back and comparing).
pub fn to_json(dag: &tipb::DagRequest, ranges: &[RangeSpec], names: &[&str]) -> Result<String> {
    let mut o = Map::new();
    if !names.is_empty() {
        o.insert("names".into(), json!(names));
    }
    if !ranges.is_empty() {
        let rs: Vec<Value> = ranges
            .iter()
            .map(|r| match r {
                RangeSpec::Handles(lo, hi) => json!({"handles": [lo, hi]}),
                RangeSpec::Index(lo, hi) => json!({"index": [lo, hi]}),
                RangeSpec::Raw(s, e) => json!({"start_hex": hex_of(s), "end_hex": hex_of(e)}),
            })
            .collect();
        o.insert("ranges".into(), Value::Array(rs));
    }
    let execs: Vec<Value> = dag.executors.iter().map(executor_json).collect::<Result<_>>()?;
    o.insert("executors".into(), Value::Array(execs));
    o.insert("output".into(), json!(dag.output_offsets));
    if let Some(enc) = dag.encode_type {
        let name =
            tipb::EncodeType::try_from(enc).map_or_else(|_| json!(enc), |e| json!(e.as_str_name()));
        o.insert("encode_type".into(), name);
    }
    opt_insert(&mut o, "time_zone_offset", dag.time_zone_offset);
    opt_insert(&mut o, "time_zone_name", dag.time_zone_name.as_deref());
    opt_insert(&mut o, "flags", dag.flags);
    opt_insert(&mut o, "sql_mode", dag.sql_mode);
    opt_insert(&mut o, "max_warning_count", dag.max_warning_count);
    opt_insert(&mut o, "collect_execution_summaries", dag.collect_execution_summaries);
    opt_insert(&mut o, "max_allowed_packet", dag.max_allowed_packet);
    opt_insert(&mut o, "start_ts_fallback", dag.start_ts_fallback);
    let text = serde_json::to_string_pretty(&Value::Object(o))?;
    let back = parse(&text).context("the printed form does not parse back")?;
    if back.dag != *dag || back.ranges != ranges {
        bail!("the DAG has fields the JSON form does not hold");
    }
    Ok(text)
}

// ---- parsing ----

/// A JSON path for error messages.
#[derive(Clone)]
struct At(String);

impl At {
    fn key(&self, k: &str) -> At {
        At(format!("{}.{k}", self.0))
    }
    fn idx(&self, i: usize) -> At {
        At(format!("{}[{i}]", self.0))
    }
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "(top)" } else { self.0.trim_start_matches('.') })
    }
}

fn obj<'a>(v: &'a Value, at: &At) -> Result<&'a Map<String, Value>> {
    v.as_object().with_context(|| format!("{at}: expected an object, found {v}"))
}

fn arr<'a>(v: &'a Value, at: &At) -> Result<&'a Vec<Value>> {
    v.as_array().with_context(|| format!("{at}: expected an array, found {v}"))
}

fn int_of(v: &Value, at: &At) -> Result<i64> {
    v.as_i64().with_context(|| format!("{at}: expected an integer, found {v}"))
}

fn uint_of(v: &Value, at: &At) -> Result<u64> {
    v.as_u64().with_context(|| format!("{at}: expected a non-negative integer, found {v}"))
}

fn bool_of(v: &Value, at: &At) -> Result<bool> {
    v.as_bool().with_context(|| format!("{at}: expected true or false, found {v}"))
}

fn str_of<'a>(v: &'a Value, at: &At) -> Result<&'a str> {
    v.as_str().with_context(|| format!("{at}: expected a string, found {v}"))
}

fn hex_bytes(v: &Value, at: &At) -> Result<Vec<u8>> {
    hex::decode(str_of(v, at)?).with_context(|| format!("{at}: not hex"))
}

fn check_keys(o: &Map<String, Value>, allowed: &[&str], at: &At) -> Result<()> {
    for k in o.keys() {
        if !allowed.contains(&k.as_str()) {
            bail!("{at}: unknown key {k:?} (expected one of {})", allowed.join(", "));
        }
    }
    Ok(())
}

fn enum_value(
    v: &Value,
    at: &At,
    what: &str,
    from_name: impl Fn(&str) -> Option<i32>,
) -> Result<i32> {
    match v {
        Value::String(s) => from_name(s).with_context(|| format!("{at}: unknown {what} {s:?}")),
        Value::Number(_) => {
            i32::try_from(int_of(v, at)?).with_context(|| format!("{at}: {what} out of range"))
        }
        _ => bail!("{at}: expected a {what} name, found {v}"),
    }
}

/// Functions whose result is a boolean (TiDB types them `bigint(1,0)`): comparisons, IN,
/// LIKE / REGEXP matching, logical operators and the IS NULL / IS TRUE family.
fn returns_bool(sig: &str) -> bool {
    const COMPARE: [&str; 8] = ["LT", "LE", "GT", "GE", "EQ", "NE", "NullEQ", "In"];
    const TYPED: [&str; 7] = ["Int", "Real", "Decimal", "String", "Time", "Duration", "Json"];
    COMPARE.iter().any(|p| sig.strip_prefix(p).is_some_and(|rest| TYPED.contains(&rest)))
        || matches!(
            sig,
            "LikeSig"
                | "IlikeSig"
                | "RegexpSig"
                | "RegexpUTF8Sig"
                | "RegexpLikeSig"
                | "RegexpLikeUTF8Sig"
                | "LogicalAnd"
                | "LogicalOr"
                | "LogicalXor"
        )
        || sig.starts_with("UnaryNot")
        || sig.ends_with("IsNull")
        || sig.contains("IsTrue")
        || sig.contains("IsFalse")
}

struct ExprParser<'s> {
    schema: &'s [tipb::FieldType],
}

const EXPR_KEYS: &[&str] = &[
    "col",
    "int",
    "uint",
    "real",
    "string",
    "bytes_hex",
    "decimal",
    "prec",
    "frac",
    "date",
    "datetime",
    "duration_nanos",
    "null",
    "func",
    "agg",
    "expr",
    "val_hex",
    "sig",
    "args",
    "distinct",
    "mode",
    "order_by",
    "type",
];

impl ExprParser<'_> {
    fn expr(&self, v: &Value, at: &At) -> Result<tipb::Expr> {
        let o = obj(v, at)?;
        check_keys(o, EXPR_KEYS, at)?;
        let args: Vec<tipb::Expr> = match field(o, "args") {
            Some(a) => {
                let at = at.key("args");
                arr(a, &at)?
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.expr(x, &at.idx(i)))
                    .collect::<Result<_>>()?
            }
            None => Vec::new(),
        };
        let given = field(o, "type")
            .map(|t| parse_type(str_of(t, &at.key("type"))?).with_context(|| at.key("type").0))
            .transpose()?;
        let mut e = tipb::Expr { children: args, ..Default::default() };
        let mut put = |tp: i32, val: Vec<u8>| {
            e.tp = Some(tp);
            e.val = Some(Bytes::from(val));
        };
        let mut inferred: Option<tipb::FieldType> = None;
        let kinds = [
            "col",
            "int",
            "uint",
            "real",
            "string",
            "bytes_hex",
            "decimal",
            "date",
            "datetime",
            "duration_nanos",
            "null",
            "func",
            "agg",
            "expr",
        ];
        let present: Vec<&str> = kinds.iter().copied().filter(|k| o.contains_key(*k)).collect();
        let [kind] = present.as_slice() else {
            bail!("{at}: an expression needs exactly one of {}", kinds.join(", "));
        };
        let x = &o[*kind];
        let xat = at.key(kind);
        match *kind {
            "col" => {
                let c = int_of(x, &xat)?;
                let mut v = Vec::new();
                codec::encode_i64(&mut v, c);
                put(201, v);
                let input = usize::try_from(c).ok().and_then(|i| self.schema.get(i));
                match (input, &given) {
                    (Some(ft), _) => inferred = Some(ft.clone()),
                    (None, Some(_)) => {}
                    (None, None) => bail!(
                        "{xat}: column {c} is not in the input (it has {} columns)",
                        self.schema.len()
                    ),
                }
            }
            "int" => {
                let mut v = Vec::new();
                codec::encode_i64(&mut v, int_of(x, &xat)?);
                put(1, v);
                inferred = Some(bigint(20));
            }
            "uint" => {
                let mut v = Vec::new();
                codec::encode_u64(&mut v, uint_of(x, &xat)?);
                put(2, v);
                let mut ft = bigint(20);
                ft.flag = ft.flag.map(|f| f | FLAG_UNSIGNED);
                inferred = Some(ft);
            }
            "real" => {
                let f = x.as_f64().with_context(|| format!("{xat}: expected a number"))?;
                let mut v = Vec::new();
                codec::encode_f64(&mut v, f);
                put(4, v);
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(mt::DOUBLE)),
                    flen: Some(22),
                    decimal: Some(-1),
                    ..bigint(22)
                });
            }
            "string" => {
                put(5, str_of(x, &xat)?.as_bytes().to_vec());
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(mt::VARCHAR)),
                    flag: Some(FLAG_NOT_NULL),
                    flen: Some(-1),
                    decimal: Some(-1),
                    collate: Some(COLLATE_UTF8MB4_BIN),
                    ..Default::default()
                });
            }
            "bytes_hex" => {
                put(6, hex_bytes(x, &xat)?);
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(mt::VARCHAR)),
                    flag: Some(FLAG_NOT_NULL | FLAG_BINARY),
                    flen: Some(-1),
                    decimal: Some(-1),
                    collate: Some(COLLATE_BINARY),
                    ..Default::default()
                });
            }
            "decimal" => {
                let d: Decimal =
                    str_of(x, &xat)?.parse().map_err(|e| anyhow!("{xat}: not a decimal: {e:?}"))?;
                let (mut p, mut f) = d.prec_and_frac();
                if let Some(pv) = field(o, "prec") {
                    p = u8::try_from(uint_of(pv, &at.key("prec"))?).context("prec")?;
                }
                if let Some(fv) = field(o, "frac") {
                    f = u8::try_from(uint_of(fv, &at.key("frac"))?).context("frac")?;
                }
                let mut v = Vec::new();
                let _ = d
                    .write_bin(p, f, &mut v)
                    .map_err(|e| anyhow!("{xat}: cannot encode as DECIMAL({p},{f}): {e:?}"))?;
                put(102, v);
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(mt::NEW_DECIMAL)),
                    flag: Some(FLAG_NOT_NULL | FLAG_BINARY),
                    flen: Some(i32::from(p)),
                    decimal: Some(i32::from(f)),
                    collate: Some(COLLATE_BINARY),
                    ..Default::default()
                });
            }
            "date" | "datetime" => {
                let (tt, code) = if *kind == "date" {
                    (TimeType::Date, mt::DATE)
                } else {
                    (TimeType::DateTime, mt::DATETIME)
                };
                let fsp = given.as_ref().and_then(|g| g.decimal).map_or(0, |d| d.clamp(0, 6) as u8);
                let t = Time::parse(str_of(x, &xat)?, tt, fsp)
                    .map_err(|e| anyhow!("{xat}: not a {kind}: {e:?}"))?;
                let mut v = Vec::new();
                codec::encode_u64(&mut v, t.to_packed_u64());
                put(107, v);
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(code)),
                    flag: Some(FLAG_NOT_NULL | FLAG_BINARY),
                    flen: Some(if *kind == "date" { 10 } else { 19 }),
                    decimal: Some(i32::from(fsp)),
                    collate: Some(COLLATE_BINARY),
                    ..Default::default()
                });
            }
            "duration_nanos" => {
                let mut v = Vec::new();
                codec::encode_i64(&mut v, int_of(x, &xat)?);
                put(103, v);
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(mt::DURATION)),
                    flag: Some(FLAG_NOT_NULL | FLAG_BINARY),
                    flen: Some(10),
                    decimal: Some(0),
                    collate: Some(COLLATE_BINARY),
                    ..Default::default()
                });
            }
            "null" => {
                if !x.is_null() {
                    bail!("{xat}: write {{\"null\": null}}");
                }
                e.tp = Some(0);
                inferred = Some(tipb::FieldType {
                    tp: Some(i32::from(mt::NULL)),
                    flag: Some(FLAG_BINARY),
                    ..bigint(-1)
                });
            }
            "func" => {
                let sig = enum_value(x, &xat, "function", |n| {
                    tipb::ScalarFuncSig::from_str_name(n).map(|s| s as i32)
                })?;
                e.tp = Some(10000);
                e.sig = Some(sig);
                let name =
                    tipb::ScalarFuncSig::try_from(sig).map(|s| s.as_str_name()).unwrap_or("");
                inferred = if returns_bool(name) {
                    Some(bigint(1))
                } else {
                    e.children.first().and_then(|c| c.field_type.clone())
                };
            }
            "agg" => {
                let tp = enum_value(x, &xat, "aggregate", |n| {
                    tipb::ExprType::from_str_name(n).map(|t| t as i32)
                })?;
                if !(3000..4000).contains(&tp) {
                    bail!("{xat}: {x} is not an aggregate");
                }
                e.tp = Some(tp);
                inferred = agg_type(tp, e.children.first().and_then(|c| c.field_type.as_ref()));
            }
            _ => {
                // "expr": the exact form.
                let tp = enum_value(x, &xat, "expression type", |n| {
                    tipb::ExprType::from_str_name(n).map(|t| t as i32)
                })?;
                e.tp = Some(tp);
                if let Some(v) = field(o, "val_hex") {
                    e.val = Some(Bytes::from(hex_bytes(v, &at.key("val_hex"))?));
                }
                if let Some(s) = field(o, "sig") {
                    e.sig = Some(
                        i32::try_from(int_of(s, &at.key("sig"))?).context("sig out of range")?,
                    );
                }
            }
        }
        if let Some(d) = field(o, "distinct") {
            e.has_distinct = Some(bool_of(d, &at.key("distinct"))?);
        }
        if let Some(m) = field(o, "mode") {
            e.agg_func_mode = Some(enum_value(m, &at.key("mode"), "aggregate mode", |n| {
                tipb::AggFunctionMode::from_str_name(n).map(|m| m as i32)
            })?);
        }
        if let Some(b) = field(o, "order_by") {
            e.order_by = self.by_items(b, &at.key("order_by"))?;
        }
        e.field_type = match given.or(inferred) {
            Some(ft) => Some(ft),
            None => bail!("{at}: cannot infer the type: give \"type\""),
        };
        Ok(e)
    }

    fn exprs(&self, v: &Value, at: &At) -> Result<Vec<tipb::Expr>> {
        arr(v, at)?.iter().enumerate().map(|(i, x)| self.expr(x, &at.idx(i))).collect()
    }

    fn by_items(&self, v: &Value, at: &At) -> Result<Vec<tipb::ByItem>> {
        arr(v, at)?
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let at = at.idx(i);
                let o = obj(x, &at)?;
                check_keys(o, &["expr", "desc"], &at)?;
                Ok(tipb::ByItem {
                    expr: field(o, "expr").map(|e| self.expr(e, &at.key("expr"))).transpose()?,
                    desc: field(o, "desc").map(|d| bool_of(d, &at.key("desc"))).transpose()?,
                    ..Default::default()
                })
            })
            .collect()
    }
}

/// The type TiDB gives a partial aggregate over an argument of type `arg`.
fn agg_type(tp: i32, arg: Option<&tipb::FieldType>) -> Option<tipb::FieldType> {
    use tipb::ExprType as X;
    let decimal = |frac: i32| tipb::FieldType {
        tp: Some(i32::from(mt::NEW_DECIMAL)),
        flag: Some(FLAG_BINARY),
        flen: Some(38),
        decimal: Some(frac),
        collate: Some(COLLATE_BINARY),
        ..Default::default()
    };
    match X::try_from(tp).ok()? {
        X::Count | X::ApproxCountDistinct => Some(bigint(21)),
        X::Sum | X::Avg => {
            let a = arg?;
            let t = u8::try_from(a.tp.unwrap_or(0)).unwrap_or(0);
            if matches!(t, mt::FLOAT | mt::DOUBLE) {
                Some(tipb::FieldType { flag: Some(FLAG_BINARY), ..a.clone() })
            } else {
                Some(decimal(a.decimal.unwrap_or(0).max(0)))
            }
        }
        _ => arg.cloned(),
    }
}

/// Output columns of an aggregation: each aggregate's (an average is its count then its
/// sum unless its mode is final/complete), then the group-by keys.
fn aggregation_outputs(a: &tipb::Aggregation) -> Vec<tipb::FieldType> {
    let mut out = Vec::new();
    for f in &a.agg_func {
        let ft = f.field_type.clone().unwrap_or_default();
        let complete = f
            .agg_func_mode
            .and_then(|m| tipb::AggFunctionMode::try_from(m).ok())
            .is_some_and(|m| {
                matches!(m, tipb::AggFunctionMode::CompleteMode | tipb::AggFunctionMode::FinalMode)
            });
        if f.tp == Some(tipb::ExprType::Avg as i32) && !complete {
            out.push(bigint(21));
        }
        out.push(ft);
    }
    out.extend(a.group_by.iter().map(|g| g.field_type.clone().unwrap_or_default()));
    out
}

fn columns_of(v: &Value, at: &At) -> Result<Vec<tipb::ColumnInfo>> {
    arr(v, at)?
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let at = at.idx(i);
            let o = obj(c, &at)?;
            check_keys(o, &["id", "type", "pk_handle", "default_hex", "array"], &at)?;
            let t = field(o, "type").with_context(|| format!("{at}: a column needs a \"type\""))?;
            let ft = parse_type(str_of(t, &at.key("type"))?).with_context(|| at.key("type").0)?;
            Ok(tipb::ColumnInfo {
                column_id: opt(o, "id", &at, int_of)?,
                tp: ft.tp,
                collation: ft.collate,
                column_len: ft.flen,
                decimal: ft.decimal,
                flag: ft.flag.and_then(|f| i32::try_from(f).ok()),
                pk_handle: opt(o, "pk_handle", &at, bool_of)?,
                default_val: field(o, "default_hex")
                    .map(|v| hex_bytes(v, &at.key("default_hex")).map(Bytes::from))
                    .transpose()?,
                array: opt(o, "array", &at, bool_of)?,
                ..Default::default()
            })
        })
        .collect()
}

/// `o[key]` read by `read` (with the key's path for errors), `None` when absent.
fn opt<T>(
    o: &Map<String, Value>,
    key: &str,
    at: &At,
    read: impl Fn(&Value, &At) -> Result<T>,
) -> Result<Option<T>> {
    field(o, key).map(|v| read(v, &at.key(key))).transpose()
}

fn int_list(v: &Value, at: &At) -> Result<Vec<i64>> {
    arr(v, at)?.iter().enumerate().map(|(i, x)| int_of(x, &at.idx(i))).collect()
}

fn executor(
    v: &Value,
    at: &At,
    schema: &mut Vec<tipb::FieldType>,
    first: bool,
) -> Result<tipb::Executor> {
    use tipb::ExecType as T;
    let o = obj(v, at)?;
    let kinds = [
        "table_scan",
        "index_scan",
        "selection",
        "projection",
        "aggregation",
        "stream_agg",
        "top_n",
        "limit",
    ];
    let mut allowed = kinds.to_vec();
    allowed.push("id");
    check_keys(o, &allowed, at)?;
    let present: Vec<&str> = kinds.iter().copied().filter(|k| o.contains_key(*k)).collect();
    let [kind] = present.as_slice() else {
        bail!("{at}: an executor needs exactly one of {}", kinds.join(", "));
    };
    let x = &o[*kind];
    let xat = at.key(kind);
    let is_scan = matches!(*kind, "table_scan" | "index_scan");
    if first != is_scan {
        bail!("{xat}: the first executor must be a scan, and only the first");
    }
    let parser = ExprParser { schema };
    let mut e = tipb::Executor {
        executor_id: field(o, "id")
            .map(|v| str_of(v, &at.key("id")).map(str::to_owned))
            .transpose()?,
        ..Default::default()
    };
    let mut next_schema = None;
    match *kind {
        "table_scan" => {
            let m = obj(x, &xat)?;
            check_keys(
                m,
                &[
                    "table_id",
                    "columns",
                    "desc",
                    "primary_column_ids",
                    "primary_prefix_column_ids",
                    "keep_order",
                ],
                &xat,
            )?;
            let columns = columns_of(
                field(m, "columns").with_context(|| format!("{xat}: needs \"columns\""))?,
                &xat.key("columns"),
            )?;
            next_schema = Some(columns.iter().map(column_type).collect());
            e.tp = Some(T::TypeTableScan as i32);
            e.tbl_scan = Some(tipb::TableScan {
                table_id: opt(m, "table_id", &xat, int_of)?,
                columns,
                desc: opt(m, "desc", &xat, bool_of)?,
                primary_column_ids: opt(m, "primary_column_ids", &xat, int_list)?
                    .unwrap_or_default(),
                primary_prefix_column_ids: opt(m, "primary_prefix_column_ids", &xat, int_list)?
                    .unwrap_or_default(),
                keep_order: opt(m, "keep_order", &xat, bool_of)?,
                ..Default::default()
            });
        }
        "index_scan" => {
            let m = obj(x, &xat)?;
            check_keys(
                m,
                &["table_id", "index_id", "columns", "desc", "unique", "primary_column_ids"],
                &xat,
            )?;
            let columns = columns_of(
                field(m, "columns").with_context(|| format!("{xat}: needs \"columns\""))?,
                &xat.key("columns"),
            )?;
            next_schema = Some(columns.iter().map(column_type).collect());
            e.tp = Some(T::TypeIndexScan as i32);
            e.idx_scan = Some(tipb::IndexScan {
                table_id: opt(m, "table_id", &xat, int_of)?,
                index_id: opt(m, "index_id", &xat, int_of)?,
                columns,
                desc: opt(m, "desc", &xat, bool_of)?,
                unique: opt(m, "unique", &xat, bool_of)?,
                primary_column_ids: opt(m, "primary_column_ids", &xat, int_list)?
                    .unwrap_or_default(),
            });
        }
        "selection" => {
            e.tp = Some(T::TypeSelection as i32);
            e.selection = Some(Box::new(tipb::Selection {
                conditions: parser.exprs(x, &xat)?,
                ..Default::default()
            }));
        }
        "projection" => {
            let exprs = parser.exprs(x, &xat)?;
            next_schema =
                Some(exprs.iter().map(|x| x.field_type.clone().unwrap_or_default()).collect());
            e.tp = Some(T::TypeProjection as i32);
            e.projection = Some(Box::new(tipb::Projection { exprs, ..Default::default() }));
        }
        "aggregation" | "stream_agg" => {
            let m = obj(x, &xat)?;
            check_keys(m, &["group_by", "aggs", "streamed"], &xat)?;
            let agg = tipb::Aggregation {
                group_by: field(m, "group_by")
                    .map(|v| parser.exprs(v, &xat.key("group_by")))
                    .transpose()?
                    .unwrap_or_default(),
                agg_func: field(m, "aggs")
                    .map(|v| parser.exprs(v, &xat.key("aggs")))
                    .transpose()?
                    .unwrap_or_default(),
                streamed: opt(m, "streamed", &xat, bool_of)?,
                ..Default::default()
            };
            next_schema = Some(aggregation_outputs(&agg));
            e.tp =
                Some(if *kind == "stream_agg" { T::TypeStreamAgg } else { T::TypeAggregation }
                    as i32);
            e.aggregation = Some(Box::new(agg));
        }
        "top_n" => {
            let m = obj(x, &xat)?;
            check_keys(m, &["order_by", "limit"], &xat)?;
            e.tp = Some(T::TypeTopN as i32);
            e.top_n = Some(Box::new(tipb::TopN {
                order_by: field(m, "order_by")
                    .map(|v| parser.by_items(v, &xat.key("order_by")))
                    .transpose()?
                    .unwrap_or_default(),
                limit: opt(m, "limit", &xat, uint_of)?,
                ..Default::default()
            }));
        }
        _ => {
            e.tp = Some(T::TypeLimit as i32);
            e.limit = Some(Box::new(tipb::Limit {
                limit: if x.is_null() { None } else { Some(uint_of(x, &xat)?) },
                ..Default::default()
            }));
        }
    }
    if let Some(s) = next_schema {
        *schema = s;
    }
    Ok(e)
}

fn range_spec(v: &Value, at: &At) -> Result<RangeSpec> {
    let o = obj(v, at)?;
    check_keys(o, &["handles", "index", "start_hex", "end_hex"], at)?;
    let pair = |key: &str| -> Result<(i64, i64)> {
        let at = at.key(key);
        let a = arr(&o[key], &at)?;
        let [lo, hi] = a.as_slice() else { bail!("{at}: expected [lo, hi]") };
        Ok((int_of(lo, &at.idx(0))?, int_of(hi, &at.idx(1))?))
    };
    if o.contains_key("handles") {
        let (lo, hi) = pair("handles")?;
        Ok(RangeSpec::Handles(lo, hi))
    } else if o.contains_key("index") {
        let (lo, hi) = pair("index")?;
        Ok(RangeSpec::Index(lo, hi))
    } else {
        let get = |k: &str| {
            field(o, k)
                .with_context(|| format!("{at}: needs handles, index or start_hex and end_hex"))
                .and_then(|v| hex_bytes(v, &at.key(k)))
        };
        Ok(RangeSpec::Raw(get("start_hex")?, get("end_hex")?))
    }
}

/// Parses a JSON DAG.
///
/// # Errors
///
/// Invalid JSON, unknown keys, names or types, a column offset outside its input, with the
/// JSON path of the culprit.
pub fn parse(text: &str) -> Result<DagFile> {
    let v: Value = serde_json::from_str(text).context("not valid JSON")?;
    let top = At(String::new());
    let o = obj(&v, &top)?;
    check_keys(
        o,
        &[
            "names",
            "ranges",
            "executors",
            "output",
            "encode_type",
            "time_zone_offset",
            "time_zone_name",
            "flags",
            "sql_mode",
            "max_warning_count",
            "collect_execution_summaries",
            "max_allowed_packet",
            "start_ts_fallback",
        ],
        &top,
    )?;
    let eat = top.key("executors");
    let execs = arr(field(o, "executors").context("needs \"executors\"")?, &eat)?;
    if execs.is_empty() {
        bail!("executors: empty");
    }
    let mut schema = Vec::new();
    let executors: Vec<tipb::Executor> = execs
        .iter()
        .enumerate()
        .map(|(i, x)| executor(x, &eat.idx(i), &mut schema, i == 0))
        .collect::<Result<_>>()?;
    let output: Vec<u32> = match field(o, "output") {
        Some(v) => {
            let at = top.key("output");
            arr(v, &at)?
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    u32::try_from(uint_of(x, &at.idx(i))?).context("output offset too large")
                })
                .collect::<Result<_>>()?
        }
        None => (0..u32::try_from(schema.len()).unwrap_or(u32::MAX)).collect(),
    };
    let mut types = Vec::with_capacity(output.len());
    for (i, off) in output.iter().enumerate() {
        let ft = schema.get(*off as usize).with_context(|| {
            format!("output[{i}]: offset {off} is past the {} output columns", schema.len())
        })?;
        types.push(ft.clone());
    }
    let names: Vec<String> = match field(o, "names") {
        Some(v) => {
            let at = top.key("names");
            let n: Vec<String> = arr(v, &at)?
                .iter()
                .enumerate()
                .map(|(i, x)| str_of(x, &at.idx(i)).map(str::to_owned))
                .collect::<Result<_>>()?;
            if n.len() != types.len() {
                bail!("names: {} names for {} output columns", n.len(), types.len());
            }
            n
        }
        None => (0..types.len()).map(|i| format!("c{i}")).collect(),
    };
    let ranges = match field(o, "ranges") {
        Some(v) => {
            let at = top.key("ranges");
            arr(v, &at)?
                .iter()
                .enumerate()
                .map(|(i, r)| range_spec(r, &at.idx(i)))
                .collect::<Result<_>>()?
        }
        None => Vec::new(),
    };
    let opt_u64 = |k: &str| field(o, k).map(|v| uint_of(v, &top.key(k))).transpose();
    let dag = tipb::DagRequest {
        executors,
        output_offsets: output,
        encode_type: field(o, "encode_type")
            .map(|v| {
                enum_value(v, &top.key("encode_type"), "encode type", |n| {
                    tipb::EncodeType::from_str_name(n).map(|e| e as i32)
                })
            })
            .transpose()?,
        time_zone_offset: opt(o, "time_zone_offset", &top, int_of)?,
        time_zone_name: field(o, "time_zone_name")
            .map(|v| str_of(v, &top.key("time_zone_name")).map(str::to_owned))
            .transpose()?,
        flags: opt_u64("flags")?,
        sql_mode: opt_u64("sql_mode")?,
        max_warning_count: opt_u64("max_warning_count")?,
        collect_execution_summaries: opt(o, "collect_execution_summaries", &top, bool_of)?,
        max_allowed_packet: opt_u64("max_allowed_packet")?,
        start_ts_fallback: opt_u64("start_ts_fallback")?,
        ..Default::default()
    };
    Ok(DagFile { dag, ranges, names, types })
}

/// The key ranges of `file` under keyspace `prefix`: its [`RangeSpec`]s, or the whole table
/// or index its first executor scans.
///
/// # Errors
///
/// A handle or index range without a table (or index) id to address.
pub fn key_ranges(file: &DagFile, prefix: &[u8]) -> Result<Vec<coprocessor::KeyRange>> {
    let first = file.dag.executors.first().context("no executors")?;
    let table = first
        .tbl_scan
        .as_ref()
        .and_then(|s| s.table_id)
        .or_else(|| first.idx_scan.as_ref().and_then(|s| s.table_id))
        .context("the scan names no table_id")?;
    let index = first.idx_scan.as_ref().and_then(|s| s.index_id);
    let int_key = |v: i64| -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Datum::Int(v).encode(Mode::Key, &mut out).context("key datum")?;
        Ok(out)
    };
    let mut out = Vec::new();
    let mut push = |start: Vec<u8>, end: Vec<u8>| {
        out.push(coprocessor::KeyRange { start: start.into(), end: end.into() });
    };
    if file.ranges.is_empty() {
        let mut start = prefix.to_vec();
        match index {
            Some(ix) => key::encode_index_key(&mut start, table, ix, &[]),
            None => key::encode_record_prefix(&mut start, table),
        }
        let end = key::prefix_next(&start);
        push(start, end);
    }
    for r in &file.ranges {
        let (mut start, mut end) = (prefix.to_vec(), prefix.to_vec());
        match r {
            RangeSpec::Handles(lo, hi) => {
                key::encode_record_key(&mut start, table, *lo);
                key::encode_record_key(&mut end, table, *hi);
            }
            RangeSpec::Index(lo, hi) => {
                let ix = index.context("an index range needs an index_scan")?;
                key::encode_index_key(&mut start, table, ix, &int_key(*lo)?);
                key::encode_index_key(&mut end, table, ix, &int_key(*hi)?);
            }
            RangeSpec::Raw(s, e) => {
                start.extend_from_slice(s);
                end.extend_from_slice(e);
            }
        }
        push(start, end);
    }
    Ok(out)
}

/// Renders one value of type `ft` for a table cell.
pub fn render_value(d: &Datum, ft: &tipb::FieldType) -> String {
    let tp = u8::try_from(ft.tp.unwrap_or(0)).unwrap_or(0);
    let fsp = ft.decimal.unwrap_or(0).clamp(0, 6) as u8;
    let time = |tt: TimeType, packed: u64| {
        Time::from_packed_u64(packed, tt, fsp)
            .map_or_else(|_| packed.to_string(), |t| t.to_string())
    };
    match (d, tp) {
        (Datum::Null, _) => "NULL".into(),
        (Datum::Uint(p), mt::DATE | mt::NEW_DATE) => time(TimeType::Date, *p),
        (Datum::Uint(p), mt::DATETIME) => time(TimeType::DateTime, *p),
        (Datum::Uint(p), mt::TIMESTAMP) => time(TimeType::Timestamp, *p),
        (Datum::Int(n), mt::DURATION) => {
            Duration::from_nanos(*n, fsp).map_or_else(|_| n.to_string(), |d| d.to_string())
        }
        (Datum::Int(x), _) => x.to_string(),
        (Datum::Uint(x), _) => x.to_string(),
        (Datum::Float(x), _) => x.to_string(),
        (Datum::Decimal(x), _) => x.to_string(),
        (Datum::Time(t), _) => t.to_string(),
        (Datum::Duration(x), _) => x.to_string(),
        (Datum::Bytes(b), _) => match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            Err(_) => format!("0x{}", hex::encode(b)),
        },
        (Datum::Json(b), _) => format!("json:0x{}", hex::encode(b)),
        (Datum::MinNotNull | Datum::Max, _) => format!("{d:?}"),
    }
}

/// The rows of a `coprocessor.Response` to a DAG whose outputs have `types`, each rendered
/// with [`render_value`].
///
/// # Errors
///
/// An error response, a `SelectResponse` error, a chunk-encoded answer (not rendered),
/// undecodable rows, a datum count that is no multiple of the width.
pub fn render_rows(
    resp: &coprocessor::Response,
    types: &[tipb::FieldType],
) -> Result<Vec<Vec<String>>> {
    if let Some(e) = &resp.region_error {
        bail!("region error: {}", e.message);
    }
    if let Some(l) = &resp.locked {
        bail!(
            "locked by a transaction (primary key 0x{}, lock ts {})",
            hex::encode(&l.primary_lock),
            l.lock_version
        );
    }
    if !resp.other_error.is_empty() {
        bail!("{}", resp.other_error);
    }
    let sel = tipb::SelectResponse::decode(resp.data.clone())
        .context("the answer is no SelectResponse")?;
    if let Some(e) = &sel.error {
        bail!("error {}: {}", e.code.unwrap_or(0), e.msg.as_deref().unwrap_or(""));
    }
    if sel.encode_type == Some(tipb::EncodeType::TypeChunk as i32) {
        bail!("the answer is chunk-encoded; ask for \"encode_type\": \"TypeDefault\" to see rows");
    }
    let mut datums = Vec::new();
    for c in &sel.chunks {
        datums.extend(Datum::decode_all(c.rows_data.as_deref().unwrap_or(&[])).context("rows")?);
    }
    let width = types.len().max(1);
    if datums.len() % width != 0 {
        bail!("{} values for {width} columns", datums.len());
    }
    Ok(datums
        .chunks(width)
        .map(|row| row.iter().zip(types).map(|(d, t)| render_value(d, t)).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_strings_round_trip() {
        for text in [
            "bigint(20,0) not null",
            "decimal(15,2) unsigned binary not null pk flag 4096",
            "char(1) not null",
            "varchar(44) collate utf8mb4_general_ci charset utf8mb4",
            "date(10,0) binary collate none",
            "double",
            "type99(3)",
        ] {
            let ft = parse_type(text).unwrap();
            assert_eq!(type_string(&ft), text, "{ft:?}");
            assert_eq!(parse_type(&type_string(&ft)).unwrap(), ft);
        }
        assert_eq!(parse_type("varchar").unwrap().collate, Some(COLLATE_UTF8MB4_BIN));
        assert_eq!(parse_type("bigint").unwrap().collate, Some(COLLATE_BINARY));
        for bad in [
            "wat",
            "bigint(1",
            "bigint(a)",
            "bigint(1,2,3)",
            "bigint sideways",
            "char collate nope",
        ] {
            assert!(parse_type(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_name_the_path() {
        let e = parse(r#"{"executors": [{"table_scan": {"table_id": 1, "columns": [{"id": 1, "type": "bigint"}]}}, {"selection": [{"func": "LETme", "args": [{"col": 0}]}]}]}"#)
            .unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("executors[1].selection[0].func") && msg.contains("LETme"), "{msg}");
        let e = parse(r#"{"executors": [{"table_scan": {"table_id": 1, "columns": []}}, {"selection": [{"col": 3}]}]}"#)
            .unwrap_err();
        assert!(format!("{e:#}").contains("column 3 is not in the input"), "{e:#}");
        let e = parse(r#"{"executors": [{"selection": []}]}"#).unwrap_err();
        assert!(format!("{e:#}").contains("first executor must be a scan"), "{e:#}");
        let e = parse(r#"{"executors": [], "extra": 1}"#).unwrap_err();
        assert!(format!("{e:#}").contains("unknown key \"extra\""), "{e:#}");
        assert!(parse("{").is_err());
        let e = parse(r#"{"executors": [{"table_scan": {"table_id": 1, "columns": [{"id": 1, "type": "bigint"}]}}], "output": [1]}"#)
            .unwrap_err();
        assert!(format!("{e:#}").contains("past the 1 output columns"), "{e:#}");
    }

    #[test]
    fn inferred_types_and_aggregate_outputs() {
        let f = parse(
            r#"{"executors": [
                {"table_scan": {"table_id": 70, "columns": [{"id": 5, "type": "decimal(15,2) not null"}, {"id": 9, "type": "char(1) not null"}]}},
                {"selection": [{"func": "GTDecimal", "args": [{"col": 0}, {"decimal": "0.05"}]}]},
                {"aggregation": {"group_by": [{"col": 1}], "aggs": [{"agg": "Avg", "args": [{"col": 0}]}, {"agg": "Count", "args": [{"int": 1}]}]}}
            ]}"#,
        )
        .unwrap();
        let cond = &f.dag.executors[1].selection.as_ref().unwrap().conditions[0];
        assert_eq!(cond.field_type.as_ref().unwrap().flen, Some(1));
        let shown: Vec<String> = f.types.iter().map(type_string).collect();
        assert_eq!(
            shown,
            [
                "bigint(21,0) binary not null",
                "decimal(38,2) binary",
                "bigint(21,0) binary not null",
                "char(1) not null"
            ]
        );
        assert_eq!(f.names, ["c0", "c1", "c2", "c3"]);
        let text = to_json(&f.dag, &f.ranges, &[]).unwrap();
        assert_eq!(parse(&text).unwrap().dag, f.dag);
    }

    #[test]
    fn unknown_fields_refuse_to_print() {
        let mut dag = parse(r#"{"executors": [{"table_scan": {"table_id": 1, "columns": [{"id": 1, "type": "bigint"}]}}]}"#)
            .unwrap()
            .dag;
        dag.executors[0].fine_grained_shuffle_batch_size = Some(3);
        assert!(to_json(&dag, &[], &[]).is_err());
    }
}
