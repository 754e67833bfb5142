"""Limits for untrusted input, and the checks on decoded JSON that msgspec does not make.

Order of work for one input (see ``jsonio.read_input`` and ``jsonio.decode``):

1. **size**: a regular file's size is checked from ``fstat`` before a byte is read; a stream
   (stdin, a pipe, a device) is read only up to ``max_bytes`` + 1 bytes.
2. **syntax**: msgspec decodes (strict UTF-8, no NaN/Infinity; its own recursion guard turns
   absurd nesting into an error, never a crash).
3. **value checks**, before any schema validation or conversion (:func:`check_value`):
   nesting depth, integers beyond ±(2^53 − 1), string length, duplicate object keys.

The value checks run at C speed: a walk, level by level in slices, whose per-step work is
``gc.get_referents`` / ``map`` / ``itertools.compress`` (no Python code per value), and, for
duplicate keys, a comparison of the ``:`` count of the input with that of msgspec's re-encoding
of what it decoded (a dropped duplicate always removes at least one ``:``). Only when a check
fails is a slower exact pass made, to name the JSON path.
"""

from __future__ import annotations

import gc
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import add
from typing import Any

import msgspec

from asif_convert._errors import InvalidInput, Problem, pointer

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

MAX_SAFE_INTEGER = 2**53 - 1  # the largest integer every JSON reader holds exactly (I-JSON, RFC 7493)

# The deepest nesting asif-convert can be asked to accept. Its own code recurses on free-form
# JSON (one or two Python frames per level); tests prove conversions in both directions at this
# depth, with room left under Python's default recursion limit (1000) for the caller's stack.
DEPTH_CEILING = 400

# The largest size a limit may name (4 EiB): beyond any file, and small enough that a read of
# one byte more than the limit is still a size the operating system takes.
SIZE_CEILING = 1 << 62


@dataclass(frozen=True)
class Limits:
    """What asif-convert agrees to read. The defaults fit real sessions and refuse abuse:

    - ``max_bytes`` (512 MiB): the largest sessions we know of are a few hundred MB; a
      conversion holds the input, its decoded form and the output at once (several times the
      file size), so the default caps memory at a few GB.
    - ``max_depth`` (256): real sessions nest 10-20 levels (the 200 MB benchmark sessions: 11);
      tool arguments and payloads rarely exceed 30. 256 leaves ample room. The limits bind
      outputs too (:func:`check_output`): a conversion adds a few levels, and whatever
      asif-convert writes must read back under the limits it was written with.
    - ``max_string`` (64 MiB, in characters): the longest legitimate strings are inline
      base64 attachments; 64 MiB holds a 48 MB file, more than the inline limits of the
      Anthropic and OpenAI APIs (a 32 MB PDF is 43 MB of base64).
    """

    max_bytes: int = 512 * MiB
    max_depth: int = 256
    max_string: int = 64 * MiB
    # For input its producer vouches for (``--trusted-input``): the value checks on the decoded
    # input (depth, integers, string lengths, duplicate keys) are skipped, about a msgspec decode's
    # worth of time. The size, strict JSON, the schema and every check on the output still hold;
    # input nested beyond what the conversion can recurse is then refused without its path.
    trusted: bool = False

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_string"):
            problem = size_limit_problem(name, getattr(self, name))
            if problem is not None:
                raise ValueError(problem)
        problem = _out_of_bounds("max_depth", self.max_depth, DEPTH_CEILING,
                                   ", the deepest nesting asif-convert can convert safely")
        if problem is not None:
            raise ValueError(problem)
        if not isinstance(self.trusted, bool):
            raise ValueError(f"trusted must be True or False, not {self.trusted!r}")


def _out_of_bounds(name: str, value: Any, ceiling: int, why: str) -> str | None:
    """Why ``value`` cannot be the limit ``name`` (a whole number from 1 to ``ceiling``), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"{name} must be a positive integer, not {value!r}"
    if value > ceiling:
        return f"{name} {value} is above {ceiling}{why}"
    return None


def size_limit_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the size limit ``name`` (1 byte to 4 EiB), or None."""
    return _out_of_bounds(name, value, SIZE_CEILING, " (4 EiB), the largest size a limit may name")


_SIZE = re.compile(r"\s*(\d+)\s*(?:([kmg])i?b?)?\s*", re.IGNORECASE)
_UNITS = {None: 1, "k": KiB, "m": MiB, "g": GiB}


