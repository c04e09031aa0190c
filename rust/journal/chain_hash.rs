use std::fmt;

/// `hash`, `prev_hash` or CAR's digest. CAR writes 64 lowercase hex digits: such a text is held
/// as the 32 bytes it spells (a recomputed digest is never written as hex, and 32 bytes are
/// half as many to compare and move), any other text as it is, so every message shows what
/// the line holds. A text is held as bytes exactly when it is canonical, so two values are
/// equal exactly when their texts are.
#[derive(Clone, PartialEq, Eq)]
pub(in crate::journal) enum ChainHash {
    Digest([u8; 32]),
    Other(Box<str>),
}

impl ChainHash {
    pub(in crate::journal) fn new(text: &str) -> Self {
        match lower_hex_digest(text.as_bytes()) {
            Some(digest) => ChainHash::Digest(digest),
            None => ChainHash::Other(text.into()),
        }
    }
}

/// The 32 bytes that 64 lowercase hex digits spell: SSE2, which every x86-64 has, sixteen digits
/// a step (two hashes a line: reading them eight digits a step was 6 % of the fast path's
/// instructions outside SHA-256, a lookup per digit more before that).
#[cfg(target_arch = "x86_64")]
fn lower_hex_digest(text: &[u8]) -> Option<[u8; 32]> {
    // SAFETY: SSE2 is part of the x86-64 baseline: every CPU this code runs on has it.
    unsafe { lower_hex_digest_sse2(text) }
}

#[cfg(not(target_arch = "x86_64"))]
fn lower_hex_digest(text: &[u8]) -> Option<[u8; 32]> {
    lower_hex_digest_plain(text)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn lower_hex_digest_sse2(text: &[u8]) -> Option<[u8; 32]> {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16, _mm_set1_epi16, _mm_set1_epi8,
        _mm_setzero_si128, _mm_slli_epi16, _mm_srli_epi16, _mm_storeu_si128,
    };
    if text.len() != 64 {
        return None;
    }
    // Signed compares: a byte of 0x80 or more is negative, below both ranges.
    let (below_digits, above_digits) = (_mm_set1_epi8(b'/' as i8), _mm_set1_epi8(b':' as i8));
    let (below_letters, above_letters) = (_mm_set1_epi8(b'`' as i8), _mm_set1_epi8(b'g' as i8));
    let (low_bits, nine, first_of_pair) = (
        _mm_set1_epi8(0x0f),
        _mm_set1_epi8(9),
        _mm_set1_epi16(0x00ff),
    );
    let mut digest = [0; 32];
    for (thirty_two, out) in text.chunks_exact(32).zip(digest.chunks_exact_mut(16)) {
        let mut pairs = [_mm_setzero_si128(); 2];
        for (pair, sixteen) in pairs.iter_mut().zip(thirty_two.chunks_exact(16)) {
            // SAFETY: `sixteen` is 16 readable bytes; the load has no alignment requirement.
            let lanes = unsafe { _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>()) };
            let digits = _mm_and_si128(
                _mm_cmpgt_epi8(lanes, below_digits),
                _mm_cmplt_epi8(lanes, above_digits),
            );
            let letters = _mm_and_si128(
                _mm_cmpgt_epi8(lanes, below_letters),
                _mm_cmplt_epi8(lanes, above_letters),
            );
            if _mm_movemask_epi8(_mm_or_si128(digits, letters)) != 0xffff {
                return None;
            }
            // `0`-`9` are 0x30-0x39, `a`-`f` 0x61-0x66: the low four bits, plus 9 for a letter.
            let nibbles =
                _mm_add_epi8(_mm_and_si128(lanes, low_bits), _mm_and_si128(letters, nine));
            // A 16-bit lane holds a pair of digits, the first (the high nibble) in its low byte.
            let high = _mm_slli_epi16(_mm_and_si128(nibbles, first_of_pair), 4);
            *pair = _mm_or_si128(high, _mm_srli_epi16(nibbles, 8));
        }
        // Each lane is one byte's value (below 0x100): packing saturates nothing.
        let bytes = _mm_packus_epi16(pairs[0], pairs[1]);
        // SAFETY: `out` is 16 writable bytes; the store has no alignment requirement.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast::<__m128i>(), bytes) };
    }
    Some(digest)
}

