//! The data-driven corpus: tables as rows, plans in a small text form, expected results.
//!
//! Format (see `testdata/exec/README.md`): `[[table]]` entries describe a table (id,
//! optional API v2 keyspace, row format, columns as `"name type [options]"`, rows as
//! `"v1 | v2 | …"` with `\N` for NULL), `[[case]]` entries a scan of one table, a list of
//! plan lines (`sel`, `proj`, `agg`, `topn`, `limit`) over expressions written as
//! `fn(args)` with `#k` column references and typed literals, and the expected rows.
#![allow(dead_code)]

use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::{RowEncoder, encode_row_v1};
use rcop_datum::{Datum, Duration, Time, TimeType, key};
use rcop_exec::MemStore;
use rcop_proto::tipb;
use serde::Deserialize;

use super::dag::*;

#[derive(Debug, Deserialize)]
pub struct File {
    #[serde(default)]
    pub table: Vec<TableSpec>,
    #[serde(default)]
    pub case: Vec<Case>,
}

#[derive(Debug, Deserialize, Clone)]
pub struct TableSpec {
    pub name: String,
    pub id: i64,
    #[serde(default)]
    pub keyspace: Option<u32>,
    #[serde(default = "v2")]
    pub format: String,
    /// Names of the clustered (common handle) primary key columns; empty for int handles.
    #[serde(default)]
    pub common_pk: Vec<String>,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
}

fn v2() -> String {
    "v2".into()
}

#[derive(Debug, Deserialize, Clone)]
pub struct Case {
    pub name: String,
    pub table: String,
    pub scan: Vec<String>,
    #[serde(default)]
    pub desc: bool,
    #[serde(default)]
    pub plan: Vec<String>,
    #[serde(default)]
    pub output: Option<Vec<u32>>,
    #[serde(default)]
    pub expect: Vec<String>,
    #[serde(default)]
    pub sorted: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub flags: u64,
    #[serde(default)]
    pub sql_mode: u64,
    #[serde(default)]
    pub tz: Option<String>,
    #[serde(default)]
    pub tz_offset: Option<i64>,
    #[serde(default)]
    pub warnings: Option<i64>,
    /// Skip the reference evaluator (for behaviour it does not model).
    #[serde(default = "yes")]
    pub reference: bool,
}

fn yes() -> bool {
    true
}

/// A column as declared in a table.
#[derive(Debug, Clone)]
pub struct ColSpec {
    pub name: String,
    pub id: i64,
    pub ft: tipb::FieldType,
    pub pk_handle: bool,
    pub default: Option<String>,
    /// Not written to the stored rows (added after them).
    pub missing: bool,
}

/// A built table.
#[derive(Debug)]
pub struct Table {
    pub spec: TableSpec,
    pub cols: Vec<ColSpec>,
    pub store: MemStore,
}

pub fn parse_type(ty: &str) -> tipb::FieldType {
    let (base, args) = match ty.split_once('(') {
        Some((b, a)) => (
            b,
            a.trim_end_matches(')')
                .split(',')
                .map(|x| x.trim().parse::<i32>().unwrap())
                .collect::<Vec<_>>(),
        ),
        None => (ty, vec![]),
    };
    let a = |i: usize, d: i32| args.get(i).copied().unwrap_or(d);
    match base {
        "bigint" => tipb::FieldType { flen: Some(20), decimal: Some(0), ..ft(mt::LONG_LONG) },
        "int" => tipb::FieldType { flen: Some(11), decimal: Some(0), ..ft(mt::LONG) },
        "double" => ft(mt::DOUBLE),
        "float" => ft(mt::FLOAT),
        "decimal" => ft_dec(a(0, 10), a(1, 0)),
        "varchar" => tipb::FieldType { flen: Some(a(0, 255)), ..ft_str(-46) },
        "char" => tipb::FieldType { flen: Some(a(0, 1)), collate: Some(-46), ..ft(mt::STRING) },
        "varbinary" => tipb::FieldType { flen: Some(a(0, 255)), ..ft_str(63) },
        "binary" => tipb::FieldType { flen: Some(a(0, 1)), collate: Some(63), ..ft(mt::STRING) },
        "year" => tipb::FieldType { flen: Some(4), decimal: Some(0), ..ft(mt::YEAR) },
        "date" => tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) },
        "datetime" => tipb::FieldType { decimal: Some(a(0, 0)), ..ft(mt::DATETIME) },
        "timestamp" => tipb::FieldType { decimal: Some(a(0, 0)), ..ft(mt::TIMESTAMP) },
        "time" => tipb::FieldType { decimal: Some(a(0, 0)), ..ft(mt::DURATION) },
        "json" => ft(mt::JSON),
        other => panic!("unknown type {other}"),
    }
}

