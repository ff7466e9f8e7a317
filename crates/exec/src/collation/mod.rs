//! Collations: how strings compare, what their sort keys are, and how LIKE matches characters,
//! exactly as TiKV's `tidb_query_datatype::codec::collation`.
//!
//! TiDB sends the collations of its new framework as negated MySQL ids (`-45` is
//! `utf8mb4_general_ci`); every non-negative id is the old framework, where strings compare as
//! bytes. [`COLLATIONS`] is the one table: [`Collation::from_id`], [`collation_name`] and the
//! capability listing all read it.
//!
//! Strings of every charset TiDB supports reach the coprocessor as UTF-8 (gbk and gb18030 data
//! is stored converted). What TiKV does with bytes that are not UTF-8 depends on the
//! collation, and the engine does the same (see each family's module):
//!
//! - byte collations (`binary`, `*_bin`, `utf8mb4_0900_bin`) never look at characters;
//! - `gbk_bin` and `gb18030_bin` weigh each byte that does not start a valid character '?';
//! - the `_ci` collations stop at the first invalid sequence: the sort key ends there, and a
//!   comparison that meets one (on either side, before a difference) answers Equal.
//!
//! Weight tables are generated data (`data/`, by `tools/gen-collation-tables.py` and
//! `tools/gen-gb-tables`).

mod bin;
mod gb;
mod general_ci;
mod uca;

use std::cmp::Ordering;

use crate::error::{Error, Feature, Result};

/// How two strings compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collation {
    /// Plain byte order (`binary`, every old-framework id, `utf8mb4_0900_bin`).
    Binary,
    /// Byte order ignoring trailing spaces (`utf8mb4_bin`, `utf8_bin`, `ascii_bin`,
    /// `latin1_bin`: PAD SPACE).
    PadSpaceBin,
    /// `utf8mb4_general_ci`, `utf8_general_ci`: one 16-bit weight per BMP character (MySQL's
    /// table), 0xFFFD for every other one, PAD SPACE.
    GeneralCi,
    /// `utf8mb4_unicode_ci`, `utf8_unicode_ci`: UCA 4.0.0 primary weights of BMP characters,
    /// 0xFFFD for every other one, PAD SPACE.
    UnicodeCi,
    /// `utf8mb4_0900_ai_ci`: UCA 9.0.0 (DUCET) primary weights, NO PAD.
    Uca0900AiCi,
    /// `gbk_bin`: each character weighs its GBK code ('?' when GBK lacks it), PAD SPACE.
    GbkBin,
    /// `gbk_chinese_ci`: MySQL's gbk_chinese_ci weight of each character's GBK code, PAD
    /// SPACE.
    GbkChineseCi,
    /// `gb18030_bin`: each character weighs its GB18030 code, PAD SPACE.
    Gb18030Bin,
}

/// One row of [`COLLATIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollationInfo {
    /// The id TiDB sends (new framework, negative).
    pub id: i32,
    /// MySQL's name.
    pub name: &'static str,
    /// How the engine applies it, or `None` when it cannot (an error everywhere).
    pub collation: Option<Collation>,
}

const fn row(id: i32, name: &'static str, collation: Option<Collation>) -> CollationInfo {
    CollationInfo { id, name, collation }
}

/// Every collation of TiDB's new framework that TiKV implements, in TiKV's id order; the ones
/// the engine cannot apply yet carry `None`.
pub const COLLATIONS: &[CollationInfo] = &[
    row(-28, "gbk_chinese_ci", Some(Collation::GbkChineseCi)),
    row(-33, "utf8_general_ci", Some(Collation::GeneralCi)),
    row(-45, "utf8mb4_general_ci", Some(Collation::GeneralCi)),
    row(-46, "utf8mb4_bin", Some(Collation::PadSpaceBin)),
    row(-47, "latin1_bin", Some(Collation::PadSpaceBin)),
    row(-63, "binary", Some(Collation::Binary)),
    row(-65, "ascii_bin", Some(Collation::PadSpaceBin)),
    row(-83, "utf8_bin", Some(Collation::PadSpaceBin)),
    row(-87, "gbk_bin", Some(Collation::GbkBin)),
    row(-192, "utf8_unicode_ci", Some(Collation::UnicodeCi)),
    row(-224, "utf8mb4_unicode_ci", Some(Collation::UnicodeCi)),
    // MySQL 8's gb18030_chinese_ci weights (a pinyin order of every Han character) are in no
    // package the project can install; see `gb`.
    row(-248, "gb18030_chinese_ci", None),
    row(-249, "gb18030_bin", Some(Collation::Gb18030Bin)),
    row(-255, "utf8mb4_0900_ai_ci", Some(Collation::Uca0900AiCi)),
    row(-309, "utf8mb4_0900_bin", Some(Collation::Binary)),
];

