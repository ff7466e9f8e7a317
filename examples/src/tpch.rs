//! TPC-H tables stored as TiDB stores them, loaded through a storage-node shard.

use std::collections::VecDeque;

use anyhow::{Context, Result, bail};
use rcop_datum::{Decimal, KeyspaceId, Time, TimeType, key, row::RowEncoder};
use rcop_snap::Shard;

pub mod pushdowns;
pub mod schema;

/// Table id of `lineitem` (region 101 … lineitem 108, in the spec's table order).
pub const LINEITEM_TABLE_ID: i64 = 108;

/// Rows written between two flushes while loading (each flush makes one L0 file).
pub const ROWS_PER_FLUSH: u64 = 20_000;

/// Rows committed with one commit timestamp.
const ROWS_PER_TXN: u64 = 1_000;

/// What a load wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadReport {
    /// Rows written.
    pub rows: u64,
    /// Rows left in the memtable (the newest ones).
    pub memtable_rows: u64,
    /// The last commit ts used; reads at or above it see every row.
    pub max_commit_ts: u64,
    /// Secondary index entries written (go-tpc's schema only).
    pub index_entries: u64,
}

/// About how many rows TPC-H `table` has at `scale_factor` (the SF 1 counts scaled; `nation`
/// and `region` do not scale): the total of a loading progress line.
pub fn estimated_rows(table: &str, scale_factor: f64) -> Option<u64> {
    let at_sf1: f64 = match table {
        "lineitem" => 6_001_215.0,
        "orders" => 1_500_000.0,
        "partsupp" => 800_000.0,
        "part" => 200_000.0,
        "customer" => 150_000.0,
        "supplier" => 10_000.0,
        "nation" => return Some(25),
        "region" => return Some(5),
        _ => return None,
    };
    Some((at_sf1 * scale_factor).round() as u64)
}

/// The API v2 transaction-key prefix of `keyspace`: `'x'` + 3-byte id.
///
/// # Errors
///
/// A keyspace id that does not fit 3 bytes.
pub fn keyspace_prefix(keyspace: u32) -> Result<Vec<u8>> {
    Ok(KeyspaceId(keyspace).txn_prefix().context("keyspace id")?.to_vec())
}

/// The record key of `handle` in `table` under `keyspace`'s prefix.
pub fn record_key(prefix: &[u8], table: i64, handle: i64) -> Vec<u8> {
    let mut k = prefix.to_vec();
    key::encode_record_key(&mut k, table, handle);
    k
}

/// `[start, end)` of every record of `table`.
pub fn table_record_range(prefix: &[u8], table: i64) -> (Vec<u8>, Vec<u8>) {
    let mut start = prefix.to_vec();
    key::encode_record_prefix(&mut start, table);
    let end = key::prefix_next(&start);
    (start, end)
}

fn cents(v: i64) -> Result<Decimal> {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100).parse().context("decimal")
}

fn date(t: tpchgen::dates::TPCHDate) -> Result<Time> {
    let s = t.to_string();
    let mut parts = s.split('-').map(str::parse::<u32>);
    let (Some(Ok(y)), Some(Ok(m)), Some(Ok(d))) = (parts.next(), parts.next(), parts.next()) else {
        bail!("unexpected TPC-H date {s:?}");
    };
    Time::from_parts(y, m, d, 0, 0, 0, 0, TimeType::Date, 0).context("date")
}

/// Table id of each TPC-H table as TiDB would assign them here: region 101, nation 102,
/// part 103, supplier 104, partsupp 105, customer 106, orders 107, lineitem 108.
pub fn table_id(table: &str) -> Option<i64> {
    Some(match table {
        "region" => 101,
        "nation" => 102,
        "part" => 103,
        "supplier" => 104,
        "partsupp" => 105,
        "customer" => 106,
        "orders" => 107,
        "lineitem" => LINEITEM_TABLE_ID,
        _ => return None,
    })
}

/// Writes rows (each a group of pairs: the record and its index entries) through a shard,
/// keeping the newest `tail` rows back so that they land in the memtable after the last
/// flush.
struct Writer<'a, P> {
    shard: &'a Shard,
    tail: usize,
    held: VecDeque<Vec<(Vec<u8>, Vec<u8>)>>,
    written: u64,
    index_entries: u64,
    ts: u64,
    progress: P,
}

