//! The request envelope. Format 1 (upstream's):
//!
//! ```text
//! u32 LE 1 | u32 LE len | coprocessor.Request | u32 LE len | mem-data | u32 LE len | enginepb.ChangeSet
//! ```
//!
//! Format 2 (ours) is format 1 with the number 2, followed by the crc32c of each part:
//!
//! ```text
//! u32 LE 2 | … as format 1 … | u32 LE crc32c(request) | u32 LE crc32c(mem-data) | u32 LE crc32c(change set)
//! ```
//!
//! A flipped bit inside a protobuf part can still decode (a tag that turns a table's level
//! into its column family, a length that skips a table): only a checksum tells.

use bytes::Bytes;
use rcop_proto::coprocessor::Request;
use rcop_proto::enginepb::ChangeSet;

use crate::consts::{ENVELOPE_FORMAT_V1, ENVELOPE_FORMAT_V2};
use crate::error::{Error, Field, Result};
use crate::mem_data::{MemData, MemDataFormat, MemDataWriter};
use crate::pb::{
    count_field, decode_message, put_u32_prefixed, put_u32_prefixed_message, walk_fields,
};

/// Most key ranges (and batched store tasks) a request may carry. Each decodes to a struct
/// of tens of bytes from as little as two encoded bytes, so they are counted in the encoded
/// bytes before anything is decoded. TiDB's largest point-range lists stay far below.
pub const MAX_REQUEST_RANGES: usize = 1 << 20;

/// Most files (L0, leveled and blob) and properties a change set may list, counted before
/// it is decoded (a real shard holds a few thousand files).
pub const MAX_CHANGE_SET_FILES: usize = 65_536;
use crate::read::{Reader, patch_u32, u32_len};

/// The format of an envelope: which number it starts with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EnvelopeFormat {
    /// Format 1, upstream's: no checksums.
    #[default]
    V1,
    /// Format 2: a crc32c of each part after the change set.
    V2,
}

impl EnvelopeFormat {
    /// The format number written first in the body.
    pub const fn number(self) -> u32 {
        match self {
            EnvelopeFormat::V1 => ENVELOPE_FORMAT_V1,
            EnvelopeFormat::V2 => ENVELOPE_FORMAT_V2,
        }
    }
}

/// A decoded envelope: three zero-copy slices of the request body.
///
/// [`Envelope::decode`] checks the framing (format number and the three lengths) and, for
/// format 2, the three checksums; the parts are decoded on demand by [`decode_request`](Self::decode_request),
/// [`decode_mem_data`](Self::decode_mem_data) and [`decode_change_set`](Self::decode_change_set).
/// As upstream, bytes after the change set are ignored; [`trailing_len`](Self::trailing_len)
/// says how many there were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    request: Bytes,
    mem_data: Bytes,
    change_set: Bytes,
    request_offset: usize,
    mem_data_offset: usize,
    change_set_offset: usize,
    trailing_len: usize,
    format: EnvelopeFormat,
}

