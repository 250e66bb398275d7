/*
 * svg.c - cost-time trade-off figures (see svg.h). Written atomically.
 *
 * Both axes are logarithmic. Ticks follow 1-2-5 per decade (only the decades when that
 * would crowd the axis); when the range holds fewer than three of those, the denser
 * 1-1.5-2-3-5-7 sequence is used, and when even that gives fewer than three the axis is
 * widened to three of its ticks, so every axis has at least three labelled ticks. Time is
 * shown in s, min or h after the largest value; cost in $.
 *
 * Drawing order: grid, series lines, the Pareto front (thin, dashed, so the lines it runs
 * along stay visible), markers, K labels (placed where they do not collide with another
 * label), the choice (an open ring) and the actual outcome (a diamond), the legend.
 */
#define _POSIX_C_SOURCE 200809L
#include "svg.h"
#include "../core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 980, H = 620, L = 95, R = 250, T = 50, BOT = 75, PW = W - L - R, PH = H - T - BOT };
enum { MAX_TICKS = 64, ROW = 18 };

typedef struct {
    double lx0, lx1, ly0, ly1; /* log10 of seconds and dollars at the plot's edges */
} axes;

static double px(const axes *a, double t) { return L + (log10(t) - a->lx0) / (a->lx1 - a->lx0) * PW; }
static double py(const axes *a, double c) { return H - BOT - (log10(c) - a->ly0) / (a->ly1 - a->ly0) * PH; }

typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} sbuf;

static void put(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *s, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (s->buf && s->len + (size_t)n < s->cap) {
            s->len += (size_t)n;
            return;
        }
        size_t cap = (s->cap + (size_t)n + 1) * 2;
        char *nb = realloc(s->buf, cap);
        if (!nb) {
            s->oom = 1;
            return;
        }
        s->buf = nb;
        s->cap = cap;
    }
}

/* Text with XML's special characters escaped. */
static void put_text(sbuf *s, const char *text)
{
    for (const char *p = text ? text : ""; *p; p++) {
        switch (*p) {
        case '&': put(s, "&amp;"); break;
        case '<': put(s, "&lt;"); break;
        case '>': put(s, "&gt;"); break;
        case '\'': put(s, "&apos;"); break;
        case '"': put(s, "&quot;"); break;
        default: put(s, "%c", *p);
        }
    }
}

/* ---- ticks ---- */

static const double MANT_DECADE[] = {1}, MANT_125[] = {1, 2, 5}, MANT_DENSE[] = {1, 1.5, 2, 3, 5, 7};

/* Values m * 10^e (m of mant) within [lo, hi], ascending, at most cap of them stored;
 * returns how many there are. */
static int gen_ticks(const double *mant, int nm, double lo, double hi, double *out, int cap)
{
    int n = 0;
    for (int e = (int)floor(log10(lo)) - 1; e <= (int)ceil(log10(hi)) + 1; e++)
        for (int i = 0; i < nm; i++) {
            double v = mant[i] * pow(10, e);
            if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9)) continue;
            if (n < cap) out[n] = v;
            n++;
        }
    return n;
}

/* Ticks of a log axis over [*lo, *hi] (0 < lo < hi): at least 3 and at most max_ticks (see
 * the top of the file). May widen [*lo, *hi]. Returns the count written to out. */
static int log_ticks(double *lo, double *hi, int max_ticks, double *out)
{
    int n = gen_ticks(MANT_125, 3, *lo, *hi, out, MAX_TICKS);
    if (n >= 3 && n <= max_ticks) return n;
    if (n > max_ticks) { /* decades only, every stride-th when there are still too many */
        double dec[MAX_TICKS];
        int nd = gen_ticks(MANT_DECADE, 1, *lo, *hi, dec, MAX_TICKS), stride = 1, k = 0;
        if (nd > MAX_TICKS) nd = MAX_TICKS;
        while ((nd + stride - 1) / stride > max_ticks) stride++;
        for (int i = 0; i < nd; i += stride) out[k++] = dec[i];
        if (k >= 3) return k;
        return gen_ticks(MANT_125, 3, *lo, *hi, out, max_ticks < MAX_TICKS ? max_ticks : MAX_TICKS);
    }
    if ((n = gen_ticks(MANT_DENSE, 6, *lo, *hi, out, MAX_TICKS)) >= 3) return n;
    /* widen to the dense ticks just outside the range until three are inside */
    double t[MAX_TICKS];
    int nt = gen_ticks(MANT_DENSE, 6, *lo / 100, *hi * 100, t, MAX_TICKS);
    if (nt > MAX_TICKS) nt = MAX_TICKS;
    int a = 0, b = nt - 1;
    while (a + 1 < nt && t[a + 1] <= *lo * (1 + 1e-9)) a++;
    while (b - 1 >= 0 && t[b - 1] >= *hi * (1 - 1e-9)) b--;
    while (b - a + 1 < 3 && (a > 0 || b < nt - 1)) {
        /* extend on the side that adds the smaller stretch */
        int up = b < nt - 1 && (a == 0 || log(t[b + 1] / *hi) <= log(*lo / t[a - 1]));
        if (up) b++;
        else a--;
    }
    *lo = t[a];
    *hi = t[b];
    for (int i = a; i <= b; i++) out[i - a] = t[i];
    return b - a + 1;
}