impl<P: FnMut(u64)> Writer<'_, P> {
    async fn push(&mut self, row: Vec<(Vec<u8>, Vec<u8>)>) -> Result<()> {
        self.held.push_back(row);
        if self.held.len() > self.tail
            && let Some(row) = self.held.pop_front()
        {
            self.put(&row)?;
            if self.written.is_multiple_of(ROWS_PER_FLUSH) {
                self.shard.flush().await.context("flush")?;
                (self.progress)(self.written);
            }
        }
        Ok(())
    }

    fn put(&mut self, row: &[(Vec<u8>, Vec<u8>)]) -> Result<()> {
        if self.written.is_multiple_of(ROWS_PER_TXN) {
            self.ts += 2;
        }
        for (k, v) in row {
            self.shard.put(k, self.ts - 1, self.ts, v).context("shard put")?;
        }
        self.written += 1;
        self.index_entries += row.len().saturating_sub(1) as u64;
        Ok(())
    }

    async fn finish(mut self) -> Result<LoadReport> {
        self.shard.flush().await.context("flush")?;
        tracing::info!(rows = self.written, "compacting the L0 files into L1");
        self.shard.compact(0).await.context("compaction")?;
        let memtable_rows = self.held.len() as u64;
        while let Some(row) = self.held.pop_front() {
            self.put(&row)?;
        }
        (self.progress)(self.written);
        Ok(LoadReport {
            rows: self.written,
            memtable_rows,
            max_commit_ts: self.ts,
            index_entries: self.index_entries,
        })
    }
}

fn encoded(enc: &mut RowEncoder) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    enc.finish(&mut v).context("row encoding")?;
    Ok(v)
}

fn dec(enc: &mut RowEncoder, id: i64, cents_value: i64) -> Result<()> {
    enc.decimal(id, &cents(cents_value)?, 15, 2).context("decimal column")?;
    Ok(())
}

/// How [`load_table_with`] stores the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Schema {
    /// Tables without a primary key: `_tidb_rowid` handles from 1 in generation order, every
    /// column in the row value, no index entries (what the example DAGs scan).
    #[default]
    RowId,
    /// go-tpc's schema as TiDB stores it ([`schema`]): primary-key handles (clustered common
    /// handles for `partsupp` and `lineitem`) and the foreign-key index entries.
    #[non_exhaustive]
    GoTpc {
        /// Collation id of every CHAR and VARCHAR column: `-46` (`utf8mb4_bin`, TiDB's
        /// default) or a `_ci` one such as `-45` (`utf8mb4_general_ci`); index keys of
        /// string columns hold its sort key.
        string_collation: i32,
        /// Lower-case the ASCII letters of every string value of every second row (rows
        /// 2, 4, … in generation order), so that a `_ci` collation groups and compares
        /// differently from a binary one.
        lower_even_rows: bool,
    },
}

/// What [`load_table_with`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The table layout.
    pub schema: Schema,
}

impl LoadOptions {
    /// go-tpc's schema with `utf8mb4_bin` strings.
    pub fn go_tpc() -> Self {
        LoadOptions { schema: Schema::GoTpc { string_collation: -46, lower_even_rows: false } }
    }

    /// go-tpc's schema, the `_ci` variant: strings of collation `collation` (e.g. `-45`,
    /// `utf8mb4_general_ci`) with every second row's strings lower-cased.
    pub fn go_tpc_ci(collation: i32) -> Self {
        LoadOptions { schema: Schema::GoTpc { string_collation: collation, lower_even_rows: true } }
    }
}

/// Every key and value of `table` at `scale_factor` in go-tpc's schema (`opts.schema` must
/// be [`Schema::GoTpc`]) under `keyspace`'s prefix, in generation order: per row the record,
/// then its index entries. What [`load_table_with`] writes, for tests over an in-memory
/// store.
///
/// # Errors
///
/// An unknown table, a scale factor ≤ 0, the row-id schema, a bad collation.
pub fn go_tpc_entries(
    keyspace: u32,
    table: &str,
    scale_factor: f64,
    opts: &LoadOptions,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let Schema::GoTpc { string_collation, lower_even_rows } = opts.schema else {
        bail!("go_tpc_entries needs the go-tpc schema");
    };
    if !(scale_factor > 0.0 && scale_factor.is_finite()) {
        bail!("scale-factor must be positive, got {scale_factor}");
    }
    let t = schema::table(table).with_context(|| format!("unknown TPC-H table {table:?}"))?;
    let prefix = keyspace_prefix(keyspace)?;
    let mut out = Vec::new();
    for (n, row) in schema::rows(table, scale_factor)?.enumerate() {
        let mut row = row?;
        if lower_even_rows && n % 2 == 1 {
            schema::lower_strings(&mut row);
        }
        schema::row_entries(t, &prefix, &row, string_collation, &mut out)?;
    }
    Ok(out)
}

