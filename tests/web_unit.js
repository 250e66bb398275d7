/*
 * web_unit.js - tests of the dashboard's pure functions (web/app.js) in a browser, with the
 * real stylesheet and layout: axis ticks at 1-2-5 steps with unit-aware labels, the phase
 * timeline's labels never overlapping, the runs table fitting 1400 px (and scrolling in its
 * own box when narrower), no "actual time" line for a run that missed its target, the job
 * built from the submit form with errors by field, the comparison of runs, a running run's
 * forecast (ETA, band, P) in words and in the runs table, a run's stored reason as its status
 * badge's title, a live delta of the event stream applied. Loaded by
 * tests/web_unit.html; results in <pre id="results">.
 */
'use strict';
const out = [];
function test(name, fn) {
  const fails = [];
  try { fn((ok, why) => { if (!ok) fails.push(why); }); } catch (e) { fails.push('threw ' + e.message); }
  out.push(fails.length ? `not ok - ${name}: ${fails.slice(0, 4).join(' | ')}` : `ok - ${name}`);
}
const stage = document.getElementById('stage');
function mount(html, width) {
  stage.innerHTML = `<div id="box" style="width:${width || 1400}px">${html}</div>`;
  return stage.firstChild;
}
const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
const SCALE = { h: 3600, min: 60, s: 1, ms: 1e-3, '\u00b5s': 1e-6 };
/* a label's value back: "$1.5e-6", "20 ms", "0.4" */
function parseLabel(l) {
  const m = /^\$?(-?[0-9.]+(e-?\d+)?)( (\S+))?$/.exec(l);
  if (!m) return NaN;
  return +m[1] * (m[4] ? SCALE[m[4]] : 1);
}
function isNiceStep(step) {
  const m = step / Math.pow(10, Math.floor(Math.log10(step) + 1e-9));
  return [1, 2, 5].some((x) => Math.abs(m - x) < 1e-6);
}

test('axis_ticks', (check) => {
  const cases = [[0, 0.00734, 5, 'time'], [0, 1.4e-5, 5, 'usd'], [0.13, 0.87, 5, ''], [0, 95, 5, 'time'], [0, 500, 5, 'time'],
    [0.0289, 0.139, 6, 'time'], [1e-6, 1.5e-5, 5, 'usd'], [0.02, 3.7, 5, 'usd'], [0, 12000, 5, 'time'], [3, 97, 6, '']];
  for (const [lo, hi, n, u] of cases) {
    const t = axisTicks(lo, hi, n, u), labels = t.map((x) => x.label);
    check(t.length >= 2 && t.length <= 2 * n + 1, `${lo}..${hi}: ${t.length} ticks`);
    check(new Set(labels).size === labels.length, `${lo}..${hi}: repeated labels ${labels}`);
    check(!labels.some((l) => /^\$?0\.0+( |$)/.test(l)), `${lo}..${hi}: a zero with decimals ${labels}`);
    for (const x of t) {
      check(x.v >= lo - 1e-12 && x.v <= hi + 1e-12, `${lo}..${hi}: ${x.v} outside`);
      check(Math.abs(parseLabel(x.label) - x.v) <= 1e-9 + 1e-6 * Math.abs(x.v), `${lo}..${hi}: '${x.label}' is not ${x.v}`);
    }
    /* 1-2-5 steps in the unit labelled */
    const unit = / (\S+)$/.exec(labels[0]), sc = unit ? SCALE[unit[1]] : 1;
    for (let i = 1; i < t.length; i++) check(isNiceStep((t[i].v - t[i - 1].v) / sc), `${lo}..${hi}: step ${(t[i].v - t[i - 1].v) / sc}`);
    if (u === 'usd') check(labels.every((l) => l.startsWith('$')), `${labels}`);
  }
  check(axisTicks(0, 0.00734, 5, 'time').every((x) => / ms$/.test(x.label)), 'milliseconds for a 7 ms range');
  check(axisTicks(0, 500, 5, 'time')[1].label === '2 min', 'minutes for 500 s: ' + axisTicks(0, 500, 5, 'time')[1].label);
  /* the tables' and tooltips' values: a zero is "0 s" and "$0" */
  check(fmtTime(0) === '0 s' && fmtUsd(0) === '$0' && fmtTime(6.09e-4) === '609 \u00b5s' && fmtUsd(1.09e-6) === '$1.09e-6',
    [fmtTime(0), fmtUsd(0), fmtTime(6.09e-4), fmtUsd(1.09e-6)].join());
  const lg = logAxisTicks(0.01, 30, 'time').map((x) => x.label);
  check(lg.join() === '10 ms,100 ms,1 s,10 s', 'log time ticks ' + lg);
  const lu = logAxisTicks(2e-7, 3e-6, 'usd').map((x) => x.label);
  check(lu.join() === '$2e-7,$5e-7,$1e-6,$2e-6', 'log dollar ticks ' + lu);
});

