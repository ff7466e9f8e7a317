//! The tasks of each TPC-H query, as TiDB (v7/v8, default settings) plans them over go-tpc's
//! schema: per query, the `cop[tikv]` subtrees of its EXPLAIN. Constants are the spec's
//! validation parameters; TiDB folds `date 'x' + interval …` into a date constant before
//! pushing it, and rewrites BETWEEN into `>= AND <=`. Bare scans that only feed joins are
//! named in each doc comment and left out when another task already covers the same scan.

use anyhow::Result;
use tipb::ScalarFuncSig as S;

use super::{
    AggFn::{Avg, Count, Sum},
    Op::{Eq, Ge, Gt, Le, Lt, Ne},
    Range::{Handles, Index, IndexFull, Table},
    Scan, Task, agg_task, and, arith, between, cmp, date, dec, disc_price, in_int, in_str, int,
    like, not, or, rows_task, string, substring,
};
use rcop_proto::tipb;

/// Every task of the 22 queries, in query order.
///
/// # Errors
///
/// Never in practice (literal parsing).
pub fn all() -> Result<Vec<Task>> {
    let mut v = Vec::new();
    for q in [
        q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15, q16, q17, q18,
        q19, q20, q21, q22,
    ] {
        v.extend(q()?);
    }
    Ok(v)
}

/// A region's `r_name = name` selection (Q2, Q5, Q8).
fn region(q: &str, name: &str) -> Result<Task> {
    let s = Scan::new("region", &["r_regionkey", "r_name"])?;
    let cond = cmp(Eq, s.c("r_name"), string(name));
    let sql = format!("SELECT r_regionkey, r_name FROM region WHERE r_name = '{name}'");
    Ok(rows_task(&format!("{q}_region"), &s, Table, vec![cond], &sql))
}

/// A nation's `n_name = name` selection (Q11, Q20, Q21).
fn nation(q: &str, name: &str) -> Result<Task> {
    let s = Scan::new("nation", &["n_nationkey", "n_name"])?;
    let cond = cmp(Eq, s.c("n_name"), string(name));
    let sql = format!("SELECT n_nationkey, n_name FROM nation WHERE n_name = '{name}'");
    Ok(rows_task(&format!("{q}_nation"), &s, Table, vec![cond], &sql))
}

/// Q1, pricing summary: lineitem's Selection and partial HashAgg (the whole query's work).
fn q01() -> Result<Vec<Task>> {
    let s = Scan::new(
        "lineitem",
        &[
            "l_quantity",
            "l_extendedprice",
            "l_discount",
            "l_tax",
            "l_returnflag",
            "l_linestatus",
            "l_shipdate",
        ],
    )?;
    let cond = cmp(Le, s.c("l_shipdate"), date("1998-09-02")?);
    let price = disc_price(s.c("l_extendedprice"), s.c("l_discount"))?;
    let one_plus_tax = arith(S::PlusDecimal, dec("1")?, s.c("l_tax"));
    let charge = arith(S::MultiplyDecimal, price.clone(), one_plus_tax);
    let funcs = vec![
        (Sum, s.c("l_quantity")),
        (Sum, s.c("l_extendedprice")),
        (Sum, price),
        (Sum, charge),
        (Avg, s.c("l_quantity")),
        (Avg, s.c("l_extendedprice")),
        (Avg, s.c("l_discount")),
        (Count, int(1)),
    ];
    let group = vec![s.c("l_returnflag"), s.c("l_linestatus")];
    let sql = "SELECT SUM(l_quantity), SUM(l_extendedprice), \
               SUM(l_extendedprice * (1 - l_discount)), \
               SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)), \
               COUNT(l_quantity), SUM(l_quantity), COUNT(l_extendedprice), SUM(l_extendedprice), \
               COUNT(l_discount), SUM(l_discount), COUNT(*), l_returnflag, l_linestatus \
               FROM lineitem WHERE l_shipdate <= DATE '1998-09-02' \
               GROUP BY l_returnflag, l_linestatus";
    Ok(vec![agg_task("q01_lineitem", &s, Table, vec![cond], false, group, funcs, sql)])
}

