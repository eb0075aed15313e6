//! serde's refusals in the words of the format a person or an agent wrote: serde names
//! the Rust types it expected (`expected struct IndexConfig`, `expected u64`,
//! `expected a sequence`), which say nothing to someone editing `folio.toml` or to an
//! agent sending JSON. One set of rules for both formats: number types become the range
//! of whole numbers they take, structures the format's own names (TOML's table and array,
//! JSON's object and array).

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// The format whose words a message is put in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON (tool arguments): objects and arrays.
    Json,
    /// TOML (settings files): tables and arrays.
    Toml,
}

impl Format {
    /// The name of a set of keys and values (a Rust struct or map).
    fn table(self) -> &'static str {
        match self {
            Format::Json => "object",
            Format::Toml => "table",
        }
    }
}

/// What serde says, one pattern for every rule.
static SERDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?P<wide> as (?:i128|u128))\b|\b(?:expected (?P<number>u8|u16|u32|u64|usize|i8|i16|i32|i64|isize|f32|f64)\b|expected struct (?P<struct>\w+)|expected enum (?P<enum>\w+)|(?P<lead>expected a|invalid type:) (?P<shape>sequence|map)\b)",
    )
    .expect("valid pattern")
});

/// The range of whole numbers (or `a number`) a Rust number type takes.
fn number(rust: &str) -> &'static str {
    match rust {
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "usize" => "a whole number from 0 to 18446744073709551615",
        "i8" => "a whole number from -128 to 127",
        "i16" => "a whole number from -32768 to 32767",
        "i32" => "a whole number from -2147483648 to 2147483647",
        "i64" | "isize" => "a whole number from -9223372036854775808 to 9223372036854775807",
        _ => "a number",
    }
}

/// `noun` with its indefinite article: `a table`, `an array`.
fn with_article(noun: &str) -> String {
    let article = if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {noun}")
}

/// `message` (serde's, or a parser's that quotes serde) with Rust type names in
/// `format`'s words: `expected u32` → `expected a whole number from 0 to 4294967295`,
/// `expected struct X` → `expected a table` (TOML) or `an object` (JSON),
/// `sequence` → `array`, `map` → `table` or `object`, `expected enum X` → `expected one
/// of its names, as a string`. Anything else is kept as it is.
pub fn plain(message: &str, format: Format) -> String {
    SERDE
        .replace_all(message, |c: &Captures<'_>| {
            if c.name("wide").is_some() {
                // toml reads an integer too large for 64 bits as a 128-bit one and says so.
                String::new()
            } else if let Some(rust) = c.name("number") {
                format!("expected {}", number(rust.as_str()))
            } else if c.name("struct").is_some() {
                format!("expected {}", with_article(format.table()))
            } else if c.name("enum").is_some() {
                "expected one of its names, as a string".to_string()
            } else {
                let shape = match &c["shape"] {
                    "sequence" => "array",
                    _ => format.table(),
                };
                match &c["lead"] {
                    "expected a" => format!("expected {}", with_article(shape)),
                    lead => format!("{lead} {shape}"),
                }
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        size: u64,
        delta: i32,
        ratio: f64,
        name: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        inner: Option<Inner>,
        list: Option<Vec<String>>,
    }

    /// The last line of the TOML error for `text`, in TOML's words.
    fn toml_error(text: &str) -> String {
        let message = toml::from_str::<Shape>(text).unwrap_err().to_string();
        plain(&message, Format::Toml)
            .lines()
            .last()
            .unwrap()
            .to_string()
    }

    /// The JSON error for `text`, in JSON's words, without its place.
    fn json_error(text: &str) -> String {
        let message = serde_json::from_str::<Shape>(text).unwrap_err().to_string();
        let plain = plain(&message, Format::Json);
        plain.split(" at line ").next().unwrap().to_string()
    }

    #[test]
    fn toml_errors_name_tables_arrays_and_ranges() {
        assert_eq!(
            toml_error("inner = 3\n"),
            "invalid type: integer `3`, expected a table"
        );
        assert_eq!(
            toml_error("[inner]\nsize = \"big\"\n"),
            "invalid type: string \"big\", expected a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            toml_error("[inner]\nsize = -1\n"),
            "invalid value: integer `-1`, expected a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            toml_error("[inner]\nsize = 99999999999999999999\n"),
            "invalid type: integer `99999999999999999999`, expected a whole number from 0 to 18446744073709551615"
        );
        assert_eq!(
            toml_error("[inner]\nsize = 1\ndelta = \"x\"\n"),
            "invalid type: string \"x\", expected a whole number from -2147483648 to 2147483647"
        );
        assert_eq!(
            toml_error("[inner]\nsize = 1\ndelta = 1\nratio = \"x\"\n"),
            "invalid type: string \"x\", expected a number"
        );
        assert_eq!(
            toml_error("list = \"a\"\n"),
            "invalid type: string \"a\", expected an array"
        );
        assert_eq!(
            toml_error("[inner]\nsize = 1\ndelta = 1\nratio = 1.0\nname = [\"a\"]\n"),
            "invalid type: array, expected a string"
        );
        assert_eq!(
            toml_error("[inner]\nsize = 1\ndelta = 1\nratio = 1.0\nname = { a = 1 }\n"),
            "invalid type: table, expected a string"
        );
    }

    #[test]
    fn json_errors_name_objects_and_arrays() {
        assert_eq!(
            json_error(r#"{"inner": 3}"#),
            "invalid type: integer `3`, expected an object"
        );
        assert_eq!(
            json_error(r#"{"inner": {"size": 1, "delta": 1, "ratio": 1, "name": {}}}"#),
            "invalid type: object, expected a string"
        );
        assert_eq!(
            json_error(r#"{"list": 1}"#),
            "invalid type: integer `1`, expected an array"
        );
    }

    #[test]
    fn the_place_of_a_toml_error_is_kept() {
        let message = toml::from_str::<Shape>("inner = 3\n")
            .unwrap_err()
            .to_string();
        let text = plain(&message, Format::Toml);
        assert!(
            text.starts_with("TOML parse error at line 1, column 9\n"),
            "{text}"
        );
        assert!(text.contains("inner = 3"), "{text}");
    }

    #[test]
    fn words_that_are_not_type_names_are_left_alone() {
        let unknown = "unknown field `sizes`, expected one of `size`, `delta`";
        assert_eq!(plain(unknown, Format::Toml), unknown);
        assert_eq!(plain("expected usizes", Format::Json), "expected usizes");
    }
}
