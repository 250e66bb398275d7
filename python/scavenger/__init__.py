"""Scavenger from Python: bindings to libscv (the library behind the `scavenger` tool).

Each helper lives in its own module of this package and is re-exported here:
  planner  plan(), plan_json(), ScvError: `scavenger plan --json` through libscv.so (ctypes)
Three more need PyTorch and are not imported here (import them yourself):
  scavenger.torch       wrappers that keep your training loop (init, DDP, DataLoader, epochs,
                        report, evaluate)
  scavenger.trainer     the contract's pieces and Trainer, a loop of its own
  scavenger.checkpoint  the model a run trained back in your module (load_model)
"""
from .planner import ScvError, library_path, plan, plan_json

__all__ = ["ScvError", "library_path", "plan", "plan_json"]
__version__ = "0.1.0"
