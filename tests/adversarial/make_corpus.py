"""The adversarial corpus: hostile JSON texts, each with the outcome both backends must give.

Deterministic. ``python tests/adversarial/make_corpus.py`` rewrites the small cases in
``tests/adversarial/corpus/`` and their expectations in ``expected.json`` (committed, so each file
can be fed to other tools as it is); ``tests/test_adversarial.py`` checks they are up to date. The
large cases (50 MB, a million elements, 100 000 levels) are written at test time by
``write_large_cases`` and never committed.

An expectation is either ``{"canonical": text}`` (parsed; the canonical bytes as UTF-8 text) or the
error: ``{"code", "pointer", "line", "column"}`` (line and column are null for value defects).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
EXPECTED = HERE / "expected.json"


class Case(NamedTuple):
    name: str
    data: bytes
    expected: dict[str, Any]


def error(code: str, pointer: str = "", line: int | None = None, column: int | None = None):
    return {"code": code, "pointer": pointer, "line": line, "column": column}


def canonical(text: str) -> dict[str, Any]:
    return {"canonical": text}


SYNTAX = "PF001"
NOT_UTF8 = "PF003"


def small_cases() -> list[Case]:
    cases = [
        # Encodings
        Case("invalid-utf8-in-string", b'{"a":"\xff"}', error(NOT_UTF8, "", 1, 7)),
        Case("invalid-utf8-in-key", b'{"\xc3\x28":1}', error(NOT_UTF8, "", 1, 3)),
        Case("invalid-utf8-split-at-end", '["caf\u00e9'.encode()[:-1], error(NOT_UTF8, "", 1, 6)),
        Case("invalid-utf8-overlong-slash", b'["\xc0\xaf"]', error(NOT_UTF8, "", 1, 3)),
        Case("invalid-utf8-encoded-surrogate", b'["\xed\xa0\x80"]', error(NOT_UTF8, "", 1, 3)),
        Case("invalid-utf8-on-line-3", b'[\n1,\n"\xe2\x82"]', error(NOT_UTF8, "", 3, 2)),
        Case("utf8-bom", b'\xef\xbb\xbf{"a":1}', error(SYNTAX, "", 1, 1)),
        Case("utf16-with-bom", '{"a":1}'.encode("utf-16"), error(NOT_UTF8, "", 1, 1)),
        # Without a BOM, UTF-16 is valid UTF-8 full of NUL bytes: not JSON.
        Case("utf16-be-without-bom", '{"a":1}'.encode("utf-16-be"), error(SYNTAX, "", 1, 1)),
        Case("nul-in-string", b'["a\x00b"]', error(SYNTAX, "", 1, 4)),
        Case("nul-between-tokens", b"[1,\x002]", error(SYNTAX, "", 1, 4)),
        Case("nul-after-document", b"{}\x00", error(SYNTAX, "", 1, 3)),
        # Line endings: only LF ends a line in reported positions; CR is whitespace (a column).
        Case("crlf-document", b'{\r\n"a":\r\n1\r\n}\r\n', canonical('{"a":1}')),
        Case("crlf-error-position", b"[\r\n1,\r\nx]", error(SYNTAX, "", 3, 1)),
        Case("lone-cr-document", b'{"a":\r1\r}', canonical('{"a":1}')),
        Case("lone-cr-error-position", b"[1,\r\rx]", error(SYNTAX, "", 1, 6)),
        Case("lone-cr-in-string", b'["a\rb"]', error(SYNTAX, "", 1, 4)),
        # Empty documents
        Case("empty", b"", error(SYNTAX, "", 1, 1)),
        Case("only-whitespace", b" \t \r ", error(SYNTAX, "", 1, 6)),
        Case("only-blank-lines", b"\n\n\n", error(SYNTAX, "", 4, 1)),
        # Duplicate keys, at any depth, and the digest ambiguity (see test_adversarial.py)
        Case("duplicate-key-top", b'{"a":1,"a":1}', error("PF002", "/a")),
        Case(
            "duplicate-key-deep",
            b'[{"x":{"y":[0,{"k":1,"k":2}]}}]',
            error("PF002", "/0/x/y/1/k"),
        ),
        Case("duplicate-key-escaped-name", b'{"a/b~":{},"a/b~":{}}', error("PF002", "/a~1b~0")),
        Case(
            "duplicate-key-spelled-differently",
            b'{"\\u00e9":1,"\xc3\xa9":2}',
            error("PF002", "/\u00e9"),
        ),
        Case("digest-ambiguity", b'{"amount":1,"amount":1000000}', error("PF002", "/amount")),
        # Lone surrogates
        Case("lone-high-surrogate", b'["\\ud800"]', error("PF004", "/0")),
        Case("lone-low-surrogate-key", b'{"k\\udc00":1}', error("PF004", "/k\ufffd")),
        Case("high-surrogate-then-letter", b'{"s":"\\ud83d\\u0041"}', error("PF004", "/s")),
        Case("surrogate-pair", b'["\\ud83d\\ude00"]', canonical('["\U0001f600"]')),
        # Numbers
        Case("integer-2^53", b"[9007199254740992]", error("PF005", "/0")),
        Case("integer-2^53-1", b"[9007199254740991]", canonical("[9007199254740991]")),
        Case(
            "integer-2^64-1-parses-but-is-not-canonical",
            b'{"n":18446744073709551615}',
            error("PF005", "/n"),
        ),
        Case("integer-2^64", b'{"n":18446744073709551616}', error("PF005", "/n")),
        Case("integer-below-minus-2^63", b"[-9223372036854775809]", error("PF005", "/0")),
        Case("minus-zero", b"[-0]", canonical("[0]")),
        Case("minus-zero-float", b"[-0.0, -0e5]", canonical("[0,0]")),
        Case("float-overflow", b"[1e400]", error("PF006", "/0")),
        Case("negative-float-overflow", b'{"x":[-1e400]}', error("PF006", "/x/0")),
        Case("float-underflow", b"[1e-400]", canonical("[0]")),
        Case("nan-literal", b"[NaN]", error("PF006", "/0")),
        Case("infinity-literal", b'{"a":Infinity}', error("PF006", "/a")),
        Case("minus-infinity-literal", b"[0,-Infinity]", error("PF006", "/1")),
        Case(
            "integral-float-1e21",
            b"[1e21, 1e20, 1E+2]",
            canonical("[1e+21,100000000000000000000,100]"),
        ),
        Case("integer-4301-digits", b"[" + b"7" * 4301 + b"]", error("PF005", "/0")),
        # Nesting: the limit is 512 (docs/limits.md)
        Case("depth-512", b"[" * 512 + b"]" * 512, canonical("[" * 512 + "]" * 512)),
        Case("depth-513", b"[" * 513 + b"]" * 513, error("PF008", "", 1, 513)),
        Case("depth-513-objects", b'{"a":' * 513 + b"1" + b"}" * 513, error("PF008", "", 1, 2561)),
        Case("syntax-error-before-depth", b"[x" + b"[" * 600, error(SYNTAX, "", 1, 2)),
    ]
    return cases


class LargeCase(NamedTuple):
    name: str
    path: Path
    expected: dict[str, Any]


FIFTY_MB = 50 * 1024 * 1024


def write_large_cases(folder: Path) -> list[LargeCase]:
    """Writes the large cases into ``folder``; each is made in well under a second."""
    cases = []

    def add(name: str, data: bytes, expected: dict[str, Any]) -> None:
        path = folder / f"{name}.json"
        path.write_bytes(data)
        cases.append(LargeCase(name, path, expected))

    deep = 100_000
    add("depth-100000-arrays", b"[" * deep + b"]" * deep, error("PF008", "", 1, 513))
    add(
        "depth-100000-objects",
        b'{"a":' * deep + b"null" + b"}" * deep,
        error("PF008", "", 1, 5 * 512 + 1),
    )
    add("depth-100000-unclosed", b"[" * deep, error("PF008", "", 1, 513))
    million = b"[" + b"0," * 999_999 + b"0]"
    add("array-1m-elements", million, canonical("[" + "0," * 999_999 + "0]"))
    long_string = "x" * (FIFTY_MB - 16)
    add(
        "single-line-50mb",
        json.dumps({"s": long_string}).encode(),
        canonical(json.dumps({"s": long_string}, separators=(",", ":"))),
    )
    add(
        "single-line-50mb-error-at-end",
        b'{"s":"' + b"x" * (FIFTY_MB - 16) + b'"',
        error(SYNTAX, "", 1, FIFTY_MB - 16 + 8),
    )
    add("negative-integer-100k-digits", b"[-" + b"9" * 100_000 + b"]", error("PF005", "/0"))
    add("float-100k-digit-mantissa", b"[" + b"1" * 100_000 + b".5]", error("PF006", "/0"))
    add(
        "float-100k-digit-fraction",
        b"[0." + b"3" * 100_000 + b"]",
        canonical("[0.3333333333333333]"),
    )
    add("float-100k-digit-exponent", b"[1e" + b"9" * 100_000 + b"]", error("PF006", "/0"))
    add("float-100k-digit-negative-exponent", b"[1e-" + b"9" * 100_000 + b"]", canonical("[0]"))
    # Rust's own float parser misreads an exponent ≥ 2^16 offset by a mantissa this long.
    add(
        "float-1m-digit-mantissa-large-exponent",
        b"[" + b"1" * 1_000_000 + b"e-999990]",
        canonical("[1111111111.1111112]"),
    )
    return cases


def write_small_cases() -> None:
    CORPUS.mkdir(exist_ok=True)
    for stale in CORPUS.iterdir():
        stale.unlink()
    expected = {}
    for case in small_cases():
        (CORPUS / f"{case.name}.json").write_bytes(case.data)
        expected[case.name] = case.expected
    EXPECTED.write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    write_small_cases()
    sys.exit(0)
