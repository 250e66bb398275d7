"""Wrappers that keep your PyTorch training loop (`import scavenger.torch as scv`).

A few calls around your own model, optimizer, scheduler and DataLoader make a script follow
Scavenger's trainer contract (docs/TRAINER-CONTRACT.md) while its loop stays as written:

    import scavenger.torch as scv
    scv.init()                                            # optional: the first wrapper calls it
    loader = scv.DataLoader(dataset, batch_size=64, num_workers=2)   # was torch's DataLoader
    model = scv.DDP(model, optimizer, scheduler)          # after the optimizer and scheduler
    for epoch in scv.epochs(1, args.epochs + 1):          # resumes at the checkpoint's epoch
        for x, y in loader: ...your loop, unchanged...
        scv.report(test_accuracy=acc)                     # in your own evaluation

  init()        the process group from the environment (Scavenger's SCV_* and Open MPI's, or
                torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT): NCCL when CUDA is there,
                gloo on the CPU; one process: a group of one. Sets the CUDA device to the
                local rank's; returns the device (device() later).
  DDP           torch's DistributedDataParallel with Scavenger's gradient-statistics hook (the
                noise statistics computed on the gradients' own device, in the same allreduce),
                the batch weights b_k/B, the stop flag, the learning-rate rule on B (composes with
                your schedulers: applied around optimizer.step() only) and the checkpoint of
                model, optimizer, schedulers (and a GradScaler) with the data position.
  DataLoader    torch's DataLoader (workers, pin_memory, collate_fn kept) whose batches follow
                Scavenger's K, B and the data position: worker k gets its share of each global
                batch of an order that depends on (seed, epoch) only, so a run resumed at another
                K and B continues at the same sample. Stops the process (checkpoint, exit 0) when
                a rule of the contract or Scavenger's signal says so.
  epochs        range(start, stop) that resumes at the loader's epoch; unbounded under Scavenger
                (its rules stop the run).
  report / report_loss / evaluation   the metrics lines of the contract from your loop.
  evaluate      a classifier's test accuracy and loss on the first N samples of a data set (a
                fixed subset; the workers share it): scv.evaluation's function of one argument.
  load_model    the model a run trained (its checkpoint's "model") into your own module.

Standalone (no SCV_* variable) the script trains as before on one process (or under torchrun),
writes no metrics and no checkpoint, and installs no signal handler. See README.md.
"""
import atexit
import inspect
import math
import os
import shutil
import signal
import sys
import time
import types
import weakref

import torch
import torch.distributed as dist
import torch.utils.data as _tud
from torch.nn.parallel import DistributedDataParallel as _TorchDDP

from . import trainer as _t
from .checkpoint import load_model, strip_module_prefix

__all__ = ["init", "device", "device_id", "rank", "world_size", "DDP", "DistributedDataParallel", "DataLoader",
           "epochs", "report", "report_loss", "evaluation", "evaluate", "fashion_mnist", "under_scavenger",
           "load_model", "strip_module_prefix", "UsageError", "WriteError"]

UsageError, WriteError = _t.UsageError, _t.WriteError
FASHION_MNIST_GZ = "/usr/share/datasets/fashion-mnist"


def under_scavenger(environ=None):
    """True when Scavenger (or a test acting as it) started this process: an SCV_ variable of
    the contract is set. Only then are metrics, checkpoints, rules and signals in play."""
    env = os.environ if environ is None else environ
    return any(env.get(v) for v in ("SCV_WORKERS", "SCV_METRICS", "SCV_CHECKPOINT_DIR"))


class _Session:
    """The process's one run: the contract's settings, the counters and what the wrappers
    registered. Everything the checkpoint holds is reachable from here."""

    def __init__(self, env, managed, device):
        self.env, self.managed, self.device = env, managed, device
        self.iteration = self.samples_seen = 0
        self.period_loss = self.period_samples = 0.0
        self.stats = _t.StatsHook()
        self.ddp = None             # the DDP wrapper (one)
        self.loader = None          # the training loader (the first scv.DataLoader iterated)
        self.pending = None         # the batch yielded last, not yet counted
        self.forwards = 0           # forward passes with gradients through the wrapper
        self.metrics = None
        self.job_written = False
        self.signalled = 0
        self.error = None
        self.ck = None              # the checkpoint being resumed (until applied)
        self.eval_fn = None
        self.in_eval = False
        self.last_eval_fields = None
        self.run_iters = 0
        self.t_start = time.time()
        self.t_ckpt = time.monotonic()
        self.wall_before = 0.0
        self.crashed = False
        self.old_handlers = {}
        self.exiting = False
        self.last_stop_flag = False
        self.eval_takes_subset = False
        self.eval_subset = 0        # SCV_EVAL_SUBSET, SCV_FINAL_EVAL (init() reads them)
        self.final_eval = False
        self.eval_max_share = 0.0   # SCV_EVAL_MAX_SHARE: a due evaluation waits while the
        self.eval_seconds = 0.0     #   evaluations' seconds exceed this share of the run's
        self.batch_from_env = bool(os.environ.get("SCV_BATCH"))


