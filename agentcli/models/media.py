"""Whether a model reads images and audio, for forwarding what tools return (``tool_media``).

``auto`` decides from the model's name: the families below read images. A guess from a name
errs towards off; ``tool_media: on`` forwards regardless, ``off`` never does.
"""

from __future__ import annotations

import re

_READS_MEDIA = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-5|o4-mini|\bo3\b|vision|llava|pixtral|minicpm-v|moondream"
    r"|qwen[\d.]*-?vl|[-_/.]vl(?:[-_.:]|$)|gemini|claude-3|claude-(?:sonnet|opus)-4",
    re.IGNORECASE,
)


def reads_media(model: str) -> bool:
    """True when ``model`` (``provider/name`` or a bare name) is a known vision model."""
    return bool(_READS_MEDIA.search(model))


def forward_media(setting: str, model: str) -> bool:
    """The ``tool_media`` setting (auto, on, off) resolved for ``model``."""
    return setting == "on" or (setting == "auto" and reads_media(model))
