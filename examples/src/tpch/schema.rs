//! The TPC-H tables as go-tpc creates them in TiDB (`tpch/ddl.go`), and the keys and values
//! TiDB writes for one row: the record, and an entry per secondary index.
//!
//! With TiDB's default `tidb_enable_clustered_index = ON`: a single BIGINT primary key is
//! the int handle (`PKIsHandle`, no index entries, the column left out of the row value);
//! the composite keys of `partsupp` and `lineitem` are clustered common handles (index id 1
//! is `PRIMARY`, which has no entries of its own; their BIGINT columns are left out of the
//! row value as TiDB's `CanSkip` does, the scan reads them from the key). Each foreign key
//! gets an index unless an existing index starts with its columns (as MySQL and TiDB do):
//! `PARTSUPP_FK2 (ps_partkey)` and `LINEITEM_FK1 (l_orderkey)` are covered by the primary
//! keys. Index values are those of new-collation TiDB: the old layout (`"0"`) for an
//! int-handle table's non-unique index without restored data, the version 1 layout
//! (`[0, 125, 1]`, restored data appended when needed) for a clustered table's index.

use anyhow::{Context, Result, bail};
use rcop_datum::index::{IndexValueOptions, encode_index_value_v0, encode_index_value_v1};
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, Decimal, Mode, Time, TimeType, key};
use rcop_exec::Collation;

/// A column's SQL type in go-tpc's DDL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// BIGINT.
    Int,
    /// DECIMAL(15, 2).
    Dec,
    /// DATE.
    Date,
    /// CHAR(n).
    Char(i32),
    /// VARCHAR(n).
    Varchar(i32),
}

impl Kind {
    /// True for CHAR and VARCHAR.
    pub fn is_string(self) -> bool {
        matches!(self, Kind::Char(_) | Kind::Varchar(_))
    }
}

/// A secondary index: TiDB's index id, name and column ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexDef {
    /// Index id.
    pub id: i64,
    /// Name in the DDL.
    pub name: &'static str,
    /// Column ids, in index order.
    pub cols: &'static [i64],
}

/// A table of go-tpc's schema. Column `i` of `cols` has id `i + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableDef {
    /// Table name.
    pub name: &'static str,
    /// Table id.
    pub id: i64,
    /// Column names and types.
    pub cols: &'static [(&'static str, Kind)],
    /// Primary key column ids: one is the int handle, two a clustered common handle.
    pub pk: &'static [i64],
    /// Secondary indexes with entries (the foreign-key indexes).
    pub indexes: &'static [IndexDef],
}

impl TableDef {
    /// The type of column `id`.
    pub fn kind(&self, id: i64) -> Option<Kind> {
        let i = usize::try_from(id.checked_sub(1)?).ok()?;
        self.cols.get(i).map(|c| c.1)
    }

    /// True when the primary key is a clustered common handle.
    pub fn common_handle(&self) -> bool {
        self.pk.len() > 1
    }
}

use Kind::{Char, Date, Dec, Int, Varchar};

const fn ix(id: i64, name: &'static str, cols: &'static [i64]) -> IndexDef {
    IndexDef { id, name, cols }
}

