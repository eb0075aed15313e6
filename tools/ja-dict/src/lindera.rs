//! Reading the compiled IPADIC of the `lindera-ipadic` 0.3.3 crate.
//!
//! The crate's `lindera-ipadic/` folder holds IPADIC 2.7.0-20070801 in lindera 0.3's
//! format; the layouts below are those that `lindera-core` 0.3.3's loaders read
//! (`PrefixDict`, `WordEntry`, `ConnectionCostMatrix`, `CharacterDefinitions`,
//! `UnknownDictionary`) and `lindera` 0.3.5's `word_detail`:
//!
//! - `dict.fst`: an FST map (the `lindera-fst` fork of `fst`) from a surface (UTF-8
//!   bytes) to `offset << 5 | count`: the surface's `count` entries start at entry
//!   `offset` of `dict.vals`.
//! - `dict.vals`: entries of 8 bytes, little-endian: word id (`u32`), word cost (`i16`),
//!   context id (`u16`, IPADIC's left and right ids are equal).
//! - `dict.wordsidx`: per word id, a little-endian `u32` byte offset into `dict.words`,
//!   where the word's features are a bincode 1 `Vec<String>`: IPADIC's nine feature
//!   columns (four part-of-speech levels, conjugation type and form, base form,
//!   reading, pronunciation).
//! - `matrix.mtx`: two little-endian `i16` sizes, then the connection costs (`i16`),
//!   the cost from right id `r` (left node) to left id `l` (right node) at `l + r * n`.
//! - `char_def.bin`, `unk.bin`: bincode 1 of the character categories and of the
//!   unknown-word entries per category ([`CharDefinitions`], [`UnknownEntries`]).

use std::path::Path;

use lindera_fst::Streamer;
use serde::Deserialize;

/// The files read from the crate's data folder, with the SHA-256 each must have
/// (lindera-ipadic 0.3.3 as published on crates.io).
pub const FILES: [(&str, &str); 7] = [
    (
        "char_def.bin",
        "8f16b57e1b46445ada490161a839f0e04345712d514dc096e95137c8f0fa5c2f",
    ),
    (
        "dict.fst",
        "2f02d28555dbc5ea43bc12c445f69a2dcdb86ae3a8bf10bfae806e3fbf9d7976",
    ),
    (
        "dict.vals",
        "67a9366351680ee8f9be2098c4f9ad614c7c2f253fc27a36adfea349e59d3be2",
    ),
    (
        "dict.words",
        "91cf87bcaef109921c5715ff43bb513c4636e1463b256478ca100396a1c6dc5f",
    ),
    (
        "dict.wordsidx",
        "5efad1c16113c954d7575cc84fadf3d02dd6a975d91465e2d013176e5566dbfd",
    ),
    (
        "matrix.mtx",
        "4ebebb0e6b4b17aa0f25cc665536c2ecd3caeaab347d0cb519b3b1bb5e8d650f",
    ),
    (
        "unk.bin",
        "399e1e88b9f1ef5489b829e77538d327b0be887963376ff2ff219d559cf7c14a",
    ),
];

/// One dictionary entry: a surface with its context id, cost and part of speech.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The surface form.
    pub surface: String,
    /// IPADIC's context id (left id = right id).
    pub context_id: u16,
    /// The word cost (lower is likelier).
    pub cost: i16,
    /// The four part-of-speech levels, comma-separated (`名詞,一般,*,*`).
    pub pos: String,
}

/// One character category of `char_def.bin` (the fields of MeCab's `char.def`).
#[derive(Debug, Clone, Deserialize)]
pub struct Category {
    /// Always try an unknown word for a character of this category.
    pub invoke: bool,
    /// Group a run of this category into one unknown word.
    pub group: bool,
    /// Also try unknown words of 1 to `length` characters.
    pub length: u32,
}

/// `char_def.bin`: the categories, their names (same order) and, per code-point range,
/// the categories of its characters.
#[derive(Debug, Clone, Deserialize)]
pub struct CharDefinitions {
    /// The categories, by category id.
    pub categories: Vec<Category>,
    /// Their names (`DEFAULT`, `KANJI`, …), by category id.
    pub names: Vec<String>,
    /// Which categories each code point has.
    pub mapping: CategoryMapping,
}

/// Sorted range starts and, for each, the category ids of the code points from that
/// start up to the next one.
#[derive(Debug, Clone, Deserialize)]
pub struct CategoryMapping {
    /// Range starts (code points), ascending, the first 0.
    pub starts: Vec<u32>,
    /// Category ids per range (the first one is the character's own category).
    pub categories: Vec<Vec<u64>>,
}

/// One unknown-word entry of `unk.bin`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct UnknownEntry {
    /// Not used for unknown words (read to keep the layout).
    pub _word_id: u32,
    /// The word cost.
    pub cost: i16,
    /// The context id.
    pub context_id: u16,
}

/// `unk.bin`: per category id, indices into `entries`.
#[derive(Debug, Clone, Deserialize)]
pub struct UnknownEntries {
    /// Entry indices per category id.
    pub by_category: Vec<Vec<u32>>,
    /// The entries.
    pub entries: Vec<UnknownEntry>,
}

