//! Row format v2 (TiDB `rowcodec`).
//!
//! ```text
//! [128][flag][u16 LE non_null_cnt][u16 LE null_cnt]
//! [non-null col ids ascending][null col ids ascending]
//! [end offset of each non-null value][values ...]
//! [checksum trailer, when flag has WITH_CHECKSUM]
//! ```
//! Small rows use 1-byte ids and u16 offsets; big rows (flag bit 0) use u32 for both.

use crate::codec::{self, Reader};
use crate::datum::flag;
use crate::decimal::{Decimal, Res};
use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::time::{MAX_FSP, Time, TimeType};

/// First byte of every v2 row.
pub const CODEC_VER: u8 = 128;
/// Flag bit: 4-byte ids and offsets.
pub const FLAG_BIG: u8 = 1;
/// Flag bit: a checksum trailer follows the values.
pub const FLAG_CHECKSUM: u8 = 2;
/// Checksum header bit: an extra u32 checksum follows the first.
pub const CHECKSUM_EXTRA: u8 = 0x08;

/// A parsed v2 row borrowing its bytes. Column lookups never allocate.
#[derive(Debug, Clone, Copy)]
pub struct RowSlice<'a> {
    big: bool,
    non_null_ids: &'a [u8],
    null_ids: &'a [u8],
    offsets: &'a [u8],
    values: &'a [u8],
    checksum: Option<Checksum>,
}

/// The checksum trailer of a v2 row, as stored (not verified here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checksum {
    /// The trailer's header byte.
    pub header: u8,
    /// The first CRC32.
    pub crc: u32,
    /// The optional second checksum.
    pub extra: Option<u32>,
}

