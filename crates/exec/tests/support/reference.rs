//! A plain row-at-a-time reference evaluator of DAG requests, written independently of the
//! engine (it walks the tipb trees directly), for differential testing.
#![allow(dead_code)]

use std::cmp::Ordering;

use rcop_datum::chunk::{ChunkColumnRef, fixed_size_of, mysql_type as mt};
use rcop_datum::codec::{self, Reader};
use rcop_datum::datum::skip_datum;
use rcop_datum::row::{Column, Row};
use rcop_datum::{Datum, Decimal, Duration, Time, TimeType, Tz, key};
use rcop_exec::{KeyRange, KvBatch, MemStore, ScanSource};
use rcop_proto::tipb;

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum RV {
    Null,
    Int(i64, bool),
    Real(f64),
    Dec(Decimal),
    Str(Vec<u8>),
    Time(Time),
    Dur(Duration),
}

type R<T> = Result<T, String>;

pub fn render(v: &RV) -> String {
    match v {
        RV::Null => "\\N".into(),
        RV::Int(x, true) => (*x as u64).to_string(),
        RV::Int(x, false) => x.to_string(),
        RV::Real(x) => format!("{x}"),
        RV::Dec(d) => d.to_string(),
        RV::Str(s) => String::from_utf8_lossy(s).into_owned(),
        RV::Time(t) => {
            let mut o = Vec::new();
            t.write_str(&mut o);
            String::from_utf8(o).unwrap()
        }
        RV::Dur(d) => {
            let mut o = Vec::new();
            d.write_str(&mut o);
            String::from_utf8(o).unwrap()
        }
    }
}

fn unsigned(f: Option<&tipb::FieldType>) -> bool {
    f.is_some_and(|f| f.flag.unwrap_or(0) & 32 != 0)
}

fn tt(tp: i32) -> TimeType {
    match tp as u8 {
        mt::DATE | mt::NEW_DATE => TimeType::Date,
        mt::TIMESTAMP => TimeType::Timestamp,
        _ => TimeType::DateTime,
    }
}

/// Converts a decoded datum to a value of a column of type (tp, flag, fsp).
pub fn from_datum(d: Datum, tp: i32, flag: i32, dec: i32, tz: &Tz) -> R<RV> {
    let fsp = dec.clamp(0, 6) as u8;
    let uns = flag & 32 != 0;
    Ok(match (tp as u8, d) {
        (_, Datum::Null) => RV::Null,
        (mt::DATE | mt::DATETIME | mt::TIMESTAMP, d @ (Datum::Uint(_) | Datum::Int(_))) => {
            let p = match d {
                Datum::Uint(p) => p,
                Datum::Int(p) => p as u64,
                _ => 0,
            };
            let mut t = Time::from_packed_u64(p, tt(tp), fsp).map_err(|e| e.to_string())?;
            if tt(tp) == TimeType::Timestamp {
                t = t.from_utc(tz).map_err(|e| e.to_string())?;
            }
            RV::Time(t)
        }
        (mt::DURATION, Datum::Int(n)) => {
            RV::Dur(Duration::from_nanos(n, fsp).map_err(|e| e.to_string())?)
        }
        (mt::DURATION, Datum::Duration(d)) => {
            RV::Dur(Duration::from_nanos(d.nanos(), fsp).map_err(|e| e.to_string())?)
        }
        (_, Datum::Int(x)) => RV::Int(x, uns),
        (_, Datum::Uint(x)) => RV::Int(x as i64, uns),
        (_, Datum::Float(x)) => RV::Real(x),
        (_, Datum::Decimal(x)) => RV::Dec(x),
        (_, Datum::Bytes(b)) => RV::Str(b),
        (_, Datum::Duration(d)) => RV::Dur(d),
        (_, Datum::Time(t)) => RV::Time(t),
        (_, d) => return Err(format!("unsupported datum {d:?}")),
    })
}

