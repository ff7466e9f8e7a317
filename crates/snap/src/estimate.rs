//! The block-size estimate of request ranges, the input of the offload decision
//! (upstream §2.5).

use rcop_sst::{BlockSource, Section, Table};

use crate::range::InnerRange;
use crate::snapshot::Level;

/// Approximate uncompressed bytes of the write-CF L1+ blocks that `ranges` overlap
/// (memtables and L0 files are ignored, as upstream does).
///
/// Per level and range: in a table the range starts in, the blocks from the one holding
/// the start to the end of the range (or of the table) count `kv_size / num_blocks` each;
/// tables entirely inside the range count their whole `kv_size`; in the table the range
/// ends in, the blocks before the end count. A block already counted for the previous
/// range of the same level is not counted again. Each table's own average block size is
/// used (upstream takes the first table's for the last one too; a table's own average is
/// closer to its blocks).
///
/// Ranges should be sorted (request ranges are); the dedup only looks at the previous
/// range.
pub fn estimate_range_blocks_size<S: BlockSource>(
    levels: &[Level<S>],
    ranges: &[InnerRange],
) -> u64 {
    let mut total = 0u64;
    for level in levels {
        let tables = &level.tables;
        // (table index, block index) of the last block counted in this level.
        let mut last: Option<(usize, usize)> = None;
        for r in ranges {
            if r.is_empty() {
                continue;
            }
            let first = tables
                .partition_point(|t| t.meta().properties().biggest.as_ref() < r.start.as_slice());
            let mut i = first;
            while let Some(t) = tables.get(i) {
                let meta = t.meta();
                if !r.before_end(&meta.properties().smallest) {
                    break;
                }
                let n = meta.num_blocks(Section::Data);
                let is_first = i == first;
                let ends_here =
                    !r.end.is_empty() && meta.properties().biggest.as_ref() >= r.end.as_slice();
                let blocks = match (is_first, ends_here) {
                    (true, true) => meta.blocks_for_range(Section::Data, &r.start, &r.end),
                    (true, false) => meta.blocks_for_range(Section::Data, &r.start, &[]),
                    (false, true) => 0..meta.blocks_for_range(Section::Data, &[], &r.end).end,
                    (false, false) => {
                        total = total.saturating_add(meta.properties().kv_size);
                        last = n.checked_sub(1).map(|b| (i, b));
                        i += 1;
                        continue;
                    }
                };
                if blocks.is_empty() || n == 0 {
                    i += 1;
                    continue;
                }
                let mut count = (blocks.end - blocks.start) as u64;
                if last == Some((i, blocks.start)) {
                    count -= 1;
                }
                total = total.saturating_add(count.saturating_mul(avg_block_size(t)));
                last = Some((i, blocks.end - 1));
                i += 1;
            }
        }
    }
    total
}

