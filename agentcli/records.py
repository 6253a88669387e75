"""``record``: how every dataclass in agentcli is declared, frozen unless it says otherwise.

A record is an ordinary dataclass (``fields``, ``replace``, ``asdict``, ``is_dataclass`` and
``__dataclass_params__`` say what they always say) whose methods are shared functions reading
each class's fields once, instead of methods generated per class. Python 3.11's ``dataclass``
compiles each generated method with its own ``exec`` (~80-150 µs apiece: ``__init__``,
``__repr__``, ``__eq__``, ``__hash__`` and a frozen class's ``__setattr__`` and
``__delattr__``), and a run declares ~60 classes before its first step: ~20 % of a seed
run's instructions went to compiling methods, most of them never called. The price is paid per
call instead, ~0.5-1 µs more per instance built.

The shared methods behave as the generated ones:

- ``__init__`` takes the ``init`` fields in order (keyword-only ones by keyword), fills
  defaults and default factories (an ``init=False`` field from its default too), raises the
  ``TypeError`` Python raises for a missing, extra or repeated argument, then calls
  ``__post_init__`` if the class has one. (``InitVar`` pseudo-fields are not supported.)
- ``==`` only between instances of the same class, comparing the ``compare`` fields as one
  tuple (so a field holding NaN is equal to itself, as in a tuple); a frozen class hashes that
  tuple of its ``hash`` fields, a mutable one is unhashable.
- ``repr`` lists the ``repr`` fields, ``...`` where it would recurse.
- A frozen instance refuses assignment and deletion with ``FrozenInstanceError``, and pickles
  and copies as a frozen dataclass does.

A method the class body defines itself is kept, as ``dataclass`` keeps it.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import MISSING, FrozenInstanceError, dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, cast, dataclass_transform, overload

if TYPE_CHECKING:
    import inspect

_T = TypeVar("_T", bound=type)

# The class attribute holding a record class's plan (built once, when the class is made).
_PLAN = "_record_plan"
_set = object.__setattr__


class _Plan:
    """One record class's fields, read once: what its shared methods look at."""

    __slots__ = ("compare", "defaults", "every", "hash", "keyword", "later", "names",
                 "positional", "post_init", "qualname", "repr")

    def __init__(self, cls: type) -> None:
        every = dataclasses.fields(cls)
        self.qualname = cls.__qualname__
        self.every = tuple(f.name for f in every)
        self.compare = _getter([f.name for f in every if f.compare])
        self.hash = _getter([f.name for f in every if f.hash or (f.hash is None and f.compare)])
        self.repr = tuple(f.name for f in every if f.repr)
        taken = [f for f in every if f.init]
        self.positional = tuple(f.name for f in taken if not f.kw_only)
        self.keyword = tuple(f.name for f in taken if f.kw_only)
        self.names = self.positional + self.keyword
        # name -> (default, or its factory; True for a factory)
        self.defaults = {f.name: _default(f) for f in taken if _has_default(f)}
        self.later = tuple((f.name, *_default(f)) for f in every
                           if not f.init and _has_default(f))
        self.post_init = hasattr(cls, "__post_init__")
        seen_default = ""
        for name in self.positional:  # as the generated __init__ would refuse it
            if name in self.defaults:
                seen_default = name
            elif seen_default:
                raise TypeError(f"non-default argument {name!r} follows default argument")


def _has_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _default(f: dataclasses.Field[Any]) -> tuple[object, bool]:
    if f.default is not MISSING:
        return f.default, False
    return f.default_factory, True


def _getter(names: list[str]) -> Callable[[object], tuple[Any, ...]]:
    """A function giving the tuple of these attributes (a tuple even for none or one)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _init(self: Any, *args: object, **kwargs: object) -> None:
    plan: _Plan = getattr(self, _PLAN)
    positional = plan.positional
    if len(args) > len(positional):
        raise TypeError(f"{plan.qualname}.__init__() takes {len(positional) + 1} positional "
                        f"arguments but {len(args) + 1} were given")
    for name, value in zip(positional, args, strict=False):
        _set(self, name, value)
    if kwargs or len(args) < len(plan.names):
        missing = []
        for name in plan.names[len(args):]:
            if name in kwargs:
                _set(self, name, kwargs.pop(name))
            elif name in plan.defaults:
                value, made_by = plan.defaults[name]
                _set(self, name, value() if made_by else value)  # type: ignore[operator]
            else:
                missing.append(name)
        if kwargs:
            name = next(iter(kwargs))
            why = ("multiple values for argument" if name in plan.names
                   else "an unexpected keyword argument")
            raise TypeError(f"{plan.qualname}.__init__() got {why} {name!r}")
        if missing:
            kind = "keyword-only" if missing[0] in plan.keyword else "positional"
            listed = ", ".join(repr(n) for n in missing)
            raise TypeError(f"{plan.qualname}.__init__() missing {len(missing)} required "
                            f"{kind} argument{'s' if len(missing) > 1 else ''}: {listed}")
    for name, value, made_by in plan.later:
        _set(self, name, value() if made_by else value)  # type: ignore[operator]
    if plan.post_init:
        self.__post_init__()


class _Signature:
    """A record class's ``__signature__`` (what ``help()`` and ``inspect.signature`` show: the
    generated ``__init__``'s), built on first use."""

    def __get__(self, obj: object, cls: type) -> inspect.Signature:
        import inspect

        plan: _Plan = getattr(cls, _PLAN)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        empty = inspect.Parameter.empty
        params = []
        for name in plan.names:
            kind = (inspect.Parameter.KEYWORD_ONLY if name in plan.keyword
                    else inspect.Parameter.POSITIONAL_OR_KEYWORD)
            default: object = empty
            if name in plan.defaults:
                value, made_by = plan.defaults[name]
                default = _FACTORY if made_by else value
            params.append(inspect.Parameter(name, kind, default=default,
                                            annotation=fields[name].type))
        return inspect.Signature(params, return_annotation=None)