_S = None
# the iterators of scv.DataLoader, whose worker processes end with this one (_exit_now)
_ITERS = weakref.WeakSet()


def _local_cuda_device():
    """Under a launcher (Open MPI, torchrun), CUDA's current device is the local rank's from
    the import on, so that a script's `torch.device("cuda")` means its own GPU even before
    init() runs (the MNIST example moves its model there first)."""
    lr = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK") or os.environ.get("LOCAL_RANK")
    if lr and lr.strip().isdigit() and torch.cuda.is_available():
        try:
            torch.cuda.set_device(int(lr) % torch.cuda.device_count())
        except RuntimeError:
            pass


_local_cuda_device()


def _session():
    if _S is None:
        init()
    return _S


def init(backend=None, timeout_s=1800):
    """Joins the processes of this invocation (once; later calls return the device). K, the
    rank and the rendezvous come from the SCV_* variables and Open MPI's, or from torchrun's
    (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT). backend: None picks NCCL when
    CUDA is available and gloo otherwise. Under Scavenger it installs the stop signals'
    handlers (SIGUSR1, SIGTERM, SIGINT: stop after the current iteration, every worker at the
    same one) and, with SCV_RESUME=1, reads the checkpoint (worker 0 reads, broadcasts)."""
    global _S
    if _S is not None:
        return _S.device
    managed = under_scavenger()
    try:
        env = _t.Env.from_environ(seed=torch.initial_seed() % (2 ** 63))
        eval_subset = _t._env_int("SCV_EVAL_SUBSET", 0, lo=0) if managed else 0
        final_eval = _t._env_bool("SCV_FINAL_EVAL", False) if managed else False
        eval_max_share = _t._env_float("SCV_EVAL_MAX_SHARE", 0.0) if managed else 0.0
        if eval_max_share > 1:
            raise UsageError("SCV_EVAL_MAX_SHARE=%r: expected a share in [0, 1]" % os.environ["SCV_EVAL_MAX_SHARE"])
    except UsageError as e:
        if not managed:
            raise
        _exit_now("%s: %s" % (os.path.basename(sys.argv[0] or "trainer"), e), _t.EXIT_USAGE)
    dev = torch.device("cpu")
    if torch.cuda.is_available() and (backend in (None, "nccl")):
        dev = torch.device("cuda", env.local_rank % torch.cuda.device_count())
        torch.cuda.set_device(dev)
    backend = backend or _t.default_backend(dev)
    _S = s = _Session(env, managed, dev)
    s.eval_subset, s.final_eval, s.eval_max_share = eval_subset, final_eval, eval_max_share
    _t.init_distributed(env, timeout_s, backend=backend, single=True)
    if env.workers > 1 and not os.environ.get("SCV_SEED"):  # torch's seeds differ: worker 0's for all
        box = [env.seed]
        dist.broadcast_object_list(box, src=0)
        env.seed = box[0]
    if managed:
        for sig in (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT):
            try:
                s.old_handlers[sig] = signal.signal(sig, _on_signal)
            except ValueError:  # not the main thread
                pass
        prev_hook = sys.excepthook

        def excepthook(etype, value, tb):  # the contract's codes: 2 refused, 3 a file, 1 a failure
            s.crashed = (_t.EXIT_USAGE if issubclass(etype, UsageError) else
                         _t.EXIT_WRITE if issubclass(etype, WriteError) else 1)
            if s.crashed == 1:
                prev_hook(etype, value, tb)
            else:
                print("%s: %s" % (os.path.basename(sys.argv[0] or "trainer"), value), file=sys.stderr)
        sys.excepthook = excepthook
        atexit.register(_at_exit)
    if env.resume:
        s.ck = _read_checkpoint(env)
        s.iteration, s.samples_seen = int(s.ck["iteration"]), int(s.ck["samples_seen"])
        s.period_loss = float(s.ck.get("period_loss", 0.0))
        s.period_samples = float(s.ck.get("period_samples", 0.0))
        s.wall_before = float(s.ck.get("wall_seconds", 0.0))
    return dev


def device():
    """This process's device: cuda:LOCAL_RANK when CUDA is available, else the CPU."""
    return _session().device


def device_id():
    """What torchrun scripts call their gpu_id: the local GPU's index (an int: torchrun's
    LOCAL_RANK modulo the GPUs) when CUDA is available, else torch.device("cpu"). Either goes
    to .to(), device_ids=[...] and torch.load(map_location=...)."""
    d = _session().device
    return d.index if d.type == "cuda" else d


def rank():
    _session()
    return _S.env.rank


def world_size():
    _session()
    return _S.env.workers


def _on_signal(signum, frame):
    if _S is not None:
        _S.signalled = 1


def _read_checkpoint(env):
    ck, err = None, None
    if env.rank == 0:
        try:
            ck = _t.load_checkpoint(env.checkpoint_dir)
            if ck.get("seed") not in (None, env.seed):
                raise UsageError("%s: checkpoint used seed %s; resume with the same SCV_SEED"
                                 % (env.checkpoint_dir, ck.get("seed")))
        except UsageError as e:
            ck, err = None, str(e)
    if env.workers > 1:
        box = [(ck, err)]
        dist.broadcast_object_list(box, src=0)
        ck, err = box[0]
    if err:
        raise UsageError(err)
    return ck


