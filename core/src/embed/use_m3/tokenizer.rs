//! USE-Multilingual v3's SentencePiece tokenizer, as SentencePiece runs it for this
//! model (normaliser `nmt_nfkc` from the precompiled character map, `add_dummy_prefix`,
//! `remove_extra_whitespaces`, `escape_whitespaces`; the unigram model):
//!
//! 1. normalisation: at each byte the longest key of the character map's darts-clone
//!    double-array trie that starts there is replaced by its string (NFKC, control
//!    characters dropped, other spaces made U+0020); leading spaces are dropped, a run
//!    of spaces becomes one, trailing spaces go, every space becomes `▁` (U+2581) and a
//!    `▁` is put in front;
//! 2. Viterbi over the whole normalised text: the segmentation into pieces with the
//!    highest total score (on equal scores the one whose last piece starts earliest); a
//!    character no one-character piece covers is `<unk>` on its own, scored the lowest
//!    piece score minus 10;
//! 3. `<s>` before and `</s>` after; an empty normalised text is `<s> <unk> </s>`.
//!
//! Unlike the built-in model's tokenizer (`embed::builtin::tokenizer`) the text is not
//! split into words first and unknown characters are not merged: that is how
//! SentencePiece itself, which this model was trained with, segments.

use std::collections::HashMap;

/// The piece id of `<unk>`.
const UNK: u32 = 0;
/// The piece id of `<s>`.
pub(super) const BOS: u32 = 1;
/// The piece id of `</s>`.
pub(super) const EOS: u32 = 2;

/// The metaspace marker that stands for a space in pieces.
const METASPACE: &str = "\u{2581}";

/// SentencePiece's score penalty of an unknown character below the lowest piece score.
const UNKNOWN_PENALTY: f64 = 10.0;

/// The vocabulary with its normaliser.
pub(super) struct Tokenizer {
    ids: HashMap<String, u32>,
    scores: Vec<f32>,
    /// The longest piece, in characters.
    longest: usize,
    unknown_score: f64,
    normaliser: Normaliser,
}

impl Tokenizer {
    /// A tokenizer of `pieces` (text and score, in id order) and SentencePiece's
    /// precompiled character map.
    ///
    /// Errors: the map is not a trie followed by its strings.
    pub(super) fn new(pieces: Vec<(String, f32)>, charsmap: &[u8]) -> Result<Tokenizer, String> {
        let normaliser = Normaliser::new(charsmap)?;
        let scores: Vec<f32> = pieces.iter().map(|(_, s)| *s).collect();
        let min = scores.iter().copied().fold(f32::INFINITY, f32::min);
        let longest = pieces
            .iter()
            .map(|(p, _)| p.chars().count())
            .max()
            .unwrap_or(1);
        let mut ids = HashMap::with_capacity(pieces.len());
        for (id, (piece, _)) in pieces.into_iter().enumerate() {
            ids.insert(piece, id as u32);
        }
        Ok(Tokenizer {
            ids,
            scores,
            longest,
            unknown_score: f64::from(min) - UNKNOWN_PENALTY,
            normaliser,
        })
    }

    /// The piece ids of `text`, `<s>` first and `</s>` last.
    pub(super) fn encode(&self, text: &str) -> Vec<u32> {
        let normalised = self.normaliser.normalise(text);
        let mut ids = vec![BOS];
        if normalised.is_empty() {
            ids.push(UNK);
        } else {
            self.viterbi(&normalised, &mut ids);
        }
        ids.push(EOS);
        ids
    }