fn parse_col(spec: &str, id: i64) -> ColSpec {
    let mut parts = spec.split_whitespace();
    let name = parts.next().unwrap().to_string();
    let mut ft = parse_type(parts.next().unwrap());
    let mut c =
        ColSpec { name, id, ft: ft.clone(), pk_handle: false, default: None, missing: false };
    for opt in parts {
        match opt {
            "pk" => {
                c.pk_handle = true;
                ft.flag = Some(ft.flag.unwrap_or(0) | 1 | 2);
            }
            "unsigned" => ft.flag = Some(ft.flag.unwrap_or(0) | 32),
            "not_null" => ft.flag = Some(ft.flag.unwrap_or(0) | 1),
            "missing" => c.missing = true,
            o if o.starts_with("default=") => {
                c.default = Some(o["default=".len()..].replace('_', " "))
            }
            o if o.starts_with("collate=") => {
                ft.collate = Some(o["collate=".len()..].parse().unwrap())
            }
            o if o.starts_with("charset=") => ft.charset = Some(o["charset=".len()..].to_owned()),
            o if o.starts_with("id=") => c.id = o[3..].parse().unwrap(),
            o => panic!("unknown column option {o}"),
        }
    }
    c.ft = ft;
    c
}

pub fn time_type(f: &tipb::FieldType) -> TimeType {
    match f.tp.unwrap_or(0) as u8 {
        mt::DATE => TimeType::Date,
        mt::TIMESTAMP => TimeType::Timestamp,
        _ => TimeType::DateTime,
    }
}

fn fsp(f: &tipb::FieldType) -> u8 {
    f.decimal.unwrap_or(0).clamp(0, 6) as u8
}

/// Parses one cell to a datum of the column's type (`\N` is NULL). Timestamps are given in
/// UTC.
pub fn parse_value(s: &str, f: &tipb::FieldType) -> Datum {
    let s = s.trim();
    if s == "\\N" {
        return Datum::Null;
    }
    if let Some(h) = s.strip_prefix("x'").and_then(|x| x.strip_suffix('\'')) {
        // `x'…'`: bytes in hex, for a string column.
        return Datum::Bytes(hex::decode(h).unwrap());
    }
    let s = s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')).unwrap_or(s);
    let unsigned = f.flag.unwrap_or(0) & 32 != 0;
    match f.tp.unwrap_or(0) as u8 {
        mt::LONG_LONG | mt::LONG if unsigned => Datum::Uint(s.parse().unwrap()),
        mt::LONG_LONG | mt::LONG => Datum::Int(s.parse().unwrap()),
        mt::DOUBLE | mt::FLOAT => Datum::Float(s.parse().unwrap()),
        mt::NEW_DECIMAL => {
            let d: rcop_datum::Decimal = s.parse().unwrap();
            Datum::Decimal(
                d.round(f.decimal.unwrap_or(0) as i8, rcop_datum::decimal::RoundMode::HalfUp)
                    .value(),
            )
        }
        mt::DATE | mt::DATETIME | mt::TIMESTAMP => {
            Datum::Time(Time::parse(s, time_type(f), fsp(f)).unwrap())
        }
        mt::DURATION => Datum::Duration(Duration::parse(s, fsp(f)).unwrap()),
        mt::JSON => Datum::Json(rcop_datum::Json::parse(s).unwrap().into_bytes()),
        _ => Datum::Bytes(s.as_bytes().to_vec()),
    }
}

pub fn split_row(r: &str) -> Vec<&str> {
    r.split('|').map(str::trim).collect()
}

