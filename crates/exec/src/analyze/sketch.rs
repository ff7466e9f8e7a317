//! The sketches TiKV builds for ANALYZE: the Flajolet–Martin distinct-value sketch, the
//! count-min sketch (with the TopN that statistics version 2 moves out of it) and the
//! equal-depth histogram over sorted values.

use std::collections::HashSet;

use rcop_proto::tipb;

use super::hash::murmur3_x64_128;

/// Bytes a hash in an FM sketch's set costs (the value and the table's slack).
const FM_ENTRY_BYTES: usize = 16;
/// Bytes a histogram bucket costs beyond its bounds.
const BUCKET_BYTES: usize = 80;

/// TiKV's `FmSketch`: keeps the hashes whose low bits under `mask` are zero, widening the
/// mask (halving the kept set) whenever more than `max_size` are kept. NDV ≈
/// `(mask + 1) × |set|`.
#[derive(Debug, Clone)]
pub(crate) struct FmSketch {
    mask: u64,
    max_size: usize,
    set: HashSet<u64, foldhash::fast::FixedState>,
}

impl FmSketch {
    pub(crate) fn new(max_size: usize) -> FmSketch {
        FmSketch { mask: 0, max_size, set: HashSet::default() }
    }

    /// Inserts the first half of the value's MurmurHash3.
    pub(crate) fn insert(&mut self, bytes: &[u8]) {
        self.insert_hash(murmur3_x64_128(bytes).0);
    }

    pub(crate) fn insert_hash(&mut self, hash: u64) {
        if hash & self.mask != 0 {
            return;
        }
        self.set.insert(hash);
        if self.set.len() > self.max_size {
            let mask = (self.mask << 1) | 1;
            self.set.retain(|h| h & mask == 0);
            self.mask = mask;
        }
    }

    /// The estimate TiDB computes from the sketch.
    #[cfg(test)]
    pub(crate) fn ndv(&self) -> u64 {
        (self.mask + 1).saturating_mul(self.set.len() as u64)
    }

    pub(crate) fn mem_bytes(&self) -> usize {
        self.set.capacity() * FM_ENTRY_BYTES
    }

    /// The message; the hashes in ascending order (TiKV writes its set's iteration order,
    /// which TiDB reads as a set).
    pub(crate) fn to_proto(&self) -> tipb::FmSketch {
        let mut hashset: Vec<u64> = self.set.iter().copied().collect();
        hashset.sort_unstable();
        tipb::FmSketch { mask: Some(self.mask), hashset }
    }
}

/// TiKV's `CmSketch`: `depth` rows of `width` counters; a value increments, in row `i`,
/// counter `(h1 + h2·i) mod width` of its MurmurHash3 halves.
#[derive(Debug, Clone)]
pub(crate) struct CmSketch {
    width: usize,
    count: u32,
    table: Vec<Vec<u32>>,
    top_n: Vec<(Vec<u8>, u64)>,
}

impl CmSketch {
    /// `None` when either dimension is 0 (TiKV builds no sketch then).
    pub(crate) fn new(depth: usize, width: usize) -> Option<CmSketch> {
        (depth > 0 && width > 0).then(|| CmSketch {
            width,
            count: 0,
            table: vec![vec![0; width]; depth],
            top_n: Vec::new(),
        })
    }

    /// The bytes a sketch of these dimensions holds.
    pub(crate) fn bytes_for(depth: usize, width: usize) -> usize {
        depth.saturating_mul(width.saturating_mul(4).saturating_add(24))
    }

    fn slots(&self, bytes: &[u8]) -> impl Iterator<Item = usize> + use<> {
        let (h1, h2) = murmur3_x64_128(bytes);
        let width = self.width as u64;
        (0..self.table.len() as u64)
            .map(move |i| (h1.wrapping_add(h2.wrapping_mul(i)) % width) as usize)
    }

    pub(crate) fn insert(&mut self, bytes: &[u8]) {
        self.count = self.count.wrapping_add(1);
        let slots = self.slots(bytes);
        for (row, j) in self.table.iter_mut().zip(slots) {
            if let Some(c) = row.get_mut(j) {
                *c = c.saturating_add(1);
            }
        }
    }

    /// Takes `cnt` occurrences of `bytes` out of the counters (a value moved to the TopN).
    pub(crate) fn sub(&mut self, bytes: &[u8], cnt: u32) {
        self.count = self.count.wrapping_sub(cnt);
        let slots = self.slots(bytes);
        for (row, j) in self.table.iter_mut().zip(slots) {
            if let Some(c) = row.get_mut(j) {
                *c = c.saturating_sub(cnt);
            }
        }
    }

    pub(crate) fn push_to_top_n(&mut self, data: Vec<u8>, cnt: u64) {
        self.top_n.push((data, cnt));
    }

    /// The smallest counter of `bytes` over the rows (an upper bound of its count).
    #[cfg(test)]
    pub(crate) fn query_min(&self, bytes: &[u8]) -> u32 {
        let slots = self.slots(bytes);
        self.table.iter().zip(slots).map(|(row, j)| row[j]).min().unwrap_or(0)
    }