test('chart_labels', (check) => {
  /* a tiny run: 30 ms to 140 ms, a millionth of a dollar (labelled "0.00 ms" and "$0.00" before) */
  const pts = [[0.029, 1.4e-6], [0.05, 2e-6], [0.139, 1.3e-5]].map(([t, c], i) => ({ time_s: t, cost: c, vm: 'c5.xlarge', workers: i + 1, batch: 32 }));
  const box = mount(tradeoffChart('t', 'trade-off', { points: pts, front: pts, chosen: pts[0] }, null));
  for (const axis of ['x', 'y']) {
    const labels = [...box.querySelectorAll(`text.tick.${axis}`)].map((e) => e.textContent);
    check(labels.length >= 3, `${axis}: ${labels.length} ticks`);
    check(new Set(labels).size === labels.length, `${axis}: repeated ${labels}`);
    check(!labels.some((l) => /^\$0\.00$|^0\.00 ms$/.test(l)), `${axis}: ${labels}`);
  }
  /* the front's labels (K=.. B=..) cover no marker (the chosen diamond on its point) and no other label */
  const labs = [...box.querySelectorAll('text.pt-label')].map((e) => e.getBoundingClientRect());
  const marks = [...box.querySelectorAll('.pt')].map((e) => e.getBoundingClientRect());
  check(labs.length >= 2, `${labs.length} point labels`);
  labs.forEach((a, i) => {
    marks.forEach((m, j) => check(!overlap(a, m), `point label ${i} covers marker ${j}`));
    labs.forEach((b, j) => check(j <= i || !overlap(a, b), `point labels ${i} and ${j} overlap`));
  });
});

test('place_labels', (check) => {
  const rows = placeLabels([{ x: 0, w: 50 }, { x: 10, w: 50 }, { x: 20, w: 50 }, { x: 100, w: 10 }, { x: 56, w: 5 }], 2);
  check(rows.join() === '0,1,-1,0,-1', 'rows ' + rows);
});

function stepsDoc(n) {
  const t0 = 1000, steps = [];
  let t = t0 + 0.2;
  for (let i = 0; i < n; i++) {
    const d = i === n - 1 ? 30 : 0.15 + 0.05 * (i % 3);
    steps.push({ idx: i, phase: i < 2 ? 'warmup' : i < n - 1 ? 'search' : 'train', workers: 1 + (i % 4), batch: 32 << (i % 3),
      iterations: 10, first_start: t, last_end: t + d, idle_before: 0.05, t_iter: 0.01 });
    t += d + 0.05;
  }
  return { run: { id: 1, created: t0, status: 'done' }, steps };
}
test('timeline_labels', (check) => {
  for (const n of [3, 14, 40]) {
    const box = mount(timelineSvg(stepsDoc(n), null));
    const svg = box.querySelector('svg');
    const labs = [...svg.querySelectorAll('text.seg-label')].map((e) => e.getBoundingClientRect());
    const others = [...svg.querySelectorAll('text:not(.seg-label)')].map((e) => e.getBoundingClientRect());
    check(labs.length >= Math.min(n, 2), `${n} segments: ${labs.length} labels`);
    const sr = svg.getBoundingClientRect();
    for (let i = 0; i < labs.length; i++) {
      check(labs[i].right <= sr.right + 1 && labs[i].left >= sr.left - 1, `${n}: label ${i} outside the figure`);
      for (let j = i + 1; j < labs.length; j++) check(!overlap(labs[i], labs[j]), `${n}: labels ${i} and ${j} overlap`);
      for (const o of others) check(!overlap(labs[i], o), `${n}: label ${i} overlaps other text`);
    }
  }
});

