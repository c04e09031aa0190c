"""Project defaults for ``pairling-fast check``: ``[tool.pairling-fast]`` (or
``[tool.pairling_fast]``) in ``pyproject.toml``, or ``pairling-fast.toml``.

Looked up from the working directory upwards; the first ``pairling-fast.toml`` (keys at the top
level) or ``pyproject.toml`` with a ``[tool.pairling-fast]`` or ``[tool.pairling_fast]`` table
wins (the command's spelling and the package's are both accepted; a file with both is an error,
as one would silently lose). Unknown keys and bad values
are errors, so a typo never silently turns a check off. Command-line options override these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast, get_args

from ._tables import parse_toml
from .codes import CODES
from .errors import PairlingError
from .journal.options import Payloads
from .options import FailOn, SeverityOverride
from .redact import DEFAULT_MASK
from .report import SEVERITIES
from .schemas import release

__all__ = ["CONFIG_FILE", "Config", "ConfigError", "find_config", "load_config"]

CONFIG_FILE = "pairling-fast.toml"
PYPROJECT = "pyproject.toml"
FAIL_ON = get_args(FailOn)
KEYS = (
    "car-version",
    "exclude",
    "fail-on",
    "follow-symlinks",
    "max-findings",
    "payloads",
    "redact",
    "require-files",
    "severity",
    "state",
)
# The command is spelled pairling-fast, the package pairling_fast: users write either.
SECTIONS = ("pairling-fast", "pairling_fast")


class ConfigError(PairlingError, ValueError):
    """A configuration file that cannot be read or holds an unknown key or a bad value."""


@dataclass(frozen=True)
class Config:
    """The defaults a configuration file gives; None where it says nothing."""

    exclude: tuple[str, ...] = ()
    fail_on: FailOn | None = None
    follow_symlinks: bool | None = None
    max_findings: int | None = None
    require_files: bool | None = None
    severity: dict[str, SeverityOverride] = field(default_factory=dict)
    source: str | None = None
    car_version: str | None = None
    # `check --state`'s file; a relative path is taken from the configuration file's directory.
    state: str | None = None
    # CAR's payload contracts for journals (`check --payloads`).
    payloads: Payloads | None = None
    # `check --redact`: the mask that replaces instance values in messages (true: "***").
    redact: str | None = None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8")
        return parse_toml(text)
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 (byte {error.start})") from None
    except ValueError as error:  # tomllib's TOMLDecodeError
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def _mentions_us(path: Path) -> bool:
    """Whether a pyproject.toml can hold our table at all: another project's file, even a
    broken one (not UTF-8, not TOML), is not ours to fail on."""
    try:
        return b"pairling" in path.read_bytes()  # pairling_fast, pairling-fast
    except OSError:
        return True  # reading it again reports why


def _string_list(where: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: {key} must be a list of glob strings")
    return tuple(value)


def _severities(where: str, value: Any) -> dict[str, SeverityOverride]:
    if not isinstance(value, dict):
        raise ConfigError(f'{where}: severity must be a table such as {{PF305 = "off"}}')
    allowed = (*SEVERITIES, "off")
    checked: dict[str, SeverityOverride] = {}
    for code, level in value.items():
        if code not in CODES:
            raise ConfigError(f"{where}: severity names unknown finding code {code!r}")
        if level not in allowed:
            raise ConfigError(
                f"{where}: severity of {code} must be one of {', '.join(allowed)}, not {level!r}"
            )
        checked[code] = cast(SeverityOverride, level)
    return checked


def load_config(section: Mapping[str, Any], where: str) -> Config:
    """Validate one configuration table (``where`` names it in error messages)."""
    unknown = sorted(set(section) - {*KEYS, "car_version"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known keys: {', '.join(KEYS)})")
    fail_on = section.get("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise ConfigError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    follow = section.get("follow-symlinks")
    if follow is not None and not isinstance(follow, bool):
        raise ConfigError(f"{where}: follow-symlinks must be true or false")
    max_findings = section.get("max-findings")
    if max_findings is not None and (
        isinstance(max_findings, bool) or not isinstance(max_findings, int) or max_findings < 0
    ):
        raise ConfigError(f"{where}: max-findings must be a whole number, 0 for no limit")
    require_files = section.get("require-files")
    if require_files is not None and not isinstance(require_files, bool):
        raise ConfigError(f"{where}: require-files must be true or false")
    state = section.get("state")
    if state is not None and (not isinstance(state, str) or not state):
        raise ConfigError(f"{where}: state must be a file name (the journal state file)")
    payloads = section.get("payloads")
    if payloads is not None and payloads not in get_args(Payloads):
        modes = [f'"{mode}"' for mode in get_args(Payloads)]
        raise ConfigError(f"{where}: payloads must be {', '.join(modes[:-1])} or {modes[-1]}")
    redact = section.get("redact")
    if redact is not None and not (
        isinstance(redact, bool) or (isinstance(redact, str) and redact)
    ):
        raise ConfigError(f'{where}: redact must be true, false or a mask such as "***"')
    return Config(
        car_version=_car_version(where, section),
        exclude=_string_list(where, "exclude", section.get("exclude", [])),
        fail_on=fail_on,
        follow_symlinks=follow,
        max_findings=max_findings,
        require_files=require_files,
        severity=_severities(where, section.get("severity", {})),
        source=where,
        state=state,
        payloads=payloads,
        redact=(DEFAULT_MASK if redact is True else redact or None),
    )


def _car_version(where: str, section: Mapping[str, Any]) -> str | None:
    """``car-version`` (or ``car_version``): a bundled wire schema's CAR release."""
    keys = [key for key in ("car-version", "car_version") if key in section]
    if not keys:
        return None
    if len(keys) > 1:
        raise ConfigError(f"{where}: car-version and car_version both given; keep one")
    version = section[keys[0]]
    if not isinstance(version, str):
        raise ConfigError(f'{where}: {keys[0]} must be a string such as "0.58.0"')
    try:
        release(version)
    except ValueError as error:
        raise ConfigError(f"{where}: {keys[0]}: {error}") from None
    return version


def _section_of(path: Path) -> tuple[Mapping[str, Any], str] | None:
    document = _read_toml(path)
    if path.name != PYPROJECT:
        return document, str(path)
    tool = document.get("tool")
    present = [name for name in SECTIONS if isinstance(tool, dict) and name in tool]
    if not present:
        return None
    if len(present) > 1:
        raise ConfigError(
            f"{path}: both [tool.pairling-fast] and [tool.pairling_fast]; keep one of them"
        )
    name = present[0]
    section = tool[name]  # type: ignore[index]
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.{name}] must be a table")
    return section, f"{path} [tool.{name}]"


def find_config(start: Path, explicit: Path | None = None) -> Config:
    """The configuration for a run started in ``start`` (or the file ``explicit`` names)."""
    if explicit is not None:
        found = _section_of(explicit)
        if found is None:
            return Config(source=str(explicit))
        return _beside(load_config(*found), explicit)
    directory = start.resolve()
    for candidate in (directory, *directory.parents):
        for name in (CONFIG_FILE, PYPROJECT):
            path = candidate / name
            if path.is_file() and (name != PYPROJECT or _mentions_us(path)):
                found = _section_of(path)
                if found is not None:
                    return _beside(load_config(*found), path)
    return Config()


def _beside(config: Config, path: Path) -> Config:
    """``config`` with its ``state`` file's relative path taken from the directory of ``path``,
    the configuration file, as a project's paths are."""
    if config.state is None or os.path.isabs(config.state):
        return config
    return replace(config, state=os.path.join(path.parent, config.state))
