"""JSON Schema validation for the pure-Python backend; mirrors ``rust/validate.rs``.

python-jsonschema does the validating. This module makes it report what jsonschema-rs reports:
the same draft detection, the same ``format`` checks (``docs/formats.md``), ``$ref``s resolved (and
refused when remote) at compile time, and errors as ``(pointer, schema_pointer, keyword, message)``
where the first three match the Rust backend exactly. The normalizations needed for that are listed
in ``docs/formats.md`` ("Error triples").
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache, lru_cache
from importlib import resources as importlib_resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import jsonschema.validators
import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
from referencing import Registry, Resource

from ..errors import SchemaCompileError
from .parse import check_value, parse_json

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from referencing._core import Resolver

__all__ = [
    "CompiledSchema",
    "bundled_schema",
    "bundled_schema_ids",
    "bundled_validator",
    "compile_schema",
    "format_accepts",
    "wire_bundle",
]

Violation = tuple[str, str, str, str]

# The meta-schemas python-jsonschema knows (the same registry it uses itself).
METASCHEMAS: Registry[Any] = REGISTRY

INVALID_SCHEMA = "PF102"
UNRESOLVABLE_REF = "PF103"

# ---------------------------------------------------------------------------------------------
# Formats (docs/formats.md); the same rules as `FormatCheck` in rust/validate.rs.

_INTEGER_FORMATS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
}
_STRING_FORMATS = ("date-time", "date", "time")
_ASCII_DIGITS = frozenset("0123456789")


def _digits(text: str, start: int, count: int) -> int | None:
    """``count`` ASCII digits at ``text[start:]`` as a number (``str.isdigit`` takes too much)."""
    field = text[start : start + count]
    if len(field) != count or not _ASCII_DIGITS.issuperset(field):
        return None
    return int(field)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date(text: str) -> bool:
    """RFC 3339 ``full-date``: ``YYYY-MM-DD``, a real day of the (proleptic Gregorian) calendar."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    year, month, day = _digits(text, 0, 4), _digits(text, 5, 2), _digits(text, 8, 2)
    if year is None or month is None or day is None:
        return False
    return 1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)


def _offset_minutes(offset: str) -> int | None:
    """``Z`` or ``±HH:MM`` as minutes east of UTC; ``None`` if malformed."""
    if offset in ("Z", "z"):
        return 0
    if len(offset) != 6 or offset[0] not in "+-" or offset[3] != ":":
        return None
    hours, minutes = _digits(offset, 1, 2), _digits(offset, 4, 2)
    if hours is None or minutes is None or hours > 23 or minutes > 59:
        return None
    magnitude = hours * 60 + minutes
    return magnitude if offset[0] == "+" else -magnitude


def is_time(text: str) -> bool:
    """RFC 3339 ``full-time``: ``HH:MM:SS(.frac)?(Z|±HH:MM)``.

    A leap second (``:60``) is accepted only where one can occur: at 23:59 UTC once the offset is
    applied.
    """
    if len(text) < 9 or text[2] != ":" or text[5] != ":":
        return False
    hour, minute, second = _digits(text, 0, 2), _digits(text, 3, 2), _digits(text, 6, 2)
    if hour is None or minute is None or second is None:
        return False
    rest = 8
    if text[rest] == ".":
        fraction = rest + 1
        while fraction < len(text) and text[fraction] in _ASCII_DIGITS:
            fraction += 1
        if fraction == rest + 1:
            return False
        rest = fraction
    offset = _offset_minutes(text[rest:])
    if offset is None or hour > 23 or minute > 59 or second > 60:
        return False
    utc_minute_of_day = (hour * 60 + minute - offset) % (24 * 60)
    return second < 60 or utc_minute_of_day == 23 * 60 + 59


def is_date_time(text: str) -> bool:
    """RFC 3339 ``date-time``: ``full-date "T" full-time``, ``T``/``Z`` in either case (§5.6)."""
    return len(text) > 11 and text[10] in "Tt" and is_date(text[:10]) and is_time(text[11:])