/// Q2, minimum cost supplier: part's Selection (size and LIKE suffix) and region's. The
/// scans of supplier, partsupp and nation feeding the joins (twice: the correlated MIN is
/// decorrelated into a join) carry no pushed work; the nation scan is Q7's.
fn q02() -> Result<Vec<Task>> {
    let s = Scan::new("part", &["p_partkey", "p_mfgr", "p_size", "p_type"])?;
    let conds = vec![cmp(Eq, s.c("p_size"), int(15)), like(s.c("p_type"), "%BRASS")];
    let sql = "SELECT p_partkey, p_mfgr, p_size, p_type FROM part \
               WHERE p_size = 15 AND p_type LIKE '%BRASS'";
    Ok(vec![rows_task("q02_part", &s, Table, conds, sql), region("q02", "EUROPE")?])
}

/// Q3, shipping priority: customer's segment Selection, orders' and lineitem's date
/// Selections (one region of each: orders' handles and lineitem's clustered `l_orderkey`
/// below 4000). The aggregation is above the joins.
fn q03() -> Result<Vec<Task>> {
    let c = Scan::new("customer", &["c_custkey", "c_mktsegment"])?;
    let o = Scan::new("orders", &["o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"])?;
    let l = Scan::new("lineitem", &["l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"])?;
    Ok(vec![
        rows_task(
            "q03_customer",
            &c,
            Table,
            vec![cmp(Eq, c.c("c_mktsegment"), string("BUILDING"))],
            "SELECT c_custkey, c_mktsegment FROM customer WHERE c_mktsegment = 'BUILDING'",
        ),
        rows_task(
            "q03_orders",
            &o,
            Handles(1, 4000),
            vec![cmp(Lt, o.c("o_orderdate"), date("1995-03-15")?)],
            "SELECT o_orderkey, o_custkey, o_orderdate, o_shippriority FROM orders \
             WHERE o_orderdate < DATE '1995-03-15' AND o_orderkey >= 1 AND o_orderkey < 4000",
        ),
        rows_task(
            "q03_lineitem",
            &l,
            Handles(1, 1000),
            vec![cmp(Gt, l.c("l_shipdate"), date("1995-03-15")?)],
            "SELECT l_orderkey, l_extendedprice, l_discount, l_shipdate FROM lineitem \
             WHERE l_shipdate > DATE '1995-03-15' AND l_orderkey >= 1 AND l_orderkey < 1000",
        ),
    ])
}

/// Q4, order priority checking: orders' quarter Selection, and the EXISTS side, lineitem's
/// `l_commitdate < l_receiptdate` (a column-to-column date comparison; one region).
fn q04() -> Result<Vec<Task>> {
    let o = Scan::new("orders", &["o_orderkey", "o_orderdate", "o_orderpriority"])?;
    let l = Scan::new("lineitem", &["l_orderkey", "l_commitdate", "l_receiptdate"])?;
    let od = o.c("o_orderdate");
    Ok(vec![
        rows_task(
            "q04_orders",
            &o,
            Table,
            vec![cmp(Ge, od.clone(), date("1993-07-01")?), cmp(Lt, od, date("1993-10-01")?)],
            "SELECT o_orderkey, o_orderdate, o_orderpriority FROM orders \
             WHERE o_orderdate >= DATE '1993-07-01' AND o_orderdate < DATE '1993-10-01'",
        ),
        rows_task(
            "q04_lineitem",
            &l,
            Handles(1, 1000),
            vec![cmp(Lt, l.c("l_commitdate"), l.c("l_receiptdate"))],
            "SELECT l_orderkey, l_commitdate, l_receiptdate FROM lineitem \
             WHERE l_commitdate < l_receiptdate AND l_orderkey >= 1 AND l_orderkey < 1000",
        ),
    ])
}

