"""Test helpers that ship with agentcli: a local OpenAI-compatible mock server."""
