"""Planning through libscv's scv_plan_json (ctypes): `scavenger plan --json` as a call.

    import scavenger
    report = scavenger.plan(profile=["a.jsonl", "b.jsonl"], target_epochs=7,
                            vm=["c5.xlarge", "c5.2xlarge"], workers="1..32", objective="knee")
    report["chosen"]["workers"], report["chosen"]["batch"], report["chosen"]["vm"]

The request's fields are `scavenger plan`'s options with '_' for '-' (include/scv.h lists
them): "profile" (metrics files) or "metrics" (their text), the target ("target_epochs",
or "target_run" with "target_accuracy") and the optional search space, models and choice.
The result is the JSON report `plan --json` prints, as a dict. A failure raises ScvError
with libscv's message, which names the field (or file) at fault.

libscv.so is found through $SCV_LIB (a path), else beside an installed copy of this package
(PREFIX/lib/pythonX.Y/dist-packages/scavenger -> PREFIX/lib), else a checkout's
build/libscv.so (of the working directory, then of this file's checkout), else the system's
library path (libscv.so.0). Pure Python (the standard library only).
"""
import ctypes
import ctypes.util
import json
import os
import threading

__all__ = ["plan", "plan_json", "ScvError", "library_path"]

_SONAME = "libscv.so.0"


class ScvError(Exception):
    """A libscv failure: code is the SCV_E* number, name its symbol ("SCV_EINVAL"),
    message scv_err's text (it names the field or file at fault)."""

    def __init__(self, code, name, message):
        super().__init__("%s: %s" % (name, message))
        self.code = code
        self.name = name
        self.message = message


class _Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]  # SCV_ERR_LEN


def _candidates():
    env = os.environ.get("SCV_LIB")
    if env:
        return [env]  # asked for: no other guess
    here = os.path.dirname(os.path.abspath(__file__))
    out = [
        # installed: PREFIX/lib/pythonX.Y/dist-packages/scavenger/ -> PREFIX/lib/
        os.path.normpath(os.path.join(here, "..", "..", "..", _SONAME)),
        os.path.join(os.getcwd(), "build", "libscv.so"),
        # a checkout: python/scavenger/ -> build/
        os.path.normpath(os.path.join(here, "..", "..", "build", "libscv.so")),
    ]
    found = ctypes.util.find_library("scv")
    out.append(found if found else _SONAME)
    return out


_lock = threading.Lock()
_lib = None
_lib_path = None


def _load():
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path + " (absent)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            lib.scv_plan_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.POINTER(_Err)]
            lib.scv_plan_json.restype = ctypes.c_int
            lib.scv_json_free.argtypes = [ctypes.c_void_p]
            lib.scv_json_free.restype = None
            lib.scv_errname.argtypes = [ctypes.c_int]
            lib.scv_errname.restype = ctypes.c_char_p
            _lib, _lib_path = lib, path
            return lib
        raise OSError("libscv not found; set SCV_LIB to libscv.so's path (tried: %s)" % "; ".join(tried))


def library_path():
    """The path libscv was loaded from (loading it if needed)."""
    _load()
    return _lib_path


def plan_json(request_json):
    """scv_plan_json on a JSON text (str or bytes); returns the report's JSON text."""
    lib = _load()
    if isinstance(request_json, str):
        request_json = request_json.encode("utf-8")
    out = ctypes.c_void_p()
    err = _Err()
    rc = lib.scv_plan_json(request_json, ctypes.byref(out), ctypes.byref(err))
    if rc != 0:
        name = lib.scv_errname(rc)
        raise ScvError(rc, name.decode() if name else str(rc), err.msg.decode("utf-8", "replace"))
    try:
        return ctypes.string_at(out.value).decode("utf-8")
    finally:
        lib.scv_json_free(out)


def plan(request=None, **fields):
    """Plans from a request dict and/or keyword fields (keywords win); returns the report
    as a dict. Lists (profile, metrics, vm, workers, batch) may be Python lists."""
    req = dict(request or {})
    req.update(fields)
    return json.loads(plan_json(json.dumps(req)))
