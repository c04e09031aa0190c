"""``Validator.evaluate`` for the pure-Python backend: the JSON Schema output formats (flag, list,
hierarchical) and annotations, built as the jsonschema crate builds them (its ``evaluation``
module and each keyword's ``evaluate``), so they equal jsonschema-rs's.

The walk is the crate's: one output unit per subschema applied and per keyword of it, in the
crate's keyword order; a ``$ref`` unit located at its target, its keywords below it; the
annotations of each keyword (names, indexes, unknown keywords' values) kept on valid units and
moved to ``droppedAnnotations`` on failing ones. What a keyword asserts, and the words of its
errors, are the fallback's own keyword code (python-jsonschema's keywords as ``validate`` extends
them, and ``validate``'s translation to jsonschema-rs's messages), called one keyword at a time.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache, partial
from typing import Any, NamedTuple
from urllib.parse import urldefrag, urljoin

import jsonschema
import referencing.jsonschema
from jsonschema import _legacy_keywords, _utils
from jsonschema_specifications import REGISTRY as METASCHEMAS  # type: ignore[import-untyped]
from referencing.jsonschema import lookup_recursive_ref

from .messages import TYPE_ORDER, render
from .parse import escape_pointer_token

Unit = dict[str, Any]
Description = tuple[str, str]
"""(keyword, message) of one error, as jsonschema-rs's ``ErrorDescription``."""


class KeywordCode(NamedTuple):
    """What the evaluator asks the fallback's validation code (``validate.CompiledSchema``)."""

    describe: Callable[[jsonschema.ValidationError], Description]
    """The keyword and jsonschema-rs's message of a python-jsonschema error."""
    matches: Callable[[str, str], bool]
    """Whether an ECMA-262 pattern matches a name (in bounded time; undecided is no)."""
    evaluated_names: Callable[[Any, Mapping[str, Any], Any], set[str]]
    """The members of an object some keyword of a schema evaluated (``unevaluatedProperties``)."""
    is_false: Callable[[Any], bool]
    """Whether a schema is a ``false`` subschema (or the fallback's marker for one)."""
    custom: frozenset[str]
    """The caller's keywords (``keywords=``), evaluated as the crate evaluates custom ones."""


# The crate's `keyword_priority`: the order of a schema's keyword units (ties in schema order).
_PRIORITY = {
    "type": 1, "const": 5, "enum": 6, "minimum": 10, "maximum": 11, "exclusiveMinimum": 12,
    "exclusiveMaximum": 13, "multipleOf": 14, "minLength": 20, "maxLength": 21, "minItems": 22,
    "maxItems": 23, "minProperties": 24, "maxProperties": 25, "required": 26,
    "dependentRequired": 27, "pattern": 30, "format": 31, "contentEncoding": 32,
    "contentMediaType": 33, "contentSchema": 34, "uniqueItems": 35, "properties": 40,
    "patternProperties": 41, "additionalProperties": 42, "propertyNames": 43, "items": 44,
    "prefixItems": 45, "additionalItems": 46, "contains": 47, "dependencies": 48,
    "dependentSchemas": 49, "allOf": 50, "anyOf": 51, "oneOf": 52, "not": 53, "if": 54,
    "unevaluatedProperties": 60, "unevaluatedItems": 61, "$ref": 70, "$recursiveRef": 71,
    "$dynamicRef": 72,
}  # fmt: skip
_CUSTOM_PRIORITY = 80

# referencing's `Draft::is_known_keyword`: a keyword no draft knows is an annotation of its node.
_KNOWN_EVERYWHERE = frozenset(
    {
        "$ref", "$schema", "additionalItems", "additionalProperties", "allOf", "anyOf",
        "definitions", "dependencies", "enum", "exclusiveMaximum", "exclusiveMinimum", "format",
        "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength",
        "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern", "patternProperties",
        "properties", "required", "type", "uniqueItems",
    }
)  # fmt: skip
_SINCE_6 = frozenset({"$id", "const", "contains", "propertyNames"})
_SINCE_7 = frozenset({"if", "then", "else"})
_SINCE_2019 = frozenset(
    {
        "$anchor", "$defs", "$recursiveAnchor", "$recursiveRef", "dependentRequired",
        "dependentSchemas", "maxContains", "minContains", "unevaluatedItems",
        "unevaluatedProperties", "contentSchema",
    }
)  # fmt: skip
_ONLY_2020 = frozenset({"$dynamicAnchor", "$dynamicRef", "prefixItems"})
_DRAFT_ORDER = ("draft4", "draft6", "draft7", "draft2019-09", "draft2020-12")