/* "0.002", "1.5", "200", "1.5e-06", "1e+06" */
static void fmt_tick(double v, char *buf, size_t cap) { snprintf(buf, cap, "%g", v); }

/* ---- pieces ---- */

static void extend(axes *a, double t, double c)
{
    if (!(t > 0) || !(c > 0) || !isfinite(t) || !isfinite(c)) return;
    a->lx0 = fmin(a->lx0, log10(t));
    a->lx1 = fmax(a->lx1, log10(t));
    a->ly0 = fmin(a->ly0, log10(c));
    a->ly1 = fmax(a->ly1, log10(c));
}

static int drawable(double t, double c) { return t > 0 && c > 0 && isfinite(t) && isfinite(c); }

static const char *const COLORS[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
static const char *const DASHES[] = {"", " stroke-dasharray='7 4'", " stroke-dasharray='2 3'",
                                     " stroke-dasharray='9 3 2 3'"};

static const char *dash_of(int d) { return DASHES[(d < 0 ? -d : d) % 4]; }

/* Label boxes already placed (for K labels that do not overlap). */
typedef struct {
    double (*box)[4];
    size_t n, cap;
} boxes;

static int box_free(const boxes *b, double x0, double y0, double x1, double y1)
{
    if (x0 < L || x1 > W - R || y0 < T || y1 > H - BOT) return 0;
    for (size_t i = 0; i < b->n; i++)
        if (x0 < b->box[i][2] && x1 > b->box[i][0] && y0 < b->box[i][3] && y1 > b->box[i][1])
            return 0;
    return 1;
}

static void box_add(boxes *b, double x0, double y0, double x1, double y1)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        double (*nb)[4] = realloc(b->box, sizeof *nb * cap);
        if (!nb) return; /* then labels may overlap: harmless */
        b->box = nb;
        b->cap = cap;
    }
    b->box[b->n][0] = x0, b->box[b->n][1] = y0, b->box[b->n][2] = x1, b->box[b->n][3] = y1;
    b->n++;
}

/* Places "K=k" beside the point (x, y): right above, right below or left above, the first
 * place that is free. */
static void k_label(sbuf *s, boxes *b, double x, double y, int k, const char *col)
{
    char txt[24];
    snprintf(txt, sizeof txt, "K=%d", k);
    double w = 5.6 * (double)strlen(txt), h = 10;
    const double dx[] = {5, 5, -5 - w}, dy[] = {-5, 12, -5};
    for (int i = 0; i < 3; i++) {
        double x0 = x + dx[i], base = y + dy[i];
        if (!box_free(b, x0, base - h + 1, x0 + w, base + 1)) continue;
        box_add(b, x0, base - h + 1, x0 + w, base + 1);
        put(s, "<text class='klabel' x='%.1f' y='%.1f' font-size='10' fill='%s'>%s</text>\n", x0,
            base, col, txt);
        return;
    }
}

