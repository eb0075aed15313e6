//! A bounds-checked reader of little-endian numbers and byte runs over a byte slice, for
//! the binary files folio reads itself (the outline cache, the Japanese synonym
//! dictionary): every read past the end is an error naming where, never a panic.

/// Reads `bytes` from `at` on.
pub(crate) struct LeReader<'a> {
    bytes: &'a [u8],
    /// The offset of the next read.
    pub(crate) at: usize,
}

impl<'a> LeReader<'a> {
    /// A reader of `bytes` starting at offset `at`.
    pub(crate) fn new(bytes: &'a [u8], at: usize) -> LeReader<'a> {
        LeReader { bytes, at }
    }

    /// The next `n` bytes.
    ///
    /// Errors: fewer than `n` bytes are left (`truncated at byte …`).
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "truncated at byte {} (wanted {n} more of {})",
                self.at,
                self.bytes.len()
            ));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    /// The next byte.
    pub(crate) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    /// The next two bytes as a little-endian number.
    pub(crate) fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// The next four bytes as a little-endian number.
    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// The next eight bytes as a little-endian number.
    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("take gives N bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_little_endian_and_a_read_past_the_end_says_where() {
        let bytes = [1, 2, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 9];
        let mut r = LeReader::new(&bytes, 0);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u16(), Ok(2));
        assert_eq!(r.u32(), Ok(3));
        assert_eq!(r.u64(), Ok(4));
        assert_eq!(r.at, 15);
        assert_eq!(
            r.u16(),
            Err("truncated at byte 15 (wanted 2 more of 16)".to_owned())
        );
        assert_eq!(r.take(1), Ok(&[9][..]));
        assert_eq!(
            LeReader::new(&bytes, 3).take(usize::MAX),
            Err(format!(
                "truncated at byte 3 (wanted {} more of 16)",
                usize::MAX
            ))
        );
    }
}
