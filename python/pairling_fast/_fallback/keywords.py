"""The caller's keywords (``Validator(keywords=...)``, jsonschema-rs's ``keywords=``) on the
fallback, as the Rust core builds them (``UserKeyword`` in rust/validate/mod.rs, the classes
called in rust/python/schemas.rs)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any, Protocol

import jsonschema
import jsonschema.validators
import referencing

from .._pointers import escape_pointer_token, path_of
from ..codes import INVALID_SCHEMA
from ..errors import SchemaCompileError

__all__ = ["UserKeywords"]


class _Locations(Protocol):
    """Where each object of the schema documents is (``validate._SchemaLocations``)."""

    tokens: dict[int, tuple[str, ...]]


class UserKeywords:
    """The caller's keyword classes: each called once at compile time where a schema object holds
    the keyword, with (a copy of that object, the keyword's value, its location as jsonschema-rs's
    list); what the call raises is the schema's compile error, in jsonschema-rs's words."""

    def __init__(
        self,
        classes: Mapping[str, Callable[[Any, Any, list[str | int]], Any]],
        documents: list[Any],
        locations: _Locations,
        specification: referencing.Specification[Any],
    ) -> None:
        self._built: dict[tuple[int, str], Any] = {}
        pending = list(documents) if classes else []
        while pending:  # every schema object, not the data inside keywords' values
            schema = pending.pop()
            if not isinstance(schema, dict):
                continue
            pending.extend(specification.subresources_of(schema))
            for name in classes.keys() & schema.keys():
                tokens = (*locations.tokens.get(id(schema), ()), name)
                pointer = "".join(f"/{escape_pointer_token(token)}" for token in tokens)
                try:
                    built = classes[name](copy.deepcopy(schema), schema[name], path_of(pointer))
                except Exception as error:
                    raise SchemaCompileError(
                        INVALID_SCHEMA,
                        f"Failed to instantiate keyword class '{name}': "
                        f"{type(error).__name__}: {error}",
                        pointer,
                    ) from None
                self._built[id(schema), name] = built
        self._names = list(classes)

    def extend(self, validator_class: Any) -> Any:
        """``validator_class`` with the caller's keywords, which replace built-ins of their name."""
        if not self._names:
            return validator_class
        return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            validator_class, validators={name: partial(self._errors, name) for name in self._names}
        )

    def _errors(
        self, name: str, _validator: Any, _value: Any, instance: Any, schema: Any
    ) -> Iterator[jsonschema.ValidationError]:
        """The keyword object's errors: ``iter_errors``'s where it has one, else the one
        ``validate`` raises; each exception's text is the message."""
        keyword = self._built.get((id(schema), name))
        if keyword is None:
            return  # a schema object no walk reached (inside a keyword's value): as the core
        errors: list[BaseException] = []
        try:
            if hasattr(keyword, "iter_errors"):
                errors.extend(keyword.iter_errors(instance))
            else:
                keyword.validate(instance)
        except Exception as raised:
            errors.append(raised)
        for failure in errors:
            yield jsonschema.ValidationError(str(failure))
