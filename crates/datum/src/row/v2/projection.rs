//! [`Projection`]: many columns of many v2 rows, each row's id lists walked once.

use super::*;

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
    /// [`Projection::new`], converted to `T` (as [`Column`](crate::row::Column) for instance).
    pub fn decode_into<'a, T: From<Lookup<'a>>>(
        &self,
        data: &'a [u8],
        out: &mut [T],
    ) -> Result<()> {
        self.check_len(out.len())?;
        if self.wanted.len() < self.len {
            out.iter_mut().for_each(|o| *o = T::from(Lookup::Missing));
        }
        let h = header(data)?;
        if h.fl & FLAG_BIG != 0 {
            self.walk::<Big, T>(h, out)
        } else {
            self.walk::<Small, T>(h, out)
        }
    }

    /// [`decode_into`](Self::decode_into) for many rows of one table: `shape` remembers where
    /// the wanted ids sat in the last row walked ([`learn`](Self::learn)), and a row whose
    /// header and id lists are byte for byte the same (the common case: every row of a table
    /// holds the same columns) reads its values from those positions without walking its
    /// ids again. Each value's offsets are still checked, so the result — values and errors —
    /// is exactly `decode_into`'s.
    pub fn decode_into_cached<'a, T: From<Lookup<'a>>>(
        &self,
        data: &'a [u8],
        out: &mut [T],
        shape: &mut RowShape,
    ) -> Result<()> {
        self.check_len(out.len())?;
        // Every slot from a row the shape views, or `None` (nothing written that matters: the
        // caller walks the row) when a value's offsets are out of order.
        let fill = |row: ShapedRow<'a, '_>, out: &mut [T]| {
            for (pos, o) in out.iter_mut().enumerate() {
                *o = T::from(row.get(pos)?);
            }
            Some(())
        };
        if shape.wanted == self.wanted
            && let Some(row) = shape.view(data)
        {
            return match fill(row, out) {
                Some(()) => Ok(()),
                // A value whose offsets are out of order: the walk names the defect.
                None => self.decode_into(data, out),
            };
        }
        // Another layout, a shape another projection taught, or nothing learned yet: learn
        // this row's, which walks it and reports its defects as `decode_into` would.
        if self.learn(data, shape).is_ok()
            && let Some(row) = shape.view(data)
            && fill(row, out).is_some()
        {
            return Ok(());
        }
        self.decode_into(data, out)
    }

    /// Learns where the wanted ids sit in the v2 row `data`, for [`RowShape::view`] to read
    /// every row laid out the same way. Walks the row as [`decode_into`](Self::decode_into)
    /// does and fails as it would (then `shape` holds nothing, and views no row).
    pub fn learn(&self, data: &[u8], shape: &mut RowShape) -> Result<()> {
        shape.prefix.clear();
        shape.wanted.clear();
        shape.slots.clear();
        shape.slots.resize(self.len, Slot::Missing);
        let h = header(data)?;
        let big = h.fl & FLAG_BIG != 0;
        let areas = if big { areas::<Big>(h)? } else { areas::<Small>(h)? };
        let slots = &mut shape.slots;
        let emit = |pos: usize, slot| {
            if let Some(s) = slots.get_mut(pos) {
                *s = slot;
            }
            Ok(())
        };
        if big {
            self.walk_ids::<Big>(&areas, emit)?;
        } else {
            self.walk_ids::<Small>(&areas, emit)?;
        }
        let prefix_len = 6 + areas.ids.len() + areas.null_ids.len();
        shape.prefix.extend_from_slice(data.get(..prefix_len).unwrap_or_default());
        shape.big = big;
        shape.checksum = h.fl & FLAG_CHECKSUM != 0;
        shape.non_null = h.non_null;
        shape.wanted.extend_from_slice(&self.wanted);
        Ok(())
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n != self.len {
            return Err(Error::Invalid {
                what: "row v2 projection",
                reason: "output length differs from the projection's",
            });
        }
        Ok(())
    }

    #[inline(always)]
    fn walk<'a, L: Layout, T: From<Lookup<'a>>>(
        &self,
        h: RawHeader<'a>,
        out: &mut [T],
    ) -> Result<()> {
        let a = areas::<L>(h)?;
        self.walk_ids::<L>(&a, |pos, slot| put::<L, T>(out, pos, slot, a.offsets, a.values))
    }

    /// Merges the wanted ids with the row's id lists, telling `emit` where each wanted id
    /// is: its value's index among the non-NULL ids, NULL, or missing.
    #[inline(always)]
    fn walk_ids<L: Layout>(
        &self,
        a: &Areas<'_>,
        mut emit: impl FnMut(usize, Slot) -> Result<()>,
    ) -> Result<()> {
        let (nn, nl) = (a.nn, a.nl);
        let (ids, null_ids, offsets, values) = (a.ids, a.null_ids, a.offsets, a.values);
        // Merge the wanted ids with both id lists: `i`/`j` are the next unread positions,
        // `prev_*` the last id read from each list (-1 before the first), for the ascending
        // check.
        let (mut i, mut j) = (0usize, 0usize);
        let (mut prev_nn, mut prev_null) = (-1i64, -1i64);
        let mut last: Option<(u32, Slot)> = None;
        for &(want, pos) in &self.wanted {
            let found = match last {
                Some((id, l)) if id == want => l,
                _ => {
                    let mut found = Slot::Missing;
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
                            if values.get(start..L::off(offsets, i - 1)).is_none() {
                                return Err(Error::Invalid {
                                    what: "row v2",
                                    reason: "offsets not ascending",
                                });
                            }
                            found = Slot::Value(i - 1);
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
                            if found != Slot::Missing {
                                return Err(Error::Invalid {
                                    what: "row v2",
                                    reason: "column both NULL and non-NULL",
                                });
                            }
                            found = Slot::Null;
                            break;
                        }
                    }
                    last = Some((want, found));
                    found
                }
            };
            emit(pos, found)?;
        }
        Ok(())
    }
}

