"""A piped console prints plain lines itself, exactly as Rich would (issue 23)."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.text import Text

from agentcli.cli.consoles import print_plain

SAMPLES = ["ok", "75", "", "  padded  ", "two\nlines\n", "naïve ☃ 漢字 👍", "a [b] [bold]x[/bold]",
           "Final Answer:", "x: y", ":smile:", "tab\there", "cr\rhere", "bell\x07", "esc\x1b[1m",
           "http://example.com/a?b=c", "trailing\n\n", "**markdown** `code`", "\u200b zero width",
           "x" * 300]


def piped(wrap: bool = True) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    out = Console(file=buf)
    out.soft_wrap = wrap
    return out, buf


def rich_way(text: str, as_text: bool, wrap: bool = True) -> str:
    out, buf = piped(wrap)
    if as_text:
        out.print(Text(text))
    else:
        out.print(text, markup=False, highlight=False)
    return buf.getvalue()


@pytest.mark.parametrize("wrap", [True, False])
@pytest.mark.parametrize("as_text", [False, True])
def test_plain_print_writes_what_rich_writes_or_leaves_it_to_rich(as_text: bool, wrap: bool
                                                                   ) -> None:
    rng = random.Random(3)
    alphabet = "abc  []\n\n:\té☃漢👍"
    samples = [*SAMPLES, *("".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
                           for _ in range(300))]
    fast = 0
    samples += ["Final Answer:", "you> question 12", "a" * 79, "a" * 80, "word " * 30]
    for text in samples:
        out, buf = piped(wrap)
        if print_plain(out, text, emoji_codes=not as_text):
            fast += 1
            assert buf.getvalue() == rich_way(text, as_text, wrap), repr(text)
        else:
            assert buf.getvalue() == ""
    assert fast > (20 if wrap else 5)


def test_a_terminal_colour_or_recording_console_goes_through_rich() -> None:
    for out in (Console(file=io.StringIO(), force_terminal=True),
                Console(file=io.StringIO(), record=True),
                Console(file=io.StringIO(), quiet=True)):
        out.soft_wrap = True
        assert not print_plain(out, "ok")


class CountingIO(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


@pytest.mark.parametrize("answer", [*SAMPLES, "key sk-abcdefghijklmnop here", "a\x1b[2Jb"])
def test_an_answer_is_one_write_when_piped_and_what_rich_prints(answer: str) -> None:
    from agentcli.cli.live import render_answer
    from agentcli.cli.render import STYLES, print_answer

    fast = CountingIO()
    out = Console(file=fast)
    out.soft_wrap = True
    render_answer(out, answer)
    rich_buf = io.StringIO()
    rich_out = Console(file=rich_buf)
    rich_out.soft_wrap = True
    with rich_out.capture() as captured:  # capturing: every line goes through Rich
        rich_out.print(Text("Final Answer:", style=f"bold {STYLES['answer']}"))
        print_answer(rich_out, answer)
    assert fast.getvalue() == captured.get()
    assert "sk-abcdefghijklmnop" not in fast.getvalue() and "\x1b" not in fast.getvalue()
    if ":" not in answer and answer.isascii() and answer.isprintable():
        assert fast.writes == 1
