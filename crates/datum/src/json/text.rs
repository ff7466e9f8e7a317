//! JSON text: the parser behind `CAST(string AS JSON)` and MySQL's output form.
//!
//! Both follow TiKV, which parses with `serde_json` and prints through serde_json with a
//! formatter adding a space after `,` and `:` (`serde.rs` in TiKV's json module):
//! - numbers: an integer literal that fits i64 is `I64`, except that TiKV sends every
//!   non-negative literal through `visit_u64` and keeps it signed only when it is *below*
//!   `i64::MAX` (so `9223372036854775807` becomes `U64`); other integers that fit u64 are `U64`;
//!   `-0`, fractions, exponents and integers out of range are doubles; a double out of range is
//!   an error;
//! - nesting deeper than 127 arrays/objects is an error (serde_json's recursion limit 128);
//! - of duplicate keys the last wins;
//! - strings escape `"` `\` and control characters (`\b \f \n \r \t`, others `\u00xx`), and
//!   nothing else; a non-finite double prints `null`;
//! - doubles print as the shortest round-trip digits, in positional form for decimal exponents
//!   -5..=15 (`1e15` is `1000000000000000.0`) and as `1.5e16` / `1e-7` outside it.

use std::collections::BTreeMap;

use super::{Json, JsonRef, JsonType};
use crate::error::{Error, Result, parse_error};
use crate::time::MAX_FSP;

/// Nesting limit of the parser (serde_json's default recursion limit).
const PARSE_DEPTH: usize = 127;

enum Node {
    Literal(u8),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    Array(Vec<Node>),
    Object(BTreeMap<String, Node>),
}

pub(super) fn parse(text: &str) -> Result<Json> {
    let mut p = Parser { s: text.as_bytes(), pos: 0, text };
    p.skip_ws();
    let node = p.value(0)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.err());
    }
    let mut bytes = Vec::new();
    let tp = encode(&node, &mut bytes)?;
    let mut out = Vec::with_capacity(1 + bytes.len());
    out.push(tp.code());
    out.extend_from_slice(&bytes);
    Ok(Json { bytes: out })
}

/// Writes `node`'s body into `out`, returning its type.
fn encode(node: &Node, out: &mut Vec<u8>) -> Result<JsonType> {
    Ok(match node {
        Node::Literal(l) => {
            out.push(*l);
            JsonType::Literal
        }
        Node::I64(v) => {
            out.extend_from_slice(&v.to_le_bytes());
            JsonType::I64
        }
        Node::U64(v) => {
            out.extend_from_slice(&v.to_le_bytes());
            JsonType::U64
        }
        Node::F64(v) => {
            out.extend_from_slice(&v.to_le_bytes());
            JsonType::Double
        }
        Node::Str(s) => {
            super::binary::write_var_bytes(out, s.as_bytes());
            JsonType::String
        }
        Node::Array(items) => {
            let bodies = encode_children(items.iter())?;
            let refs: Vec<JsonRef<'_>> =
                bodies.iter().map(|(tp, b)| JsonRef { tp: *tp, body: b }).collect();
            super::binary::write_array(out, &refs)?;
            JsonType::Array
        }
        Node::Object(map) => {
            let bodies = encode_children(map.values())?;
            let members = map
                .keys()
                .zip(&bodies)
                .map(|(k, (tp, b))| (k.as_bytes(), JsonRef { tp: *tp, body: b }))
                .collect();
            super::binary::write_object(out, members)?;
            JsonType::Object
        }
    })
}