/// Stores in `out[pos]` what `slot` says the row holds there.
#[inline(always)]
fn put<'a, L: Layout, T: From<Lookup<'a>>>(
    out: &mut [T],
    pos: usize,
    slot: Slot,
    offsets: &[u8],
    values: &'a [u8],
) -> Result<()> {
    let found = match slot {
        Slot::Missing => Lookup::Missing,
        Slot::Null => Lookup::Null,
        Slot::Value(p) => {
            let Some(v) = value_at::<L>(offsets, values, p) else {
                return Err(Error::Invalid { what: "row v2", reason: "offsets not ascending" });
            };
            Lookup::Value(v)
        }
    };
    if let Some(o) = out.get_mut(pos) {
        *o = T::from(found);
    }
    Ok(())
}

/// Value `p` of a row: from the end offset of value `p - 1` (0 for the first) to its own;
/// `None` when they are out of order or past `values`.
#[inline(always)]
fn value_at<'a, L: Layout>(offsets: &[u8], values: &'a [u8], p: usize) -> Option<&'a [u8]> {
    let start = match p.checked_sub(1) {
        Some(k) => L::off(offsets, k),
        None => 0,
    };
    values.get(start..L::off(offsets, p))
}

/// Where a wanted id sits in a row, as [`Projection`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Missing,
    Null,
    /// Index of the value among the row's non-NULL ids.
    Value(usize),
}

/// Where a [`Projection`]'s ids sit in rows laid out like one row the projection
/// [learned](Projection::learn): the same header and id lists, byte for byte (the common
/// case: every row of a table holds the same columns). [`view`](Self::view) then finds a
/// row's values from those positions without walking its ids. A shape answers for the
/// projection that taught it ([`Projection::decode_into_cached`] relearns a shape another
/// projection taught).
#[derive(Debug, Clone, Default)]
pub struct RowShape {
    /// The learned row's header and id areas, as stored; empty when nothing is learned.
    prefix: Vec<u8>,
    big: bool,
    checksum: bool,
    non_null: usize,
    /// Where each wanted id sits, by the projection's caller position.
    slots: Vec<Slot>,
    /// The wanted ids of the projection that taught the shape.
    wanted: Vec<(u32, usize)>,
}