def parse_size(text: str | int) -> int:
    """``"512M"``, ``"64MiB"``, ``"1g"``, ``"1000"`` -> bytes (units are powers of 1024)."""
    if isinstance(text, int):
        return text
    match = _SIZE.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not a size (a whole number, optionally with K, M or G: times 1024, "
                         "1024² or 1024³)")
    size = int(match[1]) * _UNITS[match[2].lower() if match[2] else None]
    if size > SIZE_CEILING:
        raise ValueError(f"{text!r} is more than 4 EiB, the largest size a limit may name")
    return size


def depth_message(limits: Limits) -> str:
    """What a value nested beyond ``max_depth`` is told, at its path."""
    levels = "1 level" if limits.max_depth == 1 else f"{limits.max_depth} levels"
    return f"arrays and objects are nested more than {levels} deep here (--max-depth {limits.max_depth})"


def limit_problem(path: str, message: str) -> Problem:
    return Problem(rule="limit", path=path, message=message)


def check_size(size: int, limits: Limits, source: str) -> None:
    if size > limits.max_bytes:
        raise InvalidInput([limit_problem("", f"the input is {size:,} bytes, more than the limit of "
                                              f"{limits.max_bytes:,} (--max-bytes)")], source)


# -- checks on the decoded value --------------------------------------------------------------------

class _ContainerTypes(dict[type, bool]):
    """Which types hold JSON values one level down: dicts, lists and msgspec structs (an output
    may hold IR nodes that msgspec writes as objects). Told once per type."""

    def __missing__(self, kind: type) -> bool:
        found = self[kind] = kind in (dict, list) or issubclass(kind, msgspec.Struct)
        return found


_IS_CONTAINER = _ContainerTypes().__getitem__
_IS_DICT = frozenset({dict}).__contains__
_IS_STR = frozenset({str}).__contains__
_IS_INT = frozenset({int}).__contains__  # bool is its own type: not counted
_IS_FLOAT = frozenset({float}).__contains__


def check_value(data: bytes, doc: Any, limits: Limits, source: str) -> None:
    """Refuse ``doc`` (decoded from ``data``) when it is nested too deeply, holds an integer
    beyond ±(2^53 − 1) or a string longer than the limit, or when ``data`` has an object with
    a key twice. Raises ``InvalidInput`` naming the JSON path. Trusted input is not checked."""
    if limits.trusted:
        return
    found = _walk(doc, limits, may_hold_long_strings(data, limits.max_string), zeros=True)
    if found is not None and found != ZERO:
        raise InvalidInput([_locate(doc, found, limits)], source)
    if _may_have_duplicates(data, doc) or (found == ZERO and _may_underflow(data)):
        problem = _slow_find(data)
        if problem is not None:
            raise InvalidInput([problem], source)


def lines_within_limits(data: bytes, values: list[Any], limits: Limits, encoded_colons: int) -> bool:
    """Whether the values of JSON Lines ``data`` (one per line, its every non-blank line decoded)
    are each certainly within ``limits``, as :func:`check_value` would find one document: told in
    one pass over them all, which is much cheaper than one per line. ``encoded_colons``: how many
    ``:`` msgspec's encodings of the values hold (the caller makes them once, for this and for
    their digest). False says only that they must be checked one by one (which names the line)."""
    if limits.trusted:
        return True
    found = _walk(values, limits, may_hold_long_strings(data, limits.max_string), level=-1, zeros=True)
    if found is not None and found != ZERO:
        return False
    colons = data.count(b":") + (data.count(b"\\u003a") + data.count(b"\\u003A") if b"\\u003" in data else 0)
    if encoded_colons != colons:  # (see _may_have_duplicates)
        return False
    return not (found == ZERO and _may_underflow(data))