impl Envelope {
    /// Splits an envelope body of format 1 or 2 into its parts without copying, verifying
    /// the checksums of format 2.
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] when a format, length or checksum field is cut off,
    /// [`Error::BadFormat`] when the format is neither [`ENVELOPE_FORMAT_V1`] nor
    /// [`ENVELOPE_FORMAT_V2`], [`Error::BadLength`] when a length exceeds the bytes that
    /// follow it, [`Error::ChecksumMismatch`] naming the first part whose checksum fails.
    pub fn decode(body: Bytes) -> Result<Envelope> {
        let mut r = Reader::new(&body, 0);
        let format = match r.u32(Field::EnvelopeFormat)? {
            ENVELOPE_FORMAT_V1 => EnvelopeFormat::V1,
            ENVELOPE_FORMAT_V2 => EnvelopeFormat::V2,
            value => {
                return Err(Error::BadFormat { what: Field::EnvelopeFormat, offset: 0, value });
            }
        };
        let request = r.u32_prefixed(Field::RequestLen, Field::Request)?;
        let mem_data = r.u32_prefixed(Field::MemDataLen, Field::MemData)?;
        let change_set = r.u32_prefixed(Field::ChangeSetLen, Field::ChangeSet)?;
        if format == EnvelopeFormat::V2 {
            for (what, part) in [
                (Field::Request, &request),
                (Field::MemData, &mem_data),
                (Field::ChangeSet, &change_set),
            ] {
                let stored = r.u32(Field::Checksums)?;
                let computed = crc32c::crc32c(body.get(part.clone()).unwrap_or_default());
                if stored != computed {
                    return Err(Error::ChecksumMismatch {
                        what,
                        offset: part.start,
                        stored,
                        computed,
                    });
                }
            }
        }
        let trailing_len = r.remaining();
        Ok(Envelope {
            request_offset: request.start,
            mem_data_offset: mem_data.start,
            change_set_offset: change_set.start,
            request: body.slice(request),
            mem_data: body.slice(mem_data),
            change_set: body.slice(change_set),
            trailing_len,
            format,
        })
    }

    /// The envelope's format.
    pub fn format(&self) -> EnvelopeFormat {
        self.format
    }

    /// The serialized `coprocessor.Request`.
    pub fn request_bytes(&self) -> &Bytes {
        &self.request
    }

    /// The mem-data (empty when the sender had no memtable).
    pub fn mem_data_bytes(&self) -> &Bytes {
        &self.mem_data
    }

    /// The serialized `enginepb.ChangeSet`.
    pub fn change_set_bytes(&self) -> &Bytes {
        &self.change_set
    }

    /// Number of ignored bytes after the change set.
    pub fn trailing_len(&self) -> usize {
        self.trailing_len
    }

    /// Decodes the `coprocessor.Request`; its `bytes` fields share the body.
    ///
    /// # Errors
    ///
    /// [`Error::TooMany`] for more than [`MAX_REQUEST_RANGES`] ranges or batched tasks
    /// (counted before decoding); [`Error::Protobuf`] with the request's offset in the body.
    pub fn decode_request(&self) -> Result<Request> {
        for (field, what) in [(4, "key ranges"), (11, "batched tasks")] {
            let count = count_field(&self.request, field);
            if count > MAX_REQUEST_RANGES {
                return Err(Error::TooMany {
                    what,
                    offset: self.request_offset,
                    count,
                    max: MAX_REQUEST_RANGES,
                });
            }
        }
        decode_message(&self.request, Field::Request, self.request_offset)
    }

    /// Decodes and validates the mem-data; error offsets count from the start of the body.
    ///
    /// # Errors
    ///
    /// As [`MemData::decode`].
    pub fn decode_mem_data(&self) -> Result<MemData> {
        MemData::decode_at(self.mem_data.clone(), self.mem_data_offset)
    }

    /// Decodes the `enginepb.ChangeSet` (the shard snapshot); its `bytes` fields share the body.
    ///
    /// # Errors
    ///
    /// [`Error::TooMany`] for more than [`MAX_CHANGE_SET_FILES`] files or properties in the
    /// snapshot (counted before decoding); [`Error::Protobuf`] with the change set's offset
    /// in the body.
    pub fn decode_change_set(&self) -> Result<ChangeSet> {
        // Snapshot (6): l0Creates (5), tableCreates (6), BlobCreates (9); properties (3):
        // keys (2), values (3). Several occurrences of a message field merge when decoded.
        let (mut files, mut properties) = (0usize, 0usize);
        let _ = walk_fields(&self.change_set, |field, payload| {
            if let (6, Some(snapshot)) = (field, payload) {
                let _ = walk_fields(snapshot, |f, p| match (f, p) {
                    (5 | 6 | 9, _) => files += 1,
                    (3, Some(props)) => {
                        properties += count_field(props, 2) + count_field(props, 3);
                    }
                    _ => {}
                });
            }
        });
        for (count, what) in [(files, "change-set files"), (properties, "snapshot properties")] {
            if count > MAX_CHANGE_SET_FILES {
                return Err(Error::TooMany {
                    what,
                    offset: self.change_set_offset,
                    count,
                    max: MAX_CHANGE_SET_FILES,
                });
            }
        }
        decode_message(&self.change_set, Field::ChangeSet, self.change_set_offset)
    }

    /// Re-encodes the envelope in its format (without the ignored trailing bytes) at the end
    /// of `buf`; returns the encoded length.
    ///
    /// # Errors
    ///
    /// None for an envelope that came from [`Envelope::decode`] (its parts fit their
    /// prefixes).
    pub fn encode_into(&self, buf: &mut Vec<u8>) -> Result<usize> {
        let mut w = EnvelopeWriter::start(buf, self.format);
        put_u32_prefixed(w.buf, Field::Request, &self.request)?;
        w.reserve_mem_data_len();
        w.raw_mem_data(&self.mem_data);
        w.finish_with_raw_change_set(&self.change_set)
    }
}