class _Factory:
    """Shown as a default made by a factory, as dataclass shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _eq(self: Any, other: object) -> Any:  # a bool, or NotImplemented
    if other.__class__ is not self.__class__:
        return NotImplemented
    compare = getattr(self, _PLAN).compare
    return bool(compare(self) == compare(other))


def _hash(self: Any) -> int:
    return hash(getattr(self, _PLAN).hash(self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self, _PLAN).repr)
    return f"{self.__class__.__qualname__}({shown})"


def _frozen(self: Any, name: str) -> bool:
    """Whether ``name`` may not change: any name on the record class itself, a field's on a
    plain subclass of it (which may add attributes of its own), as dataclass decides."""
    cls = type(self)
    return _PLAN in cls.__dict__ or name in getattr(cls, _PLAN).every


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    if _frozen(self, name):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    _set(self, name, value)


def _frozen_delattr(self: Any, name: str) -> None:
    if _frozen(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def _getstate(self: Any) -> list[object]:
    return [getattr(self, name) for name in getattr(self, _PLAN).every]


def _setstate(self: Any, state: list[object]) -> None:
    for name, value in zip(getattr(self, _PLAN).every, state, strict=False):
        _set(self, name, value)


def _explicit_hash(body: Mapping[str, Any]) -> bool:
    """Whether the class body set ``__hash__`` itself (defining only ``__eq__`` makes Python
    write ``__hash__ = None``, which does not count), as ``dataclass`` decides it."""
    return "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)


def _frozen_base(cls: type) -> bool:
    return any(dataclasses.is_dataclass(b) and b.__dataclass_params__.frozen  # type: ignore[attr-defined]
               for b in cls.__mro__[1:])


def _make(cls: _T, frozen: bool, repr: bool, eq: bool, slots: bool) -> _T:
    body = cls.__dict__
    own = {name for name in ("__init__", "__repr__", "__eq__") if name in body}
    own_hash = _explicit_hash(body)
    documented = bool(body.get("__doc__"))
    if frozen and ("__setattr__" in body or "__delattr__" in body):
        raise TypeError(f"a frozen record cannot define __setattr__ or __delattr__: "
                        f"{cls.__qualname__}")
    # Under a frozen dataclass base, dataclass itself must make the class frozen (it checks
    # the bases); every other record is made frozen here, by the two shared functions.
    by_dataclass = frozen and _frozen_base(cls)
    made: Any = dataclass(cls, init=False, repr=False, eq=False, frozen=by_dataclass,
                          slots=slots)
    setattr(made, _PLAN, _Plan(made))
    if "__init__" not in own:
        made.__init__ = _init
        made.__signature__ = _Signature()
        if not documented:  # dataclass's stand-in docstring: the class's signature
            made.__doc__ = f"{made.__name__}{made.__signature__}".replace(" -> None", "")
    if repr and "__repr__" not in own:
        made.__repr__ = _repr
    if eq and "__eq__" not in own:
        made.__eq__ = _eq
    if eq and not own_hash:
        made.__hash__ = _hash if frozen else None
    if frozen and not by_dataclass:
        made.__setattr__ = _frozen_setattr
        made.__delattr__ = _frozen_delattr
        if slots:  # as dataclass does for a frozen class with slots: pickle and copy work
            made.__getstate__ = _getstate
            made.__setstate__ = _setstate
    # What the class is, as dataclass would have recorded it (a frozen dataclass subclass of
    # a record checks that its base is frozen).
    params = made.__dataclass_params__
    made.__dataclass_params__ = type(params)(**{
        **{name: getattr(params, name) for name in type(params).__slots__},
        "init": True, "repr": repr, "eq": eq, "frozen": frozen})
    return cast(_T, made)


@overload
def record(cls: _T, /) -> _T: ...


@overload
def record(*, frozen: bool = True, repr: bool = True, eq: bool = True,
           slots: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _T | None = None, /, *, frozen: bool = True, repr: bool = True,
           eq: bool = True, slots: bool = False) -> Any:
    """Declare a dataclass, frozen by default: ``@record``, ``@record(slots=True)``,
    ``@record(frozen=False)`` for the few that change in place."""
    if cls is not None:
        return _make(cls, frozen, repr, eq, slots)
    return lambda c: _make(c, frozen, repr, eq, slots)
