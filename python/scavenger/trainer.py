"""The trainer's side of Scavenger's contract (docs/TRAINER-CONTRACT.md) for PyTorch.

Scavenger starts K processes with `mpirun -np K /bin/sh -c COMMAND` and the SCV_* variables;
this module turns them into a synchronous data-parallel training loop that keeps the contract:

  Env               the SCV_* variables and Open MPI's rank/size (standalone defaults: K=1)
  split_batch       worker k's share of the global batch, exactly as libscv's scv_split_batch
  init_distributed  torch.distributed at tcp://SCV_MASTER_ADDR:SCV_MASTER_PORT (NCCL on CUDA, gloo
                    on the CPU; default_backend picks)
  EpochSampler      the epoch order (a function of seed and epoch only) and the position in it
  StatsHook         the DDP communication hook: weights b_k/B, |g_k|^2, loss and the stop flag
                    ride in the gradient allreduce; |g|^2 of the averaged gradient after it
  MetricsWriter     worker 0's job/iter/eval JSON lines (line-buffered)
  save_checkpoint / load_checkpoint   atomic torch.save + scavenger-state.json
  lr_at             the learning-rate rule of `scavenger train` (scaling on B, warm-up, decay)
  Trainer           all of it as one loop: Trainer(...).fit(get_batch, loss_fn)
  run_main          maps UsageError to exit 2 and WriteError to exit 3; ends with os._exit

The gradient statistics, per iteration (worker k has b_k of the B samples):
  grad_sqnorm_local_mean = mean over workers with b_k > 0 of |g_k|^2, g_k its mean gradient
  grad_sqnorm_global     = |g|^2, g = sum_k (b_k/B) g_k, the global batch's mean gradient
Both cost one pass over the gradient and no extra collective (squares summed by torch.sum's
cascade summation: float32 dot products lose digits on large gradients).

Needs torch (Debian's python3-torch 1.13 is enough); `import scavenger` does not import this
module, so the rest of the package works without torch. See python/scavenger/README.md.
"""
import datetime
import json
import math
import os
import re
import signal
import socket
import sys
import time

import torch
import torch.distributed as dist

__all__ = [
    "Env", "UsageError", "WriteError", "split_batch", "init_distributed", "default_backend", "EpochSampler",
    "StatsHook", "MetricsWriter", "save_checkpoint", "load_checkpoint", "write_state",
    "lr_at", "activation_bytes", "count_params", "evaluate_classifier", "Trainer", "run_main",
    "CHECKPOINT_FILE", "STATE_FILE",
]

CHECKPOINT_FILE = "checkpoint.pt"
STATE_FILE = "scavenger-state.json"
EXIT_USAGE = 2
EXIT_WRITE = 3


class UsageError(Exception):
    """The configuration or the options are refused: exit 2 (a retry cannot help)."""


class WriteError(Exception):
    """A file (metrics, checkpoint) could not be written: exit 3."""


# --------------------------------------------------------------------------------------------
# The environment

_INT = re.compile(r"^\s*\+?[0-9]+\s*$")


def _env_int(name, default, lo=0, hi=None, environ=None):
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if not _INT.match(raw):
        raise UsageError("%s=%r: expected an integer >= %d" % (name, raw, lo))
    v = int(raw)
    if v < lo or (hi is not None and v > hi):
        raise UsageError("%s=%s: expected an integer in [%d, %s]" % (name, raw, lo, hi if hi is not None else "inf"))
    return v


def _env_float(name, default, lo=0.0, environ=None):
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        v = float(raw)
    except ValueError:
        raise UsageError("%s=%r: expected a number >= %g" % (name, raw, lo)) from None
    if not math.isfinite(v) or v < lo:
        raise UsageError("%s=%r: expected a finite number >= %g" % (name, raw, lo))
    return v


def _env_bool(name, default, environ=None):
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.strip() not in ("0", "1"):
        raise UsageError("%s=%r: expected 0 or 1" % (name, raw))
    return raw.strip() == "1"


