//! `UPPER`, `LOWER` and `REVERSE`, in their byte and `UTF8` forms.
//!
//! As in MySQL, `UPPER` and `LOWER` leave binary strings as they are (TiDB picks `Upper` /
//! `Lower` for them), and map a character string one character at a time. Bytes that are not
//! UTF-8 are copied as they are.
//!
//! TiKV's `upper_utf8` / `lower_utf8` (`impl_string.rs`) take their rules from the
//! `Encoding` of the argument's charset (`collation/encoding/*.rs`), and so do we
//! (`CaseRules::of`):
//! - utf8mb4 and the rest: a character whose case mapping is several characters (`ß` → `SS`)
//!   keeps MySQL's single-character mapping (`ß` stays, `İ` lowers to `i`).
//! - `gbk` (`encoding/gbk.rs`, after MySQL's WL#4583): the first character of the Unicode
//!   mapping, except where the other case is not in GBK: the pinyin letters `à á è é ê ì í ò
//!   ó ù ú ü ā ē ě ī ń ň ō ū ǎ ǐ ǒ ǔ ǖ ǘ ǚ ǜ` stay lower-case and `Ⅺ Ⅻ` stay upper-case.
//! - `gb18030` (`encoding/gb18030.rs`): the first character of the Unicode mapping, except for
//!   the code points MySQL's gb18030 leaves alone in both directions (`GB18030_KEEP`),
//!   those it leaves alone when upper-casing and lowers to another character
//!   (`GB18030_LOWER`, `µ` → `μ`, `ς` → `σ`, `ǅ` → `ǆ`, ...).

use super::{Sig, add, build_bytes, char_at, map_slice};
use crate::collation::Collation;
use crate::column::{BytesT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::registry::{Call, Registry};
use crate::types::EvalType::Bytes;
use crate::types::{Charset, FieldType};

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::Upper, &[Bytes], Bytes, identity);
    add(r, Sig::Lower, &[Bytes], Bytes, identity);
    add(r, Sig::UpperUtf8, &[Bytes], Bytes, upper_utf8);
    add(r, Sig::LowerUtf8, &[Bytes], Bytes, lower_utf8);
    add(r, Sig::Reverse, &[Bytes], Bytes, reverse);
    add(r, Sig::ReverseUtf8, &[Bytes], Bytes, reverse_utf8);
}

/// `UPPER`/`LOWER` of a binary string: the string.
fn identity(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_slice(c.n, c.typed(0)?, |s| s))
}

fn upper_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map_utf8(c, true)
}

fn lower_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map_utf8(c, false)
}

fn map_utf8(c: &Call<'_, '_>, upper: bool) -> Result<VecCol> {
    let rules = CaseRules::of(&c.arg_ft(0));
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        map_case_with(s, buf, upper, rules);
        Ok(true)
    })
}

/// The case rules of a charset (TiKV's `Encoding::upper` / `Encoding::lower`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaseRules {
    /// utf8mb4 and every charset without rules of its own.
    Unicode,
    /// `gbk`.
    Gbk,
    /// `gb18030`.
    Gb18030,
}

impl CaseRules {
    /// The rules for an argument of type `ft`: by its charset, as TiKV chooses the encoding
    /// from the argument's field type. TiDB names the charset of every string argument; when
    /// none is named we take the one of its collation (gbk_bin, gbk_chinese_ci, gb18030_bin,
    /// gb18030_chinese_ci).
    fn of(ft: &FieldType) -> CaseRules {
        match ft.charset {
            Charset::Gbk => CaseRules::Gbk,
            Charset::Gb18030 => CaseRules::Gb18030,
            Charset::Unspecified => match Collation::from_id(ft.collate) {
                Ok(Collation::GbkBin | Collation::GbkChineseCi) => CaseRules::Gbk,
                Ok(Collation::Gb18030Bin) => CaseRules::Gb18030,
                // gb18030_chinese_ci: a collation the engine cannot compare with.
                Err(_) if ft.collate == -248 => CaseRules::Gb18030,
                _ => CaseRules::Unicode,
            },
            Charset::Utf8Mb4 | Charset::Other => CaseRules::Unicode,
        }
    }