/// The name of a collation id of TiDB's new framework (negative ids), or `"collation"` for
/// one without a known name.
pub fn collation_name(id: i32) -> &'static str {
    COLLATIONS.iter().find(|c| c.id == id).map_or("collation", |c| c.name)
}

impl Collation {
    /// Maps a collation id (new framework ids are negative; every id `>= 0` is the old
    /// framework and compares as bytes).
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] ([`Feature::Collation`]) naming a collation the engine cannot
    /// apply, or an id TiKV does not know.
    pub fn from_id(id: i32) -> Result<Collation> {
        if id >= 0 {
            return Ok(Collation::Binary);
        }
        COLLATIONS.iter().find(|c| c.id == id).and_then(|c| c.collation).ok_or_else(|| {
            Error::unsupported(
                Feature::Collation,
                format!("{} (collation id {id})", collation_name(id)),
            )
        })
    }

    /// True for the collations whose order is a byte order (the sort key is a slice of the
    /// string).
    #[inline]
    pub fn is_bytes(self) -> bool {
        matches!(self, Collation::Binary | Collation::PadSpaceBin)
    }

    /// The sort key when it is a slice of `s` (the byte collations; trailing spaces removed
    /// under PAD SPACE), `None` for the collations with weights.
    #[inline]
    pub fn byte_key(self, s: &[u8]) -> Option<&[u8]> {
        match self {
            Collation::Binary => Some(s),
            Collation::PadSpaceBin => Some(bin::trim_end_spaces(s)),
            _ => None,
        }
    }

    /// The bytes that decide equality and order: a slice of `s` for the byte collations,
    /// otherwise the sort key written into `scratch` (cleared first).
    #[inline]
    pub fn key<'a>(self, s: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
        match self.byte_key(s) {
            Some(k) => k,
            None => {
                scratch.clear();
                self.sort_key(s, scratch);
                scratch
            }
        }
    }

    /// Appends the sort key of `s` to `out`, byte-identical to TiKV's (index keys store it).
    pub fn sort_key(self, s: &[u8], out: &mut Vec<u8>) {
        match self {
            Collation::Binary | Collation::PadSpaceBin => {
                out.extend_from_slice(self.byte_key(s).unwrap_or(s));
            }
            Collation::GeneralCi => general_ci::sort_key(s, out),
            Collation::UnicodeCi => uca::UCA0400.sort_key(bin::trim_end_spaces(s), out),
            Collation::Uca0900AiCi => uca::UCA0900.sort_key(s, out),
            Collation::GbkBin => gb::Gb::GbkBin.sort_key(s, out),
            Collation::GbkChineseCi => gb::Gb::GbkChineseCi.sort_key(s, out),
            Collation::Gb18030Bin => gb::Gb::Gb18030Bin.sort_key(s, out),
        }
    }

    /// Compares two strings under this collation, as TiKV's `sort_compare`.
    #[inline]
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::PadSpaceBin => bin::trim_end_spaces(a).cmp(bin::trim_end_spaces(b)),
            Collation::GeneralCi => general_ci::compare(a, b, true),
            Collation::UnicodeCi => {
                uca::UCA0400.compare(bin::trim_end_spaces(a), bin::trim_end_spaces(b))
            }
            Collation::Uca0900AiCi => uca::UCA0900.compare(a, b),
            Collation::GbkBin => gb::Gb::GbkBin.compare(a, b, true),
            Collation::GbkChineseCi => gb::Gb::GbkChineseCi.compare(a, b, true),
            Collation::Gb18030Bin => gb::Gb::Gb18030Bin.compare(a, b, true),
        }
    }

    /// Compares two strings without PAD SPACE: trailing spaces count. TiKV's
    /// `sort_compare(a, b, force_no_pad = true)`, which its `like` uses to compare one pattern
    /// character with one text character (`impl_like.rs`): under a PAD SPACE collation a
    /// lone space would otherwise compare as the empty string, so `'a　a' LIKE 'a a'` (U+3000
    /// weighs as a space under unicode_ci) would fail and an ignorable character would match
    /// a space.
    #[inline]
    pub fn compare_no_pad(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary | Collation::PadSpaceBin => a.cmp(b),
            Collation::GeneralCi => general_ci::compare(a, b, false),
            Collation::UnicodeCi => uca::UCA0400.compare(a, b),
            Collation::Uca0900AiCi => uca::UCA0900.compare(a, b),
            Collation::GbkBin => gb::Gb::GbkBin.compare(a, b, false),
            Collation::GbkChineseCi => gb::Gb::GbkChineseCi.compare(a, b, false),
            Collation::Gb18030Bin => gb::Gb::Gb18030Bin.compare(a, b, false),
        }
    }
}

