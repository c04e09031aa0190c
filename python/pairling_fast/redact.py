"""Reports safe to publish: every instance value quoted in a finding's message replaced by a mask.

A finding keeps its code, severity, path, line, column, pointer and schema location; only the
message changes. Both backends word every message alike, so this one function serves both.

Schema findings (those with a ``schema_pointer``) are worded as jsonschema-rs words them, with
the instance first (``"sk-live" is not of type "integer"``) or at a known place (``not``,
``contains``, a ``false`` schema, the items of ``additionalItems``): the instance is replaced the
way jsonschema-rs's ``mask`` does (``*** is not of type "integer"``), and what comes from the
schema (types, limits, patterns, ``const`` and ``enum`` values, required names) stays. Every other
message, and a schema message in other words, has each quoted literal (``"…"``, ``'…'``,
```…```) and each value it shows unquoted (docs/reports.md lists them) replaced. Object keys are
not masked: they are in the finding's pointer too.
"""

from __future__ import annotations

import json
import re

__all__ = ["DEFAULT_MASK", "FALSE_SCHEMA", "redact_message"]

DEFAULT_MASK = "***"

_DECODER = json.JSONDecoder()
# How a message cut to its bounded length ends (rust/validate/mod.rs bounded_message).
_TRUNCATED = re.compile(r" … \[message truncated: \d+ bytes\]$")
# A quoted literal: a JSON string (cut or whole), a Python repr (not an apostrophe inside a
# word), a `name`.
# One character is kept (a parser's "Expecting ',' delimiter"): no secret is that short.
_QUOTED = re.compile(
    r'"(?:[^"\\]|\\.){2,}"?'
    r"|(?<![A-Za-z0-9])'(?:[^'\\]|\\.){2,}'(?![A-Za-z0-9])"
    r"|`[^`]{2,}`"
)
# The messages that show a value unquoted, the value as group ``v`` (docs/reports.md).
_UNQUOTED = tuple(
    re.compile(pattern)
    for pattern in (
        r"^expected value \((?P<v>.*) is not JSON\)$",
        r"^status is (?P<v>\S+) but the last chunk is ",
        r"the last chunk is (?P<v>\S+), not ",
        r"is a terminal (?P<v>\S+) chunk but more chunks follow",
        r"but the last chunk is the terminal (?P<v>\S+) chunk$",
        r"^request .* \((?P<v>.*)\) was never answered$",
        r"^unchecked: no schema in .* for (?P<v>.*) results$",
        r"^unchecked: .* lists the params of (?P<v>.*) as ",
        r"^unchecked: notification (?P<v>.*) has no schema in ",
        r"^semantic_digest mismatch: expected .*, found (?P<v>.*)$",
    )
)

# Keywords whose message quotes only the schema (its value, a required name) or object keys.
_NO_INSTANCE = frozenset(
    {
        "const",
        "required",
        "dependentRequired",
        "dependencies",
        "additionalProperties",
        "unevaluatedProperties",
    }
)
# Keywords whose message starts with the instance, as jsonschema-rs words them.
_LEADING_INSTANCE = frozenset(
    {
        "type",
        "enum",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "anyOf",
        "oneOf",
        "contentEncoding",
        "contentMediaType",
    }
)
# How jsonschema-rs words a `false` subschema's failure, whatever keyword holds it.
FALSE_SCHEMA = "False schema does not allow "
_WRAPPED = {
    "contains": ("None of ", " are valid under the given schema"),
    "minContains": ("None of ", " are valid under the given schema"),
    "maxContains": ("None of ", " are valid under the given schema"),
}
_ITEMS = {
    "additionalItems": "Additional items are not allowed (",
    "items": "Additional items are not allowed (",
    "unevaluatedItems": "Unevaluated items are not allowed (",
}
_UNEXPECTED = re.compile(r" (?:was|were) unexpected\)$")


def redact_message(message: str, schema_pointer: str | None, mask: str = DEFAULT_MASK) -> str:
    """``message`` with its instance values replaced by ``mask``; a schema finding's
    (``schema_pointer`` set) as jsonschema-rs masks it, where it is in jsonschema-rs's words."""
    cut = _TRUNCATED.search(message)
    if cut is not None:
        # The value was cut mid-way: nothing before the cut is kept.
        return mask + cut.group(0)
    if schema_pointer is not None:
        masked = _schema_message(schema_pointer.rsplit("/", 1)[-1], message, mask)
        if masked is not None:
            return masked
    return _lexical(message, mask)


def _lexical(message: str, mask: str) -> str:
    for unquoted in _UNQUOTED:
        found = unquoted.search(message)
        if found is not None:
            message = message[: found.start("v")] + mask + message[found.end("v") :]
    return _QUOTED.sub(mask, message)


def _json_end(text: str, start: int) -> int | None:
    """Where the JSON value starting at ``start`` ends, or ``None`` if none starts there."""
    try:
        return _DECODER.raw_decode(text, start)[1]
    except ValueError:
        return None


def _schema_message(keyword: str, message: str, mask: str) -> str | None:
    """The message with its instance masked, or ``None`` where it is not worded as expected."""
    if message.startswith(FALSE_SCHEMA):
        # A `false` subschema, under whichever keyword (`items`, `properties/x`, …).
        return FALSE_SCHEMA + mask
    if keyword in _NO_INSTANCE:
        return message
    if keyword in _LEADING_INSTANCE:
        end = _json_end(message, 0)
        if end is None or not message.startswith(" ", end):
            return None
        return mask + message[end:]
    if keyword == "not":
        end = _json_end(message, 0)
        lead = " is not allowed for "
        if end is None or not message.startswith(lead, end):
            return None
        return message[: end + len(lead)] + mask
    if keyword in _WRAPPED:
        lead, tail = _WRAPPED[keyword]
        if not (message.startswith(lead) and message.endswith(tail)):
            return None
        return lead + mask + tail
    if keyword in _ITEMS:
        lead = _ITEMS[keyword]
        unexpected = _UNEXPECTED.search(message)
        if not message.startswith(lead) or unexpected is None:
            return None
        count = _count_items(message[len(lead) : unexpected.start()])
        if count is None:
            return None
        return f"{lead}{count} item{'' if count == 1 else 's'})"
    return None


def _count_items(listed: str) -> int | None:
    """How many values a ``a, b`` or ``'a', 'b'`` list holds (jsonschema-rs's two ways)."""
    count, at = 0, 0
    while True:
        quoted = listed.startswith("'", at)
        end = _json_end(listed, at + quoted)
        if end is None or (quoted and not listed.startswith("'", end)):
            return None
        at, count = end + quoted, count + 1
        if at == len(listed):
            return count
        if not listed.startswith(", ", at):
            return None
        at += 2
