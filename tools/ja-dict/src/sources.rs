//! The four MeCab-format source files vibrato compiles a dictionary from (`lex.csv`,
//! `matrix.def`, `char.def`, `unk.def`), written from the [`Ipadic`] read out of
//! lindera-ipadic, with the part of speech as the only feature.

use std::collections::HashMap;
use std::fmt::Write;

use crate::lindera::Ipadic;

/// The feature of an unknown word whose context id no dictionary word has.
pub const UNKNOWN_POS: &str = "名詞,一般,*,*";

/// The last code point vibrato's `char.def` accepts.
const LAST_CODE_POINT: u32 = 0xFFFF;

/// The text of the four files.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `lex.csv`: `surface,left id,right id,cost,POS1,POS2,POS3,POS4` per entry.
    pub lex: String,
    /// `matrix.def`: the header `n n`, then `right left cost` per pair.
    pub matrix: String,
    /// `char.def`: the categories, then the code-point ranges.
    pub char_def: String,
    /// `unk.def`: `CATEGORY,left id,right id,cost,POS…` per unknown-word entry.
    pub unk: String,
}

/// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a line
/// break, as vibrato's CSV reader expects.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// The part of speech of each context id, from the dictionary words that use it (the
/// first one seen; IPADIC gives every context id one part of speech). Unknown-word
/// entries have no features in lindera's files, so theirs come from here.
pub fn pos_by_context(ipadic: &Ipadic) -> HashMap<u16, &str> {
    let mut map = HashMap::new();
    for e in &ipadic.entries {
        map.entry(e.context_id).or_insert(e.pos.as_str());
    }
    map
}

/// Writes the four files' text.
pub fn write(ipadic: &Ipadic) -> Sources {
    let mut out = Sources::default();
    for e in &ipadic.entries {
        let _ = writeln!(
            out.lex,
            "{},{},{},{},{}",
            csv_field(&e.surface),
            e.context_id,
            e.context_id,
            e.cost,
            e.pos
        );
    }

    let n = ipadic.n_contexts;
    let _ = writeln!(out.matrix, "{n} {n}");
    for right in 0..n {
        for left in 0..n {
            let _ = writeln!(
                out.matrix,
                "{right} {left} {}",
                ipadic.connection[left + right * n]
            );
        }
    }

    let chars = &ipadic.chars;
    for (name, c) in chars.names.iter().zip(&chars.categories) {
        let _ = writeln!(
            out.char_def,
            "{name} {} {} {}",
            u8::from(c.invoke),
            u8::from(c.group),
            c.length
        );
    }
    let starts = &chars.mapping.starts;
    for (i, (&start, ids)) in starts.iter().zip(&chars.mapping.categories).enumerate() {
        if start > LAST_CODE_POINT || ids.is_empty() {
            continue;
        }
        let end = starts
            .get(i + 1)
            .map_or(LAST_CODE_POINT, |&next| next - 1)
            .min(LAST_CODE_POINT);
        let mut names: Vec<&str> = Vec::new();
        for &id in ids {
            let name = chars.names[id as usize].as_str();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let _ = writeln!(
            out.char_def,
            "0x{start:04X}..0x{end:04X} {}",
            names.join(" ")
        );
    }

    let pos = pos_by_context(ipadic);
    for (category, indices) in ipadic.unknown.by_category.iter().enumerate() {
        for &i in indices {
            let e = ipadic.unknown.entries[i as usize];
            let _ = writeln!(
                out.unk,
                "{},{},{},{},{}",
                chars.names[category],
                e.context_id,
                e.context_id,
                e.cost,
                pos.get(&e.context_id).copied().unwrap_or(UNKNOWN_POS)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("名詞"), "名詞");
        assert_eq!(csv_field(","), "\",\"");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
    }
}
