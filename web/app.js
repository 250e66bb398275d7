/*
 * app.js - the Scavenger dashboard: a single page drawn from the service's JSON API with
 * plain DOM and SVG (no library, nothing fetched from elsewhere). Views by the URL's hash:
 *   #/          the runs table (paged, filtered by job and status; refreshed every 3 s);
 *   #/run/ID    one run: the chosen configuration, the time-cost trade-off (every point,
 *               the Pareto front, the choice with its band, the outcome; while the run
 *               trains, from the latest plan the loop stored), the phase
 *               timeline (segments, switches and their idle), predicted against actual
 *               time to the target, iteration time and noise scale, test accuracy; live
 *               through server-sent events while the run trains;
 *   #/submit    a form that posts a job (the JSON of `scavenger run JOB.json`);
 *   #/plan      posts metrics files' text to /api/plan and draws the plan's curves.
 * Writes send the token from the header's field (kept in this browser's localStorage).
 */
'use strict';

const $ = (sel) => document.querySelector(sel);
const view = () => $('#view');
const esc = (s) => String(s === null || s === undefined ? '' : s)
  .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fin = (v) => typeof v === 'number' && isFinite(v);

function fmtTime(s) {
  if (!fin(s)) return '-';
  if (s < 1) return (s * 1e3).toPrecision(3) + ' ms';
  if (s < 100) return s.toPrecision(3) + ' s';
  if (s < 3600 * 1.5) return (s / 60).toFixed(1) + ' min';
  return (s / 3600).toFixed(2) + ' h';
}
function fmtUsd(c) {
  if (!fin(c)) return '-';
  if (c >= 1) return '$' + c.toFixed(2);
  return '$' + c.toPrecision(3);
}
function fmtNum(v) {
  if (!fin(v)) return '-';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
  return String(+v.toPrecision(4));
}
function fmtDate(t) { return fin(t) ? new Date(t * 1000).toLocaleString() : '-'; }

/* ---- the token and the API ---- */
function token() { return localStorage.getItem('scv-token') || ''; }
function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (token()) h.Authorization = 'Bearer ' + token();
  return h;
}
async function api(path, opts) {
  const o = Object.assign({}, opts || {});
  o.headers = headers(o.headers);
  const r = await fetch(path, o);
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) {
    const m = body && body.error ? body.error : r.status + ' ' + r.statusText;
    const err = new Error(m);
    err.status = r.status;
    err.field = body && body.field;
    throw err;
  }
  return body;
}

/* ---- charts: one SVG helper for every figure ---- */
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) { hi = lo + 1; }
  const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push(+v.toPrecision(12));
  return out;
}
function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
    for (const m of [1, 2, 5]) {
      const v = m * Math.pow(10, e);
      if (v >= lo && v <= hi) out.push(v);
    }
  return out;
}
/*
 * chart({id, title, xlabel, ylabel, xlog, ylog, series: [{name, color, pts: [{x, y, xlo, xhi,
 * ylo, yhi, label}], line, dash, marker ('circle'|'diamond'|'none'), r}], hlines: [{y, name,
 * color}], bands: [{x0, x1, name, color}], fmtx, fmty}) -> SVG text with axes, units and a legend.
 */