/// Q5, local supplier volume: orders' year Selection (one region), region's, and
/// supplier read through its covering index `SUPPLIER_FK1 (s_nationkey)` (IndexFullScan
/// of the int-handle table: the key holds `s_suppkey`). The customer, lineitem and nation
/// scans carry no pushed work.
fn q05() -> Result<Vec<Task>> {
    let o = Scan::new("orders", &["o_orderkey", "o_custkey", "o_orderdate"])?;
    let s = Scan::new("supplier", &["s_nationkey", "s_suppkey"])?;
    let od = o.c("o_orderdate");
    Ok(vec![
        rows_task(
            "q05_orders",
            &o,
            Handles(1, 4000),
            vec![cmp(Ge, od.clone(), date("1994-01-01")?), cmp(Lt, od, date("1995-01-01")?)],
            "SELECT o_orderkey, o_custkey, o_orderdate FROM orders \
             WHERE o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1995-01-01' \
             AND o_orderkey >= 1 AND o_orderkey < 4000",
        ),
        region("q05", "ASIA")?,
        rows_task(
            "q05_supplier_index",
            &s,
            IndexFull(1),
            vec![],
            "SELECT s_nationkey, s_suppkey FROM supplier",
        ),
    ])
}

/// Q6, forecasting revenue change: lineitem's Selection and partial SUM (all the work).
fn q06() -> Result<Vec<Task>> {
    let s = Scan::new("lineitem", &["l_quantity", "l_extendedprice", "l_discount", "l_shipdate"])?;
    let sd = s.c("l_shipdate");
    let conds = vec![
        cmp(Ge, sd.clone(), date("1994-01-01")?),
        cmp(Lt, sd, date("1995-01-01")?),
        cmp(Ge, s.c("l_discount"), dec("0.05")?),
        cmp(Le, s.c("l_discount"), dec("0.07")?),
        cmp(Lt, s.c("l_quantity"), dec("24")?),
    ];
    let revenue = arith(S::MultiplyDecimal, s.c("l_extendedprice"), s.c("l_discount"));
    let sql = "SELECT SUM(l_extendedprice * l_discount) FROM lineitem \
               WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
               AND l_discount >= 0.05 AND l_discount <= 0.07 AND l_quantity < 24";
    Ok(vec![agg_task("q06_lineitem", &s, Table, conds, false, vec![], vec![(Sum, revenue)], sql)])
}

/// Q7, volume shipping: lineitem's two-year BETWEEN (one region) and nation's
/// `n_name IN ('FRANCE', 'GERMANY')`, which TiDB derives from the OR of the two nation
/// pairs for each nation alias. `EXTRACT(YEAR …)` and the aggregation are above the joins.
fn q07() -> Result<Vec<Task>> {
    let l = Scan::new(
        "lineitem",
        &["l_orderkey", "l_suppkey", "l_extendedprice", "l_discount", "l_shipdate"],
    )?;
    let n = Scan::new("nation", &["n_nationkey", "n_name"])?;
    let sd = l.c("l_shipdate");
    Ok(vec![
        rows_task(
            "q07_lineitem",
            &l,
            Handles(1, 1000),
            vec![between(&sd, date("1995-01-01")?, date("1996-12-31")?)],
            "SELECT l_orderkey, l_suppkey, l_extendedprice, l_discount, l_shipdate FROM lineitem \
             WHERE l_shipdate >= DATE '1995-01-01' AND l_shipdate <= DATE '1996-12-31' \
             AND l_orderkey >= 1 AND l_orderkey < 1000",
        ),
        rows_task(
            "q07_nation",
            &n,
            Table,
            vec![in_str(n.c("n_name"), &["FRANCE", "GERMANY"])],
            "SELECT n_nationkey, n_name FROM nation WHERE n_name IN ('FRANCE', 'GERMANY')",
        ),
    ])
}