    fn upper(self, ch: char) -> char {
        match self {
            CaseRules::Unicode => upper_char(ch),
            CaseRules::Gbk if in_ranges(GBK_KEEP_LOWER, ch) => ch,
            CaseRules::Gb18030
                if in_ranges(GB18030_KEEP, ch) || lower_special(GB18030_LOWER, ch).is_some() =>
            {
                ch
            }
            CaseRules::Gbk | CaseRules::Gb18030 => ch.to_uppercase().next().unwrap_or(ch),
        }
    }

    fn lower(self, ch: char) -> char {
        match self {
            CaseRules::Unicode => lower_char(ch),
            CaseRules::Gbk if in_ranges(GBK_KEEP_UPPER, ch) => ch,
            CaseRules::Gb18030 if in_ranges(GB18030_KEEP, ch) => ch,
            CaseRules::Gb18030 => {
                lower_special(GB18030_LOWER, ch).unwrap_or_else(|| lower_char(ch))
            }
            CaseRules::Gbk => lower_char(ch),
        }
    }
}

/// Inclusive code point ranges, sorted.
type Ranges = &'static [(u32, u32)];

/// Lower-case letters of GBK whose upper case GBK lacks (the pinyin vowels): `UPPER` keeps
/// them under gbk.
const GBK_KEEP_LOWER: Ranges = &[
    (0xE0, 0xE1),
    (0xE8, 0xEA),
    (0xEC, 0xED),
    (0xF2, 0xF3),
    (0xF9, 0xFA),
    (0xFC, 0xFC),
    (0x101, 0x101),
    (0x113, 0x113),
    (0x11B, 0x11B),
    (0x12B, 0x12B),
    (0x144, 0x144),
    (0x148, 0x148),
    (0x14D, 0x14D),
    (0x16B, 0x16B),
    (0x1CE, 0x1CE),
    (0x1D0, 0x1D0),
    (0x1D2, 0x1D2),
    (0x1D4, 0x1D4),
    (0x1D6, 0x1D6),
    (0x1D8, 0x1D8),
    (0x1DA, 0x1DA),
    (0x1DC, 0x1DC),
];

/// `Ⅺ` and `Ⅻ`, whose lower case GBK lacks: `LOWER` keeps them under gbk.
const GBK_KEEP_UPPER: Ranges = &[(0x216A, 0x216B)];

/// The code points gb18030's `UPPER` and `LOWER` both leave as they are.
const GB18030_KEEP: Ranges = &[
    (0x25C, 0x25C),
    (0x261, 0x261),
    (0x265, 0x266),
    (0x26A, 0x26A),
    (0x26C, 0x26C),
    (0x282, 0x282),
    (0x287, 0x287),
    (0x29D, 0x29E),
    (0x37F, 0x37F),
    (0x3F3, 0x3F3),
    (0x526, 0x52F),
    (0x10C7, 0x10C7),
    (0x10CD, 0x10CD),
    (0x10D0, 0x10FA),
    (0x10FD, 0x10FF),
    (0x13A0, 0x13F5),
    (0x13F8, 0x13FD),
    (0x1C80, 0x1C88),
    (0x1C90, 0x1CBA),
    (0x1CBD, 0x1CBF),
    (0x1D79, 0x1D79),
    (0x1D7D, 0x1D7D),
    (0x1D8E, 0x1D8E),
    (0x2CF2, 0x2CF3),
    (0x2D27, 0x2D27),
    (0x2D2D, 0x2D2D),
    (0xA660, 0xA661),
    (0xA698, 0xA69B),
    (0xA78D, 0xA78D),
    (0xA790, 0xA794),
    (0xA796, 0xA7AE),
    (0xA7B0, 0xA7BF),
    (0xA7C2, 0xA7CA),
    (0xA7F5, 0xA7F6),
    (0xAB53, 0xAB53),
    (0xAB70, 0xABBF),
    (0x104B0, 0x104D3),
    (0x104D8, 0x104FB),
    (0x10C80, 0x10CB2),
    (0x10CC0, 0x10CF2),
    (0x118A0, 0x118DF),
    (0x16E40, 0x16E7F),
    (0x1E900, 0x1E943),
];