# Known keywords that make no unit of their own: identifiers, containers of definitions, and the
# keywords another one reads (`then`/`else` by `if`, the bounds of `contains`).
_NO_UNIT = frozenset(
    {
        "$schema", "$id", "id", "definitions", "$defs", "$anchor", "$dynamicAnchor",
        "$recursiveAnchor", "then", "else", "minContains", "maxContains",
    }
)  # fmt: skip
_REFERENCES = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
_NO_UNIT_WHEN_TRUE = frozenset(
    {
        "items", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
        "additionalProperties", "additionalItems",
    }
)  # fmt: skip
# Keywords that annotate with their own value and assert nothing (2019-09 on); `format` where it
# is not asserted too.
_ANNOTATING = frozenset({"contentEncoding", "contentMediaType", "contentSchema"})
# Below this many `properties` the crate checks a two-name `required` inside `properties`.
_SMALL_PROPERTIES = 15


def _closed(schema: Mapping[str, Any]) -> bool:
    return schema.get("additionalProperties") is False


def _required_fused(schema: Mapping[str, Any]) -> bool:
    """Whether the crate checks ``required`` inside another keyword of ``schema`` (its
    ``required::compile``): a one-name ``required`` inside a closed ``additionalProperties``
    with ``properties``, a two-name one inside a small ``properties`` of an open object."""
    names = schema.get("required")
    if not isinstance(names, list) or "patternProperties" in schema:
        return False
    properties = schema.get("properties")
    if len(names) == 1 and _closed(schema) and properties is not None:
        return True
    return (
        len(names) == 2
        and isinstance(properties, dict)
        and len(properties) < _SMALL_PROPERTIES
        and schema.get("additionalProperties", True) is True
    )


def _known_keywords(draft: str) -> frozenset[str]:
    rank = _DRAFT_ORDER.index(draft)
    known = set(_KNOWN_EVERYWHERE)
    if rank == 0:
        known.add("id")
    if rank >= 1:
        known |= _SINCE_6
    if rank >= 2:
        known |= _SINCE_7
    if draft in ("draft6", "draft7"):
        known |= {"contentEncoding", "contentMediaType"}
    if rank >= 3:
        known |= _SINCE_2019 | {"contentEncoding", "contentMediaType"}
    if rank >= 4:
        known |= _ONLY_2020
    return frozenset(known)


_KNOWN = {draft: _known_keywords(draft) for draft in _DRAFT_ORDER}
_DRAFT_BY_METASCHEMA = {
    "http://json-schema.org/draft-04/schema#": "draft4",
    "http://json-schema.org/draft-06/schema#": "draft6",
    "http://json-schema.org/draft-07/schema#": "draft7",
    "https://json-schema.org/draft/2019-09/schema": "draft2019-09",
    "https://json-schema.org/draft/2020-12/schema": "draft2020-12",
}


def _draft_of(validator: Any) -> str:
    """The draft a (sub)schema is evaluated in: its validator's, which a ``$ref`` into a
    resource with another ``$schema`` switches, as python-jsonschema's ``evolve`` does."""
    return _DRAFT_BY_METASCHEMA.get(validator.META_SCHEMA.get("$schema", ""), "draft2020-12")


def _is_legacy(validator: Any) -> bool:
    return _DRAFT_ORDER.index(_draft_of(validator)) < 3


def _known_of(validator: Any) -> frozenset[str]:
    return _KNOWN[_draft_of(validator)]


def _join(pointer: str, token: str | int) -> str:
    return f"{pointer}/{escape_pointer_token(str(token))}"


