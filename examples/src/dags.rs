//! DAG requests over `lineitem` as TiDB pushes them down: Q1, Q6, a filter + TopN and a
//! small selective scan.

use anyhow::{Context, Result};
use bytes::Bytes;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::{Decimal, Time, TimeType, codec};
use rcop_proto::{REQ_TYPE_DAG, coprocessor, kvrpcpb, tipb};

use crate::tpch::{LINEITEM_TABLE_ID, record_key, table_record_range};

/// One named example query.
#[derive(Debug, Clone)]
pub struct Query {
    /// Short name.
    pub name: &'static str,
    /// What it computes, in SQL terms.
    pub sql: &'static str,
    /// The DAG.
    pub dag: tipb::DagRequest,
    /// Handle range `[first, last]` scanned, `None` for the whole table.
    pub handles: Option<(i64, i64)>,
    /// Output positions holding a DATE (sent as packed `u64` datums).
    pub date_outputs: Vec<usize>,
    /// A name per output column (partial aggregates as TiDB receives them: an average is
    /// its count and its sum).
    pub columns: Vec<&'static str>,
}

fn ft(tp: u8) -> tipb::FieldType {
    tipb::FieldType {
        tp: Some(i32::from(tp)),
        flag: Some(1), // NOT NULL
        flen: Some(-1),
        decimal: Some(-1),
        collate: Some(63),
        ..Default::default()
    }
}

fn bigint() -> tipb::FieldType {
    tipb::FieldType { flen: Some(20), decimal: Some(0), ..ft(mt::LONG_LONG) }
}

fn dec(flen: i32, frac: i32) -> tipb::FieldType {
    tipb::FieldType { flen: Some(flen), decimal: Some(frac), ..ft(mt::NEW_DECIMAL) }
}

fn date_ft() -> tipb::FieldType {
    tipb::FieldType { decimal: Some(0), flen: Some(10), ..ft(mt::DATE) }
}

fn char1() -> tipb::FieldType {
    tipb::FieldType { flen: Some(1), collate: Some(-46), ..ft(mt::STRING) }
}

fn column(id: i64, f: &tipb::FieldType) -> tipb::ColumnInfo {
    tipb::ColumnInfo {
        column_id: Some(id),
        tp: f.tp,
        collation: f.collate,
        column_len: f.flen,
        decimal: f.decimal,
        flag: f.flag.and_then(|x| i32::try_from(x).ok()),
        ..Default::default()
    }
}

fn col(offset: i64, f: tipb::FieldType) -> tipb::Expr {
    let mut v = Vec::new();
    codec::encode_i64(&mut v, offset);
    tipb::Expr { tp: Some(201), val: Some(v.into()), field_type: Some(f), ..Default::default() }
}

fn int(x: i64) -> tipb::Expr {
    let mut v = Vec::new();
    codec::encode_i64(&mut v, x);
    tipb::Expr {
        tp: Some(1),
        val: Some(v.into()),
        field_type: Some(bigint()),
        ..Default::default()
    }
}

fn decimal(s: &str) -> Result<tipb::Expr> {
    let d: Decimal = s.parse().context("decimal literal")?;
    let (p, f) = d.prec_and_frac();
    let mut v = Vec::new();
    let _ = d.write_bin(p, f, &mut v).context("decimal literal")?;
    Ok(tipb::Expr {
        tp: Some(102),
        val: Some(v.into()),
        field_type: Some(dec(i32::from(p), i32::from(f))),
        ..Default::default()
    })
}

fn date(s: &str) -> Result<tipb::Expr> {
    let t = Time::parse(s, TimeType::Date, 0).context("date literal")?;
    let mut v = Vec::new();
    codec::encode_u64(&mut v, t.to_packed_u64());
    Ok(tipb::Expr {
        tp: Some(107),
        val: Some(v.into()),
        field_type: Some(date_ft()),
        ..Default::default()
    })
}

fn func(sig: i32, f: tipb::FieldType, children: Vec<tipb::Expr>) -> tipb::Expr {
    tipb::Expr {
        tp: Some(10000),
        sig: Some(sig),
        field_type: Some(f),
        children,
        ..Default::default()
    }
}

