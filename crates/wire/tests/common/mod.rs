//! A deliberately naive model of the wire format, written from the format description and
//! independent of the crate's encoders. It also records where every length/count field is, so
//! tests can corrupt them.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use proptest::prelude::*;

/// An owned row of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRow {
    pub key: Vec<u8>,
    pub start_ts: u64,
    pub commit_ts: u64,
    pub value: Vec<u8>,
}

/// A length or count field: its position and width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LenField {
    pub pos: usize,
    pub width: usize,
}

impl LenField {
    pub fn read(&self, buf: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..self.width].copy_from_slice(&buf[self.pos..self.pos + self.width]);
        u64::from_le_bytes(b)
    }

    pub fn write(&self, buf: &mut [u8], value: u64) {
        buf[self.pos..self.pos + self.width].copy_from_slice(&value.to_le_bytes()[..self.width]);
    }

    pub fn max(&self) -> u64 {
        if self.width == 4 { u64::from(u32::MAX) } else { u64::MAX }
    }
}

/// Model bytes plus the length fields in them.
#[derive(Clone, Debug, Default)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    pub fields: Vec<LenField>,
}

impl Encoded {
    fn u32(&mut self, v: u32, is_len: bool) {
        if is_len {
            self.fields.push(LenField { pos: self.bytes.len(), width: 4 });
        }
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64, is_len: bool) {
        if is_len {
            self.fields.push(LenField { pos: self.bytes.len(), width: 8 });
        }
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    fn append(&mut self, other: Encoded) {
        let base = self.bytes.len();
        self.fields.extend(other.fields.into_iter().map(|f| LenField { pos: f.pos + base, ..f }));
        self.bytes.extend_from_slice(&other.bytes);
    }
}

pub fn model_rows(rows: &[ModelRow]) -> Encoded {
    let mut e = Encoded::default();
    e.u64(rows.len() as u64, true);
    for r in rows {
        e.u64(r.key.len() as u64, true);
        e.bytes.extend_from_slice(&r.key);
        e.u64(r.start_ts, false);
        e.u64(r.commit_ts, false);
        e.u64(r.value.len() as u64, true);
        e.bytes.extend_from_slice(&r.value);
    }
    e
}

/// `format` None = empty mem-data.
#[expect(clippy::panic, reason = "test model: only formats 1 and 2 exist")]
pub fn model_mem_data(format: Option<u32>, rows: &[ModelRow], refs_pb: &[u8]) -> Encoded {
    let mut e = Encoded::default();
    match format {
        None => {}
        Some(1) => {
            e.u32(1, false);
            e.append(model_rows(rows));
        }
        Some(2) => {
            e.u32(2, false);
            let r = model_rows(rows);
            e.u64(r.bytes.len() as u64, true);
            e.append(r);
            e.u32(refs_pb.len() as u32, true);
            e.bytes.extend_from_slice(refs_pb);
        }
        Some(f) => panic!("model has no format {f}"),
    }
    e
}

pub fn model_envelope(request: &[u8], mem_data: Encoded, change_set: &[u8]) -> Encoded {
    let mut e = Encoded::default();
    e.u32(1, false);
    e.u32(request.len() as u32, true);
    e.bytes.extend_from_slice(request);
    e.u32(mem_data.bytes.len() as u32, true);
    e.append(mem_data);
    e.u32(change_set.len() as u32, true);
    e.bytes.extend_from_slice(change_set);
    e
}

pub fn arb_row() -> impl Strategy<Value = ModelRow> {
    (
        prop::collection::vec(any::<u8>(), 0..24),
        any::<u64>(),
        any::<u64>(),
        prop_oneof![Just(Vec::new()), prop::collection::vec(any::<u8>(), 0..48)],
    )
        .prop_map(|(key, start_ts, commit_ts, value)| ModelRow {
            key,
            start_ts,
            commit_ts,
            value,
        })
}

pub fn arb_rows() -> impl Strategy<Value = Vec<ModelRow>> {
    prop::collection::vec(arb_row(), 0..24)
}

pub fn sample_rows() -> Vec<ModelRow> {
    vec![
        ModelRow {
            key: b"x\0\0\x01t1".to_vec(),
            start_ts: 10,
            commit_ts: 11,
            value: b"v1".to_vec(),
        },
        ModelRow { key: Vec::new(), start_ts: 0, commit_ts: u64::MAX, value: Vec::new() },
        ModelRow { key: b"k".to_vec(), start_ts: 7, commit_ts: 8, value: vec![0xAB; 40] },
    ]
}