/// gb18030's own `LOWER` of these code points, sorted; its `UPPER` leaves them as they are.
const GB18030_LOWER: &[(u32, char)] = &[
    (0xB5, '\u{3BC}'),
    (0x1C5, '\u{1C6}'),
    (0x1C8, '\u{1C9}'),
    (0x1CB, '\u{1CC}'),
    (0x1F2, '\u{1F3}'),
    (0x3C2, '\u{3C3}'),
    (0x3D0, '\u{3B2}'),
    (0x3D1, '\u{3B8}'),
    (0x3D5, '\u{3C6}'),
    (0x3D6, '\u{3C0}'),
    (0x3F0, '\u{3BA}'),
    (0x3F1, '\u{3C1}'),
    (0x3F5, '\u{3B5}'),
    (0x1E9B, '\u{1E61}'),
    (0x1FBE, '\u{3B9}'),
];

fn in_ranges(ranges: Ranges, ch: char) -> bool {
    let cp = u32::from(ch);
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

fn lower_special(table: &[(u32, char)], ch: char) -> Option<char> {
    let cp = u32::from(ch);
    table
        .binary_search_by_key(&cp, |&(from, _)| from)
        .ok()
        .and_then(|at| table.get(at))
        .map(|&(_, to)| to)
}

/// Appends `s` upper- or lower-cased by `rules` to `out`. ASCII letters map alike under every
/// charset's rules.
fn map_case_with(s: &[u8], out: &mut Vec<u8>, upper: bool, rules: CaseRules) {
    if s.is_ascii() {
        if upper {
            out.extend(s.iter().map(u8::to_ascii_uppercase));
        } else {
            out.extend(s.iter().map(u8::to_ascii_lowercase));
        }
        return;
    }
    // ASCII bytes map directly; each other character is decoded, mapped and re-encoded,
    // and a byte that does not start a valid character is copied.
    let mut tmp = [0u8; 4];
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if b < 0x80 {
            out.push(if upper { b.to_ascii_uppercase() } else { b.to_ascii_lowercase() });
            i += 1;
            continue;
        }
        let l = char_at(s, i);
        let ch = s
            .get(i..i + l)
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| c.chars().next());
        match ch {
            Some(ch) => {
                let m = if upper { rules.upper(ch) } else { rules.lower(ch) };
                out.extend_from_slice(m.encode_utf8(&mut tmp).as_bytes());
                i += l;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// The single-character upper case of `ch` (itself when Unicode maps it to several).
fn upper_char(ch: char) -> char {
    let mut u = ch.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => ch,
    }
}

/// The single-character lower case of `ch` (the first of several: `İ` → `i`).
fn lower_char(ch: char) -> char {
    ch.to_lowercase().next().unwrap_or(ch)
}

fn reverse(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        buf.extend(s.iter().rev());
        Ok(true)
    })
}

