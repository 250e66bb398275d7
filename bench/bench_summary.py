# bench/bench.py decide-summary: the figures docs/BENCHMARKS.md quotes from `bench decide`
# reports, read back from the reports themselves (their run tables and first-plan sections):
# per run, the first plan's choice and regret, where the run trained last and its regret, the
# run's total against the oracle, the first plan's mean epochs error and its band's coverage;
# then, over all the reports given, first runs and second runs apart: runs with regret <= 1.1
# (first plan, and where the run ended), the mean epochs error, the coverage summed, the median
# total against the oracle.

import glob, re, statistics

RUN_ROW = re.compile(r"\| (first|second) \| (\S+) \| [^|]* \| K=(\d+) B=(\d+) \| [^|]* \| [^|]* \| [^|]* \| ([\d.na]+) "
                     r"\| K=(\d+) B=(\d+) \(([\d.na]+)\) \| ([\d.]+) \| ([+\-\d.na]+)%")
FIRST_PLAN = re.compile(r"(first|second) run, first absolute plan")
EPOCHS = re.compile(r"mean epochs error ([\d.]+)% over (\d+) configurations; band coverage (\d+)/(\d+)")


def parse_report(path):
    """The targets of one report: [{job, target, runs: {first|second: {...}}}]."""
    out, cur, sec = [], None, None
    for line in open(path):
        m = re.match(r"# (\S+) \((\w+) ([\d.]+)\)", line)
        if m:
            cur = {"job": m.group(1), "target": f"{m.group(2)} {m.group(3)}", "runs": {}}
            out.append(cur)
            sec = None
            continue
        if cur is None:
            continue
        m = RUN_ROW.match(line)
        if m:
            cur["runs"].setdefault(m.group(1), {}).update(
                src=m.group(2), chosen=f"K={m.group(3)} B={m.group(4)}", regret=float(m.group(5)),
                final=f"K={m.group(6)} B={m.group(7)}", fregret=float(m.group(8)), total=float(m.group(9)),
                vs=float(m.group(10)))
            continue
        m = FIRST_PLAN.match(line)
        if m:
            sec = m.group(1)
            continue
        m = EPOCHS.match(line)
        if m and sec:
            cur["runs"].setdefault(sec, {}).update(eperr=float(m.group(1)), cov=(int(m.group(3)), int(m.group(4))))
    return out


def decide_summary(reports=""):
    """bench/bench.py decide-summary --reports GLOB: see bench/bench.py's text (its usage)."""
    paths = sorted(p for g in reports.split(",") for p in glob.glob(g))
    if not paths:
        raise SystemExit(f"decide-summary: no report matches '{reports}'")
    runs = {"first": [], "second": []}
    for p in paths:
        for t in parse_report(p):
            for arm, r in t["runs"].items():
                if "regret" not in r:
                    continue
                runs[arm].append(r)
                print(f"{p}: {t['job']} {t['target']} {arm}: chosen {r['chosen']} (regret {r['regret']:.2f}), "
                      f"trained last at {r['final']} ({r['fregret']:.2f}), total {r['total']} s ({r['vs']:+.1f}% of "
                      f"the oracle), first-plan epochs error {r.get('eperr', float('nan'))}%, coverage "
                      f"{'/'.join(map(str, r.get('cov', ('?', '?'))))}")
    print(f"\n{len(paths)} reports")
    for arm, rs in runs.items():
        if not rs:
            continue
        ok = lambda x: x == x and x <= 1.1  # (NaN: the configuration never reached the target)
        ep = [r["eperr"] for r in rs if "eperr" in r]
        cov = [r["cov"] for r in rs if "cov" in r]
        vs = [r["vs"] for r in rs if r["vs"] == r["vs"]]
        print(f"{arm} runs ({len(rs)}): regret <= 1.1 at the first plan {sum(ok(r['regret']) for r in rs)}, where the "
              f"run ended {sum(ok(r['fregret']) for r in rs)}; first-plan epochs error mean "
              f"{statistics.mean(ep) if ep else float('nan'):.1f}%; coverage {sum(c[0] for c in cov)}/"
              f"{sum(c[1] for c in cov)}; run total against the oracle, median "
              f"{statistics.median(vs) if vs else float('nan'):+.0f}%")