class Env:
    """What one process of an invocation is told (docs/TRAINER-CONTRACT.md, "How a trainer is
    started"). Each SCV_* variable wins over the keyword default of the same meaning, so a
    script's own options (--batch, --epochs, ...) apply only when it runs standalone.

    Fields: workers (K), rank, local_rank, batch (B), split (K weights or None), master_addr,
    master_port, checkpoint_dir, resume, metrics, until_iterations, max_epochs,
    eval_every_epochs, seed, probe. A malformed variable raises UsageError naming it."""

    def __init__(self, workers=1, rank=0, local_rank=0, batch=64, split=None,
                 master_addr="127.0.0.1", master_port=29500, checkpoint_dir=None, resume=False,
                 metrics=None, until_iterations=0, max_epochs=0.0, eval_every_epochs=1.0, seed=0,
                 probe=False):
        self.workers, self.rank, self.local_rank = workers, rank, local_rank
        self.batch, self.split = batch, split
        self.master_addr, self.master_port = master_addr, master_port
        self.checkpoint_dir, self.resume, self.metrics = checkpoint_dir, resume, metrics
        self.until_iterations, self.max_epochs = until_iterations, max_epochs
        self.eval_every_epochs, self.seed, self.probe = eval_every_epochs, seed, probe

    @classmethod
    def from_environ(cls, environ=None, batch=64, seed=0, checkpoint_dir=None, resume=False,
                     metrics=None, until_iterations=0, max_epochs=0.0, eval_every_epochs=1.0,
                     master_addr="127.0.0.1", master_port=29500):
        """Reads os.environ (or environ); the keywords are the standalone defaults."""
        env = os.environ if environ is None else environ
        mpi = env.get("OMPI_COMM_WORLD_SIZE") not in (None, "")  # else torchrun's names
        size = _env_int("OMPI_COMM_WORLD_SIZE" if mpi else "WORLD_SIZE", None, lo=1, environ=env)
        rank = _env_int("OMPI_COMM_WORLD_RANK" if mpi else "RANK", 0, lo=0, environ=env)
        local_rank = _env_int("OMPI_COMM_WORLD_LOCAL_RANK" if mpi else "LOCAL_RANK", 0, lo=0, environ=env)
        workers = _env_int("SCV_WORKERS", size if size is not None else 1, lo=1, environ=env)
        if size is not None and workers != size:
            raise UsageError("SCV_WORKERS=%d but %d processes were started (%s)"
                             % (workers, size, "OMPI_COMM_WORLD_SIZE" if mpi else "WORLD_SIZE"))
        if rank >= workers:
            raise UsageError("%s=%d: not below SCV_WORKERS=%d" % ("OMPI_COMM_WORLD_RANK" if mpi else "RANK",
                                                                  rank, workers))
        B = _env_int("SCV_BATCH", batch, lo=1, environ=env)
        if not isinstance(B, int) or B < 1:
            raise UsageError("batch %r: expected a positive integer (SCV_BATCH or --batch)" % (B,))
        split = None
        raw = env.get("SCV_SPLIT")
        if raw is not None and raw.strip() != "":
            parts = raw.split(",")
            try:
                split = [float(p) for p in parts]
            except ValueError:
                raise UsageError("SCV_SPLIT=%r: expected %d comma-separated positive weights" % (raw, workers)) from None
            if len(split) != workers or not all(math.isfinite(w) and w > 0 for w in split):
                raise UsageError("SCV_SPLIT=%r: expected %d comma-separated positive weights (SCV_WORKERS=%d)"
                                 % (raw, workers, workers))
        addr = env.get("SCV_MASTER_ADDR") or env.get("MASTER_ADDR") or master_addr
        port = _env_int("SCV_MASTER_PORT" if env.get("SCV_MASTER_PORT") else "MASTER_PORT", master_port,
                        lo=1, hi=65535, environ=env)
        ckpt = env.get("SCV_CHECKPOINT_DIR") or checkpoint_dir
        if ckpt is not None and rank == 0 and not os.path.isdir(ckpt):  # only worker 0 uses it
            raise UsageError("SCV_CHECKPOINT_DIR=%s: not a directory" % ckpt)
        res = _env_bool("SCV_RESUME", bool(resume), environ=env)
        if res and not ckpt:
            raise UsageError("SCV_RESUME=1 needs SCV_CHECKPOINT_DIR")
        return cls(workers=workers, rank=rank, local_rank=local_rank, batch=B, split=split,
                   master_addr=addr, master_port=port, checkpoint_dir=ckpt, resume=res,
                   metrics=env.get("SCV_METRICS") or metrics,
                   until_iterations=_env_int("SCV_UNTIL_ITERATIONS", until_iterations, lo=0, environ=env),
                   max_epochs=_env_float("SCV_MAX_EPOCHS", max_epochs, environ=env),
                   eval_every_epochs=_env_float("SCV_EVAL_EVERY_EPOCHS", eval_every_epochs, environ=env),
                   seed=_env_int("SCV_SEED", seed, lo=0, hi=2 ** 64 - 1, environ=env),
                   probe=_env_bool("SCV_PROBE", False, environ=env))

    def __repr__(self):
        return "Env(%s)" % ", ".join("%s=%r" % kv for kv in sorted(vars(self).items()))


# --------------------------------------------------------------------------------------------
# The batch split and the epoch order

def split_batch(B, K, weights=None):
    """(counts, offsets): B samples over K workers in proportion to weights (None: even), by
    largest remainder, exactly as libscv's scv_split_batch (src/train/sched.c): floor(B w_k /
    sum w) each, then the leftover samples one by one to the largest remainders, the lower k
    on ties (remainders within 1e-12 tie). counts sum to B; offsets[k] = sum of counts[:k]."""
    B, K = int(B), int(K)
    if K < 1:
        raise ValueError("split_batch: K must be >= 1")
    w = [1.0] * K if weights is None else [float(x) for x in weights]
    if len(w) != K:
        raise ValueError("split_batch: %d weights for K=%d" % (len(w), K))
    wsum = 0.0
    for x in w:
        wsum += x
    counts, rem, given = [], [], 0
    for k in range(K):
        share = float(B) * w[k] / wsum  # the C expression: ((double)B * w) / wsum
        c = int(math.floor(share))
        counts.append(c)
        if k < 1024:
            rem.append(share - float(c))
        given += c
    while given < B:
        best = 0
        for k in range(1, min(K, 1024)):
            if rem[k] > rem[best] + 1e-12:
                best = k
        counts[best] += 1
        rem[best] = -1.0
        given += 1
    offsets, off = [], 0
    for c in counts:
        offsets.append(off)
        off += c
    return counts, offsets