pub fn build_table(spec: &TableSpec) -> Table {
    let cols: Vec<ColSpec> =
        spec.columns.iter().enumerate().map(|(i, c)| parse_col(c, i as i64 + 1)).collect();
    let common = !spec.common_pk.is_empty();
    let mut pairs = Vec::new();
    for (ri, r) in spec.rows.iter().enumerate() {
        let cells = split_row(r);
        assert_eq!(cells.len(), cols.len(), "row {ri} of {} has {} cells", spec.name, cells.len());
        let vals: Vec<Datum> =
            cells.iter().zip(&cols).map(|(c, col)| parse_value(c, &col.ft)).collect();
        let mut k = prefix(spec.keyspace);
        if common {
            let mut h = Vec::new();
            for pk in &spec.common_pk {
                let i = cols.iter().position(|c| &c.name == pk).unwrap();
                let d = match &vals[i] {
                    Datum::Time(t) => Datum::Uint(t.to_packed_u64()),
                    d => d.clone(),
                };
                d.encode(rcop_datum::Mode::Key, &mut h).unwrap();
            }
            key::encode_common_handle_record_key(&mut k, spec.id, &h);
        } else {
            let h =
                cols.iter().position(|c| c.pk_handle).map_or(ri as i64 + 1, |i| match vals[i] {
                    Datum::Int(h) => h,
                    Datum::Uint(h) => h as i64,
                    _ => panic!("bad handle"),
                });
            key::encode_record_key(&mut k, spec.id, h);
        }
        let mut v = Vec::new();
        let stored = cols.iter().zip(&vals).filter(|(c, _)| !c.missing && !c.pk_handle);
        if spec.format == "v1" {
            let pairs: Vec<(i64, Datum)> = stored
                .map(|(c, d)| {
                    let d = match d {
                        Datum::Time(t) => Datum::Uint(t.to_packed_u64()),
                        Datum::Duration(x) => Datum::Int(x.nanos()),
                        d => d.clone(),
                    };
                    (c.id, d)
                })
                .collect();
            encode_row_v1(&pairs, &mut v).unwrap();
        } else {
            let mut enc = RowEncoder::new();
            for (c, d) in stored {
                match d {
                    Datum::Null => {
                        enc.null(c.id);
                    }
                    Datum::Int(x) => {
                        enc.int(c.id, *x);
                    }
                    Datum::Uint(x) => {
                        enc.uint(c.id, *x);
                    }
                    Datum::Float(x) => {
                        enc.float(c.id, *x);
                    }
                    Datum::Bytes(b) => {
                        enc.bytes(c.id, b);
                    }
                    Datum::Decimal(x) => {
                        let _ = enc
                            .decimal(c.id, x, c.ft.flen.unwrap() as u8, c.ft.decimal.unwrap() as u8)
                            .unwrap();
                    }
                    Datum::Time(t) => {
                        enc.time(c.id, *t);
                    }
                    Datum::Duration(x) => {
                        enc.duration(c.id, *x);
                    }
                    Datum::Json(b) => {
                        enc.json(c.id, b);
                    }
                    other => panic!("unsupported cell {other:?}"),
                }
            }
            enc.finish(&mut v).unwrap();
        }
        pairs.push((k, v));
    }
    Table { spec: spec.clone(), cols, store: MemStore::from_pairs(pairs) }
}

