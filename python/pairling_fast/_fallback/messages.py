"""Schema-violation messages in jsonschema-rs's words, so a PF101 reads the same on both backends.

python-jsonschema words its errors its own way (``'x' is not of type 'integer'``, values as Python
reprs); the Rust core reports jsonschema-rs's (``"x" is not of type "integer"``, values as compact
JSON). ``message`` rebuilds jsonschema-rs's text (``ValidationError``'s ``Display`` in
jsonschema 0.61.2's ``src/error.rs``) from what python-jsonschema knows about the error: the
keyword, its value in the schema, the instance and, for the names it lists, its own message. A
keyword not listed keeps python-jsonschema's message; tests/test_schema_suite.py compares the two
backends' messages over the JSON-Schema-Test-Suite and lists the cases that still differ.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["TYPE_ORDER", "message", "render"]

# A string (kept as it is) or a float's exponent, which Python writes "e+20" / "e-07".
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|e[+-]\d+')
# The names python-jsonschema lists: "('a', 'b' were unexpected)", "'a', 'b' do not match any ...",
# "'a' is a dependency of 'b'".
_LISTED = re.compile(r"\((.*) (?:was|were) (?:unexpected|unevaluated and invalid)\)$")
_LEADING = re.compile(r"^(.*?) (?:does|do) not match any of the regexes")
# jsonschema-rs lists several types in the order of its type bit set, not the schema's.
TYPE_ORDER = ("null", "boolean", "integer", "number", "string", "array", "object")


# Messages longer than this keep python-jsonschema's words (docs/limits.md): a wording that only
# differs past the first KiB the report shows is not worth the memory of rebuilding it.
REWORD_LIMIT = 1 << 16


def render(value: Any) -> str:
    """``value`` as serde_json's compact ``Display``: JSON without spaces, members in their order,
    floats as ryu prints them (``1e20``, ``1.5e-7``, ``1.0``). Written by the C encoder, which
    takes the nesting the value model allows, then the exponents outside strings are mended."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _TOKEN.sub(_mended, text)


def _mended(match: re.Match[str]) -> str:
    token = match.group(0)
    if token.startswith('"'):
        return token
    return "e" + ("-" if token[1] == "-" else "") + token[2:].lstrip("0")


def _names(listed: str) -> list[Any]:
    """The Python literals of a comma-separated list in one of python-jsonschema's messages."""
    return list(ast.literal_eval(f"[{listed}]"))


def _rendered(values: list[Any]) -> list[str]:
    return [render(value) for value in values]


def _unexpected(items: list[str], quote: str = "'") -> str:
    listed = ", ".join(f"{quote}{item}{quote}" for item in items)
    return f"{listed} {'was' if len(items) == 1 else 'were'} unexpected)"


def _enum(instance: Any, options: list[Any]) -> str:
    shown = [render(option) for option in options]
    if len(shown) <= 3:
        listed = (
            " or ".join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else "".join(shown)
        )
    else:
        listed = ", ".join(shown[:2]) + f" or {len(shown) - 2} other candidates"
    return f"{render(instance)} is not one of {listed}"


def _types(instance: Any, types: Any) -> str:
    names = [types] if isinstance(types, str) else sorted(set(types), key=TYPE_ORDER.index)
    if len(names) == 1:
        return f'{render(instance)} is not of type "{names[0]}"'
    return f"{render(instance)} is not of types " + ", ".join(f'"{name}"' for name in names)


def _size(noun: str, one: str, many: str) -> Callable[[Any, Any], str]:
    def worded(instance: Any, limit: Any) -> str:
        count = int(limit)  # a limit of 2.0 is 2: jsonschema-rs reads it as an integer
        return f"{render(instance)} {noun} {count} {one if count == 1 else many}"

    return worded


def _contains(instance: Any, _value: Any) -> str:
    # jsonschema-rs words contains, minContains and maxContains failures alike.
    return f"None of {render(instance)} are valid under the given schema"


_BY_KEYWORD: dict[str, Callable[[Any, Any], str]] = {
    "type": _types,
    "enum": _enum,
    "const": lambda _instance, expected: f"{render(expected)} was expected",
    "not": lambda instance, schema: f"{render(schema)} is not allowed for {render(instance)}",
    "anyOf": lambda instance, _: (
        f"{render(instance)} is not valid under any of the schemas listed in the 'anyOf' keyword"
    ),
    "contains": _contains,
    "minContains": _contains,
    "maxContains": _contains,
    "uniqueItems": lambda instance, _: f"{render(instance)} has non-unique elements",
    "pattern": lambda instance, pattern: f'{render(instance)} does not match "{pattern}"',
    "format": lambda instance, name: f'{render(instance)} is not a "{name}"',
    "minLength": _size("is shorter than", "character", "characters"),
    "maxLength": _size("is longer than", "character", "characters"),
    "minItems": _size("has less than", "item", "items"),
    "maxItems": _size("has more than", "item", "items"),
    "minProperties": _size("has less than", "property", "properties"),
    "maxProperties": _size("has more than", "property", "properties"),
    "contentEncoding": lambda instance, encoding: (
        f'{render(instance)} is not compliant with "{encoding}" content encoding'
    ),
    "contentMediaType": lambda instance, media_type: (
        f'{render(instance)} is not compliant with "{media_type}" media type'
    ),
}


def _listed_names(keyword: str, error: Any) -> str | None:
    """The messages that list names or items, rebuilt from python-jsonschema's list of them."""
    text, instance = str(error.message), error.instance
    if keyword in ("required", "dependencies", "dependentRequired"):
        first = re.match(r"^('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\") is a", text)
        if first is None:
            return None
        return f"{render(ast.literal_eval(first.group(1)))} is a required property"
    listed = _LISTED.search(text) or _LEADING.search(text)
    if listed is None or not isinstance(instance, (dict, list)):
        return None
    names = _names(listed.group(1))
    if keyword == "additionalItems":
        return "Additional items are not allowed (" + _unexpected(_rendered(names), quote="")
    if keyword == "unevaluatedItems":
        return "Unevaluated items are not allowed (" + _unexpected(_rendered(names))
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        # jsonschema-rs lists them in the instance's order; python-jsonschema sometimes sorted.
        ordered = [key for key in instance if key in set(names)]
        noun = "Additional" if keyword == "additionalProperties" else "Unevaluated"
        return f"{noun} properties are not allowed (" + _unexpected(ordered)
    return None


def message(keyword: str, error: Any) -> str:
    """jsonschema-rs's message for python-jsonschema's ``error`` at ``keyword``, or the error's
    own where the words cannot be rebuilt from it."""
    instance, value = error.instance, error.validator_value
    if len(str(error.message)) > REWORD_LIMIT:
        # Re-reading names out of a message this long (ast) and re-rendering its values cost
        # hundreds of MB per MB of value; it is cut to bounded_message's length anyway.
        return str(error.message)
    if keyword == "oneOf":
        many = "is valid under each of" in str(error.message)
        verdict = "is valid under more than one of" if many else "is not valid under any of"
        return f"{render(instance)} {verdict} the schemas listed in the 'oneOf' keyword"
    if keyword == "falseSchema":
        return f"False schema does not allow {render(instance)}"
    try:
        rebuilt = _listed_names(keyword, error)
        if rebuilt is not None:
            return rebuilt
        worded = _BY_KEYWORD.get(keyword)
        if worded is not None:
            return worded(instance, value)
    except (TypeError, ValueError, SyntaxError, IndexError):
        pass
    return str(error.message)
