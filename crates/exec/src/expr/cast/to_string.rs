//! Casts to strings: the text of a double (TiKV prints Rust's shortest round-trip form,
//! never an exponent), of a FLOAT at single precision, of YEAR 0, and the fitting of the
//! result to the target's length (cut with warning 1406, BINARY(n) padded with NULs).

use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::types::FieldType;
use rcop_datum::chunk::mysql_type as mt;

/// Binary collation id: a string of it counts bytes, not characters.
const BINARY: i32 = 63;

/// A double as TiKV's `Real::to_string` prints it (TiDB's `FormatFloat(f, 'f', -1, 64)`):
/// the shortest digits that read back to the same double, in plain notation
/// (`1e21` is `1000000000000000000000`, `1e-7` is `0.0000001`, `-0` stays `-0`).
pub fn real_to_string(x: f64) -> String {
    format!("{x}")
}

/// A FLOAT column's value printed at single precision (TiKV's `cast_float_real_as_string`).
pub(super) fn float_to_string(x: f64) -> String {
    format!("{}", x as f32)
}

/// A YEAR's text: 0 is `0000` (TiKV's `cast_year_as_string`).
pub(super) fn year_to_string(x: i64) -> String {
    if x == 0 { "0000".to_string() } else { x.to_string() }
}

/// TiKV's `produce_str_with_specified_tp` then `pad_zero_for_binary_type`: a value longer than
/// the target's length (characters, or bytes for the binary collation) is cut after a
/// truncation (`ER_DATA_TOO_LONG`); a shorter one cast to `BINARY(n)` is padded with NULs.
pub(super) fn fit_string(mut s: Vec<u8>, ft: &FieldType, ctx: &mut EvalContext) -> Result<Vec<u8>> {
    let Ok(flen) = usize::try_from(ft.flen) else {
        return Ok(s);
    };
    let binary = matches!(ft.collate, BINARY | -63);
    if binary {
        if s.len() > flen {
            ctx.truncated(Error::DataTooLong { flen, len: s.len() })?;
            s.truncate(flen);
        } else if ft.tp == mt::STRING && s.len() < flen {
            s.resize(flen, 0);
        }
        return Ok(s);
    }
    // Characters: the byte offset of character `flen`, if there is one.
    let text = String::from_utf8_lossy(&s);
    let mut chars = text.char_indices().skip(flen);
    if let Some((cut, _)) = chars.next() {
        let len = flen + 1 + chars.count();
        ctx.truncated(Error::DataTooLong { flen, len })?;
        // `cut` is a char boundary of the lossy text; map it back for valid UTF-8 only.
        let cut = if text.len() == s.len() { cut } else { flen.min(s.len()) };
        s.truncate(cut);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::{EvalConfig, FLAG_TRUNCATE_AS_WARNING};

    #[test]
    fn doubles_print_as_tikv() {
        assert_eq!(real_to_string(1.5), "1.5");
        assert_eq!(real_to_string(1e21), "1000000000000000000000");
        assert_eq!(real_to_string(1e-7), "0.0000001");
        assert_eq!(real_to_string(-0.0), "-0");
        assert_eq!(real_to_string(100.0), "100");
        assert_eq!(float_to_string(f64::from(208.867_f32)), "208.867");
        assert_eq!(year_to_string(0), "0000");
        assert_eq!(year_to_string(1999), "1999");
    }

    #[test]
    fn strings_fit_the_target() {
        let mut ctx =
            EvalContext::new(EvalConfig { flags: FLAG_TRUNCATE_AS_WARNING, ..Default::default() });
        let utf8 = FieldType { flen: 3, collate: 46, ..FieldType::new(mt::VAR_STRING) };
        assert_eq!(fit_string("héllo".into(), &utf8, &mut ctx).unwrap(), "hél".as_bytes());
        assert_eq!(fit_string(b"ab".to_vec(), &utf8, &mut ctx).unwrap(), b"ab");
        let bin = FieldType { flen: 4, collate: 63, ..FieldType::new(mt::STRING) };
        assert_eq!(fit_string(b"ab".to_vec(), &bin, &mut ctx).unwrap(), b"ab\0\0");
        assert_eq!(fit_string(b"abcdef".to_vec(), &bin, &mut ctx).unwrap(), b"abcd");
        let (w, n) = ctx.take_warnings();
        assert_eq!(n, 2);
        assert_eq!(w[0].code, Some(crate::error::ER_DATA_TOO_LONG));
        assert!(fit_string(b"abcdef".to_vec(), &bin, &mut EvalContext::default()).is_err());
    }
}