_M64 = (1 << 64) - 1


def _mix64(x):
    """splitmix64's finaliser: a 64-bit hash."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def epoch_seed(seed, epoch):
    """The torch.Generator seed of epoch `epoch` of a run seeded `seed` (63 bits)."""
    return (_mix64(int(seed) & _M64) ^ _mix64((int(epoch) + 0x5CA1AB1E) & _M64)) & ((1 << 63) - 1)


def epoch_order(n, seed, epoch):
    """The sample order of an epoch: a permutation of range(n) that depends only on
    (seed, epoch) (torch.randperm on a generator seeded from both), never on K or B."""
    g = torch.Generator()
    g.manual_seed(epoch_seed(seed, epoch))
    return torch.randperm(n, generator=g)


class EpochSampler:
    """The position in the epoch order. Each iteration takes the next B' = min(B, n - position)
    samples of the order (the last batch of an epoch may be short); worker k gets its slice
    [position + off_k, position + off_k + b_k) with (b, off) = split_batch(B', K, weights).
    advance(B') moves on and starts the next epoch at the end of one, so (epoch, position) is
    all a checkpoint needs: a run resumed at another K and B continues at the same sample."""

    def __init__(self, n, seed, epoch=0, position=0):
        if n < 1:
            raise ValueError("EpochSampler: empty training set")
        if not (0 <= position <= n):
            raise ValueError("EpochSampler: position %d outside [0, %d]" % (position, n))
        self.n, self.seed = int(n), int(seed)
        self.epoch, self.position = int(epoch), int(position)
        self._order_epoch, self._order = None, None
        self._normalise()

    def _normalise(self):
        if self.position >= self.n:
            self.epoch += 1
            self.position = 0

    def order(self):
        if self._order_epoch != self.epoch:
            self._order = epoch_order(self.n, self.seed, self.epoch)
            self._order_epoch = self.epoch
        return self._order

    def next_batch(self, B, K=1, weights=None, rank=0):
        """(indices, B', counts): this worker's sample indices (a LongTensor, maybe empty),
        the samples of this iteration over all workers and every worker's share."""
        Bcur = min(int(B), self.n - self.position)
        counts, offsets = split_batch(Bcur, K, weights)
        lo = self.position + offsets[rank]
        return self.order()[lo:lo + counts[rank]], Bcur, counts

    def advance(self, Bcur):
        self.position += int(Bcur)
        self._normalise()


# --------------------------------------------------------------------------------------------
# torch.distributed

def _iface_for(addr, port=9):
    """The name of the local interface whose IPv4 address reaches addr (None if unknown)."""
    try:
        import fcntl
        import struct
        ip = socket.gethostbyname(addr)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ip, port))
            local = s.getsockname()[0]
            for _, name in socket.if_nameindex():
                try:
                    req = struct.pack("256s", name.encode()[:15])
                    got = fcntl.ioctl(s.fileno(), 0x8915, req)  # SIOCGIFADDR
                except OSError:
                    continue
                if socket.inet_ntoa(got[20:24]) == local:
                    return name
    except (OSError, ImportError, UnicodeError):
        return None
    return None


def default_backend(device=None):
    """"nccl" when the model lives on a CUDA device (device: a torch.device, a module or None
    for "CUDA is available") and NCCL is built in; "gloo" otherwise."""
    if isinstance(device, torch.nn.Module):
        p = next(device.parameters(), None)
        device = p.device if p is not None else torch.device("cpu")
    cuda = torch.cuda.is_available() if device is None else torch.device(device).type == "cuda"
    return "nccl" if cuda and dist.is_nccl_available() else "gloo"


def init_distributed(env, timeout_s=1800, backend=None, single=False):
    """Joins the K processes in a process group (init_method tcp://SCV_MASTER_ADDR:
    SCV_MASTER_PORT, rank and size from Open MPI or torchrun). backend: "gloo", "nccl" or None
    (default_backend(): NCCL when CUDA is available, gloo otherwise). Returns False for K=1
    (nothing to join) unless single=True, which makes a group of one process (an in-memory
    store), so that DDP and its communication hook run the same code at every K.
    GLOO_SOCKET_IFNAME is set to the interface that reaches the master unless already set."""
    if dist.is_initialized():
        return True
    if env.workers == 1 and not single:
        return False
    backend = backend or default_backend()
    if env.workers == 1:
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1,
                                timeout=datetime.timedelta(seconds=timeout_s))
        return True
    if not os.environ.get("GLOO_SOCKET_IFNAME"):
        iface = _iface_for(env.master_addr, env.master_port)
        if iface:
            os.environ["GLOO_SOCKET_IFNAME"] = iface
    host = "[%s]" % env.master_addr if ":" in env.master_addr else env.master_addr
    dist.init_process_group(backend, init_method="tcp://%s:%d" % (host, env.master_port),
                            rank=env.rank, world_size=env.workers,
                            timeout=datetime.timedelta(seconds=timeout_s))
    return True