function chart(c) {
  const W = c.width || 660, H = c.height || 320, L = 84, R = 180, T = 28, B = 46;
  const all = [];
  for (const s of c.series) for (const p of s.pts) {
    if (fin(p.x) && fin(p.y)) {
      all.push([p.x, p.y]);
      if (fin(p.xlo)) all.push([p.xlo, p.y]);
      if (fin(p.xhi)) all.push([p.xhi, p.y]);
      if (fin(p.ylo)) all.push([p.x, p.ylo]);
      if (fin(p.yhi)) all.push([p.x, p.yhi]);
    }
  }
  for (const h of c.hlines || []) if (fin(h.y)) all.push([NaN, h.y]);
  for (const b of c.bands || []) { if (fin(b.x0)) all.push([b.x0, NaN]); if (fin(b.x1)) all.push([b.x1, NaN]); }
  const xs = all.map((a) => a[0]).filter((v) => fin(v) && (!c.xlog || v > 0));
  const ys = all.map((a) => a[1]).filter((v) => fin(v) && (!c.ylog || v > 0));
  let svg = `<svg id="${esc(c.id)}" class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(c.title)}">`;
  svg += `<text x="${L}" y="16" font-weight="bold">${esc(c.title)}</text>`;
  if (!xs.length || !ys.length) {
    return svg + `<text class="empty" x="${W / 2}" y="${H / 2}" text-anchor="middle">${esc(c.empty || 'no data yet')}</text></svg>`;
  }
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const pad = (lo, hi, log) => {
    if (log) return hi / lo < 1.5 ? [lo / 1.25, hi * 1.25] : [lo / 1.08, hi * 1.08];
    const d = hi - lo || Math.abs(hi) || 1;
    return [lo - 0.06 * d, hi + 0.06 * d];
  };
  [x0, x1] = pad(x0, x1, c.xlog);
  [y0, y1] = pad(y0, y1, c.ylog);
  if (!c.ylog && c.yzero && y0 > 0) y0 = 0;
  const fx = (v) => L + (W - L - R) * (c.xlog ? Math.log(v / x0) / Math.log(x1 / x0) : (v - x0) / (x1 - x0));
  const fy = (v) => H - B - (H - T - B) * (c.ylog ? Math.log(v / y0) / Math.log(y1 / y0) : (v - y0) / (y1 - y0));
  const fmtx = c.fmtx || fmtNum, fmty = c.fmty || fmtNum;
  svg += '<g class="grid axis">';
  for (const t of (c.xlog ? logTicks(x0, x1) : niceTicks(x0, x1, 6))) {
    svg += `<line x1="${fx(t)}" x2="${fx(t)}" y1="${T}" y2="${H - B}"></line>`;
    svg += `<text x="${fx(t)}" y="${H - B + 14}" text-anchor="middle">${esc(fmtx(t))}</text>`;
  }
  for (const t of (c.ylog ? logTicks(y0, y1) : niceTicks(y0, y1, 5))) {
    svg += `<line x1="${L}" x2="${W - R}" y1="${fy(t)}" y2="${fy(t)}"></line>`;
    svg += `<text x="${L - 5}" y="${fy(t) + 4}" text-anchor="end">${esc(fmty(t))}</text>`;
  }
  svg += '</g>';
  svg += `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#888"></rect>`;
  svg += `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">${esc(c.xlabel)}</text>`;
  svg += `<text transform="translate(12 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(c.ylabel)}</text>`;
  const legend = [];
  for (const b of c.bands || []) {
    const a = fin(b.x0) ? fx(Math.max(b.x0, x0)) : L, z = fin(b.x1) ? fx(Math.min(b.x1, x1)) : W - R;
    svg += `<rect class="band" x="${a}" y="${T}" width="${Math.max(1, z - a)}" height="${H - T - B}" fill="${b.color}" fill-opacity="0.18"></rect>`;
    legend.push({ name: b.name, color: b.color, kind: 'band' });
  }
  for (const h of c.hlines || []) {
    if (!fin(h.y)) continue;
    svg += `<line class="hline" x1="${L}" x2="${W - R}" y1="${fy(h.y)}" y2="${fy(h.y)}" stroke="${h.color}" stroke-dasharray="6 4"></line>`;
    legend.push({ name: h.name, color: h.color, kind: 'line' });
  }
  for (const s of c.series) {
    const pts = s.pts.filter((p) => fin(p.x) && fin(p.y) && (!c.xlog || p.x > 0) && (!c.ylog || p.y > 0));
    if (!pts.length) continue;
    if (s.line) {
      svg += `<polyline class="series" fill="none" stroke="${s.color}" stroke-width="${s.width || 2}"${s.dash ? ' stroke-dasharray="' + s.dash + '"' : ''} points="${pts.map((p) => fx(p.x).toFixed(1) + ',' + fy(p.y).toFixed(1)).join(' ')}"></polyline>`;
    }
    for (const p of pts) {
      if (fin(p.xlo) && fin(p.xhi)) svg += `<line x1="${fx(Math.max(p.xlo, x0))}" x2="${fx(Math.min(p.xhi, x1))}" y1="${fy(p.y)}" y2="${fy(p.y)}" stroke="${s.color}" stroke-width="2"></line>`;
      if (fin(p.ylo) && fin(p.yhi)) svg += `<line x1="${fx(p.x)}" x2="${fx(p.x)}" y1="${fy(Math.max(p.ylo, y0))}" y2="${fy(Math.min(p.yhi, y1))}" stroke="${s.color}" stroke-width="2"></line>`;
      const r = s.r || 3.5;
      const tip = `<title>${esc(p.label || (s.name + ': ' + fmtx(p.x) + ', ' + fmty(p.y)))}</title>`;
      if (s.marker === 'diamond') svg += `<path class="pt" d="M${fx(p.x)} ${fy(p.y) - r}l${r} ${r}l${-r} ${r}l${-r} ${-r}z" fill="${s.color}" stroke="#000">${tip}</path>`;
      else if (s.marker !== 'none') svg += `<circle class="pt" cx="${fx(p.x)}" cy="${fy(p.y)}" r="${r}" fill="${s.color}"${s.stroke ? ' stroke="' + s.stroke + '"' : ''}>${tip}</circle>`;
      if (s.labels && p.short) svg += `<text x="${fx(p.x) + 6}" y="${fy(p.y) - 6}">${esc(p.short)}</text>`;
    }
    legend.push({ name: s.name, color: s.color, kind: s.marker === 'none' ? 'line' : 'dot' });
  }
  let ly = T + 8;
  svg += '<g class="legend">';
  for (const l of legend) {
    const lx = W - R + 10;
    if (l.kind === 'dot') svg += `<circle cx="${lx + 8}" cy="${ly}" r="4" fill="${l.color}"></circle>`;
    else if (l.kind === 'band') svg += `<rect x="${lx}" y="${ly - 5}" width="16" height="10" fill="${l.color}" fill-opacity="0.3"></rect>`;
    else svg += `<line x1="${lx}" x2="${lx + 16}" y1="${ly}" y2="${ly}" stroke="${l.color}" stroke-width="2"></line>`;
    svg += `<text x="${lx + 22}" y="${ly + 4}">${esc(l.name)}</text>`;
    ly += 15;
  }
  svg += '</g></svg>';
  return svg;
}

