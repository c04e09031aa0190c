//! A line's survey, the fast path's first pass over its bytes: where every `"` and `\` is (a bit
//! each), and the line's smallest and largest byte. With the marks, the scanner finds where a
//! string ends by a bit scan instead of reading the string's bytes again (reading each string
//! for its end was the largest share of the fast path); the byte range tells whether the line
//! holds a control character (the smallest below 0x20) and whether it is all ASCII (the largest
//! below 0x80), which spares the common line UTF-8 validation.

/// Bytes a mask word covers.
const BLOCK: usize = 64;

/// The survey of one line; its buffer is reused from line to line.
#[derive(Default)]
pub(super) struct Survey {
    /// Bit `i % 64` of word `i / 64` is set when byte `i` is `"` or `\`.
    marks: Vec<u64>,
    pub(super) low: u8,
    pub(super) high: u8,
}

impl Survey {
    /// Surveys `bytes`, replacing what was surveyed before.
    pub(super) fn of(&mut self, bytes: &[u8]) {
        self.marks.clear();
        (self.low, self.high) = surveyed(bytes, &mut self.marks);
    }

    /// Where the first `"` or `\` at or after `from` is.
    pub(super) fn next_mark(&self, from: usize) -> Option<usize> {
        let mut word = from / BLOCK;
        let mut bits = *self.marks.get(word)? & (u64::MAX << (from % BLOCK));
        while bits == 0 {
            word += 1;
            bits = *self.marks.get(word)?;
        }
        Some(word * BLOCK + bits.trailing_zeros() as usize)
    }
}

/// Pushes the marks of `bytes` onto `marks` (a word per 64 bytes, the last one partial) and
/// returns their smallest and largest byte: SSE2, which every x86-64 has, sixteen bytes a step.
#[cfg(target_arch = "x86_64")]
fn surveyed(bytes: &[u8], marks: &mut Vec<u64>) -> (u8, u8) {
    // SAFETY: SSE2 is part of the x86-64 baseline: every CPU this code runs on has it.
    unsafe { surveyed_sse2(bytes, marks) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn surveyed_sse2(bytes: &[u8], marks: &mut Vec<u64>) -> (u8, u8) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_min_epu8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8, _mm_storeu_si128,
    };
    let (quote, backslash) = (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
    let (mut low, mut high) = (_mm_set1_epi8(-1), _mm_set1_epi8(0));
    let full_words = bytes.len() / BLOCK;
    let first = marks.len();
    // The words are written in place, in a loop that calls nothing: with a `push` (and its
    // possible reallocation) or a closure in the loop, the range was stored to the stack and
    // reloaded at every step (perf annotate).
    marks.resize(first + full_words, 0);
    let mut word = 0;
    for (index, sixteen) in bytes.chunks_exact(16).enumerate() {
        // SAFETY: `sixteen` is 16 readable bytes; the load has no alignment requirement.
        let lanes = unsafe { _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>()) };
        low = _mm_min_epu8(low, lanes);
        high = _mm_max_epu8(high, lanes);
        let marked = _mm_or_si128(
            _mm_cmpeq_epi8(lanes, quote),
            _mm_cmpeq_epi8(lanes, backslash),
        );
        // The sign bit of each of the 16 lanes, in the low 16 bits.
        word |= u64::from(_mm_movemask_epi8(marked) as u16) << (16 * (index % 4));
        if index % 4 == 3 {
            marks[first + index / 4] = word;
            word = 0;
        }
    }
    let (mut lows, mut highs) = ([0u8; 16], [0u8; 16]);
    // SAFETY: each array is 16 writable bytes; the store has no alignment requirement.
    unsafe { _mm_storeu_si128(lows.as_mut_ptr().cast::<__m128i>(), low) };
    // SAFETY: as above.
    unsafe { _mm_storeu_si128(highs.as_mut_ptr().cast::<__m128i>(), high) };
    let lanes = (
        lows.iter().copied().min().unwrap_or(u8::MAX),
        highs.iter().copied().max().unwrap_or(0),
    );
    let whole = bytes.len() / 16 * 16;
    marked_bytewise(&bytes[whole..], whole, word, marks, lanes)
}

/// `surveyed` byte by byte: the portable reading, and the reference the vector one is tested
/// against.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn surveyed_plainly(bytes: &[u8], marks: &mut Vec<u64>) -> (u8, u8) {
    marked_bytewise(bytes, 0, 0, marks, (u8::MAX, 0))
}

#[cfg(not(target_arch = "x86_64"))]
use surveyed_plainly as surveyed;

/// `bytes`, which begin at offset `start` of the line (the word being filled there is `word`),
/// marked byte by byte, each word pushed when full and the last one, partial, at the end; returns
/// `range` widened by them. The vector reading's tail, and the whole of the plain one.
fn marked_bytewise(
    bytes: &[u8],
    start: usize,
    mut word: u64,
    marks: &mut Vec<u64>,
    range: (u8, u8),
) -> (u8, u8) {
    let (mut low, mut high) = range;
    for (offset, &byte) in bytes.iter().enumerate() {
        word |= u64::from(is_mark(byte)) << ((start + offset) % BLOCK);
        if (start + offset) % BLOCK == BLOCK - 1 {
            marks.push(word);
            word = 0;
        }
        low = low.min(byte);
        high = high.max(byte);
    }
    marks.push(word);
    (low, high)
}

fn is_mark(byte: u8) -> bool {
    byte == b'"' || byte == b'\\'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marks_are_every_quote_and_backslash_and_the_range_every_byte() {
        // Lengths either side of the block size, marks at every position, bytes of every value.
        let mut survey = Survey::default();
        for length in [0, 1, 7, 63, 64, 65, 127, 128, 129, 300] {
            for seed in 0..40u32 {
                let bytes: Vec<u8> = (0..length)
                    .map(|i| match (i as u32).wrapping_mul(2_654_435_761) ^ seed {
                        value if value % 5 == 0 => b'"',
                        value if value % 7 == 0 => b'\\',
                        value => (value >> 3) as u8,
                    })
                    .collect();
                survey.of(&bytes);
                let expected: Vec<usize> = (0..length).filter(|&i| is_mark(bytes[i])).collect();
                let mut found = Vec::new();
                let mut from = 0;
                while let Some(at) = survey.next_mark(from) {
                    found.push(at);
                    from = at + 1;
                }
                assert_eq!(found, expected, "{bytes:?}");
                for from in 0..=length {
                    let next = expected.iter().copied().find(|&at| at >= from);
                    assert_eq!(survey.next_mark(from), next, "{from} in {bytes:?}");
                }
                let low = bytes.iter().copied().min().unwrap_or(u8::MAX);
                let high = bytes.iter().copied().max().unwrap_or(0);
                assert_eq!((survey.low, survey.high), (low, high), "{bytes:?}");
            }
        }
    }

    #[test]
    fn the_vector_survey_is_the_plain_one() {
        for length in 0..300 {
            for seed in 0..20u32 {
                let bytes: Vec<u8> = (0..length)
                    .map(|lane| {
                        let value = (lane as u32 ^ seed).wrapping_mul(2_654_435_761) >> 13;
                        match value % 9 {
                            0 => b'"',
                            1 => b'\\',
                            _ => (value >> 4) as u8,
                        }
                    })
                    .collect();
                let (mut vector, mut plain) = (Vec::new(), Vec::new());
                let vector_range = surveyed(&bytes, &mut vector);
                let plain_range = surveyed_plainly(&bytes, &mut plain);
                assert_eq!((vector, vector_range), (plain, plain_range), "{bytes:?}");
            }
        }
    }
}