/// Decodes the UTF-8 character at the start of `s` (strictly: no overlong forms, surrogates
/// or code points past U+10FFFF): the code point and its length, `None` when `s` is empty or
/// does not start with a valid character.
#[inline]
pub(crate) fn next_utf8(s: &[u8]) -> Option<(u32, usize)> {
    let b0 = *s.first()?;
    if b0 < 0x80 {
        return Some((u32::from(b0), 1));
    }
    let (len, min, init) = match b0 {
        0xC2..=0xDF => (2, 0x80, b0 & 0x1F),
        0xE0..=0xEF => (3, 0x800, b0 & 0x0F),
        0xF0..=0xF4 => (4, 0x1_0000, b0 & 0x07),
        _ => return None,
    };
    let mut cp = u32::from(init);
    for k in 1..len {
        let b = *s.get(k)?;
        if b & 0xC0 != 0x80 {
            return None;
        }
        cp = (cp << 6) | u32::from(b & 0x3F);
    }
    if cp < min || cp > 0x10_FFFF || (0xD800..=0xDFFF).contains(&cp) {
        return None;
    }
    Some((cp, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(Collation::from_id(-46).unwrap(), Collation::PadSpaceBin);
        assert_eq!(Collation::from_id(-63).unwrap(), Collation::Binary);
        assert_eq!(Collation::from_id(-309).unwrap(), Collation::Binary);
        assert_eq!(Collation::from_id(33).unwrap(), Collation::Binary);
        assert_eq!(Collation::from_id(-45).unwrap(), Collation::GeneralCi);
        assert_eq!(Collation::from_id(-33).unwrap(), Collation::GeneralCi);
        assert_eq!(Collation::from_id(-192).unwrap(), Collation::UnicodeCi);
        assert_eq!(Collation::from_id(-255).unwrap(), Collation::Uca0900AiCi);
        assert_eq!(Collation::from_id(-87).unwrap(), Collation::GbkBin);
        assert_eq!(Collation::from_id(-28).unwrap(), Collation::GbkChineseCi);
        assert_eq!(Collation::from_id(-249).unwrap(), Collation::Gb18030Bin);
        for id in [-248, -1, -2000, i32::MIN] {
            let e = Collation::from_id(id).unwrap_err();
            assert!(matches!(e, Error::Unsupported { what: Feature::Collation, .. }), "{e}");
            assert!(e.to_string().contains(&id.to_string()), "{e}");
        }
        assert_eq!(collation_name(-87), "gbk_bin");
        assert_eq!(collation_name(-248), "gb18030_chinese_ci");
        assert_eq!(collation_name(-7), "collation");
    }

    #[test]
    fn bin() {
        assert_eq!(Collation::PadSpaceBin.compare(b"a  ", b"a"), Ordering::Equal);
        assert_eq!(Collation::Binary.compare(b"a ", b"a"), Ordering::Greater);
        assert_eq!(Collation::PadSpaceBin.compare(b"a\t", b"a"), Ordering::Greater);
        let mut k = Vec::new();
        assert_eq!(Collation::PadSpaceBin.key(b"ab  ", &mut k), b"ab");
        assert_eq!(Collation::GeneralCi.key(b"ab  ", &mut k), [0, 0x41, 0, 0x42]);
    }

    #[test]
    fn utf8_decoding_is_strict() {
        assert_eq!(next_utf8("é".as_bytes()), Some((0xE9, 2)));
        assert_eq!(next_utf8("😃".as_bytes()), Some((0x1F603, 4)));
        for bad in [&b"\xC0\x80"[..], b"\xED\xA0\x80", b"\xF4\x90\x80\x80", b"\x80", b"\xE2\x82"] {
            assert_eq!(next_utf8(bad), None, "{bad:?}");
        }
        assert_eq!(next_utf8(b""), None);
    }
}