# --------------------------------------------------------------------------------------------
# Gradient averaging with the statistics in the same allreduce

class StatsHook:
    """State and function of a DDP communication hook (register with
    ddp.register_comm_hook(stats, StatsHook.hook)). Before each backward pass set
    begin(local_batch=b_k, batch=B, loss_sum=..., stop=..., error=...); the local loss must
    be the MEAN over the worker's own b_k samples (zero gradients when b_k = 0).

    For each bucket the hook sends [(b_k/B) * bucket, |bucket|^2, has, loss_sum, stop, error]
    through one allreduce (sum): the reduced bucket is the global batch's mean gradient; the
    scalars summed over buckets and workers give sum_k |g_k|^2, the number of workers with
    samples, the batch's loss sum and the flags (taken from bucket 0 only). After backward()
    returns, collect() adds up |g|^2 over the reduced buckets and the scalars: read the totals
    then. (The future's callback only slices and stamps the time: Python in gloo's thread
    waits for the GIL.)

    Device-agnostic: the buffer is built on the bucket's own device (a CUDA bucket stays on
    its GPU, for NCCL), the squares are summed there, and collect() reads all the totals back
    with one copy to the host. loss_sum may be a tensor (a loss on the GPU: no sync in the
    hook); stop and error may be callables, read when bucket 0 is ready (a signal that came
    during backward still rides in this allreduce)."""

    NX = 5  # scalars after each bucket: local |.|^2, has samples, loss sum, stop, error

    def __init__(self):
        self.begin(0, 1)

    def begin(self, local_batch, batch, loss_sum=0.0, stop=0, error=0):
        self.local_batch, self.batch = int(local_batch), int(batch)
        self.loss_sum, self.stop, self.error = loss_sum, stop, error
        self.local_sq_sum = 0.0   # sum over workers of |g_k|^2
        self.has = 0.0            # workers with b_k > 0
        self.global_sq = 0.0      # |g|^2 of the averaged gradient
        self.loss_total = 0.0     # sum over the batch of the samples' losses
        self.stop_total = 0.0
        self.error_total = 0.0
        self.t_last_ready = None  # when the last bucket became ready (backward's end)
        self.t_done = None        # when the last reduced bucket came back
        self.buckets = 0
        self.pending = []

    def _flags(self):
        ls = self.loss_sum
        stop = self.stop() if callable(self.stop) else self.stop
        error = self.error() if callable(self.error) else self.error
        return ls, float(stop), float(error)

    def _done(self, fut, n):
        self.t_done = time.perf_counter()
        return fut.value()[0][:n]

    @staticmethod
    def hook(state, bucket):
        state.t_last_ready = time.perf_counter()
        buf = bucket.buffer()
        n = buf.numel()
        t = torch.empty(n + StatsHook.NX, dtype=buf.dtype, device=buf.device)
        torch.mul(buf, state.local_batch / state.batch, out=t[:n])
        has = 1.0 if state.local_batch > 0 else 0.0
        if bucket.index() == 0:
            ls, stop, error = state._flags()
            tensor_loss = isinstance(ls, torch.Tensor)
            t[n + 1:] = torch.tensor([has, 0.0 if tensor_loss else float(ls), stop, error],
                                     dtype=buf.dtype, device=buf.device)
            if tensor_loss:
                t[n + 2] = ls.detach().reshape(())
        else:
            t[n + 1:] = 0
        if has:
            t[n] = buf.square().sum()  # on the bucket's device: no copy to the host here
        else:
            t[n] = 0
        state.pending.append((t, n))  # reduced in place; collect() reads it after backward
        return dist.all_reduce(t, async_op=True).get_future().then(lambda f: state._done(f, n))

    def collect(self):
        """After backward() (every bucket reduced): the totals from the reduced buckets, and
        |g|^2 of the averaged gradient. In the caller's thread, not in gloo's callback; one
        copy to the host for all of them."""
        if not self.pending:
            return
        g = torch.stack([t[:n].square().sum() for t, n in self.pending]).double().sum()
        x = torch.stack([t[n:] for t, n in self.pending]).double().sum(0)
        vals = torch.cat([g.reshape(1), x]).cpu().tolist()
        self.global_sq += vals[0]
        self.local_sq_sum += vals[1]
        self.has += vals[2]
        self.loss_total += vals[3]
        self.stop_total += vals[4]
        self.error_total += vals[5]
        self.buckets += len(self.pending)
        self.pending = []


# --------------------------------------------------------------------------------------------
# Metrics

def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


class MetricsWriter:
    """Appends JSON lines to path, one flushed line per write (worker 0's SCV_METRICS).
    Non-finite numbers are written as null. An OSError becomes WriteError (exit 3)."""

    def __init__(self, path):
        self.path = path
        try:
            self.f = open(path, "a", buffering=1, encoding="utf-8")
        except OSError as e:
            raise WriteError("%s: cannot open metrics file: %s" % (path, e.strerror or e)) from None

    def write(self, obj):
        try:
            self.f.write(json.dumps(_clean(obj), separators=(",", ":")) + "\n")
        except OSError as e:
            raise WriteError("%s: cannot write metrics: %s" % (self.path, e.strerror or e)) from None

    def close(self):
        try:
            self.f.close()
        except OSError as e:
            raise WriteError("%s: cannot write metrics: %s" % (self.path, e.strerror or e)) from None


