//! Encryption and compression functions: `MD5`, `SHA1`, `SHA2`, `PASSWORD`, `RANDOM_BYTES`,
//! `COMPRESS`, `UNCOMPRESS`, `UNCOMPRESSED_LENGTH`.
//!
//! `COMPRESS` writes MySQL's format — the length as 4 little-endian bytes (its top two bits
//! clear), then the zlib stream, then a `.` when the stream ends in a space — at zlib's
//! default level, but through `miniz_oxide` rather than zlib itself, so its bytes may differ
//! from MySQL's for the same input (both are valid zlib streams that MySQL and this engine
//! `UNCOMPRESS` alike). `UNCOMPRESS` never allocates more than the length the input declares,
//! and a declared length beyond `max_allowed_packet` is NULL with MySQL's warning.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

use crate::column::{BytesT, Elem, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::{map1, map1_infallible, map2};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

/// MySQL's `ER_TOO_BIG_FOR_UNCOMPRESS`.
pub const ER_TOO_BIG_FOR_UNCOMPRESS: i32 = 1256;
/// MySQL's `ER_ZLIB_Z_DATA_ERROR`.
pub const ER_ZLIB_Z_DATA_ERROR: i32 = 1259;
/// MySQL's `ER_ZLIB_Z_BUF_ERROR`.
pub const ER_ZLIB_Z_BUF_ERROR: i32 = 1258;
/// MySQL's `ER_WARN_DEPRECATED_SYNTAX_NO_REPLACEMENT` (what TiDB warns for `PASSWORD`).
pub const ER_WARN_DEPRECATED_SYNTAX_NO_REPLACEMENT: i32 = 1681;
/// Longest `RANDOM_BYTES` result.
pub const MAX_RANDOM_BYTES: i64 = 1024;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes as B, Int as I};
    r.add(4503, Args::same(B, 1), B, compress);
    r.add(4504, Args::same(B, 1), B, md5);
    r.add(4505, Args::same(B, 1), B, password);
    r.add(4506, Args::same(I, 1), B, random_bytes);
    r.add(4507, Args::same(B, 1), B, sha1);
    r.add(4508, Args::fixed(&[B, I]), B, sha2);
    r.add(4509, Args::same(B, 1), B, uncompress);
    r.add(4510, Args::same(B, 1), I, uncompressed_length);
}

/// Lowercase hex, as MySQL's digest functions print.
pub fn hex_lower(b: &[u8]) -> Vec<u8> {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(b.len() * 2);
    for &x in b {
        out.push(H[usize::from(x >> 4)]);
        out.push(H[usize::from(x & 15)]);
    }
    out
}

fn md5(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<BytesT, BytesT>(c.n, c.typed(0)?, |v| Some(hex_lower(&md5::Md5::digest(v))))
}

fn sha1(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<BytesT, BytesT>(c.n, c.typed(0)?, |v| Some(hex_lower(&Sha1::digest(v))))
}

/// MySQL's `ER_WRONG_PARAMETERS_TO_NATIVE_FCT`.
pub const ER_WRONG_PARAMETERS_TO_NATIVE_FCT: i32 = 1583;

/// `SHA2(str, bits)`: 0 means 256; any length but 224, 256, 384, 512 is NULL with MySQL's
/// warning (TiKV gives the NULL without it).
fn sha2(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<BytesT, IntT, BytesT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |v, bits, ctx| {
        Ok(match bits {
            224 => Some(hex_lower(&Sha224::digest(v))),
            0 | 256 => Some(hex_lower(&Sha256::digest(v))),
            384 => Some(hex_lower(&Sha384::digest(v))),
            512 => Some(hex_lower(&Sha512::digest(v))),
            _ => {
                ctx.warn(&Error::eval(
                    ER_WRONG_PARAMETERS_TO_NATIVE_FCT,
                    "Incorrect parameters in the call to native function 'sha2'",
                ));
                None
            }
        })
    })
}