impl<'a> RowSlice<'a> {
    /// Parses the header and locates the id, offset and value areas. Checks every area's length
    /// and that offsets ascend and stay within the values, so later lookups cannot fail on
    /// lengths.
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(data);
        let ver = r.read_u8("row v2 header")?;
        if ver != CODEC_VER {
            return Err(Error::Invalid { what: "row v2", reason: "codec version is not 128" });
        }
        let fl = r.read_u8("row v2 header")?;
        let non_null = usize::from(r.read_u16_le("row v2 header")?);
        let null = usize::from(r.read_u16_le("row v2 header")?);
        let big = fl & FLAG_BIG != 0;
        let w = if big { 4 } else { 1 };
        let ow = if big { 4 } else { 2 };
        let non_null_ids = r.read_bytes(non_null * w, "row v2 column ids")?;
        let null_ids = r.read_bytes(null * w, "row v2 null column ids")?;
        let offsets = r.read_bytes(non_null * ow, "row v2 offsets")?;
        let rest = r.rest();
        let mut row =
            RowSlice { big, non_null_ids, null_ids, offsets, values: &[], checksum: None };
        // Lookups binary-search the id lists: they must be strictly ascending, and no id may
        // be both NULL and non-NULL.
        let ascending =
            |ids: &[u8], n: usize| (1..n).all(|i| row.id_at(ids, i - 1) < row.id_at(ids, i));
        if !ascending(non_null_ids, non_null) || !ascending(null_ids, null) {
            return Err(Error::Invalid {
                what: "row v2",
                reason: "column ids not strictly ascending",
            });
        }
        if (0..null).any(|i| {
            row.search(non_null_ids, non_null, i64::from(row.id_at(null_ids, i))).is_some()
        }) {
            return Err(Error::Invalid { what: "row v2", reason: "column both NULL and non-NULL" });
        }
        let mut prev = 0usize;
        for i in 0..non_null {
            let end = row.offset_at(i);
            if end < prev {
                return Err(Error::Invalid { what: "row v2", reason: "offsets not ascending" });
            }
            prev = end;
        }
        if prev > rest.len() {
            return Err(Error::Eof { what: "row v2 values", need: prev, have: rest.len() });
        }
        let (values, trailer) = rest.split_at(prev);
        row.values = values;
        if fl & FLAG_CHECKSUM != 0 {
            let mut t = Reader::new(trailer);
            let header = t.read_u8("row v2 checksum")?;
            let crc = t.read_u32_le("row v2 checksum")?;
            let extra = if header & CHECKSUM_EXTRA != 0 {
                Some(t.read_u32_le("row v2 checksum")?)
            } else {
                None
            };
            row.checksum = Some(Checksum { header, crc, extra });
        }
        Ok(row)
    }

    /// True for big rows (4-byte ids and offsets).
    pub fn is_big(&self) -> bool {
        self.big
    }

    /// The checksum trailer, if the row has one.
    pub fn checksum(&self) -> Option<Checksum> {
        self.checksum
    }

    /// Number of non-NULL columns.
    pub fn non_null_count(&self) -> usize {
        self.offsets.len() / if self.big { 4 } else { 2 }
    }

    /// Number of NULL columns.
    pub fn null_count(&self) -> usize {
        self.null_ids.len() / if self.big { 4 } else { 1 }
    }

    #[inline]
    fn id_at(&self, ids: &[u8], i: usize) -> u32 {
        if self.big {
            let b = ids.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]);
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        } else {
            u32::from(ids.get(i).copied().unwrap_or(0))
        }
    }

    #[inline]
    fn offset_at(&self, i: usize) -> usize {
        if self.big {
            let b = self.offsets.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]);
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
        } else {
            let b = self.offsets.get(i * 2..i * 2 + 2).unwrap_or(&[0; 2]);
            usize::from(u16::from_le_bytes([b[0], b[1]]))
        }
    }

    fn search(&self, ids: &[u8], n: usize, id: i64) -> Option<usize> {
        let id = u32::try_from(id).ok()?;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.id_at(ids, mid).cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Finds column `id` among the non-NULL columns and returns its value bytes.
    #[inline]
    pub fn search_in_non_null_ids(&self, id: i64) -> Option<&'a [u8]> {
        let i = self.search(self.non_null_ids, self.non_null_count(), id)?;
        let start = if i == 0 { 0 } else { self.offset_at(i - 1) };
        self.values.get(start..self.offset_at(i))
    }

    /// True when column `id` is stored as NULL.
    #[inline]
    pub fn search_in_null_ids(&self, id: i64) -> bool {
        self.search(self.null_ids, self.null_count(), id).is_some()
    }

    /// Looks a column up: its value bytes, NULL, or missing.
    #[inline]
    pub fn get(&self, id: i64) -> Lookup<'a> {
        if let Some(v) = self.search_in_non_null_ids(id) {
            Lookup::Value(v)
        } else if self.search_in_null_ids(id) {
            Lookup::Null
        } else {
            Lookup::Missing
        }
    }

    /// Iterates the non-NULL columns as `(id, value bytes)` in id order.
    pub fn non_null_columns(&self) -> impl Iterator<Item = (u32, &'a [u8])> + '_ {
        (0..self.non_null_count()).map(move |i| {
            let start = if i == 0 { 0 } else { self.offset_at(i - 1) };
            (
                self.id_at(self.non_null_ids, i),
                self.values.get(start..self.offset_at(i)).unwrap_or(&[]),
            )
        })
    }

    /// Iterates the ids of the NULL columns in id order.
    pub fn null_columns(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.null_count()).map(move |i| self.id_at(self.null_ids, i))
    }
}

/// The result of looking a column up in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// Stored, non-NULL: the encoded value.
    Value(&'a [u8]),
    /// Stored as NULL.
    Null,
    /// Not in the row (take the column's default).
    Missing,
}

// ---------------------------------------------------------------------------------------------
// Projection

