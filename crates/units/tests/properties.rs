//! Properties of both types: `Display` parses back to the same value, serde round-trips through
//! TOML, and no input string makes a parser panic.

use std::time::Duration;

use proptest::prelude::*;
use rcop_units::{ParseError, ReadableDuration, ReadableSize};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Doc {
    size: ReadableSize,
    wait: ReadableDuration,
}

#[test]
fn toml_round_trip_and_errors() {
    let doc: Doc = toml::from_str("size = 1048576\nwait = \"1h30m\"").unwrap();
    assert_eq!(doc, Doc { size: ReadableSize::mib(1), wait: ReadableDuration::secs(5400) });
    let text = toml::to_string(&doc).unwrap();
    assert_eq!(text, "size = \"1MiB\"\nwait = \"1h30m\"\n");
    assert_eq!(toml::from_str::<Doc>(&text).unwrap(), doc);

    let err = toml::from_str::<Doc>("size = -1\nwait = \"1s\"").unwrap_err().to_string();
    assert!(err.contains("negative"), "{err}");
    let err = toml::from_str::<Doc>("size = 1\nwait = 100").unwrap_err().to_string();
    assert!(err.contains("duration"), "a bare number is not a duration: {err}");
    let err = toml::from_str::<Doc>("size = \"1kb\"\nwait = \"1s\"").unwrap_err().to_string();
    assert!(err.contains("invalid size \"1kb\""), "{err}");
    let err = toml::from_str::<Doc>("size = 1.5\nwait = \"1s\"").unwrap_err().to_string();
    assert!(err.contains("size"), "a float is not a size: {err}");
}

#[test]
fn errors_are_typed() {
    let err = "4XB".parse::<ReadableSize>().unwrap_err();
    assert!(matches!(&err, ParseError::Size { input, .. } if input == "4XB"));
    assert_eq!(err.quantity(), "size");
    let err = "100".parse::<ReadableDuration>().unwrap_err();
    assert!(matches!(err, ParseError::Duration { .. }));
    assert_eq!(err.quantity(), "duration");
}

proptest! {
    #[test]
    fn size_display_parses_back(bytes: u64) {
        let size = ReadableSize(bytes);
        prop_assert_eq!(size.to_string().parse::<ReadableSize>(), Ok(size));
    }

    #[test]
    fn size_multiples_display_with_a_unit(n in 1u64..1 << 14, shift in prop::sample::select(vec![10u32, 20, 30, 40, 50])) {
        let size = ReadableSize(n << shift);
        let text = size.to_string();
        prop_assert!(text.ends_with("iB"), "{}", text);
        prop_assert_eq!(text.parse::<ReadableSize>(), Ok(size));
    }

    #[test]
    fn duration_display_parses_back(secs: u64, nanos in 0u32..1_000_000_000) {
        let d = ReadableDuration(Duration::new(secs, nanos));
        prop_assert_eq!(d.to_string().parse::<ReadableDuration>(), Ok(d));
    }

    #[test]
    fn whole_millisecond_display_has_only_tikv_units(millis: u64) {
        let text = ReadableDuration::millis(millis).to_string();
        prop_assert!(!text.contains("us") && !text.contains("ns"), "{}", text);
    }

    #[test]
    fn serde_round_trips(bytes: u64, secs in 0u64..1 << 40, nanos in 0u32..1_000_000_000) {
        let doc = Doc { size: ReadableSize(bytes), wait: ReadableDuration(Duration::new(secs, nanos)) };
        let text = toml::to_string(&doc).unwrap();
        prop_assert_eq!(toml::from_str::<Doc>(&text).unwrap(), doc);
    }

    #[test]
    fn parsers_never_panic_on_any_string(text in any::<String>()) {
        let _ = text.parse::<ReadableSize>();
        let _ = text.parse::<ReadableDuration>();
    }

    #[test]
    /// Strings near the grammar (digits, dots, unit letters, whitespace, signs, non-ASCII), so
    /// most inputs get past the first checks.
    fn parsers_never_panic_near_the_grammar(text in r"[ 0-9.dhmsunKMGTPBiEbk+\-_µé\t]{0,24}") {
        if let Ok(size) = text.parse::<ReadableSize>() {
            prop_assert_eq!(size.to_string().parse::<ReadableSize>(), Ok(size));
        }
        if let Ok(d) = text.parse::<ReadableDuration>() {
            prop_assert_eq!(d.to_string().parse::<ReadableDuration>(), Ok(d));
        }
    }
}