/* The trade-off figure of a plan: every point, the front, the choice with its band, the outcome. */
function tradeoffChart(id, title, plan, actual) {
  const pt = (p) => ({ x: p.time_s, y: p.cost, label: `${p.vm} K=${p.workers} B=${p.batch}: ${fmtTime(p.time_s)}, ${fmtUsd(p.cost)}`, short: `K=${p.workers} B=${p.batch}` });
  const series = [];
  if (plan.points && plan.points.length) series.push({ name: 'configurations', color: '#9aa5b1', pts: plan.points.map(pt), r: 3 });
  if (plan.front && plan.front.length)
    series.push({ name: 'Pareto front', color: '#1f77b4', line: true, pts: plan.front.map(pt).sort((a, b) => a.x - b.x), r: 4, labels: plan.front.length <= 8 });
  if (plan.decisions && plan.decisions.length) series.push({ name: 'decisions (live)', color: '#ff9f1c', line: true, dash: '4 3', pts: plan.decisions, r: 4 });
  if (plan.chosen) {
    const c = pt(plan.chosen), e = fin(plan.chosen.err_rel) ? plan.chosen.err_rel : NaN;
    if (fin(e)) { c.xlo = c.x * (1 - e); c.xhi = c.x * (1 + e); c.ylo = c.y * (1 - e); c.yhi = c.y * (1 + e); }
    series.push({ name: 'chosen (band: ±' + (fin(e) ? (100 * e).toFixed(0) + '%' : '?') + ')', color: '#d62828', pts: [c], r: 6, marker: 'diamond' });
  }
  if (actual && fin(actual.x) && fin(actual.y))
    series.push({ name: 'actual outcome', color: '#2a9d8f', pts: [{ x: actual.x, y: actual.y, label: 'actual: ' + fmtTime(actual.x) + ', ' + fmtUsd(actual.y) }], r: 6 });
  const xs = series.flatMap((s) => s.pts.map((p) => p.x)).filter((v) => fin(v) && v > 0);
  const ys = series.flatMap((s) => s.pts.map((p) => p.y)).filter((v) => fin(v) && v > 0);
  const wide = (a) => a.length > 1 && Math.max(...a) / Math.min(...a) > 20;
  return chart({ id, title, xlabel: 'time to the target' + (plan.relative ? ' (' + nominalWord(true, plan.nominalEpochs) + ': the target\u2019s epochs were unknown; not predictions)' : ''),
    ylabel: 'cost (US$)', xlog: wide(xs), ylog: wide(ys), series, fmtx: fmtTime, fmty: fmtUsd,
    bands: plan.band ? [plan.band] : [], empty: 'no plan yet: the loop is warming up or searching' });
}

/* What a time or cost is: "predicted", or "nominal (N epochs assumed)" where the target's
 * epochs were unknown and a nominal number was assumed (not a prediction). */
function nominalWord(nominal, epochs) {
  if (!nominal) return 'predicted';
  return fin(epochs) ? `nominal (${fmtNum(epochs)} epochs assumed)` : 'nominal';
}

/* Marks each decision row nominal or not (_nominal, _nominal_epochs): the first decision
 * ("plan") from the run's summary (nominal, nominal_epochs: its plan row), a re-plan from
 * its reason, which opens "nominal times (N epochs assumed): " when its times were. */
function markNominalDecisions(d) {
  const r = d.run || {};
  for (const x of d.decisions || []) {
    const m = /^nominal times \(([0-9.eE+-]+) epochs assumed\)/.exec(x.reason || '');
    if (x.kind === 'plan') {
      x._nominal = !!r.nominal;
      x._nominal_epochs = r.nominal_epochs;
    } else {
      x._nominal = !!m;
      x._nominal_epochs = m ? +m[1] : NaN;
    }
  }
}

/* ---- views ---- */
let current = { stop() {} };