/// A set of column ids to read from many v2 rows, each row's id lists walked once.
///
/// [`RowSlice::parse`] validates every id and offset of a row, then each [`RowSlice::get`]
/// binary-searches; an executor reading several columns of every row pays both per row.
/// A projection instead merges the wanted ids (kept sorted) with the row's non-NULL and
/// NULL id lists in one pass, validating what the walk reads:
///
/// * the header, the lengths of the id and offset areas, the end of the values (the last
///   offset) and the checksum trailer's length, as `parse` does;
/// * that the ids the walk reads strictly ascend, and that no wanted id is both NULL and
///   non-NULL. The walk reads the ids up to the largest wanted id, except that when ids are
///   dense it jumps straight to a wanted id found where density puts it (checking the ids
///   on both sides of the jump);
/// * that each value read starts before it ends and lies within the values.
///
/// For every row that `parse` accepts, [`Projection::decode`] gives exactly what
/// [`RowSlice::get`] gives for each id. A corrupt row whose defect lies outside what the walk
/// reads (a descending id beyond the largest wanted id or inside a jump, an out-of-order
/// offset of a column not read) may decode; every other defect is an error. Decoding never
/// panics, and every value it returns lies within the row's values.
///
/// ```
/// use rcop_datum::row::v2::{Lookup, Projection, RowEncoder};
/// let mut enc = RowEncoder::new();
/// enc.int(1, 10).null(2).bytes(3, b"ab");
/// let mut row = Vec::new();
/// enc.finish(&mut row).unwrap();
/// let p = Projection::new(&[3, 7, 2, 1]);
/// let mut out = Vec::new();
/// p.decode(&row, &mut out).unwrap();
/// assert_eq!(out, [Lookup::Value(b"ab"), Lookup::Missing, Lookup::Null, Lookup::Value(&[10])]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Projection {
    /// `(id, caller position)` of every wanted id a row can hold, by id then position.
    wanted: Vec<(u32, usize)>,
    /// Number of ids asked for (caller positions).
    len: usize,
}

impl Projection {
    /// A projection of `ids`, in any order; repeated ids are allowed. Ids no row can hold
    /// (negative or above `u32::MAX`) always decode as [`Lookup::Missing`].
    pub fn new(ids: &[i64]) -> Self {
        let mut wanted: Vec<(u32, usize)> = ids
            .iter()
            .enumerate()
            .filter_map(|(pos, &id)| u32::try_from(id).ok().map(|id| (id, pos)))
            .collect();
        wanted.sort_unstable();
        Projection { wanted, len: ids.len() }
    }