/// The same reading eight digits a step in a plain word, for other architectures (and the
/// reference the vector reading is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn lower_hex_digest_plain(text: &[u8]) -> Option<[u8; 32]> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const EVEN: u64 = 0x00ff_00ff_00ff_00ff;
    if text.len() != 64 {
        return None;
    }
    let mut digest = [0; 32];
    for (chunk, out) in text.chunks_exact(8).zip(digest.chunks_exact_mut(4)) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if word & HIGHS != 0 {
            return None;
        }
        // Bytes below 0x80 plus at most 0x80 stay below 0x100: no carry between bytes, and
        // a byte's high bit says whether it reached the bound.
        let at_least = |low: u8| word.wrapping_add(ONES * u64::from(0x80 - low)) & HIGHS;
        let above = |high: u8| word.wrapping_add(ONES * u64::from(0x7f - high)) & HIGHS;
        let digits = at_least(b'0') & !above(b'9');
        let letters = at_least(b'a') & !above(b'f');
        if digits | letters != HIGHS {
            return None;
        }
        // `0`-`9` are 0x30-0x39, `a`-`f` 0x61-0x66: the low four bits, plus 9 for a letter.
        let nibbles = (word & (ONES * 0x0f)) + (letters >> 7) * 9;
        // The first digit of each pair (the lower byte) is the high nibble.
        let pairs = ((nibbles & EVEN) << 4) | ((nibbles >> 8) & EVEN);
        for (index, byte) in out.iter_mut().enumerate() {
            *byte = (pairs >> (16 * index)) as u8;
        }
    }
    Some(digest)
}

impl fmt::Display for ChainHash {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainHash::Digest(digest) => {
                let mut hex = [0; 64];
                crate::canonical::write_lower_hex(digest, &mut hex);
                formatter.write_str(std::str::from_utf8(&hex).expect("hex digits are ASCII"))
            }
            ChainHash::Other(text) => formatter.write_str(text),
        }
    }
}

impl fmt::Debug for ChainHash {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), formatter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift generator of numbers below a bound: the same inputs on every run.
    fn numbers(seed: u64) -> impl FnMut(usize) -> usize {
        let mut state = seed;
        move |bound| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        }
    }

    /// Hashes are held as bytes exactly when they are 64 lowercase hex digits, those bytes, and
    /// show as the text they were read from: against a digit-by-digit reading, with every digit
    /// and its neighbours (`/`, `:`, `` ` ``, `g`, upper case) at every place.
    #[test]
    fn chain_hashes_are_bytes_exactly_when_canonical() {
        let alphabet: Vec<char> = "0123456789abcdef/:`gAF\u{e9}".chars().collect();
        let mut next = numbers(0x2545_f491_4f6c_dd1d);
        for round in 0..20_000 {
            let length = if round % 4 == 0 { next(70) } else { 64 };
            let text: String = (0..length)
                .map(|_| {
                    if next(40) == 0 {
                        alphabet[next(alphabet.len())]
                    } else {
                        alphabet[next(16)]
                    }
                })
                .collect();
            let hash = ChainHash::new(&text);
            assert_eq!(hash.to_string(), text);
            let canonical = text.len() == 64
                && text
                    .bytes()
                    .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
            match hash {
                ChainHash::Digest(digest) => {
                    assert!(canonical, "{text}");
                    let plain: Vec<u8> = (0..32)
                        .map(|at| u8::from_str_radix(&text[2 * at..2 * at + 2], 16).unwrap())
                        .collect();
                    assert_eq!(digest.to_vec(), plain, "{text}");
                }
                ChainHash::Other(_) => assert!(!canonical, "{text}"),
            }
        }
    }

    /// The vector reading against the plain one: 64 digits with any byte (ASCII neighbours of
    /// the ranges, bytes of 0x80 and above) at any place, and other lengths.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vector_reading_is_the_plain_one() {
        let odd: &[u8] = b"/:`gAF\x00\x7f\x80\xe9\xff";
        let mut next = numbers(0x9e37_79b9_7f4a_7c15);
        for round in 0..50_000 {
            let length = if round % 8 == 0 { next(80) } else { 64 };
            let text: Vec<u8> = (0..length)
                .map(|_| match next(64) {
                    0 => odd[next(odd.len())],
                    _ => b"0123456789abcdef"[next(16)],
                })
                .collect();
            // SAFETY: SSE2 is part of the x86-64 baseline.
            let vector = unsafe { lower_hex_digest_sse2(&text) };
            assert_eq!(vector, lower_hex_digest_plain(&text), "{text:?}");
        }
    }
}