fn reverse_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        // Each character's bytes go, in order, to the mirrored position.
        buf.resize(s.len(), 0);
        let mut at = 0;
        while at < s.len() {
            let l = char_at(s, at);
            let end = s.len() - at;
            if let (Some(dst), Some(src)) = (buf.get_mut(end - l..end), s.get(at..at + l)) {
                dst.copy_from_slice(src);
            }
            at += l;
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use rcop_datum::chunk::mysql_type as mt;

    use super::*;

    fn map(s: &str, upper: bool, rules: CaseRules) -> String {
        let mut v = Vec::new();
        map_case_with(s.as_bytes(), &mut v, upper, rules);
        String::from_utf8(v).unwrap()
    }

    fn up(s: &str) -> String {
        map(s, true, CaseRules::Unicode)
    }

    fn low(s: &str) -> String {
        map(s, false, CaseRules::Unicode)
    }

    #[test]
    fn case_maps_one_character_at_a_time() {
        assert_eq!(up("abcÉé"), "ABCÉÉ");
        assert_eq!(up("straße"), "STRAßE");
        assert_eq!(low("İI"), "ii");
        assert_eq!(low("ÀÉ"), "àé");
        let mut v = Vec::new();
        map_case_with(b"a\xFFb", &mut v, true, CaseRules::Gbk);
        assert_eq!(v, b"A\xFFB");
    }

    #[test]
    fn gbk_keeps_the_cases_gbk_lacks() {
        // TiKV encoding/gbk.rs (MySQL WL#4583): the pinyin vowels have no upper case in GBK,
        // Ⅺ and Ⅻ no lower case; every other character takes the first character of its
        // Unicode mapping.
        let g = CaseRules::Gbk;
        let pinyin = "àáèéêìíòóùúüāēěīńňōūǎǐǒǔǖǘǚǜ";
        assert_eq!(map(pinyin, true, g), pinyin);
        assert_eq!(up(pinyin), "ÀÁÈÉÊÌÍÒÓÙÚÜĀĒĚĪŃŇŌŪǍǏǑǓǕǗǙǛ");
        assert_eq!(map("ⅪⅫ", false, g), "ⅪⅫ");
        assert_eq!(low("ⅪⅫ"), "ⅺⅻ");
        assert_eq!(map("ⅠⅩ", false, g), "ⅰⅹ");
        assert_eq!(map("ⅰⅺ", true, g), "ⅠⅪ");
        assert_eq!(map("abc中文âëΑβ", true, g), "ABC中文ÂËΑΒ");
        assert_eq!(map("ABC中文ÂËΑΒ", false, g), "abc中文âëαβ");
        // The first character of a longer mapping, where utf8mb4 keeps the character.
        assert_eq!(map("ß", true, g), "S");
        assert_eq!(up("ß"), "ß");
    }

    #[test]
    fn gb18030_keeps_and_folds_as_mysql() {
        // TiKV encoding/gb18030.rs.
        let g = CaseRules::Gb18030;
        // Lowered to another letter, kept by UPPER.
        for (from, lower) in [("µ", "μ"), ("ǅ", "ǆ"), ("ς", "σ"), ("ϐ", "β"), ("ϑ", "θ")]
            .into_iter()
            .chain([("ϕ", "φ"), ("ϖ", "π"), ("ϰ", "κ"), ("ϱ", "ρ"), ("ϵ", "ε")])
            .chain([("ẛ", "ṡ"), ("\u{1FBE}", "\u{3B9}"), ("ǈ", "ǉ"), ("ǋ", "ǌ"), ("ǲ", "ǳ")])
        {
            assert_eq!(map(from, false, g), lower, "{from}");
            assert_eq!(map(from, true, g), from, "{from}");
        }
        assert_eq!(up("µς"), "ΜΣ");
        // Left alone both ways (Unicode maps them).
        for ch in ["ɡ", "ɥ", "ʞ", "Ϳ", "ϳ", "Ԧ", "Ⴧ", "ა", "Ꭰ", "ꭰ", "Ჾ", "ᵹ", "Ɥ", "𐓘", "𞤀", "𞤢"]
        {
            assert_eq!(map(ch, true, g), ch, "{ch}");
            assert_eq!(map(ch, false, g), ch, "{ch}");
        }
        assert_eq!(up("ɡა"), "ꞬᲐ");
        assert_eq!(low("Ꭰ"), "ꭰ");
        // Everything else as Unicode, the first character of a longer mapping.
        assert_eq!(map("abcÀé中Ω", false, g), "abcàé中ω");
        assert_eq!(map("abcÀé中ω", true, g), "ABCÀÉ中Ω");
        assert_eq!(map("ß", true, g), "S");
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        for t in [GBK_KEEP_LOWER, GBK_KEEP_UPPER, GB18030_KEEP] {
            assert!(t.iter().all(|&(lo, hi)| lo <= hi));
            assert!(t.windows(2).all(|w| w[0].1 < w[1].0), "{t:?}");
        }
        assert!(GB18030_LOWER.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn rules_follow_the_arguments_charset() {
        let ft = |charset, collate| FieldType { charset, collate, ..FieldType::new(mt::VARCHAR) };
        assert_eq!(CaseRules::of(&ft(Charset::Gbk, -87)), CaseRules::Gbk);
        assert_eq!(CaseRules::of(&ft(Charset::Gbk, 87)), CaseRules::Gbk);
        assert_eq!(CaseRules::of(&ft(Charset::Gb18030, -249)), CaseRules::Gb18030);
        assert_eq!(CaseRules::of(&ft(Charset::Utf8Mb4, -46)), CaseRules::Unicode);
        assert_eq!(CaseRules::of(&ft(Charset::Other, 63)), CaseRules::Unicode);
        // No charset named: the collation's.
        assert_eq!(CaseRules::of(&ft(Charset::Unspecified, -28)), CaseRules::Gbk);
        assert_eq!(CaseRules::of(&ft(Charset::Unspecified, -248)), CaseRules::Gb18030);
        assert_eq!(CaseRules::of(&ft(Charset::Unspecified, -45)), CaseRules::Unicode);
        assert_eq!(CaseRules::of(&ft(Charset::Unspecified, -7)), CaseRules::Unicode);
    }
}
