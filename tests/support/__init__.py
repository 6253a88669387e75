"""Test support: a local OpenAI-compatible mock server, a scripted agent, a real llama.cpp
server for opt-in runs. Not shipped in the wheel."""