    #[cfg(test)]
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    pub(crate) fn top_n_bytes(&self) -> usize {
        self.top_n.iter().map(|(d, _)| d.len() + 40).sum()
    }

    pub(crate) fn into_proto(self) -> tipb::CmSketch {
        tipb::CmSketch {
            rows: self.table.into_iter().map(|counters| tipb::CmSketchRow { counters }).collect(),
            top_n: self
                .top_n
                .into_iter()
                .map(|(data, count)| tipb::CmSketchTopN {
                    data: Some(data.into()),
                    count: Some(count),
                })
                .collect(),
            default_value: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Bucket {
    /// Items in this bucket and all before it.
    count: u64,
    upper: Vec<u8>,
    lower: Vec<u8>,
    /// Occurrences of `upper`.
    repeats: u64,
    /// Distinct values (maintained only for statistics version 2).
    ndv: u64,
}

/// TiKV's equal-depth histogram builder over values appended in ascending order: each bucket
/// takes `per_bucket_limit` items (a value never spans two buckets); when `buckets_num`
/// buckets are full, neighbours are merged pairwise and the limit doubles.
#[derive(Debug, Clone)]
pub(crate) struct Histogram {
    ndv: u64,
    buckets: Vec<Bucket>,
    per_bucket_limit: u64,
    buckets_num: usize,
    /// The bounds' bytes, for the memory account.
    bound_bytes: usize,
}

impl Histogram {
    pub(crate) fn new(buckets_num: usize) -> Histogram {
        Histogram { ndv: 0, buckets: Vec::new(), per_bucket_limit: 1, buckets_num, bound_bytes: 0 }
    }

    /// Appends `data`, not smaller than any value appended before.
    pub(crate) fn append(&mut self, data: &[u8], with_bucket_ndv: bool) {
        if let Some(last) = self.buckets.last_mut()
            && last.upper == data
        {
            last.count += 1;
            last.repeats += 1;
            return;
        }
        self.ndv += 1;
        if self.buckets.len() >= self.buckets_num && self.is_last_bucket_full() {
            self.merge_buckets();
        }
        if !self.is_last_bucket_full()
            && let Some(last) = self.buckets.last_mut()
        {
            self.bound_bytes = self.bound_bytes + data.len() - last.upper.len();
            last.upper = data.to_vec();
            last.count += 1;
            last.repeats = 1;
            if with_bucket_ndv {
                last.ndv += 1;
            }
            return;
        }
        let count = 1 + self.buckets.last().map_or(0, |b| b.count);
        self.bound_bytes += 2 * data.len();
        self.buckets.push(Bucket {
            count,
            upper: data.to_vec(),
            lower: data.to_vec(),
            repeats: 1,
            ndv: u64::from(with_bucket_ndv),
        });
    }

    fn is_last_bucket_full(&self) -> bool {
        let n = self.buckets.len();
        let Some(last) = self.buckets.last() else {
            return true;
        };
        let before = if n >= 2 { self.buckets.get(n - 2).map_or(0, |b| b.count) } else { 0 };
        last.count - before >= self.per_bucket_limit
    }

    /// Merges buckets `2i` and `2i + 1` into bucket `i` (TiKV's `merge_buckets`).
    fn merge_buckets(&mut self) {
        let keep = self.buckets_num.div_ceil(2);
        let old = std::mem::take(&mut self.buckets);
        let mut merged: Vec<Bucket> = Vec::with_capacity(keep);
        let mut it = old.into_iter();
        while merged.len() < keep {
            let Some(mut first) = it.next() else { break };
            // TiKV merges the first pair only when more than one bucket is allowed.
            if merged.is_empty() && self.buckets_num <= 1 {
                merged.push(first);
                break;
            }
            if let Some(second) = it.next() {
                first.upper = second.upper;
                first.count = second.count;
                first.repeats = second.repeats;
                first.ndv += second.ndv;
            }
            merged.push(first);
        }
        // TiKV drops whatever is past `keep` (nothing, as it merges only full histograms).
        self.buckets = merged;
        self.bound_bytes = self.buckets.iter().map(|b| b.upper.len() + b.lower.len()).sum();
        self.per_bucket_limit = self.per_bucket_limit.saturating_mul(2);
    }

    pub(crate) fn mem_bytes(&self) -> usize {
        self.bound_bytes + self.buckets.capacity() * BUCKET_BYTES
    }

    pub(crate) fn into_proto(self) -> tipb::Histogram {
        tipb::Histogram {
            ndv: Some(self.ndv as i64),
            buckets: self
                .buckets
                .into_iter()
                .map(|b| tipb::Bucket {
                    count: Some(b.count as i64),
                    lower_bound: Some(b.lower.into()),
                    upper_bound: Some(b.upper.into()),
                    repeats: Some(b.repeats as i64),
                    ndv: Some(b.ndv as i64),
                })
                .collect(),
        }
    }
}