    /// Number of ids asked for (the length of every decoded output).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no id was asked for.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Decodes the v2 row `data` into `out` (cleared first): one [`Lookup`] per id given to
    /// [`Projection::new`], in that order.
    pub fn decode<'a>(&self, data: &'a [u8], out: &mut Vec<Lookup<'a>>) -> Result<()> {
        out.clear();
        out.resize(self.len, Lookup::Missing);
        self.decode_into(data, out)
    }

    /// Decodes the v2 row `data` into `out`, which must hold exactly [`len`](Self::len)
    /// slots: slot `k` gets what the row holds for the `k`-th id given to
    /// [`Projection::new`], converted to `T` (as [`Column`](super::Column) for instance).
    pub fn decode_into<'a, T: From<Lookup<'a>>>(
        &self,
        data: &'a [u8],
        out: &mut [T],
    ) -> Result<()> {
        if out.len() != self.len {
            return Err(Error::Invalid {
                what: "row v2 projection",
                reason: "output length differs from the projection's",
            });
        }
        if self.wanted.len() < self.len {
            out.iter_mut().for_each(|o| *o = T::from(Lookup::Missing));
        }
        let &[ver, fl, a, b, c, d, ref rest @ ..] = data else {
            return Err(Error::Eof { what: "row v2 header", need: 6, have: data.len() });
        };
        if ver != CODEC_VER {
            return Err(Error::Invalid { what: "row v2", reason: "codec version is not 128" });
        }
        let non_null = usize::from(u16::from_le_bytes([a, b]));
        let null = usize::from(u16::from_le_bytes([c, d]));
        let header = RawHeader { fl, non_null, null, rest };
        if fl & FLAG_BIG != 0 {
            self.walk::<Big, T>(header, out)
        } else {
            self.walk::<Small, T>(header, out)
        }
    }

    #[inline(always)]
    fn walk<'a, L: Layout, T: From<Lookup<'a>>>(
        &self,
        h: RawHeader<'a>,
        out: &mut [T],
    ) -> Result<()> {
        let (nn, nl) = (h.non_null, h.null);
        let Some((ids, rest)) = h.rest.split_at_checked(nn * L::ID) else {
            return Err(Error::Eof {
                what: "row v2 column ids",
                need: nn * L::ID,
                have: h.rest.len(),
            });
        };
        let Some((null_ids, rest)) = rest.split_at_checked(nl * L::ID) else {
            return Err(Error::Eof {
                what: "row v2 null column ids",
                need: nl * L::ID,
                have: rest.len(),
            });
        };
        let Some((offsets, rest)) = rest.split_at_checked(nn * L::OFF) else {
            return Err(Error::Eof { what: "row v2 offsets", need: nn * L::OFF, have: rest.len() });
        };
        let values_end = match nn.checked_sub(1) {
            Some(last) => L::off(offsets, last),
            None => 0,
        };
        let Some((values, trailer)) = rest.split_at_checked(values_end) else {
            return Err(Error::Eof { what: "row v2 values", need: values_end, have: rest.len() });
        };
        if h.fl & FLAG_CHECKSUM != 0 {
            let need = match trailer.first() {
                Some(&t) if t & CHECKSUM_EXTRA != 0 => 9,
                _ => 5,
            };
            if trailer.len() < need {
                return Err(Error::Eof { what: "row v2 checksum", need, have: trailer.len() });
            }
        }
        // Merge the wanted ids with both id lists: `i`/`j` are the next unread positions,
        // `prev_*` the last id read from each list (-1 before the first), for the ascending
        // check.
        let (mut i, mut j) = (0usize, 0usize);
        let (mut prev_nn, mut prev_null) = (-1i64, -1i64);
        let mut last: Option<(u32, Lookup<'a>)> = None;
        for &(want, pos) in &self.wanted {
            let found = match last {
                Some((id, l)) if id == want => l,
                _ => {
                    let mut found = Lookup::Missing;
                    // Ids are usually dense: guess that `want` sits `want - next id` places
                    // on, and take the guess when that id is `want`, the one before it is
                    // smaller and the next id is above the last one read. Otherwise walk.
                    if i < nn {
                        let next = L::id(ids, i);
                        if i64::from(next) > prev_nn
                            && next < want
                            && let Some(p) = i.checked_add((want - next) as usize)
                            && p < nn
                            && L::id(ids, p) == want
                            && L::id(ids, p - 1) < want
                        {
                            i = p;
                        }
                    }
                    while i < nn {
                        let id = L::id(ids, i);
                        if i64::from(id) <= prev_nn {
                            return Err(not_ascending());
                        }
                        if id > want {
                            break;
                        }
                        prev_nn = i64::from(id);
                        i += 1;
                        if id == want {
                            let start = match i.checked_sub(2) {
                                Some(k) => L::off(offsets, k),
                                None => 0,
                            };
                            let Some(v) = values.get(start..L::off(offsets, i - 1)) else {
                                return Err(Error::Invalid {
                                    what: "row v2",
                                    reason: "offsets not ascending",
                                });
                            };
                            found = Lookup::Value(v);
                            break;
                        }
                    }
                    while j < nl {
                        let id = L::id(null_ids, j);
                        if i64::from(id) <= prev_null {
                            return Err(not_ascending());
                        }
                        if id > want {
                            break;
                        }
                        prev_null = i64::from(id);
                        j += 1;
                        if id == want {
                            if found != Lookup::Missing {
                                return Err(Error::Invalid {
                                    what: "row v2",
                                    reason: "column both NULL and non-NULL",
                                });
                            }
                            found = Lookup::Null;
                            break;
                        }
                    }
                    last = Some((want, found));
                    found
                }
            };
            if let Some(slot) = out.get_mut(pos) {
                *slot = T::from(found);
            }
        }
        Ok(())
    }
}

fn not_ascending() -> Error {
    Error::Invalid { what: "row v2", reason: "column ids not strictly ascending" }
}

/// The fixed part of a v2 row header, as read by [`Projection::decode`].
#[derive(Clone, Copy)]
struct RawHeader<'a> {
    fl: u8,
    non_null: usize,
    null: usize,
    rest: &'a [u8],
}

/// Id and offset widths of small and big rows.
trait Layout {
    /// Bytes per id.
    const ID: usize;
    /// Bytes per offset.
    const OFF: usize;
    /// Id `i` (0 past the end: callers index within the checked area lengths).
    fn id(ids: &[u8], i: usize) -> u32;
    /// End offset `i` (0 past the end).
    fn off(offsets: &[u8], i: usize) -> usize;
}