/// go-tpc's eight tables with the ids [`super::table_id`] gives them.
pub const TABLES: &[TableDef] = &[
    TableDef {
        name: "region",
        id: 101,
        cols: &[("r_regionkey", Int), ("r_name", Char(25)), ("r_comment", Varchar(152))],
        pk: &[1],
        indexes: &[],
    },
    TableDef {
        name: "nation",
        id: 102,
        cols: &[
            ("n_nationkey", Int),
            ("n_name", Char(25)),
            ("n_regionkey", Int),
            ("n_comment", Varchar(152)),
        ],
        pk: &[1],
        indexes: &[],
    },
    TableDef {
        name: "part",
        id: 103,
        cols: &[
            ("p_partkey", Int),
            ("p_name", Varchar(55)),
            ("p_mfgr", Char(25)),
            ("p_brand", Char(10)),
            ("p_type", Varchar(25)),
            ("p_size", Int),
            ("p_container", Char(10)),
            ("p_retailprice", Dec),
            ("p_comment", Varchar(23)),
        ],
        pk: &[1],
        indexes: &[],
    },
    TableDef {
        name: "supplier",
        id: 104,
        cols: &[
            ("s_suppkey", Int),
            ("s_name", Char(25)),
            ("s_address", Varchar(40)),
            ("s_nationkey", Int),
            ("s_phone", Char(15)),
            ("s_acctbal", Dec),
            ("s_comment", Varchar(101)),
        ],
        pk: &[1],
        indexes: &[ix(1, "SUPPLIER_FK1", &[4])],
    },
    TableDef {
        name: "partsupp",
        id: 105,
        cols: &[
            ("ps_partkey", Int),
            ("ps_suppkey", Int),
            ("ps_availqty", Int),
            ("ps_supplycost", Dec),
            ("ps_comment", Varchar(199)),
        ],
        pk: &[1, 2],
        indexes: &[ix(2, "PARTSUPP_FK1", &[2])],
    },
    TableDef {
        name: "customer",
        id: 106,
        cols: &[
            ("c_custkey", Int),
            ("c_name", Varchar(25)),
            ("c_address", Varchar(40)),
            ("c_nationkey", Int),
            ("c_phone", Char(15)),
            ("c_acctbal", Dec),
            ("c_mktsegment", Char(10)),
            ("c_comment", Varchar(117)),
        ],
        pk: &[1],
        indexes: &[ix(1, "CUSTOMER_FK1", &[4])],
    },
    TableDef {
        name: "orders",
        id: 107,
        cols: &[
            ("o_orderkey", Int),
            ("o_custkey", Int),
            ("o_orderstatus", Char(1)),
            ("o_totalprice", Dec),
            ("o_orderdate", Date),
            ("o_orderpriority", Char(15)),
            ("o_clerk", Char(15)),
            ("o_shippriority", Int),
            ("o_comment", Varchar(79)),
        ],
        pk: &[1],
        indexes: &[ix(1, "ORDERS_FK1", &[2])],
    },
    TableDef {
        name: "lineitem",
        id: 108,
        cols: &[
            ("l_orderkey", Int),
            ("l_partkey", Int),
            ("l_suppkey", Int),
            ("l_linenumber", Int),
            ("l_quantity", Dec),
            ("l_extendedprice", Dec),
            ("l_discount", Dec),
            ("l_tax", Dec),
            ("l_returnflag", Char(1)),
            ("l_linestatus", Char(1)),
            ("l_shipdate", Date),
            ("l_commitdate", Date),
            ("l_receiptdate", Date),
            ("l_shipinstruct", Char(25)),
            ("l_shipmode", Char(10)),
            ("l_comment", Varchar(44)),
        ],
        pk: &[1, 4],
        indexes: &[ix(2, "LINEITEM_FK2", &[2, 3])],
    },
];

/// The definition of `table`.
pub fn table(name: &str) -> Option<&'static TableDef> {
    TABLES.iter().find(|t| t.name == name)
}

/// One column value of a generated row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    /// BIGINT.
    Int(i64),
    /// DECIMAL(15, 2), in hundredths.
    Dec(i64),
    /// DATE.
    Date(Time),
    /// CHAR or VARCHAR.
    Str(Vec<u8>),
}

fn cents(v: i64) -> Result<Decimal> {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    format!("{sign}{}.{:02}", a / 100, a % 100).parse().context("decimal")
}

fn date(t: tpchgen::dates::TPCHDate) -> Result<Val> {
    let s = t.to_string();
    let mut parts = s.split('-').map(str::parse::<u32>);
    let (Some(Ok(y)), Some(Ok(m)), Some(Ok(d))) = (parts.next(), parts.next(), parts.next()) else {
        bail!("unexpected TPC-H date {s:?}");
    };
    Ok(Val::Date(Time::from_parts(y, m, d, 0, 0, 0, 0, TimeType::Date, 0).context("date")?))
}

fn s(v: impl std::fmt::Display) -> Val {
    Val::Str(v.to_string().into_bytes())
}

/// Generated rows of one table, column `i` of a row holding column id `i + 1`.
pub type Rows = Box<dyn Iterator<Item = Result<Vec<Val>>>>;

