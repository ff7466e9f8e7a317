//! Property tests of the string kernels: on arbitrary bytes (valid UTF-8 or not) and
//! arbitrary integers (extremes, negatives, UNSIGNED), no kernel panics, and each row of a
//! vectorised evaluation over columns equals the evaluation of that row's values as
//! constants, NULLs included. `max_allowed_packet` is small so the NULL-with-a-warning path
//! of the growing functions runs too.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::codec;
use rcop_exec::{Batch, BytesT, EvalConfig, EvalContext, FieldType, IntT, Scalar, VecCol};
use rcop_proto::tipb;
use support::dag::{col, ft, ft_str};

/// Each string signature and its argument kinds: `s` a string, `i` an integer; a trailing
/// `*` repeats the last kind (three of them are passed).
const SIGS: &[(&str, &str, bool)] = &[
    // (signature, arguments, returns a string)
    ("UpperUTF8", "s", true),
    ("LowerUTF8", "s", true),
    ("Upper", "s", true),
    ("Lower", "s", true),
    ("ReverseUTF8", "s", true),
    ("Reverse", "s", true),
    ("Length", "s", false),
    ("BitLength", "s", false),
    ("CharLength", "s", false),
    ("CharLengthUTF8", "s", false),
    ("ASCII", "s", false),
    ("Ord", "s", false),
    ("LTrim", "s", true),
    ("RTrim", "s", true),
    ("Trim1Arg", "s", true),
    ("Trim2Args", "ss", true),
    ("Trim3Args", "ssi", true),
    ("Lpad", "sis", true),
    ("Rpad", "sis", true),
    ("LpadUTF8", "sis", true),
    ("RpadUTF8", "sis", true),
    ("Repeat", "si", true),
    ("Space", "i", true),
    ("Left", "si", true),
    ("LeftUTF8", "si", true),
    ("Right", "si", true),
    ("RightUTF8", "si", true),
    ("Substring2Args", "si", true),
    ("Substring3Args", "sii", true),
    ("Substring2ArgsUTF8", "si", true),
    ("Substring3ArgsUTF8", "sii", true),
    ("SubstringIndex", "ssi", true),
    ("Insert", "siis", true),
    ("InsertUTF8", "siis", true),
    ("Replace", "sss", true),
    ("Locate2Args", "ss", false),
    ("Locate3Args", "ssi", false),
    ("Locate2ArgsUTF8", "ss", false),
    ("Locate3ArgsUTF8", "ssi", false),
    ("Instr", "ss", false),
    ("InstrUTF8", "ss", false),
    ("FindInSet", "ss", false),
    ("Strcmp", "ss", false),
    ("FieldInt", "i*", false),
    ("FieldString", "s*", false),
    ("GreatestString", "s*", true),
    ("LeastString", "s*", true),
    ("GreatestCmpStringAsTime", "s*", true),
    ("LeastCmpStringAsDate", "s*", true),
    ("LeastCmpStringAsTime", "s*", true),
    ("GreatestCmpStringAsDate", "s*", true),
    ("HexIntArg", "i", true),
    ("HexStrArg", "s", true),
    ("UnHex", "s", true),
    ("Bin", "i", true),
    ("OctInt", "i", true),
    ("OctString", "s", true),
    ("ToBase64", "s", true),
    ("FromBase64", "s", true),
    ("Quote", "s", true),
    ("ToBinary", "s", true),
    ("FromBinary", "s", true),
    ("Concat", "s*", true),
    ("ConcatWS", "s*", true),
    ("Elt", "is*", true),
    ("MakeSet", "is*", true),
];

/// Columns: two strings (utf8mb4_bin, binary), a signed and an UNSIGNED integer.
fn schema_tipb() -> Vec<tipb::FieldType> {
    vec![
        ft_str(-46),
        ft_str(63),
        ft(mt::LONG_LONG),
        tipb::FieldType { flag: Some(32), ..ft(mt::LONG_LONG) },
    ]
}

#[derive(Debug, Clone)]
struct Row {
    s: [Option<Vec<u8>>; 2],
    i: [Option<i64>; 2],
}

