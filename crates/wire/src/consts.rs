//! Names and numbers of the offload path: format numbers, the HTTP path, header names and content
//! types. These are plain constants; this crate performs no I/O and knows nothing else about HTTP.

/// Format number of the request envelope (upstream `REMOTE_COP_FORMAT_V1`), the first `u32 LE`
/// of every offload request body; what upstream storage nodes send.
pub const ENVELOPE_FORMAT_V1: u32 = 1;

/// Format number of the checksummed envelope (ours): format 1's three parts followed by
/// `u32 LE crc32c` of each part, in order. Sent only with [`HEADER_ENVELOPE`] set to `2`.
pub const ENVELOPE_FORMAT_V2: u32 = 2;

/// Request header naming the envelope format of the body (`2`). A worker that sees it refuses
/// a body of any other format, so a corrupted format number cannot turn the checksums off.
pub const HEADER_ENVELOPE: &str = "x-rcop-envelope";

/// Mem-data format 1: `u32 LE 1` followed directly by the rows, which run to the end of the
/// mem-data. Older senders used it when there were no transaction-file references.
pub const MEM_DATA_V1: u32 = 1;

/// Mem-data format 2: `u32 LE 2 | u64 LE rows_len | rows | u32 LE len | enginepb.TxnFileRefs`.
/// The newest upstream sender always writes it.
pub const MEM_DATA_V2: u32 = 2;

/// Smallest encoded size of one row: four `u64` fields (key length, start ts, commit ts, value
/// length) around an empty key and an empty value.
pub const MIN_ROW_LEN: usize = 32;

/// HTTP path of the offload endpoint on a worker (POST, body = envelope).
pub const COPROCESSOR_PATH: &str = "/coprocessor";

/// `Content-Type` of an offload request body (the envelope).
pub const CONTENT_TYPE_OCTET_STREAM: &str = "application/octet-stream";

/// `Accept` of an offload request, and the `Content-Type` that marks an error response whose
/// body is still a serialized `coprocessor.Response`.
pub const CONTENT_TYPE_PROTOBUF: &str = "application/protobuf";

/// Request header carrying the storage node's status address, from which the worker may read
/// DFS files before falling back to the object store.
pub const HEADER_DFS_REMOTE_CACHE_ADDR: &str = "x-dfs-remote-cache-addr";