/// The value of a column's default as a value-mode datum.
pub fn default_val(c: &ColSpec) -> Option<Vec<u8>> {
    let d = parse_value(c.default.as_deref()?, &c.ft);
    let d = match d {
        Datum::Time(t) => Datum::Uint(t.to_packed_u64()),
        d => d,
    };
    let mut out = Vec::new();
    d.encode(rcop_datum::Mode::Value, &mut out).unwrap();
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Plans

/// Builds the DAG of a case, returning it with the output field types.
pub fn build_dag(t: &Table, c: &Case, chunk: bool) -> (tipb::DagRequest, Vec<tipb::FieldType>) {
    let mut infos = Vec::new();
    let mut schema = Vec::new();
    for name in &c.scan {
        let col =
            t.cols.iter().find(|x| &x.name == name).unwrap_or_else(|| panic!("no column {name}"));
        let mut info = column_info(col.id, &col.ft, col.pk_handle);
        info.default_val = default_val(col).map(Into::into);
        infos.push(info);
        schema.push(col.ft.clone());
    }
    let mut scan_ex = scan(t.spec.id, infos, c.desc);
    if !t.spec.common_pk.is_empty()
        && let Some(ts) = scan_ex.tbl_scan.as_mut()
    {
        {
            ts.primary_column_ids = t
                .spec
                .common_pk
                .iter()
                .map(|n| t.cols.iter().find(|x| &x.name == n).unwrap().id)
                .collect();
        }
    }
    let mut execs = vec![scan_ex];
    for line in &c.plan {
        let (op, rest) = line.split_once(' ').unwrap_or((line, ""));
        match op {
            "sel" => {
                let conds = split_top(rest, ';').iter().map(|e| parse_expr(e, &schema)).collect();
                execs.push(selection(conds));
            }
            "proj" => {
                let exprs: Vec<tipb::Expr> =
                    split_top(rest, ';').iter().map(|e| parse_expr(e, &schema)).collect();
                schema = exprs.iter().map(|e| e.field_type.clone().unwrap()).collect();
                execs.push(projection(exprs));
            }
            "limit" => execs.push(limit(rest.trim().parse().unwrap())),
            "topn" => {
                let (n, by) = rest.split_once(" by ").unwrap();
                let items = split_top(by, ';')
                    .iter()
                    .map(|i| match i.trim().strip_suffix(" desc") {
                        Some(e) => (parse_expr(e, &schema), true),
                        None => (parse_expr(i, &schema), false),
                    })
                    .collect();
                execs.push(top_n(items, n.trim().parse().unwrap()));
            }
            "agg" => {
                let (aggs, by) = match rest.split_once(" by ") {
                    Some((a, b)) => (a, b),
                    None => (rest, ""),
                };
                let group: Vec<tipb::Expr> = split_top(by, ';')
                    .iter()
                    .filter(|s| !s.trim().is_empty())
                    .map(|e| parse_expr(e, &schema))
                    .collect();
                let mut out_schema = Vec::new();
                let funcs: Vec<tipb::Expr> = split_top(aggs, ';')
                    .iter()
                    .filter(|s| !s.trim().is_empty())
                    .map(|a| {
                        let (name, arg) = a.trim().split_once('(').unwrap();
                        let arg = parse_expr(arg.strip_suffix(')').unwrap(), &schema);
                        let aft = arg.field_type.clone().unwrap();
                        let et = eval_type(&aft);
                        let sum_ft = match et {
                            'i' => ft_dec(65, 0),
                            'd' => ft_dec(65, aft.decimal.unwrap_or(0)),
                            _ => ft(mt::DOUBLE),
                        };
                        let (tp, rft) = match name {
                            "count" => (3001, ft(mt::LONG_LONG)),
                            "sum" => (3002, sum_ft),
                            "avg" => (3003, sum_ft),
                            "min" => (3004, aft.clone()),
                            "max" => (3005, aft.clone()),
                            "first" => (3006, aft.clone()),
                            o => panic!("unknown aggregate {o}"),
                        };
                        if tp == 3003 {
                            out_schema
                                .push(tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) });
                        }
                        out_schema.push(rft.clone());
                        agg(tp, rft, vec![arg])
                    })
                    .collect();
                out_schema.extend(group.iter().map(|g| g.field_type.clone().unwrap()));
                schema = out_schema;
                execs.push(aggregation(group, funcs));
            }
            o => panic!("unknown plan op {o}"),
        }
    }
    let output = c.output.clone().unwrap_or_else(|| (0..schema.len() as u32).collect());
    let out_fts = output
        .iter()
        .map(|&o| schema.get(o as usize).cloned().unwrap_or_else(|| ft(mt::LONG_LONG)))
        .collect();
    let mut d = dag(execs, output, chunk);
    d.flags = Some(c.flags);
    d.sql_mode = Some(c.sql_mode);
    d.time_zone_name = c.tz.clone();
    d.time_zone_offset = Some(c.tz_offset.unwrap_or(0));
    d.collect_execution_summaries = Some(true);
    (d, out_fts)
}

/// Splits on `sep` outside parentheses and quotes.
pub fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, false, String::new());
    for ch in s.chars() {
        match ch {
            '\'' => quote = !quote,
            '(' if !quote => depth += 1,
            ')' if !quote => depth -= 1,
            c if c == sep && depth == 0 && !quote => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|x| x.trim().to_string()).collect()
}