fn bytes_s() -> impl Strategy<Value = Option<Vec<u8>>> {
    let text = "[ab ,.=ñ€😀xyA-Z0-9+/]{0,8}".prop_map(String::into_bytes);
    let raw = proptest::collection::vec(any::<u8>(), 0..8);
    prop_oneof![1 => Just(None), 4 => text.prop_map(Some), 2 => raw.prop_map(Some)]
}

fn int_s() -> impl Strategy<Value = Option<i64>> {
    let edge = prop_oneof![Just(i64::MAX), Just(i64::MIN), Just(-1), Just(0), Just(1 << 40)];
    prop_oneof![1 => Just(None), 6 => (-4i64..12).prop_map(Some), 2 => edge.prop_map(Some)]
}

fn row() -> impl Strategy<Value = Row> {
    (bytes_s(), bytes_s(), int_s(), int_s()).prop_map(|(a, b, x, y)| Row { s: [a, b], i: [x, y] })
}

fn columns(rows: &[Row]) -> Vec<VecCol> {
    let mut cols = vec![
        VecCol::new(rcop_exec::EvalType::Bytes, rows.len()),
        VecCol::new(rcop_exec::EvalType::Bytes, rows.len()),
        VecCol::new(rcop_exec::EvalType::Int, rows.len()),
        VecCol::new(rcop_exec::EvalType::Int, rows.len()),
    ];
    for r in rows {
        for k in 0..2 {
            <BytesT as rcop_exec::Elem>::push(&mut cols[k], r.s[k].as_deref());
            <IntT as rcop_exec::Elem>::push(&mut cols[2 + k], r.i[k]);
        }
    }
    cols
}

/// The argument columns of a call: strings alternate between the two string columns, ints
/// between the two integer columns.
fn arg_columns(kinds: &str) -> Vec<usize> {
    let mut kinds: Vec<char> = kinds.chars().collect();
    if kinds.last() == Some(&'*') {
        kinds.pop();
        let last = *kinds.last().unwrap();
        kinds.extend([last, last]);
    }
    let (mut s, mut i) = (0, 0);
    kinds
        .iter()
        .map(|k| match k {
            's' => {
                s += 1;
                (s - 1) % 2
            }
            _ => {
                i += 1;
                2 + (i - 1) % 2
            }
        })
        .collect()
}

fn call(sig: &str, ret_string: bool, children: Vec<tipb::Expr>) -> tipb::Expr {
    let sig = tipb::ScalarFuncSig::from_str_name(sig).unwrap() as i32;
    let ret = if ret_string {
        ft_str(-46)
    } else {
        tipb::FieldType { collate: Some(-46), ..ft(mt::LONG_LONG) }
    };
    support::dag::func(sig, ret, children)
}

/// A constant of row `r`'s value of column `c`.
fn constant(r: &Row, c: usize, f: &tipb::FieldType) -> tipb::Expr {
    let (tp, val) = match c {
        0 | 1 => match &r.s[c] {
            Some(b) => (6, b.clone()),
            None => (0, vec![]),
        },
        _ => match r.i[c - 2] {
            Some(v) => {
                let mut b = Vec::new();
                if c == 3 {
                    codec::encode_u64(&mut b, v as u64);
                    (2, b)
                } else {
                    codec::encode_i64(&mut b, v);
                    (1, b)
                }
            }
            None => (0, vec![]),
        },
    };
    tipb::Expr {
        tp: Some(tp),
        val: Some(val.into()),
        field_type: Some(f.clone()),
        ..Default::default()
    }
}

fn cfg() -> EvalConfig {
    EvalConfig {
        max_allowed_packet: 300,
        flags: rcop_exec::FLAG_TRUNCATE_AS_WARNING,
        ..EvalConfig::default()
    }
}