/// Writes an envelope at the end of a caller's buffer, with the mem-data streamed in place.
///
/// The request is written by the constructor, the mem-data (if any) by a [`MemDataWriter`]
/// from [`mem_data`](Self::mem_data) or by [`raw_mem_data`](Self::raw_mem_data), and the change
/// set by [`finish`](Self::finish), which also patches the mem-data length. Dropping the writer
/// without finishing, or a failed finish, restores the buffer to its length before the
/// envelope.
///
/// ```
/// use bytes::Bytes;
/// use rcop_proto::coprocessor::Request;
/// use rcop_proto::enginepb::ChangeSet;
/// use rcop_wire::{Envelope, EnvelopeWriter, MemDataFormat};
///
/// let request = Request { tp: 103, start_ts: 42, ..Request::default() };
/// let change_set = ChangeSet { shard_id: 7, ..ChangeSet::default() };
///
/// let mut body = Vec::new();
/// let mut w = EnvelopeWriter::new(&mut body, &request)?;
/// let mut mem = w.mem_data(MemDataFormat::V2);
/// for i in 0..3u64 {
///     mem.push(&i.to_be_bytes(), 40, 41, b"v");
/// }
/// mem.finish()?;
/// w.finish(&change_set)?;
///
/// let envelope = Envelope::decode(Bytes::from(body))?;
/// assert_eq!(envelope.decode_request()?, request);
/// assert_eq!(envelope.decode_mem_data()?.rows().len(), 3);
/// assert_eq!(envelope.decode_change_set()?, change_set);
/// # Ok::<(), rcop_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct EnvelopeWriter<'a> {
    buf: &'a mut Vec<u8>,
    format: EnvelopeFormat,
    start: usize,
    /// Where the mem-data length placeholder is; the mem-data follows it.
    mem_data_len_at: usize,
    finished: bool,
}

impl<'a> EnvelopeWriter<'a> {
    /// Starts an envelope of format 1 at the end of `buf`, writing the format and `request`.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when the request exceeds `u32::MAX` bytes (`buf` is left as it was).
    pub fn new(buf: &'a mut Vec<u8>, request: &Request) -> Result<Self> {
        Self::with_format(buf, request, EnvelopeFormat::V1)
    }

    /// As [`EnvelopeWriter::new`], in `format` ([`EnvelopeFormat::V2`] appends the checksums
    /// when the writer finishes).
    ///
    /// # Errors
    ///
    /// As [`EnvelopeWriter::new`].
    pub fn with_format(
        buf: &'a mut Vec<u8>,
        request: &Request,
        format: EnvelopeFormat,
    ) -> Result<Self> {
        let mut w = EnvelopeWriter::start(buf, format);
        put_u32_prefixed_message(w.buf, Field::Request, request)?;
        w.reserve_mem_data_len();
        Ok(w)
    }

    /// As [`EnvelopeWriter::new`], with an already serialized request.
    ///
    /// # Errors
    ///
    /// As [`EnvelopeWriter::new`].
    pub fn with_raw_request(buf: &'a mut Vec<u8>, request: &[u8]) -> Result<Self> {
        let mut w = EnvelopeWriter::start(buf, EnvelopeFormat::V1);
        put_u32_prefixed(w.buf, Field::Request, request)?;
        w.reserve_mem_data_len();
        Ok(w)
    }

    fn start(buf: &'a mut Vec<u8>, format: EnvelopeFormat) -> Self {
        let start = buf.len();
        buf.extend_from_slice(&format.number().to_le_bytes());
        EnvelopeWriter { buf, format, start, mem_data_len_at: start, finished: false }
    }

    fn reserve_mem_data_len(&mut self) {
        self.mem_data_len_at = self.buf.len();
        self.buf.extend_from_slice(&0u32.to_le_bytes());
    }