/// The whole dictionary as read.
#[derive(Debug, Clone)]
pub struct Ipadic {
    /// Every (surface, entry) pair, in the FST's (byte) order of surfaces.
    pub entries: Vec<Entry>,
    /// The number of context ids (the connection matrix is `n × n`).
    pub n_contexts: usize,
    /// The connection costs, right id `r` of the left node to left id `l` of the
    /// right node at `l + r * n_contexts`.
    pub connection: Vec<i16>,
    /// The character categories.
    pub chars: CharDefinitions,
    /// The unknown-word entries.
    pub unknown: UnknownEntries,
}

/// A file that cannot be read or does not have the expected layout.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file's SHA-256 is not the pinned one.
    #[error("{name}: SHA-256 {got}, expected {expected} (not lindera-ipadic 0.3.3's file)")]
    Checksum {
        /// The file name.
        name: String,
        /// Its hash.
        got: String,
        /// The pinned hash.
        expected: String,
    },
    /// The content does not have lindera's layout.
    #[error("{name}: {message}")]
    Format {
        /// The file name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

fn format_error(name: &str, message: impl std::fmt::Display) -> ReadError {
    ReadError::Format {
        name: name.to_owned(),
        message: message.to_string(),
    }
}

/// Reads the seven files of `dir` (the crate's `lindera-ipadic/` folder), checking each
/// against its pinned SHA-256 ([`FILES`]) first.
///
/// Errors: a missing or unreadable file, a hash mismatch, or a layout that does not
/// parse (an entry pointing outside `dict.vals`, features that are not bincode, a
/// connection matrix that is not square).
pub fn read(dir: &Path) -> Result<Ipadic, ReadError> {
    let mut data = std::collections::HashMap::new();
    for (name, expected) in FILES {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|source| ReadError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let got = crate::hex_sha256(&bytes);
        if got != expected {
            return Err(ReadError::Checksum {
                name: name.to_owned(),
                got,
                expected: expected.to_owned(),
            });
        }
        data.insert(name, bytes);
    }
    let file = |name: &str| data[name].as_slice();
    let entries = read_entries(
        file("dict.fst"),
        file("dict.vals"),
        file("dict.wordsidx"),
        file("dict.words"),
    )?;
    let (n_contexts, connection) = read_matrix(file("matrix.mtx"))?;
    let chars: CharDefinitions =
        bincode::deserialize(file("char_def.bin")).map_err(|e| format_error("char_def.bin", e))?;
    let unknown: UnknownEntries =
        bincode::deserialize(file("unk.bin")).map_err(|e| format_error("unk.bin", e))?;
    if chars.names.len() != chars.categories.len()
        || chars.mapping.starts.len() != chars.mapping.categories.len()
        || unknown.by_category.len() > chars.names.len()
    {
        return Err(format_error(
            "char_def.bin",
            "category tables of different lengths",
        ));
    }
    Ok(Ipadic {
        entries,
        n_contexts,
        connection,
        chars,
        unknown,
    })
}

/// Every entry of the FST map, with its part of speech from the word features.
fn read_entries(
    fst: &[u8],
    vals: &[u8],
    words_idx: &[u8],
    words: &[u8],
) -> Result<Vec<Entry>, ReadError> {
    let fst = lindera_fst::raw::Fst::new(fst.to_vec()).map_err(|e| format_error("dict.fst", e))?;
    let mut entries = Vec::new();
    let mut stream = fst.stream();
    while let Some((key, output)) = stream.next() {
        let surface = String::from_utf8(key.to_vec()).map_err(|e| format_error("dict.fst", e))?;
        let value = output.value();
        let (offset, count) = ((value >> 5) as usize, (value & 0b1_1111) as usize);
        for i in offset..offset + count {
            let raw = vals
                .get(i * 8..i * 8 + 8)
                .ok_or_else(|| format_error("dict.vals", format!("no entry {i}")))?;
            let word_id = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
            let cost = i16::from_le_bytes([raw[4], raw[5]]);
            let context_id = u16::from_le_bytes([raw[6], raw[7]]);
            let at = (word_id as usize) * 4;
            let idx = words_idx
                .get(at..at + 4)
                .ok_or_else(|| format_error("dict.wordsidx", format!("no word {word_id}")))?;
            let start = u32::from_le_bytes([idx[0], idx[1], idx[2], idx[3]]) as usize;
            let features: Vec<String> = bincode::deserialize(
                words
                    .get(start..)
                    .ok_or_else(|| format_error("dict.words", format!("no offset {start}")))?,
            )
            .map_err(|e| format_error("dict.words", e))?;
            if features.len() < 4 {
                return Err(format_error(
                    "dict.words",
                    format!("word {word_id} has {} features", features.len()),
                ));
            }
            entries.push(Entry {
                surface: surface.clone(),
                context_id,
                cost,
                pos: features[..4].join(","),
            });
        }
    }
    Ok(entries)
}

/// The matrix's size and its costs.
fn read_matrix(bytes: &[u8]) -> Result<(usize, Vec<i16>), ReadError> {
    if bytes.len() < 4 {
        return Err(format_error("matrix.mtx", "shorter than its header"));
    }
    let n_right = i16::from_le_bytes([bytes[0], bytes[1]]);
    let n_left = i16::from_le_bytes([bytes[2], bytes[3]]);
    let n = usize::try_from(n_right).map_err(|e| format_error("matrix.mtx", e))?;
    if n_right != n_left || bytes.len() != 4 + n * n * 2 {
        return Err(format_error(
            "matrix.mtx",
            format!(
                "{n_right} × {n_left} does not match {} bytes of costs",
                bytes.len() - 4
            ),
        ));
    }
    let costs = bytes[4..]
        .chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect();
    Ok((n, costs))
}
