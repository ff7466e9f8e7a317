//! [`RowEncoder`]: builds v2 rows.

use super::*;

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
