"""Generators of realistic test and benchmark data (``python -m pairling_fast generate …``)."""