fn avg_block_size<S>(t: &Table<S>) -> u64
where
    S: BlockSource,
{
    let n = t.meta().num_blocks(Section::Data) as u64;
    t.meta().properties().kv_size.checked_div(n).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rcop_sst::{BuilderOptions, FileId, InMemory, NewValue, TableBuilder};

    use super::*;

    fn key(i: u32) -> Vec<u8> {
        format!("k{i:05}").into_bytes()
    }

    /// A table of keys `from..to` (every `step`), 100-byte values, 512-byte blocks.
    fn table(id: u64, from: u32, to: u32, step: usize) -> Table<InMemory> {
        let mut b =
            TableBuilder::new(FileId(id), BuilderOptions::for_level(1).with_block_size(512));
        for i in (from..to).step_by(step) {
            let v = NewValue { meta: 0, version: 1, user_meta: &[], value: &[7; 100] };
            b.add(&key(i), &v).unwrap();
        }
        Table::open_in_memory(FileId(id), b.finish().unwrap()).unwrap()
    }

    fn level() -> Vec<Level<InMemory>> {
        vec![Level {
            level: 1,
            tables: vec![table(1, 0, 100, 1), table(2, 100, 200, 2), table(3, 300, 400, 1)],
        }]
    }

    fn range(s: u32, e: u32) -> InnerRange {
        InnerRange { start: key(s), end: key(e) }
    }

    /// Brute force over every block: which blocks a range touches, by first keys.
    fn model(levels: &[Level<InMemory>], ranges: &[InnerRange]) -> u64 {
        let mut total = 0;
        for l in levels {
            let mut last = None;
            for r in ranges.iter().filter(|r| !r.is_empty()) {
                let touched: Vec<usize> = l
                    .tables
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| {
                        r.overlaps(&t.meta().properties().smallest, &t.meta().properties().biggest)
                    })
                    .map(|(i, _)| i)
                    .collect();
                for (pos, &ti) in touched.iter().enumerate() {
                    let meta = l.tables[ti].meta();
                    let n = meta.num_blocks(Section::Data);
                    let first_key = |b: usize| {
                        let mut k = Vec::new();
                        meta.block_first_key(Section::Data, b, &mut k);
                        k
                    };
                    let is_first = pos == 0;
                    let ends_here = pos + 1 == touched.len()
                        && !r.end.is_empty()
                        && meta.properties().biggest.as_ref() >= r.end.as_slice();
                    if !is_first && !ends_here {
                        total += meta.properties().kv_size;
                        last = Some((ti, n - 1));
                        continue;
                    }
                    let blocks: Vec<usize> = (0..n)
                        .filter(|&b| {
                            let after_start = !is_first || b + 1 == n || first_key(b + 1) > r.start;
                            let before_end = !ends_here || first_key(b) < r.end;
                            after_start && before_end
                        })
                        .collect();
                    let avg = meta.properties().kv_size / n as u64;
                    let mut count = blocks.len() as u64;
                    if count > 0 && last == Some((ti, blocks[0])) {
                        count -= 1;
                    }
                    total += count * avg;
                    if let Some(&b) = blocks.last() {
                        last = Some((ti, b));
                    }
                }
            }
        }
        total
    }

    #[test]
    fn whole_tables_and_partial_blocks() {
        let levels = level();
        let t = &levels[0].tables;
        let avg = |i: usize| {
            let m = t[i].meta();
            m.properties().kv_size / m.num_blocks(Section::Data) as u64
        };
        let blocks = |i: usize| t[i].meta().num_blocks(Section::Data) as u64;
        assert!(blocks(0) > 4, "several blocks per table");
        // Everything: first table by blocks, the middle table whole, the last by blocks.
        let all = InnerRange { start: Vec::new(), end: b"z".to_vec() };
        let want = blocks(0) * avg(0) + t[1].meta().properties().kv_size + blocks(2) * avg(2);
        assert_eq!(estimate_range_blocks_size(&levels, &[all]), want);
        // One key: one block.
        assert_eq!(estimate_range_blocks_size(&levels, &[range(50, 51)]), avg(0));
        // Two ranges in the same block count it once.
        assert_eq!(estimate_range_blocks_size(&levels, &[range(50, 51), range(51, 52)]), avg(0));
        // A gap between tables costs nothing.
        assert_eq!(estimate_range_blocks_size(&levels, &[range(250, 260)]), 0);
        // Memtables and L0 are not part of the estimate: no levels, no bytes.
        assert_eq!(estimate_range_blocks_size::<InMemory>(&[], &[range(0, 10)]), 0);
    }

    proptest! {
        #[test]
        fn matches_brute_force(mut bounds in proptest::collection::vec((0u32..420, 0u32..420), 1..6)) {
            let levels = level();
            bounds.iter_mut().for_each(|(a, b)| if a > b { std::mem::swap(a, b) });
            bounds.sort();
            let ranges: Vec<InnerRange> = bounds.iter().map(|&(a, b)| range(a, b)).collect();
            prop_assert_eq!(estimate_range_blocks_size(&levels, &ranges), model(&levels, &ranges));
        }
    }

    #[test]
    fn empty_table_props_do_not_panic() {
        let empty = Table::open_in_memory(
            FileId(9),
            TableBuilder::new(FileId(9), BuilderOptions::default()).finish().unwrap(),
        )
        .unwrap();
        let levels = vec![Level { level: 1, tables: vec![empty] }];
        let r = InnerRange { start: Vec::new(), end: Vec::new() };
        assert_eq!(estimate_range_blocks_size(&levels, &[r]), 0);
    }
}
