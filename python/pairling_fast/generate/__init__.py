"""Generators of realistic, valid documents for tests and benchmarks.

``python -m pairling_fast generate <kind> ...``: each kind is a module exposing
``add_arguments(parser)`` and ``run(args) -> int``.
"""
