"""Math written in words, turned into arithmetic before the Calculator checks it.

People and small models write ``15% of 80``, ``the sum of 12, 45 and 78``, ``2 raised to
the 12th power``, ``40% more than 250`` or ``3 hours in seconds``; a small model copies such
a phrase from the question far more reliably than it rewrites it as ``0.4 * 250 + 250``.
Each form here becomes arithmetic. Only numbers are captured, so no text reaches numexpr:
whatever is left over still has to pass :func:`agentcli.tools.math_eval.check`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

NUM = r"\d+(?:\.\d+)?"
_LIST = rf"{NUM}(?:\s*,\s*{NUM})*,?\s+and\s+{NUM}"  # "12, 45 and 78" / "3 and 4"
_PCT = r"\s*(?:%|percent\b|per\s+cent\b)"

# Named without placeholders ("N% of M"): small models copy an error's words as their input.
ACCEPTED_FORMS = (
    "arithmetic with + - * / ** and parentheses, or math words "
    "(percent of, percent more than, to the power of, square root of, squared, sum of, "
    "average of, hours in minutes), and the functions sqrt, log, exp, sin, cos and tan"
)

# Units of the same kind, in one base unit each (seconds, meters, grams, liters).
_UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("second", "sec", "s"), ("time", 1.0)),
    **dict.fromkeys(("minute", "min"), ("time", 60.0)),
    **dict.fromkeys(("hour", "hr", "h"), ("time", 3600.0)),
    "day": ("time", 86_400.0), "week": ("time", 604_800.0),
    **dict.fromkeys(("millimeter", "mm"), ("length", 0.001)),
    **dict.fromkeys(("centimeter", "cm"), ("length", 0.01)),
    **dict.fromkeys(("meter", "m"), ("length", 1.0)),
    **dict.fromkeys(("kilometer", "km"), ("length", 1000.0)),
    **dict.fromkeys(("milligram", "mg"), ("mass", 0.001)),
    **dict.fromkeys(("gram", "g"), ("mass", 1.0)),
    **dict.fromkeys(("kilogram", "kg"), ("mass", 1000.0)),
    **dict.fromkeys(("milliliter", "ml"), ("volume", 0.001)),
    **dict.fromkeys(("liter", "l"), ("volume", 1.0)),
}
_UNIT = r"[a-z]+"


def _unit(word: str) -> tuple[str, float] | None:
    word = word.lower().replace("metre", "meter").replace("litre", "liter")
    return _UNITS.get(word) or (_UNITS.get(word[:-1]) if word.endswith("s") else None)


def _convert(number: str, source: str, target: str) -> str | None:
    """``number source`` in ``target`` units as arithmetic, or None when they do not match."""
    have, want = _unit(source), _unit(target)
    if have is None or want is None or have[0] != want[0]:
        return None
    factor = have[1] / want[1]
    return f"({number} * {factor!r})" if factor >= 1 else f"({number} / {1 / factor!r})"


def _units(source: str, target: str) -> Callable[[re.Match[str]], str]:
    """The match's number from its ``source`` unit group into its ``target`` one (unchanged
    when they are no units of one kind)."""
    return lambda m: _convert(m["n"], m[source], m[target]) or m[0]


def _joined(op: str) -> Callable[[re.Match[str]], str]:
    return lambda m: "(" + f" {op} ".join(re.findall(NUM, m["list"])) + ")"


def _average(match: re.Match[str]) -> str:
    found = re.findall(NUM, match["list"])
    return f"(({' + '.join(found)}) / {len(found)})"


def _powers(match: re.Match[str]) -> str:
    """``2 squared cubed`` is (2 ** 2) ** 3: one power, the product of the words' powers (a
    chain of ``**`` would be read right to left, as 2 ** 8)."""
    power = 1
    for word in match["powers"].split():
        power *= 2 if word.lower() == "squared" else 3
    return f"{match[1]} ** {power}"


Replacement = str | Callable[[re.Match[str]], str]
# Order matters: "40% more than 250" before "40% of", before a bare "40%". Each form names the
# words its pattern cannot match without; in ASCII text a form whose words are all absent is
# skipped, and a pattern is compiled (by re's cache) the first time a text may match it.
_FORMS: tuple[tuple[str, tuple[str, ...], Replacement], ...] = (
    (rf"how\s+many\s+(?P<a>{_UNIT})\s+(?:are\s+)?(?:there\s+)?in\s+(?P<n>{NUM})\s*"
     rf"(?P<b>{_UNIT})", ("how",), _units("b", "a")),  # how many seconds are in 3 hours
    (rf"(?P<n>{NUM})\s*(?P<a>{_UNIT})\s+(?:in|to|into|as)\s+(?P<b>{_UNIT})", ("in", "to", "as"),
     _units("a", "b")),  # 3 hours in seconds
    (rf"(?:(?:the\s+)?(?:sum|total)\s+of|add)\s+(?P<list>{_LIST})", ("sum", "total", "add"),
     _joined("+")),
    (rf"(?:the\s+)?product\s+of\s+(?P<list>{_LIST})", ("product",), _joined("*")),
    (rf"(?:the\s+)?(?:average|mean)\s+of\s+(?P<list>{_LIST})", ("average", "mean"), _average),
    (rf"(?:the\s+)?difference\s+between\s+({NUM})\s+and\s+({NUM})", ("difference",), r"(\1 - \2)"),
    (rf"subtract\s+({NUM})\s+from\s+({NUM})", ("subtract",), r"(\2 - \1)"),
    (rf"({NUM}){_PCT}\s+(?:more|greater|higher)\s+than\s+({NUM})", ("%", "per"),
     r"(\2 * (1 + \1 / 100))"),
    (rf"({NUM}){_PCT}\s+(?:less|fewer|lower)\s+than\s+({NUM})", ("%", "per"),
     r"(\2 * (1 - \1 / 100))"),
    (rf"({NUM}){_PCT}\s+off\s+(?:(?:a|the)\s+(?:price|cost)\s+of\s+)?({NUM})", ("%", "per"),
     r"(\2 * (1 - \1 / 100))"),
    (rf"({NUM})\s*(?:increased\s+by|plus|\+)\s*({NUM}){_PCT}(?!\s*of)", ("%", "per"),
     r"(\1 * (1 + \2 / 100))"),
    (rf"({NUM})\s*(?:decreased\s+by|reduced\s+by|minus|less|-)\s*({NUM}){_PCT}(?!\s*of)",
     ("%", "per"), r"(\1 * (1 - \2 / 100))"),
    (rf"({NUM}){_PCT}\s+of\s+({NUM})", ("%", "per"), r"(\1 / 100 * \2)"),
    (rf"({NUM})\s*(?:%(?!\s*[\d(.])|percent\b|per\s+cent\b)", ("%", "per"),  # not 7 % 3
     r"(\1 / 100)"),
    (rf"(?:the\s+)?square\s+root\s+of\s+({NUM})", ("root",), r"sqrt(\1)"),
    (rf"(?:the\s+)?cube\s+root\s+of\s+({NUM})", ("root",), r"(\1 ** (1 / 3))"),
    (rf"(?:the\s+)?square\s+of\s+({NUM})", ("square",), r"(\1 ** 2)"),
    (rf"(?:the\s+)?cube\s+of\s+({NUM})", ("cube",), r"(\1 ** 3)"),
    (rf"({NUM}|\))\s+(?:raised\s+)?to\s+the\s+({NUM})(?:st|nd|rd|th)?\s+power", ("to",),
     r"\1 ** \2"),
    (rf"({NUM}|\))\s+(?:raised\s+)?to\s+the\s+power\s+(?:of\s+)?({NUM})", ("to",), r"\1 ** \2"),
    (rf"({NUM}|\))\s+raised\s+to\s+({NUM})", ("raised",), r"\1 ** \2"),
    (rf"({NUM}|\))(?P<powers>(?:\s+(?:squared|cubed)\b)+)", ("squared", "cubed"), _powers),
    (r"\bhalf\s+of\s+(?=[\d(])", ("half",), "0.5 * "),
    (r"\ba\s+third\s+of\s+(?=[\d(])", ("third",), "(1 / 3) * "),
    (r"\ba\s+quarter\s+of\s+(?=[\d(])", ("quarter",), "0.25 * "),
    (r"\b(?:twice|double)\s+(?=[\d(])", ("twice", "double"), "2 * "),
    (r"\btriple\s+(?=[\d(])", ("triple",), "3 * "),
    (r"(?<=[\d)])\s*[x×]\s*(?=[\d(])", ("x",), " * "),
    (r"(?<=[\d)])\s*(?:times|multiplied\s+by)\s*(?=[\d(])", ("times", "multiplied"), " * "),
    (r"(?<=[\d)])\s*(?:divided\s+by|over)\s*(?=[\d(])", ("divided", "over"), " / "),
    (r"(?<=[\d)])\s*plus\s*(?=[\d(])", ("plus",), " + "),
    (r"(?<=[\d)])\s*minus\s*(?=[\d(])", ("minus",), " - "),
)
_LEAD = re.compile(r"^(?:what\s+is|what's|how\s+much\s+is|calculate|compute|evaluate|find)"
                   r"\s+(?:the\s+(?:value|result)\s+of\s+)?", re.I)


def notation(text: str) -> str:
    """The symbols people and small models write for arithmetic, as the Calculator reads
    them: ``^``, ``×``, ``÷``, ``−``, thousands separators, ``$`` before a number (no words:
    what the answer rule uses to tell a bare calculation, :mod:`agentcli.answers`)."""
    expr = text.replace("^", "**").replace("÷", "/").replace("−", "-")
    expr = re.sub(r"(?<=[\d)])\s*×\s*(?=[\d(])", " * ", expr)
    expr = re.sub(r"(?<=\d),(?=\d{3}\b)", "", expr)
    return re.sub(r"\$\s*(?=\d)", "", expr)


def normalise(text: str) -> str:
    """Tidy the notations people and small models use into arithmetic: :func:`notation`, hex
    literals, a trailing ``=`` or ``?``, and the word forms above."""
    expr = text.strip().strip("`").strip()
    expr = notation(_LEAD.sub("", expr).rstrip("?").strip())
    # Hex literals as numbers first: the "12 x 4" form below would read 0x10 as 0 * 10.
    expr = re.sub(r"\b0x[0-9a-f]+\b", lambda m: str(int(m[0], 16)), expr, flags=re.I)
    folded = expr.lower() if expr.isascii() else None  # re.I folds more outside ASCII
    for pattern, words, repl in _FORMS:
        if folded is None or any(w in folded for w in words):
            expr = re.sub(pattern, repl, expr, flags=re.I)
            folded = expr.lower() if expr.isascii() else None
    return expr.rstrip("=").strip()