async function showRuns() {
  const q = new URLSearchParams(location.hash.split('?')[1] || '');
  const limit = 50, offset = +(q.get('offset') || 0), job = q.get('job') || '', status = q.get('status') || '';
  view().innerHTML = `<h2>Runs</h2><form id="filter">
    <label>job <input name="job" size="40" value="${esc(job)}" placeholder="model=lenet;hidden=-;dataset=fashion-mnist"></label>
    <label>status <select name="status">${['', 'running', 'done', 'interrupted', 'failed', 'target not reached'].map((s) => `<option${s === status ? ' selected' : ''}>${esc(s)}</option>`).join('')}</select></label>
    <button>Filter</button></form><div id="runs"><p>Loading…</p></div><div id="subs"></div>`;
  $('#filter').onsubmit = (e) => {
    e.preventDefault();
    const f = new FormData(e.target), p = new URLSearchParams();
    if (f.get('job')) p.set('job', f.get('job'));
    if (f.get('status')) p.set('status', f.get('status'));
    location.hash = '#/?' + p.toString();
  };
  let timer = null, alive = true;
  const load = async () => {
    try {
      const p = new URLSearchParams({ limit, offset });
      if (job) p.set('job', job);
      if (status) p.set('status', status);
      const d = await api('/api/runs?' + p.toString());
      if (!alive) return;
      let h = `<table id="runs-table"><tr><th>run</th><th class="l">job</th><th class="l">status</th><th class="l">state</th><th>chosen K</th><th>B</th>
        <th>predicted time</th><th>predicted cost</th><th>actual time</th><th>actual cost</th><th>test accuracy</th><th class="l">created</th></tr>`;
      for (const r of d.runs)
        h += `<tr><td><a href="#/run/${r.id}">${r.id}</a></td><td class="l">${esc(r.job_key)}</td><td class="l"><span class="badge ${esc(r.status)}">${esc(r.status)}</span></td>
          <td class="l">${esc(r.state)}</td><td>${r.workers || '-'}</td><td>${r.batch || '-'}</td><td>${fmtTime(r.predicted_time_s)}${r.nominal ? ` <span class="muted nominal">${esc(nominalWord(true, r.nominal_epochs))}</span>` : ''}</td><td>${fmtUsd(r.predicted_cost)}${r.nominal ? ' <span class="muted nominal">nominal</span>' : ''}</td>
          <td>${fmtTime(r.actual_time_s)}</td><td>${fmtUsd(r.actual_cost)}</td><td>${fin(r.accuracy) ? r.accuracy.toFixed(4) : '-'}</td><td class="l">${fmtDate(r.created)}</td></tr>`;
      h += '</table>';
      const base = new URLSearchParams(); if (job) base.set('job', job); if (status) base.set('status', status);
      const link = (o) => { const p = new URLSearchParams(base); p.set('offset', o); return '#/?' + p.toString(); };
      h += `<p class="muted">${d.total} run(s)${d.total > limit ? `, ${offset + 1}–${Math.min(offset + limit, d.total)}` : ''}
        ${offset > 0 ? `<a href="${link(Math.max(0, offset - limit))}">newer</a>` : ''} ${offset + limit < d.total ? `<a href="${link(offset + limit)}">older</a>` : ''}</p>`;
      $('#runs').innerHTML = h;
      const s = await api('/api/submissions');
      if (!alive) return;
      const act = s.submissions.filter((x) => x.state === 'queued' || x.state === 'running');
      $('#subs').innerHTML = act.length ? '<h3>Submissions in progress</h3><ul>' + act.map((x) =>
        `<li>submission ${x.id}: ${esc(x.state)}${x.run ? ` — <a href="#/run/${x.run}">run ${x.run}</a>` : ''}</li>`).join('') + '</ul>' : '';
    } catch (e) {
      if (alive) $('#runs').innerHTML = `<p class="err">${esc(e.message)}</p>`;
    }
    if (alive) timer = setTimeout(load, 3000);
  };
  load();
  return { stop() { alive = false; clearTimeout(timer); } };
}

function rowsTable(id, rows, cols) {
  if (!rows || !rows.length) return `<p class="muted" id="${id}">none</p>`;
  let h = `<table id="${id}"><tr>${cols.map((c) => `<th>${esc(c[1])}</th>`).join('')}</tr>`;
  for (const r of rows) h += '<tr>' + cols.map((c) => `<td${c[2] ? ' class="l"' : ''}>${c[3] ? c[3](r[c[0]], r) : esc(fin(r[c[0]]) ? fmtNum(r[c[0]]) : r[c[0]])}</td>`).join('') + '</tr>';
  return h + '</table>';
}

const PHASE_COLORS = { warmup: '#f4a261', search: '#e9c46a', train: '#2a9d8f', replan: '#8ab17d' };

function timelineSvg(doc, series) {
  const steps = doc.steps || [];
  const W = 1180, H = 150, L = 70, R = 20, T = 28;
  let svg = `<svg id="timeline" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="phase timeline">`;
  svg += `<text x="${L}" y="16" font-weight="bold">Phase timeline (warm-up, search, training segments; switches with their idle time)</text>`;
  const t0 = steps.length && fin(steps[0].first_start) ? Math.min(steps[0].first_start - (fin(steps[0].idle_before) ? steps[0].idle_before : 0), doc.run.created) : doc.run.created;
  const last = series && series.points && series.points.length ? series.points[series.points.length - 1] : null;
  let tEnd = 0;
  for (const s of steps) if (fin(s.last_end)) tEnd = Math.max(tEnd, s.last_end - t0);
  if (last && fin(last.ts)) tEnd = Math.max(tEnd, last.ts - t0);
  if (!steps.length && !last) return svg + `<text x="${W / 2}" y="${H / 2}" text-anchor="middle">no segment has ended yet</text></svg>`;
  tEnd = tEnd * 1.03 || 1;
  const fx = (t) => L + (W - L - R) * t / tEnd, y = T + 30, h = 34;
  for (const t of niceTicks(0, tEnd, 8)) {
    svg += `<line x1="${fx(t)}" x2="${fx(t)}" y1="${T + 20}" y2="${y + h + 6}" stroke="#eee"></line><text x="${fx(t)}" y="${y + h + 20}" text-anchor="middle">${esc(fmtTime(t))}</text>`;
  }
  svg += `<text x="${(L + W) / 2}" y="${H - 4}" text-anchor="middle">time since the run started</text>`;
  let prev = null, endPrev = 0;
  steps.forEach((s, i) => {
    const a = s.first_start - t0, b = s.last_end - t0;
    if (!fin(a) || !fin(b)) return;
    if (i > 0 && a > endPrev) svg += `<rect class="idle" x="${fx(endPrev)}" y="${y + 8}" width="${Math.max(1, fx(a) - fx(endPrev))}" height="${h - 16}" fill="#bbb"><title>idle ${fmtTime(a - endPrev)}</title></rect>`;
    const col = PHASE_COLORS[s.phase] || '#6c757d';
    svg += `<rect class="step" data-phase="${esc(s.phase)}" x="${fx(a)}" y="${y}" width="${Math.max(2, fx(b) - fx(a))}" height="${h}" fill="${col}" stroke="#fff"><title>${esc(s.phase)} K=${s.workers} B=${s.batch}: ${s.iterations} iterations, ${fmtTime(b - a)}${fin(s.t_iter) ? ', ' + fmtTime(s.t_iter) + '/iteration' : ''}</title></rect>`;
    svg += `<text x="${fx(a) + 2}" y="${y - 4}">${esc(s.phase)} ${s.workers}×${s.batch}</text>`;
    if (prev && (prev.workers !== s.workers || prev.batch !== s.batch)) {
      svg += `<line class="switch" x1="${fx(a)}" x2="${fx(a)}" y1="${y - 16}" y2="${y + h + 4}" stroke="#d62828" stroke-width="2"><title>switch ${prev.workers}×${prev.batch} → ${s.workers}×${s.batch}, idle ${fmtTime(s.idle_before)}</title></line>`;
    }
    prev = s; endPrev = b;
  });
  if (last && fin(last.ts) && last.ts - t0 > endPrev + 1e-3 && doc.run.status === 'running') {
    svg += `<rect class="current" x="${fx(endPrev)}" y="${y}" width="${Math.max(2, fx(last.ts - t0) - fx(endPrev))}" height="${h}" fill="#ffe8a3" stroke="#d4a300" stroke-dasharray="4 3"><title>in progress: K=${last.workers} B=${last.batch}</title></rect>`;
    svg += `<text x="${fx(endPrev) + 2}" y="${y + h / 2 + 4}">now: ${last.workers}×${last.batch}</text>`;
  }
  let lx = L;
  for (const [k, c] of Object.entries(PHASE_COLORS).concat([['idle', '#bbb'], ['switch', '#d62828']])) {
    svg += `<rect x="${lx}" y="${T + 2}" width="12" height="10" fill="${c}"></rect><text x="${lx + 16}" y="${T + 11}">${k}</text>`;
    lx += 80;
  }
  return svg + '</svg>';
}

