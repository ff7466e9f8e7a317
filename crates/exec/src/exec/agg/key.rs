//! Group keys of hash aggregation: an encoding per row where equal encodings are equal
//! values under the key's collation, packed into a `u128` when short.

use crate::column::{ColData, Scalar, VecCol};
use crate::expr::eval::Value;
use crate::types::{Collation, EvalType, FieldType};

/// Appends the group-key encoding of row `i` of `v` (equal keys ⇔ equal values under the
/// type's collation).
pub(crate) fn encode_key(
    v: &Value<'_>,
    i: usize,
    ft: &FieldType,
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) {
    let s;
    let col = match v {
        Value::Scalar(x) => {
            s = VecCol::broadcast(x_et(x), x, 1);
            return encode_key_col(&s, 0, ft, buf, scratch);
        }
        Value::Owned(c) => c,
        Value::Ref(c) => *c,
    };
    encode_key_col(col, i, ft, buf, scratch);
}

fn x_et(x: &Scalar) -> EvalType {
    match x {
        Scalar::Null | Scalar::Int(_) => EvalType::Int,
        Scalar::Real(_) => EvalType::Real,
        Scalar::Decimal(_) => EvalType::Decimal,
        Scalar::Bytes(_) => EvalType::Bytes,
        Scalar::DateTime(_) => EvalType::DateTime,
        Scalar::Duration(_) => EvalType::Duration,
        Scalar::Json(_) => EvalType::Json,
        Scalar::Enum(..) => EvalType::Enum,
        Scalar::Vector(_) => EvalType::VectorFloat32,
    }
}

