"""Shared test configuration: a deterministic hypothesis profile and a headless matplotlib."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

try:
    from hypothesis import settings

    settings.register_profile("tcpmodels", derandomize=True, deadline=None, max_examples=60)
    settings.load_profile("tcpmodels")
except ImportError:  # hypothesis is in the `test` extra
    pass
