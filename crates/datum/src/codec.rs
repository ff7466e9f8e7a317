//! Byte-level primitives shared by every TiDB encoding.
//!
//! - comparable `i64` / `u64` / `f64`: 8 bytes big-endian whose byte order is the numeric
//!   order (`*_desc` variants invert every byte for descending order);
//! - varints: protobuf LEB128 for `u64`, zigzag for `i64`;
//! - memcomparable bytes: 8-byte groups each followed by a marker `0xFF - pad`;
//! - compact bytes: zigzag varint length then the raw bytes.
//!
//! Encoders append to a caller's `Vec<u8>`. Decoders read through a [`Reader`], which checks
//! every length and reports offsets.

use crate::error::{Error, Result};

/// A cursor over borrowed bytes. Every read checks the remaining length first.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading at the first byte of `data`.
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The unread bytes.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        // `pos <= data.len()` is an invariant of every method below.
        self.data.get(self.pos..).unwrap_or_default()
    }

    /// Number of unread bytes.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Reads the next `n` bytes.
    #[inline]
    pub fn read_bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let rest = self.rest();
        match rest.get(..n) {
            Some(b) => {
                self.pos += n;
                Ok(b)
            }
            None => Err(Error::Eof { what, need: n, have: rest.len() }),
        }
    }

    /// Reads a fixed-size array.
    #[inline]
    pub fn read_array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let b = self.read_bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// Reads one byte.
    #[inline]
    pub fn read_u8(&mut self, what: &'static str) -> Result<u8> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(Error::Eof { what, need: 1, have: 0 }),
        }
    }

    /// Looks at the next byte without consuming it.
    #[inline]
    pub fn peek_u8(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// Reads a big-endian u64.
    #[inline]
    pub fn read_u64_be(&mut self, what: &'static str) -> Result<u64> {
        self.read_array::<8>(what).map(u64::from_be_bytes)
    }

    /// Reads a little-endian u16.
    #[inline]
    pub fn read_u16_le(&mut self, what: &'static str) -> Result<u16> {
        self.read_array::<2>(what).map(u16::from_le_bytes)
    }

    /// Reads a little-endian u32.
    #[inline]
    pub fn read_u32_le(&mut self, what: &'static str) -> Result<u32> {
        self.read_array::<4>(what).map(u32::from_le_bytes)
    }

    /// Reads a little-endian u64.
    #[inline]
    pub fn read_u64_le(&mut self, what: &'static str) -> Result<u64> {
        self.read_array::<8>(what).map(u64::from_le_bytes)
    }
}

const SIGN_MASK: u64 = 1 << 63;

// ---------------------------------------------------------------------------------------------
// Comparable numbers

/// Maps an `i64` to a `u64` whose unsigned order is the signed order.
#[inline]
pub fn i64_to_comparable(v: i64) -> u64 {
    (v as u64) ^ SIGN_MASK
}

/// Inverse of [`i64_to_comparable`].
#[inline]
pub fn comparable_to_i64(u: u64) -> i64 {
    (u ^ SIGN_MASK) as i64
}

/// Maps an `f64` to a `u64` whose unsigned order is the numeric order (-0.0 sorts just below
/// +0.0, as in TiDB).
#[inline]
pub fn f64_to_comparable(v: f64) -> u64 {
    let u = v.to_bits();
    if u & SIGN_MASK == 0 { u | SIGN_MASK } else { !u }
}

/// Inverse of [`f64_to_comparable`].
#[inline]
pub fn comparable_to_f64(u: u64) -> f64 {
    let bits = if u & SIGN_MASK != 0 { u & !SIGN_MASK } else { !u };
    f64::from_bits(bits)
}

/// Appends a comparable i64 (ascending).
#[inline]
pub fn encode_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&i64_to_comparable(v).to_be_bytes());
}

/// Appends a comparable i64 (descending).
#[inline]
pub fn encode_i64_desc(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&(!i64_to_comparable(v)).to_be_bytes());
}

/// Reads a comparable i64 (ascending).
#[inline]
pub fn decode_i64(r: &mut Reader<'_>) -> Result<i64> {
    r.read_u64_be("comparable i64").map(comparable_to_i64)
}

/// Reads a comparable i64 (descending).
#[inline]
pub fn decode_i64_desc(r: &mut Reader<'_>) -> Result<i64> {
    r.read_u64_be("comparable i64").map(|u| comparable_to_i64(!u))
}

/// Appends a comparable u64 (ascending): plain big-endian.
#[inline]
pub fn encode_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a comparable u64 (descending).
#[inline]
pub fn encode_u64_desc(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&(!v).to_be_bytes());
}

/// Reads a comparable u64 (ascending).
#[inline]
pub fn decode_u64(r: &mut Reader<'_>) -> Result<u64> {
    r.read_u64_be("comparable u64")
}