    fn mem_data_start(&self) -> usize {
        self.mem_data_len_at.saturating_add(4)
    }

    /// Starts the mem-data, discarding any mem-data written before. Leaving it unwritten
    /// means "no memtable".
    pub fn mem_data(&mut self, format: MemDataFormat) -> MemDataWriter<'_> {
        self.buf.truncate(self.mem_data_start());
        MemDataWriter::new(self.buf, format)
    }

    /// Sets already encoded mem-data, replacing any mem-data written before.
    pub fn raw_mem_data(&mut self, mem_data: &[u8]) {
        self.buf.truncate(self.mem_data_start());
        self.buf.extend_from_slice(mem_data);
    }

    /// Patches the mem-data length and appends `change_set`; returns the envelope's length.
    ///
    /// # Errors
    ///
    /// [`Error::TooLarge`] when the mem-data or the change set exceeds `u32::MAX` bytes.
    pub fn finish(self, change_set: &ChangeSet) -> Result<usize> {
        self.finish_with(|buf| put_u32_prefixed_message(buf, Field::ChangeSet, change_set))
    }

    /// As [`EnvelopeWriter::finish`], with an already serialized change set.
    ///
    /// # Errors
    ///
    /// As [`EnvelopeWriter::finish`].
    pub fn finish_with_raw_change_set(self, change_set: &[u8]) -> Result<usize> {
        self.finish_with(|buf| put_u32_prefixed(buf, Field::ChangeSet, change_set))
    }

    fn finish_with(
        mut self,
        put_change_set: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<usize> {
        let mem_data_len = self.buf.len().saturating_sub(self.mem_data_start());
        let mem_data_len = u32_len(Field::MemData, mem_data_len)?;
        patch_u32(self.buf, self.mem_data_len_at, mem_data_len);
        let change_set_at = self.buf.len();
        put_change_set(self.buf)?;
        if self.format == EnvelopeFormat::V2 {
            // Parts: the request after the format and its length, up to the mem-data length;
            // the mem-data; the change set after its length.
            let request = self.start.saturating_add(8)..self.mem_data_len_at;
            let mem_data = self.mem_data_start()..change_set_at;
            let change_set = change_set_at.saturating_add(4)..self.buf.len();
            let sums: [u32; 3] = [request, mem_data, change_set]
                .map(|r| crc32c::crc32c(self.buf.get(r).unwrap_or_default()));
            for sum in sums {
                self.buf.extend_from_slice(&sum.to_le_bytes());
            }
        }
        self.finished = true;
        Ok(self.buf.len().saturating_sub(self.start))
    }
}

impl Drop for EnvelopeWriter<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.buf.truncate(self.start);
        }
    }
}

/// Appends an envelope of `request`, encoded `mem_data` and `change_set` to `buf`; returns its
/// length. See [`EnvelopeWriter`] to stream the mem-data rows instead.
///
/// # Errors
///
/// [`Error::TooLarge`] when a part exceeds `u32::MAX` bytes (`buf` is left as it was).
pub fn encode_envelope_into(
    request: &Request,
    mem_data: &[u8],
    change_set: &ChangeSet,
    buf: &mut Vec<u8>,
) -> Result<usize> {
    let mut w = EnvelopeWriter::new(buf, request)?;
    w.raw_mem_data(mem_data);
    w.finish(change_set)
}

/// Allocating wrapper of [`encode_envelope_into`].
///
/// # Errors
///
/// As [`encode_envelope_into`].
pub fn encode_envelope(
    request: &Request,
    mem_data: &[u8],
    change_set: &ChangeSet,
) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    encode_envelope_into(request, mem_data, change_set, &mut buf)?;
    Ok(buf)
}

/// Appends an envelope of three already serialized parts to `buf`; returns its length.
///
/// # Errors
///
/// As [`encode_envelope_into`].
pub fn encode_raw_envelope_into(
    request: &[u8],
    mem_data: &[u8],
    change_set: &[u8],
    buf: &mut Vec<u8>,
) -> Result<usize> {
    let mut w = EnvelopeWriter::with_raw_request(buf, request)?;
    w.raw_mem_data(mem_data);
    w.finish_with_raw_change_set(change_set)
}
