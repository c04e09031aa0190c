//! Ids, kinds and hashes of an event held inline when short (`Text`).

/// A string of an event's facts, held inline when it has at most `N` bytes (kinds and ids are
/// short, CAR's hashes 64 hex digits) and boxed otherwise: the common line's facts cost no
/// allocation (an allocation per string was the largest share of the per-line stage's time).
#[derive(Clone)]
pub(in crate::journal) struct Text<const N: usize>(Repr<N>);

// Private to this module, so `Text::new` is its only constructor.
#[derive(Clone)]
enum Repr<const N: usize> {
    Inline { length: u8, bytes: [u8; N] },
    Boxed(Box<str>),
}

impl<const N: usize> Text<N> {
    pub(in crate::journal) fn new(text: &str) -> Self {
        const { assert!(N <= u8::MAX as usize) };
        Text(if text.len() <= N {
            let mut bytes = [0; N];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Repr::Inline {
                length: text.len() as u8,
                bytes,
            }
        } else {
            Repr::Boxed(text.into())
        })
    }
}

impl<const N: usize> Text<N> {
    /// Sets `slot` to `text`, in place when both are inline: the bytes are copied straight into
    /// the slot (built on the stack and moved, an inline text was reloaded in pieces its copy had
    /// just stored, a stall on each: 2.5 % of a check's CPU, perf, issue #47). Bytes past the
    /// length are never read.
    pub(in crate::journal) fn assign(slot: &mut Option<Self>, text: Option<&str>) {
        match (slot.as_mut(), text) {
            (Some(Text(Repr::Inline { length, bytes })), Some(text)) if text.len() <= N => {
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                *length = text.len() as u8;
            }
            (_, text) => *slot = text.map(Text::new),
        }
    }
}

impl<const N: usize> std::ops::Deref for Text<N> {
    type Target = str;

    fn deref(&self) -> &str {
        match &self.0 {
            Repr::Inline { length, bytes } => {
                let bytes = &bytes[..usize::from(*length)];
                // SAFETY: `Text::new`, the only constructor, copied these bytes, whole, from
                // a `&str`, so they are UTF-8.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Boxed(text) => text,
        }
    }
}

impl<const N: usize> std::fmt::Debug for Text<N> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, formatter)
    }
}

impl<const N: usize> PartialEq for Text<N> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}