Places = dict[int, tuple[str, str | None]]
"""Where each object of the schema documents is: its pointer in its schema resource and that
resource's base URI (``None`` where it has none), by the object's ``id``."""


def _index(
    places: Places,
    specification: referencing.Specification[Any],
    schema: Any,
    base: str | None,
    location: str,
) -> None:
    """Record where every object of a document is within its schema resource."""
    if isinstance(schema, dict):
        named = schema.get("$id", schema.get("id"))  # `id_of` expects a string
        identifier = specification.id_of(schema) if isinstance(named, str) else None
        # A document keeps the URI it was retrieved by; below it, its own id is the base.
        if not location:
            places.setdefault(id(schema), (location, base))
        if isinstance(identifier, str) and not identifier.startswith("#"):
            base, location = urldefrag(urljoin(base or "", identifier))[0], ""
        places.setdefault(id(schema), (location, base))
        for key, value in schema.items():
            _index(places, specification, value, base, _join(location, key))
    elif isinstance(schema, list):
        places.setdefault(id(schema), (location, base))
        for index, value in enumerate(schema):
            _index(places, specification, value, base, _join(location, index))


@cache
def _metaschema_places() -> Places:
    """The meta-schemas' places, which live (and keep their ids) for the whole process."""
    places: Places = {}
    for uri in METASCHEMAS:
        contents = METASCHEMAS.contents(uri)
        specification = referencing.jsonschema.specification_with(
            contents.get("$schema", uri), default=referencing.jsonschema.DRAFT202012
        )
        _index(places, specification, contents, urldefrag(uri)[0], "")
    return places


class _Result:
    """A subschema's or keyword's evaluation before it is placed: the crate's
    ``EvaluationResult``."""

    __slots__ = ("annotations", "children", "errors", "valid")

    def __init__(
        self,
        children: list[Unit] | None = None,
        errors: list[Description] | None = None,
        annotations: Any = None,
    ) -> None:
        self.children = children or []
        self.errors = errors or []
        self.annotations = annotations
        self.valid = not self.errors and all(child["valid"] for child in self.children)


class _Place(NamedTuple):
    """Where a subschema is: its evaluation path, its location in its schema resource (tokens),
    and that resource's absolute URI (``None`` where the schema has no base URI)."""

    path: str
    location: str
    base: str | None

    def below(self, *tokens: str | int) -> _Place:
        path, location = self.path, self.location
        for token in tokens:
            path, location = _join(path, token), _join(location, token)
        return _Place(path, location, self.base)

    @property
    def schema_location(self) -> str:
        return self.location if self.base is None else f"{self.base}#{self.location}"


def _unit(place: _Place, instance_location: str, result: _Result) -> Unit:
    """The crate's ``EvaluationNode``, in the key order jsonschema-rs serialises."""
    unit: Unit = {
        "valid": result.valid,
        "evaluationPath": place.path,
        "schemaLocation": place.schema_location,
        "instanceLocation": instance_location,
    }
    if result.annotations is not None:
        unit["annotations" if result.valid else "droppedAnnotations"] = result.annotations
    if result.errors:
        grouped: dict[str, list[str]] = {}
        for keyword, text in result.errors:
            grouped.setdefault(keyword, []).append(text)
        unit["errors"] = {
            keyword: texts[0] if len(texts) == 1 else texts for keyword, texts in grouped.items()
        }
    if result.children:
        unit["details"] = result.children
    return unit