impl RowShape {
    /// A shape that views no row until a projection learns one.
    pub fn new() -> Self {
        RowShape::default()
    }

    /// The values of `row` when it is laid out as the learned row: its header and id
    /// lists the same bytes, its offsets, values and checksum trailer (when flagged) long
    /// enough. `None` otherwise — nothing learned, another layout, or a cut row — for the
    /// caller to decode `row` with [`Projection::decode_into`] (which names any defect).
    #[inline]
    pub fn view<'r>(&self, row: &'r [u8]) -> Option<ShapedRow<'r, '_>> {
        let n = self.prefix.len();
        let (head, rest) = row.split_at_checked(n)?;
        if n == 0 || !same_bytes(head, &self.prefix) {
            return None;
        }
        let nn = self.non_null;
        let (offsets, rest) = rest.split_at_checked(nn * if self.big { 4 } else { 2 })?;
        let shaped = ShapedRow { slots: &self.slots, offsets, values: &[], big: self.big };
        let values_end = match nn.checked_sub(1) {
            Some(last) => shaped.off(last),
            None => 0,
        };
        let (values, trailer) = rest.split_at_checked(values_end)?;
        if !self.trailer_fits(trailer) {
            return None;
        }
        Some(ShapedRow { values, ..shaped })
    }

    /// Whether `trailer`, what follows a row's values, is long enough for the checksum the
    /// learned row flags (five bytes, nine with the extra byte); always when none is flagged.
    #[inline(always)]
    fn trailer_fits(&self, trailer: &[u8]) -> bool {
        if !self.checksum {
            return true;
        }
        let need = match trailer.first() {
            Some(&t) if t & CHECKSUM_EXTRA != 0 => 9,
            _ => 5,
        };
        trailer.len() >= need
    }

    /// The value at `slot` (a [`value_slot`](Self::value_slot) of this shape) of `row` when
    /// `row` is laid out as the learned row: exactly `self.view(row)?.value(slot)`, in one
    /// step for a caller that reads one value a row. `None` when the row is laid out
    /// otherwise, is cut, or the value's offsets are out of order.
    #[inline]
    pub fn value_of<'r>(&self, row: &'r [u8], slot: usize) -> Option<&'r [u8]> {
        if self.big { self.value_in::<Big>(row, slot) } else { self.value_in::<Small>(row, slot) }
    }

    #[inline(always)]
    fn value_in<'r, L: Layout>(&self, row: &'r [u8], slot: usize) -> Option<&'r [u8]> {
        let (n, nn) = (self.prefix.len(), self.non_null);
        if n == 0 || slot >= nn {
            return None;
        }
        // The header and id lists, then the offsets: the values start right after.
        let (head, rest) = row.split_at_checked(n)?;
        let (offsets, rest) = rest.split_at_checked(nn * L::OFF)?;
        if !same_bytes(head, &self.prefix) {
            return None;
        }
        let (values, trailer) = rest.split_at_checked(L::off(offsets, nn - 1))?;
        if !self.trailer_fits(trailer) {
            return None;
        }
        value_at::<L>(offsets, values, slot)
    }

    /// Where the value of the `pos`-th id given to [`Projection::new`] sits among the
    /// learned row's values, for [`ShapedRow::value`]; `None` when the learned row has no
    /// value for it (missing or NULL: [`ShapedRow::get`] says which) or `pos` is out of
    /// range.
    #[inline]
    pub fn value_slot(&self, pos: usize) -> Option<usize> {
        match self.slots.get(pos)? {
            Slot::Value(p) => Some(*p),
            Slot::Missing | Slot::Null => None,
        }
    }
}

/// A row [`RowShape::view`] found laid out as the learned row.
#[derive(Debug, Clone, Copy)]
pub struct ShapedRow<'r, 's> {
    slots: &'s [Slot],
    offsets: &'r [u8],
    values: &'r [u8],
    big: bool,
}

