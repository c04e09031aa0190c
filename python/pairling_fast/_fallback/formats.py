"""jsonschema-rs's ``format`` checks, for the pure-Python backend (docs/formats.md).

The Rust core asserts jsonschema-rs 0.61.2's own check for every format that crate knows (except
the ones pairling_fast defines itself, in ``validate.py``); these are the same rules, written from
that crate's source (``src/keywords/format.rs``, ``src/keywords/rfc3986.rs``) and from the crates it
calls (``email_address``, ``std::net``, ``uuid-simd``, ``idna``'s UTS 46 mapping, which the ``idna``
package provides here). ``builtin_check(draft, name)`` mirrors its ``builtin_format``: which names a
draft knows.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from collections.abc import Callable

import idna

from .ecma_regex import is_valid_ecma_regex

__all__ = ["BUILTIN_NAMES", "builtin_check"]

Check = Callable[[str], bool]

# ---------------------------------------------------------------------------------------------
# URI templates (RFC 6570), JSON pointers (RFC 6901, relative: draft-handrews)

_TEMPLATE_OPERATORS = frozenset(b"+#./;?&=,!@|")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_NOT_LITERAL = frozenset([*range(0x21), *b'"<>%\\^`{|}', 0x7F])


def _varchar(data: bytes, i: int) -> int | None:
    """The end of a run of varchars from ``i`` (at least one), or ``None``."""
    start = i
    while i < len(data):
        if chr(data[i]).isascii() and (chr(data[i]).isalnum() or data[i] == ord("_")):
            i += 1
        elif data[i] == ord("%"):
            if i + 2 >= len(data) or data[i + 1] not in _HEX or data[i + 2] not in _HEX:
                return None
            i += 3
        else:
            break
    return i if i > start else None


def _varname(data: bytes, i: int) -> int | None:
    end = _varchar(data, i)
    while end is not None and end < len(data):
        byte = data[end]
        if byte == ord("."):
            end = _varchar(data, end + 1)
        elif (chr(byte).isascii() and (chr(byte).isalnum() or byte == ord("_"))) or byte == ord(
            "%"
        ):
            end = _varchar(data, end)
        else:
            break
    return end


def _varspec(data: bytes, i: int) -> int | None:
    end = _varname(data, i)
    if end is None or end >= len(data):
        return end
    if data[end] == ord(":"):
        end += 1
        if end >= len(data) or not (ord("1") <= data[end] <= ord("9")):
            return None
        end += 1
        digits = 1
        while end < len(data) and ord("0") <= data[end] <= ord("9") and digits < 4:
            end += 1
            digits += 1
    elif data[end] == ord("*"):
        end += 1
    return end


def is_uri_template(text: str) -> bool:
    data = text.encode()
    i = 0
    while i < len(data):
        if data[i] == ord("{"):
            i += 1
            if i < len(data) and data[i] in _TEMPLATE_OPERATORS:
                i += 1
            if i >= len(data):
                return False
            end = _varspec(data, i)
            while end is not None and end < len(data) and data[end] == ord(","):
                end = _varspec(data, end + 1)
            if end is None or end >= len(data) or data[end] != ord("}"):
                return False
            i = end + 1
        elif data[i] == ord("}"):
            return False
        elif data[i] == ord("%"):
            if i + 2 >= len(data) or data[i + 1] not in _HEX or data[i + 2] not in _HEX:
                return False
            i += 3
        elif data[i] in _NOT_LITERAL:
            return False
        else:
            i += 1
    return True


def _pointer_tokens_valid(rest: str) -> bool:
    escaped = False
    for char in rest:
        if escaped:
            if char not in "01":
                return False
            escaped = False
        elif char == "~":
            escaped = True
    return not escaped


def is_json_pointer(text: str) -> bool:
    return text == "" or (text.startswith("/") and _pointer_tokens_valid(text))


def is_relative_json_pointer(text: str) -> bool:
    digits = len(text) - len(text.lstrip("0123456789"))
    if digits == 0 or (digits > 1 and text[0] == "0"):
        return False
    rest = text[digits:]
    return rest in ("", "#") or is_json_pointer(rest)


# ---------------------------------------------------------------------------------------------
# Hostnames (RFC 1123, with RFC 5891/5892 checks of A-labels), IDN hostnames (UTS 46)


def _ascii_hostname(hostname: str) -> bool:
    if not hostname or len(hostname) > 253 or hostname.endswith(".") or not hostname.isascii():
        return False
    for label in hostname.split("."):
        if not label or len(label) > 63 or label[0] == "-" or label[-1] == "-":
            return False
        if not all(char.isalnum() or char == "-" for char in label):
            return False
    return True


def _decode_punycode(payload: str) -> str | None:
    try:
        return payload.encode("ascii").decode("punycode")
    except (UnicodeError, ValueError):
        return None


def is_hostname_rfc1034(hostname: str) -> bool:
    return _ascii_hostname(hostname)


def is_hostname(hostname: str) -> bool:
    if not _ascii_hostname(hostname):
        return False
    for label in hostname.split("."):
        punycode = label.startswith("xn--")
        if len(label) >= 4 and label[2:4] == "--" and not punycode:
            return False
        if punycode:
            decoded = _decode_punycode(label[4:])
            if decoded is None or not _unicode_label_valid(decoded):
                return False
    return True


_PVALID_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd"})
# Code points whose RFC 5892 contextual rules `_unicode_label_valid` checks itself.
_CONTEXTUAL = frozenset("\u200c\u200d\u00b7\u0375\u05f3\u05f4\u06fd\u06fe\u0f0b\u3007")
_DISALLOWED = frozenset("\u0640\u07fa\u302e\u302f\u3031\u3032\u3033\u3034\u3035\u303b")
_VIRAMAS = frozenset(
    "\u094d\u09cd\u0a4d\u0acd\u0b4d\u0bcd\u0c4d\u0ccd\u0d4d\u0dca\u0e3a\u0f84\u1039\u1714"
    "\u1734\u17d2\u1a60\u1b44\u1baa\u1bf2\u1bf3\u2d7f\ua806\ua8c4\ua953\uabed\U00010a3f"
    "\U00011046\U0001107f\U000110b9\U00011133\U000111c0\U00011235\U000112ea\U0001134d"
    "\U00011442\U000114c2\U000115bf\U0001163f\U000116b6\U0001172b\U00011839\U000119e0"
    "\U00011a34\U00011a47\U00011a99\U00011c3f\U00011d44\U00011d45\U00011d97"
)


def _unicode_label_valid(label: str) -> bool:
    """jsonschema-rs's ``validate_unicode_label``: the RFC 5892 contextual rules it checks."""
    if label and unicodedata.category(label[0]) in ("Mc", "Mn", "Me"):
        return False
    katakana_middle_dot = hiragana_katakana_han = arabic_indic = extended_arabic_indic = False
    previous: str | None = None
    for index, char in enumerate(label):
        following = label[index + 1] if index + 1 < len(label) else None
        if char == "\u200d" and previous not in _VIRAMAS:
            return False
        if char == "\u00b7" and (previous != "l" or following != "l"):
            return False
        if char == "\u0375" and not (following is not None and "\u0370" <= following <= "\u03ff"):
            return False
        if char in "\u05f3\u05f4" and not (
            previous is not None and "\u0590" <= previous <= "\u05ff"
        ):
            return False
        if char == "\u30fb":
            katakana_middle_dot = True
        elif "\u3040" <= char <= "\u30ff" or "\u4e00" <= char <= "\u9fff":
            hiragana_katakana_han = True
        elif "\u0660" <= char <= "\u0669":
            arabic_indic = True
        elif "\u06f0" <= char <= "\u06f9":
            extended_arabic_indic = True
        elif char in _DISALLOWED:
            return False
        elif (
            char not in _CONTEXTUAL
            and not char.isascii()
            and unicodedata.category(char) not in _PVALID_CATEGORIES
        ):
            return False
        previous = char
    if katakana_middle_dot and not hiragana_katakana_han:
        return False
    return not (arabic_indic and extended_arabic_indic)