/* The latest plan the loop stored for a run (a models row of kind "plan": relative, chosen,
 * points, time_lo_s/time_hi_s), or null. */
function livePlan(d) {
  const rows = (d.models || []).filter((m) => m.kind === 'plan');
  if (!rows.length) return null;
  try {
    const p = JSON.parse(rows[rows.length - 1].json);
    return p && Array.isArray(p.points) && p.points.length ? p : null;
  } catch (e) {
    return null;
  }
}
function planSummary(json) {
  try {
    const p = JSON.parse(json), c = p.chosen || {};
    return esc(`${p.points.length} configuration(s)${p.relative ? ` (${nominalWord(true, p.nominal_epochs)} times)` : ''}; at K=${c.workers} B=${c.batch}: ${fmtTime(c.time_s)}, ${fmtUsd(c.cost)}`);
  } catch (e) {
    return 'plan (unreadable)';
  }
}

function renderRun(st) {
  const d = st.doc, r = d.run, rep = d.report, job = d.job || {};
  const live = st.live;
  const sub = d.submission;
  const chosenPt = rep && rep.chosen ? rep.chosen : null;
  markNominalDecisions(d);
  const lastDec = (d.decisions || []).length ? d.decisions[d.decisions.length - 1] : null;
  const repWord = rep ? nominalWord(rep.nominal, rep.nominal_epochs) : 'predicted';
  let chosen;
  if (chosenPt) chosen = `K=${chosenPt.workers}, B=${chosenPt.batch} on ${esc(chosenPt.vm)}: ${esc(repWord)} ${fmtTime(chosenPt.time_s)}, ${fmtUsd(chosenPt.cost)} (±${fin(chosenPt.err_rel) ? (100 * chosenPt.err_rel).toFixed(0) : '?'}%)`;
  else if (lastDec) chosen = `K=${lastDec.workers}, B=${lastDec.batch} on ${esc(lastDec.vm)}: ${esc(nominalWord(lastDec._nominal, lastDec._nominal_epochs))} ${fmtTime(lastDec.predicted_time)}, ${fmtUsd(lastDec.predicted_cost)}`;
  else chosen = 'not chosen yet';
  const why = rep ? rep.why : lastDec ? lastDec.reason : '';
  let h = `<h2>Run ${r.id} <span class="badge ${esc(r.status)}">${esc(r.status)}</span> <span class="badge ${live ? 'live' : ''}" id="live-status">${live ? 'live' : 'finished'}</span></h2>
    <p class="muted">${esc(r.job_key)} · state ${esc(r.state)} · created ${fmtDate(r.created)}${sub ? ` · submission ${sub.id} (${esc(sub.state)})` : ''}</p>
    <div class="card"><div class="chosen" id="chosen"><b>Chosen configuration:</b> <span id="chosen-config">${chosen}</span></div>
    <div class="muted">${esc(why || '')}</div>
    ${rep ? `<div>Outcome: ${rep.reached ? 'target reached' : 'target NOT reached'}; test accuracy ${fin(rep.test_accuracy) ? rep.test_accuracy.toFixed(4) : '-'} after ${fmtNum(rep.epochs)} epochs in ${fmtTime(rep.actual_time_s)}, ${fmtUsd(rep.actual_cost)}; ${esc(repWord)} at the decision ${fmtTime(rep.predicted_time_s)}${fin(rep.predicted_time_lo_s) ? ` (band ${fmtTime(rep.predicted_time_lo_s)} to ${fmtTime(rep.predicted_time_hi_s)})` : ''}; search ${fmtTime(rep.search_time_s)}, ${rep.switches} switch(es)</div>` : ''}
    ${sub && sub.error ? `<div class="err">${esc(sub.error)}</div>` : ''}
    <button id="stop"${live ? '' : ' disabled'}>Stop</button><button id="resume"${!live && r.status !== 'done' && r.status !== 'target not reached' ? '' : ' disabled'}>Resume</button> <span id="action-msg"></span></div>`;
  /* the trade-off: the report's plan, else (while the run trains) the latest plan the loop
   * stored (a models row of kind "plan") with the decisions so far */
  const lp = !rep ? livePlan(d) : null;
  const decisions = (d.decisions || []).filter((x) => fin(x.predicted_time)).map((x) => ({ x: x.predicted_time, y: x.predicted_cost, label: `${x.kind}: K=${x.workers} B=${x.batch}` }));
  /* the report's points are the latest plan's: nominal when its target was (relative_prediction) */
  const plan = rep ? { points: rep.points, front: rep.front, chosen: rep.chosen, relative: rep.relative_prediction, nominalEpochs: rep.target && rep.target.epochs }
    : lp ? { points: lp.points, front: lp.points.filter((p) => p.pareto), chosen: lp.chosen, relative: lp.relative, nominalEpochs: lp.nominal_epochs, decisions }
      : { decisions };
  if (rep && fin(rep.predicted_time_lo_s) && fin(rep.predicted_time_hi_s)) plan.band = { x0: rep.predicted_time_lo_s, x1: rep.predicted_time_hi_s, name: 'prediction band (time)', color: '#d62828' };
  if (lp && fin(lp.time_lo_s) && fin(lp.time_hi_s)) plan.band = { x0: lp.time_lo_s, x1: lp.time_hi_s, name: 'prediction band (time)', color: '#d62828' };
  if (lp) st.livePoints = Math.max(st.livePoints || 0, lp.points.length);
  const actual = rep ? { x: rep.actual_time_s, y: rep.actual_cost } : null;
  h += '<div class="grid">';
  h += `<div class="card">${tradeoffChart('tradeoff-chart', lp ? 'Time–cost trade-off (live: the latest plan)' : 'Time–cost trade-off', plan, actual)}</div>`;
  /* predicted against actual time to the target */
  /* nominal figures are not predictions: their own series */
  const decPt = (x) => ({ x: x.created - r.created, y: x.predicted_time, label: `${x.kind} at ${fmtTime(x.created - r.created)}: ${nominalWord(x._nominal, x._nominal_epochs)} ${fmtTime(x.predicted_time)}` });
  const decs = (d.decisions || []).filter((x) => fin(x.predicted_time) && !x._nominal).map(decPt);
  const nomDecs = (d.decisions || []).filter((x) => fin(x.predicted_time) && x._nominal).map(decPt);
  const elapsed = live && st.series && st.series.points.length ? st.series.points[st.series.points.length - 1].ts - r.created : NaN;
  const pa = { id: 'predicted-actual', title: 'Predicted against actual time to the target', xlabel: 'when predicted (time since the run started)', ylabel: 'time to the target (from the start)',
    fmtx: fmtTime, fmty: fmtTime, yzero: true, series: [{ name: 'predicted at each decision', color: '#1f77b4', line: true, pts: decs }],
    hlines: [{ y: rep ? rep.actual_time_s : NaN, name: 'actual', color: '#2a9d8f' }, { y: elapsed, name: 'elapsed so far', color: '#ff9f1c' }],
    empty: 'no prediction yet' };
  if (nomDecs.length) pa.series.push({ name: 'nominal at a decision (not a prediction)', color: '#8d99ae', pts: nomDecs, r: 3 });
  if (rep && fin(rep.predicted_time_lo_s)) pa.series.push({ name: 'band at the decision', color: '#d62828', pts: [{ x: decs.length ? decs[0].x : 0, y: rep.predicted_time_s, ylo: rep.predicted_time_lo_s, yhi: rep.predicted_time_hi_s }], marker: 'diamond', r: 5 });
  h += `<div class="card">${chart(pa)}</div></div>`;
  h += `<div class="card">${timelineSvg(d, st.series)}</div>`;
  const pts = st.series ? st.series.points : [];
  h += '<div class="grid">';
  h += `<div class="card">${chart({ id: 'series-chart', title: 'Iteration time', xlabel: 'iteration', ylabel: 'iteration time (ms)', yzero: true,
    series: [{ name: 't_iter (mean per point)', color: '#1f77b4', line: true, r: 1.5, pts: pts.map((p) => ({ x: p.iter, y: 1e3 * p.t_iter, label: `iteration ${p.iter}: ${(1e3 * p.t_iter).toFixed(2)} ms at K=${p.workers} B=${p.batch}` })) }] })}</div>`;
  h += `<div class="card">${chart({ id: 'noise-chart', title: 'Gradient noise scale', xlabel: 'iteration', ylabel: 'B_simple (samples)', ylog: true,
    series: [{ name: 'B_simple (needs K ≥ 2)', color: '#9d4edd', line: false, r: 2.5, pts: pts.filter((p) => fin(p.b_simple) && p.b_simple > 0).map((p) => ({ x: p.iter, y: p.b_simple })) }],
    empty: 'no noise estimate (K = 1 only so far)' })}</div>`;
  const tgt = +job['target-accuracy'];
  h += `<div class="card">${chart({ id: 'eval-chart', title: 'Test accuracy', xlabel: 'epochs', ylabel: 'test accuracy',
    series: [{ name: 'evaluations', color: '#2a9d8f', line: true, r: 2.5, pts: (d.evals || []).map((e) => ({ x: e.epoch, y: e.accuracy })) }],
    hlines: [{ y: fin(tgt) && tgt > 0 ? tgt : NaN, name: 'target', color: '#d62828' }] })}</div>`;
  h += '</div>';
  h += '<div class="card"><h2>Segments</h2>' + rowsTable('steps-table', d.steps, [['idx', '#'], ['phase', 'phase', 1], ['workers', 'K'], ['batch', 'B'], ['iterations', 'iterations'],
    ['t_iter', 'iteration time', 0, (v) => fmtTime(v)], ['idle_before', 'idle before', 0, (v) => fmtTime(v)], ['accuracy', 'test acc.', 0, (v) => fin(v) ? v.toFixed(4) : '-'], ['reached', 'reached']]);
  h += '<h2>Decisions</h2>' + rowsTable('decisions-table', d.decisions, [['kind', 'kind', 1], ['workers', 'K'], ['batch', 'B'], ['vm', 'VM', 1],
    ['predicted_time', 'predicted time', 0, (v, x) => fmtTime(v) + (x._nominal ? ' ' + esc(nominalWord(true, x._nominal_epochs)) : '')],
    ['predicted_cost', 'predicted cost', 0, (v, x) => fmtUsd(v) + (x._nominal ? ' nominal' : '')], ['reason', 'why', 1]]);
  h += '<h2>Switches</h2>' + rowsTable('switches-table', d.switches, [['from_workers', 'from K'], ['from_batch', 'from B'], ['to_workers', 'to K'], ['to_batch', 'to B'], ['idle_s', 'idle', 0, (v) => fmtTime(v)]]);
  h += '<h2>Measurements</h2>' + rowsTable('measurements-table', d.measurements, [['phase', 'phase', 1], ['vm', 'VM', 1], ['workers', 'K'], ['batch', 'B'], ['iterations', 'iterations'],
    ['t_compute', 'compute', 0, (v) => fmtTime(v)], ['t_comm', 'comm', 0, (v) => fmtTime(v)], ['t_iter', 'iteration', 0, (v) => fmtTime(v)]]);
  h += '<h2>Fitted models</h2>' + rowsTable('models-table', d.models, [['kind', 'kind', 1], ['json', 'parameters', 1, (v, m) => m.kind === 'plan' ? planSummary(v) : esc(v)]]) + '</div>';
  view().innerHTML = h;
  view().setAttribute('data-updates', String(st.updates));
  /* the most points a live plan (no report yet) drew on this page: tests/browser.sh */
  view().setAttribute('data-live-points', String(st.livePoints || 0));
  view().setAttribute('data-run-status', r.status);
  $('#stop').onclick = () => action(`/api/runs/${r.id}/stop`);
  $('#resume').onclick = () => action(`/api/runs/${r.id}/resume`);
}

