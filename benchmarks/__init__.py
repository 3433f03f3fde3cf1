"""Benchmarks (run each as ``python -m benchmarks.NAME`` from the repository's root) and the harness
they share with the tests: a local app server and Chromium (``local_server``), a WebSocket client
(``protocol_client``) and timing helpers (``harness``)."""