fn v2_value(v: &[u8], c: &tipb::ColumnInfo, tz: &Tz) -> R<RV> {
    use rcop_datum::row::v2::*;
    let tp = c.tp.unwrap_or(0);
    let e = |e: rcop_datum::Error| e.to_string();
    let uns = c.flag.unwrap_or(0) & 32 != 0;
    let fsp = c.decimal.unwrap_or(0).clamp(0, 6) as u8;
    Ok(match tp as u8 {
        mt::LONG_LONG | mt::LONG | mt::TINY | mt::SHORT | mt::INT24 | mt::YEAR => {
            if uns {
                RV::Int(decode_v2_u64(v).map_err(e)? as i64, true)
            } else {
                RV::Int(decode_v2_i64(v).map_err(e)?, false)
            }
        }
        mt::DOUBLE | mt::FLOAT => RV::Real(decode_v2_f64(v).map_err(e)?),
        mt::NEW_DECIMAL => RV::Dec(Decimal::decode_bin(&mut Reader::new(v)).map_err(e)?.0),
        mt::DATE | mt::DATETIME | mt::TIMESTAMP => {
            let mut t =
                Time::from_packed_u64(decode_v2_u64(v).map_err(e)?, tt(tp), fsp).map_err(e)?;
            if tt(tp) == TimeType::Timestamp {
                t = t.from_utc(tz).map_err(e)?;
            }
            RV::Time(t)
        }
        mt::DURATION => {
            RV::Dur(Duration::from_nanos(decode_v2_i64(v).map_err(e)?, fsp).map_err(e)?)
        }
        mt::VARCHAR
        | mt::STRING
        | mt::VAR_STRING
        | mt::BLOB
        | mt::TINY_BLOB
        | mt::MEDIUM_BLOB
        | mt::LONG_BLOB => RV::Str(v.to_vec()),
        other => return Err(format!("unsupported field type {other}")),
    })
}