_STRING_CHECKS = {"date-time": is_date_time, "date": is_date, "time": is_time}


def _integral_value(number: float) -> int | None:
    """The exact integer a JSON number stands for (``5.0`` counts), or ``None`` for a fraction or
    for a magnitude beyond every supported integer format."""
    if isinstance(number, int):
        return number
    if not number.is_integer() or abs(number) >= 2**64:
        return None
    return int(number)


def format_accepts(name: str, instance: Any) -> bool:
    """Whether ``instance`` satisfies ``format: name``. A format constrains only its own instance
    type, and ``float``, ``double`` and unknown names constrain nothing."""
    string_check = _STRING_CHECKS.get(name)
    if string_check is not None:
        return not isinstance(instance, str) or string_check(instance)
    bounds = _INTEGER_FORMATS.get(name)
    if bounds is None or isinstance(instance, bool) or not isinstance(instance, (int, float)):
        return True
    value = _integral_value(instance)
    return value is not None and bounds[0] <= value <= bounds[1]


def _format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker(formats=())
    for name in (*_STRING_FORMATS, *_INTEGER_FORMATS):
        checker.checks(name)(lambda instance, name=name: format_accepts(name, instance))
    return checker


_FORMAT_CHECKER = _format_checker()

# ---------------------------------------------------------------------------------------------
# Regular expressions with a time limit (docs/limits.md)
#
# python-jsonschema matches `pattern` and `patternProperties` with `re`, which backtracks without
# bound: `^(a+)+$` against "aaa…a!" takes exponential time. The Rust core cannot hang there (the
# `regex` crate is linear; fancy-regex, for lookaround and backreferences, stops after 1,000,000
# backtracking steps and jsonschema-rs reports that as a violation). Here the `regex` module
# matches with a time limit, and a match it cannot finish is reported as jsonschema-rs does.

PATTERN_TIME_LIMIT = 1.0
"""Seconds one regular-expression match may take before it counts as undecided."""

# Messages quote the offending value: a long one keeps its start and says its size, as
# rust/validate.rs `bounded_message` does.
MESSAGE_MAX_CHARS = 512
MESSAGE_KEPT_CHARS = 256


def bounded_message(message: str) -> str:
    if len(message) <= MESSAGE_MAX_CHARS:
        return message
    size = len(message.encode("utf-8", "surrogatepass"))
    return f"{message[:MESSAGE_KEPT_CHARS]} … [message truncated: {size} bytes]"


# jsonschema-rs's message for a match its engine gave up on, word for word.
UNDECIDED_MATCH = "Error executing regex: Max limit for backtracking count exceeded"


class _UndecidedMatch(Exception):
    """A match that did not finish within PATTERN_TIME_LIMIT."""


@lru_cache(maxsize=512)
def _compiled_pattern(pattern: str) -> regex.Pattern[str] | re.Pattern[str]:
    try:
        return regex.compile(pattern)
    except regex.error:
        # `re` accepted it when the schema was checked; it is `re`'s dialect then, unguarded.
        return re.compile(pattern)


def _pattern_found(pattern: str, text: str) -> bool:
    """``re.search(pattern, text)`` in bounded time; raises ``_UndecidedMatch`` past the limit."""
    compiled = _compiled_pattern(pattern)
    if isinstance(compiled, re.Pattern):
        return compiled.search(text) is not None
    try:
        return compiled.search(text, timeout=PATTERN_TIME_LIMIT) is not None
    except TimeoutError:
        raise _UndecidedMatch from None