/// `PASSWORD(str)`: MySQL 4.1's hash, `*` and the uppercase hex of SHA1(SHA1(str)); the
/// empty string and NULL hash to the empty string (as MySQL 5.7, MariaDB and TiKV). TiDB
/// warns that it is deprecated.
fn password(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    for i in 0..c.n {
        ctx.warn(&Error::eval(
            ER_WARN_DEPRECATED_SYNTAX_NO_REPLACEMENT,
            "'PASSWORD' is deprecated and will be removed in a future release.",
        ));
        BytesT::push(&mut out, Some(&password_one(a.get(i).unwrap_or(b""))));
    }
    Ok(out)
}

/// One `PASSWORD`: NULL and the empty string hash to the empty string.
pub fn password_one(v: &[u8]) -> Vec<u8> {
    if v.is_empty() {
        return Vec::new();
    }
    let h = Sha1::digest(Sha1::digest(v));
    let mut out = Vec::with_capacity(41);
    out.push(b'*');
    out.extend(hex_lower(&h).to_ascii_uppercase());
    out
}

/// `RANDOM_BYTES(len)`: `len` bytes from the OS's secure source; a length outside 1..=1024
/// is MySQL's out-of-range error.
fn random_bytes(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<IntT, BytesT>(c.n, c.typed(0)?, ctx, |len, _| {
        if !(1..=MAX_RANDOM_BYTES).contains(&len) {
            return Err(Error::Overflow("length"));
        }
        let mut b = vec![0u8; len as usize];
        getrandom::fill(&mut b)
            .map_err(|e| Error::eval(1105, format!("random_bytes: no random source: {e}")))?;
        Ok(Some(b))
    })
}

/// `COMPRESS(str)` in MySQL's format; the empty string stays empty.
///
/// MySQL calls zlib's `compress()`: one deflate stream at the default level, fed the whole
/// input with `Z_FINISH`. The engine does the same through zlib itself (flate2's `zlib`
/// backend, zlib built from source), so the bytes are MySQL's, not just inflatable.
pub fn compress_one(v: &[u8]) -> Result<Vec<u8>> {
    if v.is_empty() {
        return Ok(Vec::new());
    }
    let len = u32::try_from(v.len()).unwrap_or(u32::MAX) & 0x3FFF_FFFF;
    // zlib's compressBound: the stream never needs more than this.
    let bound = v.len().saturating_add(v.len() >> 12).saturating_add(v.len() >> 14);
    let bound = bound.saturating_add(v.len() >> 25).saturating_add(13 + 4 + 1);
    let mut out = Vec::with_capacity(bound);
    out.extend_from_slice(&len.to_le_bytes());
    let mut z = Compress::new(Compression::default(), true);
    loop {
        let read = usize::try_from(z.total_in()).unwrap_or(usize::MAX);
        let rest = v.get(read..).unwrap_or_default();
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(64));
        }
        let status = z
            .compress_vec(rest, &mut out, FlushCompress::Finish)
            .map_err(|e| Error::eval(ER_ZLIB_Z_BUF_ERROR, format!("compress: {e}")))?;
        if status == Status::StreamEnd {
            break;
        }
    }
    if out.last() == Some(&b' ') {
        out.push(b'.');
    }
    Ok(out)
}

fn compress(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<BytesT, BytesT>(c.n, c.typed(0)?, ctx, |v, _| compress_one(v).map(Some))
}

/// The length an input of `UNCOMPRESS` declares, or `None` when it is too short (≤ 4 bytes).
fn declared_len(v: &[u8]) -> Option<u64> {
    match v {
        [a, b, c, d, _, ..] => Some(u64::from(u32::from_le_bytes([*a, *b, *c, *d]) & 0x3FFF_FFFF)),
        _ => None,
    }
}

