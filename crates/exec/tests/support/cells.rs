//! Proptest strategies for one cell of the corpus tables, in the corpus text form (`\\N`
//! for NULL): the random tables of the differential and the split tests.

use proptest::prelude::*;

/// A small integer or NULL.
pub fn cell_int() -> impl Strategy<Value = String> {
    prop_oneof![1 => Just("\\N".to_string()), 5 => (-9i64..9).prop_map(|v| v.to_string())]
}

/// A decimal with two fraction digits in (-10, 10), or NULL.
pub fn cell_dec() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just("\\N".to_string()),
        5 => (-999i64..999).prop_map(|v| {
            format!("{}{}.{:02}", if v < 0 { "-" } else { "" }, v.abs() / 100, v.abs() % 100)
        })
    ]
}

/// A one- or two-letter string of `a`/`b`, or NULL.
pub fn cell_str() -> impl Strategy<Value = String> {
    prop_oneof![1 => Just("\\N".to_string()), 5 => "[ab]{1,2}"]
}
