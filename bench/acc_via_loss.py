#!/usr/bin/env python3
"""Accuracy targets predicted through the loss curve, against the accuracy curve itself
(issue 23 item 3: "through something smoother than test accuracy if that measures better").

On every curve of the corpus, from prefixes ending at 5-50% of its points, targets the
curve's 3-point mean reached 1.5-9x later; two raw predictions of the crossing, each fitted
on the prefix's points past its first 10% by least squares in log-log:
  acc   the ideal-anchored power law of accuracy, 1 - acc = b x^-c (what calib.c fits)
  via   the training loss's power law, loss = b x^-c, crossed at the loss L* where the
        prefix's accuracy-loss relation (acc = alpha + beta ln loss, least squares) gives
        the target
and their geometric mean. Prints the median |ln(predicted / true)| overall and by job.

  python3 bench/acc_via_loss.py [data/curves.jsonl]
"""
import json, math, sys
C=[json.loads(l) for l in open(sys.argv[1] if len(sys.argv) > 1 else 'data/curves.jsonl')]
def linreg(xs,ys):
    n=len(xs); mx=sum(xs)/n; my=sum(ys)/n
    sxx=sum((x-mx)**2 for x in xs); sxy=sum((x-mx)*(y-my) for x,y in zip(xs,ys))
    if sxx<=0: return None
    b=sxy/sxx; return my-b*mx, b
def sm(v,i):
    lo=max(0,i-1);hi=min(len(v),i+2); return sum(v[lo:hi])/(hi-lo)
errs={'acc':[], 'via':[], 'mix':[]}
byjob={}
for c in C:
    P=[p for p in c['points'] if p[1] is not None and p[2] is not None and p[0]>0]
    x=[p[0] for p in P]; a=[p[1] for p in P]; L=[p[2] for p in P]
    n=len(P); ma=[sm(a,i) for i in range(n)]
    for frac in (0.05,0.1,0.2,0.35,0.5):
        cidx=int(n*frac)
        if cidx<6: continue
        best=max(ma[:cidx+1])
        for mult in (1.5,2,3,5,9):
            xt=x[cidx]*mult
            tgt=max([ma[i] for i in range(n) if x[i]<=xt]+[best])
            if tgt<=best+1e-9: continue
            tr=next((x[i] for i in range(cidx+1,n) if ma[i]>=tgt),None)
            if tr is None: continue
            st=max(1,int(0.1*(cidx+1)))
            px=[math.log(x[i]) for i in range(st,cidx+1)]
            # (a) tail power law on accuracy
            r=linreg(px,[math.log(max(1e-6,1-a[i])) for i in range(st,cidx+1)])
            if not r or r[1]>=0: pa=None
            else: pa=math.exp((math.log(1-tgt)-r[0])/r[1])
            # (b) loss power law + acc~ln loss relation (on the prefix, all points)
            rl=linreg(px,[math.log(L[i]) for i in range(st,cidx+1)])
            rel=linreg([math.log(L[i]) for i in range(0,cidx+1)],[a[i] for i in range(0,cidx+1)])
            if not rl or rl[1]>=0 or not rel or rel[1]>=0: pb=None
            else:
                lstar=(tgt-rel[0])/rel[1]
                pb=math.exp((lstar-rl[0])/rl[1])
            if pa and pb:
                errs['acc'].append(abs(math.log(pa/tr))); errs['via'].append(abs(math.log(pb/tr)))
                errs['mix'].append(abs(math.log(math.sqrt(pa*pb)/tr)))
                byjob.setdefault(c['job'],{'acc':[],'via':[]})
                byjob[c['job']]['acc'].append(abs(math.log(pa/tr))); byjob[c['job']]['via'].append(abs(math.log(pb/tr)))
def med(v): v=sorted(v); return v[len(v)//2]
print({k:(len(v),round(med(v),3)) for k,v in errs.items()})
for j,d in byjob.items(): print(j, len(d['acc']), 'acc %.3f via %.3f'%(med(d['acc']),med(d['via'])))
