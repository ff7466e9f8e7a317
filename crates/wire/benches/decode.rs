//! Decoding and encoding an offload request body of 64 MiB of memtable rows.
//!
//! Each row has a 24-byte key and a 76-byte value (100 bytes of payload, 132 bytes encoded).
//! "decode" splits the envelope, validates every row (the eager pass) and then iterates every
//! row touching its key and value lengths, as a worker does before rebuilding its memtable.
//! "encode" streams the same rows through `EnvelopeWriter` into a reused buffer, as a storage
//! node does. Throughput is reported in body bytes.

#![expect(
    clippy::unwrap_used,
    reason = "benchmark: a codec failure is a bug and must abort the run"
)]

use std::hint::black_box;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_proto::coprocessor::Request;
use rcop_proto::enginepb::ChangeSet;
use rcop_wire::{Envelope, EnvelopeWriter, MemDataFormat};

const BODY_TARGET: usize = 64 << 20;
const KEY_LEN: usize = 24;
const VALUE_LEN: usize = 76;
const ROW_LEN: usize = rcop_wire::MIN_ROW_LEN + KEY_LEN + VALUE_LEN;

fn key(i: u64) -> [u8; KEY_LEN] {
    let mut k = [0u8; KEY_LEN];
    k[..4].copy_from_slice(b"x\0\0\x01");
    k[4..12].copy_from_slice(b"t\x80\0\0\0\0\0\x2a");
    k[12..14].copy_from_slice(b"_r");
    k[14..22].copy_from_slice(&i.to_be_bytes());
    k
}

fn write_body(buf: &mut Vec<u8>, rows: u64, request: &Request, value: &[u8]) -> usize {
    let mut w = EnvelopeWriter::new(buf, request).unwrap();
    let mut mem = w.mem_data(MemDataFormat::V2);
    for i in 0..rows {
        mem.push(&key(i), 400, 401 + (i & 7), value);
    }
    mem.finish().unwrap();
    w.finish(&ChangeSet::default()).unwrap()
}

fn benches(c: &mut Criterion) {
    let rows = (BODY_TARGET / ROW_LEN) as u64;
    let request = Request { start_ts: 500, ..Request::default() };
    let value = [0x5au8; VALUE_LEN];
    let mut buf = Vec::with_capacity(BODY_TARGET + 4096);
    let len = write_body(&mut buf, rows, &request, &value);
    assert_eq!(len, buf.len());
    let body = Bytes::from(buf);

    let mut group = c.benchmark_group("wire_64MiB_24B_key_76B_value");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(body.len() as u64));

    group.bench_function("decode", |b| {
        b.iter(|| {
            let env = Envelope::decode(black_box(body.clone())).unwrap();
            let mem = env.decode_mem_data().unwrap();
            let mut total = 0usize;
            for row in mem.rows() {
                total += row.key.len() + row.value.len() + (row.commit_ts as usize & 1);
            }
            assert_eq!(mem.rows().len() as u64, rows);
            black_box(total)
        })
    });

    // Baseline measured in the same run: copying the body once, i.e. what one pass over
    // 64 MiB costs on this machine's memory bandwidth.
    let mut copy = vec![0u8; body.len()];
    group.bench_function("baseline_memcpy", |b| {
        b.iter(|| {
            copy.copy_from_slice(black_box(&body));
            black_box(copy.as_ptr())
        })
    });

    let mut out = Vec::with_capacity(body.len());
    group.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            black_box(write_body(&mut out, rows, &request, black_box(&value)))
        })
    });
    group.finish();
}

criterion_group!(decode, benches);
criterion_main!(decode);