static void marker(sbuf *s, double x, double y, const char *col, int hollow)
{
    if (hollow)
        put(s, "<circle class='hollow' cx='%.1f' cy='%.1f' r='3.5' fill='white' stroke='%s' "
               "stroke-width='1.5'/>\n", x, y, col);
    else put(s, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", x, y, col);
}

static void diamond(sbuf *s, double x, double y, double r, const char *cls)
{
    put(s, "<polygon class='%s' points='%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f' fill='#ffd700' "
           "stroke='black' stroke-width='1.5'/>\n", cls, x, y - r, x + r, y, x, y + r, x - r, y);
}

/* One legend row: a line sample (color, dash; no line when color is NULL) and text. */
static int legend_y(int row) { return T + 12 + ROW * row; }
static void legend_text(sbuf *s, int row, const char *text)
{
    /* the legend column holds about 30 characters at 12 px: longer texts get a smaller font */
    put(s, "<text class='legend' x='%d' y='%d' font-size='%d'>", W - R + 44, legend_y(row) + 4,
        strlen(text ? text : "") > 30 ? 10 : 12);
    put_text(s, text);
    put(s, "</text>\n");
}

/* The plot's log-scale ranges over every point drawn, padded; 0 when nothing is drawable. */
static int fit_axes(const svg_figure *fig, axes *a)
{
    *a = (axes){INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        for (size_t i = 0; i < ser->n; i++) extend(a, ser->t[i], ser->c[i]);
    }
    for (size_t i = 0; fig->front && i < fig->front->n; i++) extend(a, fig->front->t[i], fig->front->c[i]);
    if (fig->has_mark) extend(a, fig->mark_t, fig->mark_c);
    if (fig->has_actual) extend(a, fig->actual_t, fig->actual_c);
    if (!isfinite(a->lx0)) return 0;
    double padx = fmax(0.04, 0.05 * (a->lx1 - a->lx0)), pady = fmax(0.04, 0.05 * (a->ly1 - a->ly0));
    a->lx0 -= padx, a->lx1 += padx, a->ly0 -= pady, a->ly1 += pady;
    return 1;
}

/* The title, the ticks (time in the unit of the largest value, dollars as they are; the
 * ranges widened to whole ticks), the frame and the axis titles. */
static void draw_frame(sbuf *s, const svg_figure *fig, axes *a)
{
    /* ticks: time in the unit of the largest value, dollars as they are */
    double hi_s = pow(10, a->lx1);
    double tscale = hi_s > 7200 ? 3600 : hi_s > 300 ? 60 : 1;
    const char *tunit = tscale == 3600 ? "h" : tscale == 60 ? "min" : "s";
    double xt[MAX_TICKS], yt[MAX_TICKS];
    double xlo = pow(10, a->lx0) / tscale, xhi = hi_s / tscale;
    int nx = log_ticks(&xlo, &xhi, 9, xt);
    a->lx0 = log10(xlo * tscale), a->lx1 = log10(xhi * tscale);
    double ylo = pow(10, a->ly0), yhi = pow(10, a->ly1);
    int ny = log_ticks(&ylo, &yhi, 12, yt);
    a->ly0 = log10(ylo), a->ly1 = log10(yhi);
    put(s, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>\n", W, H);
    put(s, "<rect width='100%%' height='100%%' fill='white'/>\n");
    put(s, "<text x='%d' y='28' font-size='16'>", L);
    put_text(s, fig->title);
    put(s, "</text>\n");
    for (int i = 0; i < nx; i++) {
        char v[32];
        fmt_tick(xt[i], v, sizeof v);
        double x = px(a, xt[i] * tscale);
        put(s, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ddd'/>\n", x, T, x, H - BOT);
        put(s, "<text class='xtick' x='%.1f' y='%d' text-anchor='middle' font-size='12'>%s %s</text>\n",
            x, H - BOT + 18, v, tunit);
    }
    for (int i = 0; i < ny; i++) {
        char v[32];
        fmt_tick(yt[i], v, sizeof v);
        double y = py(a, yt[i]);
        put(s, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>\n", L, y, W - R, y);
        put(s, "<text class='ytick' x='%d' y='%.1f' text-anchor='end' font-size='12'>$%s</text>\n",
            L - 6, y + 4, v);
    }
    put(s, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='black'/>\n", L, T, PW, PH);
    put(s, "<text x='%d' y='%d' text-anchor='middle' font-size='13'>", L + PW / 2, H - 30);
    put_text(s, fig->x_title ? fig->x_title : "time to target");
    put(s, " (%s, log scale)</text>\n", tunit);
    put(s, "<text x='22' y='%d' font-size='13' transform='rotate(-90 22 %d)' text-anchor='middle'>",
        T + PH / 2, T + PH / 2);
    put_text(s, fig->y_title ? fig->y_title : "cost to target");
    put(s, " ($, log scale)</text>\n");
}

/* Lines through each series' solid points, then the Pareto front over them. */
static void draw_lines(sbuf *s, const svg_figure *fig, const axes *a)
{
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        if (ser->no_line) continue;
        put(s, "<polyline fill='none' stroke='%s' stroke-width='1.6'%s points='", COLORS[j % 10],
            dash_of(ser->dash));
        for (size_t i = 0; i < ser->n; i++)
            if (drawable(ser->t[i], ser->c[i]) && !(ser->hollow && ser->hollow[i]))
                put(s, "%.1f,%.1f ", px(a, ser->t[i]), py(a, ser->c[i]));
        put(s, "'/>\n");
    }
    if (fig->front && fig->front->n) {
        put(s, "<polyline class='front' fill='none' stroke='black' stroke-width='1' "
                "stroke-dasharray='4 3' stroke-opacity='0.85' points='");
        for (size_t i = 0; i < fig->front->n; i++)
            if (drawable(fig->front->t[i], fig->front->c[i]))
                put(s, "%.1f,%.1f ", px(a, fig->front->t[i]), py(a, fig->front->c[i]));
        put(s, "'/>\n");
    }
}

/* The choice and the outcome with their labels (kept inside the plot), then the markers:
 * K labels keep clear of all of them. */
static void draw_marks(sbuf *s, const svg_figure *fig, const axes *a)
{
    boxes lab = {0};
    const char *mark_text = fig->mark_label ? fig->mark_label : "chosen";
    char act_text[96];
    double mx = 0, my = 0, ax = 0, ay = 0, mlx = 0, mly = 0, alx = 0, aly = 0;
    int mark_end = 0, act_end = 0;
    if (fig->has_mark && drawable(fig->mark_t, fig->mark_c)) {
        mx = px(a, fig->mark_t), my = py(a, fig->mark_c);
        box_add(&lab, mx - 9, my - 9, mx + 9, my + 9);
        double w = 6.5 * (double)strlen(mark_text);
        mark_end = mx + 11 + w > W - R;
        mlx = mark_end ? mx - 11 : mx + 11, mly = my - 11 < T + 12 ? my + 22 : my - 11;
        box_add(&lab, mark_end ? mlx - w : mlx, mly - 11, mark_end ? mlx : mlx + w, mly + 2);
    }
    if (fig->has_actual && drawable(fig->actual_t, fig->actual_c)) {
        char t[32], c[32];
        scv_fmt_time(fig->actual_t, t, sizeof t);
        scv_fmt_usd(fig->actual_c, c, sizeof c);
        snprintf(act_text, sizeof act_text, "actual: %s, %s", t, c);
        ax = px(a, fig->actual_t), ay = py(a, fig->actual_c);
        box_add(&lab, ax - 8, ay - 8, ax + 8, ay + 8);
        double w = 6.5 * (double)strlen(act_text);
        act_end = ax + 10 + w > W - R;
        alx = act_end ? ax - 10 : ax + 10, aly = ay + 16 > H - BOT - 4 ? ay - 10 : ay + 16;
        box_add(&lab, act_end ? alx - w : alx, aly - 11, act_end ? alx : alx + w, aly + 2);
    }
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        for (size_t i = 0; i < ser->n; i++)
            if (drawable(ser->t[i], ser->c[i])) {
                double x = px(a, ser->t[i]), y = py(a, ser->c[i]);
                marker(s, x, y, COLORS[j % 10], ser->hollow && ser->hollow[i]);
                box_add(&lab, x - 3.5, y - 3.5, x + 3.5, y + 3.5);
            }
    }
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        for (size_t i = 0; ser->k && i < ser->n; i++)
            if (drawable(ser->t[i], ser->c[i]))
                k_label(s, &lab, px(a, ser->t[i]), py(a, ser->c[i]), ser->k[i], COLORS[j % 10]);
    }
    if (fig->has_mark && drawable(fig->mark_t, fig->mark_c)) {
        put(s, "<circle class='chosen' cx='%.1f' cy='%.1f' r='8' fill='none' stroke='red' stroke-width='2.5'/>\n", mx, my);
        put(s, "<text x='%.1f' y='%.1f' font-size='12' fill='#b00'%s>", mlx, mly,
            mark_end ? " text-anchor='end'" : "");
        put_text(s, mark_text);
        put(s, "</text>\n");
    }
    if (fig->has_actual && drawable(fig->actual_t, fig->actual_c)) {
        diamond(s, ax, ay, 7, "actual");
        put(s, "<text class='actual-label' x='%.1f' y='%.1f' font-size='12'%s>%s</text>\n", alx, aly,
            act_end ? " text-anchor='end'" : "", act_text);
    }

    free(lab.box);
}

/* The legend: a row per series (as many as fit), the front, the choice, the outcome, the
 * hollow points' meaning and the K labels'. */
static void draw_legend(sbuf *s, const svg_figure *fig)
{
    int any_hollow = 0, any_k = 0;
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        any_k |= ser->k != NULL && ser->n > 0;
        for (size_t i = 0; ser->hollow && i < ser->n; i++) any_hollow |= ser->hollow[i] != 0;
    }
    int row = 0, max_rows = PH / ROW - 1;
    size_t shown = 0;
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        if (!ser->n) continue;
        if (row >= max_rows - 5) break;
        int y = legend_y(row);
        if (!ser->no_line)
            put(s, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='2'%s/>", W - R + 10, y,
                W - R + 38, y, COLORS[j % 10], dash_of(ser->dash));
        put(s, "<circle cx='%d' cy='%d' r='3' fill='%s'/>\n", W - R + 24, y, COLORS[j % 10]);
        legend_text(s, row++, ser->label);
        shown++;
    }
    size_t nonempty = 0;
    for (size_t j = 0; j < fig->n_series; j++) nonempty += fig->series[j].n > 0;
    if (shown < nonempty) {
        char more[64];
        snprintf(more, sizeof more, "... %zu more lines", nonempty - shown);
        legend_text(s, row++, more);
    }
    if (fig->front && fig->front->n) {
        int y = legend_y(row);
        put(s, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black' stroke-width='1' stroke-dasharray='4 3'/>",
            W - R + 10, y, W - R + 38, y);
        legend_text(s, row++, "Pareto front");
    }
    if (fig->has_mark) {
        put(s, "<circle cx='%d' cy='%d' r='6' fill='none' stroke='red' stroke-width='2.5'/>", W - R + 24, legend_y(row));
        legend_text(s, row++, "chosen");
    }
    if (fig->has_actual) {
        diamond(s, W - R + 24, legend_y(row), 6, "actual-legend");
        legend_text(s, row++, "actual (measured)");
    }
    if (any_hollow) {
        put(s, "<circle cx='%d' cy='%d' r='3.5' fill='white' stroke='black' stroke-width='1.5'/>",
            W - R + 24, legend_y(row));
        legend_text(s, row++, fig->hollow_note ? fig->hollow_note : "did not reach target");
    }
    if (any_k) legend_text(s, row++, "K=n: n workers");
}