fn agg(tp: i32, f: tipb::FieldType, children: Vec<tipb::Expr>) -> tipb::Expr {
    tipb::Expr { tp: Some(tp), field_type: Some(f), children, ..Default::default() }
}

// Scalar function signatures (tipb ScalarFuncSig).
const LT_DECIMAL: i32 = 102;
const LT_TIME: i32 = 104;
const LE_DECIMAL: i32 = 112;
const LE_TIME: i32 = 114;
const GT_DECIMAL: i32 = 122;
const GE_DECIMAL: i32 = 132;
const GE_TIME: i32 = 134;
const PLUS_DECIMAL: i32 = 201;
const MINUS_DECIMAL: i32 = 205;
const MULTIPLY_DECIMAL: i32 = 209;
const AES_ENCRYPT: i32 = 4502;
// Aggregate expression types.
const COUNT: i32 = 3001;
const SUM: i32 = 3002;
const AVG: i32 = 3003;

fn scan(columns: Vec<tipb::ColumnInfo>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(tipb::ExecType::TypeTableScan as i32),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(LINEITEM_TABLE_ID),
            columns,
            ..Default::default()
        }),
        executor_id: Some("TableFullScan_1".into()),
        ..Default::default()
    }
}

fn selection(conditions: Vec<tipb::Expr>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(tipb::ExecType::TypeSelection as i32),
        selection: Some(Box::new(tipb::Selection { conditions, ..Default::default() })),
        executor_id: Some("Selection_2".into()),
        ..Default::default()
    }
}

fn aggregation(group_by: Vec<tipb::Expr>, agg_func: Vec<tipb::Expr>) -> tipb::Executor {
    tipb::Executor {
        tp: Some(tipb::ExecType::TypeAggregation as i32),
        aggregation: Some(Box::new(tipb::Aggregation { group_by, agg_func, ..Default::default() })),
        executor_id: Some("HashAgg_3".into()),
        ..Default::default()
    }
}

fn dag(executors: Vec<tipb::Executor>, output_offsets: Vec<u32>) -> tipb::DagRequest {
    tipb::DagRequest {
        executors,
        output_offsets,
        time_zone_offset: Some(0),
        flags: Some(0),
        encode_type: Some(tipb::EncodeType::TypeDefault as i32),
        ..Default::default()
    }
}

/// TPC-H Q1's pushdown: shipdate ≤ 1998-09-02, partial aggregates grouped by
/// (returnflag, linestatus).
///
/// # Errors
///
/// Never in practice (literal parsing).
pub fn q1() -> Result<Query> {
    let d = || dec(15, 2);
    let cols = [5, 6, 7, 8].map(|id| column(id, &d()));
    let mut columns = cols.to_vec();
    columns.extend([column(9, &char1()), column(10, &char1()), column(11, &date_ft())]);
    let cond = func(LE_TIME, bigint(), vec![col(6, date_ft()), date("1998-09-02")?]);
    let one_minus_disc = func(MINUS_DECIMAL, dec(16, 2), vec![decimal("1")?, col(2, d())]);
    let disc_price = func(MULTIPLY_DECIMAL, dec(33, 4), vec![col(1, d()), one_minus_disc]);
    let one_plus_tax = func(PLUS_DECIMAL, dec(16, 2), vec![decimal("1")?, col(3, d())]);
    let charge = func(MULTIPLY_DECIMAL, dec(38, 6), vec![disc_price.clone(), one_plus_tax]);
    let aggs = vec![
        agg(SUM, dec(38, 2), vec![col(0, d())]),
        agg(SUM, dec(38, 2), vec![col(1, d())]),
        agg(SUM, dec(38, 4), vec![disc_price]),
        agg(SUM, dec(38, 6), vec![charge]),
        agg(AVG, dec(38, 2), vec![col(0, d())]),
        agg(AVG, dec(38, 2), vec![col(1, d())]),
        agg(AVG, dec(38, 2), vec![col(2, d())]),
        agg(COUNT, bigint(), vec![int(1)]),
    ];
    let group = vec![col(4, char1()), col(5, char1())];
    Ok(Query {
        name: "Q1",
        sql: "SELECT l_returnflag, l_linestatus, SUM(l_quantity), … COUNT(*) FROM lineitem \
              WHERE l_shipdate <= '1998-09-02' GROUP BY l_returnflag, l_linestatus",
        dag: dag(
            vec![scan(columns), selection(vec![cond]), aggregation(group, aggs)],
            (0..13).collect(),
        ),
        handles: None,
        date_outputs: Vec::new(),
        columns: vec![
            "sum_qty",
            "sum_base_price",
            "sum_disc_price",
            "sum_charge",
            "avg_qty.count",
            "avg_qty.sum",
            "avg_price.count",
            "avg_price.sum",
            "avg_disc.count",
            "avg_disc.sum",
            "count_order",
            "l_returnflag",
            "l_linestatus",
        ],
    })
}

