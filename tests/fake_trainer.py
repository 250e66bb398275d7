#!/usr/bin/python3
"""A trainer that follows docs/TRAINER-CONTRACT.md without training anything: the exec
driver's tests run it instead of a real model (fast, no PyTorch). Worker 0 simulates SGD on
a job of N_TRAIN samples: an iteration takes (B/K)/64 ms of compute plus 0.3 ms of
communication when K > 1 (it really sleeps, so the wall-clock stamps are real), the
gradient norms follow the noise model |g_b|^2 = G2 + S/b with G2 = exp(-0.1 epochs), S = 64, and
the test accuracy is 0.95 - 0.5 exp(-0.5 epochs). The other workers exit at once.

FAKE_MODE picks a way to break the contract: refuse (exit 2), nostate (exit 0 without
scavenger-state.json), badfield (an iter line whose t_iter is a string), nofield (an iter line
without t_comm), backwards (an iter line whose iteration repeats an earlier one), nan (an iter line whose
loss is NaN, as json.dumps writes it: the trainer diverged), percent (test accuracy in
percent), crash (exit 1 at the 5th iteration of a segment), stall (pauses itself with SIGSTOP
at the 5th iteration of its first segment, once: the watchdog's case), noprobe (ignores
SCV_UNTIL_ITERATIONS: trains 200 iterations in the start-up probe), nojobfield (a job line
without n_train), nofinal (ignores SCV_FINAL_EVAL), noacc (periodic evaluations without
test_accuracy); and the metrics lines a trainer can get wrong (docs/TRAINER-CONTRACT.md, "Errors
Scavenger reports"): nobatch (ignores SCV_BATCH: trains at batch 1), jump (the 3rd iter line's
iteration jumps by 10^12), dupkey (the 3rd iter line gives "batch" twice), nul (a NUL byte leads
the 3rd iter line), restart (ignores SCV_RESUME: every invocation starts again at iteration 0).

Every process checks torchrun's variables against Open MPI's and the contract's (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and exits 2 naming the one
that is wrong; with FAKE_DIST=1 the K processes also meet at MASTER_ADDR:MASTER_PORT (worker
0 listens, the others connect), and worker 0 appends "K PORT" to CHECKPOINT_DIR/ports.log.

Evaluations: with SCV_EVAL_SUBSET=N > 0 the periodic ones say "set":"subset" and read
FAKE_SUBSET_BONUS (default 0) higher than the whole set's accuracy (a subset that flatters the
model); with SCV_FINAL_EVAL=1 the trainer writes one evaluation on the whole set when it
stops ("role":"final","set":"full")."""
import json, math, os, signal, sys, time

N_TRAIN = 6400
env = os.environ
mode = env.get("FAKE_MODE", "ok")
rank = env.get("OMPI_COMM_WORLD_RANK", "0")
want = {"RANK": rank, "WORLD_SIZE": env.get("OMPI_COMM_WORLD_SIZE"),
        "LOCAL_RANK": env.get("OMPI_COMM_WORLD_LOCAL_RANK"), "LOCAL_WORLD_SIZE": env.get("OMPI_COMM_WORLD_LOCAL_SIZE"),
        "MASTER_ADDR": env.get("SCV_MASTER_ADDR"), "MASTER_PORT": env.get("SCV_MASTER_PORT")}
for name, value in want.items():
    if env.get(name) is None or env.get(name) != value:
        print(f"fake_trainer: torchrun's {name}={env.get(name)!r}, expected {value!r}", file=sys.stderr)
        sys.exit(2)
if env.get("WORLD_SIZE") != env.get("SCV_WORKERS", "1"):
    print(f"fake_trainer: WORLD_SIZE={env.get('WORLD_SIZE')} is not SCV_WORKERS", file=sys.stderr)
    sys.exit(2)