fn encode_children<'n>(nodes: impl Iterator<Item = &'n Node>) -> Result<Vec<(JsonType, Vec<u8>)>> {
    nodes
        .map(|n| {
            let mut b = Vec::new();
            encode(n, &mut b).map(|tp| (tp, b))
        })
        .collect()
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn err(&self) -> Error {
        parse_error("json", self.text)
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, word: &[u8]) -> Result<()> {
        if self.s.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.err())
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node> {
        match self.peek() {
            Some(b'n') => self.eat(b"null").map(|()| Node::Literal(super::LITERAL_NULL)),
            Some(b't') => self.eat(b"true").map(|()| Node::Literal(super::LITERAL_TRUE)),
            Some(b'f') => self.eat(b"false").map(|()| Node::Literal(super::LITERAL_FALSE)),
            Some(b'"') => self.string().map(Node::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                if depth >= PARSE_DEPTH {
                    return Err(self.err());
                }
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Node::Array(items));
                }
                loop {
                    self.skip_ws();
                    items.push(self.value(depth + 1)?);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Node::Array(items));
                        }
                        _ => return Err(self.err()),
                    }
                }
            }
            Some(b'{') => {
                if depth >= PARSE_DEPTH {
                    return Err(self.err());
                }
                self.pos += 1;
                let mut map = BTreeMap::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Node::Object(map));
                }
                loop {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        return Err(self.err());
                    }
                    let key = self.string()?;
                    self.skip_ws();
                    self.eat(b":")?;
                    self.skip_ws();
                    let v = self.value(depth + 1)?;
                    map.insert(key, v);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Node::Object(map));
                        }
                        _ => return Err(self.err()),
                    }
                }
            }
            _ => Err(self.err()),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Node> {
        let start = self.pos;
        let neg = self.peek() == Some(b'-');
        if neg {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err()),
        }
        let int_end = self.pos;
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err());
            }
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err());
            }
            float = true;
        }
        let lit = self.text.get(start..self.pos).ok_or_else(|| self.err())?;
        if !float {
            let digits = self.text.get(if neg { start + 1 } else { start }..int_end).unwrap_or("");
            if neg {
                // serde_json: "-0" is the double -0.0; below i64::MIN falls to a double.
                if digits != "0"
                    && let Ok(v) = lit.parse::<i64>()
                {
                    return Ok(Node::I64(v));
                }
            } else if let Ok(v) = digits.parse::<u64>() {
                // TiKV's `visit_u64`: signed only strictly below i64::MAX.
                return Ok(if v < i64::MAX as u64 { Node::I64(v as i64) } else { Node::U64(v) });
            }
        }
        match lit.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Node::F64(v)),
            _ => Err(self.err()),
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let h = self.s.get(self.pos..self.pos + 4).ok_or_else(|| self.err())?;
        let mut v = 0u32;
        for &c in h {
            v = v * 16 + char::from(c).to_digit(16).ok_or_else(|| self.err())?;
        }
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while matches!(self.peek(), Some(c) if c != b'"' && c != b'\\' && c >= 0x20) {
                self.pos += 1;
            }
            out.push_str(self.text.get(start..self.pos).ok_or_else(|| self.err())?);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(|| self.err())?;
                    self.pos += 1;
                    let ch = match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.err()),
                    };
                    out.push(ch);
                }
                // End of input or an unescaped control character.
                _ => return Err(self.err()),
            }
        }
    }

    /// After `\u`: four hex digits, a surrogate pair as two escapes; lone surrogates are errors.
    fn unicode_escape(&mut self) -> Result<char> {
        let hi = self.hex4()?;
        let cp = match hi {
            0xD800..=0xDBFF => {
                self.eat(b"\\u")?;
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return Err(self.err());
                }
                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.err()),
            _ => hi,
        };
        char::from_u32(cp).ok_or_else(|| self.err())
    }
}

// ---------------------------------------------------------------------------------------------
// Output