struct Small;
struct Big;

impl Layout for Small {
    const ID: usize = 1;
    const OFF: usize = 2;
    #[inline]
    fn id(ids: &[u8], i: usize) -> u32 {
        u32::from(ids.get(i).copied().unwrap_or(0))
    }
    #[inline]
    fn off(offsets: &[u8], i: usize) -> usize {
        match offsets.get(i * 2..i * 2 + 2) {
            Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
            _ => 0,
        }
    }
}

impl Layout for Big {
    const ID: usize = 4;
    const OFF: usize = 4;
    #[inline]
    fn id(ids: &[u8], i: usize) -> u32 {
        match ids.get(i * 4..i * 4 + 4) {
            Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
            _ => 0,
        }
    }
    #[inline]
    fn off(offsets: &[u8], i: usize) -> usize {
        match offsets.get(i * 4..i * 4 + 4) {
            Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]) as usize,
            _ => 0,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Values

/// How a v2 value is stored, by the column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Signed integer, 1/2/4/8 bytes LE.
    Int,
    /// Unsigned integer (also enum, set, bit, year is signed), 1/2/4/8 bytes LE.
    Uint,
    /// Float or double: 8-byte comparable f64.
    Float,
    /// String or binary: raw bytes.
    Bytes,
    /// `[prec][frac]` + MySQL binary.
    Decimal,
    /// Packed u64, LE, minimal width.
    Time,
    /// Nanoseconds, LE signed, minimal width.
    Duration,
    /// `[type][binary json]`.
    Json,
}

