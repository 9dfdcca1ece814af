"""Shared pytest configuration: hypothesis profiles and the import path of the test helpers.

Profiles (select with the environment variable ``HYPOTHESIS_PROFILE``):

- ``ci`` (default): derandomised (fixed seed), at most 40 examples per test, no deadline, and the
  reproduction blob printed on failure;
- ``dev``: random seeds and many more examples, for local bug hunting.
"""

from __future__ import annotations

import os
import sys

from hypothesis import settings

# `reference.py` lives next to the tests; make it importable whatever pytest's import mode.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

settings.register_profile("ci", derandomize=True, max_examples=40, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=500, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
