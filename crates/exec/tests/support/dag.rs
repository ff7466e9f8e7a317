//! Builders for tipb expressions and executors, shared by the tests and benches.
#![allow(dead_code)]

use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::codec;
use rcop_datum::{Decimal, Time};
use rcop_proto::{coprocessor, tipb};

pub fn ft(tp: u8) -> tipb::FieldType {
    tipb::FieldType {
        tp: Some(i32::from(tp)),
        flag: Some(0),
        flen: Some(-1),
        decimal: Some(-1),
        collate: Some(63),
        ..Default::default()
    }
}

pub fn ft_dec(flen: i32, frac: i32) -> tipb::FieldType {
    tipb::FieldType { flen: Some(flen), decimal: Some(frac), ..ft(mt::NEW_DECIMAL) }
}

pub fn ft_str(collate: i32) -> tipb::FieldType {
    tipb::FieldType { collate: Some(collate), ..ft(mt::VARCHAR) }
}

pub fn col(offset: i64, f: tipb::FieldType) -> tipb::Expr {
    let mut v = Vec::new();
    codec::encode_i64(&mut v, offset);
    tipb::Expr { tp: Some(201), val: Some(v.into()), field_type: Some(f), ..Default::default() }
}

pub fn int(v: i64) -> tipb::Expr {
    let mut b = Vec::new();
    codec::encode_i64(&mut b, v);
    tipb::Expr {
        tp: Some(1),
        val: Some(b.into()),
        field_type: Some(ft(mt::LONG_LONG)),
        ..Default::default()
    }
}

pub fn real(v: f64) -> tipb::Expr {
    let mut b = Vec::new();
    codec::encode_f64(&mut b, v);
    tipb::Expr {
        tp: Some(4),
        val: Some(b.into()),
        field_type: Some(ft(mt::DOUBLE)),
        ..Default::default()
    }
}

pub fn string(v: &str, collate: i32) -> tipb::Expr {
    tipb::Expr {
        tp: Some(5),
        val: Some(v.as_bytes().to_vec().into()),
        field_type: Some(ft_str(collate)),
        ..Default::default()
    }
}

pub fn null(f: tipb::FieldType) -> tipb::Expr {
    tipb::Expr { tp: Some(0), field_type: Some(f), ..Default::default() }
}

pub fn dec(s: &str) -> tipb::Expr {
    let d: Decimal = s.parse().unwrap();
    let (p, f) = d.prec_and_frac();
    let mut b = Vec::new();
    let _ = d.write_bin(p, f, &mut b).unwrap();
    tipb::Expr {
        tp: Some(102),
        val: Some(b.into()),
        field_type: Some(ft_dec(i32::from(p), i32::from(f))),
        ..Default::default()
    }
}

pub fn time(s: &str, tp: u8, fsp: i32) -> tipb::Expr {
    let tt = match tp {
        mt::DATE => rcop_datum::TimeType::Date,
        mt::TIMESTAMP => rcop_datum::TimeType::Timestamp,
        _ => rcop_datum::TimeType::DateTime,
    };
    let t = Time::parse(s, tt, fsp.max(0) as u8).unwrap();
    let mut b = Vec::new();
    codec::encode_u64(&mut b, t.to_packed_u64());
    tipb::Expr {
        tp: Some(107),
        val: Some(b.into()),
        field_type: Some(tipb::FieldType { decimal: Some(fsp), ..ft(tp) }),
        ..Default::default()
    }
}

pub fn func(sig: i32, f: tipb::FieldType, children: Vec<tipb::Expr>) -> tipb::Expr {
    tipb::Expr {
        tp: Some(10000),
        sig: Some(sig),
        field_type: Some(f),
        children,
        ..Default::default()
    }
}

pub fn agg(tp: i32, f: tipb::FieldType, children: Vec<tipb::Expr>) -> tipb::Expr {
    tipb::Expr {
        tp: Some(tp),
        field_type: Some(f),
        children,
        agg_func_mode: Some(2),
        ..Default::default()
    }
}

pub fn column_info(id: i64, f: &tipb::FieldType, pk_handle: bool) -> tipb::ColumnInfo {
    tipb::ColumnInfo {
        column_id: Some(id),
        tp: f.tp,
        collation: f.collate,
        column_len: f.flen,
        decimal: f.decimal,
        flag: f.flag.map(|x| x as i32),
        pk_handle: Some(pk_handle),
        ..Default::default()
    }
}

