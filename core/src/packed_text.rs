//! A text kept compressed in blocks, for documents no editor has open.
//!
//! A language server holds the text of every document of the workspace, though it reads
//! the text of a closed one only now and then: a position in a line with non-ASCII
//! characters, a hover preview, the old text a link rewrite is checked against. Markdown
//! compresses about 2.4 times with DEFLATE at level 2 in blocks of 16 KiB (11.6 MB of
//! k8s-community to 4.9 MB, in 90 ms of one core), so [`PackedText`] keeps the text as
//! raw DEFLATE blocks (RFC 1951, `flate2` with the zlib-rs back end), each starting at a
//! line start, and unpacks one block when asked about a place in it (16 KiB in tens of
//! microseconds).
//!
//! Each thread keeps the block it unpacked last, so that the positions of one document
//! converted one after another unpack its block once.

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// Text bytes per block before the block is cut at the next line start (a line longer
/// than this is one block of its own).
pub const BLOCK_BYTES: usize = 16 * 1024;

/// A UTF-8 text compressed in blocks that start at line starts (`\n`, `\r\n` or a lone
/// `\r` ends a line, as in [`crate::document::LineIndex`]).
///
/// Offsets are bytes of the text. Each pack has its own identity, so the per-thread
/// cache of the last unpacked block never serves another text's block.
#[derive(Clone, Debug)]
pub struct PackedText {
    /// Raw DEFLATE of every block, one after another.
    packed: Box<[u8]>,
    /// One per block, in order.
    blocks: Box<[Block]>,
    /// Length of the text in bytes.
    len: usize,
    /// Identity of this pack for the cache (unique per process).
    id: u64,
}

/// Where one block is, in the text and in [`PackedText::packed`].
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Byte offset of the block's first byte in the text.
    start: u32,
    /// Byte offset of its compressed form in `packed`.
    packed_start: u32,
    /// True when the block is all ASCII: a column in any encoding is then a byte count.
    ascii: bool,
}

/// Source of pack identities.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The block this thread unpacked last: (pack id, block number, its text).
    static LAST_BLOCK: RefCell<Option<(u64, usize, Rc<str>)>> = const { RefCell::new(None) };
}

impl PackedText {
    /// Compresses `text` in blocks of about [`BLOCK_BYTES`]. `None` when the text is 4 GiB
    /// or longer (offsets are kept in 32 bits).
    pub fn new(text: &str) -> Option<PackedText> {
        PackedText::with_block_bytes(text, BLOCK_BYTES)
    }

