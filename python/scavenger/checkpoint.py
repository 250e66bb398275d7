"""The model a Scavenger run trained, back in your own module (needs PyTorch).

  load_model            the checkpoint's "model" (SCV_CHECKPOINT_DIR/checkpoint.pt, report.json's
                        model.checkpoint_dir) into your module; returns the checkpoint's other keys
  strip_module_prefix   a state dict saved from a DistributedDataParallel wrapper ("module.NAME"
                        keys) as the wrapped module's own

scavenger.torch re-exports both (scv.load_model); the checkpoint's keys are listed in
docs/TRAINER-CONTRACT.md, "The checkpoint of scavenger.torch and scavenger.trainer".
"""
import os

import torch

from .trainer import CHECKPOINT_FILE, UsageError

__all__ = ["load_model", "strip_module_prefix"]


def strip_module_prefix(state_dict, prefix="module."):
    """A state dict saved from a DistributedDataParallel wrapper (every key "module.NAME") as
    the wrapped module's own (keys "NAME"), a copy with its metadata; one without the prefix
    (a key that lacks it) is returned as it is. So a file saved as model.state_dict() of a
    DDP model loads into a plain model: net.load_state_dict(strip_module_prefix(torch.load(f)))."""
    keys = list(state_dict.keys())
    if not keys or not all(isinstance(k, str) and k.startswith(prefix) for k in keys):
        return state_dict
    out = type(state_dict)() if hasattr(type(state_dict), "fromkeys") else {}
    for k in keys:
        out[k[len(prefix):]] = state_dict[k]
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:  # the modules' versions, by their names: the wrapped module is the root now
        m = type(meta)()
        for k, v in meta.items():
            if k == prefix[:-1]:
                m[""] = v
            elif k.startswith(prefix):
                m[k[len(prefix):]] = v
        out._metadata = m
    return out


def load_model(directory_or_file, module, strict=True):
    """The model a Scavenger run trained, into your own module: the "model" of the checkpoint
    file (DIR/checkpoint.pt, DIR the run's checkpoint directory, report.json's
    model.checkpoint_dir; or a file's path), its keys without DDP's "module." prefix. Returns
    the checkpoint's other keys (iteration, samples_seen, epoch, ...; docs/TRAINER-CONTRACT.md,
    "The checkpoint of scavenger.torch and scavenger.trainer"). UsageError when missing."""
    path = directory_or_file
    if os.path.isdir(path):
        path = os.path.join(path, CHECKPOINT_FILE)
    if not os.path.exists(path):
        raise UsageError("%s does not exist" % path)
    try:
        ck = torch.load(path, map_location="cpu")
    except Exception as e:  # a truncated or foreign file
        raise UsageError("%s: cannot read the checkpoint: %s" % (path, e)) from None
    sd = ck.get("model") if isinstance(ck, dict) and "model" in ck else ck
    module.load_state_dict(strip_module_prefix(sd), strict=strict)
    return {k: v for k, v in ck.items() if k != "model"} if isinstance(ck, dict) and "model" in ck else {}
