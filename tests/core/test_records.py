"""``record`` classes behave as the dataclasses they replace: construction, equality,
hashing, repr, freezing, slots, pickling and the dataclasses functions, checked side by side
with ``dataclass``."""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import math
import pickle
from dataclasses import FrozenInstanceError, dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

import agentcli
from agentcli.records import record


def _pair(frozen: bool = True, slots: bool = False) -> tuple[type, type]:
    """The same class declared with ``dataclass`` and with ``record``."""

    def body() -> type:
        class Step:
            """A step."""

            name: str
            size: float = 0.0
            tags: tuple[str, ...] = field(default_factory=tuple)
            secret: str = field(default="", repr=False)
            note: str = field(default="", compare=False)
            weight: int = field(default=0, hash=False)
        return Step

    return (dataclass(frozen=frozen, slots=slots)(body()),
            record(frozen=frozen, slots=slots)(body()))


@pytest.mark.parametrize("frozen,slots", [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_a_record_equals_hashes_and_prints_as_its_dataclass(frozen: bool, slots: bool) -> None:
    plain, rec = _pair(frozen, slots)
    cases: list[dict[str, Any]] = [
        {"name": "a"}, {"name": "a", "size": 1.5}, {"name": "a", "note": "other"},
        {"name": "a", "weight": 3}, {"name": "b", "tags": ("x",)}, {"name": "a", "secret": "s"},
        {"name": "a", "size": math.nan},
    ]
    for one in cases:
        assert repr(rec(**one)) == repr(plain(**one)).replace(plain.__qualname__,
                                                              rec.__qualname__)
        for two in cases:
            assert (rec(**one) == rec(**two)) == (plain(**one) == plain(**two)), (one, two)
            if frozen:
                assert (hash(rec(**one)) == hash(rec(**two))) == (
                    hash(plain(**one)) == hash(plain(**two))), (one, two)
    nan = rec(name="a", size=math.nan)
    assert nan == nan  # one tuple compared, identity first: as dataclass does
    assert rec(name="a").__eq__(plain(name="a")) is NotImplemented
    assert rec(name="a") != plain(name="a")
    if not frozen:
        assert rec.__hash__ is None
        with pytest.raises(TypeError):
            hash(rec(name="a"))
    else:
        with pytest.raises(FrozenInstanceError):
            rec(name="a").name = "b"  # type: ignore[misc]
        with pytest.raises(FrozenInstanceError):
            del rec(name="a").name  # type: ignore[misc]
    assert hasattr(rec, "__slots__") == slots
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(plain)]
    assert dataclasses.replace(rec(name="a"), size=2.0) == rec(name="a", size=2.0)
    assert dataclasses.asdict(rec(name="a", tags=("t",)))["tags"] == ("t",)
    assert rec.__match_args__ == plain.__match_args__
    assert rec.__doc__ == "A step."


def test_a_record_keeps_the_methods_its_body_defines_and_repr_stops_at_a_cycle() -> None:
    @record(frozen=False)
    class Node:
        label: str
        children: list[Any] = field(default_factory=list)

    loop = Node("top")
    loop.children.append(loop)
    assert repr(loop) == "test_a_record_keeps_the_methods_its_body_defines_and_repr_stops_at_a_cycle.<locals>.Node(label='top', children=[...])"  # noqa: E501

    @record
    class Own:
        value: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

    assert repr(Own(1)) == "own" and Own(1) == Own(2) and hash(Own(3)) == 7

    @record
    class EqOnly:  # defining __eq__ alone: dataclass still adds the frozen class's hash
        value: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, EqOnly)

    assert hash(EqOnly(1)) == hash((1,))

    @record(eq=False)
    class Identity:
        value: int

    one = Identity(1)
    assert one != Identity(1) and hash(one) == object.__hash__(one)

    @record(repr=False)
    class Quiet:
        value: int

    assert repr(Quiet(1)).startswith("<")


