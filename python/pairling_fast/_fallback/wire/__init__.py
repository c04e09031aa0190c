"""CAR wire checks for the pure-Python backend, one module a part, as ``rust/wire/`` is: RPC
results and params (``rpc``), streaming JSON-RPC 2.0 transcripts (``transcript``), and the
wire-schema bundle's own integrity (``bundle``); ``shared`` holds the value reading and message
wording all three use, ``arguments`` reads the engine API's arguments as
``rust/python/wire_checks.rs`` does.

Each module mirrors its Rust peer rule for rule: the same codes, pointers, lines, messages and
stats (``docs/wire.md``).
"""
