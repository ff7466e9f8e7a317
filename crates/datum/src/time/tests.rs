//! Unit tests of the packed layout, rounding and carries.

use super::*;

#[test]
fn carry_second_rules() {
    let carry = |y, mo, d| {
        let mut p =
            Parts { year: y, month: mo, day: d, hour: 23, minute: 59, second: 59, micro: 0 };
        p.carry_second().then_some((p.year, p.month, p.day, p.hour))
    };
    assert_eq!(carry(2019, 12, 31), Some((2020, 1, 1, 0)));
    assert_eq!(carry(2020, 2, 28), Some((2020, 2, 29, 0)));
    assert_eq!(carry(2019, 2, 28), Some((2019, 3, 1, 0)));
    assert_eq!(carry(2019, 0, 5), Some((2019, 0, 6, 0)));
    assert_eq!(carry(2019, 5, 0), None);
    assert_eq!(carry(2019, 0, 31), None);
    assert_eq!(carry(2019, 4, 31), None);
    assert_eq!(carry(0, 12, 31), None);
}

#[test]
fn round_micro_half_up() {
    assert_eq!(round_micro(123_456, 6), (123_456, false));
    assert_eq!(round_micro(123_456, 4), (123_500, false));
    assert_eq!(round_micro(123_449, 4), (123_400, false));
    assert_eq!(round_micro(999_500, 3), (0, true));
    assert_eq!(round_micro(499_999, 0), (0, false));
}

#[test]
fn layout_and_size() {
    assert_eq!(std::mem::size_of::<Time>(), 8);
    let t = Time::pack(
        &Parts { year: 1, month: 2, day: 3, hour: 4, minute: 5, second: 6, micro: 7 },
        TimeType::Timestamp,
        6,
    );
    assert_eq!(
        t.0,
        (1 << 50) | (2 << 46) | (3 << 41) | (4 << 36) | (5 << 30) | (6 << 24) | (7 << 4) | 0b1101
    );
}

/// Results (value or error) of [`Time::from_packed_u64`] as comparable text.
fn packed_both(packed: u64, tp: TimeType, fsp: u8) -> (String, String) {
    let show = |r: Result<Time>| match r {
        Ok(t) => format!("ok {:#x}", t.0),
        Err(e) => format!("err {e}"),
    };
    (
        show(Time::from_packed_u64(packed, tp, fsp)),
        show(Time::from_packed_u64_checked(packed, tp, fsp)),
    )
}

#[test]
fn packed_date_fast_path_edges() {
    let date = |y: u64, m: u64, d: u64| ((y * 13 + m) << 5 | d) << 41;
    for (packed, fsp) in [
        (0, 0),
        (date(1995, 3, 15), 0),
        (date(9999, 12, 31), 0),
        (date(10_000, 0, 0), 0),
        ((1 << 63) | (1 << 46), 0),
        (u64::MAX << 41, 0),
        (date(1995, 3, 15), 6),
        (date(1995, 3, 15), 7),
        (date(1995, 3, 15) | 1, 0),
        (date(1995, 3, 15) | (1 << 24), 0),
    ] {
        let (fast, slow) = packed_both(packed, TimeType::Date, fsp);
        assert_eq!(fast, slow, "packed {packed:#x} fsp {fsp}");
    }
    assert_eq!(
        Time::from_packed_u64(date(1998, 9, 2), TimeType::Date, 0).map(|t| t.to_string()),
        Ok("1998-09-02".to_string())
    );
}

proptest::proptest! {
    #[test]
    fn packed_fast_path_matches_checked(
        ymd in 0u64..(1 << 23),
        low in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..(1 << 41)],
        tp in proptest::prop_oneof![
            proptest::strategy::Just(TimeType::Date),
            proptest::strategy::Just(TimeType::DateTime),
            proptest::strategy::Just(TimeType::Timestamp),
        ],
        fsp in 0u8..8,
    ) {
        let (fast, slow) = packed_both((ymd << 41) | low, tp, fsp);
        proptest::prop_assert_eq!(fast, slow);
    }
}
