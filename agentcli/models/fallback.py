"""Fallback models: try the primary, and on a provider failure the next model in the list."""

from __future__ import annotations

from collections.abc import Sequence

from agentcli.errors import ModelOutputError, ProviderError
from agentcli.events import notify
from agentcli.models.base import BaseChatModel, TokenSink, WrapperModel
from agentcli.schema import ChatRequest, ChatResult

# Statuses that say "fix your request or your key"; another model will not help.
_FINAL_STATUSES = frozenset({400, 401, 403, 404, 422})


def should_fall_back(err: ProviderError) -> bool:
    """Whether a failure (after the provider's own retries) is worth another model."""
    return isinstance(err, ModelOutputError) or err.status not in _FINAL_STATUSES


class FallbackChatModel(WrapperModel):
    """Calls ``models[0]``; when it fails with a retryable/exhausted error, the next one.

    Each switch is reported as ``on_text(kind="fallback")`` on the call in progress.
    The last error is raised when every model has failed.
    """

    def __init__(self, models: Sequence[BaseChatModel]) -> None:
        if not models:
            raise ValueError("FallbackChatModel needs at least one model")
        super().__init__(models[0])  # requests are reported as the primary's
        self.models = list(models)
        self.supports_tools = all(m.supports_tools for m in self.models)

    def _switch(self, index: int, err: ProviderError) -> None:
        if index + 1 >= len(self.models) or not should_fall_back(err):
            raise err
        nxt = self.models[index + 1]
        notify("fallback", f"{self.models[index].name} failed ({err}); falling back to "
               f"{nxt.name}", failed=self.models[index].name, to=nxt.name, status=err.status)

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """Generate with the first model that succeeds."""
        for i, model in enumerate(self.models):
            try:
                return await model.arequest(request, on_token)
            except ProviderError as err:
                self._switch(i, err)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Close every model."""
        for model in self.models:
            model.close()
