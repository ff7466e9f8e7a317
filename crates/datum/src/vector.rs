//! TiDB's `VECTOR(FLOAT32)` (`mysql.TypeTiDBVectorFloat32`, 0xE1), as TiKV ≥ v8.4 reads it.
//!
//! The binary form (TiDB `pkg/types/vector.go` `SerializeTo`, TiKV `codec/mysql/vector.rs`
//! `write_vector_float32`) is a `u32` little-endian element count followed by that many
//! little-endian `f32`s. The same bytes are the row v2 value, the payload after datum flag
//! [`crate::datum::flag::VECTOR_FLOAT32`] (20), and the TypeChunk cell.
//!
//! ```
//! use rcop_datum::vector::VectorRef;
//!
//! let b = [2, 0, 0, 0, 0xcd, 0xcc, 0x8c, 0x3f, 0xcd, 0xcc, 0x0c, 0x40];
//! let v = VectorRef::decode(&b).unwrap();
//! assert_eq!(v.len(), 2);
//! assert_eq!(v.to_text(), "[1.1,2.2]");
//! ```

use std::cmp::Ordering;
use std::fmt::Write as _;

use crate::codec::Reader;
use crate::error::{Error, Result};

/// Bytes of one element.
const ELEM: usize = 4;

/// A vector borrowed from its binary form (count prefix included), validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorRef<'a> {
    /// The whole binary form: count, then the elements.
    bytes: &'a [u8],
}

impl<'a> VectorRef<'a> {
    /// The empty vector (`[]`), the content of NULL slots.
    pub const EMPTY: VectorRef<'static> = VectorRef { bytes: &[0, 0, 0, 0] };

    /// Reads a whole value: the count and exactly that many elements. Empty input is the
    /// empty vector, as TiKV's `read_vector_float32_ref` reads it.
    ///
    /// # Errors
    ///
    /// [`Error::Eof`] when the elements are cut short, [`Error::Invalid`] on bytes after
    /// them.
    pub fn decode(b: &'a [u8]) -> Result<VectorRef<'a>> {
        if b.is_empty() {
            return Ok(VectorRef::EMPTY);
        }
        let (v, n) = VectorRef::decode_prefix(b)?;
        if n != b.len() {
            return Err(Error::Invalid { what: "vector", reason: "bytes after the elements" });
        }
        Ok(v)
    }

    /// Reads a value at the start of `b` (a datum payload), returning it and its length.
    ///
    /// # Errors
    ///
    /// [`Error::Eof`] when the count or the elements are cut short.
    pub fn decode_prefix(b: &'a [u8]) -> Result<(VectorRef<'a>, usize)> {
        let mut r = Reader::new(b);
        let n = r.read_u32_le("vector length")? as usize;
        let size = n
            .checked_mul(ELEM)
            .ok_or(Error::BadLength { what: "vector", len: i64::from(n as u32) })?;
        r.read_bytes(size, "vector elements")?;
        let end = r.pos();
        let bytes = b.get(..end).ok_or(Error::Eof { what: "vector", need: end, have: b.len() })?;
        Ok((VectorRef { bytes }, end))
    }

    /// The binary form (count and elements).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len().saturating_sub(ELEM) / ELEM
    }

    /// True for `[]`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = f32> + 'a {
        let data = self.bytes.get(ELEM..).unwrap_or_default();
        data.chunks_exact(ELEM).map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; ELEM])))
    }

    /// TiKV's text form (`VectorFloat32Ref`'s `Display`): `[` elements `]`, each as Rust
    /// prints an `f32` (shortest round-trip, no exponent), joined by `,`.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(2 + self.len() * 4);
        s.push('[');
        for (i, x) in self.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(s, "{x}");
        }
        s.push(']');
        s
    }

    /// TiKV's order (`VectorFloat32` derives `Ord` over `OrderedFloat<f32>` elements):
    /// element by element, `-0 = 0`, NaN above everything and equal to itself; a proper
    /// prefix sorts first.
    pub fn cmp_vec(&self, other: &VectorRef<'_>) -> Ordering {
        let (mut a, mut b) = (self.iter(), other.iter());
        loop {
            match (a.next(), b.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) => {
                    let o = match (x.is_nan(), y.is_nan()) {
                        (true, true) => Ordering::Equal,
                        (true, false) => Ordering::Greater,
                        (false, true) => Ordering::Less,
                        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
                    };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
            }
        }
    }
}

/// Appends the binary form of `elems` to `out`.
///
/// # Errors
///
/// [`Error::Overflow`] past `u32::MAX` elements.
pub fn encode_vector(elems: &[f32], out: &mut Vec<u8>) -> Result<()> {
    let n = u32::try_from(elems.len()).map_err(|_| Error::Overflow { what: "vector" })?;
    out.extend_from_slice(&n.to_le_bytes());
    for x in elems {
        out.extend_from_slice(&x.to_le_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TiKV `vector.rs` `test_encode` / `test_decode` and `test_to_string`.
    #[test]
    fn tikv_vectors() {
        let mut b = Vec::new();
        encode_vector(&[1.1, 2.2], &mut b).unwrap();
        assert_eq!(hex::encode(&b), "02000000cdcc8c3fcdcc0c40");
        let v = VectorRef::decode(&b).unwrap();
        assert_eq!((v.len(), v.to_text()), (2, "[1.1,2.2]".to_owned()));
        let mut tail = b.clone();
        tail.push(0xFF);
        assert_eq!(VectorRef::decode_prefix(&tail).unwrap().1, 12);
        assert!(VectorRef::decode(&tail).is_err());
        assert!(VectorRef::decode_prefix(&[0xFF]).is_err());
        let e = VectorRef::decode(&[]).unwrap();
        assert_eq!((e.len(), e.to_text(), e.as_bytes()), (0, "[]".to_owned(), &[0u8; 4][..]));
        let mut b = Vec::new();
        encode_vector(&[1.0, 2.0], &mut b).unwrap();
        assert_eq!(VectorRef::decode(&b).unwrap().to_text(), "[1,2]");
    }

    /// TiKV `vector.rs` `test_compare`.
    #[test]
    fn order() {
        let enc = |x: &[f32]| {
            let mut b = Vec::new();
            encode_vector(x, &mut b).unwrap();
            b
        };
        let (v1, v2, v4, v5, v6) = (
            enc(&[1.0, 2.0]),
            enc(&[1.1, 2.2]),
            enc(&[0.3, 0.4]),
            enc(&[1.0]),
            enc(&[1.0, 2.0, 0.5]),
        );
        let c = |a: &[u8], b: &[u8]| {
            VectorRef::decode(a).unwrap().cmp_vec(&VectorRef::decode(b).unwrap())
        };
        assert_eq!(c(&v1, &v2), Ordering::Less);
        assert_eq!(c(&v1, &v1), Ordering::Equal);
        assert_eq!(c(&v1, &v4), Ordering::Greater);
        assert_eq!(c(&v1, &v5), Ordering::Greater);
        assert_eq!(c(&v1, &v6), Ordering::Less);
        assert_eq!(c(&enc(&[-0.0]), &enc(&[0.0])), Ordering::Equal);
        assert_eq!(c(&enc(&[f32::NAN]), &enc(&[f32::INFINITY])), Ordering::Greater);
    }

    proptest::proptest! {
        /// Any bytes: a typed error or a vector whose binary form is the input.
        #[test]
        fn random_bytes_never_panic(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
            if let Ok(v) = VectorRef::decode(&b) {
                if !b.is_empty() {
                    proptest::prop_assert_eq!(v.as_bytes(), &b[..]);
                }
                let _ = v.to_text();
            }
        }
    }
}