int svg_group_points(const svg_point *pts, size_t n, const int *order, size_t n_order, const char *label_prefix,
                     size_t max_series, svg_grouped *g, scv_err *err)
{
    memset(g, 0, sizeof *g);
    size_t cap = n_order < max_series ? n_order : max_series;
    g->series = calloc(cap ? cap : 1, sizeof *g->series);
    g->vals = malloc(sizeof(double) * 2 * (n ? n : 1));
    g->k = malloc(sizeof(int) * (n ? n : 1));
    g->hollow = malloc(n ? n : 1);
    if (!g->series || !g->vals || !g->k || !g->hollow) {
        svg_grouped_free(g);
        return scv_err_set(err, SCV_ENOMEM, "out of memory grouping %zu points", n);
    }
    size_t off = 0; /* points placed so far: each point is placed at most once, off <= n */
    for (size_t o = 0; o < n_order && g->n_series < cap; o++) {
        int seen = 0;
        for (size_t q = 0; q < o && !seen; q++) seen = order[q] == order[o];
        if (seen) continue; /* a repeated group would place its points again */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) m += pts[i].group == order[o];
        if (!m) continue;
        svg_series *s = &g->series[g->n_series++];
        snprintf(s->label, sizeof s->label, "%.40s%d", label_prefix, order[o]);
        s->t = g->vals + 2 * off, s->c = g->vals + 2 * off + m, s->k = g->k + off, s->hollow = g->hollow + off;
        for (size_t i = 0; i < n; i++)
            if (pts[i].group == order[o]) {
                s->k[s->n] = pts[i].k, s->t[s->n] = pts[i].t, s->c[s->n] = pts[i].c;
                g->hollow[off + s->n] = pts[i].hollow != 0;
                g->n_hollow += pts[i].hollow != 0;
                s->n++;
            }
        off += m;
    }
    return SCV_OK;
}

void svg_grouped_free(svg_grouped *g)
{
    free(g->series), free(g->vals), free(g->k), free(g->hollow);
    memset(g, 0, sizeof *g);
}

int svg_tradeoff_write(const char *path, const svg_figure *fig, scv_err *err)
{
    axes a;
    if (!fit_axes(fig, &a))
        return scv_err_set(err, SCV_EINVAL, "%s: nothing to draw (no point with a positive time and cost)", path);
    sbuf s = {0};
    draw_frame(&s, fig, &a);
    draw_lines(&s, fig, &a);
    draw_marks(&s, fig, &a);
    draw_legend(&s, fig);
    put(&s, "</svg>\n");
    if (!s.buf || s.oom) {
        free(s.buf);
        return scv_err_set(err, SCV_ENOMEM, "out of memory writing %s", path);
    }
    scv_iov part = {s.buf, s.len};
    int rc = scv_write_atomic(path, &part, 1, err);
    free(s.buf);
    return rc;
}