async function action(path) {
  try {
    const s = await api(path, { method: 'POST' });
    $('#action-msg').textContent = `submission ${s.id}: ${s.state}`;
    setTimeout(() => route(), 800);
  } catch (e) {
    $('#action-msg').textContent = e.message;
  }
}

async function showRun(id) {
  const st = { doc: null, series: null, updates: 0, live: false, es: null, alive: true, lastSeries: 0, seriesTimer: null, livePoints: 0 };
  const loadSeries = async () => {
    st.lastSeries = Date.now();
    try { st.series = await api(`/api/runs/${id}/series`); } catch (e) { st.series = null; }
    if (st.alive && st.doc) renderRun(st);
  };
  try {
    st.doc = await api(`/api/runs/${id}`);
  } catch (e) {
    view().innerHTML = `<p class="err">${esc(e.message)}</p>`;
    return { stop() {} };
  }
  const sub = st.doc.submission;
  st.live = st.doc.run.status === 'running' || (sub && (sub.state === 'running' || sub.state === 'queued'));
  renderRun(st);
  await loadSeries();
  if (st.live && st.alive) {
    const tq = token() ? '?token=' + encodeURIComponent(token()) : '';
    st.es = new EventSource(`/api/runs/${id}/events${tq}`);
    st.es.addEventListener('run', (e) => {
      st.doc = JSON.parse(e.data);
      st.updates++;
      renderRun(st);
      if (Date.now() - st.lastSeries > 1500) loadSeries();
      else if (!st.seriesTimer) st.seriesTimer = setTimeout(() => { st.seriesTimer = null; loadSeries(); }, 1500);
    });
    st.es.addEventListener('end', () => {
      st.es.close();
      st.live = false;
      loadSeries();
    });
  }
  return { stop() { st.alive = false; if (st.es) st.es.close(); clearTimeout(st.seriesTimer); } };
}