fn eval(
    e: &tipb::Expr,
    batch: &Batch,
    schema: &[FieldType],
) -> Result<(Vec<Scalar>, usize), String> {
    let node = rcop_exec::build_expr(e, schema, &cfg(), 100).map_err(|e| e.to_string())?;
    let mut ctx = EvalContext::new(cfg());
    let v = rcop_exec::eval_expr(&node, batch, &mut ctx).map_err(|e| e.to_string())?;
    let col = v.into_col(node.et, batch.len());
    Ok(((0..batch.len()).map(|i| col.scalar_at(i)).collect(), ctx.take_warnings().1))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn columns_and_constants_agree(rows in proptest::collection::vec(row(), 1..24)) {
        let tipb_schema = schema_tipb();
        let schema: Vec<FieldType> = tipb_schema.iter().map(|f| FieldType::from_proto(Some(f))).collect();
        let batch = Batch::from_cols(columns(&rows));
        for &(sig, kinds, ret_string) in SIGS {
            let cols = arg_columns(kinds);
            let e = call(sig, ret_string, cols.iter().map(|&c| col(c as i64, tipb_schema[c].clone())).collect());
            let vector = eval(&e, &batch, &schema);
            let mut rows_ok = Vec::new();
            let mut any_err = false;
            let mut warned = 0;
            for r in &rows {
                let one = Batch::from_cols(columns(std::slice::from_ref(r)));
                let consts = cols.iter().map(|&c| constant(r, c, &tipb_schema[c])).collect();
                match eval(&call(sig, ret_string, consts), &one, &schema) {
                    Ok((v, w)) => {
                        rows_ok.push(v.into_iter().next().unwrap());
                        warned += w;
                    }
                    Err(_) => any_err = true,
                }
            }
            match vector {
                Ok((got, w)) => {
                    prop_assert!(!any_err, "{sig}: a row failed as constants, not as columns");
                    prop_assert_eq!(&got, &rows_ok, "{}", sig);
                    prop_assert_eq!(w, warned, "{}: warnings", sig);
                }
                Err(err) => prop_assert!(any_err, "{sig}: columns failed ({err}), every row as constants did not"),
            }
        }
    }
}

#[test]
fn every_listed_signature_is_registered() {
    let names = rcop_exec::Capabilities::of_engine().scalar_funcs;
    for (sig, _, _) in SIGS {
        assert!(names.iter().any(|n| n == sig), "{sig} is not registered");
    }
}

/// UPPER and LOWER of a `gbk` or `gb18030` string follow that charset's rules (TiKV picks the
/// encoding by the argument's charset), as a column and as a constant.
#[test]
fn case_follows_the_arguments_charset() {
    let arg_ft = |charset: &str, collate| tipb::FieldType {
        charset: Some(charset.to_owned()),
        ..ft_str(collate)
    };
    let cases: [(&str, &str, i32, &str, &str); 6] = [
        ("UpperUTF8", "gbk", -87, "àbß", "àBS"),
        ("LowerUTF8", "gbk", -28, "ⅪⅠA", "Ⅺⅰa"),
        ("UpperUTF8", "utf8mb4", -46, "àbß", "ÀBß"),
        ("LowerUTF8", "utf8mb4", -46, "ⅪⅠA", "ⅺⅰa"),
        ("LowerUTF8", "gb18030", -249, "µςA", "μσa"),
        ("UpperUTF8", "gb18030", -249, "µςa", "µςA"),
    ];
    for (sig, charset, collate, arg, want) in cases {
        let f = arg_ft(charset, collate);
        let schema = [FieldType::from_proto(Some(&f))];
        let mut c = VecCol::new(rcop_exec::EvalType::Bytes, 1);
        <BytesT as rcop_exec::Elem>::push(&mut c, Some(arg.as_bytes()));
        let batch = Batch::from_cols(vec![c]);
        let as_col = call(sig, true, vec![col(0, f.clone())]);
        let as_const = call(
            sig,
            true,
            vec![tipb::Expr {
                tp: Some(6),
                val: Some(arg.as_bytes().to_vec().into()),
                field_type: Some(f.clone()),
                ..Default::default()
            }],
        );
        for e in [as_col, as_const] {
            let (got, _) = eval(&e, &batch, &schema).unwrap();
            assert_eq!(got, [Scalar::Bytes(want.as_bytes().to_vec())], "{sig} {charset} {arg}");
        }
    }
}