def _pattern_keyword(
    validator: Any, pattern: str, instance: Any, _schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        found = _pattern_found(pattern, instance)
    except _UndecidedMatch:
        yield jsonschema.ValidationError(UNDECIDED_MATCH)
        return
    if not found:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties_keyword(
    validator: Any, pattern_properties: Mapping[str, Any], instance: Any, _schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for name, value in instance.items():
            try:
                found = _pattern_found(pattern, name)
            except _UndecidedMatch:
                yield jsonschema.ValidationError(UNDECIDED_MATCH)
                continue
            if found:
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_property_names(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> set[str]:
    """The members neither ``properties`` nor ``patternProperties`` cover; a name whose match is
    undecided is not covered (fail closed)."""
    properties = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))

    def covered(name: str) -> bool:
        try:
            return name in properties or (bool(patterns) and _pattern_found(patterns, name))
        except _UndecidedMatch:
            return False

    return {name for name in instance if not covered(name)}


def _additional_properties_keyword(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """python-jsonschema's ``additionalProperties``, matching names in bounded time."""
    if not validator.is_type(instance, "object"):
        return
    extras = _additional_property_names(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield jsonschema.ValidationError(
                f"{joined} {verb} not match any of the regexes: {patterns}"
            )
        else:
            verb = "was" if len(extras) == 1 else "were"
            joined = ", ".join(repr(extra) for extra in sorted(extras))
            yield jsonschema.ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


_TIME_LIMITED_KEYWORDS = {
    "pattern": _pattern_keyword,
    "patternProperties": _pattern_properties_keyword,
    "additionalProperties": _additional_properties_keyword,
}

# ---------------------------------------------------------------------------------------------
# Schema documents: pointers, false subschemas

# Drafts before 2019-09: they assert `format` by default and have no `minContains`/`maxContains`.
_LEGACY_DRAFTS = (
    jsonschema.Draft4Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft7Validator,
)

# Where a keyword's value is a schema, a map of schemas or a list of schemas.
_SCHEMA_KEYWORDS = frozenset(
    {
        "additionalItems",
        "additionalProperties",
        "contains",
        "contentSchema",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_MAP_KEYWORDS = frozenset(
    {"$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties"}
)
_SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
# python-jsonschema reports a `false` value of these keywords itself, as jsonschema-rs does.
_FALSE_AWARE_KEYWORDS = frozenset(
    {"additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties"}
)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _pointer(tokens: Iterable[object]) -> str:
    return "".join(f"/{_escape(str(token))}" for token in tokens)


def _fresh_copy(value: Any) -> Any:
    """A copy sharing no containers, so every schema object has exactly one location (tuples become
    lists: both are JSON arrays, but python-jsonschema only treats lists as such)."""
    if isinstance(value, dict):
        return {key: _fresh_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_fresh_copy(item) for item in value]
    return value


class _SchemaLocations:
    """Where every object of the schema documents is: its JSON pointer (as tokens) in its document,
    and the pointers of the schema resources enclosing it (subschemas with their own ``$id``)."""

    def __init__(self) -> None:
        self.tokens: dict[int, tuple[str, ...]] = {}
        self.resources: dict[int, tuple[tuple[str, ...], ...]] = {}

    def add(
        self,
        document: Any,
        specification: referencing.Specification[Any],
        tokens: tuple[str, ...] = (),
        resources: tuple[tuple[str, ...], ...] = ((),),
    ) -> None:
        if isinstance(document, dict):
            if tokens and isinstance(specification.id_of(document), str):
                resources = (*resources, tokens)
            items: Iterator[tuple[Any, Any]] = iter(document.items())
        elif isinstance(document, list):
            items = enumerate(document)
        else:
            return
        self.tokens.setdefault(id(document), tokens)
        self.resources.setdefault(id(document), resources)
        for key, item in items:
            self.add(item, specification, (*tokens, str(key)), resources)

    def located(self, schema: Any, schema_path: Sequence[str | int]) -> str:
        """jsonschema-rs's ``schema_path`` for an error from ``schema``, given python-jsonschema's
        ``absolute_schema_path`` up to ``schema`` (every keyword crossed, except ``$ref`` hops).

        Its location is the path walked since the last ``$ref`` hop, starting from where the
        hop's target is inside its schema resource; without a hop, the path from the document root.
        The tokens ``schema_path`` and the object's own location share since the hop locate the
        target; the deepest resource enclosing the target is where the pointer starts.
        """
        tokens = self.tokens.get(id(schema), ())
        shared = 0
        for token, walked in zip(reversed(tokens), reversed(schema_path)):
            if str(walked) != token:
                break
            shared += 1
        target = tokens[: len(tokens) - shared]
        start = max(
            (root for root in self.resources.get(id(schema), ((),)) if target[: len(root)] == root),
            key=len,
        )
        return _pointer(tokens[len(start) :])


@cache
def _metaschema_locations() -> _SchemaLocations:
    """Locations in the meta-schemas, which live (and keep their ids) for the whole process."""
    locations = _SchemaLocations()
    for uri in METASCHEMAS:
        locations.add(METASCHEMAS.contents(uri), referencing.jsonschema.DRAFT202012)
    return locations


class _FalseSchemas:
    """Replaces ``false`` subschemas by ``{"not": {}}`` markers and remembers them.

    python-jsonschema drops the instance path of an error from a ``false`` subschema (its
    ``descend`` returns before adding it) and gives it no schema object to locate; a marker object
    fails the same instances, keeps the path, and is reported as jsonschema-rs's ``falseSchema``.
    """

    def __init__(self) -> None:
        self.markers: set[int] = set()

    def replace(self, schema: Any) -> Any:
        if schema is False:
            marker: dict[str, Any] = {"not": {}}
            self.markers.add(id(marker))
            return marker
        if not isinstance(schema, dict):
            return schema
        for keyword, value in schema.items():
            if keyword in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                schema[keyword] = [self.replace(item) for item in value]
            elif keyword in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                for name, item in value.items():
                    value[name] = self.replace(item)
            elif keyword in _SCHEMA_KEYWORDS and not (
                value is False and keyword in _FALSE_AWARE_KEYWORDS
            ):
                schema[keyword] = self.replace(value)
        return schema


def _without_empty_fragment(uri: str) -> str:
    return uri[:-1] if uri.endswith("#") else uri


class _RemoteRefRefused(Exception):
    """Raised by the registry's retriever: nothing is ever fetched."""


def _refuse_retrieval(uri: str) -> Resource[Any]:
    raise _RemoteRefRefused(f"remote $ref refused (no network): {uri}")


def _unresolvable_reason(error: BaseException) -> str:
    """Our refusal when it is behind ``error`` (referencing wraps it twice), else ``error``."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, _RemoteRefRefused):
            return str(cause)
        cause = cause.__cause__ or cause.__context__
    return f"unresolvable $ref: {error}"


# `validator_for` returns its `default` for a `$schema` it does not know; this tells that apart.
_UNKNOWN_DIALECT: Any = object()


def _is_array(_checker: object, instance: object) -> bool:
    return isinstance(instance, (list, tuple))


def _validator_class(schema: Any) -> type[Validator]:
    """The draft named by ``$schema`` (2020-12 without one); an unknown one is PF103, as in Rust."""
    if not isinstance(schema, dict) or "$schema" not in schema:
        return jsonschema.Draft202012Validator
    validator_class: type[Validator] = jsonschema.validators.validator_for(
        schema, default=_UNKNOWN_DIALECT
    )
    if validator_class is _UNKNOWN_DIALECT:
        message = f"unknown meta-schema: {schema['$schema']!r}"
        raise SchemaCompileError(UNRESOLVABLE_REF, message)
    return validator_class


def _specification(validator_class: type[Validator]) -> referencing.Specification[Any]:
    return referencing.jsonschema.specification_with(validator_class.META_SCHEMA["$schema"])


_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def _resolve_every_ref(
    resource: Resource[Any],
    resolver: Resolver[Any],
    specification: referencing.Specification[Any],
    seen: set[int],
) -> None:
    """Resolve each reference reachable from ``resource`` now, as jsonschema-rs does when it
    compiles, instead of when python-jsonschema first meets it while validating."""
    contents = resource.contents
    if id(contents) in seen:
        return
    seen.add(id(contents))
    if isinstance(contents, dict):
        for keyword in _REFERENCE_KEYWORDS:
            reference = contents.get(keyword)
            if not isinstance(reference, str):
                continue
            try:
                resolved = resolver.lookup(reference)
            except referencing.exceptions.Unresolvable as error:
                raise SchemaCompileError(UNRESOLVABLE_REF, _unresolvable_reason(error)) from None
            target = Resource.from_contents(resolved.contents, default_specification=specification)
            _resolve_every_ref(target, resolved.resolver, specification, seen)
    for subresource in resource.subresources():
        subresolver = resolver.in_subresource(subresource)
        _resolve_every_ref(subresource, subresolver, specification, seen)


# python-jsonschema recurses about ten frames per level of the instance, so a document at the
# nesting limit (512) needs more than Python's default limit of 1000. Far higher would overflow the
# C stack (a segfault, measured at 40 000 on CPython 3.11 with an 8 MB stack) on a schema that
# refers to itself forever.
_VALIDATION_RECURSION_LIMIT = 12_000

ENDLESS_REFERENCE = (
    "the schema refers to itself without ever descending into the instance (a $ref cycle such "
    'as {"$ref": "#"}); JSON Schema leaves its meaning undefined'
)


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """Room for python-jsonschema's recursion over any instance within the nesting limit; endless
    recursion (only a schema can cause it) becomes ``SchemaCompileError`` PF102."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, _VALIDATION_RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise SchemaCompileError(INVALID_SCHEMA, ENDLESS_REFERENCE) from None
    finally:
        sys.setrecursionlimit(previous)


class CompiledSchema:
    """A schema compiled by the fallback backend; the same contract as Rust's `SchemaValidator`."""

    def __init__(
        self,
        schema: Any,
        validate_formats: bool | None,
        resources: Mapping[str, Any],
    ) -> None:
        validator_class = _validator_class(schema)
        try:
            validator_class.check_schema(schema)
        except jsonschema.SchemaError as error:
            pointer = _pointer(error.absolute_path)
            raise SchemaCompileError(INVALID_SCHEMA, error.message, pointer) from None
        self._legacy_draft = validator_class in _LEGACY_DRAFTS
        if validate_formats is None:
            validate_formats = self._legacy_draft
        specification = _specification(validator_class)
        false_schemas = _FalseSchemas()
        # Kept alive with `self`, so the `id()`s in the maps below stay valid.
        self._documents = [false_schemas.replace(_fresh_copy(schema))]
        # `retrieve` is the documented alias of an attrs field mypy's plugin does not see.
        registry: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
        for uri, document in resources.items():
            document = false_schemas.replace(_fresh_copy(document))
            self._documents.append(document)
            resource = Resource.from_contents(document, default_specification=specification)
            registry = registry.with_resource(_without_empty_fragment(uri), resource)
        root = Resource.from_contents(self._documents[0], default_specification=specification)
        resolver = METASCHEMAS.combine(registry).resolver_with_root(root)
        _resolve_every_ref(root, resolver, specification, set())
        self._false_schemas = false_schemas.markers
        self._locations = _SchemaLocations()
        for document in self._documents:
            self._locations.add(document, specification)
        metaschemas = _metaschema_locations()
        self._locations.tokens = {**metaschemas.tokens, **self._locations.tokens}
        self._locations.resources = {**metaschemas.resources, **self._locations.resources}
        # Tuples are JSON arrays here (the value model of docs/architecture.md), as in Rust.
        tuple_aware = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            validator_class,
            validators=_TIME_LIMITED_KEYWORDS,
            type_checker=validator_class.TYPE_CHECKER.redefine("array", _is_array),
        )
        self._validator = tuple_aware(
            self._documents[0],
            registry=registry,
            format_checker=_FORMAT_CHECKER if validate_formats else None,
        )

    def is_valid(self, instance: Any) -> bool:
        """Raises ``CanonicalizationError`` for a value outside the JSON model, as Rust does."""
        check_value(instance)
        with _deep_recursion():
            return bool(self._validator.is_valid(instance))

    def errors(self, instance: Any) -> list[Violation]:
        """Every violation as (pointer, schema_pointer, keyword, message), sorted by
        (pointer, schema_pointer, message)."""
        check_value(instance)
        return self._sorted_violations(instance)

    def _sorted_violations(self, instance: Any) -> list[Violation]:
        with _deep_recursion():
            errors = list(self._validator.iter_errors(instance))
        violations = [self._violation(error) for error in errors]
        return sorted(violations, key=lambda violation: (violation[0], violation[1], violation[3]))

    def errors_json(self, data: bytes | str) -> list[Violation]:
        """Parse ``data`` strictly (``CanonicalizationError`` if it is not JSON), then validate."""
        return self._sorted_violations(parse_json(data))

    def _violation(self, error: jsonschema.ValidationError) -> Violation:
        pointer = _pointer(error.absolute_path)
        # The path up to the failing schema object: without the keyword it adds at the end.
        schema_path = list(error.absolute_schema_path)[:-1]
        location = self._locations.located(error.schema, schema_path)
        if id(error.schema) in self._false_schemas:
            message = f"False schema does not allow {json.dumps(error.instance)}"
            return (pointer, location, "falseSchema", bounded_message(message))
        keyword = self._keyword(error)
        return (pointer, f"{location}/{_escape(keyword)}", keyword, bounded_message(error.message))

    def _keyword(self, error: jsonschema.ValidationError) -> str:
        """python-jsonschema reports an array with no match at all under ``contains`` even when
        ``minContains``/``maxContains`` is present; jsonschema-rs reports it at that keyword."""
        keyword = str(error.validator)
        if keyword == "contains" and not self._legacy_draft and isinstance(error.schema, dict):
            for bound in ("minContains", "maxContains"):
                if bound in error.schema:
                    return bound
        return keyword


def compile_schema(
    schema: Any,
    validate_formats: bool | None = None,
    resources: Mapping[str, Any] | None = None,
) -> CompiledSchema:
    """Compile ``schema``; raises ``SchemaCompileError`` (PF102 invalid, PF103 unresolvable ref)."""
    return CompiledSchema(schema, validate_formats, resources or {})


# ---------------------------------------------------------------------------------------------
# Bundled schemas

_CAPABILITY_MAP_ID = "pairling.capability-map.2.0.0"
_WIRE_ID_PREFIX = "car."
_CAPABILITY_MAP_FILE = "coding-agent-remote-control-capability-map.schema.json"
_WIRE_FILE = "car-wire-schema.v1.json"


def schema_files() -> Traversable:
    """The bundled spec files: ``pairling_fast/_schemas`` (packaged, or a link to the top-level
    ``schemas/`` in a checkout), else that top-level folder itself."""
    packaged = importlib_resources.files("pairling_fast") / "_schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "schemas"


def _read_schema_file(name: str) -> Any:
    return json.loads((schema_files() / name).read_text(encoding="utf-8"))


@cache
def wire_bundle() -> Any:
    """The whole CAR wire schema document (its ``schemas`` member holds one schema per type)."""
    return _read_schema_file(_WIRE_FILE)


@cache
def _bundled_schemas() -> Mapping[str, Any]:
    schemas = {
        f"{_WIRE_ID_PREFIX}{name}": schema for name, schema in wire_bundle()["schemas"].items()
    }
    schemas[_CAPABILITY_MAP_ID] = _read_schema_file(_CAPABILITY_MAP_FILE)
    return schemas


def bundled_schema_ids() -> list[str]:
    return sorted(_bundled_schemas())


def bundled_schema(schema_id: str) -> Any:
    """The bundled schema document; raises ``KeyError`` for an unknown id."""
    return _bundled_schemas()[schema_id]


@cache
def bundled_validator(schema_id: str) -> CompiledSchema:
    """The compiled bundled schema (compiled on first use), formats always asserted."""
    return compile_schema(bundled_schema(schema_id), validate_formats=True)
