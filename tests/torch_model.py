"""tests/torch_model.py - the trained model a user gets back, and the subset evaluation
(issue 38 item 16), on a small synthetic classifier; run by tests/pytorch.sh:

  /usr/bin/python3 tests/torch_model.py state       one process: scv.DDP's state_dict has no
      "module." prefix and loads into the plain model (through a file too, as the MNIST
      example's --save-model writes it); a prefixed one (torch's DDP, an old file) loads into
      scv.DDP and, through strip_module_prefix, into the plain model; load_model reads the
      checkpoint's "model" and returns its other keys
  /usr/bin/python3 tests/torch_model.py evaluate OUT  (K processes under mpirun, or one):
      scv.evaluate on the first n samples (a Dataset and a DataLoader alike), every worker's
      figures written to OUT.RANK as JSON: n 37 of 100, set subset, and the same figures as
      one process computing them directly; all samples for 0 and for more than there are; the
      model's train mode put back
Exits non-zero with the failed assertion.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

import scavenger.torch as scv  # noqa: E402
from scavenger import checkpoint as c  # noqa: E402
from scavenger import trainer as t  # noqa: E402


def net():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 4))


def data():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(100, 6, generator=g)
    y = torch.randint(0, 4, (100,), generator=g)
    return x, y


def same(a, b):
    return list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)


def check_state():
    model = net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    m = scv.DDP(model, opt)
    sd = m.state_dict()
    assert sd and not any(k.startswith("module.") for k in sd), list(sd)
    assert same(sd, model.state_dict())
    plain = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 4))
    plain.load_state_dict(sd)  # strict
    assert same(plain.state_dict(), sd)
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "model.pt")
        torch.save(m.state_dict(), f)  # the MNIST example's --save-model
        p2 = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 4))
        p2.load_state_dict(torch.load(f))
        assert same(p2.state_dict(), sd)
        # torch's DDP form ("module." keys): into scv.DDP as it is, into a plain model stripped
        before = {k: v.clone() for k, v in sd.items()}
        pref = torch.nn.parallel.DistributedDataParallel.state_dict(m)
        assert pref and all(k.startswith("module.") for k in pref), list(pref)
        pref = type(pref)((k, v.clone()) for k, v in pref.items())
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)
        assert not same(m.state_dict(), before)
        m.load_state_dict(pref)
        assert same(m.state_dict(), before), "a prefixed state dict did not load into scv.DDP"
        p3 = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 4))
        p3.load_state_dict(c.strip_module_prefix(pref))
        assert same(p3.state_dict(), before)
        assert same(c.strip_module_prefix(sd), sd)  # no prefix: as it is
        # the run's checkpoint: its "model" into the user's module, the other keys returned
        t.save_checkpoint(d, model, opt, 2, 40, 7, 520, seed=1)
        p4 = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Linear(16, 4))
        rest = scv.load_model(d, p4)
        assert same(p4.state_dict(), model.state_dict())
        assert rest["iteration"] == 7 and rest["samples_seen"] == 520 and rest["format"] == "scavenger-torch-1", rest
        ck = torch.load(os.path.join(d, t.CHECKPOINT_FILE))
        assert set(ck) >= {"format", "model", "optimizer", "epoch", "position", "iteration", "samples_seen", "seed"}, ck
        try:
            c.load_model(os.path.join(d, "nosuch"), p4)
            raise AssertionError("a missing checkpoint loaded")
        except t.UsageError as e:
            assert "does not exist" in str(e), e


def direct(model, x, y, n):
    """What evaluate must give: the figures on the first n samples, computed in one go."""
    model.eval()
    with torch.no_grad():
        out = model(x[:n])
    return float((out.argmax(1) == y[:n]).float().mean()), float(F.cross_entropy(out, y[:n]))


def check_evaluate(path):
    model = net()
    m = scv.DDP(model, torch.optim.SGD(model.parameters(), lr=0.1))
    x, y = data()
    ds = TensorDataset(x, y)
    m.train()
    r = scv.evaluate(m, ds, 37, batch_size=8)
    assert m.training and model.training, "the train mode was not put back"
    assert r["n"] == 37 and r["set"] == "subset", r
    acc, loss = direct(net(), x, y, 37)  # the same weights (seeded), eval mode
    assert abs(r["test_accuracy"] - acc) < 1e-6 and abs(r["test_loss"] - loss) < 1e-5, (r, acc, loss)
    assert scv.evaluate(m, ds, 37, batch_size=8) == r, "not the same subset twice"
    r2 = scv.evaluate(m, DataLoader(ds, batch_size=5), 37)
    assert r2["n"] == 37 and abs(r2["test_accuracy"] - acc) < 1e-6 and abs(r2["test_loss"] - loss) < 1e-5, r2
    for n in (0, 1000):
        ra = scv.evaluate(m, ds, n)
        acc_all, loss_all = direct(net(), x, y, 100)
        assert ra["n"] == 100 and ra["set"] == "full" and abs(ra["test_accuracy"] - acc_all) < 1e-6, ra
        assert abs(ra["test_loss"] - loss_all) < 1e-5, (ra, loss_all)
    with open("%s.%d" % (path, scv.rank()), "w") as f:
        json.dump({"rank": scv.rank(), "workers": scv.world_size(), "r": r}, f)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "state":
        check_state()
    elif what == "evaluate" and len(sys.argv) > 2:
        check_evaluate(sys.argv[2])
    else:
        sys.exit("usage: torch_model.py state | evaluate OUT")
    sys.stdout.flush()
    os._exit(0)  # (PyTorch 1.13 can hang at exit tearing down gloo)