impl<'r> ShapedRow<'r, '_> {
    /// What the row holds for the `pos`-th id given to [`Projection::new`]: exactly what
    /// [`Projection::decode_into`] puts in slot `pos`. `None` when `pos` is out of range or
    /// the value's offsets are out of order (`decode_into` reports that row as corrupt).
    #[inline]
    pub fn get(&self, pos: usize) -> Option<Lookup<'r>> {
        Some(match *self.slots.get(pos)? {
            Slot::Missing => Lookup::Missing,
            Slot::Null => Lookup::Null,
            Slot::Value(p) => Lookup::Value(self.value(p)?),
        })
    }

    /// The value at `slot` (a [`RowShape::value_slot`] of the shape that viewed the row):
    /// what [`get`](Self::get) gives as [`Lookup::Value`] for that id, without looking its
    /// slot up. `None` when `slot` is past the row's values or the value's offsets are out
    /// of order (a corrupt row).
    #[inline(always)]
    pub fn value(&self, slot: usize) -> Option<&'r [u8]> {
        // Two bytes an offset in a small row, four in a big one.
        if slot >= self.offsets.len() >> (1 + u32::from(self.big)) {
            return None;
        }
        if self.big {
            value_at::<Big>(self.offsets, self.values, slot)
        } else {
            value_at::<Small>(self.offsets, self.values, slot)
        }
    }

    #[inline(always)]
    fn off(&self, i: usize) -> usize {
        if self.big { Big::off(self.offsets, i) } else { Small::off(self.offsets, i) }
    }
}

/// `a == b` for the short id lists of a row, eight bytes at a time (no `memcmp` call): the
/// last eight bytes overlap the chunks before them rather than being compared one by one.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        s.get(at..).and_then(|s| s.first_chunk::<8>()).map(|w| u64::from_ne_bytes(*w))
    };
    let Some(last) = a.len().checked_sub(8) else {
        return a.iter().zip(b).all(|(x, y)| x == y);
    };
    let mut at = 0;
    while at < last {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    word(a, last) == word(b, last)
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

/// Reads the fixed header of the v2 row `data`.
#[inline(always)]
fn header(data: &[u8]) -> Result<RawHeader<'_>> {
    let &[ver, fl, a, b, c, d, ref rest @ ..] = data else {
        return Err(Error::Eof { what: "row v2 header", need: 6, have: data.len() });
    };
    if ver != CODEC_VER {
        return Err(Error::Invalid { what: "row v2", reason: "codec version is not 128" });
    }
    let non_null = usize::from(u16::from_le_bytes([a, b]));
    let null = usize::from(u16::from_le_bytes([c, d]));
    Ok(RawHeader { fl, non_null, null, rest })
}

/// A v2 row's areas, their lengths checked.
struct Areas<'a> {
    nn: usize,
    nl: usize,
    ids: &'a [u8],
    null_ids: &'a [u8],
    offsets: &'a [u8],
    values: &'a [u8],
}

/// Splits a row after its header into its areas, checking the lengths of the id and offset
/// areas, the end of the values (the last offset) and the checksum trailer's length.
#[inline(always)]
fn areas<L: Layout>(h: RawHeader<'_>) -> Result<Areas<'_>> {
    let (nn, nl) = (h.non_null, h.null);
    let Some((ids, rest)) = h.rest.split_at_checked(nn * L::ID) else {
        return Err(Error::Eof { what: "row v2 column ids", need: nn * L::ID, have: h.rest.len() });
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
    Ok(Areas { nn, nl, ids, null_ids, offsets, values })
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

#[cfg(test)]
mod tests {
    use super::same_bytes;

    proptest::proptest! {
        /// Equal to `==` on slices of every length around the eight-byte chunks, including
        /// pairs that differ in one byte only.
        #[test]
        fn same_bytes_is_slice_equality(
            a in proptest::collection::vec(0u8..4, 0..40),
            flip in proptest::option::of((0usize..40, 1u8..=255)),
            cut in proptest::option::of(0usize..40),
        ) {
            let mut b = a.clone();
            if let Some((at, x)) = flip && let Some(byte) = b.get_mut(at) {
                *byte ^= x;
            }
            if let Some(n) = cut {
                b.truncate(n);
            }
            proptest::prop_assert_eq!(same_bytes(&a, &b), a == b);
        }
    }
}