/// TPC-H Q6's pushdown: SUM(extendedprice × discount) over a year, a discount band and
/// small quantities.
///
/// # Errors
///
/// Never in practice (literal parsing).
pub fn q6() -> Result<Query> {
    let d = || dec(15, 2);
    let columns = vec![column(5, &d()), column(6, &d()), column(7, &d()), column(11, &date_ft())];
    let conds = vec![
        func(GE_TIME, bigint(), vec![col(3, date_ft()), date("1994-01-01")?]),
        func(LT_TIME, bigint(), vec![col(3, date_ft()), date("1995-01-01")?]),
        func(GE_DECIMAL, bigint(), vec![col(2, d()), decimal("0.05")?]),
        func(LE_DECIMAL, bigint(), vec![col(2, d()), decimal("0.07")?]),
        func(LT_DECIMAL, bigint(), vec![col(0, d()), decimal("24")?]),
    ];
    let revenue = func(MULTIPLY_DECIMAL, dec(30, 4), vec![col(1, d()), col(2, d())]);
    Ok(Query {
        name: "Q6",
        sql: "SELECT SUM(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= \
              '1994-01-01' AND l_shipdate < '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 \
              AND l_quantity < 24",
        dag: dag(
            vec![
                scan(columns),
                selection(conds),
                aggregation(vec![], vec![agg(SUM, dec(38, 4), vec![revenue])]),
            ],
            vec![0],
        ),
        handles: None,
        date_outputs: Vec::new(),
        columns: vec!["revenue"],
    })
}

/// A filter and a TopN: the 10 most expensive lines shipped from 1998-08-01.
///
/// # Errors
///
/// Never in practice (literal parsing).
pub fn top_n() -> Result<Query> {
    let columns = vec![column(1, &bigint()), column(6, &dec(15, 2)), column(11, &date_ft())];
    let cond = func(GE_TIME, bigint(), vec![col(2, date_ft()), date("1998-08-01")?]);
    let top = tipb::Executor {
        tp: Some(tipb::ExecType::TypeTopN as i32),
        top_n: Some(Box::new(tipb::TopN {
            order_by: vec![
                tipb::ByItem {
                    expr: Some(col(1, dec(15, 2))),
                    desc: Some(true),
                    ..Default::default()
                },
                tipb::ByItem {
                    expr: Some(col(0, bigint())),
                    desc: Some(false),
                    ..Default::default()
                },
            ],
            limit: Some(10),
            ..Default::default()
        })),
        executor_id: Some("TopN_4".into()),
        ..Default::default()
    };
    Ok(Query {
        name: "filter+TopN",
        sql: "SELECT l_orderkey, l_extendedprice, l_shipdate FROM lineitem WHERE l_shipdate >= \
              '1998-08-01' ORDER BY l_extendedprice DESC, l_orderkey LIMIT 10",
        dag: dag(vec![scan(columns), selection(vec![cond]), top], vec![0, 1, 2]),
        handles: None,
        date_outputs: vec![2],
        columns: vec!["l_orderkey", "l_extendedprice", "l_shipdate"],
    })
}