/// Q8, national market share: part's type equality, orders' BETWEEN (one region) and
/// region's. The CASE and EXTRACT are above the joins; lineitem, supplier, customer and
/// both nation scans carry no pushed work.
fn q08() -> Result<Vec<Task>> {
    let p = Scan::new("part", &["p_partkey", "p_type"])?;
    let o = Scan::new("orders", &["o_orderkey", "o_custkey", "o_orderdate"])?;
    Ok(vec![
        rows_task(
            "q08_part",
            &p,
            Table,
            vec![cmp(Eq, p.c("p_type"), string("ECONOMY ANODIZED STEEL"))],
            "SELECT p_partkey, p_type FROM part WHERE p_type = 'ECONOMY ANODIZED STEEL'",
        ),
        rows_task(
            "q08_orders",
            &o,
            Handles(1, 4000),
            vec![between(&o.c("o_orderdate"), date("1995-01-01")?, date("1996-12-31")?)],
            "SELECT o_orderkey, o_custkey, o_orderdate FROM orders \
             WHERE o_orderdate >= DATE '1995-01-01' AND o_orderdate <= DATE '1996-12-31' \
             AND o_orderkey >= 1 AND o_orderkey < 4000",
        ),
        region("q08", "AMERICA")?,
    ])
}

/// Q9, product type profit: part's `p_name LIKE '%green%'`. The lineitem, partsupp,
/// orders, supplier and nation scans carry no pushed work (EXTRACT is above the joins).
fn q09() -> Result<Vec<Task>> {
    let p = Scan::new("part", &["p_partkey", "p_name"])?;
    Ok(vec![rows_task(
        "q09_part",
        &p,
        Table,
        vec![like(p.c("p_name"), "%green%")],
        "SELECT p_partkey, p_name FROM part WHERE p_name LIKE '%green%'",
    )])
}

/// Q10, returned items: orders' quarter Selection and lineitem's `l_returnflag = 'R'`
/// (one region). Customer and nation scans carry no pushed work.
fn q10() -> Result<Vec<Task>> {
    let o = Scan::new("orders", &["o_orderkey", "o_custkey", "o_orderdate"])?;
    let l =
        Scan::new("lineitem", &["l_orderkey", "l_extendedprice", "l_discount", "l_returnflag"])?;
    let od = o.c("o_orderdate");
    Ok(vec![
        rows_task(
            "q10_orders",
            &o,
            Table,
            vec![cmp(Ge, od.clone(), date("1993-10-01")?), cmp(Lt, od, date("1994-01-01")?)],
            "SELECT o_orderkey, o_custkey, o_orderdate FROM orders \
             WHERE o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1994-01-01'",
        ),
        rows_task(
            "q10_lineitem",
            &l,
            Handles(1, 1000),
            vec![cmp(Eq, l.c("l_returnflag"), string("R"))],
            "SELECT l_orderkey, l_extendedprice, l_discount, l_returnflag FROM lineitem \
             WHERE l_returnflag = 'R' AND l_orderkey >= 1 AND l_orderkey < 1000",
        ),
    ])
}

/// Q11, important stock: nation's equality (both the query and its HAVING subquery). The
/// partsupp and supplier scans carry no pushed work; the SUM is above the joins.
fn q11() -> Result<Vec<Task>> {
    Ok(vec![nation("q11", "GERMANY")?])
}

