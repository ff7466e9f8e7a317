//! TPC-H lineitem stored as TiDB stores it, and the Q1/Q6 pushdown DAGs.
#![allow(dead_code)]

use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Decimal, Time, TimeType, key};
use rcop_exec::{
    Batch, EvalConfig, EvalContext, ExecEnv, Executor, KeyRange, MemStore, TableScanExecutor,
};
use rcop_proto::tipb;

use super::dag::*;

pub const LINEITEM_ID: i64 = 108;
pub const KEYSPACE: u32 = 1;

/// One generated lineitem row, in plain integers (decimals in cents, dates as yyyymmdd).
#[derive(Debug, Clone)]
pub struct Line {
    pub quantity: i64,
    pub price: i64,
    pub discount: i64,
    pub tax: i64,
    pub returnflag: u8,
    pub linestatus: u8,
    pub shipdate: u32,
}

fn ymd(s: &str) -> (u32, u32, u32) {
    let mut it = s.split('-').map(|p| p.parse::<u32>().unwrap());
    (it.next().unwrap(), it.next().unwrap(), it.next().unwrap())
}

fn cents(d: i64) -> Decimal {
    let sign = if d < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", d.abs() / 100, d.abs() % 100).parse().unwrap()
}

/// Generates lineitem at `sf` and stores it as row v2 records of table 108 (handle
/// `_tidb_rowid` from 1) under keyspace 1.
pub fn lineitem(sf: f64) -> (MemStore, Vec<Line>) {
    let mut lines = Vec::new();
    let mut pairs = Vec::new();
    let mut enc = RowEncoder::new();
    let pre = prefix(Some(KEYSPACE));
    for (i, l) in tpchgen::generators::LineItemGenerator::new(sf, 1, 1).iter().enumerate() {
        let date = |t: tpchgen::dates::TPCHDate| {
            let (y, m, d) = ymd(&t.to_string());
            (
                Time::from_parts(y, m, d, 0, 0, 0, 0, TimeType::Date, 0).unwrap(),
                y * 10000 + m * 100 + d,
            )
        };
        let (ship, ship_n) = date(l.l_shipdate);
        let (commit, _) = date(l.l_commitdate);
        let (receipt, _) = date(l.l_receiptdate);
        enc.int(1, l.l_orderkey)
            .int(2, l.l_partkey)
            .int(3, l.l_suppkey)
            .int(4, i64::from(l.l_linenumber));
        enc.decimal(5, &cents(l.l_quantity * 100), 15, 2).unwrap();
        enc.decimal(6, &cents(l.l_extendedprice.0), 15, 2).unwrap();
        enc.decimal(7, &cents(l.l_discount.0), 15, 2).unwrap();
        enc.decimal(8, &cents(l.l_tax.0), 15, 2).unwrap();
        enc.bytes(9, l.l_returnflag.as_bytes()).bytes(10, l.l_linestatus.as_bytes());
        enc.time(11, ship).time(12, commit).time(13, receipt);
        enc.bytes(14, l.l_shipinstruct.as_bytes())
            .bytes(15, l.l_shipmode.as_bytes())
            .bytes(16, l.l_comment.as_bytes());
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        let mut k = pre.clone();
        key::encode_record_key(&mut k, LINEITEM_ID, i as i64 + 1);
        pairs.push((k, v));
        lines.push(Line {
            quantity: l.l_quantity * 100,
            price: l.l_extendedprice.0,
            discount: l.l_discount.0,
            tax: l.l_tax.0,
            returnflag: l.l_returnflag.as_bytes()[0],
            linestatus: l.l_linestatus.as_bytes()[0],
            shipdate: ship_n,
        });
    }
    (MemStore::from_pairs(pairs), lines)
}

fn not_null(mut f: tipb::FieldType) -> tipb::FieldType {
    f.flag = Some(f.flag.unwrap_or(0) | 1);
    f
}

fn char1() -> tipb::FieldType {
    not_null(tipb::FieldType { flen: Some(1), collate: Some(-46), ..ft(mt::STRING) })
}

fn date_ft() -> tipb::FieldType {
    not_null(tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) })
}

fn dec152() -> tipb::FieldType {
    not_null(ft_dec(15, 2))
}

fn int_ft() -> tipb::FieldType {
    tipb::FieldType { flen: Some(1), decimal: Some(0), ..not_null(ft(mt::LONG_LONG)) }
}

/// Q6 as TiDB pushes it: scan (quantity, extendedprice, discount, shipdate) → selection →
/// partial SUM(extendedprice * discount).
pub fn q6(chunk: bool) -> tipb::DagRequest {
    let cols = vec![
        column_info(5, &dec152(), false),
        column_info(6, &dec152(), false),
        column_info(7, &dec152(), false),
        column_info(11, &date_ft(), false),
    ];
    let b = || ft(mt::LONG_LONG);
    let conds = vec![
        func(134, b(), vec![col(3, date_ft()), time("1994-01-01", mt::DATE, 0)]), // GeTime
        func(104, b(), vec![col(3, date_ft()), time("1995-01-01", mt::DATE, 0)]), // LtTime
        func(132, b(), vec![col(2, dec152()), dec("0.05")]),                      // GeDecimal
        func(112, b(), vec![col(2, dec152()), dec("0.07")]),                      // LeDecimal
        func(102, b(), vec![col(0, dec152()), dec("24")]),                        // LtDecimal
    ];
    let product = func(209, ft_dec(30, 4), vec![col(1, dec152()), col(2, dec152())]);
    let sum = agg(3002, ft_dec(38, 4), vec![product]);
    dag(
        vec![scan(LINEITEM_ID, cols, false), selection(conds), aggregation(vec![], vec![sum])],
        vec![0],
        chunk,
    )
}

