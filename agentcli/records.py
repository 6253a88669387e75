"""``record``: how every dataclass in agentcli is declared, frozen unless it says otherwise.

A record is an ordinary dataclass (``fields``, ``replace``, ``asdict`` and ``is_dataclass``
work as ever) whose ``__eq__``, ``__hash__`` and ``__repr__`` are three shared functions
instead of three generated per class. Python 3.11's ``dataclass`` compiles each generated
method with its own ``exec`` (~80 µs apiece, six for a frozen class), and a seed run
declares ~60 classes at import: ~17 ms of its start went to compiling equality, hashing and
repr code nobody had called yet. ``__init__`` (and a frozen class's two setters) are still
made by ``dataclass``.

The shared methods behave as the generated ones: equality only between instances of the
same class, comparing the ``compare`` fields as one tuple (so a field holding NaN is equal to
itself, as in a tuple); a frozen class hashes that tuple of its ``hash`` fields and a mutable
one is unhashable; the repr lists the ``repr`` fields, ``...`` where it would recurse. A
method the class body defines itself is kept, as ``dataclass`` keeps it.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeVar, cast, dataclass_transform, overload

_T = TypeVar("_T", bound=type)

# The class attribute holding a record class's field getters (one per use, built once).
_KEYS = "_record_keys"


class _Keys:
    """One record class's fields, read once: what ``==``, ``hash`` and ``repr`` look at."""

    __slots__ = ("compare", "hash", "repr")

    def __init__(self, cls: type) -> None:
        every = dataclasses.fields(cls)
        self.compare = _getter([f.name for f in every if f.compare])
        self.hash = _getter([f.name for f in every
                             if f.hash or (f.hash is None and f.compare)])
        self.repr = tuple(f.name for f in every if f.repr)


def _getter(names: list[str]) -> Callable[[object], tuple[Any, ...]]:
    """A function giving the tuple of these attributes (a tuple even for none or one)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _eq(self: Any, other: object) -> Any:  # a bool, or NotImplemented
    if other.__class__ is not self.__class__:
        return NotImplemented
    compare = getattr(self, _KEYS).compare
    return bool(compare(self) == compare(other))


def _hash(self: Any) -> int:
    return hash(getattr(self, _KEYS).hash(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self, _KEYS).repr)
    return f"{self.__class__.__qualname__}({shown})"


def _explicit_hash(body: Mapping[str, Any]) -> bool:
    """Whether the class body set ``__hash__`` itself (defining only ``__eq__`` makes Python
    write ``__hash__ = None``, which does not count), as ``dataclass`` decides it."""
    return "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)


def _make(cls: _T, frozen: bool, repr: bool, eq: bool, slots: bool, kw_only: bool) -> _T:
    body = cls.__dict__
    own_repr, own_eq, own_hash = "__repr__" in body, "__eq__" in body, _explicit_hash(body)
    made: Any = dataclass(cls, frozen=frozen, repr=False, eq=False, slots=slots,
                          kw_only=kw_only)
    setattr(made, _KEYS, _Keys(made))
    if repr and not own_repr:
        made.__repr__ = _repr
    if eq and not own_eq:
        made.__eq__ = _eq
    if eq and not own_hash:
        made.__hash__ = _hash if frozen else None
    return cast(_T, made)


@overload
def record(cls: _T, /) -> _T: ...


@overload
def record(*, frozen: bool = True, repr: bool = True, eq: bool = True, slots: bool = False,
           kw_only: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _T | None = None, /, *, frozen: bool = True, repr: bool = True,
           eq: bool = True, slots: bool = False, kw_only: bool = False) -> Any:
    """Declare a dataclass, frozen by default: ``@record``, ``@record(slots=True)``,
    ``@record(frozen=False)`` for the few that change in place."""
    if cls is not None:
        return _make(cls, frozen, repr, eq, slots, kw_only)
    return lambda c: _make(c, frozen, repr, eq, slots, kw_only)
