"""ECMA-262 regular expressions for the pure-Python backend; mirrors the ``jsonschema-regex`` crate.

JSON Schema patterns are ECMA-262 regular expressions. jsonschema-rs checks the ``regex`` format
with an ECMA-262 parser (``is_valid_ecma_regex``) and runs ``pattern``/``patternProperties`` in the
Rust ``regex`` crate after translating the ECMA meanings it differs on (``to_rust_regex``). Python's
regular expressions differ from both, so patterns are parsed here and rewritten for the ``regex``
module with the same meanings (docs/formats.md, "Patterns"):

- ``\\d`` is ``[0-9]``, ``\\w`` is ``[A-Za-z0-9_]``, ``\\s`` is ECMA-262 white space and line
  terminators (and ``\\D``, ``\\W``, ``\\S`` their complements), not Python's Unicode classes;
- ``.`` matches anything but a line terminator (``\\n``, ``\\r``, U+2028, U+2029);
- ``$`` is the end of the input only, never before a trailing newline;
- ``\\cX`` is a control character; ``\\uXXXX`` (a surrogate pair joined), ``\\u{X…}``, ``\\xXX``;
- ``(?<name>…)`` and ``\\k<name>`` are named groups; look-behind may have any length;
- ``[]`` matches nothing, ``[^]`` any character (in the ``regex`` format; in ``pattern``, as in
  the Rust core, a ``]`` first in a class is a literal, so ``[]a]`` is a class of two).

``translate(pattern, strict=True)`` accepts exactly the grammar ``is_valid_ecma_regex`` accepts
(the ``regex`` format). ``strict=False`` is for ``pattern`` keywords, which jsonschema-rs compiles
with a laxer engine (fancy-regex, for what it cannot translate): a count after a quantifier is
plain text (``a{2}{3}`` matches ``"aa{3}"``), Rust's inline flag groups (``(?i)``) and ``\\A``,
``\\z`` are accepted, and ``\\k<name>`` is not.
"""

from __future__ import annotations

from functools import lru_cache

import regex

__all__ = ["EcmaSyntaxError", "compile_pattern", "is_valid_ecma_regex", "translate"]


class EcmaSyntaxError(ValueError):
    """Not an ECMA-262 regular expression (or one the Rust core refuses too)."""


# ECMA-262 `\s`: WhiteSpace (TAB, VT, FF, SP, every Zs, BOM) and LineTerminator.
_WHITESPACE = "\\t-\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_WHITESPACE_COMPLEMENT = (
    "\\x00-\\x08\\x0e-\\x1f!-\\x9f\\xa1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e"
    "\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\U0010ffff"
)
# Class contents of `\d \D \w \W \s \S`, for use inside `[...]`.
_CLASS_ESCAPES = {
    "d": "0-9",
    "D": "\\x00-/:-\\U0010ffff",
    "w": "0-9A-Za-z_",
    "W": "\\x00-/:-@\\[-\\^`{-\\U0010ffff",
    "s": _WHITESPACE,
    "S": _WHITESPACE_COMPLEMENT,
}
_DOT = "[^\\n\\r\\u2028\\u2029]"
_SIMPLE_ESCAPES = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}


def _literal(code_point: int) -> str:
    """One code point, escaped for the ``regex`` module (in or out of a class)."""
    if code_point < 0x10000:
        return f"\\u{code_point:04x}"
    return f"\\U{code_point:08x}"


def _is_identifier_start(char: str) -> bool:
    return char.isalpha() or char in "$_"


def _is_identifier_part(char: str) -> bool:
    return char.isalnum() or char in "$_\u200c\u200d"


