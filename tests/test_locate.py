"""pointer_lines: where a JSON Pointer's value starts, for findings that come without a line."""

from __future__ import annotations

from pairling_fast.locate import pointer_lines

DOCUMENT = b"""{
  "a": [1,
    {"b/c": 2, "d~": {"e": null}}],
  "f": "x\\"y",
  "": {"g": [true, false]}
}"""


def test_lines_of_members_elements_and_escaped_keys() -> None:
    wanted = ["", "/a", "/a/0", "/a/1", "/a/1/b~1c", "/a/1/d~0/e", "/f", "/", "/~1g", "//g/1"]
    assert pointer_lines(DOCUMENT, wanted) == {
        "": 1,
        "/a": 2,
        "/a/0": 2,
        "/a/1": 3,
        "/a/1/b~1c": 3,
        "/a/1/d~0/e": 3,
        "/f": 4,
        "/": 5,
        "//g/1": 5,
    }


def test_pointers_that_are_not_there_are_left_out() -> None:
    assert pointer_lines(DOCUMENT, ["/a/2", "/zz", "/f/0"]) == {}


def test_invalid_text_is_best_effort() -> None:
    assert pointer_lines(b'{\n "a": [1,,\n "b": }', ["/a", "/b"]) == {"/a": 2}
