//! Reading structured choices out of fuzz bytes.

/// Fuzz bytes read front to back; every read succeeds, giving zeros once they run out.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// True once every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next byte (0 when none is left).
    pub fn byte(&mut self) -> u8 {
        let (first, rest) = self.bytes.split_first().unwrap_or((&0, &[]));
        self.bytes = rest;
        *first
    }

    /// A choice among `n` (n > 0).
    pub fn choose(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    /// The next eight bytes as a signed integer, little-endian, zero-padded.
    pub fn i64(&mut self) -> i64 {
        let mut word = [0u8; 8];
        for b in &mut word {
            *b = self.byte();
        }
        i64::from_le_bytes(word)
    }

    /// Up to `max` bytes, as many as the next byte says.
    pub fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = usize::from(self.byte()).min(max).min(self.bytes.len());
        let (taken, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        taken
    }

    /// Up to `max` bytes as text (invalid UTF-8 replaced).
    pub fn text(&mut self, max: usize) -> String {
        String::from_utf8_lossy(self.bytes(max)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::Input;

    #[test]
    fn reads_past_the_end_give_zeros() {
        let mut input = Input::new(&[3, b'a', b'b', b'c', 7]);
        assert_eq!(input.text(10), "abc");
        assert_eq!(input.byte(), 7);
        assert!(input.is_empty());
        assert_eq!((input.byte(), input.i64(), input.bytes(5)), (0, 0, &[][..]));
    }
}
