//! Content digests shared by the layers that must agree on them (the write journal,
//! `kb_download_file` and the image tools): SHA-256 as 64 lowercase hex digits.

use sha2::{Digest, Sha256};

/// SHA-256 of `bytes`, 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