/// [`load_table_with`] in the row-id schema.
///
/// # Errors
///
/// As [`load_table_with`].
pub async fn load_table(
    shard: &Shard,
    keyspace: u32,
    table: &str,
    scale_factor: f64,
    memtable_tail: u64,
    first_ts: u64,
    progress: impl FnMut(u64),
) -> Result<LoadReport> {
    let opts = LoadOptions::default();
    load_table_with(shard, keyspace, table, scale_factor, memtable_tail, first_ts, &opts, progress)
        .await
}

/// Generates `table` at `scale_factor` with `tpchgen` and writes it through `shard`:
/// row format v2, column ids 1..n in the spec's column order, keys under `keyspace`'s API
/// v2 prefix, handles and indexes as `opts.schema` says. Rows are committed in batches of
/// 1,000 (a row with its index entries) with increasing timestamps after `first_ts`,
/// flushed to L0 files every [`ROWS_PER_FLUSH`] rows and compacted into L1 at the end,
/// except the newest `memtable_tail` rows, which stay in the memtable. `progress` gets the
/// rows written so far.
///
/// # Errors
///
/// An unknown table, a scale factor ≤ 0, a bad collation, shard errors.
#[expect(clippy::too_many_arguments, reason = "the load's knobs, each a plain value")]
pub async fn load_table_with(
    shard: &Shard,
    keyspace: u32,
    table: &str,
    scale_factor: f64,
    memtable_tail: u64,
    first_ts: u64,
    opts: &LoadOptions,
    progress: impl FnMut(u64),
) -> Result<LoadReport> {
    use tpchgen::generators as g;
    let Some(table_id) = table_id(table) else {
        bail!("unknown TPC-H table {table:?}");
    };
    if !(scale_factor > 0.0 && scale_factor.is_finite()) {
        bail!("scale-factor must be positive, got {scale_factor}");
    }
    let sf = scale_factor;
    let mut w = Writer {
        shard,
        tail: usize::try_from(memtable_tail).unwrap_or(usize::MAX),
        held: VecDeque::new(),
        written: 0,
        index_entries: 0,
        ts: first_ts,
        progress,
    };
    if let Schema::GoTpc { string_collation, lower_even_rows } = opts.schema {
        let t = schema::table(table).context("table")?;
        let prefix = keyspace_prefix(keyspace)?;
        for (n, row) in schema::rows(table, sf)?.enumerate() {
            let mut row = row?;
            if lower_even_rows && n % 2 == 1 {
                schema::lower_strings(&mut row);
            }
            let mut out = Vec::with_capacity(1 + t.indexes.len());
            schema::row_entries(t, &prefix, &row, string_collation, &mut out)?;
            w.push(out).await?;
        }
        return w.finish().await;
    }
    let prefix = keyspace_prefix(keyspace)?;
    let mut handle = 0;
    let mut record = |v: Vec<u8>| {
        handle += 1;
        vec![(record_key(&prefix, table_id, handle), v)]
    };
    let mut e = RowEncoder::new();
    match table {
        "region" => {
            for r in g::RegionGenerator::new(sf, 1, 1).iter() {
                e.int(1, r.r_regionkey)
                    .bytes(2, r.r_name.as_bytes())
                    .bytes(3, r.r_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        "nation" => {
            for n in g::NationGenerator::new(sf, 1, 1).iter() {
                e.int(1, n.n_nationkey).bytes(2, n.n_name.as_bytes()).int(3, n.n_regionkey);
                e.bytes(4, n.n_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        "part" => {
            for p in g::PartGenerator::new(sf, 1, 1).iter() {
                e.int(1, p.p_partkey).bytes(2, p.p_name.to_string().as_bytes());
                e.bytes(3, p.p_mfgr.to_string().as_bytes())
                    .bytes(4, p.p_brand.to_string().as_bytes());
                e.bytes(5, p.p_type.as_bytes()).int(6, i64::from(p.p_size));
                e.bytes(7, p.p_container.as_bytes());
                dec(&mut e, 8, p.p_retailprice.0)?;
                e.bytes(9, p.p_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        "supplier" => {
            for s in g::SupplierGenerator::new(sf, 1, 1).iter() {
                e.int(1, s.s_suppkey).bytes(2, s.s_name.to_string().as_bytes());
                e.bytes(3, s.s_address.to_string().as_bytes()).int(4, s.s_nationkey);
                e.bytes(5, s.s_phone.to_string().as_bytes());
                dec(&mut e, 6, s.s_acctbal.0)?;
                e.bytes(7, s.s_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        "partsupp" => {
            for ps in g::PartSuppGenerator::new(sf, 1, 1).iter() {
                e.int(1, ps.ps_partkey).int(2, ps.ps_suppkey).int(3, i64::from(ps.ps_availqty));
                dec(&mut e, 4, ps.ps_supplycost.0)?;
                e.bytes(5, ps.ps_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        "customer" => {
            for c in g::CustomerGenerator::new(sf, 1, 1).iter() {
                e.int(1, c.c_custkey).bytes(2, c.c_name.to_string().as_bytes());
                e.bytes(3, c.c_address.to_string().as_bytes()).int(4, c.c_nationkey);
                e.bytes(5, c.c_phone.to_string().as_bytes());
                dec(&mut e, 6, c.c_acctbal.0)?;
                e.bytes(7, c.c_mktsegment.as_bytes()).bytes(8, c.c_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        "orders" => {
            for o in g::OrderGenerator::new(sf, 1, 1).iter() {
                e.int(1, o.o_orderkey).int(2, o.o_custkey);
                e.bytes(3, o.o_orderstatus.to_string().as_bytes());
                dec(&mut e, 4, o.o_totalprice.0)?;
                e.time(5, date(o.o_orderdate)?).bytes(6, o.o_orderpriority.as_bytes());
                e.bytes(7, o.o_clerk.to_string().as_bytes()).int(8, i64::from(o.o_shippriority));
                e.bytes(9, o.o_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
        _ => {
            for l in g::LineItemGenerator::new(sf, 1, 1).iter() {
                e.int(1, l.l_orderkey).int(2, l.l_partkey).int(3, l.l_suppkey);
                e.int(4, i64::from(l.l_linenumber));
                dec(&mut e, 5, l.l_quantity * 100)?;
                dec(&mut e, 6, l.l_extendedprice.0)?;
                dec(&mut e, 7, l.l_discount.0)?;
                dec(&mut e, 8, l.l_tax.0)?;
                e.bytes(9, l.l_returnflag.as_bytes()).bytes(10, l.l_linestatus.as_bytes());
                e.time(11, date(l.l_shipdate)?)
                    .time(12, date(l.l_commitdate)?)
                    .time(13, date(l.l_receiptdate)?);
                e.bytes(14, l.l_shipinstruct.as_bytes())
                    .bytes(15, l.l_shipmode.as_bytes())
                    .bytes(16, l.l_comment.as_bytes());
                w.push(record(encoded(&mut e)?)).await?;
            }
        }
    }
    w.finish().await
}

#[cfg(test)]
mod tests {
    use rcop_snap::{PairBuf, ShardConfig};

    use super::*;

    #[tokio::test]
    async fn every_table_loads_with_the_spec_row_counts() {
        let prefix = keyspace_prefix(1).unwrap();
        let end = keyspace_prefix(2).unwrap();
        let shard = Shard::new(ShardConfig::new(1, prefix.clone(), end, 4).unwrap()).unwrap();
        let mut ts = 100;
        // Scale factor 0.001: the spec's cardinalities scaled (region and nation are fixed).
        for (table, rows) in [
            ("region", 5),
            ("nation", 25),
            ("supplier", 10),
            ("customer", 150),
            ("part", 200),
            ("partsupp", 800),
            ("orders", 1500),
        ] {
            let report = load_table(&shard, 1, table, 0.001, 7, ts, |_| {}).await.unwrap();
            assert_eq!(report.rows, rows, "{table}");
            assert_eq!(report.memtable_rows, 7.min(rows), "{table}");
            ts = report.max_commit_ts + 10;
            let (start, end) = table_record_range(&prefix, table_id(table).unwrap());
            let snap = shard.snapshot();
            let mut scanner = snap.scanner(ts);
            scanner.start(&start, &end, false).unwrap();
            let mut out = PairBuf::new();
            scanner.next_batch(usize::MAX, &mut out).unwrap();
            assert_eq!(out.len() as u64, rows, "{table} rows readable");
            assert_eq!(out.get(0).unwrap().0, record_key(&prefix, table_id(table).unwrap(), 1));
            // Every value is a row-format-v2 record with the table's column count.
            let (_, v) = out.get(0).unwrap();
            assert_eq!(v.first(), Some(&128u8), "{table}: row format v2");
        }
        // Only the last table's tail is still in the memtable; the rest was flushed.
        assert_eq!(shard.stats().mem_versions, 7);
        assert!(shard.stats().level_tables[0] >= 1);
        assert!(load_table(&shard, 1, "nope", 1.0, 0, ts, |_| {}).await.is_err());
        assert!(load_table(&shard, 1, "region", 0.0, 0, ts, |_| {}).await.is_err());
    }
}