def check_output(data: bytes, doc: Any, limits: Limits, source: str, at: tuple[str, ...] = (),
                 start: int = 0, items: list[bytes] | None = None, rest: Callable[[], int] | None = None) -> None:
    """Refuse to write an output (``doc``, encoded as ``data``) whose structure could not be read
    back under the limits it was written with: a conversion adds levels (an ASIF event holds a
    continuity message's content three levels down, a residual holds ASIF values deeper still)
    and can make one string of many (a native state's payload becomes one JSON text), so an
    input within ``max_depth`` and ``max_string`` can give an output beyond them. Raises
    ``InvalidInput`` naming the JSON path in the output.

    ``max_bytes`` is not checked here: it caps the memory a reading takes, and the other format
    may simply be larger (an ASIF session is several times its export); the command line says
    when reading the output back needs a larger ``--max-bytes``.

    ``doc`` may also be a slice of a list of the output (encoded as ``data``): the list at path
    ``at``, the slice's first item at index ``start`` of it, checked as part of the whole. The
    compact encodings of its items (``data`` is them joined by ``,``, after a ``[`` or ``,``),
    when given, usually prove the slice within the limits without a look at its values
    (:func:`_within_limits`). ``rest``, called only when the output is too deep: the nesting of
    the parts of the output not in ``doc``, so that the refusal names the ``--max-depth`` the
    whole output needs."""
    strings = may_hold_long_strings(data, limits.max_string)
    if items is not None and not strings and _within_limits(data, items, limits.max_depth - len(at) - 1):
        return
    found = _walk(doc, limits, strings, len(at))
    if found is not None:
        problem = _locate(msgspec.to_builtins(doc), found, limits, at, start)  # (structs as JSON values)
        if found == "depth":  # the limit it needs: the whole output's nesting
            needed = max(len(at) + nesting(msgspec.to_builtins(doc)), rest() if rest is not None else 0)
            advice = f"; --max-depth {needed} converts this input and reads its output back"
        else:
            advice = "; raise --max-string to convert this input" if found == "string" else ""
        raise InvalidInput([Problem(rule=problem.rule, path=problem.path,
                                    message=f"in the output: {problem.message}, so it could not be read back "
                                            f"with the same limits{advice}")], source)


# Digits as "0", what may come before a number in compact JSON (":", ",", "[") as ":", a minus
# sign as itself, everything else as a space.
_NUMBERS = bytes((0x30 if 0x30 <= c <= 0x39 else 0x3A if c in b":,[" else 0x2D if c == 0x2D else 0x20)
                 for c in range(256))
_LARGE = (b":" + b"0" * 16, b":-" + b"0" * 16)  # 2^53 has 16 digits: a number beyond ±(2^53 − 1) has as many


def nesting(value: Any) -> int:
    """How many arrays and objects deep ``value`` (JSON values) is: 0 for a scalar, 1 for ``[]``."""
    level, values = 0, [value]
    while containers := [v for v in values if type(v) in (dict, list)]:
        level += 1
        values = [v for c in containers for v in (c.values() if type(c) is dict else c)]
    return level


def _within_limits(data: bytes, items: list[bytes], room: int) -> bool:
    """Whether a list slice, in compact JSON ``data`` and its items' encodings ``items``, is
    certainly nested no deeper than ``room`` levels below the list and holds no integer beyond
    ±(2^53 − 1); False only sends it to the walk. Each is told from the bytes at C speed:

    - an item nested k levels deep opens k objects or arrays at once, and each opening is its
      own ``[`` or ``{`` byte, so an item with at most ``room`` of them (strings' included) is
      within the depth;
    - such an integer is written as 16 digits or more just after the ``:``, ``,`` or ``[`` (and
      minus sign) that precede every number of compact JSON; digits in strings only cost a walk."""
    numbers = data.translate(_NUMBERS)
    if any(large in numbers for large in _LARGE):
        return False
    opened = map(add, map(bytes.count, items, repeat(b"[")), map(bytes.count, items, repeat(b"{")))
    return max(opened, default=0) <= room  # (told in C: no Python step per item)


