/*
 * app.js - the Scavenger dashboard: a single page drawn from the service's JSON API with
 * plain DOM and SVG (no library, nothing fetched from elsewhere). Views by the URL's hash:
 *   #/          the runs table (paged, filtered by job and status; refreshed every 3 s; a
 *               running run's latest time left, its band and P(reach) in its actual-time cell);
 *   #/run/ID    one run: the chosen configuration, the time-cost trade-off (every point,
 *               the Pareto front, the choice with its band, the outcome; while the run
 *               trains, from the latest plan the loop stored), the phase
 *               timeline (segments, switches and their idle), predicted against actual
 *               time to the target, iteration time and noise scale, test accuracy, the time
 *               left to the target while it trains (run.eta, rewritten by the loop); live
 *               through server-sent events while the run trains (the document, then
 *               deltas: applyDelta; polled instead when the stream is refused);
 *   #/run/ID/logs    the run's log, tailed from a byte offset (GET /api/runs/ID/log);
 *   #/run/ID/report  the run's report.md and tradeoff.svg (GET /api/runs/ID/files/NAME);
 *   #/compare/A,B,.. runs side by side: target, chosen configuration, predicted and actual
 *               time and cost (a table and one trade-off figure);
 *   #/submit    a form of a job's fields that builds the JSON of `scavenger run JOB.json`
 *               (errors inline by field; the raw JSON as an advanced option);
 *   #/plan      posts metrics files' text to /api/plan and draws the plan's curves (a read:
 *               no token on loopback), with a deadline, a budget and the pricing.
 * The pure pieces (axis ticks and their labels, the timeline's label placement, the runs
 * table, a forecast in words, the predicted-against-actual figure's spec, the job built from the form, a
 * live delta applied) are
 * tested in a browser by tests/web_unit.html (tests/browser.sh).
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
  if (s === 0) return '0 s';
  if (s !== 0 && s < 1e-3) return (s * 1e6).toPrecision(3) + ' \u00b5s';
  if (s < 1) return (s * 1e3).toPrecision(3) + ' ms';
  if (s < 100) return s.toPrecision(3) + ' s';
  if (s < 3600 * 1.5) return (s / 60).toFixed(1) + ' min';
  return (s / 3600).toFixed(2) + ' h';
}
function fmtUsd(c) {
  if (!fin(c)) return '-';
  if (c === 0) return '$0';
  if (c >= 1) return '$' + c.toFixed(2);
  if (c !== 0 && Math.abs(c) < 1e-3) return '$' + c.toExponential(2);
  return '$' + c.toPrecision(3);
}
function fmtNum(v) {
  if (!fin(v)) return '-';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
  return String(+v.toPrecision(4));
}
function fmtDate(t) { return fin(t) ? new Date(t * 1000).toLocaleString() : '-'; }
/* A compact local date for tables: 2026-11-25 23:26 */
function fmtDateShort(t) {
  if (!fin(t)) return '-';
  const d = new Date(t * 1000), z = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${z(d.getMonth() + 1)}-${z(d.getDate())} ${z(d.getHours())}:${z(d.getMinutes())}`;
}

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
/* The 1-2-5 step (1, 2, 5 x 10^e) that cuts span into the number of steps nearest n. */
function niceStep(span, n) {
  const mag = Math.pow(10, Math.floor(Math.log10(span / n)));
  let best = mag;
  for (const m of [1, 2, 5, 10]) if (Math.abs(span / (m * mag) - n) <= Math.abs(span / best - n)) best = m * mag;
  return best;
}
/* The unit a time axis is labelled in: the largest that keeps its largest value >= 1 (minutes
 * from 2 min, hours from 2 h, so that "90 s" is not "1.5 min"). */
function timeUnit(maxAbs) {
  if (maxAbs >= 7200) return ['h', 3600];
  if (maxAbs >= 120) return ['min', 60];
  if (maxAbs >= 1) return ['s', 1];
  if (maxAbs >= 1e-3) return ['ms', 1e-3];
  return ['\u00b5s', 1e-6];
}
/*
 * A linear axis's ticks: about n of them at 1-2-5 steps in the axis's display unit, each
 * {v, label}; unit 'time' (seconds, labelled in one of h/min/s/ms/us chosen from the range),
 * 'usd' (dollars) or anything else (plain numbers). Labels carry the precision of the step
 * (0, 0.5, 1 - never "0.00 ms" or "$0.00" for a tiny range) and, where that would take more
 * than 4 decimals or 7 digits, a shared power of ten ("1.5e-6").
 */
function axisTicks(lo, hi, n, unit) {
  if (!fin(lo) || !fin(hi)) return [];
  if (!(hi > lo)) hi = lo + (Math.abs(lo) || 1);
  let scale = 1, suffix = '', prefix = '';
  if (unit === 'time') { const u = timeUnit(Math.max(Math.abs(lo), Math.abs(hi))); scale = u[1]; suffix = ' ' + u[0]; }
  if (unit === 'usd') prefix = '$';
  const a = lo / scale, b = hi / scale, step = niceStep(b - a, Math.max(1, n || 5));
  const e = Math.floor(Math.log10(step) + 1e-9); /* step = m x 10^e */
  const vals = [];
  for (let k = Math.ceil(a / step - 1e-9); k * step <= b + 1e-9 * step && vals.length < 100; k++) vals.push(k * step);
  /* a shared power of ten: that of the smallest value but 0 (mantissas >= 1) */
  const nz = vals.map(Math.abs).filter((x) => x >= step * 1e-6), maxAbs = Math.max(0, ...nz);
  const E = nz.length ? Math.floor(Math.log10(Math.min(...nz)) + 1e-9) : 0;
  const exp = e < -4 || maxAbs >= 1e7;
  return vals.map((v) => {
    let t;
    if (Math.abs(v) < step * 1e-6) t = '0';
    else if (exp) t = (v / Math.pow(10, E)).toFixed(Math.max(0, E - e)) + 'e' + E;
    else t = v.toFixed(Math.max(0, -e));
    return { v: v * scale, label: prefix + t + suffix };
  });
}
/* One value on a log axis, in its own unit and at most 3 significant digits. */
function logLabel(v, unit) {
  if (unit === 'time') { const u = timeUnit(v); return String(+(v / u[1]).toPrecision(3)) + ' ' + u[0]; }
  const t = v !== 0 && (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e7) ? v.toExponential(0) : String(+v.toPrecision(3));
  return (unit === 'usd' ? '$' : '') + t;
}
/* A log axis's ticks at 1, 2, 5 x 10^e (only 1 x 10^e where those would be more than 9; every
 * other decade beyond that), each {v, label}. */
function logAxisTicks(lo, hi, unit) {
  const out = [];
  if (!(lo > 0) || !(hi > lo)) return out;
  const e0 = Math.floor(Math.log10(lo)), e1 = Math.ceil(Math.log10(hi));
  for (const ms of [[1, 2, 5], [1]]) {
    out.length = 0;
    for (let e = e0; e <= e1; e++)
      for (const m of ms) {
        const v = m * Math.pow(10, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push(v);
      }
    if (out.length <= 9) break;
  }
  const vs = out.length > 9 ? out.filter((_, i) => i % 2 === 0) : out;
  return vs.map((v) => ({ v, label: logLabel(v, unit) }));
}
/* Old name kept for the timeline: the values of axisTicks. */
function niceTicks(lo, hi, n) { return axisTicks(lo, hi, n).map((t) => t.v); }

/*
 * Labels on one line, left to right, each {x, w} (its left end and width in px): the row
 * (0 .. rows-1) where it does not overlap any label before it (gap px apart), else -1 (not
 * drawn: its segment keeps it as a tooltip). Pure; the phase timeline's labels.
 */
function placeLabels(items, rows, gap) {
  const ends = new Array(rows).fill(-Infinity), g = gap === undefined ? 4 : gap;
  return items.map((it) => {
    for (let r = 0; r < rows; r++)
      if (it.x >= ends[r] + g) { ends[r] = it.x + it.w; return r; }
    return -1;
  });
}
/* The width in px of a label of 11px system-ui text: an upper bound (wide glyphs). */
function labelWidth(text) { return 7 * String(text).length; }

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
  for (const t of (c.xlog ? logAxisTicks(x0, x1, c.xunit) : axisTicks(x0, x1, 6, c.xunit))) {
    svg += `<line x1="${fx(t.v)}" x2="${fx(t.v)}" y1="${T}" y2="${H - B}"></line>`;
    svg += `<text class="tick x" x="${fx(t.v)}" y="${H - B + 14}" text-anchor="middle">${esc(t.label)}</text>`;
  }
  for (const t of (c.ylog ? logAxisTicks(y0, y1, c.yunit) : axisTicks(y0, y1, 5, c.yunit))) {
    svg += `<line x1="${L}" x2="${W - R}" y1="${fy(t.v)}" y2="${fy(t.v)}"></line>`;
    svg += `<text class="tick y" x="${L - 5}" y="${fy(t.v) + 4}" text-anchor="end">${esc(t.label)}</text>`;
  }
  svg += '</g>';
  svg += `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#888"></rect>`;
  svg += `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">${esc(c.xlabel)}</text>`;
  svg += `<text transform="translate(12 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(c.ylabel)}</text>`;
  const legend = [], pointLabels = [], marks = [];
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
      if (s.labels && p.short) pointLabels.push({ x: fx(p.x), y: fy(p.y), text: p.short });
      marks.push({ left: fx(p.x) - r - 1, right: fx(p.x) + r + 1, top: fy(p.y) - r - 1, bottom: fy(p.y) + r + 1 });
    }
    legend.push({ name: s.name, color: s.color, kind: s.marker === 'none' ? 'line' : 'dot' });
  }
  /* the points' labels after every marker: each where it covers no marker and no other
   * label (right above, right below, left above, left below), else left out (its tooltip) */
  const placed = [], hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const l of pointLabels) {
    const w = labelWidth(l.text);
    for (const [dx, dy] of [[7, -8], [7, 16], [-7 - w, -8], [-7 - w, 16]]) {
      const box = { left: l.x + dx, right: l.x + dx + w, top: l.y + dy - 12, bottom: l.y + dy + 4 };
      if (box.left < L || box.right > W - R || box.top < T || box.bottom > H - B) continue;
      if (marks.some((m) => hit(box, m)) || placed.some((m) => hit(box, m))) continue;
      placed.push(box);
      svg += `<text class="pt-label" x="${box.left}" y="${l.y + dy}">${esc(l.text)}</text>`;
      break;
    }
  }
  let ly = T + 8;
  svg += '<g class="legend">';
  for (const l of legend) {
    const lx = W - R + 10;
    if (l.kind === 'dot') svg += `<circle cx="${lx + 8}" cy="${ly}" r="4" fill="${l.color}"></circle>`;
    else if (l.kind === 'band') svg += `<rect x="${lx}" y="${ly - 5}" width="16" height="10" fill="${l.color}" fill-opacity="0.3"></rect>`;
    else svg += `<line x1="${lx}" x2="${lx + 16}" y1="${ly}" y2="${ly}" stroke="${l.color}" stroke-width="2"></line>`;
    /* a long name on two lines (the legend is R - 32 px wide), the whole in its tooltip */
    const words = String(l.name).split(' '), lines = [''];
    for (const w of words) {
      if (lines[lines.length - 1] && (lines[lines.length - 1] + ' ' + w).length > 26 && lines.length < 2) lines.push(w);
      else lines[lines.length - 1] += (lines[lines.length - 1] ? ' ' : '') + w;
    }
    if (lines[1] && lines[1].length > 26) lines[1] = lines[1].slice(0, 25) + '\u2026';
    svg += `<text x="${lx + 22}" y="${ly + 4}"><title>${esc(l.name)}</title>${lines.map((t, i) => `<tspan x="${lx + 22}" dy="${i ? 13 : 0}">${esc(t)}</tspan>`).join('')}</text>`;
    ly += 15 + 13 * (lines.length - 1);
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
    series.push({ name: actual.missed ? 'outcome (target NOT reached)' : 'actual outcome', color: actual.missed ? '#8d99ae' : '#2a9d8f',
      pts: [{ x: actual.x, y: actual.y, label: (actual.missed ? 'ended without reaching the target: ' : 'actual: ') + fmtTime(actual.x) + ', ' + fmtUsd(actual.y) }], r: 6 });
  const xs = series.flatMap((s) => s.pts.map((p) => p.x)).filter((v) => fin(v) && v > 0);
  const ys = series.flatMap((s) => s.pts.map((p) => p.y)).filter((v) => fin(v) && v > 0);
  const wide = (a) => a.length > 1 && Math.max(...a) / Math.min(...a) > 20;
  return chart({ id, title, xlabel: 'time to the target' + (plan.relative ? ' (' + nominalWord(true, plan.nominalEpochs) + ': the target\u2019s epochs were unknown; not predictions)' : ''),
    ylabel: 'cost (US$)', xlog: wide(xs), ylog: wide(ys), series, fmtx: fmtTime, fmty: fmtUsd, xunit: 'time', yunit: 'usd',
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
/* the runs ticked for a comparison (kept while the table refreshes) */
const picked = new Set();

/* A run's target in words: "accuracy >= 0.8", "loss <= 0.3", or "-". */
function targetText(r) {
  if (r.target_metric === 'train_loss' && fin(r.target_loss)) return 'loss \u2264 ' + fmtNum(r.target_loss);
  if (fin(r.target_accuracy)) return 'accuracy \u2265 ' + fmtNum(r.target_accuracy);
  return '-';
}
/* The badge's class of a status: one word of the stylesheet's ("target not reached" is
 * not-reached, "interrupted (process gone)" interrupted), never the status's own words. */
function statusClass(status) {
  const s = String(status || '');
  if (s === 'target not reached') return 'not-reached';
  if (/^interrupted/.test(s)) return 'interrupted';
  return ['done', 'running', 'failed', 'stopped', 'queued'].includes(s) ? s : 'other';
}
/* One status per run: the store's status, with the loop's state beside it only where it
 * says more (running: warm-up, search, train...), and, for a run reached with its last
 * accuracy under the target (reached_how tolerance or window), a mark that says how
 * (reached_note, as `scavenger runs` marks it "tol." or "win."). */
function statusHtml(r) {
  const more = r.state && r.state !== r.status && r.status === 'running' ? ` <span class="muted">${esc(r.state)}</span>` : '';
  /* the badge's title: why the run ended as it did (the store's reason), else its decision's why */
  const how = r.reached_how === 'tolerance' ? 'within tolerance' : r.reached_how === 'window' ? 'by the window' : '';
  const mark = how ? ` <span class="muted reached-how" title="${esc(r.reached_note || '')}">${how}</span>` : '';
  return `<span class="badge ${statusClass(r.status)}" title="${esc(r.reason || r.why || '')}">${esc(r.status)}</span>${more}${mark}`;
}
/*
 * A running run's latest forecast (the API's run.eta, which the loop rewrites at each plan
 * and evaluation) in words, as `scavenger runs` says it; null for a run that is not running
 * or has none. full: "ETA 3.2 min (2.1 min to 5.0 min), P 0.91"; for a table's narrow cell
 * its pieces: left "3.2 min left", then "2.1-5.0 min", "P 0.91". A nominal time and an
 * overdue one say so.
 */
function etaText(r) {
  const e = r && r.status === 'running' ? r.eta : null;
  if (!e || !fin(e.written) || (!fin(e.remaining_s) && !e.overdue)) return null;
  const lo = e.remaining_lo_s, hi = e.remaining_hi_s, t = e.remaining_s;
  const range = fin(lo) && fin(hi) ? `${fmtTime(lo)} to ${fmtTime(hi)}` : fin(hi) ? `up to ${fmtTime(hi)}` : '';
  const p = fin(e.p_reach) ? `P ${e.p_reach.toFixed(2)}` : '';
  if (!fin(t)) {
    return { left: 'overdue', pieces: ['re-estimating'],
      full: `ETA: overdue, past the ${e.nominal ? 'nominal' : 'predicted'} time; re-estimating at the next evaluation` };
  }
  if (e.nominal && !e.overdue)
    return { left: `${fmtTime(t)} left`, pieces: ['nominal'], full: `ETA ${fmtTime(t)} nominal (the target\u2019s epochs unknown; not a prediction)` };
  /* "2.1-5.0 min" where both ends have one unit */
  const ul = fmtTime(lo).split(' '), uh = fmtTime(hi).split(' ');
  const short = !range ? '' : !fin(lo) ? range : ul[1] === uh[1] ? `${ul[0]}\u2013${uh[0]} ${uh[1]}` : `${fmtTime(lo)}\u2013${fmtTime(hi)}`;
  return { left: `${fmtTime(t)} left`, pieces: [short, p, e.overdue ? 'overdue' : ''].filter((x) => x),
    full: `ETA ${fmtTime(t)}${range ? ` (${range})` : ''}${p ? ', ' + p : ''}${e.overdue ? ', overdue: re-estimated from the learning curve' : ''}` };
}
/* The actual-time cell: the time, or (while a run trains) its forecast, its band and P under
 * it in pieces that wrap (the table fits 1400 px). */
function actualTimeHtml(r) {
  const eta = etaText(r);
  if (eta) return `<span class="eta" title="${esc(eta.full)}, as of ${esc(fmtDate(r.eta.written))}">${esc(eta.left)}</span>${eta.pieces.map((x) => ` <span class="muted eta-band">${esc(x)}</span>`).join('')}`;
  return r.reached ? fmtTime(r.actual_time_s) : fin(r.actual_time_s) ? `<span class="muted" title="target not reached: time to the end">(${fmtTime(r.actual_time_s)})</span>` : '-';
}
/*
 * The runs table (the API's runs, picked: ids ticked for a comparison): one status column,
 * the target and the VM type; the job key cut with an ellipsis (whole in its tooltip); in a
 * container that scrolls sideways by itself where the window is narrower than the table.
 */
function runsTableHtml(runs, pickedIds) {
  const sel = pickedIds || new Set();
  let h = `<div class="table-wrap"><table id="runs-table"><tr><th title="tick two or more to compare">\u2713</th><th>run</th><th class="l">job</th><th class="l">status</th><th class="l">target</th><th class="l">VM</th><th>K</th><th>B</th>
    <th>predicted time</th><th>predicted cost</th><th title="a running run: its latest time left to the target (ETA), the band and P(reach)">actual time / ETA</th><th>actual cost</th><th>test acc.</th><th class="l">created</th></tr>`;
  for (const r of runs) {
    const nom = r.nominal ? `<span class="muted nominal" title="${esc(nominalWord(true, r.nominal_epochs))}: the target\u2019s epochs were unknown, not a prediction">*</span>` : '';
    h += `<tr><td><input type="checkbox" class="pick" value="${r.id}"${sel.has(String(r.id)) ? ' checked' : ''} aria-label="compare run ${r.id}"></td>
      <td><a href="#/run/${r.id}">${r.id}</a></td><td class="l job" title="${esc(r.job_key)}">${esc(r.job_key)}</td><td class="l">${statusHtml(r)}</td>
      <td class="l">${esc(targetText(r))}</td><td class="l">${esc(r.vm || '-')}</td><td>${r.workers || '-'}</td><td>${r.batch || '-'}</td>
      <td>${fmtTime(r.predicted_time_s)}${nom}</td><td>${fmtUsd(r.predicted_cost)}${nom}</td>
      <td class="eta-cell">${actualTimeHtml(r)}</td>
      <td>${fmtUsd(r.actual_cost)}</td><td>${fin(r.accuracy) ? r.accuracy.toFixed(4) : '-'}</td><td class="l">${fmtDateShort(r.created)}</td></tr>`;
  }
  h += '</table>';
  if (runs.some((r) => r.nominal)) h += '<p class="muted">* nominal: the target\u2019s epochs were unknown when the run chose (an assumed number; not a prediction)</p>';
  return h + '</div>';
}

async function showRuns() {
  const q = new URLSearchParams(location.hash.split('?')[1] || '');
  const limit = 50, offset = +(q.get('offset') || 0), job = q.get('job') || '', status = q.get('status') || '';
  view().innerHTML = `<h2>Runs</h2><form id="filter">
    <label>job <input name="job" size="40" value="${esc(job)}" placeholder="model=lenet;hidden=-;dataset=fashion-mnist"></label>
    <label>status <select name="status">${['', 'running', 'done', 'interrupted', 'failed', 'target not reached'].map((s) => `<option${s === status ? ' selected' : ''}>${esc(s)}</option>`).join('')}</select></label>
    <button>Filter</button> <button type="button" id="compare-btn" disabled>Compare selected</button></form><div id="runs"><p>Loading…</p></div><div id="subs"></div>`;
  const compareButton = () => {
    const b = $('#compare-btn');
    b.disabled = picked.size < 2;
    b.textContent = `Compare selected (${picked.size})`;
  };
  $('#compare-btn').onclick = () => { location.hash = '#/compare/' + [...picked].join(','); };
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
      let h = runsTableHtml(d.runs, picked);
      const base = new URLSearchParams(); if (job) base.set('job', job); if (status) base.set('status', status);
      const link = (o) => { const p = new URLSearchParams(base); p.set('offset', o); return '#/?' + p.toString(); };
      h += `<p class="muted">${d.total} run(s)${d.total > limit ? `, ${offset + 1}–${Math.min(offset + limit, d.total)}` : ''}
        ${offset > 0 ? `<a href="${link(Math.max(0, offset - limit))}">newer</a>` : ''} ${offset + limit < d.total ? `<a href="${link(offset + limit)}">older</a>` : ''}</p>`;
      $('#runs').innerHTML = h;
      for (const cb of document.querySelectorAll('#runs-table input.pick'))
        cb.onchange = () => { if (cb.checked) picked.add(cb.value); else picked.delete(cb.value); compareButton(); };
      compareButton();
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
  for (const r of rows) h += '<tr>' + cols.map((c) => `<td${c[2] ? ` class="l${c[2] === 2 ? ' wrap' : ''}"` : ''}>${c[3] ? c[3](r[c[0]], r) : esc(fin(r[c[0]]) ? fmtNum(r[c[0]]) : r[c[0]])}</td>`).join('') + '</tr>';
  return h + '</table>';
}

const PHASE_COLORS = { warmup: '#f4a261', search: '#e9c46a', train: '#2a9d8f', replan: '#8ab17d' };

function timelineSvg(doc, series) {
  const steps = doc.steps || [];
  const W = 1180, H = 168, L = 70, R = 20, T = 28;
  let svg = `<svg id="timeline" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="phase timeline">`;
  svg += `<text x="${L}" y="16" font-weight="bold">Phase timeline (warm-up, search, training segments; switches with their idle time)</text>`;
  const t0 = steps.length && fin(steps[0].first_start) ? Math.min(steps[0].first_start - (fin(steps[0].idle_before) ? steps[0].idle_before : 0), doc.run.created) : doc.run.created;
  const last = series && series.points && series.points.length ? series.points[series.points.length - 1] : null;
  let tEnd = 0;
  for (const s of steps) if (fin(s.last_end)) tEnd = Math.max(tEnd, s.last_end - t0);
  if (last && fin(last.ts)) tEnd = Math.max(tEnd, last.ts - t0);
  if (!steps.length && !last) return svg + `<text x="${W / 2}" y="${H / 2}" text-anchor="middle">no segment has ended yet</text></svg>`;
  tEnd = tEnd * 1.03 || 1;
  /* the bar below two rows of labels, which lie below the legend */
  const fx = (t) => L + (W - L - R) * t / tEnd, y = T + 46, h = 34;
  for (const t of axisTicks(0, tEnd, 8, 'time')) {
    svg += `<line x1="${fx(t.v)}" x2="${fx(t.v)}" y1="${y - 2}" y2="${y + h + 6}" stroke="#eee"></line><text class="tick x" x="${fx(t.v)}" y="${y + h + 20}" text-anchor="middle">${esc(t.label)}</text>`;
  }
  svg += `<text x="${(L + W) / 2}" y="${H - 4}" text-anchor="middle">time since the run started</text>`;
  let prev = null, endPrev = 0;
  const labels = [];
  steps.forEach((s, i) => {
    const a = s.first_start - t0, b = s.last_end - t0;
    if (!fin(a) || !fin(b)) return;
    if (i > 0 && a > endPrev) svg += `<rect class="idle" x="${fx(endPrev)}" y="${y + 8}" width="${Math.max(1, fx(a) - fx(endPrev))}" height="${h - 16}" fill="#bbb"><title>idle ${fmtTime(a - endPrev)}</title></rect>`;
    const col = PHASE_COLORS[s.phase] || '#6c757d';
    svg += `<rect class="step" data-phase="${esc(s.phase)}" x="${fx(a)}" y="${y}" width="${Math.max(2, fx(b) - fx(a))}" height="${h}" fill="${col}" stroke="#fff"><title>${esc(s.phase)} K=${s.workers} B=${s.batch}: ${s.iterations} iterations, ${fmtTime(b - a)}${fin(s.t_iter) ? ', ' + fmtTime(s.t_iter) + '/iteration' : ''}</title></rect>`;
    const text = `${s.phase} ${s.workers}\u00d7${s.batch}`;
    labels.push({ x: Math.min(fx(a) + 2, W - R - labelWidth(text)), w: labelWidth(text), text });
    if (prev && (prev.workers !== s.workers || prev.batch !== s.batch)) {
      svg += `<line class="switch" x1="${fx(a)}" x2="${fx(a)}" y1="${y - 4}" y2="${y + h + 4}" stroke="#d62828" stroke-width="2"><title>switch ${prev.workers}\u00d7${prev.batch} \u2192 ${s.workers}\u00d7${s.batch}, idle ${fmtTime(s.idle_before)}</title></line>`;
    }
    prev = s; endPrev = b;
  });
  /* each label in the first of two rows where it overlaps no other; else not drawn (the
   * segment's tooltip has it) */
  placeLabels(labels, 2).forEach((row, i) => {
    if (row >= 0) svg += `<text class="seg-label" x="${labels[i].x}" y="${y - 5 - 13 * row}">${esc(labels[i].text)}</text>`;
  });
  if (last && fin(last.ts) && last.ts - t0 > endPrev + 1e-3 && doc.run.status === 'running') {
    svg += `<rect class="current" x="${fx(endPrev)}" y="${y}" width="${Math.max(2, fx(last.ts - t0) - fx(endPrev))}" height="${h}" fill="#ffe8a3" stroke="#d4a300" stroke-dasharray="4 3"><title>in progress: K=${last.workers} B=${last.batch}</title></rect>`;
    svg += `<text x="${Math.min(fx(endPrev) + 2, W - R - 90)}" y="${y + h / 2 + 4}">now: ${last.workers}\u00d7${last.batch}</text>`;
  }
  let lx = L;
  for (const [k, c] of Object.entries(PHASE_COLORS).concat([['idle', '#bbb'], ['switch', '#d62828']])) {
    svg += `<rect x="${lx}" y="${T + 2}" width="12" height="10" fill="${c}"></rect><text x="${lx + 16}" y="${T + 11}">${k}</text>`;
    lx += 80;
  }
  return svg + '</svg>';
}

/*
 * The figure of predicted against actual time to the target: each decision's prediction
 * (nominal ones apart: not predictions), the band at the decision, the time elapsed while
 * the run trains, and the actual time to the target - only for a run that reached it (a run
 * that missed it has no time to the target: its outcome is said in words instead). Pure.
 */
function predictedActualSpec(d, elapsed) {
  const r = d.run, rep = d.report;
  const decPt = (x) => ({ x: x.created - r.created, y: x.predicted_time, label: `${x.kind} at ${fmtTime(x.created - r.created)}: ${nominalWord(x._nominal, x._nominal_epochs)} ${fmtTime(x.predicted_time)}` });
  const decs = (d.decisions || []).filter((x) => fin(x.predicted_time) && !x._nominal).map(decPt);
  const nomDecs = (d.decisions || []).filter((x) => fin(x.predicted_time) && x._nominal).map(decPt);
  const reached = rep && rep.reached;
  const pa = { id: 'predicted-actual', title: 'Predicted against actual time to the target' + (rep && !reached ? ' (target NOT reached)' : ''),
    xlabel: 'when predicted (time since the run started)', ylabel: 'time to the target (from the start)',
    fmtx: fmtTime, fmty: fmtTime, xunit: 'time', yunit: 'time', yzero: true, series: [{ name: 'predicted at each decision', color: '#1f77b4', line: true, pts: decs }],
    hlines: [{ y: reached ? rep.actual_time_s : NaN, name: 'actual', color: '#2a9d8f' }, { y: elapsed, name: 'elapsed so far', color: '#ff9f1c' }],
    empty: 'no prediction yet' };
  if (nomDecs.length) pa.series.push({ name: 'nominal at a decision (not a prediction)', color: '#8d99ae', pts: nomDecs, r: 3 });
  if (rep && fin(rep.predicted_time_lo_s)) pa.series.push({ name: 'band at the decision', color: '#d62828', pts: [{ x: decs.length ? decs[0].x : 0, y: rep.predicted_time_s, ylo: rep.predicted_time_lo_s, yhi: rep.predicted_time_hi_s }], marker: 'diamond', r: 5 });
  return pa;
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
  /* one badge, the run's status; "live" beside it only while the page follows a run */
  let h = `<h2>Run ${r.id} ${statusHtml(r)}${live ? ' <span class="muted" id="live-status">live</span>' : ''}</h2>
    <p class="muted">${esc(r.job_key)} · state ${esc(r.state)} · created ${fmtDate(r.created)}${sub ? ` · submission ${sub.id} (${esc(sub.state)})` : ''}</p>
    <div class="card"><div class="chosen" id="chosen"><b>Chosen configuration:</b> <span id="chosen-config">${chosen}</span></div>
    <div class="muted">${esc(why || '')}</div>
    ${etaText(r) ? `<div id="eta"><b>Time left to the target:</b> ${esc(etaText(r).full)} <span class="muted">(as of ${esc(fmtDate(r.eta.written))})</span></div>` : ''}
    ${rep ? `<div>Outcome: ${rep.reached ? 'target reached' : 'target NOT reached'}${rep.reached_note ? ` (${esc(rep.reached_note)})` : ''}; test accuracy ${fin(rep.test_accuracy) ? rep.test_accuracy.toFixed(4) : '-'} after ${fmtNum(rep.epochs)} epochs in ${fmtTime(rep.actual_time_s)}, ${fmtUsd(rep.actual_cost)}; ${esc(repWord)} at the decision ${fmtTime(rep.predicted_time_s)}${fin(rep.predicted_time_lo_s) ? ` (band ${fmtTime(rep.predicted_time_lo_s)} to ${fmtTime(rep.predicted_time_hi_s)})` : ''}; search ${fmtTime(rep.search_time_s)}, ${rep.switches} switch(es)</div>` : ''}
    ${r.reason ? `<div class="err" id="run-reason"><b>${esc(r.status)}:</b> ${esc(r.reason)}</div>` : sub && sub.error ? `<div class="err">${esc(sub.error)}</div>` : ''}
    <p class="links"><a id="logs-link" href="#/run/${r.id}/logs">logs</a>${rep ? ` · report: <a id="report-link" href="#/run/${r.id}/report">view</a> · <a href="/api/runs/${r.id}/files/report.md">report.md</a> · <a href="/api/runs/${r.id}/files/report.json">report.json</a> · <a href="/api/runs/${r.id}/files/tradeoff.svg">tradeoff.svg</a>` : ' · report: written when the run ends'} · <a href="#/compare/${r.id}">compare with…</a></p>
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
  const actual = rep ? { x: rep.actual_time_s, y: rep.actual_cost, missed: !rep.reached } : null;
  h += '<div class="grid">';
  h += `<div class="card">${tradeoffChart('tradeoff-chart', lp ? 'Time–cost trade-off (live: the latest plan)' : 'Time–cost trade-off', plan, actual)}</div>`;
  /* predicted against actual time to the target (nominal figures are not predictions) */
  const elapsed = live && st.series && st.series.points.length ? st.series.points[st.series.points.length - 1].ts - r.created : NaN;
  const pa = predictedActualSpec(d, elapsed);
  h += `<div class="card">${chart(pa)}</div></div>`;
  h += `<div class="card">${timelineSvg(d, st.series)}</div>`;
  const pts = st.series ? st.series.points : [];
  h += '<div class="grid">';
  h += `<div class="card">${chart({ id: 'series-chart', title: 'Iteration time', xlabel: 'iteration', ylabel: 'iteration time', yzero: true, yunit: 'time',
    series: [{ name: 't_iter (mean per point)', color: '#1f77b4', line: true, r: 1.5, pts: pts.map((p) => ({ x: p.iter, y: p.t_iter, label: `iteration ${p.iter}: ${fmtTime(p.t_iter)} at K=${p.workers} B=${p.batch}` })) }] })}</div>`;
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
    ['predicted_cost', 'predicted cost', 0, (v, x) => fmtUsd(v) + (x._nominal ? ' nominal' : '')], ['reason', 'why', 2]]);
  h += '<h2>Switches</h2>' + rowsTable('switches-table', d.switches, [['from_workers', 'from K'], ['from_batch', 'from B'], ['to_workers', 'to K'], ['to_batch', 'to B'], ['idle_s', 'idle', 0, (v) => fmtTime(v)]]);
  h += '<h2>Measurements</h2>' + rowsTable('measurements-table', d.measurements, [['phase', 'phase', 1], ['vm', 'VM', 1], ['workers', 'K'], ['batch', 'B'], ['iterations', 'iterations'],
    ['t_compute', 'compute', 0, (v) => fmtTime(v)], ['t_comm', 'comm', 0, (v) => fmtTime(v)], ['t_iter', 'iteration', 0, (v) => fmtTime(v)]]);
  h += '<h2>Fitted models</h2>' + rowsTable('models-table', d.models, [['kind', 'kind', 1], ['json', 'parameters', 1, (v, m) => m.kind === 'plan' ? planSummary(v) : esc(v)]]) + '</div>';
  view().innerHTML = h;
  view().setAttribute('data-updates', String(st.updates));
  /* the most points a live plan (no report yet) drew on this page: tests/browser.sh */
  view().setAttribute('data-live-points', String(st.livePoints || 0));
  view().setAttribute('data-run-status', r.status);
  view().setAttribute('data-live', live ? '1' : '0');
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

/* A run's document changed by a delta of its event stream (docs/API.md, "events"): each
 * member of d.set replaces the document's (null: removed), and each d.splice[name] =
 * [from, items] keeps the array's first `from` rows and then `items`. Returns a new
 * document; doc itself is not changed. Pure. */
function applyDelta(doc, d) {
  const out = Object.assign({}, doc);
  for (const [k, v] of Object.entries(d.set || {})) {
    if (v === null) delete out[k]; else out[k] = v;
  }
  for (const [k, [from, items]] of Object.entries(d.splice || {}))
    out[k] = (Array.isArray(out[k]) ? out[k].slice(0, from) : []).concat(items);
  return out;
}

async function showRun(id) {
  const st = { doc: null, series: null, updates: 0, live: false, es: null, alive: true, lastSeries: 0, seriesTimer: null, pollTimer: null, livePoints: 0 };
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
    const update = (doc) => {
      st.doc = doc;
      st.updates++;
      renderRun(st);
      if (Date.now() - st.lastSeries > 1500) loadSeries();
      else if (!st.seriesTimer) st.seriesTimer = setTimeout(() => { st.seriesTimer = null; loadSeries(); }, 1500);
    };
    /* the document once, then its changes */
    st.es.addEventListener('run', (e) => update(JSON.parse(e.data)));
    st.es.addEventListener('delta', (e) => update(applyDelta(st.doc, JSON.parse(e.data))));
    st.es.addEventListener('end', () => {
      st.es.close();
      st.live = false;
      loadSeries();
    });
    /* refused (503: the service's streams are at their bound) or gone: the document polled
     * every 3 s instead until the run ends */
    st.es.onerror = () => {
      if (st.es.readyState !== EventSource.CLOSED || !st.live || st.pollTimer) return;
      const poll = async () => {
        st.pollTimer = null;
        if (!st.alive || !st.live) return;
        try {
          const doc = await api(`/api/runs/${id}`);
          const sub = doc.submission;
          st.live = doc.run.status === 'running' || (sub && (sub.state === 'running' || sub.state === 'queued'));
          update(doc);
        } catch (e) { /* kept: tried again */ }
        if (st.alive && st.live) st.pollTimer = setTimeout(poll, 3000);
      };
      st.pollTimer = setTimeout(poll, 3000);
    };
  }
  return { stop() { st.alive = false; if (st.es) st.es.close(); clearTimeout(st.seriesTimer); clearTimeout(st.pollTimer); } };
}

/* The submit form's fields: [name (the job key, docs/RUN.md), label, default, kind, help]. */
const JOB_FIELDS = [
  ['model', 'model', 'mlp', 'select:logreg|mlp|lenet|resnet', ''],
  ['hidden', 'hidden sizes (mlp)', '32', 'text', 'e.g. 256,128'],
  ['dataset', 'dataset', 'synthetic:4000', 'text', 'fashion-mnist, synthetic:N or a directory in the data dir'],
  ['target-metric', 'target', 'accuracy', 'select:accuracy|loss', 'test accuracy (>=) or training loss (<=)'],
  ['target', 'target value', '0.9', 'number', 'accuracy in (0, 1]; loss > 0'],
  ['workers', 'workers K', '1,2', 'text', 'a list 1,2,8 or a range 1..64[:STEP]'],
  ['batch', 'batch B', '32,128', 'text', 'as workers'],
  ['vm-type', 'VM type', '', 'select-api:catalog', 'default: the cluster\u2019s type, else c5.xlarge'],
  ['cluster', 'cluster', '', 'select-api:clusters', 'default: local processes'],
  ['max-epochs', 'max epochs', '', 'number', 'give up after (default 30)'],
  ['lr', 'learning rate', '0.003', 'number', ''],
  ['objective', 'objective', 'knee', 'select:knee|time|cost|utility', ''],
  ['deadline', 'deadline', '', 'text', 'seconds, or 45m, 2.5h'],
  ['budget', 'budget (US$)', '', 'number', ''],
  ['search', 'search', 'partial', 'select:partial|full|none', ''],
];
const SPEC_RE = /^\s*(\d+\s*\.\.\s*\d+(\s*:\s*\d+)?|\d+(\s*,\s*\d+)*)\s*$/;
const DURATION_RE = /^\s*\d+(\.\d+)?\s*[smh]?\s*$/;

/*
 * The job the form's values (an object by field name, strings) describe, and the errors by
 * field name ({} when none): required fields, numbers and their ranges, the workers and
 * batch specs, durations. Empty optional fields are left out (the service's defaults).
 * Pure: the submit page and tests/web_unit.html call it.
 */
function jobFromForm(v) {
  const job = {}, errors = {};
  const val = (k) => String(v[k] === undefined || v[k] === null ? '' : v[k]).trim();
  const num = (k, lo, loOpen, hi, what) => {
    const t = val(k);
    if (!t) return undefined;
    const x = Number(t);
    if (!isFinite(x) || (loOpen ? x <= lo : x < lo) || (hi !== undefined && x > hi)) { errors[k] = `expected ${what}`; return undefined; }
    return x;
  };
  if (!val('model')) errors.model = 'required';
  else job.model = val('model');
  if (val('hidden') && job.model === 'mlp') {
    if (!/^\d+(,\d+)*$/.test(val('hidden').replace(/\s/g, ''))) errors.hidden = 'expected sizes like 256,128';
    else job.hidden = val('hidden').replace(/\s/g, '');
  }
  if (val('dataset')) job.dataset = val('dataset');
  const loss = val('target-metric') === 'loss';
  if (!val('target')) errors.target = 'required: the run stops at its target';
  else {
    const t = num('target', 0, true, loss ? undefined : 1, loss ? 'a loss > 0' : 'an accuracy in (0, 1]');
    if (t !== undefined) job[loss ? 'target-loss' : 'target-accuracy'] = t;
  }
  for (const k of ['workers', 'batch']) {
    if (!val(k)) continue;
    if (!SPEC_RE.test(val(k))) errors[k] = 'expected a list 1,2,8 or a range 1..64[:STEP]';
    else job[k] = val(k).replace(/\s/g, '');
  }
  for (const k of ['vm-type', 'cluster', 'search']) if (val(k)) job[k] = val(k);
  const me = num('max-epochs', 0, true, undefined, 'a number of epochs > 0');
  if (me !== undefined) job['max-epochs'] = me;
  const lr = num('lr', 0, true, undefined, 'a learning rate > 0');
  if (lr !== undefined) job.lr = lr;
  if (val('objective')) job.objective = val('objective');
  if (val('deadline')) {
    if (!DURATION_RE.test(val('deadline'))) errors.deadline = 'expected seconds, or a number with s, m or h (45m, 2.5h)';
    else job.deadline = val('deadline').replace(/\s/g, '');
  }
  const bu = num('budget', 0, true, undefined, 'dollars > 0');
  if (bu !== undefined) job.budget = bu;
  if (job.objective === 'utility' && !val('value-per-hour')) { /* the service names it; nothing here */ }
  return { job, errors };
}

/* The form's inputs for JOB_FIELDS; selects fed by the API filled in later (fillApiSelects). */
function jobFormHtml() {
  return JOB_FIELDS.map(([name, label, dflt, kind, help]) => {
    let input;
    if (kind.startsWith('select:')) input = `<select name="${name}">${kind.slice(7).split('|').map((o) => `<option${o === dflt ? ' selected' : ''}>${esc(o)}</option>`).join('')}</select>`;
    else if (kind.startsWith('select-api:')) input = `<select name="${name}" data-api="${kind.slice(11)}"><option value="">(default)</option></select>`;
    else input = `<input name="${name}" value="${esc(dflt)}"${kind === 'number' ? ' inputmode="decimal"' : ''}>`;
    return `<label>${esc(label)} ${input}<span class="muted">${esc(help)}</span><span class="field-err" data-for="${name}"></span></label>`;
  }).join('');
}
async function fillApiSelects(root) {
  for (const sel of root.querySelectorAll('select[data-api]')) {
    try {
      if (sel.dataset.api === 'catalog') {
        const c = await api('/api/catalog');
        for (const v of c.vms || []) sel.insertAdjacentHTML('beforeend', `<option value="${esc(v.name)}">${esc(v.name)} (${esc(v.provider)}, ${v.vcpus} vCPU${v.gpus ? ', ' + v.gpus + ' GPU' : ''}, ${fmtUsd(v.ondemand)}/h)</option>`);
      } else {
        const c = await api('/api/clusters');
        for (const v of c.clusters || []) sel.insertAdjacentHTML('beforeend', `<option value="${esc(v.name)}"${v.status !== 'up' ? ' disabled' : ''}>${esc(v.name)} (${esc(v.status)})</option>`);
      }
    } catch (e) { /* the field keeps its default */ }
  }
}
/* Errors by field next to their inputs (others, and a field not on the form, in general). */
function showFieldErrors(root, errors, general) {
  for (const el of root.querySelectorAll('.field-err')) el.textContent = '';
  for (const el of root.querySelectorAll('.bad')) el.classList.remove('bad');
  let rest = general ? [general] : [];
  for (const [k, m] of Object.entries(errors)) {
    const slot = root.querySelector(`.field-err[data-for="${k}"]`);
    if (slot) { slot.textContent = m; const inp = root.querySelector(`[name="${k}"]`); if (inp) inp.classList.add('bad'); }
    else rest.push(`${k}: ${m}`);
  }
  return rest;
}

function showSubmit() {
  view().innerHTML = `<h2>Submit a job</h2>
    <p class="muted">A job of <code>scavenger run</code> (docs/RUN.md): the model, the target, the space of workers and batch, where it runs and what to choose.
    Paths (dataset directories) must lie in the service's data directory. Submitting needs the token (the field at the top right).</p>
    <form id="submit-form" class="job">${jobFormHtml()}
      <details class="wide" id="raw"><summary>Advanced: the job's JSON</summary>
        <p class="muted">The JSON the form builds (any setting of docs/RUN.md may be added); with the box ticked it is sent as written.</p>
        <textarea id="job" rows="10"></textarea><label><span><input type="checkbox" id="use-raw"> submit this JSON instead of the form</span></label></details>
      <div class="wide"><button>Submit</button> <span class="err" id="submit-errors"></span></div></form><div id="submit-result"></div>`;
  const form = $('#submit-form');
  fillApiSelects(form);
  const values = () => Object.fromEntries(new FormData(form).entries());
  const sync = () => { if (!$('#use-raw').checked) $('#job').value = JSON.stringify(jobFromForm(values()).job, null, 2); };
  form.oninput = (e) => { if (e.target.id !== 'job' && e.target.id !== 'use-raw') sync(); };
  sync();
  let timer = null, alive = true;
  form.onsubmit = async (e) => {
    e.preventDefault();
    const out = $('#submit-result');
    let body;
    if ($('#use-raw').checked) {
      try { JSON.parse($('#job').value); } catch (err) { $('#submit-errors').textContent = 'the JSON: ' + err.message; $('#job').classList.add('bad'); return; }
      body = $('#job').value;
    } else {
      const { job, errors } = jobFromForm(values());
      $('#submit-errors').textContent = showFieldErrors(form, errors).join('; ');
      if (Object.keys(errors).length) return;
      body = JSON.stringify(job);
    }
    try {
      const s = await api('/api/runs', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      showFieldErrors(form, {});
      $('#submit-errors').textContent = '';
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
      /* the service names the field: shown at its input (a target's key is the form's "target") */
      const f = err.field === 'target-accuracy' || err.field === 'target-loss' ? 'target' : err.field;
      const rest = showFieldErrors(form, f ? { [f]: err.message } : {}, f ? '' : err.message);
      $('#submit-errors').textContent = rest.join('; ') || (err.status === 401 ? '' : 'see the field marked above');
    }
  };
  return { stop() { alive = false; clearTimeout(timer); } };
}

/* The /api/plan request of the plan form's values (strings by field name) and the metrics
 * files' texts, and the errors by field ({} when none): the deadline (seconds, or 45m,
 * 2.5h) and the budget (dollars > 0) only when given, the pricing always. Pure. */
function planRequest(v, metrics) {
  const req = { metrics, target_epochs: +v.target_epochs, base_batch: +v.base_batch, vm: v.vm, workers: v.workers,
    batch: v.batch, objective: v.objective, pricing: v.pricing || 'ondemand', all: true };
  const errors = {};
  const dl = String(v.deadline || '').replace(/\s/g, ''), bu = String(v.budget || '').trim();
  if (dl) { if (DURATION_RE.test(dl)) req.deadline = /^[\d.]+$/.test(dl) ? +dl : dl; else errors.deadline = 'expected seconds, or 45m, 2.5h'; }
  if (bu) { if (+bu > 0 && isFinite(+bu)) req.budget = +bu; else errors.budget = 'expected dollars > 0'; }
  return { req, errors };
}

function showPlan() {
  view().innerHTML = `<h2>Plan from measurements</h2>
    <p class="muted">What <code>scavenger plan</code> does, from the metrics files of <code>scavenger train --metrics</code> (two or more configurations): paste their JSON lines, one file per box, or pick files (read in this browser). A plan stores and starts nothing: no token is needed where the service lets reads go without one.</p>
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
      <label>deadline <input name="deadline" size="7" placeholder="45m, 2.5h"></label>
      <label>budget (US$) <input name="budget" size="7"></label>
      <label>pricing <select name="pricing"><option value="ondemand">on demand</option><option value="spot">spot</option><option value="memory">by memory</option></select></label>
      <button>Plan</button> <span class="err" id="plan-errors"></span></form><div id="plan-result"></div>`;
  const files = [];
  $('#plan-files').onchange = async (e) => {
    files.length = 0;
    for (const f of e.target.files) files.push(await f.text());
  };
  $('#plan-form').onsubmit = async (e) => {
    e.preventDefault();
    const f = new FormData(e.target), out = $('#plan-result');
    const metrics = files.length ? files.slice() : [$('#plan-metrics').value, $('#plan-metrics2').value].filter((t) => t.trim());
    const { req, errors } = planRequest(Object.fromEntries(f.entries()), metrics);
    const errs = Object.entries(errors).map(([k, m]) => `${k}: ${m}`);
    $('#plan-errors').textContent = errs.join('; ');
    if (errs.length) return;
    try {
      const p = await api('/api/plan', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(req) });
      let h = `<div class="card"><div id="chosen"><b>Chosen:</b> ${esc(p.chosen.vm)} K=${p.chosen.workers} B=${p.chosen.batch}: ${fmtTime(p.chosen.time_s)}, ${fmtUsd(p.chosen.cost)}</div><div class="muted">${esc(p.why)}</div>
        <div class="muted">${esc(req.pricing)} prices${req.deadline !== undefined ? ' · deadline ' + esc(fin(req.deadline) ? fmtTime(req.deadline) : req.deadline) : ''}${req.budget !== undefined ? ' · budget ' + fmtUsd(req.budget) : ''}</div>`;
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

/* #/run/ID/logs: the run's log (the API's window from a byte offset), followed every 2 s. */
function showLogs(id) {
  view().innerHTML = `<h2><a href="#/run/${id}">Run ${id}</a>: logs</h2>
    <p><label>log <select id="log-name"></select></label> <label><input type="checkbox" id="follow" checked> follow</label>
    <span class="muted" id="log-info"></span></p><pre class="log" id="log-text" data-bytes="0"></pre>`;
  let alive = true, timer = null, next = -1, name = '';
  const KEEP = 1 << 20; /* characters kept on the page */
  const pre = $('#log-text');
  const load = async () => {
    if (!alive) return;
    try {
      const q = new URLSearchParams();
      if (name) q.set('name', name);
      if (next >= 0) q.set('offset', next);
      const d = await api(`/api/runs/${id}/log?${q}`);
      if (!alive) return;
      if (!name) {
        name = d.name;
        $('#log-name').innerHTML = d.names.map((n) => `<option${n === name ? ' selected' : ''}>${esc(n)}</option>`).join('');
      }
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      let text = (next < 0 || d.reset ? '' : pre.textContent) + d.text;
      if (next < 0 && d.offset > 0) text = `[… the first ${d.offset} bytes are not shown]\n` + text;
      if (text.length > KEEP) text = text.slice(text.length - KEEP);
      pre.textContent = text;
      pre.setAttribute('data-bytes', String(d.next));
      if (atEnd) pre.scrollTop = pre.scrollHeight;
      $('#log-info').textContent = `${esc(d.name)}: ${d.size} bytes`;
      next = d.next;
      if (d.next < d.size) { timer = setTimeout(load, 50); return; } /* more than one window behind */
    } catch (e) {
      pre.textContent = e.message;
      pre.classList.add('err');
    }
    if (alive && $('#follow').checked) timer = setTimeout(load, 2000);
  };
  $('#log-name').onchange = (e) => { name = e.target.value; next = -1; clearTimeout(timer); load(); };
  $('#follow').onchange = (e) => { clearTimeout(timer); if (e.target.checked) load(); };
  load();
  return { stop() { alive = false; clearTimeout(timer); } };
}

/* #/run/ID/report: the run's report.md and its figure, fetched with the token. */
async function showReport(id) {
  view().innerHTML = `<h2><a href="#/run/${id}">Run ${id}</a>: report</h2><div id="report-view"><p>Loading…</p></div>`;
  try {
    const get = async (n) => {
      const r = await fetch(`/api/runs/${id}/files/${n}`, { headers: headers() });
      if (!r.ok) { let m = r.status + ' ' + r.statusText; try { m = (await r.json()).error; } catch (e) { /* not JSON */ } throw new Error(m); }
      return r.text();
    };
    const md = await get('report.md');
    let svg = '';
    try { svg = await get('tradeoff.svg'); } catch (e) { svg = ''; }
    /* the figure as an image (a data: URL): no script of it can run */
    const img = svg ? `<img id="report-svg" alt="cost against time" src="data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(svg)))}">` : '';
    $('#report-view').innerHTML = `<div class="card">${img}</div><pre class="report" id="report-md">${esc(md)}</pre>`;
  } catch (e) {
    $('#report-view').innerHTML = `<p class="err">${esc(e.message)}</p>`;
  }
  return { stop() {} };
}

const RUN_COLORS = ['#1f77b4', '#d62828', '#2a9d8f', '#9d4edd', '#ff9f1c', '#6c757d', '#8ab17d', '#e76f51'];

/* The comparison of runs' documents (GET /api/runs/ID): a row per attribute, a column per
 * run, and one time-cost figure with each run's prediction and outcome. Pure. */
function compareHtml(docs) {
  const rows = [
    ['job', (d) => esc(d.run.job_key)],
    ['status', (d) => statusHtml(d.run)],
    ['target', (d) => { const j = d.job || {}; return esc(+j['target-loss'] > 0 ? 'loss \u2264 ' + fmtNum(+j['target-loss']) : +j['target-accuracy'] > 0 ? 'accuracy \u2265 ' + fmtNum(+j['target-accuracy']) : '-'); }],
    ['chosen configuration', (d) => { const c = d.report && d.report.chosen; const x = c || (d.decisions || []).slice(-1)[0]; return x ? esc(`K=${x.workers}, B=${x.batch} on ${x.vm}`) : '-'; }],
    ['objective', (d) => esc((d.job || {}).objective || 'knee')],
    ['predicted time', (d) => fmtTime(d.run.predicted_time_s) + (d.run.nominal ? ' <span class="muted">nominal</span>' : '')],
    ['predicted cost', (d) => fmtUsd(d.run.predicted_cost) + (d.run.nominal ? ' <span class="muted">nominal</span>' : '')],
    ['actual time', (d) => d.run.reached ? fmtTime(d.run.actual_time_s) : fin(d.run.actual_time_s) ? `(${fmtTime(d.run.actual_time_s)}, target not reached)` : '-'],
    ['actual cost', (d) => fmtUsd(d.run.actual_cost)],
    ['test accuracy', (d) => fin(d.run.accuracy) ? d.run.accuracy.toFixed(4) : '-'],
    ['epochs', (d) => d.report ? fmtNum(d.report.epochs) : '-'],
    ['search time', (d) => d.report ? fmtTime(d.report.search_time_s) : '-'],
    ['switches', (d) => String((d.switches || []).length)],
    ['created', (d) => fmtDateShort(d.run.created)],
  ];
  let h = `<div class="table-wrap"><table id="compare-table"><tr><th class="l"></th>${docs.map((d, i) => `<th class="l"><svg width="10" height="10" aria-hidden="true"><circle cx="5" cy="5" r="5" fill="${RUN_COLORS[i % RUN_COLORS.length]}"></circle></svg> <a href="#/run/${d.run.id}">run ${d.run.id}</a></th>`).join('')}</tr>`;
  for (const [name, f] of rows) h += `<tr><th class="l">${esc(name)}</th>${docs.map((d) => `<td class="l">${f(d)}</td>`).join('')}</tr>`;
  h += '</table></div>';
  const series = [];
  docs.forEach((d, i) => {
    const col = RUN_COLORS[i % RUN_COLORS.length], r = d.run, pts = [];
    if (fin(r.predicted_time_s) && fin(r.predicted_cost)) pts.push({ x: r.predicted_time_s, y: r.predicted_cost, label: `run ${r.id} predicted: ${fmtTime(r.predicted_time_s)}, ${fmtUsd(r.predicted_cost)}` });
    if (fin(r.actual_time_s) && fin(r.actual_cost)) pts.push({ x: r.actual_time_s, y: r.actual_cost, label: `run ${r.id} ${r.reached ? 'actual' : 'ended (target not reached)'}: ${fmtTime(r.actual_time_s)}, ${fmtUsd(r.actual_cost)}` });
    if (pts.length) series.push({ name: `run ${r.id}: predicted \u2192 actual`, color: col, line: true, dash: '4 3', pts, r: 5 });
  });
  const xs = series.flatMap((s) => s.pts.map((p) => p.x)), ys = series.flatMap((s) => s.pts.map((p) => p.y));
  const wide = (a) => a.length > 1 && Math.min(...a) > 0 && Math.max(...a) / Math.min(...a) > 20;
  h += `<div class="card">${chart({ id: 'compare-chart', title: 'Predicted and actual time and cost', xlabel: 'time to the target', ylabel: 'cost (US$)',
    xunit: 'time', yunit: 'usd', fmtx: fmtTime, fmty: fmtUsd, xlog: wide(xs), ylog: wide(ys), series, width: 760, empty: 'no prediction or outcome yet' })}</div>`;
  return h;
}

/* #/compare/A,B,...: two or more runs side by side. */
async function showCompare(ids) {
  view().innerHTML = `<h2>Comparison of runs ${esc(ids.join(', '))}</h2><div id="compare"><p>Loading…</p></div>`;
  try {
    const docs = await Promise.all(ids.map((id) => api(`/api/runs/${id}`)));
    for (const d of docs) markNominalDecisions(d);
    $('#compare').innerHTML = (ids.length < 2 ? '<p class="muted">Tick two or more runs in the <a href="#/">runs table</a> to compare them.</p>' : '') + compareHtml(docs);
  } catch (e) {
    $('#compare').innerHTML = `<p class="err">${esc(e.message)}</p>`;
  }
  return { stop() {} };
}

async function route() {
  current.stop();
  const h = location.hash || '#/';
  const m = h.match(/^#\/run\/(\d+)(\/(logs|report))?/), cm = h.match(/^#\/compare\/([\d,]+)/);
  if (m && m[3] === 'logs') current = showLogs(m[1]);
  else if (m && m[3] === 'report') current = await showReport(m[1]);
  else if (m) current = await showRun(m[1]);
  else if (cm) current = await showCompare(cm[1].split(',').filter((x) => x).slice(0, 8));
  else if (h.startsWith('#/submit')) current = showSubmit();
  else if (h.startsWith('#/plan')) current = showPlan();
  else current = await showRuns();
}

window.addEventListener('hashchange', () => { if (view()) route(); });
window.addEventListener('DOMContentLoaded', () => {
  const t = $('#token');
  if (!t || !view()) return; /* loaded by tests/web_unit.html, not the dashboard */
  t.value = token();
  t.onchange = () => localStorage.setItem('scv-token', t.value.trim());
  route();
});