function runRow(id, extra) {
  return Object.assign({ id, created: 1795649185.47, job_key: 'model=lenet;hidden=-;dataset=/data/shared/datasets/fashion-mnist-augmented-v2;lr=0.05;threads=2',
    status: 'done', state: 'done', workers: 16, batch: 1024, predicted_time_s: 5234.5, predicted_cost: 12.345, actual_time_s: 5600.2,
    actual_cost: 13.01, accuracy: 0.9012, reached: true, why: 'knee of the front', nominal: true, nominal_epochs: 10,
    target_metric: 'test_accuracy', target_accuracy: 0.9, target_loss: null, vm: 'c6i.16xlarge' }, extra || {});
}
test('runs_table', (check) => {
  const runs = [runRow(123456), runRow(2, { status: 'running', state: 'train', actual_time_s: null, actual_cost: null, accuracy: null,
    eta: { written: 1795649285.5, remaining_s: 192, remaining_lo_s: 126, remaining_hi_s: 300, p_reach: 0.91, overdue: false, nominal: false } }), runRow(3, { status: 'target not reached', state: 'done', reached: false }),
    runRow(4, { target_metric: 'train_loss', target_loss: 0.25, target_accuracy: null, vm: null })];
  /* a 1400 px window: main's 1.5em padding each side leaves 1352 px */
  let box = mount(runsTableHtml(runs, new Set(['2'])), 1352);
  const heads = [...box.querySelectorAll('#runs-table th')].map((e) => e.textContent.trim());
  check(heads.includes('target') && heads.includes('VM'), 'columns ' + heads);
  check(heads.filter((h) => /status|state/.test(h)).length === 1, 'one status column: ' + heads);
  const tab = box.querySelector('#runs-table').getBoundingClientRect(), w0 = box.querySelector('.table-wrap');
  check(tab.width <= 1352 && w0.scrollWidth <= w0.clientWidth, `at 1400 px the table is ${tab.width} px wide (${w0.scrollWidth} in ${w0.clientWidth})`);
  check(box.textContent.includes('accuracy \u2265 0.9') && box.textContent.includes('loss \u2264 0.25') && box.textContent.includes('c6i.16xlarge'), 'target and VM shown');
  check(box.querySelector('input.pick[value="2"]').checked, 'the ticked run stays ticked');
  /* narrower: the table scrolls inside its own box, the box stays the width given */
  box = mount(runsTableHtml(runs), 640);
  const wrap = box.querySelector('.table-wrap');
  check(wrap.getBoundingClientRect().width <= 640 && wrap.scrollWidth > wrap.clientWidth, `at 640 px: box ${wrap.getBoundingClientRect().width}, content ${wrap.scrollWidth}`);
});

/* one status badge per run, coloured by its status (issue 38 item 15): "target not reached"
 * is not grey, "done" within the tolerance or by the window says so (reached_note as its
 * title), the run's page has one badge and no "finished" beside it */
test('status_badge', (check) => {
  const cls = (st) => mount(statusHtml(runRow(1, { status: st }))).querySelector('.badge').className;
  check(cls('target not reached') === 'badge not-reached', 'not reached: ' + cls('target not reached'));
  check(cls('interrupted (process gone)') === 'badge interrupted', cls('interrupted (process gone)'));
  check(cls('done') === 'badge done' && cls('<b>') === 'badge other', cls('done') + ' / ' + cls('<b>'));
  const bg = (st) => getComputedStyle(mount(statusHtml(runRow(1, { status: st }))).querySelector('.badge')).backgroundColor;
  check(bg('target not reached') !== bg('other-status') && bg('target not reached') !== bg('done'), 'not reached is grey: ' + bg('target not reached'));
  let box = mount(statusHtml(runRow(1, { accuracy: 0.8962, reached_how: 'tolerance', reached_note: 'reached within the confirmation tolerance 0.005 of 0.9' })));
  const m = box.querySelector('.reached-how');
  check(m && m.textContent === 'within tolerance' && m.title.includes('confirmation tolerance'), 'tolerance mark: ' + box.innerHTML);
  box = mount(statusHtml(runRow(1, { reached_how: 'target', reached_note: null })));
  check(!box.querySelector('.reached-how') && box.querySelectorAll('.badge').length === 1, 'a plain reach is not marked: ' + box.innerHTML);
  check(mount(statusHtml(runRow(1, { reached_how: 'window' }))).textContent.includes('by the window'), 'window mark');
});

/* a running run's forecast (run.eta): in words as `scavenger runs` says it, in the runs
 * table's actual-time cell with its band, nominal and overdue said so; none for a run that
 * is not running (even with a stale eta) */