/// Q12, shipping modes: lineitem's Selection — `IN` over strings, two column-to-column
/// date comparisons and a receipt-date year — over the whole table. The CASE sums are
/// above the join with orders, whose scan carries no pushed work.
fn q12() -> Result<Vec<Task>> {
    let l = Scan::new(
        "lineitem",
        &["l_orderkey", "l_shipmode", "l_shipdate", "l_commitdate", "l_receiptdate"],
    )?;
    let rd = l.c("l_receiptdate");
    Ok(vec![rows_task(
        "q12_lineitem",
        &l,
        Table,
        vec![
            in_str(l.c("l_shipmode"), &["MAIL", "SHIP"]),
            cmp(Lt, l.c("l_commitdate"), l.c("l_receiptdate")),
            cmp(Lt, l.c("l_shipdate"), l.c("l_commitdate")),
            cmp(Ge, rd.clone(), date("1994-01-01")?),
            cmp(Lt, rd, date("1995-01-01")?),
        ],
        "SELECT l_orderkey, l_shipmode, l_shipdate, l_commitdate, l_receiptdate FROM lineitem \
         WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate \
         AND l_shipdate < l_commitdate AND l_receiptdate >= DATE '1994-01-01' \
         AND l_receiptdate < DATE '1995-01-01'",
    )])
}

/// Q13, customer distribution: the outer join's inner side, orders with
/// `NOT (o_comment LIKE '%special%requests%')` (one region). The customer scan reads the
/// keys only; the COUNTs are above the join.
fn q13() -> Result<Vec<Task>> {
    let o = Scan::new("orders", &["o_orderkey", "o_custkey"])?;
    let full = Scan::new("orders", &["o_orderkey", "o_custkey", "o_comment"])?;
    let cond = not(like(full.c("o_comment"), "%special%requests%"));
    let mut t = rows_task(
        "q13_orders",
        &full,
        Handles(1, 2000),
        vec![cond],
        "SELECT o_orderkey, o_custkey FROM orders \
         WHERE NOT (o_comment LIKE '%special%requests%') AND o_orderkey >= 1 AND o_orderkey < 2000",
    );
    // Only the keys leave the task (the comment is read for the condition).
    t.dag.output_offsets = vec![0, 1];
    t.outputs = o.kinds();
    Ok(vec![t])
}

/// Q14, promotion effect: lineitem's month Selection over the whole table. The CASE over
/// `p_type LIKE 'PROMO%'` is above the join with part, whose scan carries no pushed work.
fn q14() -> Result<Vec<Task>> {
    let l = Scan::new("lineitem", &["l_partkey", "l_extendedprice", "l_discount", "l_shipdate"])?;
    let sd = l.c("l_shipdate");
    Ok(vec![rows_task(
        "q14_lineitem",
        &l,
        Table,
        vec![cmp(Ge, sd.clone(), date("1995-09-01")?), cmp(Lt, sd, date("1995-10-01")?)],
        "SELECT l_partkey, l_extendedprice, l_discount, l_shipdate FROM lineitem \
         WHERE l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'",
    )])
}

/// Q15, top supplier: the revenue view — lineitem's quarter Selection and a partial
/// HashAgg of `SUM(l_extendedprice * (1 - l_discount))` by `l_suppkey` (TiDB plans the view
/// twice, for the query and for the MAX subquery; both tasks are this one). The supplier
/// scan carries no pushed work.
fn q15() -> Result<Vec<Task>> {
    let l = Scan::new("lineitem", &["l_suppkey", "l_extendedprice", "l_discount", "l_shipdate"])?;
    let sd = l.c("l_shipdate");
    let conds = vec![cmp(Ge, sd.clone(), date("1996-01-01")?), cmp(Lt, sd, date("1996-04-01")?)];
    let revenue = disc_price(l.c("l_extendedprice"), l.c("l_discount"))?;
    Ok(vec![agg_task(
        "q15_lineitem",
        &l,
        Table,
        conds,
        false,
        vec![l.c("l_suppkey")],
        vec![(Sum, revenue)],
        "SELECT SUM(l_extendedprice * (1 - l_discount)), l_suppkey FROM lineitem \
         WHERE l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1996-04-01' \
         GROUP BY l_suppkey",
    )])
}

