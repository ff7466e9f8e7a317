//! Generates the GBK / GB18030 encoding tables of rcop-exec (`crates/exec/src/collation/data/`):
//! the weights of `gbk_bin` and `gb18030_bin` are the characters' GBK / GB18030 codes.
//!
//!     cargo run --locked --manifest-path tools/gen-gb-tables/Cargo.toml -- OUT_DIR
//!
//! TiKV's tables (`gbk_bin.data`, `gb18030_bin.data`) are Go's `golang.org/x/text`
//! `simplifiedchinese` encoders, which implement the WHATWG Encoding Standard's GBK and gb18030
//! as its index stood before two later changes. `encoding_rs` (pinned in Cargo.toml) implements
//! the current standard, so the generator starts from it and undoes those changes:
//!
//! * GB18030-2022 alignment: 18 two-byte codes (A6D9..A6F3, FE59..FEA0) now decode to the
//!   standard characters U+FE10..U+FE19 and U+9FB4..U+9FBB instead of private-use ones. The
//!   old encoders give these 18 characters their four-byte codes (gb18030) or no code (GBK);
//!   the private-use characters keep their two-byte codes in both. TiKV's own tests agree:
//!   U+E78D weighs A6D9 under gb18030_bin, and 36 of TiKV's GB18030-2022 override pairs differ
//!   from its gb18030_bin table (these 18 characters and the 18 private-use ones).
//! * U+E5E5: the current encoders refuse it; the old ones give it A3A0.
//! * GBK only: U+20AC (euro) is the single byte 0x80 (both, and TiKV's "wire" table).
//!
//! A character without a code weighs '?' (0x3F), as in TiKV.
//!
//! Output (little-endian):
//!
//! * `gbk_bin.idx` u16 page id per 256 code points of the BMP; `gbk_bin.page` 256 u16 codes per
//!   stored page (identical pages stored once). A code below 0x100 is one byte.
//! * `gb18030_bin.idx` / `gb18030_bin.page`: the same for GB18030's one- and two-byte codes;
//!   0xFFFF marks a BMP character with a four-byte code.
//! * `gb18030_bin.ranges`: the BMP characters with four-byte codes as runs: u32 first code point,
//!   u32 its four-byte pointer (the code's index counted from 81 30 81 30), each run going on
//!   with consecutive code points and pointers up to the next run's start. Characters past the
//!   BMP are `189000 + (cp - 0x10000)`, computed at run time as TiKV's table holds them.
//!
//! Deterministic: the same encoding_rs version gives byte-identical files.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use encoding_rs::{EncoderResult, Encoding, GB18030, GBK};

/// The characters whose GB18030-2022 two-byte codes the old encoders do not produce.
const NEW_2022: [u32; 18] = [
    0xFE10, 0xFE11, 0xFE12, 0xFE13, 0xFE14, 0xFE15, 0xFE16, 0xFE17, 0xFE18, 0xFE19, 0x9FB4, 0x9FB5,
    0x9FB6, 0x9FB7, 0x9FB8, 0x9FB9, 0x9FBA, 0x9FBB,
];

const FOUR: u16 = 0xFFFF;
const UNMAPPED: u16 = 0x3F;

fn encode(enc: &'static Encoding, cp: u32) -> Option<Vec<u8>> {
    let ch = char::from_u32(cp)?;
    let s = ch.to_string();
    let mut out = [0u8; 8];
    let (r, read, written) =
        enc.new_encoder().encode_from_utf8_without_replacement(&s, &mut out, true);
    (r == EncoderResult::InputEmpty && read == s.len()).then(|| out[..written].to_vec())
}

/// The pointer of a four-byte GB18030 code.
fn pointer(b: &[u8]) -> u32 {
    let d = |i: usize, base: u8| u32::from(b[i] - base);
    ((d(0, 0x81) * 10 + d(1, 0x30)) * 126 + d(2, 0x81)) * 10 + d(3, 0x30)
}

fn four_bytes(p: u32) -> [u8; 4] {
    [
        (0x81 + p / 12600) as u8,
        (0x30 + p / 1260 % 10) as u8,
        (0x81 + p / 10 % 126) as u8,
        (0x30 + p % 10) as u8,
    ]
}