# --------------------------------------------------------------------------------------------
# Checkpoints

def _fsync_dir(d):
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path, write):
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(os.path.dirname(os.path.abspath(path)))
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteError("%s: cannot write: %s" % (path, e.strerror or e)) from None


def write_state(directory, iteration, samples_seen, epoch, position):
    """scavenger-state.json, atomically: the totals after the last iteration (rule 5)."""
    text = json.dumps({"iteration": int(iteration), "samples_seen": int(samples_seen),
                       "epoch": int(epoch), "position": int(position)}) + "\n"
    _atomic_write(os.path.join(directory, STATE_FILE), lambda f: f.write(text.encode()))


def save_checkpoint(directory, model, optimizer, epoch, position, iteration, samples_seen,
                    **extra):
    """torch.save of {model, optimizer, epoch, position, iteration, samples_seen, **extra} to
    DIR/checkpoint.pt (temporary file, fsync, rename), then scavenger-state.json the same
    way. model: the plain module (not the DDP wrapper). Raises WriteError."""
    ck = {"format": "scavenger-torch-1", "model": model.state_dict(),
          "optimizer": optimizer.state_dict() if optimizer is not None else None,
          "epoch": int(epoch), "position": int(position), "iteration": int(iteration),
          "samples_seen": int(samples_seen)}
    ck.update(extra)
    _atomic_write(os.path.join(directory, CHECKPOINT_FILE), lambda f: torch.save(ck, f))
    write_state(directory, iteration, samples_seen, epoch, position)


def load_checkpoint(directory):
    """The dict save_checkpoint wrote (tensors on the CPU). UsageError if it is missing."""
    path = os.path.join(directory, CHECKPOINT_FILE)
    if not os.path.exists(path):
        raise UsageError("SCV_RESUME=1 but %s does not exist" % path)
    try:
        return torch.load(path, map_location="cpu")
    except Exception as e:  # a truncated or foreign file: refused, a retry cannot help
        raise UsageError("%s: cannot read the checkpoint: %s" % (path, e)) from None


# --------------------------------------------------------------------------------------------
# Learning rate, model facts, evaluation

def lr_at(base_lr, batch, samples_seen, n_train, base_batch=None, scaling="none",
          warmup_epochs=0.0, decay="none", step_epochs=0.0, gamma=0.1, horizon_epochs=0.0):
    """The learning rate of the step that takes samples_seen to samples_seen + batch, as
    `scavenger train` computes it (scv_lr_at): lr = base * s(B) * warm * decay with
    s(B) = 1, B/B0 or sqrt(B/B0) (scaling none, linear, sqrt; B0 = base_batch, default B),
    warm = min(1, (samples_seen + B) / (warmup_epochs * n_train)), decay = gamma^floor(e /
    step_epochs) (step) or (1 + cos(pi min(e / horizon, 1))) / 2 (cosine), e = samples_seen /
    n_train. A function of samples seen, so it continues across changes of B."""
    ratio = float(batch) / float(base_batch if base_batch and base_batch > 0 else batch)
    lr = float(base_lr)
    if scaling == "linear":
        lr *= ratio
    elif scaling == "sqrt":
        lr *= math.sqrt(ratio)
    elif scaling not in ("none", None):
        raise UsageError("lr scaling %r: expected none, linear or sqrt" % (scaling,))
    e = float(samples_seen) / float(n_train)
    if warmup_epochs > 0:
        w = float(samples_seen + batch) / (warmup_epochs * float(n_train))
        if w < 1:
            lr *= w
    if decay == "step" and step_epochs > 0:
        lr *= gamma ** math.floor(e / step_epochs)
    elif decay == "cosine" and horizon_epochs > 0:
        lr *= 0.5 * (1 + math.cos(math.pi * min(e / horizon_epochs, 1.0)))
    return lr