/// 'i' int, 'r' real, 'd' decimal, 's' string, 't' time, 'u' duration.
pub fn eval_type(f: &tipb::FieldType) -> char {
    match f.tp.unwrap_or(0) as u8 {
        mt::LONG_LONG | mt::LONG | mt::TINY | mt::SHORT | mt::INT24 | mt::YEAR | mt::NULL => 'i',
        mt::DOUBLE | mt::FLOAT => 'r',
        mt::NEW_DECIMAL => 'd',
        mt::DATE | mt::DATETIME | mt::TIMESTAMP => 't',
        mt::DURATION => 'u',
        _ => 's',
    }
}

fn type_index(c: char) -> i32 {
    match c {
        'i' => 0,
        'r' => 1,
        'd' => 2,
        's' => 3,
        't' => 4,
        'u' => 5,
        _ => 6,
    }
}

fn bool_ft() -> tipb::FieldType {
    tipb::FieldType { flen: Some(1), ..ft(mt::LONG_LONG) }
}

/// Parses an expression against the child schema.
pub fn parse_expr(s: &str, schema: &[tipb::FieldType]) -> tipb::Expr {
    let s = s.trim();
    if let Some(k) = s.strip_prefix('#') {
        let k: usize = k.parse().unwrap();
        return col(k as i64, schema[k].clone());
    }
    if s == "null" {
        return null(ft(mt::NULL));
    }
    if let Some(x) = s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        return string(x, -46);
    }
    for (p, tp) in [("date'", mt::DATE), ("datetime'", mt::DATETIME), ("timestamp'", mt::TIMESTAMP)]
    {
        if let Some(x) = s.strip_prefix(p).and_then(|x| x.strip_suffix('\'')) {
            let fsp = x.split_once('.').map_or(0, |(_, f)| f.len() as i32);
            return time(x, tp, fsp);
        }
    }
    if let Some(x) = s.strip_prefix("time'").and_then(|x| x.strip_suffix('\'')) {
        let fsp = x.split_once('.').map_or(0, |(_, f)| f.len() as i32);
        let d = Duration::parse(x, fsp as u8).unwrap();
        let mut b = Vec::new();
        rcop_datum::codec::encode_i64(&mut b, d.nanos());
        return tipb::Expr {
            tp: Some(103),
            val: Some(b.into()),
            field_type: Some(tipb::FieldType { decimal: Some(fsp), ..ft(mt::DURATION) }),
            ..Default::default()
        };
    }
    if let Some(x) = s.strip_suffix('m').filter(|x| x.parse::<f64>().is_ok()) {
        return dec(x);
    }
    if let Some(x) = s.strip_suffix('u').and_then(|x| x.parse::<u64>().ok()) {
        let mut b = Vec::new();
        rcop_datum::codec::encode_u64(&mut b, x);
        return tipb::Expr {
            tp: Some(2),
            val: Some(b.into()),
            field_type: Some(tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) }),
            ..Default::default()
        };
    }
    if let Ok(x) = s.parse::<i64>() {
        return int(x);
    }
    if let Ok(x) = s.parse::<f64>() {
        return real(x);
    }
    let (name, rest) = s.split_once('(').unwrap_or_else(|| panic!("bad expression {s}"));
    let inner = rest.strip_suffix(')').unwrap_or_else(|| panic!("bad expression {s}"));
    let mut args: Vec<tipb::Expr> = split_top(inner, ',')
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| parse_expr(a, schema))
        .collect();
    let t0 = args.first().map(|a| eval_type(a.field_type.as_ref().unwrap())).unwrap_or('i');
    let ti = type_index(t0);
    let aft = |i: usize| args[i].field_type.clone().unwrap();
    let coll = args
        .iter()
        .find(|a| eval_type(a.field_type.as_ref().unwrap()) == 's')
        .and_then(|a| a.field_type.as_ref().unwrap().collate)
        .unwrap_or(63);
    let cmp = |base: i32| (base + ti, tipb::FieldType { collate: Some(coll), ..bool_ft() });
    let unsigned_any =
        args.iter().any(|a| a.field_type.as_ref().unwrap().flag.unwrap_or(0) & 32 != 0);
    let arith_ft = |args: &[tipb::Expr], frac: i32| -> tipb::FieldType {
        match t0 {
            'i' => tipb::FieldType {
                flag: Some(if unsigned_any { 32 } else { 0 }),
                ..ft(mt::LONG_LONG)
            },
            'd' => ft_dec(65, frac.min(30)),
            _ => {
                let _ = args;
                ft(mt::DOUBLE)
            }
        }
    };
    let frac = |i: usize| if args.len() > i { aft(i).decimal.unwrap_or(0).max(0) } else { 0 };
    let (sig, rft) = match name {
        "lt" => cmp(100),
        "le" => cmp(110),
        "gt" => cmp(120),
        "ge" => cmp(130),
        "eq" => cmp(140),
        "ne" => cmp(150),
        "nulleq" => cmp(160),
        "plus" => ([203, 200, 201][ti as usize], arith_ft(&args, frac(0).max(frac(1)))),
        "minus" => ([207, 204, 205][ti as usize], arith_ft(&args, frac(0).max(frac(1)))),
        "mul" => ([210, 208, 209][ti as usize], arith_ft(&args, frac(0) + frac(1))),
        "div" => ([211, 211, 212][ti as usize], arith_ft(&args, frac(0) + 4)),
        "intdiv" => ([213, 213, 214][ti as usize], bool_ft()),
        "mod" => ([217, 215, 216][ti as usize], arith_ft(&args, frac(0).max(frac(1)))),
        "and" => (3101, bool_ft()),
        "or" => (3102, bool_ft()),
        "xor" => (3103, bool_ft()),
        "not" => ([3104, 3106, 3105][ti as usize], bool_ft()),
        "neg" => ([3108, 3109, 3110][ti as usize], aft(0)),
        "isnull" => ([3116, 3113, 3111, 3114, 3115, 3112][ti as usize], bool_ft()),
        "istrue" => ([3122, 3123, 3124][ti as usize], bool_ft()),
        "isfalse" => ([3125, 3126, 3127][ti as usize], bool_ft()),
        "istrue_null" => ([3142, 3143, 3144][ti as usize], bool_ft()),
        "in" => (4001 + ti, tipb::FieldType { collate: Some(coll), ..bool_ft() }),
        "ifnull" => (4101 + ti, aft(0)),
        "if" => {
            let t = eval_type(&aft(1));
            (4107 + type_index(t), aft(1))
        }
        "coalesce" => (4201 + ti, aft(0)),
        "case" => {
            let t = eval_type(&aft(1));
            (4208 + type_index(t), aft(1))
        }
        "like" => {
            args.push(int(92));
            (4310, tipb::FieldType { collate: Some(coll), ..bool_ft() })
        }
        n if n.starts_with("cast_") => {
            let target = &n[5..];
            let from_i = ti;
            let (to, rft) = match target {
                "int" => (0, ft(mt::LONG_LONG)),
                "uint" => (0, tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) }),
                "real" => (1, ft(mt::DOUBLE)),
                "str" => (2, ft_str(-46)),
                "dec" => {
                    let scale = args
                        .pop()
                        .map(|e| {
                            rcop_datum::codec::decode_i64(&mut rcop_datum::Reader::new(
                                e.val.as_deref().unwrap(),
                            ))
                            .unwrap()
                        })
                        .unwrap();
                    let p = args
                        .pop()
                        .map(|e| {
                            rcop_datum::codec::decode_i64(&mut rcop_datum::Reader::new(
                                e.val.as_deref().unwrap(),
                            ))
                            .unwrap()
                        })
                        .unwrap();
                    (3, ft_dec(p as i32, scale as i32))
                }
                "date" => (4, tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) }),
                "datetime" => (4, tipb::FieldType { decimal: Some(0), ..ft(mt::DATETIME) }),
                "time" => (5, tipb::FieldType { decimal: Some(0), ..ft(mt::DURATION) }),
                o => panic!("unknown cast {o}"),
            };
            let sig = if from_i == 0 { to + 1 } else { from_i * 10 + to };
            (sig, rft)
        }
        o if o.starts_with("sig") => (o[3..].parse().unwrap(), bool_ft()),
        o => panic!("unknown function {o}"),
    };
    func(sig, rft, args)
}
