"""Compiled JSON Schema validators: built once, reused for every instance."""

from __future__ import annotations

import builtins
import copy
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import _backend
from ._pointers import value_at
from .codes import SCHEMA_VIOLATION
from .errors import CanonicalizationError, ValidationError
from .redact import redact_message
from .report import BestMatch, Finding, Report

__all__ = [
    "DRAFTS",
    "SCHEMA_VIOLATION",
    "Draft4Validator",
    "Draft6Validator",
    "Draft7Validator",
    "Draft201909Validator",
    "Draft202012Validator",
    "Evaluation",
    "FancyRegexOptions",
    "RegexOptions",
    "Validator",
    "schema_validator",
    "validator_cls_for",
]

DRAFTS = {
    4: "http://json-schema.org/draft-04/schema#",
    6: "http://json-schema.org/draft-06/schema#",
    7: "http://json-schema.org/draft-07/schema#",
    19: "https://json-schema.org/draft/2019-09/schema",
    20: "https://json-schema.org/draft/2020-12/schema",
}
"""``draft=`` values, jsonschema-rs's (``jsonschema_rs.Draft7`` is 7, ``Draft202012`` 20), and the
meta-schema each stands for."""


def _draft_named(uri: object) -> int | None:
    """The draft a ``$schema`` names, as jsonschema-rs reads it: one of the five meta-schema URIs,
    by ``http`` or ``https``, with or without the empty fragment; ``None`` for any other."""
    if not isinstance(uri, str):
        return None
    for scheme in ("http://", "https://"):
        if uri.startswith(scheme):
            address = uri[len(scheme) :].removesuffix("#")
            break
    else:
        return None
    return next(
        (
            draft
            for draft, known in DRAFTS.items()
            if known.split("://", 1)[1].removesuffix("#") == address
        ),
        None,
    )


def validator_cls_for(schema: Any) -> type[Validator]:
    """The ``Draft…Validator`` class of ``schema``'s draft, from its ``$schema``;
    ``Draft202012Validator`` when it names none of the five drafts (or is not a dict), as
    jsonschema-rs's function of the name. A ``str`` is JSON text, as there."""
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError as error:
            raise ValueError(f"schema is not JSON text: {error}") from None
    uri = schema.get("$schema") if isinstance(schema, dict) else None
    return _DRAFT_CLASSES[_draft_named(uri) or 20]


def _in_draft(schema: Any, draft: int | None) -> Any:
    """``schema`` read in ``draft`` whatever its ``$schema`` says, as jsonschema-rs's
    ``Draft7Validator`` reads it: the root's ``$schema`` names that draft."""
    if draft is None:
        return schema
    if draft not in DRAFTS:
        known = ", ".join(str(number) for number in DRAFTS)
        raise ValueError(f"draft must be one of {known} (jsonschema-rs's numbers), not {draft!r}")
    return {**schema, "$schema": DRAFTS[draft]} if isinstance(schema, dict) else schema


_NO_DOCUMENT: Any = object()
"""The document of a finding made from JSON text: its ``instance`` stays ``None``."""


def _violation_finding(
    raw: _backend.RawViolation, mask: str | None = None, document: Any = _NO_DOCUMENT
) -> Finding:
    pointer, schema_pointer, _keyword, message, best = raw
    best_match = None if best is None else BestMatch(*best)
    instance = None if document is _NO_DOCUMENT else value_at(document, pointer)
    finding = Finding.of(
        SCHEMA_VIOLATION,
        message,
        pointer=pointer,
        schema_pointer=schema_pointer,
        best_match=best_match,
        instance=instance,
    )
    return finding if mask is None else finding.redacted(mask)


def json_error_finding(error: CanonicalizationError) -> Finding:
    """A strict-JSON error (syntax, duplicate key, …) as a finding."""
    message = error.message
    if error.line is not None:
        message += f" (line {error.line}, column {error.column})"
    return Finding.of(
        error.code,
        message,
        line=error.line,
        pointer=error.pointer,
        column=error.column if error.line is not None else None,
    )