/// `UNCOMPRESS(str)`: `Err` is the warning MySQL gives with its NULL.
pub fn uncompress_one(v: &[u8], max_allowed_packet: u64) -> std::result::Result<Vec<u8>, Error> {
    if v.is_empty() {
        return Ok(Vec::new());
    }
    let data_err = || Error::eval(ER_ZLIB_Z_DATA_ERROR, "ZLIB: Input data corrupted");
    let buf_err = || Error::eval(ER_ZLIB_Z_BUF_ERROR, "ZLIB: Not enough room in the output buffer");
    let want = declared_len(v).ok_or_else(data_err)?;
    if want > max_allowed_packet {
        return Err(Error::eval(
            ER_TOO_BIG_FOR_UNCOMPRESS,
            format!(
                "Uncompressed data size too large; the maximum size is {max_allowed_packet} \
                 (probably, length of uncompressed data was corrupted)"
            ),
        ));
    }
    let want = usize::try_from(want).map_err(|_| buf_err())?;
    let input = v.get(4..).unwrap_or(&[]);
    let mut d = Decompress::new(true);
    // Grow toward the declared length only as output arrives.
    let mut out: Vec<u8> = Vec::new();
    loop {
        let consumed = usize::try_from(d.total_in()).unwrap_or(usize::MAX);
        let rest = input.get(consumed..).unwrap_or(&[]);
        let room = want.saturating_sub(out.len());
        if room == 0 {
            // Full: the stream must end here, without more output.
            let mut probe = Vec::with_capacity(1);
            return match d.decompress_vec(rest, &mut probe, FlushDecompress::None) {
                Ok(Status::StreamEnd) if probe.is_empty() => Ok(out),
                Ok(_) if !probe.is_empty() => Err(buf_err()),
                _ => Err(data_err()),
            };
        }
        if out.len() == out.capacity() {
            out.reserve_exact(out.len().max(4096).min(room));
        }
        let before = (d.total_in(), d.total_out());
        // `Finish` would ask miniz for one-shot output into the room given; grow instead.
        let status = d.decompress_vec(rest, &mut out, FlushDecompress::None);
        if out.len() > want {
            return Err(buf_err());
        }
        match status {
            Ok(Status::StreamEnd) => return Ok(out),
            // No progress with room left: the input ended early.
            Ok(_) if (d.total_in(), d.total_out()) == before => return Err(data_err()),
            Ok(_) => {}
            Err(_) => return Err(data_err()),
        }
    }
}

fn uncompress(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let max = ctx.cfg.max_allowed_packet;
    map1::<BytesT, BytesT>(c.n, c.typed(0)?, ctx, |v, ctx| match uncompress_one(v, max) {
        Ok(o) => Ok(Some(o)),
        Err(w) => {
            ctx.warn(&w);
            Ok(None)
        }
    })
}

fn uncompressed_length(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<BytesT, IntT>(c.n, c.typed(0)?, ctx, |v, ctx| {
        if v.is_empty() {
            return Ok(Some(0));
        }
        match declared_len(v) {
            Some(n) => Ok(Some(n as i64)),
            None => {
                ctx.warn(&Error::eval(ER_ZLIB_Z_DATA_ERROR, "ZLIB: Input data corrupted"));
                Ok(Some(0))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_round_trips_in_mysqls_format() {
        for v in [&b"a"[..], b"hello hello hello hello", b" ", &[0u8; 5000]] {
            let z = compress_one(v).unwrap();
            assert_eq!(declared_len(&z), Some(v.len() as u64));
            assert_eq!(uncompress_one(&z, 1 << 20).unwrap(), v);
        }
        assert_eq!(compress_one(b"").unwrap(), b"");
        let z = compress_one(&[7u8; 100]).unwrap();
        assert!(uncompress_one(&z, 99).is_err(), "beyond max_allowed_packet");
        assert!(uncompress_one(&z[..z.len() - 3], 1 << 20).is_err(), "truncated");
        let mut short = z.clone();
        short[0] = 50; // declares fewer bytes than the stream holds
        assert!(uncompress_one(&short, 1 << 20).is_err());
        assert!(uncompress_one(b"\x01\x00\x00\x00", 1 << 20).is_err());
    }
}