/// The rows `tpchgen` generates for `table` at `sf`, in generation order.
///
/// # Errors
///
/// An unknown table.
pub fn rows(table: &str, sf: f64) -> Result<Rows> {
    use Val::Int as I;
    use tpchgen::generators as g;
    let rows: Rows =
        match table {
            "region" => Box::new(
                g::RegionGenerator::new(sf, 1, 1)
                    .into_iter()
                    .map(|r| Ok(vec![I(r.r_regionkey), s(r.r_name), s(r.r_comment)])),
            ),
            "nation" => Box::new(g::NationGenerator::new(sf, 1, 1).into_iter().map(|n| {
                Ok(vec![I(n.n_nationkey), s(n.n_name), I(n.n_regionkey), s(n.n_comment)])
            })),
            "part" => Box::new(g::PartGenerator::new(sf, 1, 1).into_iter().map(|p| {
                Ok(vec![
                    I(p.p_partkey),
                    s(p.p_name),
                    s(p.p_mfgr),
                    s(p.p_brand),
                    s(p.p_type),
                    I(i64::from(p.p_size)),
                    s(p.p_container),
                    Val::Dec(p.p_retailprice.0),
                    s(p.p_comment),
                ])
            })),
            "supplier" => Box::new(g::SupplierGenerator::new(sf, 1, 1).into_iter().map(|r| {
                Ok(vec![
                    I(r.s_suppkey),
                    s(r.s_name),
                    s(r.s_address),
                    I(r.s_nationkey),
                    s(r.s_phone),
                    Val::Dec(r.s_acctbal.0),
                    s(r.s_comment),
                ])
            })),
            "partsupp" => Box::new(g::PartSuppGenerator::new(sf, 1, 1).into_iter().map(|r| {
                Ok(vec![
                    I(r.ps_partkey),
                    I(r.ps_suppkey),
                    I(i64::from(r.ps_availqty)),
                    Val::Dec(r.ps_supplycost.0),
                    s(r.ps_comment),
                ])
            })),
            "customer" => Box::new(g::CustomerGenerator::new(sf, 1, 1).into_iter().map(|c| {
                Ok(vec![
                    I(c.c_custkey),
                    s(c.c_name),
                    s(c.c_address),
                    I(c.c_nationkey),
                    s(c.c_phone),
                    Val::Dec(c.c_acctbal.0),
                    s(c.c_mktsegment),
                    s(c.c_comment),
                ])
            })),
            "orders" => Box::new(g::OrderGenerator::new(sf, 1, 1).into_iter().map(|o| {
                Ok(vec![
                    I(o.o_orderkey),
                    I(o.o_custkey),
                    s(o.o_orderstatus),
                    Val::Dec(o.o_totalprice.0),
                    date(o.o_orderdate)?,
                    s(o.o_orderpriority),
                    s(o.o_clerk),
                    I(i64::from(o.o_shippriority)),
                    s(o.o_comment),
                ])
            })),
            "lineitem" => Box::new(g::LineItemGenerator::new(sf, 1, 1).into_iter().map(|l| {
                Ok(vec![
                    I(l.l_orderkey),
                    I(l.l_partkey),
                    I(l.l_suppkey),
                    I(i64::from(l.l_linenumber)),
                    Val::Dec(l.l_quantity * 100),
                    Val::Dec(l.l_extendedprice.0),
                    Val::Dec(l.l_discount.0),
                    Val::Dec(l.l_tax.0),
                    s(l.l_returnflag),
                    s(l.l_linestatus),
                    date(l.l_shipdate)?,
                    date(l.l_commitdate)?,
                    date(l.l_receiptdate)?,
                    s(l.l_shipinstruct),
                    s(l.l_shipmode),
                    s(l.l_comment),
                ])
            })),
            _ => bail!("unknown TPC-H table {table:?}"),
        };
    Ok(rows)
}

/// Lower-cases the ASCII letters of every string value of `row` (the `_ci` variant's
/// rows with an even number).
pub fn lower_strings(row: &mut [Val]) {
    for v in row {
        if let Val::Str(b) = v {
            b.make_ascii_lowercase();
        }
    }
}

