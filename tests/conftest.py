import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hypothesis import settings  # noqa: E402

# CI gates a landing: there the property tests draw the same examples every run
# (HYPOTHESIS_PROFILE=ci in .ci/run); elsewhere they explore new ones each run.
settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