impl JsonRef<'_> {
    /// MySQL's text form (`{"a": 1, "b": [1, 2]}`), as TiKV prints it.
    ///
    /// Errors: [`Error::Invalid`] for a string or key that is not UTF-8, or a date/time value
    /// whose bits are not a valid time.
    pub fn to_text(&self) -> Result<String> {
        let mut out = String::with_capacity(self.body.len() + 8);
        self.write_text(&mut out)?;
        Ok(out)
    }

    /// Appends MySQL's text form to `out`; see [`JsonRef::to_text`].
    pub fn write_text(&self, out: &mut String) -> Result<()> {
        match self.tp {
            JsonType::Literal => out.push_str(match self.as_literal() {
                Some(Some(true)) => "true",
                Some(Some(false)) => "false",
                _ => "null",
            }),
            JsonType::I64 => out.push_str(&self.as_i64().unwrap_or(0).to_string()),
            JsonType::U64 => out.push_str(&self.as_u64().unwrap_or(0).to_string()),
            JsonType::Double => {
                let v = self.as_f64().unwrap_or(0.0);
                if v.is_finite() {
                    write_mysql_f64(v, out);
                } else {
                    out.push_str("null");
                }
            }
            JsonType::String => write_str(out, utf8(self.as_str_bytes().unwrap_or(b""))?),
            JsonType::Opaque => {
                let (t, data) = self.as_opaque().unwrap_or((0, b""));
                let mut s = format!("base64:type{t}:");
                base64(data, &mut s);
                write_str(out, &s);
            }
            JsonType::Date | JsonType::Datetime | JsonType::Timestamp => {
                let t = self
                    .as_time()
                    .unwrap_or(Err(Error::Invalid { what: "json time", reason: "" }))?;
                // "Printing json datetime/duration will always keep 6 fsp."
                let t = if self.tp == JsonType::Date {
                    t
                } else {
                    t.with_type(t.time_type(), MAX_FSP)?
                };
                let mut b = Vec::new();
                t.write_str(&mut b);
                write_str(out, utf8(&b)?);
            }
            JsonType::Time => {
                let d = self
                    .as_duration()
                    .unwrap_or(Err(Error::Invalid { what: "json time", reason: "" }))?;
                let mut b = Vec::new();
                d.round_frac(MAX_FSP)?.write_str(&mut b);
                write_str(out, utf8(&b)?);
            }
            JsonType::Array => {
                out.push('[');
                for i in 0..self.elem_count() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.array_get(i)?.write_text(out)?;
                }
                out.push(']');
            }
            JsonType::Object => {
                out.push('{');
                for i in 0..self.elem_count() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(out, utf8(self.object_key(i)?)?);
                    out.push_str(": ");
                    self.object_val(i)?.write_text(out)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }
}

fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| Error::Invalid { what: "json string", reason: "not UTF-8" })
}

/// A quoted string with serde_json's escapes.
fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let b = c as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[b >> 4]));
                out.push(char::from(HEX[b & 0xF]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Standard base64 with padding.
fn base64(data: &[u8], out: &mut String) {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in data.chunks(3) {
        let b = [chunk.first(), chunk.get(1), chunk.get(2)].map(|x| x.copied().unwrap_or(0));
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(T[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
}

/// Appends a finite double as TiKV prints it inside JSON: the shortest round-trip digits,
/// positional for decimal exponents -5..=15 with at least one fraction digit (`3.0`,
/// `0.00001`), otherwise `d.ddde±x` without a `+` (`1e16`, `1.5e-7`).
pub fn write_mysql_f64(v: f64, out: &mut String) {
    // `{:e}` gives the shortest round-trip digits: "-1.2345e3", "0e0", "1e-7".
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let n = digits.len() as i32;
    if neg {
        out.push('-');
    }
    if (-5..=15).contains(&exp) {
        if n - 1 <= exp {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (exp - (n - 1)) as usize));
            out.push_str(".0");
        } else if exp >= 0 {
            let (a, b) = digits.split_at((exp + 1) as usize);
            out.push_str(a);
            out.push('.');
            out.push_str(b);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        let (a, b) = digits.split_at(1);
        out.push_str(a);
        if !b.is_empty() {
            out.push('.');
            out.push_str(b);
        }
        out.push('e');
        out.push_str(&exp.to_string());
    }
}