def may_hold_long_strings(data: bytes, limit: int) -> bool:
    """Whether the JSON text ``data`` may hold a string (or key) of more than ``limit``
    characters; False is certain, True sends the walk to look at every string.

    A character takes at least one byte, so such a string's literal spans more than ``limit``
    bytes with no unescaped quote inside, and so covers a whole block of ``limit // 2`` bytes
    (counted from the start of ``data``). When every whole block holds an unescaped quote, no
    string is that long: a search per block, at C speed, instead of a look at every string
    (1.2 s for a 100 MB record-dense export, which holds millions)."""
    if len(data) <= limit:
        return False
    block = max(limit // 2, 1)
    return not all(_has_unescaped_quote(data, start, start + block)
                   for start in range(0, len(data) - block + 1, block))


_QUOTES_TRIED = 16  # quotes looked at per block, and
_BACKSLASHES_COUNTED = 64  # backslashes counted before one, before leaving the block to the walk


def _has_unescaped_quote(data: bytes, start: int, end: int) -> bool:
    """Whether ``data[start:end]`` is seen to hold a ``"`` that ends or starts a string: one
    after an even number of backslashes (in valid JSON a backslash only starts an escape,
    ``\\`` included). The work is bounded: a block whose first quotes are all escaped, or
    follow long runs of backslashes, is said to hold none, and the walk looks at its strings."""
    at = data.find(b'"', start, end)
    for _ in range(_QUOTES_TRIED):
        if at == -1:
            return False
        run = 0
        while run <= _BACKSLASHES_COUNTED and run < at and data[at - run - 1] == 0x5C:  # (a backslash)
            run += 1
        if run % 2 == 0 and run <= _BACKSLASHES_COUNTED:
            return True
        at = data.find(b'"', at + 1, end)
    return False


_SLICE = 2048  # values per step of the walk: lists this short stay in the CPU's caches


ZERO = "zero"  # what _walk returns, with ``zeros``, for a document within the limits that holds a float 0


def _walk(doc: Any, limits: Limits, strings: bool, level: int = 0, zeros: bool = False) -> str | None:
    """Level by level over the containers, in slices of at most ``_SLICE`` values; returns what
    is wrong, if anything (with ``zeros``: ``ZERO`` when nothing is, but a float is 0, which a
    number too small for a double also reads as). ``doc`` is at depth ``level`` of its document
    (0: it is the document).

    A slice's children form the next step's values. Walking the widest level of a large
    document whole (a list of millions of references, copied several times) is memory-bound
    and twice as slow as walking it a slice at a time, depth first, earlier slices first."""
    pending: list[tuple[int, list[Any]]] = [(level - 1, [doc])]  # (depth of the values' container, values)
    zero = False
    while pending:
        depth, values = pending.pop()
        types = list(map(type, values))
        ints = list(compress(values, map(_IS_INT, types)))
        if ints and (max(ints) > MAX_SAFE_INTEGER or min(ints) < -MAX_SAFE_INTEGER):
            return "integer"
        if zeros and not zero and float in types:
            zero = 0.0 in compress(values, map(_IS_FLOAT, types))
        if strings:
            dicts = compress(values, map(_IS_DICT, types))
            texts = chain(compress(values, map(_IS_STR, types)), chain.from_iterable(dicts))
            if max(map(len, texts), default=0) > limits.max_string:
                return "string"
        containers = list(compress(values, map(_IS_CONTAINER, types)))
        if not containers:
            continue
        if depth + 1 >= limits.max_depth:
            return "depth"
        children = gc.get_referents(*containers)  # list items and dict values (dict keys: see above)
        pending.extend((depth + 1, children[i:i + _SLICE])
                       for i in reversed(range(0, len(children), _SLICE)))
    return ZERO if zero else None


_ZEROS = b"0" * 24


def _may_underflow(data: bytes) -> bool:
    """Whether ``data`` may hold a number too small for a double (it reads as 0). Such a number
    is m × 10^-e below about 2.5e-324: with e under 100, m has over 220 zeros after its point,
    and else e has three digits. Either is told at C speed; the exact search follows a hit."""
    if _ZEROS in data:
        return True
    for marker in (b"e-", b"E-"):
        at = data.find(marker)
        while at >= 0:
            if at and 0x30 <= data[at - 1] <= 0x39 and data[at + 2:at + 5].isdigit():
                return True
            at = data.find(marker, at + 2)
    return False


def _locate(doc: Any, what: str, limits: Limits, at: tuple = (), start: int = 0) -> Problem:
    """The first value (depth-first, in document order) that fails check ``what``, as a Problem.
    ``doc`` is at path ``at`` of its document; when that is a list slice, its first item is at
    index ``start``."""
    stack: list[tuple[Any, tuple]] = [(doc, at)]
    if at and type(doc) is list and len(at) < limits.max_depth:  # its items, at their indices in the whole list
        stack = [(v, (*at, start + i)) for i, v in reversed(list(enumerate(doc)))]
    while stack:
        value, path = stack.pop()
        kind = type(value)
        if what == "depth" and kind in (dict, list) and len(path) == limits.max_depth:
            return limit_problem(pointer(*path), depth_message(limits))
        if what == "integer" and kind is int and abs(value) > MAX_SAFE_INTEGER:
            return Problem(rule="json", path=pointer(*path), message=_integer_message(value))
        if what == "string" and kind is str and len(value) > limits.max_string:
            return limit_problem(pointer(*path), f"a string of {len(value):,} characters, more than the limit of "
                                                 f"{limits.max_string:,} (--max-string)")
        if kind is dict:
            if what == "string":
                for key in value:
                    if len(key) > limits.max_string:
                        return limit_problem(pointer(*path), f"this object has a key of {len(key):,} characters, "
                                                             f"more than the limit of {limits.max_string:,} "
                                                             "(--max-string)")
            stack.extend((v, (*path, k)) for k, v in reversed(value.items()))
        elif kind is list:
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(value))))
    return limit_problem("", f"the input breaks the {what} limit")  # unreachable: _walk found one


