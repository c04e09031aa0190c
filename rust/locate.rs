//! Lines of JSON Pointers in a JSON text (`python/pairling_fast/locate.py` is the fallback's).
//!
//! Only the containers on the way to a wanted pointer are entered; every other value is skipped
//! by scanning for its end, so locating a few pointers in a large document costs one pass over
//! the bytes before the last of them, not a parse.

use std::collections::HashMap;

use crate::parse::unescape_pointer_token;

#[derive(Default)]
struct Trie {
    here: bool,
    children: HashMap<String, Trie>,
}

impl Trie {
    fn of<'p>(wanted: impl IntoIterator<Item = &'p str>) -> Self {
        let mut root = Trie::default();
        for pointer in wanted {
            if !pointer.is_empty() && !pointer.starts_with('/') {
                continue;
            }
            let mut node = &mut root;
            for token in pointer.split('/').skip(1) {
                node = node
                    .children
                    .entry(unescape_pointer_token(token).into_owned())
                    .or_default();
            }
            node.here = true;
        }
        root
    }
}

struct Scanner<'t> {
    text: &'t [u8],
    found: Vec<(String, usize)>,
}

impl Scanner<'_> {
    fn space(&self, mut at: usize) -> usize {
        while matches!(self.text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            at += 1;
        }
        at
    }

    /// The end of the string whose opening quote is at `at`.
    fn string_end(&self, at: usize) -> Option<usize> {
        let mut at = at + 1;
        loop {
            at += memchr::memchr2(b'"', b'\\', self.text.get(at..)?)?;
            if self.text[at] == b'\\' {
                at += 2;
            } else {
                return Some(at + 1);
            }
        }
    }

    /// The end of the value at `at`.
    fn skip(&self, at: usize) -> Option<usize> {
        match self.text.get(at)? {
            b'"' => self.string_end(at),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut at = at;
                loop {
                    match self.text.get(at)? {
                        b'"' => {
                            at = self.string_end(at)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(at + 1);
                            }
                        }
                        _ => {}
                    }
                    at += 1;
                }
            }
            _ => {
                let rest = &self.text[at..];
                let length = rest
                    .iter()
                    .position(|b| matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(rest.len());
                Some(at + length)
            }
        }
    }

    /// Records the wanted pointers at and below the value at `at` (named `pointer`); its end.
    fn visit(&mut self, at: usize, node: &Trie, pointer: &mut String) -> Option<usize> {
        if node.here {
            self.found.push((pointer.clone(), at));
        }
        let opening = *self.text.get(at)?;
        if node.children.is_empty() || !matches!(opening, b'{' | b'[') {
            return self.skip(at);
        }
        let closing = if opening == b'{' { b'}' } else { b']' };
        let mut at = self.space(at + 1);
        if *self.text.get(at)? == closing {
            return Some(at + 1);
        }
        let mut index = 0usize;
        loop {
            let name = if opening == b'{' {
                let end = self.string_end(at)?;
                let name: String = serde_json::from_slice(&self.text[at..end]).ok()?;
                at = self.space(end);
                if *self.text.get(at)? != b':' {
                    return None;
                }
                at = self.space(at + 1);
                name
            } else {
                index += 1;
                (index - 1).to_string()
            };
            at = match node.children.get(&name) {
                Some(child) => {
                    let length = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&crate::parse::escape_pointer_token(&name));
                    let end = self.visit(at, child, pointer);
                    pointer.truncate(length);
                    end?
                }
                None => self.skip(at)?,
            };
            at = self.space(at);
            match *self.text.get(at)? {
                b',' => at = self.space(at + 1),
                byte if byte == closing => return Some(at + 1),
                _ => return None,
            }
        }
    }
}

/// The 1-based line where the value at each pointer in `wanted` starts; best effort on text
/// that is not JSON (pointers it cannot reach are absent).
pub fn pointer_lines<'p>(
    text: &[u8],
    wanted: impl IntoIterator<Item = &'p str>,
) -> HashMap<String, u64> {
    let trie = Trie::of(wanted);
    let start = if text.starts_with("\u{feff}".as_bytes()) {
        3
    } else {
        0
    };
    let mut scanner = Scanner {
        text,
        found: Vec::new(),
    };
    let at = scanner.space(start);
    let _ = scanner.visit(at, &trie, &mut String::new());
    let mut found = scanner.found;
    found.sort_by_key(|(_, offset)| *offset);
    let (mut line, mut counted_to) = (1u64, 0usize);
    let mut lines = HashMap::with_capacity(found.len());
    for (pointer, offset) in found {
        line += memchr::memchr_iter(b'\n', &text[counted_to..offset]).count() as u64;
        counted_to = offset;
        lines.insert(pointer, line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::pointer_lines;

    #[test]
    fn pointers_are_found_on_their_lines() {
        let text = b"{\n \"a\": [1,\n  {\"b~/\\\"c\": \"x\\\"y\"}],\n \"d\": {\"e\": [true]}\n}";
        let lines = pointer_lines(text, ["", "/a/1/b~0~1\"c", "/d/e/0", "/a/9", "/zz"]);
        assert_eq!(lines.get(""), Some(&1));
        assert_eq!(lines.get("/a/1/b~0~1\"c"), Some(&3));
        assert_eq!(lines.get("/d/e/0"), Some(&4));
        assert_eq!(lines.get("/a/9"), None);
        assert_eq!(lines.get("/zz"), None);
    }

    #[test]
    fn broken_text_gives_what_it_can() {
        let lines = pointer_lines(b"{\"a\": 1,\n \"b\": [", ["/a", "/b/0"]);
        assert_eq!(lines.get("/a"), Some(&1));
        assert_eq!(lines.get("/b/0"), None);
    }
}