fn encode_key_col(
    col: &VecCol,
    i: usize,
    ft: &FieldType,
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) {
    if !col.valid.get(i) {
        buf.push(0);
        return;
    }
    match &col.data {
        ColData::Int(d) => {
            buf.push(1);
            buf.extend_from_slice(&d.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        ColData::Real(d) => {
            buf.push(2);
            let x = d.get(i).copied().unwrap_or(0.0);
            let x = if x == 0.0 { 0.0 } else { x };
            buf.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        ColData::Decimal(_) | ColData::Fixed(_) => {
            buf.push(3);
            scratch.clear();
            if let Scalar::Decimal(x) = col.scalar_at(i) {
                x.write_str(scratch);
            }
            let mut t: &[u8] = scratch;
            if t.contains(&b'.') {
                while let [rest @ .., b'0'] = t {
                    t = rest;
                }
                if let [rest @ .., b'.'] = t {
                    t = rest;
                }
            }
            if t == b"-0" {
                t = b"0";
            }
            buf.extend_from_slice(&(t.len() as u32).to_le_bytes());
            buf.extend_from_slice(t);
        }
        ColData::Bytes(d) => {
            buf.push(4);
            let coll = ft.collation().unwrap_or(crate::types::Collation::Binary);
            let k = coll.key(d.get(i), scratch);
            buf.extend_from_slice(&(k.len() as u32).to_le_bytes());
            buf.extend_from_slice(k);
        }
        ColData::DateTime(d) => {
            buf.push(5);
            buf.extend_from_slice(&d.get(i).map_or(0, |t| t.to_packed_u64()).to_le_bytes());
        }
        ColData::Duration(d) => {
            buf.push(6);
            buf.extend_from_slice(&d.get(i).map_or(0, |t| t.nanos()).to_le_bytes());
        }
        // JSON groups by its binary form, ENUM by its member index (TiKV hashes both so).
        ColData::Json(d) => {
            buf.push(7);
            let b = d.get(i);
            buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
            buf.extend_from_slice(b);
        }
        ColData::Enum(d) => {
            buf.push(8);
            buf.extend_from_slice(d.get(i).get(..8).unwrap_or(&[0; 8]));
        }
        // Vectors group as TiKV's `OrderedFloat` elements hash: -0 as 0, every NaN as one.
        ColData::Vector(d) => {
            buf.push(9);
            let v = <crate::column::VecT as crate::column::Elem>::get(d, i);
            buf.extend_from_slice(&(v.len() as u32).to_le_bytes());
            for x in v.iter() {
                let x = if x == 0.0 {
                    0.0
                } else if x.is_nan() {
                    f32::NAN
                } else {
                    x
                };
                buf.extend_from_slice(&x.to_bits().to_le_bytes());
            }
        }
    }
}

/// Longest group-key encoding packed into a `u128` (the last byte holds the length).
pub(crate) const SHORT_KEY: usize = 15;

/// The group-key encoding `key` packed with its length into a `u128` when it has at most
/// [`SHORT_KEY`] bytes (distinct keys give distinct words).
#[inline]
pub(crate) fn pack_short_key(key: &[u8]) -> Option<u128> {
    let mut w = [0u8; 16];
    w.get_mut(..key.len()).filter(|_| key.len() <= SHORT_KEY)?.copy_from_slice(key);
    w[15] = key.len() as u8;
    Some(u128::from_le_bytes(w))
}

/// [`pack_short_key`] of the group-key encoding of row `i` of `keys` (collations `colls`),
/// built without the byte buffer when every key is a string or integer column value and the
/// encoding fits; `None` otherwise (the caller then encodes the general way).
///
/// The word is built in a register, never as bytes in memory read back as a word: that
/// read waits for the byte stores before it (a failed store forward), which was a fifth
/// of Q1's grouping time.
#[inline]
pub(crate) fn short_key(keys: &[Value<'_>], colls: &[Collation], i: usize) -> Option<u128> {
    let mut w = ShortKey::default();
    for (k, coll) in keys.iter().zip(colls) {
        let col = k.col()?;
        if !col.valid.get(i) {
            w.null()?;
            continue;
        }
        match &col.data {
            ColData::Bytes(d) => w.bytes(coll.byte_key(d.get(i))?)?,
            ColData::Int(d) => w.int(d.get(i).copied().unwrap_or(0))?,
            _ => return None,
        }
    }
    Some(w.word())
}

/// [`short_key`] of string keys given as their bytes (`None`: NULL), each compared under
/// its collation of `colls`: the word the same values decoded into columns give.
#[inline]
pub(crate) fn short_key_of_bytes(parts: &[Option<&[u8]>], colls: &[Collation]) -> Option<u128> {
    let mut w = ShortKey::default();
    for (p, coll) in parts.iter().zip(colls) {
        match p {
            None => w.null()?,
            Some(b) => w.bytes(coll.byte_key(b)?)?,
        }
    }
    Some(w.word())
}

/// A packed key being built: the word so far and the next byte to fill (byte `j` is bits
/// `8j..8j + 8`, as `u128::from_le_bytes` reads them). Each part is `None` once the key
/// passes [`SHORT_KEY`] bytes.
#[derive(Default)]
struct ShortKey {
    w: u128,
    at: usize,
}

impl ShortKey {
    /// A NULL: the byte 0, so nothing to set, one byte further.
    #[inline(always)]
    fn null(&mut self) -> Option<()> {
        self.at += 1;
        (self.at <= SHORT_KEY).then_some(())
    }

    /// A string's collation key `v`: the tag 4, the length as a little-endian u32, the bytes.
    #[inline(always)]
    fn bytes(&mut self, v: &[u8]) -> Option<()> {
        let end = self.at.checked_add(5 + v.len()).filter(|e| *e <= SHORT_KEY)?;
        let mut part = 4u128 | (v.len() as u128) << 8;
        for (j, &b) in v.iter().enumerate() {
            part |= u128::from(b) << (8 * (5 + j));
        }
        self.w |= part << (8 * self.at);
        self.at = end;
        Some(())
    }

    /// An integer: the tag 1, then the value as little-endian bytes.
    #[inline(always)]
    fn int(&mut self, x: i64) -> Option<()> {
        if self.at + 9 > SHORT_KEY {
            return None;
        }
        self.w |= (1u128 | u128::from(x as u64) << 8) << (8 * self.at);
        self.at += 9;
        Some(())
    }

    /// The packed key: the parts, and their length in the top byte.
    #[inline(always)]
    fn word(&self) -> u128 {
        self.w | (self.at as u128) << 120
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{BytesT, Elem, IntT};

    /// The general key: every key's byte encoding, packed when short.
    fn general(keys: &[Value<'_>], fts: &[FieldType], i: usize) -> Option<u128> {
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        for (k, ft) in keys.iter().zip(fts) {
            encode_key(k, i, ft, &mut buf, &mut scratch);
        }
        pack_short_key(&buf)
    }

    #[test]
    fn short_keys_equal_packed_general_keys() {
        let mut s = VecCol::new(EvalType::Bytes, 6);
        for v in [Some(&b"A"[..]), None, Some(b"a  "), Some(b"a"), Some(b""), Some(b"abcdefghijk")]
        {
            BytesT::push(&mut s, v);
        }
        let mut n = VecCol::new(EvalType::Int, 6);
        for v in [Some(-1), Some(7), None, Some(i64::MAX), Some(0), Some(1)] {
            IntT::push(&mut n, v);
        }
        let mut pad = FieldType::new(rcop_datum::chunk::mysql_type::STRING);
        pad.collate = -46;
        let bin = FieldType::new(rcop_datum::chunk::mysql_type::STRING);
        let int = FieldType::long_long();
        for (fts, cols) in [
            (vec![pad, pad], vec![&s, &s]),
            (vec![bin, bin], vec![&s, &s]),
            (vec![pad, int], vec![&s, &n]),
            (vec![int], vec![&n]),
        ] {
            let keys: Vec<Value<'_>> = cols.into_iter().map(Value::Ref).collect();
            let colls: Vec<Collation> = fts.iter().map(|f| f.collation().unwrap()).collect();
            for i in 0..6 {
                let fast = short_key(&keys, &colls, i);
                let want = general(&keys, &fts, i);
                // Same key whenever the fast path answers; it only declines long keys.
                if fast.is_some() || want.is_some() {
                    assert_eq!(fast, want, "row {i} {fts:?}");
                }
            }
        }
        // PAD SPACE: "a  " and "a" are one group; binary: two.
        let keys = [Value::Ref(&s)];
        let (p, b) = ([Collation::PadSpaceBin], [Collation::Binary]);
        assert_eq!(short_key(&keys, &p, 2), short_key(&keys, &p, 3));
        assert_ne!(short_key(&keys, &b, 2), short_key(&keys, &b, 3));
        // Eleven bytes do not fit beside their five-byte header (15 bytes at most).
        assert_eq!(short_key(&keys, &b, 5), None);
        // A scalar key takes the general path.
        assert_eq!(short_key(&[Value::Scalar(Scalar::Int(1))], &b, 0), None);
    }

    proptest::proptest! {
        /// Any mix of string (binary or PAD SPACE) and integer keys, NULLs included: the
        /// word built in a register is the packed general encoding, and it declines exactly
        /// the keys that encoding cannot pack.
        #[test]
        fn short_keys_are_packed_general_keys(
            cols in proptest::collection::vec(
                (proptest::bool::ANY, proptest::bool::ANY, proptest::collection::vec(
                    proptest::option::of((proptest::collection::vec(
                        proptest::prop_oneof![proptest::num::u8::ANY, proptest::strategy::Just(b' ')],
                        0..12,
                    ), proptest::num::i64::ANY)),
                    4,
                )),
                1..4,
            ),
        ) {
            let mut vecs = Vec::new();
            let mut fts = Vec::new();
            for (is_int, pad, rows) in &cols {
                let mut c = VecCol::new(if *is_int { EvalType::Int } else { EvalType::Bytes }, 4);
                for r in rows {
                    match (is_int, r) {
                        (true, r) => IntT::push(&mut c, r.as_ref().map(|(_, x)| *x)),
                        (false, r) => BytesT::push(&mut c, r.as_ref().map(|(b, _)| b.as_slice())),
                    }
                }
                vecs.push(c);
                let mut ft = if *is_int {
                    FieldType::long_long()
                } else {
                    FieldType::new(rcop_datum::chunk::mysql_type::STRING)
                };
                if *pad && !*is_int {
                    ft.collate = -46;
                }
                fts.push(ft);
            }
            let keys: Vec<Value<'_>> = vecs.iter().map(Value::Ref).collect();
            let colls: Vec<Collation> = fts.iter().map(|f| f.collation().unwrap()).collect();
            for i in 0..4 {
                proptest::prop_assert_eq!(short_key(&keys, &colls, i), general(&keys, &fts, i));
            }
        }
    }
}