def _integer_message(value: int | None) -> str:
    if value is None or value.bit_length() > 200:  # never print (or even convert) a huge number
        digits = "more than 4300" if value is None else f"about {int(value.bit_length() * 0.30103) + 1}"
        shown = f"of {digits} digits"
    else:
        shown = str(value)
    return (f"the integer {shown} is beyond ±(2^53 − 1) = ±{MAX_SAFE_INTEGER}: readers that hold numbers "
            "as doubles would silently round it, which ASIF forbids; write it as a string")


def _may_have_duplicates(data: bytes, doc: Any) -> bool:
    """Whether some object of ``data`` has a key twice (msgspec silently keeps the last).

    Every ``:`` of ``data`` is either a member separator or inside a string; msgspec writes the
    strings it decoded back with their ``:`` as is, so without duplicates the re-encoding has
    exactly as many, and with one it has fewer (the dropped member's separator, at least). An
    escaped colon (``\\u003a``) decodes to a ``:`` the input does not show, so those are counted
    as well."""
    colons = data.count(b":")
    if b"\\u003" in data:  # count escaped colons too (an over-count only sends us to the exact check)
        colons += data.count(b"\\u003a") + data.count(b"\\u003A")
    return colons > 0 and _colons(doc, 2) != colons


_CHUNK = 4096  # list items re-encoded at a time


def _colons(value: Any, levels: int) -> int:
    """The ``:`` count of ``msgspec.json.encode(value)``, made without holding the whole
    encoding (a second copy of the input's size) for ``levels`` levels of containers: an
    object's members are a key, a ``:`` and a value, and separators hold no ``:``."""
    if levels and type(value) is dict:
        return sum(_encode(k).count(b":") + 1 + _colons(v, levels - 1) for k, v in value.items())
    if levels and type(value) is list and len(value) > _CHUNK:
        return sum(_encode(value[i:i + _CHUNK]).count(b":") for i in range(0, len(value), _CHUNK))
    return _encode(value).count(b":")


_encode = msgspec.json.Encoder().encode


class _Duplicated(dict):
    key: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            dup = _Duplicated(obj)
            dup.key = key
            return dup
        seen.add(key)
    return obj  # pragma: no cover


class _Huge:
    """An integer too long for Python to convert (more than 4300 digits), as the slow parse sees it."""


def _integer(text: str) -> int | _Huge:
    return _Huge() if len(text) > 4000 else int(text)


class _Infinite(str):
    """A number beyond the range of a double (``1e999``), as the slow parse sees it: its text."""


class _Underflow(str):
    """A number too small for a double (``1e-400``: not 0, yet read as 0), as the slow parse sees it."""


def _number(text: str) -> float | _Infinite | _Underflow:
    value = float(text)
    if value == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        return _Underflow(text)
    return _Infinite(text) if value in (math.inf, -math.inf) else value


def _slow_find(data: bytes) -> Problem | None:
    """The exact (and slower: a Python hook per object) search for a duplicate key, a huge
    integer or a number beyond a double's range or too small for one, with its path; run only
    when the fast checks (or msgspec) say there may be one."""
    try:
        doc = json.loads(data, object_pairs_hook=_pairs, parse_int=_integer, parse_float=_number)
    except (ValueError, RecursionError):  # malformed further on: the caller reports what msgspec said
        return None
    stack: list[tuple[Any, tuple]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Huge):
            return Problem(rule="json", path=pointer(*path), message=_integer_message(None))
        if isinstance(value, _Infinite):
            return Problem(rule="json", path=pointer(*path), message=_range_message(value))
        if isinstance(value, _Underflow):
            return Problem(rule="json", path=pointer(*path), message=_underflow_message(value))
        if isinstance(value, _Duplicated):
            return Problem(rule="json", path=pointer(*path, value.key),
                           message=f"the key {value.key!r} appears more than once in this object; JSON readers "
                                   "disagree on which value counts, so asif-convert will not guess")
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(value))))
    return None


def huge_integer_problem(data: bytes) -> Problem:
    """For an integer msgspec refused as out of range (more digits than Python converts)."""
    return _slow_find(data) or Problem(rule="json", path="", message=_integer_message(None))


