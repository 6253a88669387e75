"""MCP results as observations: never a Python repr; media as placeholders plus content parts."""

from __future__ import annotations

import base64

from agentcli.mcp.results import ContentText, resource_text, result_text

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 5500).decode()


def test_text_image_audio_resources_and_links() -> None:
    out = result_text({"content": [
        {"type": "text", "text": "Here:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "alpha"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA",
                                          "mimeType": "application/octet-stream"}},
        {"type": "resource_link", "uri": "demo://r/1", "name": "r1"},
        {"type": "hologram"},
    ]})
    assert isinstance(out, ContentText)
    assert out.splitlines() == [
        "Here:", "[image/png, 5.4 KB]", "[audio/wav, 4 B]", "[resource file:///a.txt]", "alpha",
        "[resource file:///b.bin, application/octet-stream, 3 B]",
        "[resource link r1 demo://r/1]", "[unsupported MCP content type 'hologram']"]
    assert out.parts[0] == {"type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert out.parts[1] == {"type": "input_audio",
                            "input_audio": {"data": "UklGRg==", "format": "wav"}}
    assert "Content(" not in out and "{'type'" not in out


def test_structured_content_as_json_once() -> None:
    only = result_text({"content": [], "structuredContent": {"t": 21.5, "ok": True}})
    assert only == '{"t": 21.5, "ok": true}'
    mirrored = result_text({"content": [{"type": "text", "text": '{"t": 1}'}],
                            "structuredContent": {"t": 1}})
    assert mirrored == '{"t": 1}'
    wrapped = result_text({"content": [{"type": "text", "text": "42"}],
                           "structuredContent": {"result": "42"}})
    assert wrapped == "42"
    items = result_text({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                         "structuredContent": {"result": ["a", "b"]}})  # the Python SDK's list
    assert items == "a\nb"
    beside_media = result_text({"content": [{"type": "image", "data": PNG,
                                             "mimeType": "image/png"}],
                                "structuredContent": {"w": 2}})
    assert beside_media == '[image/png, 5.4 KB]\n{"w": 2}'


def test_resource_read_contents() -> None:
    assert resource_text([{"uri": "a", "text": "just text"}]) == "just text"
    two = resource_text([{"uri": "a", "text": "x"}, {"uri": "b", "blob": PNG,
                                                    "mimeType": "image/png"}])
    assert two.splitlines() == ["[resource a]", "x", "[image/png, 5.4 KB]"]
    assert two.parts[0]["type"] == "image_url"
