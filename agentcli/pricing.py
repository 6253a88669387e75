"""Token prices per provider and model (USD per 1M tokens), and the cost of a call.

The built-in table is below (Python data: reading it costs no YAML parser); a user file
given as ``prices:`` in the config replaces entries per model. An unlisted model has an
unknown cost (``None``), never zero, so a budget cannot silently pass.
"""

from __future__ import annotations

from functools import lru_cache

from agentcli.errors import ConfigError
from agentcli.files import read_small_text
from agentcli.records import record
from agentcli.schema import Usage


@record
class Price:
    """USD per 1M input and output tokens."""

    input: float
    output: float

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` at this price."""
        return (usage.prompt_tokens * self.input + usage.completion_tokens * self.output) / 1e6


PriceTable = dict[str, dict[str, Price]]

# USD per 1M tokens (input, output). A model matches its exact name, else the longest
# listed name it starts with (gpt-4o-mini-2024-07-18 uses gpt-4o-mini). Local servers
# cost nothing. Override with `prices: FILE` (YAML of the same shape) in the config.
_BUILT_IN: PriceTable = {
    "openai": {
        "gpt-4o": Price(2.5, 10.0),
        "gpt-4o-mini": Price(0.15, 0.6),
        "gpt-4.1": Price(2.0, 8.0),
        "gpt-4.1-mini": Price(0.4, 1.6),
        "gpt-4.1-nano": Price(0.1, 0.4),
        "gpt-3.5-turbo": Price(0.5, 1.5),
        "o4-mini": Price(1.1, 4.4),
    },
    "dashscope": {
        "qwen-turbo": Price(0.05, 0.2),
        "qwen-plus": Price(0.4, 1.2),
        "qwen-max": Price(1.6, 6.4),
    },
    "deepseek": {
        "deepseek-chat": Price(0.27, 1.1),
        "deepseek-reasoner": Price(0.55, 2.19),
    },
    "openrouter": {},
    "ollama": {"*": Price(0.0, 0.0)},
    "vllm": {"*": Price(0.0, 0.0)},
    "lmstudio": {"*": Price(0.0, 0.0)},
    "llamacpp": {"*": Price(0.0, 0.0)},
}


def _parse(data: object, where: str) -> PriceTable:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the price table must map provider -> model -> price")
    table: PriceTable = {}
    for provider, models in data.items():
        if not isinstance(models, dict):
            raise ConfigError(f"{where}: {provider!r} must map model names to prices")
        table[str(provider).lower()] = {}
        for model, price in models.items():
            try:
                table[str(provider).lower()][str(model)] = Price(
                    float(price["input"]), float(price["output"])
                )
            except (TypeError, KeyError, ValueError):
                raise ConfigError(
                    f"{where}: {provider}.{model} must be {{input: USD, output: USD}} "
                    f"per 1M tokens, got {price!r}"
                ) from None
    return table


@lru_cache(maxsize=8)
def load_prices(path: str | None = None) -> PriceTable:
    """The built-in table, with ``path`` (a YAML file) layered on top."""
    table = {provider: dict(models) for provider, models in _BUILT_IN.items()}
    if path:
        from agentcli.yaml_loader import load_mapping

        text = read_small_text(path, "price file", "check prices: in the config")
        extra = load_mapping(text, f"price file {path}", "fix the YAML syntax")
        for provider, models in _parse(extra, str(path)).items():
            table.setdefault(provider, {}).update(models)
    return table


def price_of(model: str, table: PriceTable | None = None) -> Price | None:
    """The price of ``provider/model`` in ``table`` (default: the built-in one), or None."""
    table = load_prices(None) if table is None else table
    provider, _, name = model.partition("/")
    models = table.get(provider.lower())
    if not models or not name:
        return None
    if name in models:
        return models[name]
    prefixes = [k for k in models if k != "*" and name.startswith(k)]
    if prefixes:
        return models[max(prefixes, key=len)]
    return models.get("*")


def cost_of(model: str, usage: Usage, table: PriceTable | None = None) -> float | None:
    """USD for ``usage`` on ``model``; None when the price is unknown."""
    price = price_of(model, table)
    return None if price is None else price.cost(usage)