def count_params(module):
    """Trainable parameters (the job line's params)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def activation_bytes(module, sample):
    """Bytes of the outputs of the leaf modules for one sample (the job line's act_bytes,
    counted as `scavenger train` counts them: every layer's output, views excluded)."""
    import torch.nn as nn
    total, hooks = [0], []
    skip = (nn.Flatten, nn.Unflatten, nn.Identity)

    def count(_m, _inp, out):
        if isinstance(out, torch.Tensor):
            total[0] += out.numel() * out.element_size()

    for m in module.modules():
        if not list(m.children()) and not isinstance(m, skip):
            hooks.append(m.register_forward_hook(count))
    was = module.training
    try:
        module.eval()
        with torch.no_grad():
            module(sample.unsqueeze(0))
    finally:
        module.train(was)
        for h in hooks:
            h.remove()
    return total[0]


def evaluate_classifier(module, x, y, workers=1, rank=0, chunk=1000):
    """Test accuracy and loss of a classifier on (x, y), shared by the workers: worker k
    evaluates samples [n k / K, n (k+1) / K) and the sums are allreduced, so every worker
    returns the same {"test_accuracy", "test_loss", "n"} whatever K is."""
    import torch.nn.functional as F
    n = len(x)
    lo, hi = n * rank // workers, n * (rank + 1) // workers
    loss_sum, correct = 0.0, 0
    was = module.training
    module.eval()
    with torch.no_grad():
        for i in range(lo, hi, chunk):
            out = module(x[i:min(i + chunk, hi)])
            t = y[i:min(i + chunk, hi)]
            loss_sum += float(F.cross_entropy(out, t, reduction="sum"))
            correct += int((out.argmax(1) == t).sum())
    module.train(was)
    s = torch.tensor([loss_sum, float(correct), float(hi - lo)], dtype=torch.float64)
    if workers > 1:
        dist.all_reduce(s)
    cnt = max(s[2].item(), 1.0)
    return {"test_accuracy": s[1].item() / cnt, "test_loss": s[0].item() / cnt, "n": int(s[2].item())}


# --------------------------------------------------------------------------------------------
# The loop

class Trainer:
    """Synchronous data-parallel training that keeps the contract.

        tr = Trainer(env, model, optimizer, n_train, model_name="cnn",
                     evaluate=lambda m: evaluate_classifier(m, xt, yt, env.workers, env.rank),
                     lr_at=lambda B, seen: lr_at(0.05, B, seen, n_train, 64, "sqrt"),
                     checkpoint_every=200, input_floats=784, act_bytes=58408)
        run_main(lambda: tr.fit(lambda idx: (x[idx], y[idx]), torch.nn.functional.cross_entropy))

    fit() joins the workers (init_distributed), resumes (SCV_RESUME=1), wraps the model in
    DDP with StatsHook (K > 1), writes the job line, then per iteration: takes this worker's
    slice of the batch, forward + backward (loss_fn(outputs, targets) must be the mean over
    the given samples), the one allreduce, lr_at(B', samples_seen) into the optimiser, step,
    the iter line; a periodic evaluation every SCV_EVAL_EVERY_EPOCHS epochs (evaluate(module)
    runs on every worker and returns the fields of the eval line), a checkpoint every
    checkpoint_every iterations. It stops at SCV_UNTIL_ITERATIONS, SCV_MAX_EPOCHS, or on
    SIGUSR1 (what Scavenger sends mpirun, which forwards it), SIGTERM or SIGINT (every worker
    at the same iteration: the flag rides in the allreduce), writes the checkpoint and
    returns 0.

    grad_stats=False is for measuring this module's overhead only: DDP's own averaging, no
    statistics (null), and with K > 1 no stop flag (a signal then ends the processes)."""

    def __init__(self, env, model, optimizer, n_train, *, evaluate=None, lr_at=None,
                 checkpoint_every=0, model_name="model", input_floats=0, act_bytes=0,
                 job_extra=None, grad_stats=True, forward=None, timeout_s=1800, ddp_kwargs=None):
        self.env, self.module, self.optimizer = env, model, optimizer
        self.n_train = int(n_train)
        self.evaluate, self.lr_fn = evaluate, lr_at
        self.checkpoint_every = int(checkpoint_every)
        self.model_name, self.input_floats, self.act_bytes = model_name, input_floats, act_bytes
        self.job_extra = dict(job_extra or {})
        self.grad_stats = grad_stats
        self.forward = forward
        self.timeout_s = timeout_s
        self.ddp_kwargs = dict(ddp_kwargs or {})
        self.model = model  # the DDP wrapper once started with K > 1
        self.iteration = self.samples_seen = 0
        self.period_loss = self.period_samples = 0.0
        self.wall_before = 0.0
        self.extra = {}  # saved in and restored from the checkpoint (yours)
        self.sampler = None
        self.metrics = None
        self.stats = StatsHook()
        self.stopped_by = None
        self._signalled = 0
        self._error = None
        self._old_handlers = {}
        self._t_start = time.time()

    # -- setup --
    def _on_signal(self, signum, frame):
        self._signalled = 1

    def _install_signals(self):
        if self.env.workers > 1 and not self.grad_stats:
            return  # no flag to carry: the signal's default action
        for s in (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT):  # SIGUSR1: what Scavenger sends
            try:
                self._old_handlers[s] = signal.signal(s, self._on_signal)
            except ValueError:  # not the main thread
                pass

    def _restore_signals(self):
        for s, h in self._old_handlers.items():
            signal.signal(s, h)
        self._old_handlers = {}

    def _resume(self, distributed):
        env = self.env
        ck, err = None, None
        if env.rank == 0:
            try:
                ck = load_checkpoint(env.checkpoint_dir)
                if ck.get("n_train") not in (None, self.n_train):
                    raise UsageError("%s: checkpoint was written for a training set of %s samples, this one has %d"
                                     % (env.checkpoint_dir, ck.get("n_train"), self.n_train))
                if ck.get("seed") not in (None, env.seed):
                    raise UsageError("%s: checkpoint used seed %s; resume with the same SCV_SEED"
                                     % (env.checkpoint_dir, ck.get("seed")))
            except UsageError as e:
                ck, err = None, str(e)
        if distributed:
            box = [(ck, err)]
            dist.broadcast_object_list(box, src=0)
            ck, err = box[0]
        if err:
            raise UsageError(err)
        try:
            self.module.load_state_dict(ck["model"])
            if self.optimizer is not None and ck.get("optimizer") is not None:
                self.optimizer.load_state_dict(ck["optimizer"])
        except (RuntimeError, KeyError, ValueError) as e:
            raise UsageError("%s: the checkpoint does not fit this model: %s" % (env.checkpoint_dir, e)) from None
        self.iteration, self.samples_seen = int(ck["iteration"]), int(ck["samples_seen"])
        self.period_loss = float(ck.get("period_loss", 0.0))
        self.period_samples = float(ck.get("period_samples", 0.0))
        self.wall_before = float(ck.get("wall_seconds", 0.0))
        self.extra = dict(ck.get("extra") or {})
        return int(ck["epoch"]), int(ck["position"])

    def start(self):
        """Joins, resumes, wraps, writes the job line. fit() calls it."""
        env = self.env
        self._install_signals()  # from the start: a signal during the set-up stops after one iteration
        distributed = init_distributed(env, self.timeout_s, backend=default_backend(self.module))
        epoch = position = 0
        if env.resume:
            epoch, position = self._resume(distributed)
        self.sampler = EpochSampler(self.n_train, env.seed, epoch, position)
        if distributed:
            from torch.nn.parallel import DistributedDataParallel as DDP
            self.model = DDP(self.module, **self.ddp_kwargs)
            if self.grad_stats:
                self.model.register_comm_hook(self.stats, StatsHook.hook)
        if env.rank == 0 and env.metrics:
            self.metrics = MetricsWriter(env.metrics)
            job = {"type": "job", "model": self.model_name, "framework": "pytorch",
                   "params": count_params(self.module), "n_train": self.n_train,
                   "act_bytes": int(self.act_bytes), "input_floats": int(self.input_floats),
                   "workers": env.workers, "batch": env.batch, "threads": torch.get_num_threads()}
            job.update(self.job_extra)
            self.metrics.write(job)

    # -- stopping --
    def _rule_stop(self):
        env = self.env
        if env.probe and self._run_iters >= 1:
            return "probe"
        if env.until_iterations and self.iteration >= env.until_iterations:
            return "iterations"
        if env.max_epochs > 0 and self.samples_seen >= env.max_epochs * self.n_train - 0.5:
            return "epochs"
        return None

    # -- one iteration --
    def _step(self, get_batch, loss_fn):
        env, K, st = self.env, self.env.workers, self.stats
        distributed = K > 1
        t0 = time.perf_counter()
        epoch = self.sampler.epoch
        idx, Bcur, counts = self.sampler.next_batch(env.batch, K, env.split, env.rank)
        bk = counts[env.rank]
        x, y = get_batch(idx)
        self.optimizer.zero_grad()
        t1 = time.perf_counter()
        # the mean over this worker's samples; weights b_k/B are applied in the allreduce
        out = self.forward(self.model, x) if self.forward else self.model(x)
        if bk > 0:
            loss = loss_fn(out, y)
            loss_sum = float(loss.detach()) * bk
        else:  # no samples: zero gradients, but the DDP forward/backward still takes place
            loss = out.sum() * 0.0
            loss_sum = 0.0
        local_stop = self._signalled
        error = 1 if self._error else 0
        st.begin(bk, Bcur, loss_sum, local_stop, error)
        if distributed and not self.grad_stats:
            loss = loss * (bk * K / Bcur)  # DDP divides by K: the weighted mean once summed
        loss.backward()
        t2 = time.perf_counter()
        if distributed:
            st.collect()
            t2 = time.perf_counter()  # the comm step ends with the statistics
            t_ready = st.t_last_ready if st.t_last_ready is not None else t2
            t_compute, t_comm = t_ready - t1, t2 - t_ready
            if not self.grad_stats:
                st.loss_total, st.stop_total = loss_sum * K, 0.0  # worker 0's estimate
        else:
            sq = 0.0
            if self.grad_stats:  # one float() at the end: dot products, no temporaries
                acc = None
                for p in self.module.parameters():
                    if p.grad is not None:
                        g = p.grad.reshape(-1)
                        d = torch.dot(g, g)
                        acc = d if acc is None else acc + d
                sq = float(acc) if acc is not None else 0.0
            st.local_sq_sum = st.global_sq = sq
            st.has, st.loss_total = 1.0, loss_sum
            st.stop_total, st.error_total = float(local_stop), float(error)
            t3 = time.perf_counter()
            t_compute, t_comm = t2 - t1, t3 - t2
        lr = None
        if self.lr_fn is not None:
            lr = float(self.lr_fn(Bcur, self.samples_seen))
            for g in self.optimizer.param_groups:
                g["lr"] = lr
        elif self.optimizer.param_groups:
            lr = self.optimizer.param_groups[0].get("lr")
        self.optimizer.step()
        t_end = time.perf_counter()
        self.iteration += 1
        self.samples_seen += Bcur
        self.sampler.advance(Bcur)
        self._run_iters += 1
        loss_mean = st.loss_total / Bcur
        self.period_loss += st.loss_total
        self.period_samples += Bcur
        if self.metrics is not None and self._error is None:
            stats_on = self.grad_stats
            line = {"type": "iter", "iter": self.iteration, "epoch": epoch,
                    "epoch_progress": self.samples_seen / self.n_train, "workers": K,
                    "batch": Bcur, "local_batch": bk, "t_compute": t_compute, "t_comm": t_comm,
                    "t_iter": t_end - t0, "loss": loss_mean, "lr": lr,
                    "grad_sqnorm_local_mean": (st.local_sq_sum / st.has) if stats_on and st.has > 0 else None,
                    "grad_sqnorm_global": st.global_sq if stats_on else None,
                    "samples_seen": self.samples_seen, "ts": time.time()}
            try:
                self.metrics.write(line)
            except WriteError as e:
                self._error = e
        if st.error_total > 0 or (not distributed and self._error is not None):
            return "error"
        if not math.isfinite(loss_mean):
            raise UsageError("training diverged at iteration %d (the loss is not finite); lower the learning rate"
                             % self.iteration)
        if st.stop_total > 0:
            return "signal"
        return None

    def _evaluate_if_due(self, prev_seen):
        E = self.env.eval_every_epochs
        if self.evaluate is None or not (E > 0) or self.env.probe:
            return
        period = E * self.n_train
        if math.floor(self.samples_seen / period + 1e-9) <= math.floor(prev_seen / period + 1e-9):
            return
        t0 = time.perf_counter()
        fields = dict(self.evaluate(self.module) or {})
        dt = time.perf_counter() - t0
        line = {"type": "eval", "iter": self.iteration,
                "epoch_progress": self.samples_seen / self.n_train}
        line.update(fields)
        line["train_loss"] = self.period_loss / self.period_samples if self.period_samples > 0 else None
        line["train_loss_samples"] = int(self.period_samples)
        line["role"] = "periodic"
        line["eval_seconds"] = dt
        self.period_loss = self.period_samples = 0.0
        if self.metrics is not None and self._error is None:
            try:
                self.metrics.write(line)
            except WriteError as e:
                self._error = e

    def checkpoint(self):
        """Worker 0 writes the checkpoint and scavenger-state.json (others: nothing)."""
        env = self.env
        if env.rank != 0 or not env.checkpoint_dir:
            return
        s = self.sampler
        save_checkpoint(env.checkpoint_dir, self.module, self.optimizer, s.epoch, s.position,
                        self.iteration, self.samples_seen, seed=env.seed, n_train=self.n_train,
                        period_loss=self.period_loss, period_samples=self.period_samples,
                        wall_seconds=self.wall_before + time.time() - self._t_start,
                        workers=env.workers, batch=env.batch, extra=self.extra)

    def _agree(self, code):
        """The largest of the workers' codes (every worker returns the same)."""
        if self.env.workers == 1 or not dist.is_initialized():
            return code
        t = torch.tensor([float(code)])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return int(t.item())

    def fit(self, get_batch, loss_fn):
        """Trains until a rule or a signal stops it; returns the exit code (0, or 3 when a
        file could not be written). get_batch(indices) -> (inputs, targets)."""
        self._run_iters = 0
        self.start()
        env = self.env
        reason = self._rule_stop()
        while reason is None:
            prev = self.samples_seen
            reason = self._step(get_batch, loss_fn)
            if reason in ("signal", "error"):
                break
            reason = self._rule_stop()
            self._evaluate_if_due(prev)
            if (reason is None and self.checkpoint_every and not env.probe
                    and self.iteration % self.checkpoint_every == 0):
                try:
                    self.checkpoint()
                except WriteError as e:
                    self._error = e  # the next allreduce stops everyone
                if env.workers == 1 and self._error is not None:
                    reason = "error"
        self.stopped_by = reason
        code = 0
        if self._error is None and not env.probe:
            try:
                self.checkpoint()
            except WriteError as e:
                self._error = e
        if self.metrics is not None:
            try:
                self.metrics.close()
            except WriteError as e:
                self._error = self._error or e
        if self._error is not None:
            code = EXIT_WRITE
            print("%s" % self._error, file=sys.stderr)
        code = self._agree(code)
        self._restore_signals()
        # no destroy_process_group(): see run_main (end the process with os._exit)
        return code


def run_main(main):
    """Calls main() and ends the process with its code: UsageError -> 2, WriteError -> 3 (the
    message on stderr), any other exception -> 1 (a worker failed; its traceback on stderr).

    It ends with os._exit after flushing stdout and stderr: at interpreter exit PyTorch 1.13
    destroys DDP's gloo process group while holding the GIL, and its destructor joins a gloo
    worker thread that may be waiting for the GIL to free a tensor of the last allreduce, a
    deadlock that leaves a worker spinning after the run. Files this module writes are closed
    and fsynced before fit() returns."""
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "trainer"
    try:
        code = main()
    except UsageError as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        code = EXIT_USAGE
    except WriteError as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        code = EXIT_WRITE
    except SystemExit as e:  # argparse's usage errors (2), sys.exit() in main
        code = e.code
        if isinstance(code, str):
            print(code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: B902 - a worker failed: Scavenger retries from the checkpoint
        import traceback
        traceback.print_exc()
        code = 1
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError):
            pass
    os._exit(int(code or 0))
