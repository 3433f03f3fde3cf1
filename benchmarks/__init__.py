"""Benchmarks (run each as ``python -m benchmarks.NAME`` from the repository's root) and their timing
helpers (``harness``); the servers and the protocol client they share with the tests are ``testbed``'s."""
