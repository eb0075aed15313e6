//! The model's SentencePiece Unigram tokenizer (the XLM-RoBERTa vocabulary of
//! 250,002 pieces with their log-probability scores), read from the weights
//! file, reproducing the Hugging Face `tokenizers` pipeline of the model's
//! `tokenizer.json`:
//!
//! 1. normalisation: every character is replaced through the per-character
//!    map stored in the weights file (derived from SentencePiece's
//!    `nmt_nfkc` character map: NFKC, control characters dropped, line breaks,
//!    tabs and other spaces turned into U+0020), then runs of two or more
//!    U+0020 become one;
//! 2. pre-tokenisation (`Metaspace`): a `▁` (U+2581) is put in front unless
//!    the text already starts with a space, every space becomes `▁`, and the
//!    text is split before each `▁`;
//! 3. each word is segmented by Viterbi over the pieces (highest total score;
//!    on equal scores the earlier, shorter piece wins, as in `tokenizers`); a
//!    character no piece covers becomes `<unk>` with the lowest score minus
//!    10, and neighbouring unknown characters share one `<unk>`.
//!
//! Known differences from `tokenizers` (none occurs in ordinary text): a
//! grapheme cluster that SentencePiece's map rewrites as a whole (a letter
//! followed by a combining mark that NFKC composes) is mapped here character
//! by character, and the literal strings `<s>`, `</s>`, `<pad>`, `<unk>`,
//! `<mask>` in the input are ordinary text here, where `tokenizers` turns them
//! into the special tokens.

use super::weights::Cursor;

/// The metaspace marker that stands for a space in pieces.
const METASPACE: char = '\u{2581}';

/// The SentencePiece score penalty of an unknown character, below the lowest
/// piece score (the value SentencePiece and `tokenizers` use).
const UNKNOWN_PENALTY: f64 = 10.0;