# --------------------------------------------------------------------------------------------
# The model

class DistributedDataParallel(_TorchDDP):
    """torch's DDP, plus what the contract needs, around your own module and optimizer:

        model = scv.DDP(model, optimizer, scheduler, device_ids=[...])   # the rest as DDP's

    optimizer, schedulers: yours (any number of LR schedulers, ReduceLROnPlateau included; a
    GradScaler with scaler=). They are saved in the checkpoint with the model and the data
    position, and restored from it under SCV_RESUME=1 before DDP broadcasts worker 0's weights.
    lr_scaling: "none" (default), "linear" or "sqrt": when Scavenger picks a batch B other than
    base_batch (default: the scv.DataLoader's batch_size, the one your learning rate was
    tuned for), each optimizer.step() runs with every group's lr multiplied by B'/base_batch
    (or its square root), B' this iteration's batch, and the groups' lr put back after the step:
    your schedulers keep reading and writing their own values. checkpoint_every: a checkpoint
    every this many iterations (0: only at the stop, and every checkpoint_seconds).
    device_ids and output_device are dropped for a CPU module (DDP refuses them there).

    The statistics hook: each worker's gradient bucket is multiplied by b_k/B (your loss is the
    mean over the worker's own b_k samples, as for a single process), |bucket|^2, the stop
    flag and the loss ride in the same allreduce, all on the gradients' device. So a step at K
    workers is the step of one process on the whole batch (to rounding)."""

    def __init__(self, module, optimizer=None, *schedulers, scaler=None, lr_scaling="none",
                 base_batch=None, checkpoint_every=0, checkpoint_seconds=300.0, **ddp_kwargs):
        s = _session()
        if s.ddp is not None:
            raise UsageError("scv.DDP: one model per process")
        if lr_scaling not in ("none", "linear", "sqrt", None):
            raise UsageError("scv.DDP: lr_scaling %r: expected none, linear or sqrt" % (lr_scaling,))
        p = next(module.parameters(), None)
        on_cpu = p is None or p.device.type == "cpu"
        if on_cpu:
            ddp_kwargs.pop("device_ids", None)
            ddp_kwargs.pop("output_device", None)
        self_opt = optimizer
        scheds = [x for x in schedulers if x is not None]
        if s.ck is not None:
            try:
                module.load_state_dict(s.ck["model"])
                if self_opt is not None and s.ck.get("optimizer") is not None:
                    self_opt.load_state_dict(s.ck["optimizer"])
                for sch, st in zip(scheds, s.ck.get("schedulers") or []):
                    sch.load_state_dict(st)
                if scaler is not None and s.ck.get("scaler") is not None:
                    scaler.load_state_dict(s.ck["scaler"])
            except (RuntimeError, KeyError, ValueError) as e:
                raise UsageError("%s: the checkpoint does not fit this model: %s"
                                 % (s.env.checkpoint_dir, e)) from None
        if on_cpu and "process_group" not in ddp_kwargs and dist.get_backend() == "nccl":
            ddp_kwargs["process_group"] = dist.new_group(backend="gloo")  # NCCL cannot reduce CPU tensors
        super().__init__(module, **ddp_kwargs)
        self.register_comm_hook(s.stats, _t.StatsHook.hook)
        s.stats.stop = lambda: s.signalled
        s.stats.error = lambda: 1 if s.error is not None else 0
        self.scv_optimizer, self.scv_schedulers, self.scv_scaler = self_opt, scheds, scaler
        self.scv_lr_scaling = lr_scaling or "none"
        self.scv_base_batch = base_batch
        self.scv_checkpoint_every = int(checkpoint_every)
        self.scv_checkpoint_seconds = float(checkpoint_seconds)
        self.scv_input = None
        s.ddp = self
        if self_opt is not None:
            _wrap_step(self_opt, self)

    def forward(self, *inputs, **kwargs):
        s = _S
        if self.scv_input is None and inputs and isinstance(inputs[0], torch.Tensor) and len(inputs[0]):
            self.scv_input = inputs[0][0].detach()
        if torch.is_grad_enabled() and self.training and s is not None:
            s.forwards += 1
            if s.pending is not None and s.pending.get("fwd_t") is None:
                s.pending["fwd_t"] = time.perf_counter()
        return super().forward(*inputs, **kwargs)

    def state_dict(self, *args, **kwargs):
        """Your module's state dict, without DDP's "module." prefix: what
        torch.save(model.state_dict(), f) writes loads into your own model as it is
        (Net().load_state_dict(torch.load(f))), as the checkpoint's "model" does. (A scv.DDP
        held inside another module saves under its own name, without "module.", too.)"""
        return self.module.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict=True, **kwargs):
        """Your module's state dict, or one saved from a DDP wrapper (keys "module.NAME"):
        either loads into the wrapped module."""
        return self.module.load_state_dict(strip_module_prefix(state_dict), strict=strict, **kwargs)

    def scv_lr_factor(self):
        s = _S
        B = s.pending["B"] if s is not None and s.pending is not None else None
        B0 = self.scv_base_batch or (s.loader.scv_batch_size if s is not None and s.loader is not None else None)
        if not B or not B0 or self.scv_lr_scaling == "none":
            return 1.0
        r = float(B) / float(B0)
        return r if self.scv_lr_scaling == "linear" else math.sqrt(r)