    /// [`PackedText::new`] with blocks of about `block_bytes` (tests use small blocks).
    pub fn with_block_bytes(text: &str, block_bytes: usize) -> Option<PackedText> {
        u32::try_from(text.len()).ok()?;
        let bytes = text.as_bytes();
        let mut packed = Vec::with_capacity(text.len() / 2 + 64);
        let mut blocks = Vec::new();
        let mut start = 0;
        while start < bytes.len() {
            let end = block_end(bytes, start, block_bytes.max(1));
            let block = &bytes[start..end];
            blocks.push(Block {
                start: start as u32,
                packed_start: u32::try_from(packed.len()).ok()?,
                ascii: block.is_ascii(),
            });
            deflate(block, &mut packed);
            start = end;
        }
        u32::try_from(packed.len()).ok()?;
        Some(PackedText {
            packed: packed.into_boxed_slice(),
            blocks: blocks.into_boxed_slice(),
            len: text.len(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// Length of the text in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for the empty text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held for the compressed text (not counting the block table).
    pub fn packed_len(&self) -> usize {
        self.packed.len()
    }

    /// The whole text.
    pub fn unpack(&self) -> String {
        let mut text = String::with_capacity(self.len);
        for n in 0..self.blocks.len() {
            text.push_str(&self.block(n));
        }
        text
    }

    /// The bytes `range` of the text; `None` when it is out of bounds or splits a character.
    pub fn get(&self, range: Range<usize>) -> Option<String> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        if range.is_empty() {
            // Still checked against the character boundaries, as `str::get` does.
            return self.with_text_at(range.start, |text, base| {
                text.is_char_boundary(range.start - base).then(String::new)
            });
        }
        let first = self.block_index(range.start);
        let last = self.block_index(range.end - 1);
        let mut text = String::with_capacity(range.len());
        for n in first..=last {
            let base = self.blocks[n].start as usize;
            let block = self.block(n);
            let from = range.start.max(base) - base;
            let to = range.end.min(base + block.len()) - base;
            // Boundaries inside the block must fall on characters; block edges always do.
            text.push_str(block.get(from..to)?);
        }
        Some(text)
    }

    /// True when the block holding byte `offset` is all ASCII (so a column in any
    /// encoding is a byte count there); the end of the text is in the last block, and
    /// the empty text is ASCII.
    pub fn is_ascii_at(&self, offset: usize) -> bool {
        self.blocks.is_empty() || self.blocks[self.block_index(offset.min(self.len - 1))].ascii
    }

    /// Calls `f` with the text of the block holding byte `offset` and the block's start
    /// offset. Every line lies whole in one block. `offset` at the end of the text gives
    /// the last block (an empty text: an empty block at 0).
    pub fn with_text_at<T>(&self, offset: usize, f: impl FnOnce(&str, usize) -> T) -> T {
        if self.blocks.is_empty() {
            return f("", 0);
        }
        let n = self.block_index(offset.min(self.len.saturating_sub(1)));
        f(&self.block(n), self.blocks[n].start as usize)
    }

    /// Number of the block holding byte `offset` (`offset < len`).
    fn block_index(&self, offset: usize) -> usize {
        self.blocks.partition_point(|b| b.start as usize <= offset) - 1
    }

    /// The text of block `n`, from this thread's cache or unpacked.
    fn block(&self, n: usize) -> Rc<str> {
        let cached = LAST_BLOCK.with_borrow(|last| match last {
            Some((id, block, text)) if *id == self.id && *block == n => Some(Rc::clone(text)),
            _ => None,
        });
        if let Some(text) = cached {
            return text;
        }
        let (this, next) = (self.blocks[n], self.blocks.get(n + 1));
        let end = next.map_or(self.len, |b| b.start as usize);
        let packed_end = next.map_or(self.packed.len(), |b| b.packed_start as usize);
        let bytes = inflate(
            &self.packed[this.packed_start as usize..packed_end],
            end - this.start as usize,
        );
        let text: Rc<str> = String::from_utf8(bytes)
            .expect("a packed block holds the UTF-8 it was made from")
            .into();
        LAST_BLOCK.set(Some((self.id, n, Rc::clone(&text))));
        text
    }
}

/// The end of the block that starts at `start`: the first line start at or after
/// `start + block_bytes`, or the end of the text.
fn block_end(bytes: &[u8], start: usize, block_bytes: usize) -> usize {
    let mut at = start + block_bytes;
    if at >= bytes.len() {
        return bytes.len();
    }
    // A line starts after `\n`, or after a `\r` that no `\n` follows.
    while at < bytes.len() {
        let prev = bytes[at - 1];
        if prev == b'\n' || (prev == b'\r' && bytes[at] != b'\n') {
            return at;
        }
        at += 1;
    }
    bytes.len()
}

/// Blocks of at least this many bytes are compressed at level 2, shorter ones at level 1.
///
/// zlib-rs's level 1 is its quick strategy: on k8s-community's 16 KiB blocks it packs
/// 1.81 times in 48 ms, level 2 2.37 times in 90 ms (levels 3–6 gain 2–4% more for
/// 10–30% more time). Short texts (tldr's pages, 485 bytes on average) gain less from
/// level 2 and would pay most of its time.
const LEVEL_2_BYTES: usize = 4096;

thread_local! {
    /// This thread's compressors at levels 1 and 2, reset for each block: making one
    /// allocates and clears some 300 KB of state, which cost more than packing a short
    /// text.
    static COMPRESSORS: RefCell<Option<[Compress; 2]>> = const { RefCell::new(None) };
}

/// Appends the raw DEFLATE of `data` to `out`.
fn deflate(data: &[u8], out: &mut Vec<u8>) {
    COMPRESSORS.with_borrow_mut(|compressors| {
        let compressors = compressors.get_or_insert_with(|| {
            [1, 2].map(|level| Compress::new(Compression::new(level), false))
        });
        let compress = &mut compressors[usize::from(data.len() >= LEVEL_2_BYTES)];
        compress.reset();
        loop {
            out.reserve(data.len() / 2 + 64);
            let consumed = compress.total_in() as usize;
            let status = compress
                .compress_vec(&data[consumed..], out, FlushCompress::Finish)
                .expect("DEFLATE of an in-memory buffer cannot fail");
            if status == Status::StreamEnd {
                return;
            }
        }
    })
}

/// The `len` bytes whose raw DEFLATE is `packed`.
fn inflate(packed: &[u8], len: usize) -> Vec<u8> {
    // Room past the end lets the decoder read the end-of-stream code after the last byte.
    let mut out = Vec::with_capacity(len + 64);
    let mut decompress = Decompress::new(false);
    let status = decompress
        .decompress_vec(packed, &mut out, FlushDecompress::Finish)
        .expect("a packed block is the DEFLATE stream made of it");
    assert!(
        status == Status::StreamEnd && out.len() == len,
        "a packed block unpacks to its {len} bytes"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blocks_start_at_line_starts_and_the_text_comes_back_whole() {
        let text = "first line\nsecond line é\r\nthird\rfourth\n";
        let packed = PackedText::with_block_bytes(text, 4).unwrap();
        let starts: Vec<u32> = packed.blocks.iter().map(|b| b.start).collect();
        // Each block runs at least 4 bytes, then to the next line start.
        assert_eq!(starts, vec![0, 11, 27, 33]);
        let ascii: Vec<bool> = packed.blocks.iter().map(|b| b.ascii).collect();
        assert_eq!(ascii, vec![true, false, true, true]);
        assert_eq!(packed.unpack(), text);
        assert_eq!(packed.len(), text.len());
        assert_eq!(packed.get(5..15).as_deref(), Some(" line\nseco"));
        // `é` is bytes 23..25.
        assert_eq!(packed.get(24..26), None);
        assert_eq!(packed.get(24..24), None);
        assert_eq!(packed.get(25..25).as_deref(), Some(""));
        assert_eq!(packed.get(30..99), None);
        assert!(!packed.is_ascii_at(12));
        assert!(packed.is_ascii_at(28));
        assert!(packed.is_ascii_at(text.len()));
        let ends_in_e = PackedText::with_block_bytes("ab\ncdé", 1).unwrap();
        assert!(ends_in_e.is_ascii_at(2) && !ends_in_e.is_ascii_at(7));
        let line = packed.with_text_at(15, |block, base| (block.to_string(), base));
        assert_eq!(line, ("second line é\r\n".to_string(), 11));
    }

    #[test]
    fn a_long_text_packs_smaller_and_the_empty_text_packs_to_nothing() {
        let text = "A line of Markdown with a [link](other.md#heading).\n".repeat(2_000);
        let packed = PackedText::new(&text).unwrap();
        assert_eq!(packed.blocks.len(), 7);
        assert!(
            packed.packed_len() * 10 < text.len(),
            "{}",
            packed.packed_len()
        );
        assert_eq!(packed.unpack(), text);
        let empty = PackedText::new("").unwrap();
        assert_eq!(
            (empty.unpack(), empty.packed_len(), empty.is_empty()),
            (String::new(), 0, true)
        );
        assert_eq!(empty.get(0..0).as_deref(), Some(""));
        assert_eq!(empty.with_text_at(0, |t, base| (t.len(), base)), (0, 0));
    }

    #[test]
    fn two_packs_never_share_a_cached_block() {
        let a = PackedText::new("alpha\n").unwrap();
        let b = PackedText::new("bravo\n").unwrap();
        assert_eq!(a.get(0..5).as_deref(), Some("alpha"));
        assert_eq!(b.get(0..5).as_deref(), Some("bravo"));
        assert_eq!(a.get(0..5).as_deref(), Some("alpha"));
        // A clone is the same text: sharing its cached block is right.
        assert_eq!(a.clone().get(0..5).as_deref(), Some("alpha"));
    }

    proptest! {
        /// Every slice of a packed text equals the slice of the text, for any block size.
        #[test]
        fn slices_match_the_text(
            text in "(a|é|😀|\n|\r\n|\r| ){0,80}",
            block in 1usize..24,
            a in 0usize..200,
            b in 0usize..200,
        ) {
            let packed = PackedText::with_block_bytes(&text, block).unwrap();
            prop_assert_eq!(packed.unpack(), text.clone());
            let (start, end) = (a.min(b), a.max(b));
            prop_assert_eq!(packed.get(start..end), text.get(start..end).map(str::to_string));
        }
    }
}