/// Runs `dag` over the whole table range of `table_id` in `store`.
pub fn run(store: &MemStore, ranges: &[KeyRange], dag: &tipb::DagRequest) -> R<Vec<Vec<RV>>> {
    let tz = match dag.time_zone_name.as_deref().filter(|n| !n.is_empty()) {
        Some(n) => Tz::from_name(n).map_err(|e| e.to_string())?,
        None => {
            Tz::from_offset_secs(dag.time_zone_offset.unwrap_or(0)).map_err(|e| e.to_string())?
        }
    };
    let mut it = dag.executors.iter();
    let scan = it.next().ok_or("no executors")?;
    let ts = scan.tbl_scan.as_ref().ok_or("not a table scan")?;
    let mut rows = Vec::new();
    let mut sc = store.scanner();
    for r in ranges {
        sc.start(r, false).map_err(|e| e.to_string())?;
        let mut b = KvBatch::new();
        while sc.next_batch(1 << 20, &mut b).map_err(|e| e.to_string())?
            == rcop_exec::ScanStatus::More
        {}
        for (k, v) in b.iter() {
            rows.push(scan_row(k, v, ts, &tz)?);
        }
    }
    if ts.desc == Some(true) {
        rows.reverse();
    }
    let mut schema: Vec<tipb::FieldType> = ts
        .columns
        .iter()
        .map(|c| tipb::FieldType {
            tp: c.tp,
            flag: c.flag.map(|f| f as u32),
            flen: c.column_len,
            decimal: c.decimal,
            collate: c.collation,
            ..Default::default()
        })
        .collect();
    for e in it {
        match e.tp.unwrap_or(-1) {
            2 => {
                let s = e.selection.as_ref().unwrap();
                let mut kept = Vec::new();
                for row in rows {
                    let mut ok = true;
                    for c in &s.conditions {
                        if !truthy(&eval(c, &row, dag)?)? {
                            ok = false;
                            break;
                        }
                    }
                    if ok {
                        kept.push(row);
                    }
                }
                rows = kept;
            }
            11 => {
                let p = e.projection.as_ref().unwrap();
                rows = rows
                    .iter()
                    .map(|r| p.exprs.iter().map(|x| eval(x, r, dag)).collect::<R<Vec<_>>>())
                    .collect::<R<_>>()?;
                schema = p.exprs.iter().map(|x| x.field_type.clone().unwrap_or_default()).collect();
            }
            5 => rows.truncate(e.limit.as_ref().unwrap().limit.unwrap_or(0) as usize),
            4 => {
                let t = e.top_n.as_ref().unwrap();
                let mut keyed = Vec::new();
                for r in rows {
                    let k = t
                        .order_by
                        .iter()
                        .map(|b| eval(b.expr.as_ref().unwrap(), &r, dag))
                        .collect::<R<Vec<_>>>()?;
                    keyed.push((k, r));
                }
                keyed.sort_by(|a, b| {
                    for (i, by) in t.order_by.iter().enumerate() {
                        let o = cmp_for_sort(
                            &a.0[i],
                            &b.0[i],
                            by.expr.as_ref().unwrap().field_type.as_ref(),
                        );
                        let o = if by.desc == Some(true) { o.reverse() } else { o };
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                    Ordering::Equal
                });
                rows = keyed.into_iter().take(t.limit.unwrap_or(0) as usize).map(|x| x.1).collect();
            }
            3 | 6 => {
                let a = e.aggregation.as_ref().unwrap();
                let (out, s) = aggregate(a, &rows, dag)?;
                rows = out;
                schema = s;
            }
            other => return Err(format!("unsupported executor {other}")),
        }
    }
    let _ = &schema;
    Ok(rows
        .into_iter()
        .map(|r| {
            dag.output_offsets
                .iter()
                .map(|&o| r.get(o as usize).cloned().unwrap_or(RV::Null))
                .collect()
        })
        .collect())
}

fn scan_row(k: &[u8], v: &[u8], ts: &tipb::TableScan, tz: &Tz) -> R<Vec<RV>> {
    let k = if k.first() == Some(&b'x') { &k[4..] } else { k };
    let row = Row::parse(v).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let common = !ts.primary_column_ids.is_empty();
    for c in &ts.columns {
        let id = c.column_id.unwrap_or(0);
        if !common && (c.pk_handle == Some(true) || id == -1) {
            let (_, h) = key::decode_record_key(k).map_err(|e| e.to_string())?;
            out.push(RV::Int(h, c.flag.unwrap_or(0) & 32 != 0));
            continue;
        }
        let v = match row.get(id).map_err(|e| e.to_string())? {
            Column::V2(b) => v2_value(b, c, tz)?,
            Column::Datum(d) => {
                let d = Datum::decode(&mut Reader::new(d)).map_err(|e| e.to_string())?;
                from_datum(d, c.tp.unwrap_or(0), c.flag.unwrap_or(0), c.decimal.unwrap_or(0), tz)?
            }
            Column::Null => RV::Null,
            Column::Missing => {
                if let Some(pos) = ts.primary_column_ids.iter().position(|p| *p == id) {
                    let (_, h) = key::split_record_key(k).map_err(|e| e.to_string())?;
                    let mut r = Reader::new(h);
                    for _ in 0..pos {
                        skip_datum(&mut r).map_err(|e| e.to_string())?;
                    }
                    let d = Datum::decode(&mut r).map_err(|e| e.to_string())?;
                    from_datum(
                        d,
                        c.tp.unwrap_or(0),
                        c.flag.unwrap_or(0),
                        c.decimal.unwrap_or(0),
                        tz,
                    )?
                } else if let Some(dv) = c.default_val.as_deref().filter(|d| !d.is_empty()) {
                    let d = Datum::decode(&mut Reader::new(dv)).map_err(|e| e.to_string())?;
                    from_datum(
                        d,
                        c.tp.unwrap_or(0),
                        c.flag.unwrap_or(0),
                        c.decimal.unwrap_or(0),
                        tz,
                    )?
                } else if c.flag.unwrap_or(0) & 1 != 0 {
                    return Err(format!("column {id} missing"));
                } else {
                    RV::Null
                }
            }
        };
        out.push(v);
    }
    Ok(out)
}

fn truthy(v: &RV) -> R<bool> {
    Ok(match v {
        RV::Null => false,
        RV::Int(x, _) => *x != 0,
        RV::Real(x) => *x != 0.0,
        RV::Dec(d) => !d.is_zero(),
        other => return Err(format!("non-numeric condition {other:?}")),
    })
}

fn pad_trim(s: &[u8]) -> &[u8] {
    let mut e = s.len();
    while e > 0 && s[e - 1] == b' ' {
        e -= 1;
    }
    &s[..e]
}

/// Compares two non-NULL values.
fn cmp_vals(a: &RV, b: &RV, collate: i32) -> Ordering {
    match (a, b) {
        (RV::Int(x, ux), RV::Int(y, uy)) => {
            let wx = if *ux { i128::from(*x as u64) } else { i128::from(*x) };
            let wy = if *uy { i128::from(*y as u64) } else { i128::from(*y) };
            wx.cmp(&wy)
        }
        (RV::Real(x), RV::Real(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (RV::Dec(x), RV::Dec(y)) => x.cmp(y),
        (RV::Str(x), RV::Str(y)) => {
            if matches!(collate, -46 | -83 | -65 | -47) {
                pad_trim(x).cmp(pad_trim(y))
            } else {
                x.cmp(y)
            }
        }
        (RV::Time(x), RV::Time(y)) => x.cmp(y),
        (RV::Dur(x), RV::Dur(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

fn cmp_for_sort(a: &RV, b: &RV, f: Option<&tipb::FieldType>) -> Ordering {
    match (a, b) {
        (RV::Null, RV::Null) => Ordering::Equal,
        (RV::Null, _) => Ordering::Less,
        (_, RV::Null) => Ordering::Greater,
        _ => cmp_vals(a, b, f.and_then(|f| f.collate).unwrap_or(63)),
    }
}

fn constant(e: &tipb::Expr) -> R<RV> {
    let val = e.val.as_deref().unwrap_or(&[]);
    let f = e.field_type.as_ref();
    let r = || Reader::new(val);
    let er = |e: rcop_datum::Error| e.to_string();
    Ok(match e.tp.unwrap_or(0) {
        0 => RV::Null,
        1 => RV::Int(codec::decode_i64(&mut r()).map_err(er)?, false),
        2 => RV::Int(codec::decode_u64(&mut r()).map_err(er)? as i64, true),
        3 | 4 => RV::Real(codec::decode_f64(&mut r()).map_err(er)?),
        5 | 6 => RV::Str(val.to_vec()),
        102 => RV::Dec(Decimal::decode_bin(&mut r()).map_err(er)?.0),
        103 => RV::Dur(
            Duration::from_nanos(
                codec::decode_i64(&mut r()).map_err(er)?,
                f.and_then(|f| f.decimal).unwrap_or(0).clamp(0, 6) as u8,
            )
            .map_err(er)?,
        ),
        107 => {
            let f = f.ok_or("time without type")?;
            RV::Time(
                Time::from_packed_u64(
                    codec::decode_u64(&mut r()).map_err(er)?,
                    tt(f.tp.unwrap_or(0)),
                    f.decimal.unwrap_or(0).clamp(0, 6) as u8,
                )
                .map_err(er)?,
            )
        }
        t => return Err(format!("unsupported constant {t}")),
    })
}

/// Evaluates an expression on one row.
pub fn eval(e: &tipb::Expr, row: &[RV], dag: &tipb::DagRequest) -> R<RV> {
    let tp = e.tp.unwrap_or(0);
    if tp == 201 {
        let off = codec::decode_i64(&mut Reader::new(e.val.as_deref().unwrap_or(&[])))
            .map_err(|e| e.to_string())?;
        return row.get(off as usize).cloned().ok_or_else(|| "bad offset".to_string());
    }
    if tp != 10000 {
        let mut v = constant(e)?;
        if let (RV::Time(t), Some(f)) = (&v, e.field_type.as_ref())
            && tt(f.tp.unwrap_or(0)) == TimeType::Timestamp
        {
            {
                let tz = match dag.time_zone_name.as_deref().filter(|n| !n.is_empty()) {
                    Some(n) => Tz::from_name(n).map_err(|e| e.to_string())?,
                    None => Tz::from_offset_secs(dag.time_zone_offset.unwrap_or(0))
                        .map_err(|e| e.to_string())?,
                };
                v = RV::Time(t.from_utc(&tz).map_err(|e| e.to_string())?);
            }
        }
        return Ok(v);
    }
    let sig = e.sig.unwrap_or(-1);
    let args: Vec<RV> = e.children.iter().map(|c| eval(c, row, dag)).collect::<R<_>>()?;
    let collate = e.field_type.as_ref().and_then(|f| f.collate).unwrap_or(63);
    let uns = unsigned(e.field_type.as_ref());
    let child_uns = |i: usize| unsigned(e.children.get(i).and_then(|c| c.field_type.as_ref()));
    let int = |b: bool| RV::Int(i64::from(b), false);
    let a0 = args.first().cloned().unwrap_or(RV::Null);
    let a1 = args.get(1).cloned().unwrap_or(RV::Null);
    match sig {
        100..=165 => {
            let op = sig / 10;
            if op == 16 {
                return Ok(int(match (&a0, &a1) {
                    (RV::Null, RV::Null) => true,
                    (RV::Null, _) | (_, RV::Null) => false,
                    _ => cmp_vals(&a0, &a1, collate) == Ordering::Equal,
                }));
            }
            if a0 == RV::Null || a1 == RV::Null {
                return Ok(RV::Null);
            }
            let o = cmp_vals(&a0, &a1, collate);
            Ok(int(match op {
                10 => o.is_lt(),
                11 => o.is_le(),
                12 => o.is_gt(),
                13 => o.is_ge(),
                14 => o.is_eq(),
                _ => o.is_ne(),
            }))
        }
        200..=237 => {
            if a0 == RV::Null || a1 == RV::Null {
                return Ok(RV::Null);
            }
            match (&a0, &a1) {
                (RV::Int(x, ux), RV::Int(y, uy)) => {
                    let wx = if *ux { i128::from(*x as u64) } else { i128::from(*x) };
                    let wy = if *uy { i128::from(*y as u64) } else { i128::from(*y) };
                    let r = match sig {
                        203 | 219..=222 => wx + wy,
                        207 | 227..=233 => wx - wy,
                        210 | 218 => wx * wy,
                        213 | 234..=237 => {
                            if wy == 0 {
                                return Ok(RV::Null);
                            }
                            wx / wy
                        }
                        _ => {
                            if wy == 0 {
                                return Ok(RV::Null);
                            }
                            wx % wy
                        }
                    };
                    let out_u =
                        if matches!(sig, 217 | 223..=226) { *ux } else { uns || *ux || *uy };
                    if out_u {
                        u64::try_from(r)
                            .map(|v| RV::Int(v as i64, true))
                            .map_err(|_| "BIGINT UNSIGNED value is out of range".to_string())
                    } else {
                        i64::try_from(r)
                            .map(|v| RV::Int(v, false))
                            .map_err(|_| "BIGINT value is out of range".to_string())
                    }
                }
                (RV::Real(x), RV::Real(y)) => {
                    let r = match sig {
                        200 => x + y,
                        204 => x - y,
                        208 => x * y,
                        211 => {
                            if *y == 0.0 {
                                return Ok(RV::Null);
                            }
                            x / y
                        }
                        _ => {
                            if *y == 0.0 {
                                return Ok(RV::Null);
                            }
                            x % y
                        }
                    };
                    if r.is_finite() {
                        Ok(RV::Real(r))
                    } else {
                        Err("DOUBLE value is out of range".into())
                    }
                }
                (RV::Dec(x), RV::Dec(y)) => {
                    let res = match sig {
                        201 => x.add(y),
                        205 => x.sub(y),
                        209 => x.mul(y),
                        212 => match x.div(y, dag.div_precision_increment.unwrap_or(4) as u8) {
                            Some(r) => r,
                            None => return Ok(RV::Null),
                        },
                        214 => {
                            if y.is_zero() {
                                return Ok(RV::Null);
                            }
                            let q = x
                                .div(y, 9)
                                .unwrap()
                                .value()
                                .round(0, rcop_datum::decimal::RoundMode::Truncate)
                                .value();
                            return match q.as_i64() {
                                rcop_datum::Res::Overflow(_) => {
                                    Err("BIGINT value is out of range".into())
                                }
                                r => Ok(RV::Int(r.value(), false)),
                            };
                        }
                        _ => match x.rem(y) {
                            Some(r) => r,
                            None => return Ok(RV::Null),
                        },
                    };
                    if res.is_overflow() {
                        Err("DECIMAL value is out of range".into())
                    } else {
                        Ok(RV::Dec(res.value()))
                    }
                }
                _ => Err("arith type mismatch".into()),
            }
        }
        3101..=3103 => {
            let b = |v: &RV| -> R<Option<bool>> {
                if *v == RV::Null { Ok(None) } else { truthy(v).map(Some) }
            };
            let (x, y) = (b(&a0)?, b(&a1)?);
            Ok(match sig {
                3101 => match (x, y) {
                    (Some(false), _) | (_, Some(false)) => int(false),
                    (Some(true), Some(true)) => int(true),
                    _ => RV::Null,
                },
                3102 => match (x, y) {
                    (Some(true), _) | (_, Some(true)) => int(true),
                    (Some(false), Some(false)) => int(false),
                    _ => RV::Null,
                },
                _ => match (x, y) {
                    (Some(p), Some(q)) => int(p ^ q),
                    _ => RV::Null,
                },
            })
        }
        3104..=3106 => Ok(if a0 == RV::Null { RV::Null } else { int(!truthy(&a0)?) }),
        3108..=3110 => Ok(match a0 {
            RV::Null => RV::Null,
            RV::Int(x, u) => {
                let w = if u { i128::from(x as u64) } else { i128::from(x) };
                RV::Int(
                    i64::try_from(-w).map_err(|_| "BIGINT value is out of range".to_string())?,
                    false,
                )
            }
            RV::Real(x) => RV::Real(-x),
            RV::Dec(d) => RV::Dec(-d),
            o => return Err(format!("neg of {o:?}")),
        }),
        3111..=3116 => Ok(int(a0 == RV::Null)),
        3122..=3127 => Ok(int(a0 != RV::Null && truthy(&a0)? == (sig <= 3124))),
        3142..=3147 => {
            Ok(if a0 == RV::Null { RV::Null } else { int(truthy(&a0)? == (sig <= 3144)) })
        }
        4001..=4006 => {
            if a0 == RV::Null {
                return Ok(RV::Null);
            }
            let mut saw_null = false;
            for x in &args[1..] {
                if *x == RV::Null {
                    saw_null = true;
                } else if cmp_vals(&a0, x, collate) == Ordering::Equal {
                    return Ok(int(true));
                }
            }
            Ok(if saw_null { RV::Null } else { int(false) })
        }
        4101..=4106 | 4201..=4206 => {
            Ok(args.into_iter().find(|x| *x != RV::Null).unwrap_or(RV::Null))
        }
        4107..=4112 => Ok(if a0 != RV::Null && truthy(&a0)? {
            a1
        } else {
            args.get(2).cloned().unwrap_or(RV::Null)
        }),
        4208..=4213 => {
            let mut i = 0;
            while i + 1 < args.len() {
                if args[i] != RV::Null && truthy(&args[i])? {
                    return Ok(args[i + 1].clone());
                }
                i += 2;
            }
            Ok(if i < args.len() { args[i].clone() } else { RV::Null })
        }
        4310 => match (&a0, &a1) {
            (RV::Str(t), RV::Str(p)) => Ok(int(like(t, p))),
            _ => Ok(RV::Null),
        },
        1..=56 => cast(sig, &a0, e, child_uns(0)),
        _ => Err(format!("unsupported sig {sig}")),
    }
}

/// Naive recursive LIKE over UTF-8 characters with escape '\'.
fn like(t: &[u8], p: &[u8]) -> bool {
    let t: Vec<char> = String::from_utf8_lossy(t).chars().collect();
    let p: Vec<char> = String::from_utf8_lossy(p).chars().collect();
    fn go(t: &[char], p: &[char]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some('%') => (0..=t.len()).any(|i| go(&t[i..], &p[1..])),
            Some('_') => !t.is_empty() && go(&t[1..], &p[1..]),
            Some('\\') if p.len() > 1 => t.first() == Some(&p[1]) && go(&t[1..], &p[2..]),
            Some(c) => t.first() == Some(c) && go(&t[1..], &p[1..]),
        }
    }
    go(&t, &p)
}

fn cast(sig: i32, v: &RV, e: &tipb::Expr, from_unsigned: bool) -> R<RV> {
    if *v == RV::Null {
        return Ok(RV::Null);
    }
    let f = e.field_type.clone().unwrap_or_default();
    let to_uns = f.flag.unwrap_or(0) & 32 != 0;
    let to = if sig < 10 { sig - 1 } else { sig % 10 };
    let fit = |d: Decimal| -> R<RV> {
        let (p, s) = (f.flen.unwrap_or(65), f.decimal.unwrap_or(0));
        let r = d.round(s as i8, rcop_datum::decimal::RoundMode::HalfUp).value();
        if i32::from(r.int_cnt()) > p - s {
            return Err("DECIMAL value is out of range".into());
        }
        Ok(RV::Dec(r))
    };
    match (v, to) {
        (RV::Int(x, _), 0) => Ok(RV::Int(*x, to_uns)),
        (RV::Int(x, _), 1) => {
            Ok(RV::Real(if from_unsigned { *x as u64 as f64 } else { *x as f64 }))
        }
        (RV::Int(x, _), 2) => Ok(RV::Str(
            if from_unsigned { (*x as u64).to_string() } else { x.to_string() }.into_bytes(),
        )),
        (RV::Int(x, _), 3) => {
            fit(if from_unsigned { Decimal::from_u64(*x as u64) } else { Decimal::from_i64(*x) })
        }
        (RV::Real(x), 0) => Ok(RV::Int(x.round() as i64, to_uns)),
        (RV::Real(x), 1) => Ok(RV::Real(*x)),
        (RV::Real(x), 3) => fit(Decimal::from_f64(*x).map_err(|e| e.to_string())?.value()),
        (RV::Dec(d), 0) => Ok(RV::Int(
            d.round(0, rcop_datum::decimal::RoundMode::HalfUp).value().as_i64().value(),
            to_uns,
        )),
        (RV::Dec(d), 1) => Ok(RV::Real(d.as_f64())),
        (RV::Dec(d), 2) => Ok(RV::Str(d.to_string().into_bytes())),
        (RV::Dec(d), 3) => fit(*d),
        (RV::Str(s), 0) => std::str::from_utf8(s)
            .ok()
            .and_then(|x| x.trim().parse::<i64>().ok())
            .map(|x| RV::Int(x, to_uns))
            .ok_or_else(|| "truncated".to_string()),
        (RV::Str(s), 1) => std::str::from_utf8(s)
            .ok()
            .and_then(|x| x.trim().parse::<f64>().ok())
            .map(RV::Real)
            .ok_or_else(|| "truncated".to_string()),
        (RV::Str(s), 2) => Ok(RV::Str(s.clone())),
        (RV::Str(s), 3) => fit(std::str::from_utf8(s)
            .ok()
            .and_then(|x| x.trim().parse::<Decimal>().ok())
            .ok_or("truncated")?),
        (RV::Str(s), 4) => Time::parse(
            std::str::from_utf8(s).map_err(|e| e.to_string())?.trim(),
            tt(f.tp.unwrap_or(0)),
            f.decimal.unwrap_or(0).clamp(0, 6) as u8,
        )
        .map(RV::Time)
        .map_err(|e| e.to_string()),
        (RV::Time(t), 2) => Ok(RV::Str(render(&RV::Time(*t)).into_bytes())),
        (RV::Time(t), 4) => t
            .with_type(tt(f.tp.unwrap_or(0)), f.decimal.unwrap_or(0).clamp(0, 6) as u8)
            .map(RV::Time)
            .map_err(|e| e.to_string()),
        (RV::Dur(d), 2) => Ok(RV::Str(render(&RV::Dur(*d)).into_bytes())),
        _ => Err(format!("unsupported cast sig {sig}")),
    }
}

fn group_key_eq(a: &[RV], b: &[RV], group: &[tipb::Expr]) -> bool {
    a.iter().zip(b).zip(group).all(|((x, y), g)| match (x, y) {
        (RV::Null, RV::Null) => true,
        (RV::Null, _) | (_, RV::Null) => false,
        _ => {
            cmp_vals(x, y, g.field_type.as_ref().and_then(|f| f.collate).unwrap_or(63))
                == Ordering::Equal
        }
    })
}

fn aggregate(
    a: &tipb::Aggregation,
    rows: &[Vec<RV>],
    dag: &tipb::DagRequest,
) -> R<(Vec<Vec<RV>>, Vec<tipb::FieldType>)> {
    let mut keys: Vec<Vec<RV>> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    if a.group_by.is_empty() {
        keys.push(vec![]);
        members.push((0..rows.len()).collect());
    } else {
        for (i, r) in rows.iter().enumerate() {
            let k = a.group_by.iter().map(|g| eval(g, r, dag)).collect::<R<Vec<_>>>()?;
            match keys.iter().position(|x| group_key_eq(x, &k, &a.group_by)) {
                Some(p) => members[p].push(i),
                None => {
                    keys.push(k);
                    members.push(vec![i]);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (k, m) in keys.iter().zip(&members) {
        let mut row = Vec::new();
        for f in &a.agg_func {
            let arg = &f.children[0];
            let vals: Vec<RV> = m
                .iter()
                .map(|&i| eval(arg, &rows[i], dag))
                .collect::<R<Vec<_>>>()?
                .into_iter()
                .filter(|v| *v != RV::Null)
                .collect();
            let rft = f.field_type.clone().unwrap_or_default();
            let sum = || -> R<RV> {
                if vals.is_empty() {
                    return Ok(RV::Null);
                }
                if rft.tp == Some(i32::from(mt::NEW_DECIMAL)) {
                    let mut s = Decimal::zero();
                    for v in &vals {
                        let d = match v {
                            RV::Dec(d) => *d,
                            RV::Int(x, true) => Decimal::from_u64(*x as u64),
                            RV::Int(x, false) => Decimal::from_i64(*x),
                            o => return Err(format!("sum of {o:?}")),
                        };
                        s = s.add(&d).value();
                    }
                    Ok(RV::Dec(s))
                } else {
                    let mut s = 0.0;
                    for v in &vals {
                        s += match v {
                            RV::Real(x) => *x,
                            RV::Int(x, u) => {
                                if *u {
                                    *x as u64 as f64
                                } else {
                                    *x as f64
                                }
                            }
                            RV::Dec(d) => d.as_f64(),
                            o => return Err(format!("sum of {o:?}")),
                        };
                    }
                    Ok(RV::Real(s))
                }
            };
            match f.tp.unwrap_or(0) {
                3001 => row.push(RV::Int(vals.len() as i64, false)),
                3002 => row.push(sum()?),
                3003 => {
                    row.push(RV::Int(vals.len() as i64, true));
                    row.push(sum()?);
                }
                3004 | 3005 => {
                    let mut best: Option<RV> = None;
                    for v in vals {
                        best = Some(match best {
                            None => v,
                            Some(b) => {
                                let o = cmp_vals(&v, &b, rft.collate.unwrap_or(63));
                                if (f.tp == Some(3005) && o.is_gt())
                                    || (f.tp == Some(3004) && o.is_lt())
                                {
                                    v
                                } else {
                                    b
                                }
                            }
                        });
                    }
                    row.push(best.unwrap_or(RV::Null));
                }
                3006 => row.push(
                    m.first().map(|&i| eval(arg, &rows[i], dag)).transpose()?.unwrap_or(RV::Null),
                ),
                t => return Err(format!("unsupported aggregate {t}")),
            }
        }
        row.extend(k.iter().cloned());
        out.push(row);
    }
    Ok((out, vec![]))
}

/// The rows of a response in either encoding, rendered as [`render`] does, one string per
/// row with cells joined by ` | `.
pub fn response_rows(
    sel: &tipb::SelectResponse,
    fts: &[tipb::FieldType],
    chunk: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for ch in &sel.chunks {
        let data = ch.rows_data.as_deref().unwrap_or(&[]);
        if chunk {
            let mut r = Reader::new(data);
            let cols: Vec<_> = fts
                .iter()
                .map(|f| {
                    ChunkColumnRef::decode(&mut r, fixed_size_of(f.tp.unwrap() as u8)).unwrap()
                })
                .collect();
            for i in 0..cols.first().map_or(0, ChunkColumnRef::len) {
                let row: Vec<String> = cols
                    .iter()
                    .zip(fts)
                    .map(|(col, f)| match col.get(i).filter(|_| !col.is_null(i)) {
                        None => "\\N".to_string(),
                        Some(b) => match f.tp.unwrap() as u8 {
                            mt::NEW_DECIMAL => Decimal::from_chunk_bytes(b).unwrap().to_string(),
                            mt::LONG_LONG if f.flag.unwrap_or(0) & 32 != 0 => {
                                u64::from_le_bytes(b.try_into().unwrap()).to_string()
                            }
                            mt::LONG_LONG => i64::from_le_bytes(b.try_into().unwrap()).to_string(),
                            _ => String::from_utf8_lossy(b).into_owned(),
                        },
                    })
                    .collect();
                out.push(row.join(" | "));
            }
        } else {
            let ds = Datum::decode_all(data).unwrap();
            for row in ds.chunks(fts.len().max(1)) {
                let r: Vec<String> = row
                    .iter()
                    .zip(fts)
                    .map(|(d, f)| {
                        render(
                            &from_datum(
                                d.clone(),
                                f.tp.unwrap(),
                                f.flag.unwrap_or(0) as i32,
                                f.decimal.unwrap_or(0),
                                &Tz::utc(),
                            )
                            .unwrap(),
                        )
                    })
                    .collect();
                out.push(r.join(" | "));
            }
        }
    }
    out
}