/// A small selective scan: lines 1..=200 with a quantity above 45.
///
/// # Errors
///
/// Never in practice (literal parsing).
pub fn selective() -> Result<Query> {
    let columns = vec![column(1, &bigint()), column(4, &bigint()), column(5, &dec(15, 2))];
    let cond = func(GT_DECIMAL, bigint(), vec![col(2, dec(15, 2)), decimal("45")?]);
    Ok(Query {
        name: "selective",
        sql: "SELECT l_orderkey, l_linenumber, l_quantity FROM lineitem WHERE _tidb_rowid \
              BETWEEN 1 AND 200 AND l_quantity > 45",
        dag: dag(vec![scan(columns), selection(vec![cond])], vec![0, 1, 2]),
        handles: Some((1, 200)),
        date_outputs: Vec::new(),
        columns: vec!["l_orderkey", "l_linenumber", "l_quantity"],
    })
}

/// A non-paging scan of four columns of every line, no filter: its answer is larger than a
/// worker's `cop-max-resp-size` page at any but the smallest scale factors, so the node
/// assembles it from pages.
pub fn wide_scan() -> Query {
    let columns = vec![
        column(1, &bigint()),
        column(5, &dec(15, 2)),
        column(6, &dec(15, 2)),
        column(11, &date_ft()),
    ];
    Query {
        name: "wide scan",
        sql: "SELECT l_orderkey, l_quantity, l_extendedprice, l_shipdate FROM lineitem",
        dag: dag(vec![scan(columns)], vec![0, 1, 2, 3]),
        handles: None,
        date_outputs: vec![3],
        columns: vec!["l_orderkey", "l_quantity", "l_extendedprice", "l_shipdate"],
    }
}

/// A filter with a function the engine does not evaluate (`AES_ENCRYPT`, which TiKV does not
/// evaluate either): the storage node keeps it local instead of offloading it.
pub fn unsupported_filter() -> Query {
    let varchar = tipb::FieldType { flen: Some(44), collate: Some(-46), ..ft(mt::VARCHAR) };
    let columns = vec![column(1, &bigint()), column(16, &varchar)];
    let pattern = tipb::Expr {
        tp: Some(6), // String
        val: Some(Bytes::from_static(b"key")),
        field_type: Some(varchar.clone()),
        ..Default::default()
    };
    let cond = func(AES_ENCRYPT, varchar.clone(), vec![col(1, varchar), pattern]);
    Query {
        name: "unsupported filter",
        sql: "SELECT l_orderkey, l_comment FROM lineitem WHERE AES_ENCRYPT(l_comment, 'key')",
        dag: dag(vec![scan(columns), selection(vec![cond])], vec![0, 1]),
        handles: None,
        date_outputs: Vec::new(),
        columns: vec!["l_orderkey", "l_comment"],
    }
}

/// The four example queries.
///
/// # Errors
///
/// Never in practice (literal parsing).
pub fn all() -> Result<Vec<Query>> {
    Ok(vec![q1()?, q6()?, top_n()?, selective()?])
}

/// A TSO timestamp (physical milliseconds << 18) for the current wall clock, as PD issues
/// them; the offload decision ages its threshold by the physical part.
pub fn tso_now() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0));
    ms << rcop_offload::TSO_PHYSICAL_SHIFT
}

/// The `coprocessor.Request` of `query` over keyspace `keyspace` (prefix `prefix`),
/// region `region_id`, read at `start_ts`.
pub fn request(
    query: &Query,
    keyspace: u32,
    prefix: &[u8],
    region_id: u64,
    start_ts: u64,
) -> coprocessor::Request {
    let (start, end) = match query.handles {
        Some((first, last)) => (
            record_key(prefix, LINEITEM_TABLE_ID, first),
            record_key(prefix, LINEITEM_TABLE_ID, last.saturating_add(1)),
        ),
        None => table_record_range(prefix, LINEITEM_TABLE_ID),
    };
    coprocessor::Request {
        context: Some(kvrpcpb::Context {
            region_id,
            keyspace_id: Some(keyspace),
            api_version: 2,
            max_execution_duration_ms: 60_000,
            ..Default::default()
        }),
        tp: REQ_TYPE_DAG,
        data: Bytes::from(query.dag.encode_to_vec()),
        ranges: vec![coprocessor::KeyRange { start: start.into(), end: end.into() }],
        start_ts,
        ..Default::default()
    }
}
