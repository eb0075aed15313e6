//! The `use-m3.bin` file that `scripts/fetch-use-model` writes (its format is documented
//! in `tools/use-m3/convert.py`): read once, except the 65 MB embedding table, whose rows
//! are read from the file when a token needs one.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

/// The file's magic bytes.
const MAGIC: &[u8; 4] = b"USM3";

/// The format version this build reads.
const VERSION: u32 = 1;

/// xxh64 (seed 0) of the whole file `scripts/fetch-use-model` installs (the file whose
/// SHA-256 that script pins): only that exact file is used, so a damaged copy cannot
/// store wrong vectors under the model's id, which later passes would keep.
const FILE_XXH64: u64 = 0xd49e_78c3_1a2f_337c;

/// Checks that `file` is the one `scripts/fetch-use-model` installs, by its xxh64
/// ([`FILE_XXH64`]), reading it from the start; reads the 81 MB once (the whole load,
/// this check included, takes about 0.1 s).
///
/// Errors: the file cannot be read, or its digest differs (the message gives both).
pub(super) fn check_digest(mut file: &File) -> Result<(), String> {
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let mut hasher = xxhash_rust::xxh64::Xxh64::new(0);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let digest = hasher.digest();
    if digest != FILE_XXH64 {
        return Err(format!(
            "not the file `folio model install` installs: xxh64 {digest:016x}, expected {FILE_XXH64:016x}"
        ));
    }
    Ok(())
}

/// The parts of the file besides the embedding table.
pub(super) struct Parsed {
    /// The SentencePiece pieces with their scores, in id order.
    pub(super) pieces: Vec<(String, f32)>,
    /// SentencePiece's precompiled character map.
    pub(super) charsmap: Vec<u8>,
    /// Named tensors: `(rows, cols, values row-major)`.
    pub(super) tensors: HashMap<String, (usize, usize, Vec<f32>)>,
    /// Rows and columns of the byte-per-value embedding table.
    pub(super) table_rows: usize,
    pub(super) table_cols: usize,
    /// Where the table starts in the file, in bytes.
    pub(super) table_offset: u64,
}

/// A reader that counts the bytes it has read.
struct Counted<R> {
    inner: R,
    at: u64,
}

impl<R: Read> Counted<R> {
    fn bytes(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let mut buf = vec![0; n];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| format!("truncated at byte {} ({e})", self.at))?;
        self.at += n as u64;
        Ok(buf)
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.bytes(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()))
    }
    fn f32s(&mut self, n: usize) -> Result<Vec<f32>, String> {
        let raw = self.bytes(n.checked_mul(4).ok_or("tensor too large")?)?;
        Ok(raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect())
    }
}

/// Reads and checks everything but the table.
///
/// Errors: the file cannot be read, is not a version-1 `USM3` file, or its length is not
/// the header's plus the table's.
pub(super) fn parse(mut file: &File) -> Result<Parsed, String> {
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let mut r = Counted {
        inner: BufReader::with_capacity(1 << 20, file),
        at: 0,
    };
    if r.bytes(4)? != MAGIC {
        return Err("not a USE-Multilingual v3 file (no USM3 magic)".into());
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(format!("format version {version}, expected {VERSION}"));
    }
    let n_pieces = r.u32()? as usize;
    if n_pieces == 0 || n_pieces > 1_000_000 {
        return Err(format!("{n_pieces} pieces"));
    }
    let mut pieces = Vec::with_capacity(n_pieces);
    for _ in 0..n_pieces {
        let n = r.u16()? as usize;
        let text = String::from_utf8(r.bytes(n)?).map_err(|_| "a piece is not UTF-8")?;
        let score = r.f32s(1)?[0];
        pieces.push((text, score));
    }
    let n = r.u32()? as usize;
    let charsmap = r.bytes(n)?;
    let n_tensors = r.u32()?;
    let mut tensors = HashMap::new();
    for _ in 0..n_tensors {
        let n = r.u16()? as usize;
        let name = String::from_utf8(r.bytes(n)?).map_err(|_| "a tensor name is not UTF-8")?;
        let rows = r.u32()? as usize;
        let cols = r.u32()? as usize;
        let values = r.f32s(rows.checked_mul(cols).ok_or("tensor too large")?)?;
        tensors.insert(name, (rows, cols, values));
    }
    let table_rows = r.u32()? as usize;
    let table_cols = r.u32()? as usize;
    let table_offset = r.at;
    if table_offset + (table_rows as u64) * (table_cols as u64) != len {
        return Err(format!(
            "{len} bytes, expected {} for a {table_rows} x {table_cols} table after the header",
            table_offset + (table_rows as u64) * (table_cols as u64)
        ));
    }
    Ok(Parsed {
        pieces,
        charsmap,
        tensors,
        table_rows,
        table_cols,
        table_offset,
    })
}

/// Reads `buf.len()` bytes at `offset` of `file` without moving a shared cursor, so
/// threads can read rows at once.
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(
                file,
                &mut buf[done..],
                offset + done as u64,
            )?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(())
    }
}