class _Parser:
    """``is_valid_ecma_regex``'s recursive-descent grammar, writing the translation as it goes."""

    def __init__(self, pattern: str, strict: bool) -> None:
        self.pattern = pattern
        self.strict = strict
        self.position = 0
        self.out: list[str] = []
        # Per open group: its kind, its start in `out`, and the group names of its alternatives.
        self.frames: list[tuple[str, int, list[str], list[str]]] = [("root", 0, [], [])]
        # Where the last atom (or group) begins in `out`, for a quantifier to apply to.
        self.atom_start = 0
        self.previous = "nothing"  # nothing | atom | assertion | lookaround | quantifier
        self.capturing_groups = 0
        self.largest_backreference = 0
        # Lookaround or a backreference: what only a backtracking engine matches.
        self.backtracks = False
        self.declared: list[str] = []
        self.referenced: list[str] = []

    def fail(self) -> EcmaSyntaxError:
        return EcmaSyntaxError(f"invalid ECMA-262 regular expression: {self.pattern!r}")

    def peek(self, ahead: int = 0) -> str | None:
        index = self.position + ahead
        return self.pattern[index] if index < len(self.pattern) else None

    def bump(self) -> str:
        char = self.peek()
        if char is None:
            raise self.fail()
        self.position += 1
        return char

    def eat(self, expected: str) -> bool:
        if self.peek() == expected:
            self.position += 1
            return True
        return False

    def expect(self, expected: str) -> None:
        if not self.eat(expected):
            raise self.fail()

    def assertion(self, text: str) -> None:
        self.atom_start = len(self.out)
        self.out.append(text)
        self.previous = "assertion"

    def atom(self, text: str) -> None:
        self.atom_start = len(self.out)
        self.out.append(text)
        self.previous = "atom"

    def parse(self) -> str:
        while (char := self.peek()) is not None:
            self.position += 1
            if char == "|":
                _kind, _start, current, finished = self.frames[-1]
                finished.extend(current)
                current.clear()
                self.out.append("|")
                self.previous = "nothing"
            elif char == "(":
                self.open_group()
            elif char == ")":
                self.close_group()
            elif char in "*+?":
                self.quantified(char)
            elif char == "{":
                start = self.position - 1
                self.braced_quantifier()
                text = self.pattern[start : self.position]
                if self.previous == "quantifier" and not self.strict:
                    # The Rust core's engine reads a count after a quantifier as plain text.
                    self.atom("".join(_literal(ord(each)) for each in text))
                else:
                    self.quantified(text)
            elif char in "}]":
                if self.strict:
                    raise self.fail()
                self.atom(_literal(ord(char)))  # a literal to the Rust core's engine
            elif char in "^$":
                self.assertion("^" if char == "^" else "\\Z")
            elif char == "\\":
                self.atom_escape()
            elif char == "[":
                start = len(self.out)
                self.out.append(self.char_class())
                self.atom_start = start
                self.previous = "atom"
            elif char == ".":
                self.atom(_DOT)
            else:
                self.atom(_literal(ord(char)))
        if len(self.frames) != 1 or self.largest_backreference > self.capturing_groups:
            raise self.fail()
        if any(name not in self.declared for name in self.referenced):
            raise self.fail()
        return "".join(self.out)

    def quantified(self, quantifier: str) -> None:
        if self.previous == "assertion" and not self.strict:
            # The Rust core's engine repeats an assertion (`^+`); the `regex` module wants a group.
            self.out.insert(self.atom_start, "(?:")
            self.out.append(")")
        elif self.previous != "atom":
            raise self.fail()
        lazy = "?" if self.eat("?") else ""
        self.out.append(quantifier + lazy)
        self.previous = "quantifier"

    def braced_quantifier(self) -> None:
        lower = self.decimal_digits()
        if self.eat(",") and self.peek() != "}":
            upper = self.decimal_digits()
            if int(lower) > int(upper):
                raise self.fail()
        self.expect("}")

    def decimal_digits(self) -> str:
        start = self.position
        while (char := self.peek()) is not None and char in "0123456789":
            self.position += 1
        if self.position == start:
            raise self.fail()
        return self.pattern[start : self.position]

    def open_group(self) -> None:
        start = len(self.out)
        if self.eat("?"):
            first = self.bump()
            if first == ":":
                kind, text = "group", "(?:"
            elif first in "=!":
                kind, text = "lookaround", f"(?{first}"
                self.backtracks = True
            elif first == "<" and self.peek() in ("=", "!"):
                kind, text = "lookaround", f"(?<{self.bump()}"
                self.backtracks = True
            elif first == "<":
                name = self.group_name()
                self.declare(name)
                self.capturing_groups += 1
                kind, text = "group", f"(?P<{name}>"
            else:
                kind, text = self.modifiers(first)
        else:
            self.capturing_groups += 1
            kind, text = "group", "("
        self.out.append(text)
        if kind == "flags":  # `(?i)`: no group to close, applies to the rest
            self.previous = "nothing"
            return
        self.frames.append((kind, start, [], []))
        self.previous = "nothing"

    def modifiers(self, first: str) -> tuple[str, str]:
        """``(?ims-ims:``; also Rust's ``(?flags)`` when not strict."""
        seen: set[str] = set()
        dashes = 0
        char = first
        flags = ""
        while char not in ":)":
            if char in "ims" and char not in seen:
                seen.add(char)
            elif char == "-" and dashes == 0:
                dashes = 1
            else:
                raise self.fail()
            flags += char
            char = self.bump()
        if not seen or (char == ")" and self.strict):
            raise self.fail()
        if char == ")":
            return "flags", f"(?{flags})"
        return "group", f"(?{flags}:"

    def close_group(self) -> None:
        if len(self.frames) == 1:
            raise self.fail()
        kind, start, current, finished = self.frames.pop()
        self.frames[-1][2].extend(current + finished)
        self.out.append(")")
        self.atom_start = start
        self.previous = "lookaround" if kind == "lookaround" else "atom"

    def declare(self, name: str) -> None:
        if any(name in frame[2] for frame in self.frames):
            raise self.fail()
        self.declared.append(name)
        self.frames[-1][2].append(name)

    def group_name(self) -> str:
        name = ""
        while (char := self.bump()) != ">":
            if char == "\\":
                self.expect("u")
                char = chr(self.unicode_escape())
            allowed = _is_identifier_part(char) if name else _is_identifier_start(char)
            if not allowed:
                raise self.fail()
            name += char
        if not name:
            raise self.fail()
        if not name.isidentifier():
            # The `regex` module takes Python identifiers only; `$` is legal in ECMA-262 names.
            name = "".join(c if (c.isalnum() or c == "_") else f"_{ord(c):x}_" for c in name)
            name = f"_{name}"
        return name

    def atom_escape(self) -> None:
        char = self.bump()
        if char in "bB" or (char in "Az" and not self.strict):
            # `\A` and `\z` are the Rust engine's assertions for the start and end of the text.
            self.assertion("\\Z" if char == "z" else f"\\{char}")
        elif char in _CLASS_ESCAPES:
            self.atom(f"[{_CLASS_ESCAPES[char]}]")
        elif char in "pP":
            self.atom(f"\\{char}{self.unicode_property()}")
        elif char == "k":
            if not self.strict:  # the Rust core's engines have no `\k<name>`
                raise self.fail()
            self.expect("<")
            name = self.group_name()
            self.referenced.append(name)
            self.backtracks = True
            self.atom(f"(?P={name})")
        elif char in "123456789":
            self.position -= 1
            number = int(self.decimal_digits())
            self.largest_backreference = max(self.largest_backreference, number)
            self.backtracks = True
            self.atom(f"(?:\\g<{number}>)")
        else:
            self.atom(_literal(self.character_escape(char)))

    def character_escape(self, char: str) -> int:
        if char in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[char]
        if char == "c":
            letter = self.bump()
            if not ("a" <= letter <= "z" or "A" <= letter <= "Z"):
                raise self.fail()
            return ord(letter) % 32
        if char == "0":
            following = self.peek()
            if not self.strict or (following is not None and following in "0123456789"):
                raise self.fail()  # the Rust core's engines refuse `\0` (an octal escape)
            return 0
        if char == "x":
            return self.hex_digit() * 16 + self.hex_digit()
        if char == "u":
            return self.unicode_escape()
        if not char.isalnum():
            return ord(char)
        raise self.fail()

    def hex_digit(self) -> int:
        char = self.bump()
        if char not in "0123456789abcdefABCDEF":
            raise self.fail()
        return int(char, 16)

    def unicode_escape(self) -> int:
        if self.eat("{"):
            value, count = 0, 0
            while not self.eat("}"):
                value = min(value * 16 + self.hex_digit(), 0x110000)
                count += 1
            if count == 0 or value > 0x10FFFF:
                raise self.fail()
            return value
        lead = self.hex4()
        if 0xD800 <= lead <= 0xDBFF and self.pattern.startswith("\\u", self.position):
            position = self.position
            self.position += 2
            try:
                trail = self.hex4()
            except EcmaSyntaxError:
                trail = -1
            if 0xDC00 <= trail <= 0xDFFF:
                return 0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00)
            self.position = position
        return lead

    def hex4(self) -> int:
        value = 0
        for _ in range(4):
            value = value * 16 + self.hex_digit()
        return value

    def unicode_property(self) -> str:
        self.expect("{")
        text = self.property_word()
        if self.eat("="):
            text += "=" + self.property_word()
        self.expect("}")
        return "{" + text + "}"

    def property_word(self) -> str:
        start = self.position
        while (char := self.peek()) is not None and (
            char.isascii() and (char.isalnum() or char == "_")
        ):
            self.position += 1
        if self.position == start:
            raise self.fail()
        return self.pattern[start : self.position]

    def char_class(self) -> str:
        """A class, the ``[`` consumed; returns its translation."""
        negated = self.eat("^")
        items: list[str] = []
        if not self.strict and self.eat("]"):
            # The Rust core's engine reads a `]` first in a class as itself: `[]a]`, and no `[]`.
            items.append(_literal(ord("]")))
        while not self.eat("]"):
            start, start_text = self.class_atom()
            if self.peek() == "-" and self.peek(1) != "]":
                self.position += 1
                end, end_text = self.class_atom()
                if start is None or end is None or start > end:
                    raise self.fail()
                items.append(f"{start_text}-{end_text}")
            else:
                items.append(start_text)
        if not items:
            return "(?s:.)" if negated else "(?!)"
        return f"[{'^' if negated else ''}{''.join(items)}]"

    def class_atom(self) -> tuple[int | None, str]:
        """One class atom: its code point (``None`` for ``\\d`` and the like) and translation."""
        char = self.bump()
        if char != "\\":
            return ord(char), _literal(ord(char))
        char = self.bump()
        if char == "b":
            if not self.strict:
                raise self.fail()  # the Rust core's engines refuse `[\b]`
            return 0x08, _literal(0x08)
        if char == "-":
            return ord("-"), _literal(ord("-"))
        if char in _CLASS_ESCAPES:
            return None, _CLASS_ESCAPES[char]
        if char in "pP":
            return None, f"\\{char}{self.unicode_property()}"
        code_point = self.character_escape(char)
        return code_point, _literal(code_point)


