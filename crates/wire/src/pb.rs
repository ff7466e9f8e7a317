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