/// Reads a signed int stored in 1, 2, 4 or 8 bytes LE.
#[inline]
pub fn decode_v2_i64(v: &[u8]) -> Result<i64> {
    Ok(match *v {
        [a] => i64::from(a as i8),
        [a, b] => i64::from(i16::from_le_bytes([a, b])),
        [a, b, c, d] => i64::from(i32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => i64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => return Err(Error::BadLength { what: "row v2 int", len: v.len() as i64 }),
    })
}

/// Reads an unsigned int stored in 1, 2, 4 or 8 bytes LE.
#[inline]
pub fn decode_v2_u64(v: &[u8]) -> Result<u64> {
    Ok(match *v {
        [a] => u64::from(a),
        [a, b] => u64::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => return Err(Error::BadLength { what: "row v2 uint", len: v.len() as i64 }),
    })
}

/// Reads an 8-byte comparable f64.
#[inline]
pub fn decode_v2_f64(v: &[u8]) -> Result<f64> {
    match *v {
        [a, b, c, d, e, f, g, h] => {
            Ok(codec::comparable_to_f64(u64::from_be_bytes([a, b, c, d, e, f, g, h])))
        }
        _ => Err(Error::BadLength { what: "row v2 float", len: v.len() as i64 }),
    }
}

/// Appends `v` as the smallest LE signed int that holds it.
#[inline]
pub fn encode_v2_i64(out: &mut Vec<u8>, v: i64) {
    if let Ok(x) = i8::try_from(v) {
        out.push(x as u8);
    } else if let Ok(x) = i16::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else if let Ok(x) = i32::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends `v` as the smallest LE unsigned int that holds it.
#[inline]
pub fn encode_v2_u64(out: &mut Vec<u8>, v: u64) {
    if let Ok(x) = u8::try_from(v) {
        out.push(x);
    } else if let Ok(x) = u16::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else if let Ok(x) = u32::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Rewrites one v2 value as the datum TiKV evaluates (TypeDefault response encoding):
/// int `03`+i64, uint `04`+u64, float `05`, bytes `02`+compact, decimal `06`, time `04`+packed,
/// duration `07`, json `0A`. Checks the value's length against its kind, and that times,
/// durations, decimals and JSON are in range and well formed, so the datum written always
/// decodes.
pub fn v2_value_to_datum(v: &[u8], kind: ValueKind, out: &mut Vec<u8>) -> Result<()> {
    match kind {
        ValueKind::Int => {
            out.push(flag::INT);
            codec::encode_i64(out, decode_v2_i64(v)?);
        }
        ValueKind::Uint => {
            out.push(flag::UINT);
            codec::encode_u64(out, decode_v2_u64(v)?);
        }
        ValueKind::Time => {
            let packed = decode_v2_u64(v)?;
            Time::from_packed_u64(packed, TimeType::DateTime, MAX_FSP)?;
            out.push(flag::UINT);
            codec::encode_u64(out, packed);
        }
        ValueKind::Float => {
            out.push(flag::FLOAT);
            codec::encode_f64(out, decode_v2_f64(v)?);
        }
        ValueKind::Bytes => {
            out.push(flag::COMPACT_BYTES);
            codec::encode_compact_bytes(out, v);
        }
        ValueKind::Decimal => {
            let mut r = Reader::new(v);
            Decimal::decode_bin(&mut r)?;
            if !r.is_empty() {
                return Err(Error::Invalid { what: "row v2 decimal", reason: "trailing bytes" });
            }
            out.push(flag::DECIMAL);
            out.extend_from_slice(v);
        }
        ValueKind::Duration => {
            let nanos = decode_v2_i64(v)?;
            Duration::from_nanos(nanos, MAX_FSP)?;
            out.push(flag::DURATION);
            codec::encode_i64(out, nanos);
        }
        ValueKind::Json => {
            let n = crate::datum::json_len(v)?;
            if n != v.len() {
                return Err(Error::Invalid { what: "row v2 json", reason: "trailing bytes" });
            }
            out.push(flag::JSON);
            out.extend_from_slice(v);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Encoder

/// Builds v2 rows. Reuse one encoder for many rows: its buffers are kept between rows.
///
/// ```
/// use rcop_datum::row::v2::{RowEncoder, RowSlice, Lookup};
/// let mut enc = RowEncoder::new();
/// enc.int(1, 10).null(2).bytes(3, b"ab");
/// let mut row = Vec::new();
/// enc.finish(&mut row).unwrap();
/// assert_eq!(row, [0x80, 0, 2, 0, 1, 0, 1, 3, 2, 1, 0, 3, 0, 0x0A, b'a', b'b']);
/// assert_eq!(RowSlice::parse(&row).unwrap().get(3), Lookup::Value(b"ab"));
/// ```
#[derive(Debug, Default)]
pub struct RowEncoder {
    // (id, start, end) into `values`, or (id, 0, 0) in `nulls`.
    cols: Vec<(i64, usize, usize)>,
    nulls: Vec<i64>,
    values: Vec<u8>,
}

impl RowEncoder {
    /// An empty encoder.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, id: i64, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        let start = self.values.len();
        f(&mut self.values);
        self.cols.push((id, start, self.values.len()));
        self
    }

    /// Adds a signed integer column.
    pub fn int(&mut self, id: i64, v: i64) -> &mut Self {
        self.push(id, |o| encode_v2_i64(o, v))
    }

    /// Adds an unsigned integer column (also enum, set and bit values).
    pub fn uint(&mut self, id: i64, v: u64) -> &mut Self {
        self.push(id, |o| encode_v2_u64(o, v))
    }

    /// Adds a float or double column.
    pub fn float(&mut self, id: i64, v: f64) -> &mut Self {
        self.push(id, |o| codec::encode_f64(o, v))
    }

    /// Adds a string or binary column.
    pub fn bytes(&mut self, id: i64, v: &[u8]) -> &mut Self {
        self.push(id, |o| o.extend_from_slice(v))
    }

    /// Adds a decimal column stored as DECIMAL(prec, frac). Rounding or overflow is reported.
    pub fn decimal(&mut self, id: i64, v: &Decimal, prec: u8, frac: u8) -> Result<Res<()>> {
        let start = self.values.len();
        let res = v.write_bin(prec, frac, &mut self.values).inspect_err(|_| {
            self.values.truncate(start);
        })?;
        self.cols.push((id, start, self.values.len()));
        Ok(res)
    }

    /// Adds a date, datetime or timestamp column (timestamps in UTC).
    pub fn time(&mut self, id: i64, v: Time) -> &mut Self {
        self.push(id, |o| encode_v2_u64(o, v.to_packed_u64()))
    }

    /// Adds a duration column.
    pub fn duration(&mut self, id: i64, v: Duration) -> &mut Self {
        self.push(id, |o| encode_v2_i64(o, v.nanos()))
    }

    /// Adds a JSON column (type byte then binary JSON).
    pub fn json(&mut self, id: i64, v: &[u8]) -> &mut Self {
        self.push(id, |o| o.extend_from_slice(v))
    }

    /// Adds a NULL column.
    pub fn null(&mut self, id: i64) -> &mut Self {
        self.nulls.push(id);
        self
    }

    /// Appends the row to `out` and resets the encoder for the next row.
    ///
    /// Errors when an id is negative or repeated, or when a row holds more than 65535
    /// columns of one kind.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let r = self.write(out);
        self.cols.clear();
        self.nulls.clear();
        self.values.clear();
        r
    }

    fn write(&mut self, out: &mut Vec<u8>) -> Result<()> {
        self.cols.sort_unstable_by_key(|c| c.0);
        self.nulls.sort_unstable();
        let bad_id = |id: &i64| u32::try_from(*id).is_err();
        if self.cols.iter().any(|c| bad_id(&c.0)) || self.nulls.iter().any(bad_id) {
            return Err(Error::Invalid { what: "row v2", reason: "column id out of range" });
        }
        let dup = self.cols.windows(2).any(|w| w[0].0 == w[1].0)
            || self.nulls.windows(2).any(|w| w[0] == w[1])
            || self.nulls.iter().any(|n| self.cols.binary_search_by_key(n, |c| c.0).is_ok());
        if dup {
            return Err(Error::Invalid { what: "row v2", reason: "duplicate column id" });
        }
        let (nn, nl) = (self.cols.len(), self.nulls.len());
        let (Ok(nn16), Ok(nl16)) = (u16::try_from(nn), u16::try_from(nl)) else {
            return Err(Error::Invalid { what: "row v2", reason: "too many columns" });
        };
        let max_id = self.cols.iter().map(|c| c.0).chain(self.nulls.iter().copied()).max();
        let big = max_id.is_some_and(|m| m > 255) || self.values.len() > usize::from(u16::MAX);
        if big && u32::try_from(self.values.len()).is_err() {
            return Err(Error::Invalid { what: "row v2", reason: "values exceed 4 GiB" });
        }
        out.push(CODEC_VER);
        out.push(if big { FLAG_BIG } else { 0 });
        out.extend_from_slice(&nn16.to_le_bytes());
        out.extend_from_slice(&nl16.to_le_bytes());
        let put_id = |out: &mut Vec<u8>, id: i64| {
            if big {
                out.extend_from_slice(&(id as u32).to_le_bytes());
            } else {
                out.push(id as u8);
            }
        };
        for c in &self.cols {
            put_id(out, c.0);
        }
        for &n in &self.nulls {
            put_id(out, n);
        }
        let mut end = 0usize;
        for c in &self.cols {
            end += c.2 - c.1;
            if big {
                out.extend_from_slice(&(end as u32).to_le_bytes());
            } else {
                out.extend_from_slice(&(end as u16).to_le_bytes());
            }
        }
        for c in &self.cols {
            out.extend_from_slice(&self.values[c.1..c.2]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_encode_unsigned() {
        let mut enc = RowEncoder::new();
        enc.uint(1, u64::MAX).int(2, -1);
        let mut out = Vec::new();
        enc.finish(&mut out).unwrap();
        assert_eq!(hex::encode(&out), "800002000000010208000900ffffffffffffffffff");
        let row = RowSlice::parse(&out).unwrap();
        assert_eq!(decode_v2_u64(row.search_in_non_null_ids(1).unwrap()).unwrap(), u64::MAX);
        assert_eq!(decode_v2_i64(row.search_in_non_null_ids(2).unwrap()).unwrap(), -1);
    }

    #[test]
    fn upstream_encode_big() {
        let mut enc = RowEncoder::new();
        enc.int(1, 1000).int(12, 2).null(335).int(3, 3).int(8, 32767);
        let mut out = Vec::new();
        enc.finish(&mut out).unwrap();
        let want = concat!(
            "800104000100",
            "01000000",
            "03000000",
            "08000000",
            "0c000000",
            "4f010000",
            "02000000",
            "03000000",
            "05000000",
            "06000000",
            "e80303ff7f02"
        );
        assert_eq!(hex::encode(&out), want);
        let row = RowSlice::parse(&out).unwrap();
        assert!(row.is_big());
        assert_eq!(row.get(335), Lookup::Null);
        assert_eq!(row.get(4), Lookup::Missing);
        assert_eq!(decode_v2_i64(row.search_in_non_null_ids(8).unwrap()).unwrap(), 32767);
        assert_eq!(decode_v2_i64(row.search_in_non_null_ids(12).unwrap()).unwrap(), 2);
        assert_eq!(row.non_null_columns().map(|c| c.0).collect::<Vec<_>>(), [1, 3, 8, 12]);
        assert_eq!(row.null_columns().collect::<Vec<_>>(), [335]);
    }

    #[test]
    fn checksum_trailer_accepted() {
        let mut enc = RowEncoder::new();
        enc.int(1, 7);
        let mut row = Vec::new();
        enc.finish(&mut row).unwrap();
        row[1] |= FLAG_CHECKSUM;
        row.push(CHECKSUM_EXTRA | 1);
        row.extend_from_slice(&0xDEADBEEFu32.to_le_bytes());
        row.extend_from_slice(&7u32.to_le_bytes());
        let r = RowSlice::parse(&row).unwrap();
        assert_eq!(r.checksum(), Some(Checksum { header: 9, crc: 0xDEADBEEF, extra: Some(7) }));
        assert_eq!(r.get(1), Lookup::Value(&[7]));
        // A checksum flag without its trailer is an error.
        assert!(RowSlice::parse(&row[..row.len() - 4]).is_err());
    }

    #[test]
    fn malformed_rows() {
        assert!(RowSlice::parse(&[]).is_err());
        assert!(RowSlice::parse(&[0x81, 0, 0, 0, 0, 0]).is_err());
        assert!(RowSlice::parse(&[0x80, 0, 1, 0, 0]).is_err());
        // one column whose end offset points past the values
        assert!(RowSlice::parse(&[0x80, 0, 1, 0, 0, 0, 1, 5, 0, 1]).is_err());
        // descending offsets
        assert!(RowSlice::parse(&[0x80, 0, 2, 0, 0, 0, 1, 2, 2, 0, 1, 0, 9, 9]).is_err());
        // ids out of order, repeated, or both NULL and non-NULL
        assert!(RowSlice::parse(&[0x80, 0, 2, 0, 0, 0, 5, 1, 1, 0, 2, 0, 0xAA, 0xBB]).is_err());
        assert!(RowSlice::parse(&[0x80, 0, 2, 0, 0, 0, 1, 1, 1, 0, 2, 0, 0xAA, 0xBB]).is_err());
        assert!(RowSlice::parse(&[0x80, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0xAA]).is_err());
        assert!(decode_v2_i64(&[1, 2, 3]).is_err());
        assert!(decode_v2_f64(&[1, 2, 3]).is_err());
        let mut out = Vec::new();
        assert!(v2_value_to_datum(&[1, 2, 3], ValueKind::Uint, &mut out).is_err());
        assert!(v2_value_to_datum(&[0x04, 0x01, 0x00], ValueKind::Json, &mut out).is_err());
    }

    #[test]
    fn encoder_rejects_bad_ids() {
        let mut out = Vec::new();
        assert!(RowEncoder::new().int(-1, 1).finish(&mut out).is_err());
        assert!(RowEncoder::new().int(1, 1).null(1).finish(&mut out).is_err());
        assert!(RowEncoder::new().int(1, 1).int(1, 2).finish(&mut out).is_err());
        // After an error the encoder is reset and usable.
        let mut enc = RowEncoder::new();
        assert!(enc.int(1, 1).int(1, 2).finish(&mut out).is_err());
        out.clear();
        enc.int(1, 1).finish(&mut out).unwrap();
        assert_eq!(out, [0x80, 0, 1, 0, 0, 0, 1, 1, 0, 1]);
    }
}