def is_idn_hostname(hostname: str) -> bool:
    """UTS 46 ``ToASCII`` (STD3 rules, hyphens checked, DNS length verified), then the A-label
    checks of ``hostname`` and the contextual rules on the Unicode labels."""
    try:
        mapped = idna.uts46_remap(hostname, std3_rules=True, transitional=False)
        ascii_hostname = idna.encode(mapped, uts46=False, strict=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        return False
    if not is_hostname(ascii_hostname):
        return False
    labels = []
    for label in ascii_hostname.split("."):
        if label[:4].lower() == "xn--":
            decoded = _decode_punycode(label[4:])
            # An A-label must be the canonical encoding of its U-label.
            if decoded is None or decoded.encode("punycode").decode("ascii") != label[4:].lower():
                return False
            label = decoded
        labels.append(label)
    if not all(label and _unicode_label_valid(label) for label in labels):
        return False
    # RFC 5893: in a name with any right-to-left label, every label satisfies the Bidi rule.
    if any(
        unicodedata.bidirectional(char) in ("R", "AL", "AN") for label in labels for char in label
    ):
        try:
            for label in labels:
                idna.check_bidi(label, check_ltr=True)
        except idna.IDNABidiError:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Email (RFC 5321 via the `email_address` crate's default options)

_ATEXT_SYMBOLS = frozenset("!#$%&'*+-/=?^_`{|}~")


def _is_atext(char: str) -> bool:
    return char.isalnum() or char in _ATEXT_SYMBOLS or not char.isascii()


def _is_atom(text: str) -> bool:
    return bool(text) and all(_is_atext(char) for char in text)


def _is_qcontent(text: str) -> bool:
    chars = iter(text)
    for char in chars:
        if char == "\\":
            escaped = next(chars, None)
            if escaped is None or not ("\x21" <= escaped <= "\x7e"):
                return False
        elif not (
            char in " \t!"
            or "\x23" <= char <= "\x5b"
            or "\x5d" <= char <= "\x7e"
            or not char.isascii()
        ):
            return False
    return True


def _display_separator(text: str) -> int | None:
    in_quote = escaped = False
    separator = None
    for index, char in enumerate(text):
        if not in_quote and text.startswith(" <", index):
            separator = index
        if escaped:
            escaped = False
        elif in_quote and char == "\\":
            escaped = True
        elif char == '"':
            in_quote = not in_quote
    return separator


def _parse_email(address: str) -> tuple[str, str] | None:
    """``EmailAddress::from_str``: the (local part, domain) of a valid address, else ``None``."""
    display = ""
    email = address
    separator = _display_separator(address)
    if separator is not None:
        right = address[separator + 2 :].strip()
        if not right.endswith(">"):
            return None
        display, email = address[:separator].strip(), right[:-1]
    local, at, domain = email.rpartition("@")
    if not at:
        return None
    if not display and local.startswith("<"):
        return None
    if not local or len(local.encode()) > 64:
        return None
    if local.startswith('"') and local.endswith('"'):
        if len(local) <= 2 or not _is_qcontent(local[1:-1]):
            return None
    elif not all(_is_atom(part) for part in local.split(".")):
        return None
    if not domain or len(domain.encode()) > 254:
        return None
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        if not all(
            "\x21" <= c <= "\x5a" or "\x5e" <= c <= "\x7e" or not c.isascii() for c in literal
        ):
            return None
        return local, domain
    for sub in domain.split("."):
        if not sub or not sub[0].isalnum() or not sub[-1].isalnum() or len(sub.encode()) > 63:
            return None
        if not _is_atom(sub):
            return None
    return local, domain


def _email_domain_valid(domain: str, hostname: Check) -> bool:
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        if literal[:5].lower() == "ipv6:":
            return is_ipv6(literal[5:])
        return is_ipv4(literal)
    return hostname(domain)


def _email(address: str, hostname: Check, non_ascii_local_part: bool) -> bool:
    if address.startswith('""@'):
        return _email(f'"a"@{address[3:]}', hostname, non_ascii_local_part)
    parsed = _parse_email(address)
    if parsed is not None:
        local, domain = parsed
        if not non_ascii_local_part and not local.isascii():
            return False
        return _email_domain_valid(domain, hostname)
    if not non_ascii_local_part or address.isascii():
        return False
    if _parse_email("".join(c if c.isascii() else "a" for c in address)) is None:
        return False
    _local, at, domain = address.rpartition("@")
    return bool(at) and _email_domain_valid(domain, hostname)


def is_email(address: str) -> bool:
    return _email(address, is_hostname, non_ascii_local_part=False)


def is_idn_email(address: str) -> bool:
    return _email(address, is_idn_hostname, non_ascii_local_part=True)


# ---------------------------------------------------------------------------------------------
# IP addresses (Rust's `Ipv4Addr`/`Ipv6Addr` parsers), UUIDs, durations (RFC 3339 appendix A)


def is_ipv4(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(
        0 < len(part) <= 3
        and part.isascii()
        and part.isdigit()
        and (part == "0" or part[0] != "0")
        and int(part) <= 255
        for part in parts
    )


def is_ipv6(text: str) -> bool:
    if not text.isascii() or "%" in text or "/" in text:
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    # Python also takes an embedded IPv4 address with leading zeros; Rust does not.
    tail = text.rsplit(":", 1)[-1]
    return "." not in tail or is_ipv4(tail)


def is_uuid(text: str) -> bool:
    if len(text) != 36 or not text.isascii():
        return False
    groups = text.split("-")
    return [len(group) for group in groups] == [8, 4, 4, 4, 12] and all(
        _HEX.issuperset(group.encode()) for group in groups
    )


def is_duration(text: str) -> bool:
    if len(text) < 2 or text[0] != "P":
        return False
    date_units, time_units = "YMWD", "HMS"
    in_time = weeks = component = time_component = False
    last_date = last_time = 0
    seen: set[str] = set()
    i = 1
    while i < len(text):
        if text[i] == "T":
            if in_time or weeks:
                return False
            in_time = True
            i += 1
            continue
        start = i
        while i < len(text) and "0" <= text[i] <= "9":
            i += 1
        if i == start or i == len(text):
            return False
        unit = text[i]
        if not in_time:
            index = date_units.find(unit)
            if index < 0:
                return False
            if unit == "W":
                if component:
                    return False
                weeks = True
            elif weeks:
                return False
            if index < last_date or f"date {unit}" in seen:
                return False
            seen.add(f"date {unit}")
            last_date = index
        else:
            index = time_units.find(unit)
            if index < 0 or index < last_time or f"time {unit}" in seen:
                return False
            seen.add(f"time {unit}")
            last_time = index
            time_component = True
        component = True
        i += 1
    if not component or (in_time and not time_component):
        return False
    if {"date Y", "date D"} <= seen and "date M" not in seen:
        return False
    return not ({"time H", "time S"} <= seen and "time M" not in seen)


# ---------------------------------------------------------------------------------------------
# URIs (RFC 3986) and IRIs (RFC 3987)

_SUB_DELIMS = "!$&'()*+,;="
_UNRESERVED = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~" + _SUB_DELIMS
)


def _scheme_length(text: str) -> int | None:
    if not text or not (text[0].isascii() and text[0].isalpha()):
        return None
    for index, char in enumerate(text):
        if not (char.isascii() and (char.isalnum() or char in "+-.")):
            return index if char == ":" else None
    return None


def _scan(text: str, at: int, allowed: str, iri: bool) -> int | None:
    """The end of the run of ``allowed`` characters (plus unreserved ones, and percent-escapes)
    from ``at``; ``None`` for a bad percent-escape."""
    while at < len(text):
        char = text[at]
        if char in _UNRESERVED or char in allowed or (iri and not char.isascii()):
            at += 1
        elif char == "%":
            if not _HEX.issuperset(text[at + 1 : at + 3].encode()) or at + 3 > len(text):
                return None
            at += 3
        else:
            break
    return at


def _ip_literal(host: str) -> bool:
    if host[:1] in "vV":
        version, dot, rest = host[1:].partition(".")
        return (
            bool(version)
            and _HEX.issuperset(version.encode())
            and bool(dot)
            and bool(rest)
            and all(char in _UNRESERVED or char == ":" for char in rest)
        )
    return is_ipv6(host)


def _authority(text: str, iri: bool) -> bool:
    userinfo_end = text.rfind("@") if "[" not in text else text.find("@")
    if userinfo_end >= 0:
        userinfo = text[:userinfo_end]
        if _scan(userinfo, 0, ":", iri) != len(userinfo):
            return False
    host_port = text[userinfo_end + 1 :]
    if host_port.startswith("["):
        close = host_port.find("]")
        if close < 0 or not _ip_literal(host_port[1:close]):
            return False
        port = host_port[close + 1 :]
        return port == "" or (
            port[0] == ":" and port[1:].isascii() and (port[1:] == "" or port[1:].isdigit())
        )
    host_end = _scan(host_port, 0, "", iri)
    if host_end is None:
        return False
    rest = host_port[host_end:]
    return rest == "" or (
        rest[0] == ":" and (rest[1:] == "" or (rest[1:].isascii() and rest[1:].isdigit()))
    )


def _uri(text: str, absolute: bool, iri: bool) -> bool:
    scheme = _scheme_length(text)
    if absolute and scheme is None:
        return False
    at = 0 if scheme is None else scheme + 1
    if text.startswith("//", at):
        end = at + 2
        while end < len(text) and text[end] not in "/?#":
            end += 1
        if not _authority(text[at + 2 : end], iri):
            return False
        at = end
    elif scheme is None:
        segment_end = min((text.find(c, at) for c in "/?#" if c in text[at:]), default=len(text))
        if ":" in text[at:segment_end]:
            return False
    path_end = _scan(text, at, ":@/", iri)
    if path_end is None:
        return False
    at = path_end
    for marker in "?#":
        if text.startswith(marker, at):
            component_end = _scan(text, at + 1, ":@/?", iri)
            if component_end is None:
                return False
            at = component_end
    return at == len(text)


def is_uri(text: str) -> bool:
    return _uri(text, absolute=True, iri=False)


def is_uri_reference(text: str) -> bool:
    return _uri(text, absolute=False, iri=False)


def is_iri(text: str) -> bool:
    return _uri(text, absolute=True, iri=True)


def is_iri_reference(text: str) -> bool:
    return _uri(text, absolute=False, iri=True)


# ---------------------------------------------------------------------------------------------
# Which formats a draft knows (jsonschema-rs `builtin_format`)

_DRAFT_ORDER = ("draft4", "draft6", "draft7", "draft2019-09", "draft2020-12")


def builtin_check(draft: str, name: str) -> Check | None:
    """jsonschema-rs's check of ``format: name`` under ``draft`` (``None``: a name it does not
    know there, which asserts nothing)."""
    level = _DRAFT_ORDER.index(draft)
    since = {
        "duration": 3,
        "idn-hostname": 2,
        "iri": 2,
        "iri-reference": 2,
        "json-pointer": 1,
        "relative-json-pointer": 2,
        "uri-reference": 1,
        "uri-template": 1,
        "uuid": 3,
    }
    if level < since.get(name, 0):
        return None
    if name == "hostname" and level < 2:
        return is_hostname_rfc1034
    return _CHECKS.get(name)


_CHECKS: dict[str, Check] = {
    "duration": is_duration,
    "email": is_email,
    "hostname": is_hostname,
    "idn-email": is_idn_email,
    "idn-hostname": is_idn_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "iri": is_iri,
    "iri-reference": is_iri_reference,
    "json-pointer": is_json_pointer,
    "regex": is_valid_ecma_regex,
    "relative-json-pointer": is_relative_json_pointer,
    "uri": is_uri,
    "uri-reference": is_uri_reference,
    "uri-template": is_uri_template,
    "uuid": is_uuid,
}

BUILTIN_NAMES = tuple(sorted(_CHECKS))