/// Q16, parts/supplier relationship: part's `<>`, NOT LIKE and `IN` over integers;
/// supplier's `s_comment LIKE '%Customer%Complaints%'` (the NOT IN subquery); and partsupp
/// read through its covering index `PARTSUPP_FK1 (ps_suppkey)` of the clustered table (the
/// key holds the common handle `(ps_partkey, ps_suppkey)`), one region of it.
fn q16() -> Result<Vec<Task>> {
    let p = Scan::new("part", &["p_partkey", "p_brand", "p_type", "p_size"])?;
    let s = Scan::new("supplier", &["s_suppkey", "s_comment"])?;
    let ps = Scan::new("partsupp", &["ps_suppkey", "ps_partkey"])?;
    Ok(vec![
        rows_task(
            "q16_part",
            &p,
            Table,
            vec![
                cmp(Ne, p.c("p_brand"), string("Brand#45")),
                not(like(p.c("p_type"), "MEDIUM POLISHED%")),
                in_int(p.c("p_size"), &[49, 14, 23, 45, 19, 3, 36, 9]),
            ],
            "SELECT p_partkey, p_brand, p_type, p_size FROM part \
             WHERE p_brand <> 'Brand#45' AND NOT (p_type LIKE 'MEDIUM POLISHED%') \
             AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)",
        ),
        rows_task(
            "q16_supplier",
            &s,
            Table,
            vec![like(s.c("s_comment"), "%Customer%Complaints%")],
            "SELECT s_suppkey, s_comment FROM supplier WHERE s_comment LIKE '%Customer%Complaints%'",
        ),
        rows_task(
            "q16_partsupp_index",
            &ps,
            Index(2, 1, 6),
            vec![],
            "SELECT ps_suppkey, ps_partkey FROM partsupp WHERE ps_suppkey >= 1 AND ps_suppkey < 6",
        ),
    ])
}

/// Q17, small-quantity-order revenue: part's brand and container equalities, and the
/// decorrelated `AVG(l_quantity) … GROUP BY l_partkey` as a partial HashAgg over lineitem
/// (AVG as COUNT and SUM). The second lineitem scan (the outer side) carries no pushed work.
fn q17() -> Result<Vec<Task>> {
    let p = Scan::new("part", &["p_partkey", "p_brand", "p_container"])?;
    let l = Scan::new("lineitem", &["l_partkey", "l_quantity"])?;
    Ok(vec![
        rows_task(
            "q17_part",
            &p,
            Table,
            vec![
                cmp(Eq, p.c("p_brand"), string("Brand#23")),
                cmp(Eq, p.c("p_container"), string("MED BOX")),
            ],
            "SELECT p_partkey, p_brand, p_container FROM part \
             WHERE p_brand = 'Brand#23' AND p_container = 'MED BOX'",
        ),
        agg_task(
            "q17_lineitem",
            &l,
            Table,
            vec![],
            false,
            vec![l.c("l_partkey")],
            vec![(Avg, l.c("l_quantity"))],
            "SELECT COUNT(l_quantity), SUM(l_quantity), l_partkey FROM lineitem GROUP BY l_partkey",
        ),
    ])
}

/// Q18, large volume customer: the IN subquery `SUM(l_quantity) … GROUP BY l_orderkey` as
/// a partial StreamAgg over lineitem's clustered primary key (read in `l_orderkey` order;
/// one region). The HAVING is above it; customer, orders and the outer lineitem scan carry
/// no pushed work.
fn q18() -> Result<Vec<Task>> {
    let l = Scan::new("lineitem", &["l_orderkey", "l_quantity"])?;
    Ok(vec![agg_task(
        "q18_lineitem",
        &l,
        Handles(1, 3000),
        vec![],
        true,
        vec![l.c("l_orderkey")],
        vec![(Sum, l.c("l_quantity"))],
        "SELECT SUM(l_quantity), l_orderkey FROM lineitem \
         WHERE l_orderkey >= 1 AND l_orderkey < 3000 GROUP BY l_orderkey",
    )])
}