/// Q1 as TiDB pushes it: scan → selection (shipdate <= 1998-09-02) → partial hash
/// aggregation by (returnflag, linestatus). Output: sum_qty, sum_base_price, sum_disc_price,
/// sum_charge, avg_qty (count, sum), avg_price (count, sum), avg_disc (count, sum), count,
/// returnflag, linestatus.
pub fn q1(chunk: bool) -> tipb::DagRequest {
    let cols = vec![
        column_info(5, &dec152(), false),
        column_info(6, &dec152(), false),
        column_info(7, &dec152(), false),
        column_info(8, &dec152(), false),
        column_info(9, &char1(), false),
        column_info(10, &char1(), false),
        column_info(11, &date_ft(), false),
    ];
    let b = || ft(mt::LONG_LONG);
    let cond = func(114, b(), vec![col(6, date_ft()), time("1998-09-02", mt::DATE, 0)]); // LeTime
    let one_minus_disc = func(205, ft_dec(16, 2), vec![dec("1"), col(2, dec152())]);
    let disc_price = func(209, ft_dec(33, 4), vec![col(1, dec152()), one_minus_disc.clone()]);
    let one_plus_tax = func(201, ft_dec(16, 2), vec![dec("1"), col(3, dec152())]);
    let charge = func(209, ft_dec(38, 6), vec![disc_price.clone(), one_plus_tax]);
    let aggs = vec![
        agg(3002, ft_dec(38, 2), vec![col(0, dec152())]),
        agg(3002, ft_dec(38, 2), vec![col(1, dec152())]),
        agg(3002, ft_dec(38, 4), vec![disc_price]),
        agg(3002, ft_dec(38, 6), vec![charge]),
        agg(3003, ft_dec(38, 2), vec![col(0, dec152())]),
        agg(3003, ft_dec(38, 2), vec![col(1, dec152())]),
        agg(3003, ft_dec(38, 2), vec![col(2, dec152())]),
        agg(3001, int_ft(), vec![int(1)]),
    ];
    let group = vec![col(4, char1()), col(5, char1())];
    dag(
        vec![scan(LINEITEM_ID, cols, false), selection(vec![cond]), aggregation(group, aggs)],
        (0..13).collect(),
        chunk,
    )
}

/// Formats an integer with `scale` implied fraction digits.
pub fn fixed(v: i128, scale: u32) -> String {
    let p = 10i128.pow(scale);
    let sign = if v < 0 { "-" } else { "" };
    let a = v.abs();
    if scale == 0 {
        return format!("{sign}{a}");
    }
    format!("{sign}{}.{:0width$}", a / p, a % p, width = scale as usize)
}

/// Q6's answer computed directly: the revenue with 4 fraction digits.
pub fn q6_expected(lines: &[Line]) -> String {
    let mut sum: i128 = 0;
    for l in lines {
        if l.shipdate >= 19940101
            && l.shipdate < 19950101
            && (5..=7).contains(&l.discount)
            && l.quantity < 2400
        {
            sum += i128::from(l.price) * i128::from(l.discount);
        }
    }
    fixed(sum, 4)
}

/// Q1's partial answers computed directly, keyed by (returnflag, linestatus):
/// [sum_qty, sum_price, sum_disc_price, sum_charge, count, sum_disc].
pub fn q1_expected(lines: &[Line]) -> std::collections::BTreeMap<(u8, u8), [i128; 6]> {
    let mut m = std::collections::BTreeMap::new();
    for l in lines.iter().filter(|l| l.shipdate <= 19980902) {
        let e: &mut [i128; 6] = m.entry((l.returnflag, l.linestatus)).or_default();
        let (q, p, d, t) = (
            i128::from(l.quantity),
            i128::from(l.price),
            i128::from(l.discount),
            i128::from(l.tax),
        );
        e[0] += q;
        e[1] += p;
        e[2] += p * (100 - d);
        e[3] += p * (100 - d) * (100 + t);
        e[4] += 1;
        e[5] += d;
    }
    m
}

/// The first batch (up to 1024 rows) of a TableScan of `cols` (column id, type) over the
/// lineitem table of `store`.
#[allow(clippy::expect_used, reason = "bench and test setup over generated data")]
pub fn lineitem_batch(store: &MemStore, cols: &[(i64, tipb::FieldType)]) -> Batch {
    let infos = cols.iter().map(|(id, f)| column_info(*id, f, false)).collect();
    let ts = scan(LINEITEM_ID, infos, false).tbl_scan.expect("scan");
    let r = table_range(LINEITEM_ID, Some(KEYSPACE));
    let cfg = EvalConfig::default();
    let mut ex =
        TableScanExecutor::new(&ts, vec![KeyRange::new(r.start.to_vec(), r.end.to_vec())], &cfg)
            .expect("scan");
    let mut ctx = EvalContext::new(cfg);
    let mut sc = store.scanner();
    let mut env = ExecEnv { ctx: &mut ctx, source: &mut sc };
    ex.next_batch(1024, &mut env).expect("batch").batch
}
