"""Safe evaluation of arithmetic expressions with numexpr.

An expression is parsed with :mod:`ast` and checked against a whitelist before numexpr ever
sees it: numbers, + - * / // % **, parentheses, a list of math functions and the constants
``pi`` and ``e``. Names, attributes, subscripts, strings, calls to anything else and dunder
tricks are refused. Exponents are bounded so ``9**9**9`` is refused instead of hanging.
"""

from __future__ import annotations

import ast
import math
import operator
import os
import re
import sys
import warnings

from agentcli.errors import ToolInputError
from agentcli.tools.math_words import normalise

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 10_000
MAX_NODES = 200

FUNCTIONS = frozenset({
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "sqrt", "exp", "expm1", "log", "log10", "log1p", "abs",
})
CONSTANTS = {"pi": math.pi, "e": math.e}
_ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "ln": "log"}

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Mod, ast.Pow, ast.FloorDiv)
_UNARY = (ast.UAdd, ast.USub)
_FORBIDDEN_WORDS = re.compile(r"__|\bimport\b|\blambda\b|\bexec\b|\beval\b|\bopen\b|[;`$\\]")


class NotAnExpression(Exception):
    """The text is not arithmetic (e.g. a question in words); a model may translate it."""


def check(text: str) -> ast.Expression:
    """Parse and whitelist-check an expression; raise ToolInputError or NotAnExpression."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ToolInputError(
            f"expression is {len(text):,} characters; the limit is {MAX_EXPRESSION_CHARS}"
        )
    if _FORBIDDEN_WORDS.search(text):
        raise ToolInputError("only arithmetic is allowed: no dunders, imports or code")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        raise NotAnExpression(text) from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise ToolInputError(f"expression is too complex ({len(nodes)} parts; limit {MAX_NODES})")
    for node in nodes:
        _check_node(node)
    return tree


def _check_node(node: ast.AST) -> None:
    if isinstance(node, ast.Expression | ast.Load):
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ToolInputError(f"only numbers are allowed, not {type(node.value).__name__}")
        return
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, _BINOPS):
            raise ToolInputError(f"operator {type(node.op).__name__} is not allowed")
        if isinstance(node.op, ast.Pow) and _bound(node.right) > MAX_EXPONENT:
            raise ToolInputError(f"exponent is too large (the limit is {MAX_EXPONENT:,})")
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, _UNARY):
            raise ToolInputError(f"operator {type(node.op).__name__} is not allowed")
        return
    if isinstance(node, ast.operator | ast.unaryop):
        return
    if isinstance(node, ast.Name):
        if node.id in CONSTANTS or node.id in FUNCTIONS or node.id in _ALIASES:
            return
        raise NotAnExpression(node.id)
    if isinstance(node, ast.Call):
        if (
            not isinstance(node.func, ast.Name)
            or (node.func.id not in FUNCTIONS and node.func.id not in _ALIASES)
            or node.keywords
        ):
            raise ToolInputError(
                "only these functions may be called: " + ", ".join(sorted(FUNCTIONS))
            )
        return
    kind = type(node).__name__.lower()
    raise ToolInputError(f"{kind} is not allowed in a math expression")


def _bound(node: ast.AST) -> float:
    """An upper bound on |value| of a sub-expression, without evaluating anything heavy."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return abs(float(node.value))
    if isinstance(node, ast.Name):
        return CONSTANTS.get(node.id, math.inf)
    if isinstance(node, ast.UnaryOp):
        return _bound(node.operand)
    if isinstance(node, ast.BinOp):
        left, right = _bound(node.left), _bound(node.right)
        try:
            if isinstance(node.op, ast.Add | ast.Sub):
                return left + right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Pow):
                return math.inf if right > MAX_EXPONENT else max(left, 1.0) ** right
            if isinstance(node.op, ast.Mod):
                return right  # |a % b| < |b|: (-1) % 10**300 is 10**300 - 1, not 1
            return left  # / //: bounded by the left side (or unbounded for tiny divisors)
        except OverflowError:
            return math.inf
    return math.inf


class _Rename(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = _ALIASES.get(node.id, node.id)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        # numexpr works on int64; floats avoid silent integer overflow (2**70).
        if isinstance(node.value, int):
            return ast.copy_location(ast.Constant(float(node.value)), node)
        return node


def import_numexpr_lean() -> None:
    """Import numexpr with OpenBLAS on one thread (unless the user chose, or numpy is loaded).

    One scalar expression never uses BLAS, and starting OpenBLAS's thread pool is ~20% of
    numpy's import time. OpenBLAS reads the variable once, at load, so it is removed again
    and never reaches the tools' child processes.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numexpr  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


_EXACT = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
# Integers up to this bound are computed exactly (Python ints); past 2**53 a float is not.
_EXACT_BOUND = 1e300


class _NotExact(Exception):
    """A negative power: the value is a fraction, not an integer."""


def _exact(node: ast.AST) -> int:
    """The exact value of a checked integer expression (+ - * // % ** and unary signs)."""
    if isinstance(node, ast.Expression):
        return _exact(node.body)
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, int)
        return node.value
    if isinstance(node, ast.UnaryOp):
        return -_exact(node.operand) if isinstance(node.op, ast.USub) else _exact(node.operand)
    assert isinstance(node, ast.BinOp)
    left, right = _exact(node.left), _exact(node.right)
    if isinstance(node.op, ast.Pow) and right < 0:
        raise _NotExact  # a fraction: numexpr's float path answers it
    value: int = _EXACT[type(node.op)](left, right)
    return value


def _integer_only(tree: ast.Expression) -> bool:
    """Only integer literals and + - * // % ** (no /, names or calls), every part small enough
    to compute exactly (a huge power inside a ``%`` is as slow as one outside it)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and not isinstance(node.value, int):
            return False
        if isinstance(node, ast.Div | ast.Call | ast.Name):
            return False
        if isinstance(node, ast.BinOp) and _bound(node) > _EXACT_BOUND:
            return False
    return True


def evaluate(text: str) -> str:
    """Evaluate a checked expression and format the number the way the Calculator answers.

    An expression of integers only (no ``/``) is computed exactly, so
    ``9007199254740993 - 9007199254740992`` is 1, not a float's 0; anything else goes
    through numexpr in floats.
    """
    expr = normalise(text)
    tree = check(expr)
    if _integer_only(tree):
        try:
            return str(_exact(tree))
        except ZeroDivisionError:
            raise ToolInputError(f"cannot evaluate {expr!r}: division by zero") from None
        except _NotExact:
            pass
    import_numexpr_lean()
    import numexpr  # heavy: imported only when a calculation runs
    source = ast.unparse(_Rename().visit(tree))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy warns on log(-1) etc.; we check the value
            value = numexpr.evaluate(source, global_dict={}, local_dict=dict(CONSTANTS)).item()
    except OverflowError:
        raise ToolInputError(f"{expr!r} is too large (overflows)") from None
    except (ArithmeticError, KeyError, ValueError, TypeError, SyntaxError) as err:
        raise ToolInputError(f"cannot evaluate {expr!r}: {err}") from None
    if isinstance(value, complex) or math.isnan(value):
        raise ToolInputError(f"{expr!r} has no real value")
    if math.isinf(value):
        raise ToolInputError(f"{expr!r} is too large (overflows to infinity)")
    near = round(value)
    if value and abs(value - near) <= 1e-12 * abs(value):  # 27 ** (1/3) = 3.0000000000000004
        value = float(near)
    return repr(float(value))
