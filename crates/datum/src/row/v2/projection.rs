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
        self.decode_into_cached(data, out, &mut ShapeCache::disabled())
    }

    /// [`decode_into`](Self::decode_into) for many rows of one table: `cache` remembers where
    /// the wanted ids sat in the last row walked, and a row whose id lists are byte for byte
    /// the same (the common case: every row of a table holds the same columns) reads its
    /// values from those positions without walking its ids again. Each value's offsets are
    /// still checked, so the result — values and errors — is exactly `decode_into`'s.
    pub fn decode_into_cached<'a, T: From<Lookup<'a>>>(
        &self,
        data: &'a [u8],
        out: &mut [T],
        cache: &mut ShapeCache,
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
            self.walk::<Big, T>(header, out, cache)
        } else {
            self.walk::<Small, T>(header, out, cache)
        }
    }

    #[inline(always)]
    fn walk<'a, L: Layout, T: From<Lookup<'a>>>(
        &self,
        h: RawHeader<'a>,
        out: &mut [T],
        cache: &mut ShapeCache,
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
        let big = h.fl & FLAG_BIG != 0;
        // One wanted id is found by the walk's density guess about as fast as the cache
        // would compare the id lists.
        if !cache.enabled || self.wanted.len() < 2 {
            return self.walk_ids::<L>(nn, nl, ids, null_ids, offsets, values, |pos, slot| {
                put::<L, T>(out, pos, slot, offsets, values)
            });
        }
        if !cache.holds(big, nn, ids, null_ids) {
            cache.valid = false;
            cache.slots.clear();
            let slots = &mut cache.slots;
            self.walk_ids::<L>(nn, nl, ids, null_ids, offsets, values, |pos, slot| {
                slots.push((pos, slot));
                Ok(())
            })?;
            cache.big = big;
            cache.non_null = nn;
            cache.ids.clear();
            cache.ids.extend_from_slice(ids);
            cache.ids.extend_from_slice(null_ids);
            cache.valid = true;
        }
        for &(pos, slot) in &cache.slots {
            put::<L, T>(out, pos, slot, offsets, values)?;
        }
        Ok(())
    }

    /// Merges the wanted ids with the row's id lists, appending to `slots` where each
    /// wanted id is: its value's index among the non-NULL ids, NULL, or missing.
    #[inline(always)]
    #[expect(clippy::too_many_arguments, reason = "the row's areas, split once by the caller")]
    fn walk_ids<L: Layout>(
        &self,
        nn: usize,
        nl: usize,
        ids: &[u8],
        null_ids: &[u8],
        offsets: &[u8],
        values: &[u8],
        mut emit: impl FnMut(usize, Slot) -> Result<()>,
    ) -> Result<()> {
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
            let start = match p.checked_sub(1) {
                Some(k) => L::off(offsets, k),
                None => 0,
            };
            let Some(v) = values.get(start..L::off(offsets, p)) else {
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

/// Where a wanted id sits in a row, as [`Projection`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Missing,
    Null,
    /// Index of the value among the row's non-NULL ids.
    Value(usize),
}

/// The id layout of the last row a [`Projection`] walked, for
/// [`Projection::decode_into_cached`]: rows with the same id lists reuse the positions found.
#[derive(Debug, Clone)]
pub struct ShapeCache {
    /// False for [`decode_into`](Projection::decode_into), which keeps nothing.
    enabled: bool,
    /// True when the fields below describe a row walked without error.
    valid: bool,
    big: bool,
    non_null: usize,
    /// The row's non-NULL then NULL id areas, as stored.
    ids: Vec<u8>,
    /// `(caller position, where)` of every wanted id.
    slots: Vec<(usize, Slot)>,
}

impl Default for ShapeCache {
    fn default() -> Self {
        ShapeCache::new()
    }
}

impl ShapeCache {
    /// An empty cache.
    pub fn new() -> Self {
        ShapeCache {
            enabled: true,
            valid: false,
            big: false,
            non_null: 0,
            ids: Vec::new(),
            slots: Vec::new(),
        }
    }

    fn disabled() -> Self {
        ShapeCache { enabled: false, ..ShapeCache::new() }
    }

    /// True when the last row walked had exactly these id lists.
    #[inline]
    fn holds(&self, big: bool, nn: usize, ids: &[u8], null_ids: &[u8]) -> bool {
        self.valid
            && self.big == big
            && self.non_null == nn
            && self.ids.len() == ids.len() + null_ids.len()
            && self.ids.get(..ids.len()).is_some_and(|a| same_bytes(a, ids))
            && self.ids.get(ids.len()..).is_some_and(|a| same_bytes(a, null_ids))
    }
}

/// `a == b` for the short id lists of a row, eight bytes at a time (no `memcmp` call).
#[inline(always)]
fn same_bytes(mut a: &[u8], mut b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    while let (Some((x, ra)), Some((y, rb))) =
        (a.split_first_chunk::<8>(), b.split_first_chunk::<8>())
    {
        if x != y {
            return false;
        }
        (a, b) = (ra, rb);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
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
