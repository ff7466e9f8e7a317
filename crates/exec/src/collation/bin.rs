//! The byte collations: `binary`, `utf8mb4_0900_bin` and the old framework compare bytes;
//! `utf8mb4_bin`, `utf8_bin`, `ascii_bin` and `latin1_bin` (PAD SPACE) compare bytes after
//! trailing spaces (0x20) are removed. Neither looks at characters, so bytes that are not
//! UTF-8 order as bytes (TiKV's `CollatorBinary`, `CollatorUtf8Mb4Bin`, `CollatorLatin1Bin`).

/// `s` without its trailing spaces.
#[inline]
pub(crate) fn trim_end_spaces(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    while end > 0 && s.get(end - 1) == Some(&b' ') {
        end -= 1;
    }
    s.get(..end).unwrap_or(s)
}