@dataclass(frozen=True)
class FancyRegexOptions:
    """``pattern_options``: the fancy-regex engine (lookaround, backreferences), jsonschema-rs's
    class of the name; a limit left ``None`` keeps the engine's default. The Rust core applies
    the three; the fallback matches with its time limit instead (docs/limits.md)."""

    backtrack_limit: int | None = None
    size_limit: int | None = None
    dfa_size_limit: int | None = None


@dataclass(frozen=True)
class RegexOptions:
    """``pattern_options``: the linear-time engine, jsonschema-rs's class of the name; a schema
    whose pattern has lookaround or a backreference is refused (``SchemaCompileError`` PF102),
    on both backends. The limits apply on the Rust core."""

    size_limit: int | None = None
    dfa_size_limit: int | None = None


def _pattern_tuple(
    options: FancyRegexOptions | RegexOptions | None,
) -> tuple[str, int | None, int | None, int | None] | None:
    if options is None:
        return None
    if isinstance(options, FancyRegexOptions):
        return ("fancy-regex", options.backtrack_limit, options.size_limit, options.dfa_size_limit)
    if isinstance(options, RegexOptions):
        return ("regex", None, options.size_limit, options.dfa_size_limit)
    raise TypeError(
        f"pattern_options must be FancyRegexOptions or RegexOptions, not {type(options).__name__}"
    )


class Evaluation:
    """One instance evaluated against a schema, in the JSON Schema output formats (2020-12 core,
    section 12.4), as jsonschema-rs's ``Evaluation``: ``flag()``, ``list()``, ``hierarchical()``,
    ``errors()`` and ``annotations()``. On the Rust core they are the jsonschema crate's,
    jsonschema-rs's own; the fallback builds them as the crate does (docs/pipelines.md)."""

    def __init__(self, output: _backend.EvaluationOutput, mask: str | None = None) -> None:
        valid, listed, hierarchical, errors, annotations = output
        if mask is not None:
            for unit in listed["details"]:
                _mask_unit(unit, mask)
            _mask_tree(hierarchical, mask)
            for entry in errors:
                entry["error"] = redact_message(entry["error"], entry["schemaLocation"], mask)
        self.valid = valid
        self._list = listed
        self._hierarchical = hierarchical
        self._errors = errors
        self._annotations = annotations

    def flag(self) -> dict[str, bool]:
        """``{"valid": ...}``."""
        return {"valid": self.valid}

    def list(self) -> dict[str, Any]:
        """``{"valid": ..., "details": [unit, ...]}``, every output unit in evaluation order."""
        return copy.deepcopy(self._list)

    def hierarchical(self) -> dict[str, Any]:
        """The root output unit, each unit's ``details`` holding the units below it."""
        return copy.deepcopy(self._hierarchical)

    def errors(self) -> builtins.list[dict[str, Any]]:
        """Each error: ``schemaLocation``, ``absoluteKeywordLocation``, ``instanceLocation``,
        ``error`` (the message), as jsonschema-rs's ``Evaluation.errors()``."""
        return copy.deepcopy(self._errors)

    def annotations(self) -> builtins.list[dict[str, Any]]:
        """Each annotation of the valid units: ``schemaLocation``, ``absoluteKeywordLocation``,
        ``instanceLocation``, ``annotations`` (the value), as jsonschema-rs's
        ``Evaluation.annotations()``: values of your schema (``title``, ``default``, …) and the
        names of the members and the indexes that applicators evaluated, which ``mask`` leaves,
        as jsonschema-rs's does."""
        return copy.deepcopy(self._annotations)


def _mask_unit(unit: dict[str, Any], mask: str) -> None:
    errors = unit.get("errors")
    if errors:
        path = unit["evaluationPath"]
        unit["errors"] = {
            keyword: redact_message(text, f"{path.rsplit('/', 1)[0]}/{keyword}", mask)
            for keyword, text in errors.items()
        }