def test_every_dataclass_in_agentcli_is_declared_with_record() -> None:
    """One way to declare data (the start-up cost above is paid once per class only if every
    class takes it)."""
    offenders = []
    for path in Path(agentcli.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                for deco in node.decorator_list:
                    target = deco.func if isinstance(deco, ast.Call) else deco
                    name = getattr(target, "id", getattr(target, "attr", ""))
                    if name == "dataclass":
                        offenders.append(f"{path.name}:{node.lineno} {node.name}")
    assert offenders == []


def _built(cls: type, *args: Any, **kwargs: Any) -> object:
    """What constructing ``cls`` gives: the instance's fields, or the error's type."""
    try:
        made = cls(*args, **kwargs)
    except TypeError as err:
        return ("TypeError", "argument" in str(err))
    return {f.name: getattr(made, f.name) for f in dataclasses.fields(made)}


def test_a_record_is_built_from_its_arguments_as_its_dataclass_is() -> None:
    calls: list[str] = []

    def body() -> type:
        class Run:
            """A run."""

            question: str
            step: int = 0
            notes: list[str] = field(default_factory=list)
            seen: int = field(default=7, init=False)
            log: list[str] = field(default_factory=lambda: ["new"], init=False)
            tag: str = field(default="t", kw_only=True)

            def __post_init__(self) -> None:
                calls.append(self.question)

        return Run

    plain, rec = dataclass(frozen=True)(body()), record(body())
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        (("q",), {}), (("q", 3), {}), (("q", 3, ["n"]), {}), ((), {"question": "q"}),
        (("q",), {"tag": "x", "notes": ["a"]}), ((), {}), (("q", 1, [], "extra"), {}),
        (("q",), {"question": "again"}), (("q",), {"nope": 1}), (("q",), {"seen": 1}),
        ((), {"step": 2}),
    ]
    for args, kwargs in cases:
        assert _built(rec, *args, **kwargs) == _built(plain, *args, **kwargs), (args, kwargs)
    calls.clear()
    built = [case for case in cases if isinstance(_built(plain, *case[0], **case[1]), dict)]
    by_dataclass, calls[:] = len(calls), []
    for args, kwargs in built:
        rec(*args, **kwargs)
    assert len(calls) == by_dataclass == len(built) == 5  # __post_init__ once per instance
    one, two = rec("q"), rec("q")
    assert one.notes is not two.notes and one.log == ["new"] and one.log is not two.log
    assert replace(one, step=5) == rec("q", 5)
    assert str(inspect.signature(rec)) == str(inspect.signature(plain))  # what help() shows

    def undocumented() -> type:
        class Point:
            x: int
            y: list[int] = field(default_factory=list)
        return Point

    assert record(undocumented()).__doc__ == dataclass(frozen=True)(undocumented()).__doc__
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'question'"):
        rec()
    with pytest.raises(TypeError, match="non-default argument 'late' follows default"):
        @record
        class Bad:
            early: int = 0
            late: int  # type: ignore[misc]


def test_a_frozen_record_pickles_copies_and_takes_a_frozen_dataclass_subclass() -> None:
    for slots in (False, True):
        step = _STEPS[slots](name="a", size=2.0)
        for again in (pickle.loads(pickle.dumps(step)), copy.copy(step), copy.deepcopy(step)):
            assert again == step and again is not step
            with pytest.raises(FrozenInstanceError):
                again.size = 3.0  # type: ignore[misc]
    assert _STEPS[True].__dataclass_params__.frozen  # type: ignore[attr-defined]

    @dataclass(frozen=True)
    class Tagged(_STEPS[False]):  # type: ignore[misc,valid-type]
        tag: str = ""

    tagged = Tagged(name="a", tag="t")
    assert tagged.tag == "t" and tagged.name == "a"
    with pytest.raises(FrozenInstanceError):
        tagged.tag = "u"

    class Plain(_STEPS[False]):  # type: ignore[misc,valid-type]
        def label(self) -> str:
            self.cache = "kept"  # not a field: a plain subclass may add its own
            return self.cache

    plain = Plain(name="a")
    assert plain.label() == "kept"
    with pytest.raises(FrozenInstanceError):
        plain.name = "b"


@record
class _FrozenStep:
    """A step."""

    name: str
    size: float = 0.0


@record(slots=True)
class _FrozenSlotStep:
    """A step, with slots."""

    name: str
    size: float = 0.0


_STEPS: dict[bool, type] = {False: _FrozenStep, True: _FrozenSlotStep}