test('eta_text', (check) => {
  const eta = (x) => Object.assign({ written: 1795649285.5, remaining_s: 192, remaining_lo_s: 126, remaining_hi_s: 300, p_reach: 0.91, overdue: false, nominal: false }, x);
  const run = (x, status) => ({ id: 7, status: status || 'running', eta: eta(x) });
  let t = etaText(run({}));
  check(t && t.full === 'ETA 3.2 min (2.1 min to 5.0 min), P 0.91' && t.left === '3.2 min left' && t.pieces.join(' ') === '2.1\u20135.0 min P 0.91', JSON.stringify(t));
  t = etaText(run({ remaining_lo_s: null, p_reach: null, overdue: true, remaining_s: 40, remaining_hi_s: 70 }));
  check(t && t.full === 'ETA 40.0 s (up to 70.0 s), overdue: re-estimated from the learning curve', JSON.stringify(t));
  t = etaText(run({ remaining_s: null, remaining_lo_s: null, remaining_hi_s: null, p_reach: null, overdue: true }));
  check(t && t.left === 'overdue' && /^ETA: overdue, past the predicted time/.test(t.full), JSON.stringify(t));
  t = etaText(run({ remaining_s: 30, remaining_lo_s: null, remaining_hi_s: null, p_reach: null, nominal: true }));
  check(t && /^ETA 30.0 s nominal/.test(t.full) && t.pieces.includes('nominal'), JSON.stringify(t));
  check(etaText(run({}, 'done')) === null && etaText({ status: 'running', eta: null }) === null && etaText(run({ remaining_s: null })) === null,
    'no forecast for a run not running or without one');
  const box = mount(runsTableHtml([Object.assign(runRow(7, { status: 'running', actual_time_s: null }), { eta: eta({}) }), runRow(8, { eta: eta({}) })]));
  const rows = box.querySelectorAll('#runs-table tr');
  check(rows[1].textContent.includes('3.2 min left') && rows[1].textContent.includes('2.1\u20135.0 min P 0.91'), 'running: ' + rows[1].textContent);
  check(!rows[2].textContent.includes('left') && rows[2].textContent.includes('1.56 h'), 'done: ' + rows[2].textContent);
});

test('status_reason', (check) => {
  /* issue 38, item 10: why a run ended as it did is its status badge's title */
  const h = statusHtml({ status: 'failed', state: 'warmup', reason: '/d/r.db: writing: database or disk is full', why: 'cheapest' });
  check(h.includes('title="/d/r.db: writing: database or disk is full"'), h);
  check(statusHtml({ status: 'done', why: 'cheapest' }).includes('title="cheapest"'), 'no reason: the decision\'s why');
});

test('predicted_actual', (check) => {
  const doc = (reached) => ({ run: { id: 1, created: 1000 }, decisions: [{ kind: 'plan', created: 1002, predicted_time: 40, workers: 2, batch: 64 }],
    report: { reached, actual_time_s: 55, predicted_time_s: 40, predicted_time_lo_s: 30, predicted_time_hi_s: 50 } });
  const miss = predictedActualSpec(doc(false), NaN), hit = predictedActualSpec(doc(true), NaN);
  check(!miss.hlines.some((h) => h.name === 'actual' && fin(h.y)), 'a missed target has no actual-time line');
  check(/NOT reached/.test(miss.title), 'the title says it was missed');
  check(hit.hlines.some((h) => h.name === 'actual' && h.y === 55), 'a reached target has its actual time');
  const box = mount(chart(miss));
  check(!/>actual</.test(box.innerHTML), 'no "actual" in the drawn legend');
});

test('job_form', (check) => {
  const bad = jobFromForm({ model: 'mlp', hidden: '32', 'target-metric': 'accuracy', target: '1.5', workers: '1,,2', batch: '32..128', lr: '-1', deadline: 'soon' });
  check(['target', 'workers', 'lr', 'deadline'].every((k) => bad.errors[k]), 'errors ' + JSON.stringify(bad.errors));
  check(!bad.errors.batch && !bad.errors.model, 'no error on good fields');
  const good = jobFromForm({ model: 'mlp', hidden: '64, 32', dataset: 'synthetic:4000', 'target-metric': 'loss', target: '0.3', workers: '1..8:2',
    batch: '32,128', 'vm-type': 'c5.xlarge', cluster: '', 'max-epochs': '5', lr: '0.01', objective: 'knee', deadline: '45m', budget: '2', search: 'partial' });
  check(Object.keys(good.errors).length === 0, 'errors ' + JSON.stringify(good.errors));
  check(JSON.stringify(good.job) === JSON.stringify({ model: 'mlp', hidden: '64,32', dataset: 'synthetic:4000', 'target-loss': 0.3, workers: '1..8:2',
    batch: '32,128', 'vm-type': 'c5.xlarge', search: 'partial', 'max-epochs': 5, lr: 0.01, objective: 'knee', deadline: '45m', budget: 2 }), JSON.stringify(good.job));
  check(jobFromForm({ model: 'mlp' }).errors.target, 'the target is required');
  /* the form's markup: an input per field, errors placed by field */
  const box = mount(`<form class="job">${jobFormHtml()}</form>`);
  check(JOB_FIELDS.every(([n]) => box.querySelector(`[name="${n}"]`)), 'an input per field');
  const rest = showFieldErrors(box, { workers: 'bad', nosuch: 'x' }, 'general');
  check(box.querySelector('.field-err[data-for="workers"]').textContent === 'bad' && box.querySelector('[name="workers"]').classList.contains('bad'), 'inline error');
  check(rest.join() === 'general,nosuch: x', 'the rest: ' + rest);
});