/// Reads a comparable u64 (descending).
#[inline]
pub fn decode_u64_desc(r: &mut Reader<'_>) -> Result<u64> {
    r.read_u64_be("comparable u64").map(|u| !u)
}

/// Appends a comparable f64 (ascending).
#[inline]
pub fn encode_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&f64_to_comparable(v).to_be_bytes());
}

/// Appends a comparable f64 (descending).
#[inline]
pub fn encode_f64_desc(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&(!f64_to_comparable(v)).to_be_bytes());
}

/// Reads a comparable f64 (ascending).
#[inline]
pub fn decode_f64(r: &mut Reader<'_>) -> Result<f64> {
    r.read_u64_be("comparable f64").map(comparable_to_f64)
}

/// Reads a comparable f64 (descending).
#[inline]
pub fn decode_f64_desc(r: &mut Reader<'_>) -> Result<f64> {
    r.read_u64_be("comparable f64").map(|u| comparable_to_f64(!u))
}

// ---------------------------------------------------------------------------------------------
// Varints

/// Maximum encoded length of a 64-bit varint.
pub const MAX_VARINT_LEN: usize = 10;

/// Appends `v` as a protobuf varint (LEB128).
#[inline]
pub fn encode_var_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded as a varint (Go's `binary.PutVarint`).
#[inline]
pub fn encode_var_i64(out: &mut Vec<u8>, v: i64) {
    encode_var_u64(out, zigzag(v));
}

/// Zigzag mapping: 0, -1, 1, -2 … → 0, 1, 2, 3 …
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Reads a protobuf varint. Rejects encodings longer than 10 bytes and values over 64 bits.
#[inline]
pub fn decode_var_u64(r: &mut Reader<'_>) -> Result<u64> {
    let start = r.pos();
    let rest = r.rest();
    let mut v: u64 = 0;
    for (i, &b) in rest.iter().enumerate().take(MAX_VARINT_LEN) {
        if i == MAX_VARINT_LEN - 1 && b > 1 {
            return Err(Error::BadVarint { offset: start });
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            r.pos += i + 1;
            return Ok(v);
        }
    }
    if rest.len() < MAX_VARINT_LEN {
        Err(Error::Eof { what: "varint", need: rest.len() + 1, have: rest.len() })
    } else {
        Err(Error::BadVarint { offset: start })
    }
}

/// Reads a zigzag varint.
#[inline]
pub fn decode_var_i64(r: &mut Reader<'_>) -> Result<i64> {
    decode_var_u64(r).map(unzigzag)
}

// ---------------------------------------------------------------------------------------------
// Memcomparable bytes

const GROUP: usize = 8;
const MARKER: u8 = 0xFF;
const PAD: u8 = 0x00;

/// Encoded length of `len` input bytes in memcomparable form.
#[inline]
pub fn memcomparable_len(len: usize) -> usize {
    (len / GROUP + 1) * (GROUP + 1)
}

/// Appends `data` in memcomparable form (ascending).
pub fn encode_bytes(out: &mut Vec<u8>, data: &[u8]) {
    out.reserve(memcomparable_len(data.len()));
    let mut chunks = data.chunks_exact(GROUP);
    for c in &mut chunks {
        out.extend_from_slice(c);
        out.push(MARKER);
    }
    let tail = chunks.remainder();
    let pad = GROUP - tail.len();
    out.extend_from_slice(tail);
    out.extend(std::iter::repeat_n(PAD, pad));
    out.push(MARKER - pad as u8);
}

/// Appends `data` in memcomparable form (descending): every byte inverted.
pub fn encode_bytes_desc(out: &mut Vec<u8>, data: &[u8]) {
    let start = out.len();
    encode_bytes(out, data);
    for b in &mut out[start..] {
        *b = !*b;
    }
}

fn decode_bytes_impl(r: &mut Reader<'_>, out: &mut Vec<u8>, desc: bool) -> Result<()> {
    let flip = if desc { 0xFF } else { 0x00 };
    loop {
        let offset = r.pos();
        let group = r.read_bytes(GROUP + 1, "memcomparable group")?;
        let marker = group[GROUP] ^ flip;
        let pad = usize::from(MARKER - marker);
        if pad > GROUP {
            return Err(Error::BadMemcomparable { offset, reason: "group marker out of range" });
        }
        let real = GROUP - pad;
        out.extend(group[..real].iter().map(|b| b ^ flip));
        if pad != 0 {
            if group[real..GROUP].iter().any(|&b| b ^ flip != PAD) {
                return Err(Error::BadMemcomparable { offset, reason: "non-zero padding" });
            }
            return Ok(());
        }
    }
}

/// Reads memcomparable bytes (ascending), appending the decoded bytes to `out`.
pub fn decode_bytes_into(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<()> {
    decode_bytes_impl(r, out, false)
}

/// Reads memcomparable bytes (descending), appending the decoded bytes to `out`.
pub fn decode_bytes_desc_into(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<()> {
    decode_bytes_impl(r, out, true)
}

/// Reads memcomparable bytes (ascending) into a new vector.
pub fn decode_bytes(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_bytes_into(r, &mut out)?;
    Ok(out)
}

/// Reads memcomparable bytes (descending) into a new vector.
pub fn decode_bytes_desc(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_bytes_desc_into(r, &mut out)?;
    Ok(out)
}

/// Skips one memcomparable-encoded value (ascending or descending, `desc` says which) and
/// returns its encoded bytes, validating markers and padding without copying.
pub fn skip_bytes<'a>(r: &mut Reader<'a>, desc: bool) -> Result<&'a [u8]> {
    let flip = if desc { 0xFF } else { 0x00 };
    let all = r.rest();
    let start = r.pos();
    loop {
        let offset = r.pos();
        let group = r.read_bytes(GROUP + 1, "memcomparable group")?;
        let marker = group[GROUP] ^ flip;
        let pad = usize::from(MARKER - marker);
        if pad > GROUP {
            return Err(Error::BadMemcomparable { offset, reason: "group marker out of range" });
        }
        if pad != 0 {
            if group[GROUP - pad..GROUP].iter().any(|&b| b ^ flip != PAD) {
                return Err(Error::BadMemcomparable { offset, reason: "non-zero padding" });
            }
            let len = r.pos() - start;
            return Ok(&all[..len]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Compact bytes

/// Appends `data` as compact bytes: zigzag varint length, then the bytes.
#[inline]
pub fn encode_compact_bytes(out: &mut Vec<u8>, data: &[u8]) {
    encode_var_i64(out, data.len() as i64);
    out.extend_from_slice(data);
}

/// Reads compact bytes, borrowing them from the input.
#[inline]
pub fn decode_compact_bytes<'a>(r: &mut Reader<'a>) -> Result<&'a [u8]> {
    let len = decode_var_i64(r)?;
    let n = usize::try_from(len)
        .ok()
        .filter(|&n| n <= r.remaining())
        .ok_or(Error::BadLength { what: "compact bytes", len })?;
    r.read_bytes(n, "compact bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
        let mut v = Vec::new();
        f(&mut v);
        v
    }

    #[test]
    fn comparable_numbers() {
        assert_eq!(enc(|o| encode_i64(o, 0)), hex::decode("8000000000000000").unwrap());
        assert_eq!(enc(|o| encode_i64(o, -1)), hex::decode("7fffffffffffffff").unwrap());
        assert_eq!(enc(|o| encode_f64(o, 0.0)), hex::decode("8000000000000000").unwrap());
        assert_eq!(enc(|o| encode_f64(o, -0.0)), hex::decode("7fffffffffffffff").unwrap());
        assert_eq!(enc(|o| encode_f64(o, 1.0)), hex::decode("bff0000000000000").unwrap());
        assert_eq!(enc(|o| encode_f64(o, 1.8)), hex::decode("bffccccccccccccd").unwrap());
        assert_eq!(enc(|o| encode_f64(o, -1.8)), hex::decode("4003333333333332").unwrap());
    }

    #[test]
    fn varints() {
        assert_eq!(
            enc(|o| encode_var_u64(o, 0xDEAD_BEEF_BAAD)),
            [0xAD, 0xF5, 0xBE, 0xF7, 0xDB, 0xD5, 0x37]
        );
        assert_eq!(enc(|o| encode_var_i64(o, -1)), [0x01]);
        assert_eq!(enc(|o| encode_var_i64(o, 1)), [0x02]);
        assert_eq!(enc(|o| encode_var_i64(o, 300)), [0xD8, 0x04]);
        let max = enc(|o| encode_var_u64(o, u64::MAX));
        assert_eq!(max.len(), 10);
        assert_eq!(decode_var_u64(&mut Reader::new(&max)).unwrap(), u64::MAX);
        // An 11th continuation byte, or a 10th byte carrying more than one bit, is invalid.
        let bad = [0xFFu8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02];
        assert!(matches!(decode_var_u64(&mut Reader::new(&bad)), Err(Error::BadVarint { .. })));
        let bad = [0x80u8; 11];
        assert!(decode_var_u64(&mut Reader::new(&bad)).is_err());
        assert!(matches!(decode_var_u64(&mut Reader::new(&[0x80])), Err(Error::Eof { .. })));
        assert!(decode_var_u64(&mut Reader::new(&[])).is_err());
    }

    #[test]
    fn compact_bytes() {
        assert_eq!(
            enc(|o| encode_compact_bytes(o, b"hello")),
            hex::decode("0a68656c6c6f").unwrap()
        );
        let mut r = Reader::new(&[0x0a, b'h']);
        assert!(decode_compact_bytes(&mut r).is_err());
        // negative length
        let mut r = Reader::new(&[0x01]);
        assert!(matches!(decode_compact_bytes(&mut r), Err(Error::BadLength { len: -1, .. })));
    }
}
