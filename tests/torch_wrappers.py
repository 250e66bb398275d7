#!/usr/bin/python3
"""tests/torch_wrappers.py - the wrapper path of scavenger.torch (python/scavenger/torch.py) on a
tiny synthetic problem, for tests/pytorch.sh.

  torch_wrappers.py train [--workers N]   a user's script: its own loop, DataLoader (a worker
                                        process, persistent), StepLR and gradient clipping,
                                        with the wrapper calls; started as Scavenger starts it
                                        (mpirun -np K, SCV_* variables)
  torch_wrappers.py check DIR [accum=A] B1[xN1] B2[xN2] ...
                                        the weights of DIR/checkpoint.pt against plain
                                        single-process training (no scavenger) on the same
                                        samples: N1 iterations at batch B1, then N2 at B2, ...
                                        (the segments of the run); relative 1e-5; with
                                        TW_ACCUM=A in train: a step every A micro-batches
  torch_wrappers.py device              the same problem on CUDA when there is one (NCCL), the
                                        CPU otherwise (gloo): K=1 wrapper run in this process
                                        against the plain loop, and the statistics' device
"""
import contextlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

N, DIM, CLASSES = 200, 8, 3
LR, MOMENTUM, GAMMA, CLIP, BASE_BATCH = 0.2, 0.9, 0.5, 0.5, 32


def data():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(N, DIM, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    return x, y


def net():
    torch.manual_seed(3)
    return torch.nn.Sequential(torch.nn.Linear(DIM, 16), torch.nn.Tanh(), torch.nn.Linear(16, CLASSES))


class Pairs(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def note_worker(_):
    """With TW_WORKER_PIDS=FILE (the test's), each DataLoader worker appends its pid there."""
    path = os.environ.get("TW_WORKER_PIDS")
    if path:
        with open(path, "a") as f:
            f.write("%d\n" % os.getpid())


def train():
    """The user's script (the wrapper calls are marked)."""
    import scavenger.torch as scv                                   # scavenger
    x, y = data()
    loader = scv.DataLoader(Pairs(x, y), batch_size=BASE_BATCH, num_workers=1,  # scavenger
                            persistent_workers=True, worker_init_fn=note_worker)
    model = net()
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=GAMMA)
    model = scv.DDP(model, opt, sched, lr_scaling="linear")        # scavenger
    if os.environ.get("TW_EVAL") == "subset":  # an evaluation on the first n test samples (0: all)
        def test(n):
            model.eval()
            with torch.no_grad():
                xs, ys = (x[:n], y[:n]) if n else (x, y)
                scv.report(test_accuracy=(model(xs).argmax(1) == ys).float().mean().item())
        scv.evaluation(test)
    elif os.environ.get("TW_EVAL") == "slow":  # an evaluation of 0.2 s (SCV_EVAL_MAX_SHARE's test)
        def slow():
            import time
            time.sleep(0.2)
            scv.report(test_accuracy=0.5)
        scv.evaluation(slow)
    else:
        scv.evaluation()  # Scavenger's cadence: train_loss lines   # scavenger
    next(iter(loader))  # a peek at the batch (as the DDP tutorial does): not a step
    accum, micro = int(os.environ.get("TW_ACCUM", "1")), 0  # gradient accumulation over micro-batches
    for epoch in scv.epochs(0, 100):                                # scavenger
        model.train()
        for xb, yb in loader:
            sync = micro % accum == accum - 1
            with (contextlib.nullcontext() if sync else model.no_sync()):
                loss = F.cross_entropy(model(xb), yb)
                scv.report_loss(loss)                               # scavenger
                loss.backward()
            micro += 1
            if sync:
                torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
                opt.step()
                opt.zero_grad()
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        scv.report(test_accuracy=acc)                               # scavenger
        sched.step()


def plain(segments, seed, dev="cpu", accum=1):
    """Single-process training with no scavenger: the same samples in the same order (the
    epoch permutation of (seed, epoch)), StepLR at each epoch's end, linear scaling on B (the
    last micro-batch's, with accumulation over accum micro-batches)."""
    from scavenger.trainer import EpochSampler
    x, y = data()
    x, y = x.to(dev), y.to(dev)
    model = net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=GAMMA)
    s = EpochSampler(N, seed)
    micro = 0
    for B, iters in segments:
        for _ in range(iters):
            idx, Bc, _ = s.next_batch(B)
            idx = idx.to(dev)
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            micro += 1
            if micro % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
                for g in opt.param_groups:
                    g["lr"] *= Bc / BASE_BATCH
                opt.step()
                for g in opt.param_groups:
                    g["lr"] /= Bc / BASE_BATCH
                opt.zero_grad()
            e = s.epoch
            s.advance(Bc)
            if s.epoch != e:
                sched.step()
    return model


def flat(state):
    return torch.cat([v.reshape(-1).double().cpu() for v in state.values()])


def check(d, segs):
    accum = 1
    if segs and segs[0].startswith("accum="):
        accum, segs = int(segs[0][6:]), segs[1:]
    segments = []
    for a in segs:
        B, _, n = a.partition("x")
        segments.append((int(B), int(n or 1)))
    ck = torch.load(os.path.join(d, "checkpoint.pt"))
    total = sum(n for _, n in segments)
    assert ck["iteration"] == total, "checkpoint at iteration %s, expected %d" % (ck["iteration"], total)
    a, b = flat(plain(segments, ck["seed"], accum=accum).state_dict()), flat(ck["model"])
    rel = float((a - b).abs().max() / a.abs().max())
    print("%s: max |w_plain - w| / max |w_plain| = %.3g after %d iterations %s" % (d, rel, total, segments))
    return 0 if rel < 1e-5 else 1


def device():
    """K=1 through the wrappers in this process, on CUDA when present (the backend follows)."""
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for k in list(os.environ):
        if k.startswith("SCV_") or k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
            del os.environ[k]
    import scavenger.torch as scv
    got = scv.init()
    assert got.type == dev, (got, dev)
    import torch.distributed as dist
    want = "nccl" if dev == "cuda" else "gloo"
    assert dist.get_backend() == want, (dist.get_backend(), want)
    x, y = data()
    loader = scv.DataLoader(Pairs(x, y), batch_size=BASE_BATCH)
    model = net().to(got)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=GAMMA)
    model = scv.DDP(model, opt, sched, lr_scaling="linear", device_ids=[got.index] if dev == "cuda" else None)
    seen_dev = []
    for epoch in scv.epochs(0, 2):
        for xb, yb in loader:
            xb, yb = xb.to(got), yb.to(got)
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            seen_dev.extend(t.device.type for t, _ in scv._S.stats.pending)
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            opt.step()
        sched.step()
    assert seen_dev and all(t == dev for t in seen_dev), "statistics buffers on %s, not %s" % (set(seen_dev), dev)
    st = scv._S.stats
    assert st.global_sq > 0 and abs(st.local_sq_sum - st.global_sq) <= 1e-5 * st.global_sq, vars(st)
    ref = plain([(BASE_BATCH, 2 * 7)], scv._S.env.seed, dev)
    a, b = flat(ref.state_dict()), flat(model.module.state_dict())
    rel = float((a - b).abs().max() / a.abs().max())
    print("device %s, backend %s: 14 iterations, max relative difference to the plain loop %.3g" % (got, want, rel))
    assert rel < 1e-5
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "train":
        train()
    elif cmd == "check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    elif cmd == "device":
        device()
    else:
        sys.exit(__doc__)