def _mask_tree(unit: dict[str, Any], mask: str) -> None:
    _mask_unit(unit, mask)
    for child in unit.get("details", ()):
        _mask_tree(child, mask)


class Validator:
    """A JSON Schema (draft 4, 6, 7, 2019-09 or 2020-12, from ``$schema``; 2020-12 without one)
    compiled once on the active backend (docs/formats.md).

    ``validate_formats=None`` follows the draft: drafts 4 to 7 assert formats, 2019-09 and 2020-12
    (unless the meta-schema lists the format-assertion vocabulary) treat them as
    annotations. ``resources`` maps URIs to schemas that ``$ref`` may name; any other remote
    ``$ref`` is refused at construction (``SchemaCompileError`` PF103) — nothing is fetched.
    ``draft`` (4, 6, 7, 19 or 20, jsonschema-rs's ``Draft4`` … ``Draft202012``; or the
    ``Draft7Validator`` … classes) reads the schema in that draft whatever its ``$schema``.
    ``base_uri`` is the root's base URI, against which its ``$id`` and ``$ref``s resolve
    (jsonschema-rs's option: a ``$ref`` to a sibling document then names it in ``resources``).
    ``pattern_options`` (``FancyRegexOptions`` or ``RegexOptions``, jsonschema-rs's) picks the
    engine of ``pattern`` and ``patternProperties`` and its limits.
    ``keywords`` maps keyword names to the caller's classes (jsonschema-rs's ``keywords=``): each
    is called once where the schema uses the keyword, with (the schema object holding it, its
    value, its location as a list), and the object's ``validate(instance)`` raises where the
    instance fails (the exception's text is the message; ``iter_errors(instance)``, where it has
    one, yields an exception per error); what the call raises is a ``SchemaCompileError`` PF102.
    ``formats`` maps format names to the caller's checks (``str -> bool``; called for strings
    only, where formats are asserted; one that raises does not match, its exception going to
    ``sys.unraisablehook``) and ``ignore_unknown_formats=False`` makes a format no check knows a
    ``SchemaCompileError`` PF102, as jsonschema-rs's options of those names; a validator with
    ``formats`` or ``keywords`` validates batches holding the GIL (it calls Python), every other
    keeps the core's GIL-free paths. ``mask`` (jsonschema-rs's option) replaces the instance
    values quoted in every finding's message, as jsonschema-rs's ``mask`` does (docs/reports.md),
    so findings can be published.

    Per document: ``is_valid``, ``iter_errors``, ``validate``; on JSON text ``is_valid_json``,
    ``validate_json``; per batch:
    ``is_valid_many``, ``iter_errors_many`` (docs/pipelines.md).
    """

    def __init__(
        self,
        schema: Any,
        *,
        validate_formats: bool | None = None,
        resources: Mapping[str, Any] | None = None,
        mask: str | None = None,
        formats: Mapping[str, Callable[[str], object]] | None = None,
        ignore_unknown_formats: bool = True,
        draft: int | None = None,
        base_uri: str | None = None,
        pattern_options: FancyRegexOptions | RegexOptions | None = None,
        keywords: Mapping[str, Callable[[Any, Any, builtins.list[str | int]], Any]] | None = None,
    ) -> None:
        self.schema = schema
        self.keywords = dict(keywords) if keywords is not None else None
        self.base_uri = base_uri
        self.pattern_options = pattern_options
        self.draft = draft
        self.validate_formats = validate_formats
        self.resources = dict(resources) if resources is not None else None
        self.mask = mask
        self.formats = dict(formats) if formats is not None else None
        self.ignore_unknown_formats = ignore_unknown_formats
        self.backend = _backend.active_name()
        self._compiled = _backend.active().compile_schema(
            _in_draft(schema, draft),
            validate_formats,
            self.resources,
            self.formats,
            ignore_unknown_formats,
            base_uri,
            _pattern_tuple(pattern_options),
            self.keywords,
        )
        self._bind()

    @classmethod
    def _from_compiled(
        cls, schema_id: str, compiled: _backend.CompiledSchema, mask: str | None = None
    ) -> Validator:
        self = cls.__new__(cls)
        self.schema = schema_id
        self.validate_formats = True
        self.resources = None
        self.mask = mask
        self.formats = None
        self.ignore_unknown_formats = True
        self.draft = None
        self.base_uri = None
        self.pattern_options = None
        self.keywords = None
        self.backend = _backend.active_name()
        self._compiled = compiled
        self._bind()
        return self

    def _bind(self) -> None:
        # A pipeline calls is_valid per document: the backend's own answer, with no Python frame
        # around it (the method below says the same, for the class and its documentation).
        self.is_valid = self._compiled.accepts  # type: ignore[method-assign]
        self.is_valid_json = self._compiled.accepts_json  # type: ignore[method-assign]
        if self.mask is not None:
            return  # the core's reports below quote values: a masked validator words its own
        # The same for validate_json where the backend builds the Report itself (the Rust core).
        report_json = getattr(self._compiled, "report_json", None)
        if report_json is not None:
            self.validate_json = report_json  # type: ignore[method-assign]
        # And validate, which the core answers for a valid document (raising through _raise_for).
        validate = getattr(self._compiled, "validate", None)
        if validate is not None:
            self.validate = validate  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its schema (or bundled id) where it is unpickled, e.g. on a Dask worker.
        if isinstance(self.schema, str):
            return (schema_validator, (self.schema, self.mask))
        return (
            _rebuild,
            (
                self.schema,
                self.validate_formats,
                self.resources,
                self.mask,
                self.formats,
                self.ignore_unknown_formats,
                self.draft,
                self.base_uri,
                self.pattern_options,
                self.keywords,
            ),
        )

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid; a value outside the JSON model is not."""
        return self._compiled.accepts(instance)

    def iter_errors(self, instance: Any) -> Iterator[Finding]:
        """Every reason ``instance`` is invalid, in (pointer, schema_pointer) order."""
        return iter(self._findings(instance))

    def evaluate(self, instance: Any) -> Evaluation:
        """``instance`` evaluated in the standard output formats (``Evaluation``), as
        jsonschema-rs's ``evaluate``; messages masked when the validator has a ``mask``. A value
        outside the JSON model raises ``CanonicalizationError``."""
        return Evaluation(self._compiled.evaluate(instance), self.mask)

    def validate(self, instance: Any) -> None:
        """Raise ``ValidationError`` (a ``ValueError``) listing every finding, if invalid."""
        findings = self._findings(instance)
        if findings:
            raise ValidationError(findings)

    def _findings(self, instance: Any) -> list[Finding]:
        try:
            raw = self._compiled.errors(instance)
        except CanonicalizationError as error:
            return [json_error_finding(error)]
        if not raw:
            return []
        return [_violation_finding(violation, self.mask, instance) for violation in raw]

    def is_valid_many(self, instances: Iterable[Any]) -> list[bool]:
        """``is_valid`` of each instance, in order. On the Rust core a large batch is validated
        without the GIL, on every core, while the next documents are read."""
        return self._compiled.accepts_many(_as_list(instances))

    def iter_errors_many(self, instances: Iterable[Any]) -> list[list[Finding]]:
        """The findings ``iter_errors`` gives for each instance, in order (empty when valid);
        batched as ``is_valid_many`` is."""
        documents = _as_list(instances)
        outcomes = self._compiled.errors_many(documents)
        return [
            _outcome_findings(outcome, self.mask, document) if outcome else []
            for outcome, document in zip(outcomes, documents, strict=True)
        ]

    def is_valid_json(self, data: bytes | str) -> bool:
        """Whether JSON text, parsed strictly, is a valid instance; text that is not strict JSON
        is not. ``is_valid`` of the parsed document without building Python objects, and
        without a ``Report``: ``validate_json`` says why a document is not valid."""
        return self._compiled.accepts_json(data)

    def validate_json(self, data: bytes | str) -> Report:
        """Parse JSON text strictly and validate it, without building Python objects first."""
        try:
            raw = self._compiled.errors_json(data)
        except CanonicalizationError as error:
            return _report_of(error)
        return _report_of(raw, self.mask)


class Draft4Validator(Validator):
    """A ``Validator`` reading its schema as draft 4, whatever its ``$schema`` (jsonschema-rs's
    class of the same name)."""

    DRAFT = 4

    def __init__(self, schema: Any, **options: Any) -> None:
        super().__init__(schema, draft=self.DRAFT, **options)


class Draft6Validator(Draft4Validator):
    """A ``Validator`` reading its schema as draft 6."""

    DRAFT = 6


class Draft7Validator(Draft4Validator):
    """A ``Validator`` reading its schema as draft 7."""

    DRAFT = 7


class Draft201909Validator(Draft4Validator):
    """A ``Validator`` reading its schema as draft 2019-09."""

    DRAFT = 19


class Draft202012Validator(Draft4Validator):
    """A ``Validator`` reading its schema as draft 2020-12."""

    DRAFT = 20


_DRAFT_CLASSES: dict[int, type[Validator]] = {
    4: Draft4Validator,
    6: Draft6Validator,
    7: Draft7Validator,
    19: Draft201909Validator,
    20: Draft202012Validator,
}


def _raise_for(outcome: list[_backend.RawViolation] | CanonicalizationError, document: Any) -> None:
    """``validate``'s error for the core's outcome of an invalid document."""
    findings = _outcome_findings(outcome, None, document)
    if findings:
        raise ValidationError(findings)


def _report_of(
    outcome: list[_backend.RawViolation] | CanonicalizationError, mask: str | None = None
) -> Report:
    """The ``validate_json`` report of the core's outcome (its violations, or the parse error)."""
    return Report(findings=_outcome_findings(outcome, mask))