/// A Unigram vocabulary with its normalisation map.
pub(super) struct Unigram {
    /// Piece `i` is `bytes[offsets[i]..offsets[i + 1]]`.
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    scores: Vec<f32>,
    /// Open-addressing table of piece index + 1 (0 = empty), by FNV-1a hash.
    table: Vec<u32>,
    longest_piece: usize,
    unknown_score: f64,
    pub(super) bos: u32,
    pub(super) eos: u32,
    unk: u32,
    /// Sorted characters with their replacements in `map_out[start..end]`.
    map: Vec<(char, u32, u32)>,
    map_out: Vec<char>,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Unigram {
    /// Reads the tokenizer section of the weights file at the cursor.
    pub(super) fn parse(c: &mut Cursor<'_>) -> Result<Unigram, String> {
        let pieces = c.i32()?;
        let bos = c.i32()? as u32;
        let eos = c.i32()? as u32;
        let _pad = c.i32()?;
        let unk = c.i32()? as u32;
        let blob_len = c.u64()?;
        if pieces == 0 || [bos, eos, unk].iter().any(|&id| id as usize >= pieces) {
            return Err("tokenizer: bad special token ids".into());
        }
        let offsets: Vec<u32> = c
            .take((pieces + 1) * 4)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let scores: Vec<f32> = c
            .take(pieces * 4)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let bytes = c.take(blob_len)?.to_vec();
        if offsets[0] != 0
            || offsets.windows(2).any(|w| w[0] > w[1])
            || offsets[pieces] as usize != bytes.len()
        {
            return Err("tokenizer: piece offsets out of order".into());
        }
        for i in 0..pieces {
            std::str::from_utf8(&bytes[offsets[i] as usize..offsets[i + 1] as usize])
                .map_err(|_| format!("tokenizer: piece {i} is not UTF-8"))?;
        }
        let entries = c.i32()?;
        let map_len = c.u32()? as usize;
        let mut m = Cursor {
            bytes: c.take(map_len)?,
            at: 0,
        };
        let mut map = Vec::with_capacity(entries.min(1 << 16));
        let mut map_out = Vec::new();
        let to_char =
            |v: u32| char::from_u32(v).ok_or_else(|| format!("tokenizer: bad code point {v:#x}"));
        for _ in 0..entries {
            let from = to_char(m.u32()?)?;
            let n = m.take(1)?[0];
            let start = map_out.len() as u32;
            for _ in 0..n {
                map_out.push(to_char(m.u32()?)?);
            }
            map.push((from, start, map_out.len() as u32));
        }
        map.sort_by_key(|e| e.0);

        let mut table = vec![0u32; (pieces * 2).next_power_of_two()];
        let mask = table.len() - 1;
        let mut longest_piece = 1;
        let mut lowest = f64::INFINITY;
        for i in 0..pieces {
            let piece = &bytes[offsets[i] as usize..offsets[i + 1] as usize];
            lowest = lowest.min(f64::from(scores[i]));
            // Special tokens (<s>, <pad>, </s>, <unk>, <mask>: score 0, in angle
            // brackets, at the ends of the vocabulary) are never matched in text.
            let special = i < 4 || (i == pieces - 1 && piece == b"<mask>");
            if piece.is_empty() || special {
                continue;
            }
            longest_piece = longest_piece.max(piece.len());
            let mut slot = fnv1a(piece) as usize & mask;
            while table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            table[slot] = i as u32 + 1;
        }
        Ok(Unigram {
            bytes,
            offsets,
            scores,
            table,
            longest_piece,
            unknown_score: lowest - UNKNOWN_PENALTY,
            bos,
            eos,
            unk,
            map,
            map_out,
        })
    }

    /// The number of pieces (token ids are below it).
    pub(super) fn vocab_size(&self) -> usize {
        self.scores.len()
    }

    /// The id of the piece spelled `s`, if any.
    fn lookup(&self, s: &[u8]) -> Option<u32> {
        let mask = self.table.len() - 1;
        let mut slot = fnv1a(s) as usize & mask;
        loop {
            let v = self.table[slot];
            if v == 0 {
                return None;
            }
            let i = (v - 1) as usize;
            if &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize] == s {
                return Some(v - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Steps 1 and 2: the normalised text with spaces as `▁`, `▁` in front.
    fn normalise(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 3);
        let mut after_space = false;
        for c in text.chars() {
            let replaced: &[char] = match self.map.binary_search_by_key(&c, |e| e.0) {
                Ok(i) => &self.map_out[self.map[i].1 as usize..self.map[i].2 as usize],
                Err(_) => std::slice::from_ref(&c),
            };
            for &r in replaced {
                if r == ' ' {
                    if !after_space {
                        out.push(METASPACE);
                    }
                    after_space = true;
                } else {
                    out.push(r);
                    after_space = false;
                }
            }
        }
        // Nothing left (empty text, or only dropped characters): no pieces.
        if !out.is_empty() && !out.starts_with(METASPACE) {
            out.insert(0, METASPACE);
        }
        out
    }

    /// Token ids of `text` without `<s>`/`</s>`: steps 1 to 3.
    pub(super) fn encode(&self, text: &str) -> Vec<u32> {
        let normalised = self.normalise(text);
        let mut ids = Vec::with_capacity(normalised.len() / 3 + 1);
        let mut word_start = 0;
        for (i, c) in normalised.char_indices() {
            if c == METASPACE && i > word_start {
                self.segment(&normalised[word_start..i], &mut ids);
                word_start = i;
            }
        }
        if !normalised.is_empty() {
            self.segment(&normalised[word_start..], &mut ids);
        }
        ids
    }

    /// Step 3 for one word: appends its piece ids to `ids`.
    fn segment(&self, word: &str, ids: &mut Vec<u32>) {
        let bytes = word.as_bytes();
        let n = bytes.len();
        // best[e] = (score, start, id) of the best path ending at byte e.
        let mut best: Vec<(f64, usize, u32)> = vec![(f64::NEG_INFINITY, usize::MAX, 0); n + 1];
        best[0].0 = 0.0;
        let mut start = 0;
        while start < n {
            let here = best[start].0;
            let char_len = word[start..].chars().next().map_or(1, char::len_utf8);
            let mut single = false;
            for (off, c) in word[start..].char_indices() {
                let end = start + off + c.len_utf8();
                if end - start > self.longest_piece {
                    break;
                }
                if let Some(id) = self.lookup(&bytes[start..end]) {
                    let score = here + f64::from(self.scores[id as usize]);
                    if best[end].1 == usize::MAX || score > best[end].0 {
                        best[end] = (score, start, id);
                    }
                    single |= end - start == char_len;
                }
            }
            if !single {
                let e = start + char_len;
                let score = here + self.unknown_score;
                if best[e].1 == usize::MAX || score > best[e].0 {
                    best[e] = (score, start, self.unk);
                }
            }
            start += char_len;
        }
        let first = ids.len();
        let mut e = n;
        while e > 0 {
            let (_, s, id) = best[e];
            // Neighbouring unknown characters make one `<unk>`.
            if !(id == self.unk && ids.len() > first && *ids.last().unwrap() == self.unk) {
                ids.push(id);
            }
            e = s;
        }
        ids[first..].reverse();
    }
}