fn put_row_col(enc: &mut RowEncoder, id: i64, v: &Val) -> Result<()> {
    match v {
        Val::Int(x) => {
            enc.int(id, *x);
        }
        Val::Dec(c) => {
            enc.decimal(id, &cents(*c)?, 15, 2).context("decimal column")?;
        }
        Val::Date(t) => {
            enc.time(id, *t);
        }
        Val::Str(b) => {
            enc.bytes(id, b);
        }
    }
    Ok(())
}

/// Appends the key datum of `v` as an index or common-handle key column, with the string
/// collation `coll` (its sort key for a `_ci` one).
fn put_key_datum(out: &mut Vec<u8>, v: &Val, coll: Collation) -> Result<()> {
    let d = match v {
        Val::Int(x) => Datum::Int(*x),
        Val::Dec(c) => Datum::Decimal(cents(*c)?),
        Val::Date(t) => Datum::Time(*t),
        Val::Str(b) => {
            let mut k = Vec::new();
            coll.sort_key(b, &mut k);
            Datum::Bytes(k)
        }
    };
    d.encode(Mode::Key, out).context("key datum")
}

/// Appends every key and value TiDB writes for `row` of `t` (go-tpc's schema): the
/// record, then an entry per secondary index. String columns have collation `coll_id`.
///
/// A `_ci` (or any non-binary) string column in an index stores its sort key in the key
/// and its value in the restored data; a `_bin` CHAR stores itself. go-tpc indexes no
/// string column, so this only matters for indexes added to [`TABLES`].
///
/// # Errors
///
/// A row that does not fit the table, an unknown collation.
pub fn row_entries(
    t: &TableDef,
    prefix: &[u8],
    row: &[Val],
    coll_id: i32,
    out: &mut Vec<(Vec<u8>, Vec<u8>)>,
) -> Result<()> {
    let coll = Collation::from_id(coll_id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let get = |id: i64| -> Result<&Val> {
        usize::try_from(id - 1).ok().and_then(|i| row.get(i)).context("row shorter than table")
    };
    let mut enc = RowEncoder::new();
    for (i, v) in row.iter().enumerate() {
        let id = i64::try_from(i).context("column id")? + 1;
        // TiDB leaves integer primary key columns out of the value: the key holds them.
        if t.pk.contains(&id) && matches!(v, Val::Int(_)) {
            continue;
        }
        put_row_col(&mut enc, id, v)?;
    }
    let mut value = Vec::new();
    enc.finish(&mut value).context("row encoding")?;
    let mut handle = Vec::new();
    let mut rk = prefix.to_vec();
    if t.common_handle() {
        for &id in t.pk {
            put_key_datum(&mut handle, get(id)?, coll)?;
        }
        key::encode_common_handle_record_key(&mut rk, t.id, &handle);
    } else {
        let [pk] = t.pk else { bail!("{}: no primary key", t.name) };
        let Val::Int(h) = get(*pk)? else { bail!("{}: the handle is not an integer", t.name) };
        Datum::Int(*h).encode(Mode::Key, &mut handle).context("handle")?;
        key::encode_record_key(&mut rk, t.id, *h);
    }
    out.push((rk, value));
    // Restored data is needed by strings of a collation that is not a byte order; `_bin`
    // VARCHARs would need their trailing-space count, which TPC-H values never have.
    let restore = !coll.is_bytes();
    for ix in t.indexes {
        let mut vals = Vec::new();
        let mut restored = RowEncoder::new();
        let mut any_restored = false;
        for &id in ix.cols {
            let v = get(id)?;
            put_key_datum(&mut vals, v, coll)?;
            if let (Val::Str(b), true) = (v, restore) {
                restored.bytes(id, b);
                any_restored = true;
            }
        }
        vals.extend_from_slice(&handle);
        let mut k = prefix.to_vec();
        key::encode_index_key(&mut k, t.id, ix.id, &vals);
        let mut r = Vec::new();
        if any_restored {
            restored.finish(&mut r).context("restored data")?;
        }
        let mut opts = IndexValueOptions::new();
        if any_restored {
            opts = opts.restored(&r);
        }
        let mut v = Vec::new();
        if t.common_handle() {
            encode_index_value_v1(&opts, &mut v).context("index value")?;
        } else {
            encode_index_value_v0(&opts, &mut v);
        }
        out.push((k, v));
    }
    Ok(())
}
