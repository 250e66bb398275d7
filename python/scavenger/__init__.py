"""Scavenger from Python: bindings to libscv (the library behind the `scavenger` tool).

Each helper lives in its own module of this package and is re-exported here:
  planner  plan(), plan_json(), ScvError: `scavenger plan --json` through libscv.so (ctypes)
"""
from .planner import ScvError, library_path, plan, plan_json

__all__ = ["ScvError", "library_path", "plan", "plan_json"]
__version__ = "0.1.0"
