//! Object keys ordered by their bytes, most pairs decided by an eight-byte prefix computed once
//! per key: the journal fast path sorts a line's `data` members this way and walks them against
//! the payload contracts' members in the same order (`memcmp` per comparison was a tenth of the
//! fast path, and then most of `Payloads::admits`).

use std::cmp::Ordering;

/// A key with its prefix (`prefix`), compared by `order`.
#[derive(Clone, Copy, Debug)]
pub struct Key<'a> {
    pub prefix: u64,
    pub bytes: &'a [u8],
}

impl<'a> Key<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Key {
            prefix: prefix(bytes),
            bytes,
        }
    }
}

/// A key's first eight bytes, big-endian and zero-padded: keys ordered by it are in their byte
/// order wherever it differs.
pub fn prefix(key: &[u8]) -> u64 {
    match key.first_chunk::<8>() {
        Some(eight) => u64::from_be_bytes(*eight),
        None => key.iter().enumerate().fold(0, |word, (index, &byte)| {
            word | u64::from(byte) << (56 - 8 * index)
        }),
    }
}

/// The byte order of two keys. Where the prefixes are equal and neither key is longer than eight
/// bytes, the shorter key is the other's start followed by zero bytes: the lengths decide, and
/// the bytes are not read again.
pub fn order(a: Key<'_>, b: Key<'_>) -> Ordering {
    a.prefix.cmp(&b.prefix).then_with(|| {
        if a.bytes.len() <= 8 && b.bytes.len() <= 8 {
            a.bytes.len().cmp(&b.bytes.len())
        } else {
            a.bytes.cmp(b.bytes)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_their_bytes_do() {
        // Keys around the eight bytes read, sharing prefixes, with zero bytes where padding is.
        let pieces: [&[u8]; 7] = [b"", b"a", b"\0", b"ab", b"abcdefgh", b"\xff", b"\0\0\0\0"];
        let mut keys = Vec::new();
        for first in pieces {
            for second in pieces {
                for third in pieces {
                    keys.push([first, second, third].concat());
                }
            }
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(order(Key::new(a), Key::new(b)), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }
}