def translate(pattern: str, *, strict: bool) -> str:
    """The ``regex``-module pattern with ``pattern``'s ECMA-262 meaning; raises
    ``EcmaSyntaxError`` for an invalid one (``strict``: the ``regex`` format's grammar)."""
    return _Parser(pattern, strict).parse()


def needs_backtracking(pattern: str) -> bool:
    """Whether ``pattern`` (valid) has lookaround or a backreference: what the linear-time
    engine (jsonschema-rs's ``RegexOptions``) cannot compile."""
    parser = _Parser(pattern, strict=False)
    parser.parse()
    return parser.backtracks


def is_valid_ecma_regex(pattern: str) -> bool:
    """jsonschema-rs's ``regex`` format: ECMA-262 syntax with the ``u`` flag's strictness, plus
    identity escapes of non-alphanumeric characters."""
    try:
        translate(pattern, strict=True)
    except EcmaSyntaxError:
        return False
    return True


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """A ``pattern`` keyword's value compiled with its ECMA-262 meaning; raises
    ``EcmaSyntaxError`` where the Rust core refuses the pattern too."""
    try:
        return regex.compile(translate(pattern, strict=False))
    except regex.error as error:
        raise EcmaSyntaxError(f"invalid regular expression {pattern!r}: {error}") from None