/// Every BMP character's four-byte code as the decoder reads the BMP's four-byte pointers
/// (the linear ranges; the decoder still maps the 18 characters of [`NEW_2022`] there).
fn decoded_four_byte() -> BTreeMap<u32, u32> {
    let mut m = BTreeMap::new();
    for p in 0..39420 {
        let b = four_bytes(p);
        if let Some(s) = GB18030.decode_without_bom_handling_and_without_replacement(&b) {
            let mut it = s.chars();
            if let (Some(c), None) = (it.next(), it.next()) {
                m.insert(c as u32, p);
            }
        }
    }
    m
}

fn u16_code(b: &[u8]) -> u16 {
    match *b {
        [x] => u16::from(x),
        [x, y] => u16::from_be_bytes([x, y]),
        _ => unreachable!("not a one- or two-byte code: {b:02X?}"),
    }
}

fn write_paged(dir: &Path, name: &str, codes: &[u16]) {
    let mut idx = Vec::new();
    let mut pages: Vec<&[u16]> = Vec::new();
    for page in codes.chunks(256) {
        let id = pages.iter().position(|p| *p == page).unwrap_or_else(|| {
            pages.push(page);
            pages.len() - 1
        });
        idx.extend_from_slice(&(id as u16).to_le_bytes());
    }
    let body: Vec<u8> = pages.iter().flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes())).collect();
    fs::write(dir.join(format!("{name}.idx")), idx).expect("write idx");
    fs::write(dir.join(format!("{name}.page")), body).expect("write page");
}

fn main() {
    let out = std::env::args().nth(1).expect("usage: gen-gb-tables OUT_DIR");
    let dir = Path::new(&out);
    fs::create_dir_all(dir).expect("create OUT_DIR");
    let four = decoded_four_byte();

    let mut gbk = vec![UNMAPPED; 0x1_0000];
    let mut gb = vec![UNMAPPED; 0x1_0000];
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut last: Option<(u32, u32)> = None;
    for cp in 0..0x1_0000u32 {
        if (0xD800..0xE000).contains(&cp) {
            // Surrogates never come out of UTF-8; TiKV's tables hold '?'.
            continue;
        }
        let i = cp as usize;
        // gb18030: one, two or four bytes.
        let gb_bytes = if cp == 0xE5E5 {
            Some(vec![0xA3, 0xA0])
        } else if NEW_2022.contains(&cp) {
            Some(four_bytes(four[&cp]).to_vec())
        } else {
            encode(GB18030, cp)
        };
        let gb_bytes = gb_bytes.unwrap_or_else(|| panic!("gb18030 cannot encode U+{cp:04X}"));
        if gb_bytes.len() == 4 {
            let p = pointer(&gb_bytes);
            gb[i] = FOUR;
            if last != Some((cp - 1, p.wrapping_sub(1))) {
                runs.push((cp, p));
            }
            last = Some((cp, p));
        } else {
            gb[i] = u16_code(&gb_bytes);
        }
        // GBK: one or two bytes, or none.
        let gbk_bytes = if cp == 0xE5E5 {
            Some(vec![0xA3, 0xA0])
        } else if NEW_2022.contains(&cp) {
            None
        } else {
            encode(GBK, cp)
        };
        if let Some(b) = gbk_bytes {
            gbk[i] = u16_code(&b);
            assert!(
                gbk[i] == 0x80 || gbk[i] == gb[i],
                "U+{cp:04X}: GBK {:04X} differs from GB18030 {:04X}",
                gbk[i],
                gb[i]
            );
        }
    }
    // Past the BMP the encoder is linear from pointer 189000 (checked on a sample).
    for cp in [0x1_0000u32, 0x1_F603, 0x2_0087, 0x10_FFFF] {
        let b = encode(GB18030, cp).expect("supplementary");
        assert_eq!(pointer(&b), 189_000 + (cp - 0x1_0000), "U+{cp:04X}");
    }
    write_paged(dir, "gbk_bin", &gbk);
    write_paged(dir, "gb18030_bin", &gb);
    let ranges: Vec<u8> = runs
        .iter()
        .flat_map(|(cp, p)| cp.to_le_bytes().into_iter().chain(p.to_le_bytes()))
        .collect();
    fs::write(dir.join("gb18030_bin.ranges"), ranges).expect("write ranges");
}
