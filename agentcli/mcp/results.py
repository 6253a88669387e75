"""MCP tool results as observations: text as text, structured content as JSON, media as
content parts plus a short placeholder, resources by their text or URI — never a repr."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentcli.schema import ContentText

__all__ = ["ContentText", "block_text", "resource_text", "result_text"]

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _size(b64: str) -> str:
    n = len(b64.rstrip("=")) * 3 // 4
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _resource(res: Mapping[str, Any]) -> str:
    uri, mime = res.get("uri", "?"), res.get("mimeType")
    if isinstance(res.get("text"), str):
        return f"[resource {uri}]\n{res['text']}"
    blob = res.get("blob")
    size = f", {_size(blob)}" if isinstance(blob, str) else ""
    return f"[resource {uri}{', ' + mime if mime else ''}{size}]"


def block_text(block: Mapping[str, Any], parts: list[dict[str, Any]]) -> str:
    """One content block as text; media blocks also append a content part."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        data, mime = str(block.get("data", "")), str(block.get("mimeType") or kind)
        if kind == "image":
            parts.append({"type": "image_url",
                          "image_url": {"url": f"data:{mime};base64,{data}"}})
        elif mime in _AUDIO_FORMATS:
            parts.append({"type": "input_audio",
                          "input_audio": {"data": data, "format": _AUDIO_FORMATS[mime]}})
        return f"[{mime}, {_size(data)}]"
    if kind == "resource":
        return _resource(block.get("resource") or {})
    if kind == "resource_link":
        name = block.get("title") or block.get("name") or ""
        return f"[resource link {name} {block.get('uri', '?')}]".replace("  ", " ")
    return f"[unsupported MCP content type {kind!r}]"


def result_text(result: Mapping[str, Any]) -> ContentText:
    """A ``CallToolResult`` (dumped with wire aliases) as observation text with parts.

    ``structuredContent`` is sent once: the spec has a server mirror it in text blocks (the
    Python SDK writes a list as one block per item), so it is added as JSON only when no
    text block carries anything."""
    parts: list[dict[str, Any]] = []
    blocks = list(result.get("content") or [])
    texts = [block_text(b, parts) for b in blocks]
    structured = result.get("structuredContent")
    said = any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in blocks)
    if structured is not None and not said:
        texts.append(json.dumps(structured, ensure_ascii=False))
    return ContentText("\n".join(texts), parts)


def resource_text(contents: Iterable[Mapping[str, Any]]) -> ContentText:
    """A ``resources/read`` result's contents as text (blobs as placeholders and parts)."""
    parts: list[dict[str, Any]] = []
    texts, items = [], list(contents)
    for item in items:
        mime = str(item.get("mimeType") or "")
        if isinstance(item.get("blob"), str) and mime.startswith("image/"):
            texts.append(block_text({"type": "image", "data": item["blob"], "mimeType": mime},
                                    parts))
        elif isinstance(item.get("text"), str) and len(items) == 1:
            texts.append(item["text"])
        else:
            texts.append(_resource(item))
    return ContentText("\n".join(texts), parts)
