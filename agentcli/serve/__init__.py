"""``agent serve``: configured agents behind an OpenAI-compatible HTTP endpoint.

    agents.py   the served agents (one per config profile), built by the runtime factory
    wire.py     the chat-completions format: parse requests, build bodies and SSE chunks
    turns.py    one request as one run: inputs, session memory, the trace as it happens
    guard.py    the bearer token, the loopback Host check, JSON-only POSTs (an ASGI middleware)
    app.py      the Starlette routes (needs the ``serve`` extra)
    server.py   uvicorn on a socket we bind (needs the ``serve`` extra)

Nothing here is imported by ``agent --help``; Starlette and uvicorn load only when serving.
"""