if env.get("FAKE_DIST") == "1" and env["WORLD_SIZE"] != "1":
    import socket
    addr, port = env["MASTER_ADDR"], int(env["MASTER_PORT"])
    if rank == "0":
        srv = socket.socket()
        srv.bind(("", port))
        srv.listen(64)
        srv.settimeout(10)
        for _ in range(int(env["WORLD_SIZE"]) - 1):
            srv.accept()[0].close()
        srv.close()
        with open(os.path.join(env["SCV_CHECKPOINT_DIR"], "ports.log"), "a") as f:
            f.write(f"{env['WORLD_SIZE']} {port}\n")
    else:
        for _ in range(200):
            try:
                socket.create_connection((addr, port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            print(f"fake_trainer: cannot reach {addr}:{port}", file=sys.stderr)
            sys.exit(1)
if rank != "0":
    sys.exit(0)
try:
    K = int(env["SCV_WORKERS"])
    B = 1 if mode == "nobatch" else int(env["SCV_BATCH"])
    until = int(env.get("SCV_UNTIL_ITERATIONS", "0"))
    max_epochs = float(env.get("SCV_MAX_EPOCHS", "0"))
    eval_every = float(env.get("SCV_EVAL_EVERY_EPOCHS", "0"))
    subset = int(env.get("SCV_EVAL_SUBSET", "0"))
    final_eval = env.get("SCV_FINAL_EVAL") == "1" and mode != "nofinal"
    bonus = float(env.get("FAKE_SUBSET_BONUS", "0"))
    ckpt = env["SCV_CHECKPOINT_DIR"]
    metrics = env["SCV_METRICS"]
except (KeyError, ValueError) as e:
    print(f"fake_trainer: bad or missing variable: {e}", file=sys.stderr)
    sys.exit(2)
if mode == "refuse":
    print("fake_trainer: refusing the configuration", file=sys.stderr)
    sys.exit(2)
stop = []
for s in (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT):
    signal.signal(s, lambda *_: stop.append(1))
state_path = os.path.join(ckpt, "scavenger-state.json")
it, seen = 0, 0
if env.get("SCV_RESUME") == "1" and mode != "restart":
    st = json.load(open(state_path))
    it, seen = st["iteration"], st["samples_seen"]
out = open(metrics, "a", buffering=1)
job = {"type": "job", "model": "fake", "params": 10000, "n_train": N_TRAIN, "act_bytes": 0,
       "input_floats": 784, "workers": K, "batch": B}
if mode == "nojobfield":
    del job["n_train"]
out.write(json.dumps(job) + "\n")
if mode == "noprobe":
    until = 0
next_eval = (math.floor(seen / N_TRAIN / eval_every) + 1) * eval_every if eval_every > 0 else None
period_loss = period_n = 0.0
n_here = 0
while not stop:
    if until and it >= until:
        break
    if max_epochs and seen >= max_epochs * N_TRAIN:
        break
    t0 = time.time()
    comp = (B / K) / 64 * 1e-3
    time.sleep(comp + (3e-4 if K > 1 else 0))
    it += 1
    n_here += 1
    seen += B
    ep = seen / N_TRAIN
    g2 = math.exp(-0.1 * ep)
    loss = 0.3 + math.exp(-ep)
    period_loss += loss * B
    period_n += B
    line = {"type": "iter", "iter": it, "epoch_progress": ep, "workers": K, "batch": B, "t_compute": comp,
            "t_comm": 3e-4 if K > 1 else 0.0, "t_iter": time.time() - t0, "loss": loss,
            "grad_sqnorm_local_mean": g2 + 64.0 / (B / K) if K > 1 else g2 + 64.0 / B,
            "grad_sqnorm_global": g2 + 64.0 / B, "samples_seen": seen, "ts": time.time()}
    if mode == "badfield" and n_here == 3:
        line["t_iter"] = "fast"
    if mode == "nofield" and n_here == 3:
        del line["t_comm"]
    if mode == "backwards" and n_here == 3:
        line["iter"] = it - 2
    if mode == "nan" and n_here == 3:
        line["loss"] = float("nan")
    if mode == "jump" and n_here == 3:
        line["iter"] = it + 10 ** 12
    text = json.dumps(line)
    if mode == "dupkey" and n_here == 3:
        text = text[:-1] + ', "batch": %d}' % (2 * B)
    if mode == "nul" and n_here == 3:
        text = "\0" + text
    out.write(text + "\n")
    if mode == "crash" and n_here == 5:
        sys.exit(1)
    if mode == "stall" and n_here == 5 and env.get("SCV_PROBE") != "1":
        mark = os.path.join(ckpt, "stalled-once")
        if not os.path.exists(mark):
            open(mark, "w").close()
            os.kill(os.getpid(), signal.SIGSTOP)
    if next_eval is not None and ep >= next_eval - 1e-12:
        acc = 0.95 - 0.5 * math.exp(-0.5 * ep) + (bonus if subset else 0)
        ev = {"type": "eval", "iter": it, "epoch_progress": ep,
              "test_accuracy": min(acc, 1.0) * (100 if mode == "percent" else 1), "test_loss": loss,
              "train_loss": period_loss / period_n, "train_loss_samples": period_n,
              "role": "periodic", "set": "subset" if subset else "full"}
        if mode == "noacc":
            del ev["test_accuracy"]
        out.write(json.dumps(ev) + "\n")
        period_loss = period_n = 0.0
        next_eval += eval_every
if final_eval and env.get("SCV_PROBE") != "1":
    ep = seen / N_TRAIN
    out.write(json.dumps({"type": "eval", "iter": it, "epoch_progress": ep, "test_accuracy": 0.95 - 0.5 * math.exp(-0.5 * ep),
                          "role": "final", "set": "full"}) + "\n")
out.close()
if mode != "nostate" and env.get("SCV_PROBE") != "1":
    tmp = state_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"iteration": it, "samples_seen": seen, "epoch": int(seen // N_TRAIN),
                   "position": seen % N_TRAIN}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state_path)
sys.exit(0)