const DEFAULT_JOB = { model: 'mlp', hidden: '32', dataset: 'synthetic:4000', lr: 0.003, 'target-accuracy': 0.9,
  workers: '1,2', batch: '32,128', search: 'partial', objective: 'knee' };

function showSubmit() {
  view().innerHTML = `<h2>Submit a job</h2>
    <p class="muted">The JSON of <code>scavenger run JOB.json</code> (docs/RUN.md): the model, the target (target-accuracy or target-loss), the space (workers, batch), the objective.
    Paths (dataset directories, catalogs) must lie in the service's data directory. Needs the token.</p>
    <form id="submit-form"><textarea id="job" rows="12">${esc(JSON.stringify(DEFAULT_JOB, null, 2))}</textarea><br><button>Submit</button></form><div id="submit-result"></div>`;
  let timer = null, alive = true;
  $('#submit-form').onsubmit = async (e) => {
    e.preventDefault();
    const out = $('#submit-result');
    try {
      const s = await api('/api/runs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: $('#job').value });
      out.innerHTML = `<p>submission ${s.id}: <span id="sub-state">${esc(s.state)}</span></p>`;
      const poll = async () => {
        const x = await api('/api/submissions/' + s.id);
        if (!alive) return;
        $('#sub-state').textContent = x.state + (x.error ? ': ' + x.error : '');
        if (x.run) { location.hash = '#/run/' + x.run; return; }
        if (x.state === 'queued' || x.state === 'running') timer = setTimeout(poll, 500);
      };
      poll();
    } catch (err) {
      out.innerHTML = `<p class="err">${esc(err.message)}${err.field ? ` (field: <b>${esc(err.field)}</b>)` : ''}</p>`;
    }
  };
  return { stop() { alive = false; clearTimeout(timer); } };
}

function showPlan() {
  view().innerHTML = `<h2>Plan from measurements</h2>
    <p class="muted">What <code>scavenger plan</code> does, from the metrics files of <code>scavenger train --metrics</code> (two or more configurations): paste their JSON lines, one file per box, or pick files (read in this browser). Needs the token.</p>
    <form id="plan-form">
      <label>metrics files <input type="file" id="plan-files" multiple></label><br>
      <textarea id="plan-metrics" rows="6" placeholder='{"type":"job",...}\n{"type":"iter",...}'></textarea>
      <textarea id="plan-metrics2" rows="4" placeholder="a second file's lines (optional)"></textarea><br>
      <label>target epochs <input name="target_epochs" value="7" size="5"></label>
      <label>at batch <input name="base_batch" value="64" size="6"></label>
      <label>VM types <input name="vm" value="c5.xlarge,c5.2xlarge,c6i.4xlarge" size="30"></label>
      <label>workers <input name="workers" value="1..16" size="8"></label>
      <label>batch <input name="batch" value="32..1024" size="10"></label>
      <label>objective <select name="objective"><option>knee</option><option>time</option><option>cost</option></select></label>
      <button>Plan</button></form><div id="plan-result"></div>`;
  const files = [];
  $('#plan-files').onchange = async (e) => {
    files.length = 0;
    for (const f of e.target.files) files.push(await f.text());
  };
  $('#plan-form').onsubmit = async (e) => {
    e.preventDefault();
    const f = new FormData(e.target), out = $('#plan-result');
    const metrics = files.length ? files.slice() : [$('#plan-metrics').value, $('#plan-metrics2').value].filter((t) => t.trim());
    const req = { metrics, target_epochs: +f.get('target_epochs'), base_batch: +f.get('base_batch'), vm: f.get('vm'),
      workers: f.get('workers'), batch: f.get('batch'), objective: f.get('objective'), all: true };
    try {
      const p = await api('/api/plan', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(req) });
      let h = `<div class="card"><div id="chosen"><b>Chosen:</b> ${esc(p.chosen.vm)} K=${p.chosen.workers} B=${p.chosen.batch}: ${fmtTime(p.chosen.time_s)}, ${fmtUsd(p.chosen.cost)}</div><div class="muted">${esc(p.why)}</div>`;
      h += tradeoffChart('tradeoff-chart', 'Time–cost trade-off (' + p.n_configs + ' configurations)', p, null) + '</div>';
      h += '<h3>Pareto front</h3>' + rowsTable('front-table', p.front, [['vm', 'VM', 1], ['workers', 'K'], ['batch', 'B'], ['t_iter', 'iteration', 0, (v) => fmtTime(v)],
        ['time_s', 'time', 0, (v) => fmtTime(v)], ['cost', 'cost', 0, (v) => fmtUsd(v)], ['err_rel', '±', 0, (v) => (100 * v).toFixed(0) + '%']]);
      out.innerHTML = h;
    } catch (err) {
      out.innerHTML = `<p class="err">${esc(err.message)}${err.field ? ` (field: <b>${esc(err.field)}</b>)` : ''}</p>`;
    }
  };
  return { stop() {} };
}

async function route() {
  current.stop();
  const h = location.hash || '#/';
  const m = h.match(/^#\/run\/(\d+)/);
  if (m) current = await showRun(m[1]);
  else if (h.startsWith('#/submit')) current = showSubmit();
  else if (h.startsWith('#/plan')) current = showPlan();
  else current = await showRuns();
}

window.addEventListener('hashchange', route);
window.addEventListener('DOMContentLoaded', () => {
  const t = $('#token');
  t.value = token();
  t.onchange = () => localStorage.setItem('scv-token', t.value.trim());
  route();
});
