//! Protobuf glue: length-prefixed messages in and out of the wire buffers.

use bytes::Bytes;
use prost::Message;

use crate::error::{Error, Field, Result};
use crate::read::u32_len;

/// Decodes a message from a slice of the received buffer. prost reads `bytes` fields of
/// [`Bytes`] type from a `Bytes` source without copying.
pub(crate) fn decode_message<M: Message + Default>(
    bytes: &Bytes,
    what: Field,
    offset: usize,
) -> Result<M> {
    M::decode(bytes.clone()).map_err(|source| Error::Protobuf { what, offset, source })
}

/// Appends `u32 LE len | bytes`.
pub(crate) fn put_u32_prefixed(buf: &mut Vec<u8>, what: Field, bytes: &[u8]) -> Result<()> {
    let len = u32_len(what, bytes.len())?;
    buf.reserve(bytes.len().saturating_add(4));
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(bytes);
    Ok(())
}

/// Appends `u32 LE len | message`, encoding the message straight into `buf`.
pub(crate) fn put_u32_prefixed_message<M: Message>(
    buf: &mut Vec<u8>,
    what: Field,
    message: &M,
) -> Result<()> {
    let encoded_len = message.encoded_len();
    let len = u32_len(what, encoded_len)?;
    buf.reserve(encoded_len.saturating_add(4));
    buf.extend_from_slice(&len.to_le_bytes());
    // A `Vec` grows on demand, so prost's capacity check cannot fail; map it all the same.
    message.encode(buf).map_err(|e| Error::TooLarge {
        what,
        len: e.required_capacity() as u64,
        max: e.remaining() as u64,
    })
}

/// Walks the top-level fields of the protobuf message `msg` without decoding it, calling
/// `visit(field number, payload of a length-delimited field)` for each (`None` payload for a
/// varint or fixed-width field). `None` when the bytes are not a well-formed message.
pub(crate) fn walk_fields(msg: &[u8], mut visit: impl FnMut(u32, Option<&[u8]>)) -> Option<()> {
    let mut at = 0usize;
    while at < msg.len() {
        let key = varint(msg, &mut at)?;
        let field = u32::try_from(key >> 3).ok().filter(|&f| f > 0)?;
        match key & 7 {
            0 => {
                varint(msg, &mut at)?;
                visit(field, None);
            }
            1 => {
                at = at.checked_add(8).filter(|&e| e <= msg.len())?;
                visit(field, None);
            }
            2 => {
                let len = usize::try_from(varint(msg, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|&e| e <= msg.len())?;
                visit(field, msg.get(at..end));
                at = end;
            }
            5 => {
                at = at.checked_add(4).filter(|&e| e <= msg.len())?;
                visit(field, None);
            }
            _ => return None,
        }
    }
    Some(())
}

fn varint(msg: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *msg.get(*at)?;
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(value);
        }
    }
    None
}

/// Occurrences of top-level field `field` in `msg` (0 for malformed bytes, which the decoder
/// then refuses).
pub(crate) fn count_field(msg: &[u8], field: u32) -> usize {
    let mut n = 0usize;
    let _ = walk_fields(msg, |f, _| n += usize::from(f == field));
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcop_proto::coprocessor::{KeyRange, Request};

    #[test]
    fn fields_are_counted_without_decoding() {
        let req = Request {
            tp: 103,
            data: Bytes::from_static(b"dag"),
            ranges: vec![KeyRange::default(); 5],
            start_ts: 9,
            ..Default::default()
        };
        let bytes = req.encode_to_vec();
        assert_eq!(count_field(&bytes, 4), 5);
        assert_eq!(count_field(&bytes, 3), 1);
        assert_eq!(count_field(&bytes, 12), 0);
        let mut fields = Vec::new();
        assert!(walk_fields(&bytes, |f, p| fields.push((f, p.map(<[u8]>::len)))).is_some());
        assert_eq!(fields.first(), Some(&(2, None)));
        assert!(walk_fields(&[0x1a, 0x05, 1], |_, _| {}).is_none(), "a length past the end");
        assert!(walk_fields(&[0x0b], |_, _| {}).is_none(), "a group");
        assert!(walk_fields(&[0xff; 11], |_, _| {}).is_none(), "an endless varint");
    }
}
