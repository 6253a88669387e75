"""``--attach FILE|URL``: images (and audio) sent with the question to a model that reads
them, as OpenAI-style content parts of the first user message (``llm -a``)."""

from __future__ import annotations

import base64
from pathlib import Path

from agentcli.errors import ConfigError
from agentcli.files import refuse_secret

MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024  # one attachment; larger files are refused unread
_AUDIO = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def attachment_parts(sources: list[str]) -> tuple[dict[str, object], ...]:
    """The content parts for ``--attach`` values: a URL is passed on, a file is inlined."""
    return tuple(_part(src) for src in sources)


def _part(src: str) -> dict[str, object]:
    if src.startswith(("http://", "https://")):
        return {"type": "image_url", "image_url": {"url": src}}
    path = Path(src).expanduser()
    if not path.is_file():
        raise ConfigError(f"--attach {src}: no such file; give an image or audio file or a URL")

    refuse_secret(path, "--attach")
    with path.open("rb") as fh:
        data = fh.read(MAX_ATTACHMENT_BYTES + 1)
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise ConfigError(f"--attach {src} is larger than 20 MiB; attach a smaller file")
    mime = _content_type(data)
    encoded = base64.b64encode(data).decode("ascii")
    if mime.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
    if mime in _AUDIO:
        return {"type": "input_audio", "input_audio": {"data": encoded, "format": _AUDIO[mime]}}
    raise ConfigError(f"--attach {src} is not an image (PNG, JPEG, GIF, WebP) or audio (WAV, "
                      "MP3) by its content; give text as context with -f FILE")


def _content_type(data: bytes) -> str:
    """The type the bytes show (never the file's name: a ``shot.png`` may be anything)."""
    if data.startswith(b"RIFF"):
        return {b"WEBP": "image/webp", b"WAVE": "audio/wav"}.get(data[8:12], "")
    if data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF
                                   and data[1] & 0xE0 == 0xE0 and data[1] & 0x06):
        return "audio/mpeg"  # an ID3 tag, or an MPEG audio frame (layer bits set)
    return next((m for magic, m in _MAGIC if data.startswith(magic)), "")
