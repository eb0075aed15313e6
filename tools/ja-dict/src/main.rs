//! `folio-ja-dict`: builds folio's Japanese dictionary.
//!
//! ```text
//! folio-ja-dict <lindera-ipadic-0.3.3 source folder> <destination folder>
//! ```
//!
//! Reads the compiled IPADIC 2.7.0-20070801 of the `lindera-ipadic` 0.3.3 crate (each
//! file checked against its pinned SHA-256), writes it as MeCab-format sources with the
//! part of speech as the only feature, compiles them into a vibrato 0.5 dictionary and
//! installs it gzip-compressed as `ipadic.dic.gz`, with IPADIC's licence notice
//! (`NOTICE-IPADIC.txt`, the crate's `NOTICE.txt`) and `ATTRIBUTION.txt`, into the
//! destination (where folio's `store::japanese` looks for it). `scripts/fetch-ja-dict`
//! finds the crate's folder and runs this.

mod lindera;
mod sources;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::Digest;

/// The dictionary file's name in the destination (folio's `store::japanese::DICTIONARY_FILE`).
const DICTIONARY_FILE: &str = "ipadic.dic.gz";

/// The crate's `NOTICE.txt` (IPADIC's licence), pinned like the data files.
const NOTICE_SHA256: &str = "49b1e7a8bc6a9f7ea19c2fefad73d27f360a3376db5e27e3b12f30ba6ecb35d0";

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn hex_sha256(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn main() -> std::process::ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [crate_dir, dest] = args.as_slice() else {
        eprintln!("usage: folio-ja-dict <lindera-ipadic-0.3.3 source folder> <destination folder>");
        return std::process::ExitCode::from(2);
    };
    match build(crate_dir, dest) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("folio-ja-dict: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Writes `bytes` to `dir/name` through a temporary file renamed into place, so a reader
/// never sees half a file.
fn install(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let partial = dir.join(format!(".{name}.partial"));
    std::fs::write(&partial, bytes).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, dir.join(name)).map_err(|e| format!("{name}: {e}"))
}

fn build(crate_dir: &Path, dest: &Path) -> Result<(), String> {
    let started = Instant::now();
    let notice_path = crate_dir.join("NOTICE.txt");
    let notice =
        std::fs::read(&notice_path).map_err(|e| format!("{}: {e}", notice_path.display()))?;
    if hex_sha256(&notice) != NOTICE_SHA256 {
        return Err(format!(
            "{} is not lindera-ipadic 0.3.3's",
            notice_path.display()
        ));
    }
    let ipadic = lindera::read(&crate_dir.join("lindera-ipadic")).map_err(|e| e.to_string())?;
    eprintln!(
        "folio-ja-dict: read {} entries, {} context ids, {} character categories ({:.1} s)",
        ipadic.entries.len(),
        ipadic.n_contexts,
        ipadic.chars.names.len(),
        started.elapsed().as_secs_f64()
    );
    let text = sources::write(&ipadic);
    drop(ipadic);
    let dict = vibrato::SystemDictionaryBuilder::from_readers(
        text.lex.as_bytes(),
        text.matrix.as_bytes(),
        text.char_def.as_bytes(),
        text.unk.as_bytes(),
    )
    .map_err(|e| format!("vibrato could not compile the sources: {e}"))?;
    let mut compressed = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let raw_len = dict
        .write(&mut compressed)
        .map_err(|e| format!("writing the dictionary: {e}"))?;
    let compressed = compressed
        .finish()
        .map_err(|e| format!("compressing the dictionary: {e}"))?;
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    install(dest, DICTIONARY_FILE, &compressed)?;
    install(dest, "NOTICE-IPADIC.txt", &notice)?;
    let mut attribution = Vec::new();
    let _ = writeln!(
        attribution,
        "folio's Japanese dictionary: {DICTIONARY_FILE}\n\n\
         IPADIC 2.7.0-20070801 (Nara Institute of Science and Technology; ICOT), licence in\n\
         NOTICE-IPADIC.txt, taken from the crates.io package lindera-ipadic 0.3.3 (MIT,\n\
         https://github.com/lindera-morphology/lindera-ipadic), whose compiled files\n\
         were converted back to MeCab-format sources with the part of speech as the\n\
         only feature and compiled with vibrato 0.5.3 (MIT or Apache-2.0,\n\
         https://github.com/daac-tools/vibrato), then gzip-compressed.\n\
         \x20 {DICTIONARY_FILE}  sha256 {}\n\n\
         Built by folio's tools/ja-dict (scripts/fetch-ja-dict).",
        hex_sha256(&compressed)
    );
    install(dest, "ATTRIBUTION.txt", &attribution)?;
    eprintln!(
        "folio-ja-dict: wrote {} ({} bytes, {} uncompressed) in {:.1} s",
        dest.join(DICTIONARY_FILE).display(),
        compressed.len(),
        raw_len,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