def out_of_range_problem(data: bytes) -> Problem:
    """For a number msgspec refused as beyond the range of a double (``1e999``)."""
    return _slow_find(data) or Problem(rule="json", path="", message=_range_message(None))


def _range_message(text: str | None) -> str:
    return (f"the number{_shown(text)} is beyond the range of a double (about ±1.8e308): JSON readers would "
            "read it as infinity or refuse it; write it as a string")


def _underflow_message(text: str) -> str:
    return (f"the number{_shown(text)} is too small for a double (below about 2.5e-324, yet not 0): JSON "
            "readers would silently read it as 0; write it as a string, or as 0")


def _shown(text: str | None) -> str:
    return "" if text is None else f" {text}" if len(text) <= 40 else f" {text[:20]}…{text[-10:]}"


# -- JSON texts inside a document's strings -------------------------------------------------------

class NestedTooDeep(ValueError):
    """A JSON text held in a document's string nests deeper than the converter carries."""


_decode_text = msgspec.json.Decoder().decode


def json_in_text(text: str) -> Any:
    """The JSON value a string of a document holds (a tool call's argument text, a resource's
    text), decoded as strictly as a document is (no NaN, no number beyond a double): raises
    ``ValueError`` when it holds none. The document's own limits never saw how deep it nests:
    deeper than ``DEPTH_CEILING``, the deepest the converter's own code recurses safely, raises
    ``NestedTooDeep`` (a ``ValueError`` too), instead of a ``RecursionError`` later."""
    try:
        value = _decode_text(text)
    except RecursionError:
        raise NestedTooDeep(f"nested more than {DEPTH_CEILING} levels deep") from None
    # (each level opens a bracket: a text with fewer brackets than the ceiling is within it)
    if text.count("[") + text.count("{") > DEPTH_CEILING and _nests_deeper(value, DEPTH_CEILING):
        raise NestedTooDeep(f"nested more than {DEPTH_CEILING} levels deep")
    return value


def beyond_safe_integers(value: Any) -> bool:
    """Whether a JSON value holds an integer beyond ±(2^53 − 1), which ASIF forbids (a value
    decoded from a document's string: the document's own limits never saw it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is int:
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return False


def _nests_deeper(value: Any, levels: int) -> bool:
    """Whether arrays and objects nest more than ``levels`` deep in ``value``, level by level."""
    layer = [value]
    for _ in range(levels):
        layer = list(compress(layer, map(_IS_CONTAINER, map(type, layer))))
        if not layer:
            return False
        layer = gc.get_referents(*layer)
    return any(map(_IS_CONTAINER, map(type, layer)))


# -- nesting too deep for the decoder itself ---------------------------------------------------

_TOKEN = re.compile(rb'[\[\]{}"\\]')


def deep_nesting_problem(data: bytes, limits: Limits) -> Problem:
    """For input whose nesting exceeded the decoder's recursion guard: the JSON path where it
    first passes ``max_depth`` (a scan of the bytes up to that point, then a decode of that
    prefix closed off), or the whole document when that cannot be told."""
    message = depth_message(limits)
    stack = bytearray()
    in_string = False
    pos = 0
    while (match := _TOKEN.search(data, pos)) is not None:
        char, pos = data[match.start()], match.end()
        if in_string:
            if char == 0x5C:  # backslash: skip the escaped character
                pos += 1
            elif char == 0x22:
                in_string = False
        elif char == 0x22:
            in_string = True
        elif char in b"[{":
            stack.append(char)
            if len(stack) > limits.max_depth:
                return limit_problem(_last_path(data[: match.start()], stack[:-1], limits.max_depth), message)
        elif char in b"]}" and stack:
            stack.pop()
    return limit_problem("", f"arrays and objects are nested too deeply to decode (--max-depth {limits.max_depth})")


def _last_path(prefix: bytes, open_brackets: bytearray, depth: int) -> str:
    closers = bytes(0x5D if c == 0x5B else 0x7D for c in reversed(open_brackets))
    try:
        node = msgspec.json.decode(prefix + b"null" + closers)
    except (msgspec.DecodeError, RecursionError):
        return ""
    path: list[str | int] = []
    for _ in range(depth):
        if isinstance(node, dict) and node:
            key = next(reversed(node))
            path.append(key)
            node = node[key]
        elif isinstance(node, list) and node:
            path.append(len(node) - 1)
            node = node[-1]
        else:
            return ""
    return pointer(*path)
