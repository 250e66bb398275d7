"""The Python binding (python/scavenger, ctypes on libscv.so) on a real profile; run by
tests/install.sh, once on the checkout and once on the installed package:

    python3 tests/python_binding.py PROFILE1 PROFILE2 CLI_JSON CATALOG

CLI_JSON is the output of `scavenger plan --profile PROFILE1,PROFILE2 --target-epochs 5
--catalog CATALOG --json`. $EXPECT_LIB (optional): the library path the module must load.
Prints "ok N - name" / "not ok N - name" and "N passed, N failed"; exits 1 on a failure.
"""
import json
import os
import sys

import scavenger

results = []


def check(name, cond, why=""):
    results.append(cond)
    print("%s %d - %s%s" % ("ok" if cond else "not ok", len(results), name,
                            "" if cond else ": " + str(why)))


def raises(fn):
    """The ScvError fn raises, or None."""
    try:
        fn()
    except scavenger.ScvError as e:
        return e
    return None


def main():
    p1, p2, cli_json, catalog = sys.argv[1:5]
    expect = os.environ.get("EXPECT_LIB")
    if expect:
        got = scavenger.library_path()
        check("libscv loaded from %s" % expect,
              os.path.realpath(got) == os.path.realpath(expect), got)

    r = scavenger.plan(profile=[p1, p2], target_epochs=5, catalog=catalog)
    ch = r.get("chosen", {})
    check("plan: a chosen configuration", isinstance(ch.get("workers"), int) and ch["workers"] >= 1
          and isinstance(ch.get("batch"), int) and ch["batch"] >= 1 and ch.get("vm") == "c5.xlarge"
          and ch.get("time_s", 0) > 0 and ch.get("cost", 0) > 0, ch)
    check("plan: the front holds the choice", ch in r.get("front", []), len(r.get("front", [])))
    check("plan: the profile's two configurations",
          [(c["workers"], c["batch"]) for c in r.get("profile", [])] == [(1, 32), (2, 128)], r.get("profile"))
    with open(cli_json) as f:
        cli = json.load(f)
    check("plan: the same report as `scavenger plan --json`", r == cli,
          json.dumps(r)[:200] + " vs " + json.dumps(cli)[:200])

    texts = []
    for p in (p1, p2):
        with open(p) as f:
            texts.append(f.read())
    r2 = scavenger.plan({"metrics": texts, "target_epochs": 5, "catalog": catalog})
    check("plan: metrics as text give the same report", r2 == cli)

    r3 = scavenger.plan({"profile": p1 + "," + p2, "target_epochs": 5}, catalog=catalog, workers=[2, 4],
                        batch="64..256", objective="cost", all=True)
    pts = r3.get("points", [])
    check("plan: the space and objective asked for", r3["n_configs"] == len(pts) == 6
          and {(p["workers"], p["batch"]) for p in pts} == {(k, b) for k in (2, 4) for b in (64, 128, 256)}
          and r3["chosen"]["cost"] == min(p["cost"] for p in pts), r3.get("n_configs"))

    e = raises(lambda: scavenger.plan(profile=[p1, p2], target_epochs="5", catalog=catalog))
    check("bad field: ScvError naming it", e is not None and e.name == "SCV_EINVAL" and e.code == 1
          and '"target_epochs"' in e.message, e)
    e = raises(lambda: scavenger.plan(profile=[p1, p2], target_epochs=5, objetive="cost"))
    check("unknown field: named", e is not None and '"objetive"' in e.message, e)
    e = raises(lambda: scavenger.plan(profile=[p1, p2]))
    check("missing target: named", e is not None and "target_epochs" in e.message, e)
    e = raises(lambda: scavenger.plan(profile=[p1 + ".none"], target_epochs=5))
    check("missing file: named", e is not None and e.name == "SCV_ENOTFOUND" and ".none" in e.message, e)
    e = raises(lambda: scavenger.plan_json("{\"profile\":"))
    check("not JSON: SCV_EPARSE", e is not None and e.name == "SCV_EPARSE", e)
    e = raises(lambda: scavenger.plan(profile=[p1, p2], target_epochs=5, catalog=catalog, deadline=0.0001))
    check("impossible deadline: SCV_EINFEASIBLE", e is not None and e.name == "SCV_EINFEASIBLE"
          and "deadline" in e.message, e)

    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