class Evaluator:
    """Evaluates instances against one compiled schema (``validate.CompiledSchema``)."""

    def __init__(
        self,
        validator: Any,
        base_uri: str | None,
        resources: Sequence[tuple[str, Any]],
        code: KeywordCode,
    ) -> None:
        """``validator``: python-jsonschema's validator of the root schema; ``base_uri``: the
        caller's, if any; ``resources``: the other schema documents, each with its URI."""
        self._validator = validator
        self._code = code
        specification = referencing.jsonschema.specification_with(validator.META_SCHEMA["$schema"])
        places: Places = {}
        root = validator.schema
        root_id = specification.id_of(root) if isinstance(root, dict) else None
        root_base = urljoin(base_uri or "", root_id if isinstance(root_id, str) else "")
        _index(places, specification, root, urldefrag(root_base)[0] or None, "")
        for uri, document in resources:
            _index(places, specification, document, urldefrag(uri)[0], "")
        self._places = ChainMap(places, _metaschema_places())

    # -- the whole evaluation --------------------------------------------------------------------

    def evaluate(self, instance: Any) -> tuple[Unit, list[dict[str, Any]], list[dict[str, Any]]]:
        """The hierarchical output of ``instance``, its error entries and annotation entries."""
        schema = self._validator.schema
        place = _Place("", *self._places.get(id(schema), ("", None)))
        root = _unit(place, "", self._node(self._validator, schema, instance, "", place))
        return root, _errors(root), _annotations(root)

    # -- subschemas ------------------------------------------------------------------------------

    def _descend(self, validator: Any, schema: Any) -> Any:
        """python-jsonschema's ``descend``: the validator of a subschema (in its own resource)."""
        if not isinstance(schema, dict):
            return validator
        specification = referencing.jsonschema.specification_with(validator.META_SCHEMA["$schema"])
        resolver = validator._resolver.in_subresource(specification.create_resource(schema))
        return validator.evolve(schema=schema, _resolver=resolver)

    def _apply(
        self, validator: Any, schema: Any, instance: Any, instance_location: str, place: _Place
    ) -> Unit:
        """The unit of ``schema`` applied to ``instance`` (the crate's ``evaluate_instance``)."""
        if id(schema) in self._places:  # in a resource of its own where it has an id
            place = _Place(place.path, *self._places[id(schema)])
        return _unit(
            place,
            instance_location,
            self._node(
                self._descend(validator, schema), schema, instance, instance_location, place
            ),
        )

    def _node(
        self, validator: Any, schema: Any, instance: Any, instance_location: str, place: _Place
    ) -> _Result:
        """A schema's keyword units (the crate's ``SchemaNode::evaluate_at``)."""
        if schema is True or (isinstance(schema, dict) and not schema):
            return _Result()
        if self._code.is_false(schema):
            return _Result(errors=[_false_schema(instance)])
        if not isinstance(schema, dict):
            return _Result()
        if _is_legacy(validator) and "$ref" in schema:
            keywords: Iterable[str] = ("$ref",)
            annotations = None
        else:
            unknown = {
                keyword: value
                for keyword, value in schema.items()
                if keyword not in _known_of(validator) and keyword not in self._code.custom
            }
            annotations = unknown or None
            keywords = sorted(
                (keyword for keyword in schema if self._is_unit(validator, schema, keyword)),
                key=lambda keyword: _PRIORITY.get(keyword, _CUSTOM_PRIORITY),
            )
        children = [
            self._keyword(validator, schema, keyword, instance, instance_location, place)
            for keyword in keywords
        ]
        return _Result(children, annotations=annotations)

    def _is_unit(self, validator: Any, schema: Mapping[str, Any], keyword: str) -> bool:
        if keyword in self._code.custom:
            return True
        if keyword not in _known_of(validator) or keyword in _NO_UNIT:
            return False
        if keyword == "if":
            return "then" in schema or "else" in schema
        value = schema[keyword]
        if keyword in _NO_UNIT_WHEN_TRUE and value is True:
            return False  # the crate compiles nothing for a keyword that cannot fail
        if keyword == "uniqueItems" and value is False:
            return False
        if keyword == "additionalItems" and not isinstance(schema.get("items"), list):
            return False
        if (
            keyword in ("properties", "patternProperties")
            and schema.get("additionalProperties", True) is not True
        ):
            return False  # `additionalProperties` applies them (the crate fuses the three)
        if keyword == "required" and _required_fused(schema):
            return False
        if keyword == "maxLength" and "minLength" in schema:
            return False  # checked by `minLength` (the crate's length range)
        if keyword == "contentEncoding" and _is_legacy(validator) and "contentMediaType" in schema:
            return False  # drafts 6 and 7: checked by `contentMediaType`
        if keyword in _ANNOTATING and not _is_legacy(validator):
            return True
        implementation = validator.VALIDATORS.get(keyword)
        return implementation is not None and getattr(implementation, "__name__", "") != "_ignored"

    # -- keywords --------------------------------------------------------------------------------

    def _keyword(
        self,
        validator: Any,
        schema: Mapping[str, Any],
        keyword: str,
        instance: Any,
        instance_location: str,
        place: _Place,
    ) -> Unit:
        value = schema[keyword]
        here = place.below(keyword)
        if keyword in _REFERENCES:
            return self._reference(validator, keyword, value, instance, instance_location, here)
        handler = _APPLICATORS.get(keyword)
        if keyword in self._code.custom:
            result = _Result(errors=self._errors(validator, schema, keyword, instance))
        elif keyword in _ANNOTATING and not _is_legacy(validator):
            result = _Result(annotations=value if isinstance(instance, str) else None)
        elif handler is None:
            errors = self._errors(validator, schema, keyword, instance)
            if (
                keyword == "contentMediaType"
                and _is_legacy(validator)
                and "contentEncoding" in schema
            ):
                errors = self._errors(validator, schema, "contentEncoding", instance) + errors
            if (
                keyword == "type"
                and errors
                and isinstance(value, list)
                and len(value) > 1
                and _draft_of(validator) != "draft4"
            ):
                # The crate's evaluation words a failing type list its own way.
                listed = ", ".join(name for name in TYPE_ORDER if name in value)
                errors = [("type", f"{render(instance)} is not of types ({listed})")]
            annotations = value if keyword == "format" and not errors else None
            result = _Result(errors=errors, annotations=annotations)
        else:
            result = handler(self, validator, schema, value, instance, instance_location, place)
        return _unit(here, instance_location, result)

    def _errors(
        self, validator: Any, schema: Mapping[str, Any], keyword: str, instance: Any
    ) -> list[Description]:
        """The errors of one keyword, as python-jsonschema's ``iter_errors`` reports them."""
        implementation = validator.VALIDATORS.get(keyword)
        if implementation is None:
            return []
        value = schema[keyword]
        described = []
        for error in implementation(validator, value, instance, schema) or ():
            error._set(
                validator=keyword,
                validator_value=value,
                instance=instance,
                schema=schema,
                type_checker=validator.TYPE_CHECKER,
            )
            if keyword not in {"if", "$ref"}:
                error.schema_path.appendleft(keyword)
            described.append(self._code.describe(error))
        return described

    def _reference(
        self,
        validator: Any,
        keyword: str,
        value: Any,
        instance: Any,
        instance_location: str,
        here: _Place,
    ) -> Unit:
        """A ``$ref`` unit: located at its target, the target's keywords below it."""
        if keyword == "$recursiveRef":
            resolved = lookup_recursive_ref(validator._resolver)
        else:
            resolved = validator._resolver.lookup(value)
        target = resolved.contents
        if id(target) in self._places:
            location, base = self._places[id(target)]
        else:  # a boolean: where the reference points
            uri, location = urldefrag(urljoin(here.base or "", value))
            base = uri or here.base
        place = _Place(here.path, location, base)
        evolved = validator.evolve(schema=target, _resolver=resolved.resolver)
        result = self._node(evolved, target, instance, instance_location, place)
        return _unit(place, instance_location, result)

    def _properties(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, dict):
            return _Result()
        children = [
            self._apply(
                validator, value[name], instance[name], _join(instance_location, name),
                place.below("properties", name),
            )
            for name in instance
            if name in value
        ]  # fmt: skip
        if _required_fused(schema) and not _closed(schema):
            children += self._required(validator, schema, instance, instance_location, place)
        return _Result(children, annotations=[name for name in instance if name in value])

    def _required(
        self, validator: Any, schema: Mapping[str, Any], instance: Any, instance_location: str,
        place: _Place,
    ) -> list[Unit]:  # fmt: skip
        """The unit of a ``required`` another keyword checks: there only where it fails."""
        errors = self._errors(validator, schema, "required", instance)
        if not errors:
            return []
        return [_unit(place.below("required"), instance_location, _Result(errors=errors))]

    def _pattern_properties(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, dict):
            return _Result()
        children, matched = [], []
        for pattern, subschema in value.items():
            for name, member in instance.items():
                if self._code.matches(pattern, name):
                    matched.append(name)
                    children.append(
                        self._apply(
                            validator, subschema, member, _join(instance_location, name),
                            place.below("patternProperties", pattern),
                        )
                    )  # fmt: skip
        return _Result(children, annotations=matched)

    def _additional_properties(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        """The crate's fused ``additionalProperties``: it applies ``properties`` and
        ``patternProperties`` too, which then have no units of their own."""
        if not isinstance(instance, dict):
            return _Result()
        properties = schema.get("properties", {}) if "properties" in schema else None
        patterns = schema.get("patternProperties", {}) if "patternProperties" in schema else None
        closed = value is False or self._code.is_false(value)
        if properties is None and patterns is None:
            if closed:
                return _Result(
                    errors=self._errors(validator, schema, "additionalProperties", instance)
                )
            children = [
                self._apply(
                    validator, value, member, _join(instance_location, name),
                    place.below("additionalProperties"),
                )
                for name, member in instance.items()
            ]  # fmt: skip
            return _Result(children, annotations=list(instance))
        children, additional, pattern_matched = [], [], []
        for name, member in instance.items():
            member_location = _join(instance_location, name)
            matched = False
            if properties is not None and name in properties:
                matched = True
                children.append(
                    self._apply(
                        validator, properties[name], member, member_location,
                        place.below("properties", name),
                    )
                )  # fmt: skip
            for pattern, subschema in (patterns or {}).items():
                if self._code.matches(pattern, name):
                    if not matched or properties is not None:
                        pattern_matched.append(name)
                    matched = True
                    children.append(
                        self._apply(
                            validator, subschema, member, member_location,
                            place.below("patternProperties", pattern),
                        )
                    )  # fmt: skip
            if matched:
                continue
            additional.append(name)
            if not closed:
                children.append(
                    self._apply(
                        validator, value, member, member_location,
                        place.below("additionalProperties"),
                    )
                )  # fmt: skip
        if closed and patterns is None and _required_fused(schema):
            children += self._required(validator, schema, instance, instance_location, place)
        if patterns is not None and properties is None and pattern_matched:
            children.append(
                _unit(
                    place.below("patternProperties"),
                    instance_location,
                    _Result(annotations=pattern_matched),
                )
            )
        errors = []
        if closed and additional:
            errors = self._errors(validator, schema, "additionalProperties", instance)
        annotations = None
        if not closed:
            both = properties is not None and patterns is not None
            annotations = additional if (both or additional) else None
        return _Result(children, errors, annotations)

    def _min_length(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        """The crate's length range where ``maxLength`` is there too: one ``minLength`` unit, a
        ``maxLength`` one below it only where the string is too long."""
        errors = self._errors(validator, schema, "minLength", instance)
        if "maxLength" not in schema:
            return _Result(errors=errors)
        longer = self._errors(validator, schema, "maxLength", instance)
        children = [_unit(place.below("maxLength"), instance_location, _Result(errors=longer))]
        return _Result(children if longer else [], errors)

    def _property_names(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, dict):
            return _Result()
        if self._code.is_false(value):
            if not instance:
                return _Result()
            return _Result(errors=[_false_schema(instance)])
        return _Result(
            [
                self._apply(validator, value, name, instance_location, place.below("propertyNames"))
                for name in instance
            ]
        )

    def _items(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, (list, tuple)):
            return _Result()
        if isinstance(value, list):
            return _Result(
                self._positional(validator, "items", value, instance, instance_location, place)
            )
        skip = len(schema.get("prefixItems", ())) if _draft_of(validator) == "draft2020-12" else 0
        annotation = len(instance) > skip
        children = [
            self._apply(
                validator, value, item, _join(instance_location, index), place.below("items")
            )
            for index, item in enumerate(instance)
            if index >= skip
        ]
        return _Result(children, annotations=annotation)

    def _prefix_items(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, (list, tuple)) or not instance:
            return _Result()
        children = self._positional(
            validator, "prefixItems", value, instance, instance_location, place
        )
        annotation: Any = True if len(children) == len(instance) else len(children) - 1
        return _Result(children, annotations=annotation)

    def _positional(
        self, validator: Any, keyword: str, subschemas: list[Any], instance: Any,
        instance_location: str, place: _Place,
    ) -> list[Unit]:  # fmt: skip
        """The units of an array's items under the subschemas at the same index (`prefixItems`,
        draft 4-2019-09's array form of `items`)."""
        return [
            self._apply(
                validator, subschema, item, _join(instance_location, index),
                place.below(keyword, index),
            )
            for index, (subschema, item) in enumerate(zip(subschemas, instance, strict=False))
        ]  # fmt: skip

    def _contains(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if "minContains" in schema or "maxContains" in schema:
            if not self._errors(validator, schema, "contains", instance):
                return _Result()
            # The crate's bounded `contains` words every failure as finding no match.
            return _Result(errors=[("contains", self._no_match(instance))])
        if not isinstance(instance, (list, tuple)):
            return _Result(annotations=[])
        children, indexes = [], []
        for index, item in enumerate(instance):
            child = self._apply(
                validator, value, item, _join(instance_location, index), place.below("contains")
            )
            if child["valid"]:
                indexes.append(index)
                children.append(child)
        if not indexes:
            return _Result(errors=[("contains", self._no_match(instance))])
        return _Result(children, annotations=indexes)

    @staticmethod
    def _no_match(instance: Any) -> str:
        return f"None of {render(instance)} are valid under the given schema"

    def _branches(
        self, validator: Any, keyword: str, value: Any, instance: Any, instance_location: str,
        place: _Place,
    ) -> list[Unit]:  # fmt: skip
        return [
            self._apply(
                validator, subschema, instance, instance_location, place.below(keyword, index)
            )
            for index, subschema in enumerate(value)
        ]

    def _all_of(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        return _Result(
            self._branches(validator, "allOf", value, instance, instance_location, place)
        )

    def _any_of(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        branches = self._branches(validator, "anyOf", value, instance, instance_location, place)
        valid = [branch for branch in branches if branch["valid"]]
        return _Result(valid or branches)

    def _one_of(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        branches = self._branches(validator, "oneOf", value, instance, instance_location, place)
        valid = [branch for branch in branches if branch["valid"]]
        if not valid:
            return _Result(branches)
        if len(valid) == 1:
            return _Result(valid)
        return _Result(valid, errors=[("oneOf", "more than one subschema succeeded")])

    def _if(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        condition = self._apply(validator, value, instance, instance_location, place.below("if"))
        if condition["valid"]:
            if "then" not in schema:
                return _Result([condition])
            then = self._apply(
                validator, schema["then"], instance, instance_location, place.below("then")
            )
            return _Result([condition, then])
        if "else" not in schema:
            return _Result()
        otherwise = self._apply(
            validator, schema["else"], instance, instance_location, place.below("else")
        )
        return _Result([otherwise])

    def _dependent_schemas(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place, keyword: str = "dependentSchemas",
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, dict):
            return _Result()
        children = []
        for name, dependency in value.items():
            if name not in instance:
                continue
            if isinstance(dependency, list):
                # The crate's node of names: one `required` check at index 0 of the keyword.
                errors = self._errors(validator, {"required": dependency}, "required", instance)
                check = _unit(place.below(keyword, 0), instance_location, _Result(errors=errors))
                children.append(_unit(place.below(keyword), instance_location, _Result([check])))
            else:
                children.append(
                    self._apply(
                        validator, dependency, instance, instance_location,
                        place.below(keyword, name),
                    )
                )  # fmt: skip
        return _Result(children)

    def _unevaluated_properties(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, dict):
            return _Result()
        others = {key: item for key, item in schema.items() if key != "unevaluatedProperties"}
        evaluated = self._code.evaluated_names(validator, instance, others)
        # `unevaluatedProperties: true` has no unit (`_is_unit`): `value` is a schema here.
        children = [
            self._apply(
                validator, value, member, _join(instance_location, name),
                place.below("unevaluatedProperties"),
            )
            for name, member in instance.items()
            if name not in evaluated
        ]  # fmt: skip
        errors = self._errors(validator, schema, "unevaluatedProperties", instance)
        return _Result(children, errors)

    def _unevaluated_items(
        self, validator: Any, schema: Mapping[str, Any], value: Any, instance: Any,
        instance_location: str, place: _Place,
    ) -> _Result:  # fmt: skip
        if not isinstance(instance, (list, tuple)):
            return _Result()
        others = {key: item for key, item in schema.items() if key != "unevaluatedItems"}
        find = (
            _utils.find_evaluated_item_indexes_by_schema
            if _draft_of(validator) == "draft2020-12"
            else _legacy_keywords.find_evaluated_item_indexes_by_schema
        )
        evaluated = set(find(validator.evolve(schema=others), instance, others))
        children = [
            self._apply(
                validator, value, item, _join(instance_location, index),
                place.below("unevaluatedItems"),
            )
            for index, item in enumerate(instance)
            if index not in evaluated
        ]  # fmt: skip
        errors = self._errors(validator, schema, "unevaluatedItems", instance)
        return _Result(children, errors)


_Handler = Callable[..., _Result]
_APPLICATORS: dict[str, _Handler] = {
    "properties": Evaluator._properties,
    "patternProperties": Evaluator._pattern_properties,
    "additionalProperties": Evaluator._additional_properties,
    "propertyNames": Evaluator._property_names,
    "minLength": Evaluator._min_length,
    "items": Evaluator._items,
    "prefixItems": Evaluator._prefix_items,
    "contains": Evaluator._contains,
    "allOf": Evaluator._all_of,
    "anyOf": Evaluator._any_of,
    "oneOf": Evaluator._one_of,
    "if": Evaluator._if,
    "dependentSchemas": Evaluator._dependent_schemas,
    "dependencies": partial(Evaluator._dependent_schemas, keyword="dependencies"),
    "dependentRequired": partial(Evaluator._dependent_schemas, keyword="dependentRequired"),
    "unevaluatedProperties": Evaluator._unevaluated_properties,
    "unevaluatedItems": Evaluator._unevaluated_items,
}


def _false_schema(instance: Any) -> Description:
    return "falseSchema", f"False schema does not allow {render(instance)}"


def _walk(unit: Unit, valid_only: bool) -> Iterable[Unit]:
    """Units in pre-order; with ``valid_only``, a failing unit and everything below it left out
    (the crate's ``NodeIter``)."""
    if valid_only and not unit["valid"]:
        return
    yield unit
    for child in unit.get("details", ()):
        yield from _walk(child, valid_only)


def _absolute(unit: Unit) -> str | None:
    """A unit's ``absoluteKeywordLocation``: its ``schemaLocation`` where that is a URI (a JSON
    Pointer, the location in a schema without a base URI, is empty or starts with ``/``)."""
    location: str = unit["schemaLocation"]
    return location if location and not location.startswith("/") else None


def _errors(root: Unit) -> list[dict[str, Any]]:
    entries = []
    for unit in _walk(root, valid_only=False):
        for texts in unit.get("errors", {}).values():
            for text in texts if isinstance(texts, list) else [texts]:
                entries.append(
                    {
                        "schemaLocation": unit["schemaLocation"],
                        "absoluteKeywordLocation": _absolute(unit),
                        "instanceLocation": unit["instanceLocation"],
                        "error": text,
                    }
                )
    return entries


def _annotations(root: Unit) -> list[dict[str, Any]]:
    return [
        {
            "schemaLocation": unit["schemaLocation"],
            "absoluteKeywordLocation": _absolute(unit),
            "instanceLocation": unit["instanceLocation"],
            "annotations": unit["annotations"],
        }
        for unit in _walk(root, valid_only=True)
        if "annotations" in unit
    ]


def as_list(root: Unit) -> dict[str, Any]:
    """The list output: every unit of the hierarchical one, in pre-order, without ``details``."""
    details = [
        {key: item for key, item in unit.items() if key != "details"}
        for unit in _walk(root, valid_only=False)
    ]
    return {"valid": root["valid"], "details": details}