/// Q19, discounted revenue: the per-table conditions TiDB extracts from the OR of three
/// (part, lineitem) branches — lineitem's common `l_shipmode IN` and `l_shipinstruct =`
/// with the OR of the quantity bands (one region), and part's OR of brand, container `IN`
/// and size bands with the common `p_size >= 1`.
fn q19() -> Result<Vec<Task>> {
    let l = Scan::new(
        "lineitem",
        &[
            "l_partkey",
            "l_quantity",
            "l_extendedprice",
            "l_discount",
            "l_shipinstruct",
            "l_shipmode",
        ],
    )?;
    let p = Scan::new("part", &["p_partkey", "p_brand", "p_size", "p_container"])?;
    let q = l.c("l_quantity");
    let band = |lo: &str, hi: &str| -> Result<_> { Ok(between(&q, dec(lo)?, dec(hi)?)) };
    let lcond = vec![
        in_str(l.c("l_shipmode"), &["AIR", "AIR REG"]),
        cmp(Eq, l.c("l_shipinstruct"), string("DELIVER IN PERSON")),
        or(vec![band("1", "11")?, band("10", "20")?, band("20", "30")?]),
    ];
    let branch = |brand: &str, containers: &[&str], size: i64| {
        and(
            and(cmp(Eq, p.c("p_brand"), string(brand)), in_str(p.c("p_container"), containers)),
            cmp(Le, p.c("p_size"), int(size)),
        )
    };
    let pcond = vec![
        cmp(Ge, p.c("p_size"), int(1)),
        or(vec![
            branch("Brand#12", &["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 5),
            branch("Brand#23", &["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10),
            branch("Brand#34", &["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 15),
        ]),
    ];
    Ok(vec![
        rows_task(
            "q19_lineitem",
            &l,
            Handles(1, 10000),
            lcond,
            "SELECT l_partkey, l_quantity, l_extendedprice, l_discount, l_shipinstruct, \
             l_shipmode FROM lineitem WHERE l_shipmode IN ('AIR', 'AIR REG') \
             AND l_shipinstruct = 'DELIVER IN PERSON' \
             AND ((l_quantity >= 1 AND l_quantity <= 11) OR (l_quantity >= 10 AND l_quantity <= 20) \
             OR (l_quantity >= 20 AND l_quantity <= 30)) \
             AND l_orderkey >= 1 AND l_orderkey < 10000",
        ),
        rows_task(
            "q19_part",
            &p,
            Table,
            pcond,
            "SELECT p_partkey, p_brand, p_size, p_container FROM part WHERE p_size >= 1 AND (\
             (p_brand = 'Brand#12' AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') \
             AND p_size <= 5) OR \
             (p_brand = 'Brand#23' AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') \
             AND p_size <= 10) OR \
             (p_brand = 'Brand#34' AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') \
             AND p_size <= 15))",
        ),
    ])
}

/// Q20, potential part promotion: part's `p_name LIKE 'forest%'`, the decorrelated
/// `SUM(l_quantity) … GROUP BY l_partkey, l_suppkey` over a year of lineitem as a partial
/// HashAgg (one region), and nation's equality. The supplier and partsupp scans carry no
/// pushed work.
fn q20() -> Result<Vec<Task>> {
    let p = Scan::new("part", &["p_partkey", "p_name"])?;
    let l = Scan::new("lineitem", &["l_partkey", "l_suppkey", "l_quantity", "l_shipdate"])?;
    let sd = l.c("l_shipdate");
    Ok(vec![
        rows_task(
            "q20_part",
            &p,
            Table,
            vec![like(p.c("p_name"), "forest%")],
            "SELECT p_partkey, p_name FROM part WHERE p_name LIKE 'forest%'",
        ),
        agg_task(
            "q20_lineitem",
            &l,
            Handles(1, 5000),
            vec![cmp(Ge, sd.clone(), date("1994-01-01")?), cmp(Lt, sd, date("1995-01-01")?)],
            false,
            vec![l.c("l_partkey"), l.c("l_suppkey")],
            vec![(Sum, l.c("l_quantity"))],
            "SELECT SUM(l_quantity), l_partkey, l_suppkey FROM lineitem \
             WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
             AND l_orderkey >= 1 AND l_orderkey < 5000 GROUP BY l_partkey, l_suppkey",
        ),
        nation("q20", "CANADA")?,
    ])
}

/// Q21, suppliers who kept orders waiting: lineitem's `l_receiptdate > l_commitdate`
/// (the outer l1 and the NOT EXISTS l3; one region), orders' `o_orderstatus = 'F'` (one
/// region) and nation's equality. The EXISTS l2 scan and supplier carry no pushed work.
fn q21() -> Result<Vec<Task>> {
    let l = Scan::new("lineitem", &["l_orderkey", "l_suppkey", "l_commitdate", "l_receiptdate"])?;
    let o = Scan::new("orders", &["o_orderkey", "o_orderstatus"])?;
    Ok(vec![
        rows_task(
            "q21_lineitem",
            &l,
            Handles(1, 1000),
            vec![cmp(Gt, l.c("l_receiptdate"), l.c("l_commitdate"))],
            "SELECT l_orderkey, l_suppkey, l_commitdate, l_receiptdate FROM lineitem \
             WHERE l_receiptdate > l_commitdate AND l_orderkey >= 1 AND l_orderkey < 1000",
        ),
        rows_task(
            "q21_orders",
            &o,
            Handles(1, 4000),
            vec![cmp(Eq, o.c("o_orderstatus"), string("F"))],
            "SELECT o_orderkey, o_orderstatus FROM orders \
             WHERE o_orderstatus = 'F' AND o_orderkey >= 1 AND o_orderkey < 4000",
        ),
        nation("q21", "SAUDI ARABIA")?,
    ])
}

/// Q22, global sales opportunity: the uncorrelated scalar subquery — customer's
/// `c_acctbal > 0.00 AND SUBSTRING(c_phone, 1, 2) IN (…)` with a partial AVG (COUNT and
/// SUM) — and the outer customer Selection on the country codes (TiDB evaluates the
/// scalar subquery before pushing the outer one, which then also carries
/// `c_acctbal > <that average>`; not reproduced here). The NOT EXISTS side reads orders
/// through its covering index `ORDERS_FK1 (o_custkey)` (one region: `o_custkey < 100`).
fn q22() -> Result<Vec<Task>> {
    const CODES: [&str; 7] = ["13", "31", "23", "29", "30", "18", "17"];
    let codes = "('13', '31', '23', '29', '30', '18', '17')";
    let c = Scan::new("customer", &["c_custkey", "c_phone", "c_acctbal"])?;
    let o = Scan::new("orders", &["o_custkey", "o_orderkey"])?;
    let code = || in_str(substring(c.c("c_phone"), 1, 2), &CODES);
    Ok(vec![
        agg_task(
            "q22_customer_avg",
            &c,
            Table,
            vec![cmp(Gt, c.c("c_acctbal"), dec("0.00")?), code()],
            false,
            vec![],
            vec![(Avg, c.c("c_acctbal"))],
            &format!(
                "SELECT COUNT(c_acctbal), SUM(c_acctbal) FROM customer \
                 WHERE c_acctbal > 0.00 AND SUBSTRING(c_phone, 1, 2) IN {codes}"
            ),
        ),
        rows_task(
            "q22_customer",
            &c,
            Table,
            vec![code()],
            &format!(
                "SELECT c_custkey, c_phone, c_acctbal FROM customer \
                 WHERE SUBSTRING(c_phone, 1, 2) IN {codes}"
            ),
        ),
        rows_task(
            "q22_orders_index",
            &o,
            Index(1, 1, 100),
            vec![],
            "SELECT o_custkey, o_orderkey FROM orders WHERE o_custkey >= 1 AND o_custkey < 100",
        ),
    ])
}