DDP = DistributedDataParallel


def _wrap_step(optimizer, ddp):
    """optimizer.step with the learning-rate rule on B around it (a bound method, so that a
    scheduler created later can wrap it in turn)."""
    orig = optimizer.step

    def step(self, *a, **k):
        f = ddp.scv_lr_factor()
        if _S is not None and _S.pending is not None:
            _S.pending["lr_factor"] = f
        if f == 1.0:
            return orig(*a, **k)
        saved = [g["lr"] for g in self.param_groups]
        for g in self.param_groups:
            g["lr"] = g["lr"] * f
        try:
            return orig(*a, **k)
        finally:
            for g, lr in zip(self.param_groups, saved):
                g["lr"] = lr
    if hasattr(orig, "_with_counter"):  # a scheduler's counter is inside orig: it still counts
        step._with_counter = True
    optimizer.step = types.MethodType(step, optimizer)


# --------------------------------------------------------------------------------------------
# The data

class _Plan(_tud.Sampler):
    """The batch sampler: this worker's indices of each remaining global batch of the current
    epoch, from the committed position (read when an iterator starts)."""

    def __init__(self, loader):
        self.loader = loader

    def steps(self):
        s, ld = _session(), self.loader
        env = s.env
        ld._scv_resume(s)
        sampler = ld.scv_sampler
        pos, n, out = sampler.position, sampler.n, []
        order = sampler.order()
        B = _global_batch(s, ld)
        while pos < n:
            Bc = min(B, n - pos)
            if 0 < n - pos - Bc < env.workers:  # a last batch smaller than K would leave a worker
                Bc = n - pos                    # with no sample: it joins the one before
            counts, offsets = _t.split_batch(Bc, env.workers, env.split)
            lo = pos + offsets[env.rank]
            out.append((order[lo:lo + counts[env.rank]].tolist(), Bc, counts[env.rank]))
            pos += Bc
        return out

    def __iter__(self):
        for idx, _, _ in self.steps():
            yield idx

    def __len__(self):
        s, ld = _session(), self.loader
        return max(1, -(-len(ld.dataset) // _global_batch(s, ld)))


def _global_batch(s, ld):
    """B: SCV_BATCH when set, else the loader's batch_size per process (K of them)."""
    return s.env.batch if s.batch_from_env else ld.scv_batch_size * s.env.workers


class _SamplerView:
    """What loader.sampler is: set_epoch() is accepted (the order is Scavenger's, a function of
    the seed and the epoch), len() is the dataset's."""

    def __init__(self, n):
        self.n = n

    def set_epoch(self, epoch):
        pass

    def __len__(self):
        return self.n


class DataLoader(_tud.DataLoader):
    """torch's DataLoader over your dataset, with Scavenger's batches:

        loader = scv.DataLoader(dataset, batch_size=64, num_workers=2, pin_memory=True)

    batch_size: the global batch of a standalone run (one process: its batch; under torchrun,
    per process, as DistributedSampler's loaders). Under Scavenger SCV_BATCH is the global batch
    B and worker k gets its share b_k (SCV_SPLIT) of each. shuffle, sampler and drop_last are
    accepted and ignored: every epoch visits the samples in an order that depends only on the
    seed (SCV_SEED, or torch's seed when the loader is created) and the epoch, the last batch
    of an epoch may be short, and the position in the epoch is kept in the checkpoint. Every
    other argument (num_workers, persistent_workers, pin_memory, collate_fn, ...) is torch's.

    Iterating it yields the rest of the current epoch. A batch counts as trained (an
    iteration of the metrics, a step of the data position) once the DDP wrapper has run a
    forward pass with gradients after it was yielded; a batch fetched and dropped (a peek at
    the batch size) is yielded again. Before each batch the loader writes the previous
    iteration's metrics line, evaluates when an evaluation is due, writes a checkpoint when
    due, and stops the process (checkpoint, exit 0) when a rule or a signal says so."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 drop_last=False, **kwargs):
        if batch_sampler is not None:
            raise UsageError("scv.DataLoader: batch_sampler is Scavenger's (give batch_size)")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise UsageError("scv.DataLoader: batch_size %r: expected a positive integer" % (batch_size,))
        n = len(dataset)
        if n < 1:
            raise UsageError("scv.DataLoader: empty dataset")
        self.scv_batch_size = batch_size
        self.scv_sampler = None
        plan = _Plan(self)
        super().__init__(dataset, batch_sampler=plan, **kwargs)
        object.__setattr__(self, "sampler", _SamplerView(n))  # torch's guard refuses a plain set
        self.scv_plan = plan

    def _scv_resume(self, s):
        if self.scv_sampler is not None:
            return
        epoch = position = 0
        if s.loader is None:
            s.loader = self
            if s.ck is not None:
                if s.ck.get("n_train") not in (None, len(self.dataset)):
                    raise UsageError("%s: checkpoint was written for a training set of %s samples, this one has %d"
                                     % (s.env.checkpoint_dir, s.ck.get("n_train"), len(self.dataset)))
                epoch, position = int(s.ck["epoch"]), int(s.ck["position"])
        self.scv_sampler = _t.EpochSampler(len(self.dataset), s.env.seed, epoch, position)

    def __iter__(self):
        s = _session()
        _finish_pending(s)
        self._scv_resume(s)
        if s.loader is self:
            _check_stop(s)
        steps = self.scv_plan.steps()
        base = super().__iter__()
        _ITERS.add(base)
        sampler = self.scv_sampler
        for i, (_, Bc, bk) in enumerate(steps):
            t0 = time.perf_counter()
            batch = next(base)
            if s.loader is self:
                sc = s.ddp.scv_scaler if s.ddp is not None else None
                s.pending = {"B": Bc, "bk": bk, "t0": t0, "t_yield": time.perf_counter(),
                             "fwd": s.forwards, "epoch": sampler.epoch, "fwd_t": None, "loss": None,
                             "scale": float(sc.get_scale()) if sc is not None and sc.is_enabled() else 1.0}
                s.stats.begin(bk, Bc, 0.0, s.stats.stop, s.stats.error)
            yield batch
            if s.loader is self:
                _finish_pending(s)
                if i + 1 < len(steps):  # after an epoch's last batch: at the next iter(), once
                    _check_stop(s)      # your epoch-end code (evaluation, scheduler.step()) ran
            else:
                sampler.advance(Bc)


def epochs(start, stop=None):
    """range(start, stop) of your epoch loop, resumed: it starts at start + the training loader's
    epoch (0 before any checkpoint) and, under Scavenger, does not end (Scavenger's rules stop
    the run; stop applies standalone). Use it as `for epoch in scv.epochs(1, args.epochs + 1)`."""
    if stop is None:
        start, stop = 0, start
    s = _session()
    e0 = int(s.ck["epoch"]) if s.ck is not None else 0
    e = start + e0
    while not (not s.managed and e >= stop):
        yield e
        if s.loader is not None and s.loader.scv_sampler is not None:  # a partial epoch moves on too
            e = max(e + 1, start + s.loader.scv_sampler.epoch)
        else:
            e += 1


# --------------------------------------------------------------------------------------------
# Metrics

def report_loss(loss):
    """The training loss of this iteration (the mean over this worker's samples, a tensor or a
    number): call it before loss.backward(), so that it rides in the gradient allreduce. It
    gives the iteration lines their loss and the evaluation lines their train_loss (needed for
    a loss target)."""
    s = _session()
    if s.pending is None:
        return
    if isinstance(loss, torch.Tensor):
        loss = loss.detach().float()
    s.pending["loss"] = loss
    bk = s.pending["bk"]
    s.stats.loss_sum = loss * bk if bk > 0 else 0.0


def evaluation(fn=None):
    """Lets Scavenger choose when to evaluate: every SCV_EVAL_EVERY_EPOCHS epochs of samples,
    between two iterations, fn() (your own test loop) is called, with the model's train/eval
    mode put back after it; it reports its figures with scv.report(...) or returns them as a
    dict, and the periodic line gets them with the period's train_loss. A fn that takes one
    argument gets the number of test samples to use, SCV_EVAL_SUBSET (0: all): its periodic
    lines say "set":"subset", and with SCV_FINAL_EVAL=1 it is called once more with 0 when the
    invocation stops (before the checkpoint), the line that confirms an accuracy target reached
    on subsets ("role":"final","set":"full"). fn=None: no
    evaluation of yours, the periodic lines carry the train_loss of scv.report_loss only (a
    loss target). Without a call to evaluation(), your own scv.report() calls are the periodic
    evaluations (at your loop's cadence)."""
    s = _session()
    s.eval_fn = fn if fn is not None else (lambda: None)
    s.eval_takes_subset = False
    if fn is not None:
        try:
            ps = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
            s.eval_takes_subset = len(ps) >= 1
        except (TypeError, ValueError):
            pass
    return fn


def evaluate(model, data, subset=0, *, device=None, batch_size=1000, loss_fn=None, num_workers=0):
    """Test accuracy and mean loss of a classifier on a fixed subset of a data set: its first
    `subset` samples in their order (0, or more than it holds: all of them), the same ones at
    every evaluation, so the learning curve's points are comparable. What scv.evaluation's
    function of one argument needs:

        scv.evaluation(lambda n: scv.evaluate(model, test_set, n, device=device))

    model: a scv.DDP (its module is evaluated: no collective in its forward) or a plain
    module, in eval mode for the call (its mode put back). data: a Dataset, or a DataLoader
    (its dataset, batch size and collate_fn). loss_fn(output, target, reduction="sum"):
    cross_entropy by default (a model that ends in log_softmax: F.nll_loss). Under several
    processes every worker evaluates its contiguous share of the samples and the sums are
    allreduced, so call it on every worker (scv.evaluation does): all return the same figures
    whatever K is. Returns {"test_accuracy", "test_loss", "n", "set"} ("subset" when it left
    samples out, else "full")."""
    import torch.nn.functional as F
    loss_fn = loss_fn or F.cross_entropy
    collate = None
    if isinstance(data, _tud.DataLoader):
        collate, batch_size = data.collate_fn, data.batch_size or batch_size
        data = data.dataset
    n_all = len(data)
    n = min(int(subset), n_all) if subset and int(subset) > 0 else n_all
    K, r = (dist.get_world_size(), dist.get_rank()) if dist.is_available() and dist.is_initialized() else (1, 0)
    lo, hi = n * r // K, n * (r + 1) // K
    m = model.module if isinstance(model, _TorchDDP) else model
    p = next(m.parameters(), None)
    dev = torch.device(device) if device is not None else (p.device if p is not None else torch.device("cpu"))
    kw = {"collate_fn": collate} if collate is not None else {}
    loader = _tud.DataLoader(_tud.Subset(data, range(lo, hi)), batch_size=max(1, int(batch_size)), shuffle=False,
                             num_workers=num_workers, **kw)
    loss_sum, correct = 0.0, 0
    was = m.training
    m.eval()
    try:
        with torch.no_grad():
            for x, y in loader:
                x, y = x.to(dev), y.to(dev)
                out = m(x)
                loss_sum += float(loss_fn(out, y, reduction="sum"))
                correct += int((out.argmax(1) == y).sum())
    finally:
        m.train(was)
    nccl = K > 1 and dist.get_backend() == "nccl"  # (its tensors on this process's GPU)
    where = torch.device("cuda", torch.cuda.current_device()) if nccl else torch.device("cpu")
    t = torch.tensor([loss_sum, float(correct), float(hi - lo)], dtype=torch.float64, device=where)
    if K > 1:
        dist.all_reduce(t)
    cnt = max(t[2].item(), 1.0)
    return {"test_accuracy": t[1].item() / cnt, "test_loss": t[0].item() / cnt, "n": int(t[2].item()),
            "set": "subset" if n < n_all else "full"}


def report(**fields):
    """Writes an evaluation line (worker 0) with your figures, e.g. test_accuracy=0.91 (a
    fraction), test_loss=0.3; the training loss of the period since the previous evaluation
    is added when scv.report_loss gave it. Inside an evaluation Scavenger asked for (see
    evaluation()) or when none is registered, the line is a periodic one (a point of the
    learning curve); otherwise its role is "user"."""
    s = _session()
    fields = {k: (float(v) if isinstance(v, torch.Tensor) else v) for k, v in fields.items()}
    if s.in_eval:
        s.last_eval_fields = fields
        return
    _finish_pending(s)
    _write_eval(s, fields, "periodic" if s.eval_fn is None else "user", None)


def _write_eval(s, fields, role, seconds):
    line = {"type": "eval", "iter": s.iteration,
            "epoch_progress": s.samples_seen / _n_train(s) if _n_train(s) else 0.0}
    line.update(fields)
    if role == "periodic":
        line["train_loss"] = s.period_loss / s.period_samples if s.period_samples > 0 else None
        line["train_loss_samples"] = int(s.period_samples)
        s.period_loss = s.period_samples = 0.0
    line["role"] = role
    line.setdefault("set", "full")  # your evaluation, on the test set you give it (say "subset" if not)
    if seconds is not None:
        line["eval_seconds"] = seconds
    _write(s, line)


def _n_train(s):
    return len(s.loader.dataset) if s.loader is not None else 0


def _write(s, line):
    if s.env.rank != 0 or not s.env.metrics or s.error is not None:
        return
    try:
        if s.metrics is None:
            s.metrics = _t.MetricsWriter(s.env.metrics)
        if not s.job_written:
            s.job_written = True
            s.metrics.write(_job_line(s))
        s.metrics.write(line)
    except WriteError as e:
        s.error = e


def _job_line(s):
    m = s.ddp.module if s.ddp is not None else None
    x = s.ddp.scv_input if s.ddp is not None else None
    act = 0
    if m is not None and x is not None:
        try:
            act = _t.activation_bytes(m, x)
        except Exception:  # noqa: B902 - a model that a lone sample does not fit: unknown (0)
            act = 0
    return {"type": "job", "model": type(m).__name__ if m is not None else "model", "framework": "pytorch",
            "params": _t.count_params(m) if m is not None else 0, "n_train": _n_train(s),
            "act_bytes": int(act), "input_floats": int(x.numel()) if x is not None else 0,
            "workers": s.env.workers, "batch": _global_batch(s, s.loader) if s.loader is not None else s.env.batch,
            "threads": torch.get_num_threads(),
            "device": str(s.device)}


def _finish_pending(s):
    """Counts the batch yielded last if a forward pass ran after it (else drops it), writes its
    iteration line, and evaluates when due."""
    p, s.pending = s.pending, None
    if p is None:
        return
    if s.forwards == p["fwd"]:  # fetched, never trained: it is yielded again
        s.stats.pending = []
        return
    st = s.stats
    synced = bool(st.pending)
    st.collect()  # one copy to the host: on CUDA it waits for the iteration's kernels
    now = time.perf_counter()
    Bc, prev = p["B"], s.samples_seen
    s.iteration += 1
    s.samples_seen += Bc
    s.run_iters += 1
    s.loader.scv_sampler.advance(Bc)
    loss_mean = None
    if p["loss"] is not None:
        loss_mean = st.loss_total / Bc if synced and st.has > 0 else float(p["loss"])
        s.period_loss += loss_mean * Bc
        s.period_samples += Bc
    t_fwd = p["fwd_t"] or p["t_yield"]
    if synced:
        ready = st.t_last_ready or now
        t_compute, t_comm = ready - t_fwd, max(0.0, (st.t_done or ready) - ready)
    else:
        t_compute, t_comm = now - t_fwd, 0.0
    if synced and st.error_total > 0 and s.error is None:
        s.error = WriteError("worker 0 could not write its files (see its message)")
    sq = 1.0 / (p["scale"] * p["scale"])  # a GradScaler's gradients: the norms of the unscaled ones
    line = {"type": "iter", "iter": s.iteration, "epoch": p["epoch"],
            "epoch_progress": s.samples_seen / _n_train(s), "workers": s.env.workers,
            "batch": Bc, "local_batch": p["bk"], "t_compute": t_compute, "t_comm": t_comm,
            "t_iter": now - p["t0"], "loss": loss_mean,
            "grad_sqnorm_local_mean": (st.local_sq_sum / st.has * sq) if synced and st.has > 0 else None,
            "grad_sqnorm_global": st.global_sq * sq if synced else None,
            "samples_seen": s.samples_seen, "ts": time.time()}
    if s.ddp is not None and s.ddp.scv_optimizer is not None and s.ddp.scv_optimizer.param_groups:
        lr = s.ddp.scv_optimizer.param_groups[0].get("lr")  # as the step used it
        line["lr"] = lr * p.get("lr_factor", 1.0) if isinstance(lr, (int, float)) else None
    if s.managed:
        _write(s, line)
    if loss_mean is not None and not math.isfinite(loss_mean):
        _stop(s, "diverged", _t.EXIT_USAGE,
              "training diverged at iteration %d (the loss is not finite); lower the learning rate" % s.iteration)
    p["synced_stop"] = synced and st.stop_total > 0
    s.last_stop_flag = p["synced_stop"]
    _evaluate_if_due(s, prev)


def _run_eval(s, subset):
    """Your evaluation function, called as Scavenger asks: fn(subset) when it takes an argument
    (the first `subset` test samples; 0: the whole set), else fn(). Its fields (from scv.report
    inside it, or its returned dict) and the set they are on."""
    m = s.ddp if s.ddp is not None else None
    was = m.training if m is not None else None
    s.in_eval, s.last_eval_fields = True, None
    try:
        got = s.eval_fn(subset) if s.eval_takes_subset else s.eval_fn()
    finally:
        s.in_eval = False
        if m is not None:
            m.train(was)
    fields = dict(s.last_eval_fields or {})
    if isinstance(got, dict):
        fields.update(got)
    if s.eval_takes_subset and subset > 0:
        fields.setdefault("set", "subset")
        fields.setdefault("n", subset)
    return fields


def _evaluate_if_due(s, prev_seen):
    E, n = s.env.eval_every_epochs, _n_train(s)
    if not s.managed or not (E > 0) or s.env.probe or not n or s.eval_fn is None:
        return  # without evaluation(), your own scv.report() calls are the periodic evaluations
    period = E * n
    if math.floor(s.samples_seen / period + 1e-9) <= math.floor(prev_seen / period + 1e-9):
        return
    # SCV_EVAL_MAX_SHARE (warm-up and search): while the evaluations so far took more than
    # that share of this invocation's time, a due one is skipped (worker 0's clock decides, so
    # every worker skips the same one: the user's evaluation may hold collectives)
    if s.eval_max_share > 0 and _agree(s, int(s.env.rank == 0 and s.eval_seconds >
                                              s.eval_max_share * (time.time() - s.t_start))):
        return
    t0 = time.perf_counter()
    fields = _run_eval(s, s.eval_subset)
    took = time.perf_counter() - t0
    s.eval_seconds += took
    _write_eval(s, fields, "periodic", took)


def _final_eval(s):
    """SCV_FINAL_EVAL=1 at a stop: your evaluation on the whole test set, as the line that
    confirms (or not) an accuracy target reached on subset evaluations."""
    if not (s.final_eval and s.managed and s.eval_fn is not None and s.eval_takes_subset) or s.env.probe:
        return
    t0 = time.perf_counter()
    fields = _run_eval(s, 0)
    fields["set"] = "full"
    _write_eval(s, fields, "final", time.perf_counter() - t0)


def _check_stop(s):
    env = s.env
    reason = None
    if s.last_stop_flag or (env.workers == 1 and s.signalled):
        reason = "signal"
    elif s.error is not None:
        reason = "error"
    elif env.probe and s.run_iters >= 1:
        reason = "probe"
    elif env.until_iterations and s.iteration >= env.until_iterations:
        reason = "iterations"
    elif env.max_epochs > 0 and s.samples_seen >= env.max_epochs * _n_train(s) - 0.5:
        reason = "epochs"
    if reason is not None and s.managed:
        _stop(s, reason, 0)
    ddp = s.ddp
    if (s.managed and ddp is not None and env.rank == 0 and s.run_iters and not env.probe
            and ((ddp.scv_checkpoint_every and s.iteration % ddp.scv_checkpoint_every == 0)
                 or time.monotonic() - s.t_ckpt > ddp.scv_checkpoint_seconds)):
        try:
            _checkpoint(s)
        except WriteError as e:
            s.error = e  # rides in the next allreduce: every worker stops


def _checkpoint(s):
    env, ddp = s.env, s.ddp
    s.t_ckpt = time.monotonic()
    if env.rank != 0 or not env.checkpoint_dir or ddp is None or s.loader is None:
        return
    sm = s.loader.scv_sampler
    _t.save_checkpoint(env.checkpoint_dir, ddp.module, ddp.scv_optimizer, sm.epoch, sm.position,
                       s.iteration, s.samples_seen, seed=env.seed, n_train=_n_train(s),
                       schedulers=[x.state_dict() for x in ddp.scv_schedulers],
                       scaler=ddp.scv_scaler.state_dict() if ddp.scv_scaler is not None else None,
                       period_loss=s.period_loss, period_samples=s.period_samples,
                       wall_seconds=s.wall_before + time.time() - s.t_start,
                       workers=env.workers, batch=env.batch, format_wrappers=1)


def _agree(s, code):
    if s.env.workers == 1 or not dist.is_initialized():
        return code
    t = torch.tensor([float(code)], device=s.device if dist.get_backend() == "nccl" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item())


def _stop(s, reason, code, message=None):
    """Checkpoint (worker 0), close the metrics, agree on the exit code, end the process."""
    s.exiting = True
    if message:
        print("%s: %s" % (os.path.basename(sys.argv[0] or "trainer"), message), file=sys.stderr)
    if code == 0 and s.error is None:
        _final_eval(s)  # every worker (your evaluation may use collectives), before the checkpoint
    if code == 0 and s.error is None and not s.env.probe:
        try:
            _checkpoint(s)
        except WriteError as e:
            s.error = e
    if s.metrics is not None:
        try:
            s.metrics.close()
        except WriteError as e:
            s.error = s.error or e
    if s.error is not None and code == 0:
        code = _t.EXIT_WRITE
        print("%s" % s.error, file=sys.stderr)
    try:
        code = _agree(s, code)
    except Exception:  # noqa: B902 - another worker is gone: exit with our own code
        pass
    _exit_now(None, code)  # os._exit, see trainer.run_main: PyTorch 1.13 can hang destroying gloo at exit


def _end_loader_workers():
    """Ends the worker processes of the scv.DataLoaders' iterators as torch does at an
    iterator's end (a persistent one's too). os._exit skips it: a worker then lived on until
    its watchdog saw this process gone (up to 5 s), holding the rank's output, which mpirun
    waits for: every stop of a segment took 5 s longer."""
    for it in list(_ITERS):
        shutdown = getattr(it, "_shutdown_workers", None)  # the multi-process iterator's
        if shutdown is not None:
            try:
                shutdown()
            except Exception:  # noqa: B902 - exiting anyway: a worker it misses ends on its own
                pass


def _exit_now(message, code):
    _end_loader_workers()
    if message:
        print(message, file=sys.stderr)
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError):
            pass
    os._exit(int(code))


def _at_exit():
    """The script ended on its own under Scavenger (its loop ran out): the run's state is
    saved as at a stop, or exit 1 after an uncaught exception (Scavenger retries)."""
    s = _S
    if s is None or s.exiting:
        return
    if s.crashed:
        _exit_now(None, s.crashed)
    _finish_pending(s)
    _stop(s, "end", 0)


# --------------------------------------------------------------------------------------------
# Data files

def fashion_mnist(root=None, source=FASHION_MNIST_GZ):
    """A root directory for torchvision.datasets.FashionMNIST(root, ..., download=True) made from
    Debian's gz files (dataset-fashion-mnist, in `source`): they are unpacked once to
    root/FashionMNIST/raw/ (root: $XDG_CACHE_HOME/scavenger or ~/.cache/scavenger), each file
    written to a temporary name and renamed, so K processes may call it at once; torchvision
    then finds them and downloads nothing."""
    import gzip
    if root is None:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "scavenger")
    raw = os.path.join(root, "FashionMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):
        dst = os.path.join(raw, name)
        if os.path.exists(dst):
            continue
        src = os.path.join(source, name + ".gz")
        tmp = "%s.%d.tmp" % (dst, os.getpid())
        try:
            with gzip.open(src) as f, open(tmp, "wb") as g:
                shutil.copyfileobj(f, g)
            os.replace(tmp, dst)
        except OSError as e:
            raise UsageError("%s: cannot unpack to %s: %s (install dataset-fashion-mnist)"
                             % (src, raw, e.strerror or e)) from None
    return root