test('plan_request', (check) => {
  const v = { target_epochs: '7', base_batch: '64', vm: 'c5.xlarge', workers: '1..16', batch: '32..1024', objective: 'cost',
    deadline: '45m', budget: '2.5', pricing: 'spot' };
  const { req, errors } = planRequest(v, ['a']);
  check(Object.keys(errors).length === 0, JSON.stringify(errors));
  check(req.deadline === '45m' && req.budget === 2.5 && req.pricing === 'spot' && req.target_epochs === 7, JSON.stringify(req));
  check(planRequest(Object.assign({}, v, { deadline: '90' }), []).req.deadline === 90, 'seconds as a number');
  const none = planRequest(Object.assign({}, v, { deadline: '', budget: '' }), []).req;
  check(!('deadline' in none) && !('budget' in none), 'left out when not given');
  const bad = planRequest(Object.assign({}, v, { deadline: 'soon', budget: '-1' }), []).errors;
  check(bad.deadline && bad.budget, JSON.stringify(bad));
});

test('compare', (check) => {
  const d = (id, reached) => ({ run: runRow(id, { reached }), job: { 'target-accuracy': '0.9', objective: 'time' }, decisions: [{ workers: 4, batch: 64, vm: 'c5.xlarge' }],
    report: { chosen: { workers: 8, batch: 128, vm: 'c5.2xlarge' }, epochs: 7, search_time_s: 30 }, switches: [{}] });
  const box = mount(compareHtml([d(1, true), d(2, false)]));
  const heads = [...box.querySelectorAll('#compare-table tr:first-child th')].map((e) => e.textContent.trim());
  check(heads.length === 3 && /run 1/.test(heads[1]) && /run 2/.test(heads[2]), 'columns ' + heads);
  check(/K=8, B=128 on c5.2xlarge/.test(box.textContent) && /target not reached/.test(box.textContent), 'rows');
  /* a stored job's numbers are text with 17 digits ("0.80000000000000004"): shown short */
  const t = compareHtml([Object.assign(d(3, true), { job: { 'target-accuracy': '0.80000000000000004' } })]);
  check(/accuracy \u2265 0\.8</.test(t), 'the target as stored: ' + /accuracy[^<]*/.exec(t));
  check(!/style=/.test(t), 'no style attribute (the service\u2019s CSP drops them)');
  check(box.querySelectorAll('#compare-chart .pt').length === 4, 'a prediction and an outcome per run');
});

/* a live delta of the event stream (the service's format, docs/API.md): members replaced or
 * removed, arrays kept to a row and extended; the document it came from untouched */
test('apply_delta', (check) => {
  const doc = { run: { id: 1, status: 'running' }, evals: [{ e: 1 }, { e: 2 }, { e: 3 }], steps: [{ k: 2 }], report: null, gone: 5 };
  const d = { set: { run: { id: 1, status: 'done' }, report: { chosen: {} }, gone: null },
    splice: { evals: [2, [{ e: 3.5 }, { e: 4 }]], decisions: [0, [{ kind: 'plan' }]] } };
  const x = applyDelta(doc, d);
  check(x.run.status === 'done' && x.report && x.report.chosen, 'set: ' + JSON.stringify(x.run));
  check(!('gone' in x), 'null removes the member');
  check(JSON.stringify(x.evals) === '[{"e":1},{"e":2},{"e":3.5},{"e":4}]', 'splice: ' + JSON.stringify(x.evals));
  check(x.decisions.length === 1 && x.steps.length === 1, 'a new array, an untouched one');
  check(doc.run.status === 'running' && doc.evals.length === 3 && doc.gone === 5, 'the old document unchanged');
  check(JSON.stringify(applyDelta(doc, {})) === JSON.stringify(doc), 'an empty delta');
});

stage.innerHTML = '';
const failed = out.filter((l) => l.startsWith('not ok')).length;
document.getElementById('results').textContent = out.join('\n') + `\n${out.length - failed} passed, ${failed} failed`;