def _outcome_findings(
    outcome: list[_backend.RawViolation] | CanonicalizationError,
    mask: str | None = None,
    document: Any = _NO_DOCUMENT,
) -> list[Finding]:
    if isinstance(outcome, CanonicalizationError):
        return [json_error_finding(outcome)]
    return [_violation_finding(violation, mask, document) for violation in outcome]


def _as_list(items: Iterable[Any]) -> list[Any]:
    return items if type(items) is list else list(items)


def _rebuild(
    schema: Any,
    validate_formats: bool | None,
    resources: dict[str, Any] | None,
    mask: str | None = None,
    formats: dict[str, Callable[[str], object]] | None = None,
    ignore_unknown_formats: bool = True,
    draft: int | None = None,
    base_uri: str | None = None,
    pattern_options: FancyRegexOptions | RegexOptions | None = None,
    keywords: dict[str, Callable[[Any, Any, list[str | int]], Any]] | None = None,
) -> Validator:
    return Validator(
        schema,
        validate_formats=validate_formats,
        resources=resources,
        mask=mask,
        formats=formats,
        ignore_unknown_formats=ignore_unknown_formats,
        draft=draft,
        base_uri=base_uri,
        pattern_options=pattern_options,
        keywords=keywords,
    )


_bundled: dict[tuple[str, str, str | None], Validator] = {}


def schema_validator(schema_id: str, mask: str | None = None) -> Validator:
    """The validator of a bundled schema id (``pairling_fast.schemas.ids()``), formats asserted;
    ``mask`` as ``Validator``'s."""
    key = (_backend.active_name(), schema_id, mask)
    cached = _bundled.get(key)
    if cached is None:
        if schema_id not in _backend.active().bundled_schema_ids():
            raise KeyError(f"unknown schema id {schema_id!r}; see pairling_fast.schemas.ids()")
        compiled = _backend.active().bundled_validator(schema_id)
        cached = _bundled[key] = Validator._from_compiled(schema_id, compiled, mask)
    return cached
