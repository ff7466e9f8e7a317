//! Protocol types of rcop.
//!
//! Rust types for the subsets of three protobuf schemas that a TiKV-compatible
//! coprocessor worker speaks:
//!
//! * **kvproto** (proto3): [`coprocessor`] (`Request`, `Response`, store-batch
//!   tasks), [`kvrpcpb`] (`Context`, `LockInfo`, execution details),
//!   [`errorpb`] (region errors) and [`metapb`] (region, peer, epoch).
//! * **tipb** (proto2): [`tipb`], the DAG request carried in
//!   `coprocessor.Request.data` (executors, expressions, schema) and the
//!   `SelectResponse` carried back in `coprocessor.Response.data`.
//! * **kvproto services** (proto3): [`tikvpb`] (the `Tikv` service's `Coprocessor` and
//!   `DelegateCoprocessor`, the delegate path's `DelegateRequest` / `DelegateResponse` in
//!   [`coprocessor`]) and [`pdpb`] (`PD/GetStore`). Feature `grpc` adds tonic's servers and
//!   clients for them.
//! * **enginepb** (proto3): [`enginepb`], the cloud engine's `ChangeSet`
//!   snapshot and `TxnFileRefs` shipped by the remote coprocessor offload path.
//!
//! The `.proto` sources live in the workspace's `proto/` directory (the crate's
//! `proto/` is a symlink to it, so the packaged crate carries them). They keep
//! upstream field numbers, types and proto2/proto3 semantics, so bytes written
//! by TiDB or TiKV decode with these types and the reverse: tipb repeated
//! scalars are not packed and its optional scalars are `Option<T>`, kvproto
//! repeated scalars are packed. Fields the subsets leave out are skipped as
//! unknown fields when decoding. The code is generated at build time by
//! `prost-build` from descriptors compiled by `protox`; no `protoc` is needed.
//! All `bytes` fields are [`bytes::Bytes`].
//!
//! Enum-typed fields are stored as `i32` (prost's representation, which keeps
//! unknown values); use the generated getters (e.g.
//! [`tipb::DagRequest::encode_type`]) or `TryFrom<i32>` to get the enum.
//!
//! # Example
//!
//! Build a DAG request, wrap it in a coprocessor request and decode it back:
//!
//! ```
//! use prost::Message;
//! use rcop_proto::{REQ_TYPE_DAG, coprocessor, tipb};
//!
//! let dag = tipb::DagRequest {
//!     time_zone_offset: Some(0),
//!     output_offsets: vec![0, 1],
//!     encode_type: Some(tipb::EncodeType::TypeChunk as i32),
//!     ..Default::default()
//! };
//! let dag_bytes = dag.encode_to_vec();
//! // proto2: tag 5 is repeated once per element, not packed.
//! assert_eq!(dag_bytes, [0x18, 0x00, 0x28, 0x00, 0x28, 0x01, 0x40, 0x01]);
//!
//! let request = coprocessor::Request {
//!     tp: REQ_TYPE_DAG,
//!     start_ts: 42,
//!     data: dag_bytes.into(),
//!     ..Default::default()
//! };
//! let wire = request.encode_to_vec();
//!
//! let decoded = coprocessor::Request::decode(wire.as_slice())?;
//! let decoded_dag = tipb::DagRequest::decode(decoded.data)?;
//! assert_eq!(decoded_dag.encode_type(), tipb::EncodeType::TypeChunk);
//! assert_eq!(decoded_dag.time_zone_offset, Some(0));
//! # Ok::<(), prost::DecodeError>(())
//! ```

#![warn(missing_docs)]

/// `coprocessor.Request.tp` of a DAG (select) request.
pub const REQ_TYPE_DAG: i64 = 103;
/// `coprocessor.Request.tp` of an ANALYZE request.
pub const REQ_TYPE_ANALYZE: i64 = 104;
/// `coprocessor.Request.tp` of a CHECKSUM request.
pub const REQ_TYPE_CHECKSUM: i64 = 105;

/// kvproto `coprocessor` package: coprocessor requests and responses.
pub mod coprocessor {
    include!(concat!(env!("OUT_DIR"), "/coprocessor.rs"));
}

/// kvproto `kvrpcpb` package: request context, lock info, execution details.
pub mod kvrpcpb {
    include!(concat!(env!("OUT_DIR"), "/kvrpcpb.rs"));
}

/// kvproto `errorpb` package: region errors.
pub mod errorpb {
    include!(concat!(env!("OUT_DIR"), "/errorpb.rs"));
}

/// kvproto `metapb` package: regions, peers and epochs.
pub mod metapb {
    include!(concat!(env!("OUT_DIR"), "/metapb.rs"));
}

/// kvproto `tikvpb` package: the `Tikv` gRPC service of the delegate path
/// (`Coprocessor`, `DelegateCoprocessor`). Without the `grpc` feature the module is empty;
/// with it, `tikv_server` and `tikv_client` hold tonic's server and client.
pub mod tikvpb {
    include!(concat!(env!("OUT_DIR"), "/tikvpb.rs"));
}

/// kvproto `pdpb` package: PD's `GetStore`, how a worker finds a region's storage node.
/// With the `grpc` feature, `pd_server` and `pd_client` hold tonic's server and client.
pub mod pdpb {
    include!(concat!(env!("OUT_DIR"), "/pdpb.rs"));
}

/// tipb package (proto2): DAG requests, executors, expressions, responses.
#[expect(
    missing_docs,
    reason = "the ~580 `ScalarFuncSig` variants are named after the SQL function they denote"
)]
pub mod tipb {
    include!(concat!(env!("OUT_DIR"), "/tipb.rs"));
}

/// Cloud engine `enginepb` package: shard snapshots and txn-file references.
pub mod enginepb {
    include!(concat!(env!("OUT_DIR"), "/enginepb.rs"));
}
