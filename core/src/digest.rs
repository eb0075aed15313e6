//! Content digests shared by the layers that must agree on them (the write journal,
//! `kb_download_file` and the image tools): SHA-256 as 64 lowercase hex digits.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// SHA-256 of `bytes`, 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&Sha256::digest(bytes))
}

/// SHA-256 of the file at `path`, 64 lowercase hex digits, read in 1 MiB blocks (a model
/// file is never held in memory for it).
///
/// Errors: the file cannot be opened or read.
pub fn sha256_file_hex(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(to_hex(&hasher.finalize()))
}

/// `digest` (a finished hash) as lowercase hex digits.
pub fn to_hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