    fn viterbi(&self, text: &str, ids: &mut Vec<u32>) {
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(text.len()))
            .collect();
        let n = bounds.len() - 1;
        let mut best = vec![f64::NEG_INFINITY; n + 1];
        best[0] = 0.0;
        let mut start_of = vec![0usize; n + 1];
        let mut piece_of = vec![UNK; n + 1];
        for i in 0..n {
            let base = best[i];
            let mut has_single = false;
            for j in i + 1..=(i + self.longest).min(n) {
                if let Some(&id) = self.ids.get(&text[bounds[i]..bounds[j]]) {
                    let score = base + f64::from(self.scores[id as usize]);
                    if score > best[j] {
                        best[j] = score;
                        start_of[j] = i;
                        piece_of[j] = id;
                    }
                    has_single |= j == i + 1;
                }
            }
            if !has_single {
                let score = base + self.unknown_score;
                if score > best[i + 1] {
                    best[i + 1] = score;
                    start_of[i + 1] = i;
                    piece_of[i + 1] = UNK;
                }
            }
        }
        let at = ids.len();
        let mut p = n;
        while p > 0 {
            ids.push(piece_of[p]);
            p = start_of[p];
        }
        ids[at..].reverse();
    }
}

/// SentencePiece's normaliser over a precompiled character map.
struct Normaliser {
    /// The double-array trie's units.
    units: Vec<u32>,
    /// The replacement strings, each ended by a NUL byte.
    strings: Vec<u8>,
}

impl Normaliser {
    fn new(charsmap: &[u8]) -> Result<Normaliser, String> {
        let size = charsmap
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
            .ok_or("character map too short")?;
        let trie = charsmap
            .get(4..4 + size)
            .filter(|t| t.len() % 4 == 0 && !t.is_empty())
            .ok_or("character map trie out of bounds")?;
        Ok(Normaliser {
            units: trie
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                .collect(),
            strings: charsmap[4 + size..].to_vec(),
        })
    }

    fn offset(unit: u32) -> usize {
        ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
    }

    /// The replacement of the longest map key at `data[pos..]` and the bytes it covers;
    /// without one, the character at `pos` itself.
    fn prefix<'a>(&'a self, data: &'a [u8], pos: usize) -> (&'a [u8], usize) {
        let mut best_len = 0;
        let mut best_value = 0usize;
        let mut node = Normaliser::offset(self.units[0]);
        let mut i = pos;
        while i < data.len() {
            let c = u32::from(data[i]);
            node ^= c as usize;
            let Some(&unit) = self.units.get(node) else {
                break;
            };
            if unit & 0x8000_00FF != c {
                break;
            }
            node ^= Normaliser::offset(unit);
            i += 1;
            if unit & 0x100 != 0 {
                best_len = i - pos;
                best_value = self
                    .units
                    .get(node)
                    .map_or(usize::MAX, |u| (u & 0x7FFF_FFFF) as usize);
            }
        }
        if best_len == 0 || best_value >= self.strings.len() {
            let len = utf8_len(data[pos]).min(data.len() - pos);
            return (&data[pos..pos + len], len);
        }
        let end = self.strings[best_value..]
            .iter()
            .position(|&b| b == 0)
            .map_or(self.strings.len(), |e| best_value + e);
        (&self.strings[best_value..end], best_len)
    }

    fn normalise(&self, text: &str) -> String {
        let raw = text.as_bytes();
        let mut pos = 0;
        while pos < raw.len() {
            let (p, adv) = self.prefix(raw, pos);
            if p != b" " {
                break;
            }
            pos += adv;
        }
        if pos >= raw.len() {
            return String::new();
        }
        let mut out: Vec<u8> = METASPACE.as_bytes().to_vec();
        let mut prev_space = true;
        while pos < raw.len() {
            let (mut p, adv) = self.prefix(raw, pos);
            pos += adv;
            if prev_space {
                while let [b' ', rest @ ..] = p {
                    p = rest;
                }
            }
            if p.is_empty() {
                continue;
            }
            if p.contains(&b' ') {
                for &b in p {
                    if b == b' ' {
                        out.extend_from_slice(METASPACE.as_bytes());
                    } else {
                        out.push(b);
                    }
                }
                prev_space = p.last() == Some(&b' ');
            } else {
                out.extend_from_slice(p);
                prev_space = false;
            }
        }
        while out.ends_with(METASPACE.as_bytes()) {
            out.truncate(out.len() - METASPACE.len());
        }
        // The map's strings are UTF-8, and so is the input between them.
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// The byte length of the UTF-8 character that starts with `first`.
fn utf8_len(first: u8) -> usize {
    match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}