pub fn scan(table_id: i64, columns: Vec<tipb::ColumnInfo>, desc: bool) -> tipb::Executor {
    tipb::Executor {
        tp: Some(0),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(table_id),
            columns,
            desc: Some(desc),
            ..Default::default()
        }),
        executor_id: Some("TableFullScan_1".into()),
        ..Default::default()
    }
}

pub fn selection(conditions: Vec<tipb::Expr>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(2),
        selection: Some(Box::new(tipb::Selection { conditions, ..Default::default() })),
        executor_id: Some("Selection_2".into()),
        ..Default::default()
    }
}

pub fn aggregation(group_by: Vec<tipb::Expr>, agg_func: Vec<tipb::Expr>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(3),
        aggregation: Some(Box::new(tipb::Aggregation { group_by, agg_func, ..Default::default() })),
        executor_id: Some("HashAgg_3".into()),
        ..Default::default()
    }
}

pub fn projection(exprs: Vec<tipb::Expr>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(11),
        projection: Some(Box::new(tipb::Projection { exprs, ..Default::default() })),
        executor_id: Some("Projection_4".into()),
        ..Default::default()
    }
}

pub fn top_n(order_by: Vec<(tipb::Expr, bool)>, limit: u64) -> tipb::Executor {
    tipb::Executor {
        tp: Some(4),
        top_n: Some(Box::new(tipb::TopN {
            order_by: order_by
                .into_iter()
                .map(|(e, desc)| tipb::ByItem {
                    expr: Some(e),
                    desc: Some(desc),
                    ..Default::default()
                })
                .collect(),
            limit: Some(limit),
            ..Default::default()
        })),
        executor_id: Some("TopN_5".into()),
        ..Default::default()
    }
}

pub fn limit(n: u64) -> tipb::Executor {
    tipb::Executor {
        tp: Some(5),
        limit: Some(Box::new(tipb::Limit { limit: Some(n), ..Default::default() })),
        executor_id: Some("Limit_6".into()),
        ..Default::default()
    }
}

pub fn dag(
    executors: Vec<tipb::Executor>,
    output_offsets: Vec<u32>,
    chunk: bool,
) -> tipb::DagRequest {
    tipb::DagRequest {
        executors,
        output_offsets,
        time_zone_offset: Some(0),
        flags: Some(0),
        encode_type: Some(if chunk { 1 } else { 0 }),
        ..Default::default()
    }
}

/// The record range of a table, with an optional API v2 keyspace prefix.
pub fn table_range(table_id: i64, keyspace: Option<u32>) -> coprocessor::KeyRange {
    let (mut start, mut end) = (prefix(keyspace), prefix(keyspace));
    rcop_datum::key::encode_record_prefix(&mut start, table_id);
    rcop_datum::key::encode_record_prefix(&mut end, table_id);
    rcop_datum::key::prefix_next_in_place(&mut end);
    coprocessor::KeyRange { start: start.into(), end: end.into() }
}

pub fn prefix(keyspace: Option<u32>) -> Vec<u8> {
    match keyspace {
        Some(id) => rcop_datum::KeyspaceId(id).txn_prefix().unwrap().to_vec(),
        None => Vec::new(),
    }
}

pub fn request(dag: &tipb::DagRequest, ranges: Vec<coprocessor::KeyRange>) -> coprocessor::Request {
    coprocessor::Request {
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        ranges,
        start_ts: 100,
        ..Default::default()
    }
}

/// Decodes a TypeDefault SelectResponse into rows of `width` datums.
pub fn default_rows(sel: &tipb::SelectResponse, width: usize) -> Vec<Vec<rcop_datum::Datum>> {
    let mut all = Vec::new();
    for c in &sel.chunks {
        all.extend(rcop_datum::Datum::decode_all(c.rows_data.as_deref().unwrap_or(&[])).unwrap());
    }
    assert_eq!(all.len() % width.max(1), 0, "datum count not a multiple of the width");
    all.chunks(width.max(1)).map(<[_]>::to_vec).collect()
}
