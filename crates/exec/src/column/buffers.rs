//! The two buffers every column is made of: the validity bitmap and the byte-string arena.

use rcop_datum::JsonRef;

/// A validity bitmap: bit `i` set means row `i` is not NULL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bitmap {
    words: Vec<u64>,
    len: usize,
    nulls: usize,
}

impl Bitmap {
    /// An empty bitmap.
    pub fn new() -> Self {
        Bitmap::default()
    }

    /// An empty bitmap with room for `bits` rows.
    pub fn with_capacity(bits: usize) -> Self {
        Bitmap { words: Vec::with_capacity(bits.div_ceil(64)), len: 0, nulls: 0 }
    }

    /// `n` valid rows.
    pub fn all_valid(n: usize) -> Self {
        let mut b = Bitmap::new();
        b.push_n(true, n);
        b
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of NULL rows.
    #[inline]
    pub fn null_count(&self) -> usize {
        self.nulls
    }

    /// True when no row is NULL (the fast path).
    #[inline]
    pub fn no_nulls(&self) -> bool {
        self.nulls == 0
    }

    /// Removes every row.
    pub fn clear(&mut self) {
        self.words.clear();
        self.len = 0;
        self.nulls = 0;
    }

    /// Appends one row.
    #[inline]
    pub fn push(&mut self, valid: bool) {
        let bit = self.len % 64;
        if bit == 0 {
            self.words.push(0);
        }
        if valid {
            if let Some(w) = self.words.last_mut() {
                *w |= 1 << bit;
            }
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }

    /// Appends `n` rows of the same validity, a word at a time.
    #[inline]
    pub fn push_n(&mut self, valid: bool, n: usize) {
        let end = self.len + n;
        // Bits at and past `len` are always clear, so NULL rows need only the words.
        let words = end.div_ceil(64);
        if words > self.words.len() {
            self.words.resize(words, 0);
        }
        if valid {
            let mut i = self.len;
            while i < end {
                let bit = i % 64;
                let take = (64 - bit).min(end - i);
                let mask = if take == 64 { u64::MAX } else { ((1u64 << take) - 1) << bit };
                if let Some(w) = self.words.get_mut(i / 64) {
                    *w |= mask;
                }
                i += take;
            }
        } else {
            self.nulls += n;
        }
        self.len = end;
    }

    /// Whether row `i` is valid (out-of-range rows are NULL).
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Marks row `i` NULL.
    #[inline]
    pub fn set_null(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            let m = 1u64 << (i % 64);
            if *w & m != 0 {
                *w &= !m;
                self.nulls += 1;
            }
        }
    }

    /// Row-wise AND with `other` (same length): NULL wherever either is NULL.
    pub fn and_with(&mut self, other: &Bitmap) {
        if other.no_nulls() {
            return;
        }
        let mut nulls = 0;
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
            nulls += w.count_zeros() as usize;
        }
        let pad = self.words.len() * 64 - self.len;
        self.nulls = nulls - pad;
    }
}

/// Variable-length values stored back to back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BytesVec {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl BytesVec {
    /// An empty vector.
    pub const fn new() -> Self {
        BytesVec { data: Vec::new(), ends: Vec::new() }
    }

    /// An empty vector with room for `values` values of `bytes` bytes in all.
    pub fn with_capacity(values: usize, bytes: usize) -> Self {
        BytesVec { data: Vec::with_capacity(bytes), ends: Vec::with_capacity(values) }
    }

    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Appends a value.
    #[inline]
    pub fn push(&mut self, v: &[u8]) {
        self.data.extend_from_slice(v);
        self.ends.push(self.data.len());
    }

    /// Appends a value that `write` writes straight into the arena (no per-value buffer).
    /// When `write` returns `false` the bytes it wrote are dropped and an empty value is
    /// appended in its place (a NULL's slot); the result is `write`'s.
    #[inline]
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>) -> bool) -> bool {
        let start = self.data.len();
        let ok = write(&mut self.data);
        if !ok {
            self.data.truncate(start);
        }
        self.ends.push(self.data.len());
        ok
    }

    /// Appends a JSON value's binary form (type byte and body).
    #[inline]
    pub fn push_json(&mut self, j: JsonRef<'_>) {
        self.data.push(j.json_type().code());
        self.data.extend_from_slice(j.body());
        self.ends.push(self.data.len());
    }

    /// Appends an `ENUM` value in TypeChunk's layout (u64 LE index, then the name).
    #[inline]
    pub fn push_enum(&mut self, value: u64, name: &[u8]) {
        self.data.extend_from_slice(&value.to_le_bytes());
        self.data.extend_from_slice(name);
        self.ends.push(self.data.len());
    }

    /// The values `rows`, in that order (empty values for rows out of range).
    pub fn gather(&self, rows: &[u32]) -> BytesVec {
        let mut out = BytesVec { data: Vec::new(), ends: Vec::with_capacity(rows.len()) };
        for &r in rows {
            out.push(self.get(r as usize));
        }
        out
    }

    /// Keeps the values `rows` in place; `rows` strictly ascending and within the vector.
    pub(crate) fn retain_ascending(&mut self, rows: &[u32]) {
        let v = self;
        // Row `r` spans `ends[r - 1]..ends[r]`; each run of consecutive rows moves
        // its bytes with one `copy_within` and its ends down by the bytes dropped
        // before it. Writing `ends[j..]` cannot clobber an end still to be read: the
        // next run starts past this one plus a gap, so it reads beyond `ends[k - 1]`.
        let mut w = 0;
        let mut j = 0;
        while let Some(&first) = rows.get(j) {
            let start = first as usize;
            let mut k = j + 1;
            while rows.get(k).is_some_and(|&r| r as usize == start + (k - j)) {
                k += 1;
            }
            let run = k - j;
            let from = match start.checked_sub(1) {
                Some(p) => v.ends.get(p).copied().unwrap_or(0),
                None => 0,
            };
            let to = v.ends.get(start + run - 1).copied().unwrap_or(from).max(from);
            if from > w && to <= v.data.len() {
                v.data.copy_within(from..to, w);
            }
            let shift = from.saturating_sub(w);
            if start != j || shift != 0 {
                for t in 0..run {
                    if let Some(&e) = v.ends.get(start + t)
                        && let Some(d) = v.ends.get_mut(j + t)
                    {
                        *d = e.saturating_sub(shift);
                    }
                }
            }
            w += to - from;
            j = k;
        }
        v.ends.truncate(rows.len());
        v.data.truncate(w);
    }

    /// Value `i` (empty when out of range).
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.data.get(start..end).unwrap_or(&[])
    }
}
