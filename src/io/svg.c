/*
 * svg.c - cost-time trade-off figures (see svg.h). Written atomically.
 */
#define _POSIX_C_SOURCE 200809L
#include "svg.h"
#include "../core/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 900, H = 600, L = 90, R = 190, T = 50, BOT = 70 };

typedef struct {
    double lx0, lx1, ly0, ly1;
} axes;

static double px(const axes *a, double t) { return L + (log10(t) - a->lx0) / (a->lx1 - a->lx0) * (W - L - R); }
static double py(const axes *a, double c) { return H - BOT - (log10(c) - a->ly0) / (a->ly1 - a->ly0) * (H - T - BOT); }

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

static void ticks(sbuf *s, const axes *a, int xaxis, double scale, const char *unit)
{
    double lo = xaxis ? a->lx0 : a->ly0, hi = xaxis ? a->lx1 : a->ly1;
    for (int e = (int)floor(lo); e <= (int)ceil(hi); e++)
        for (int m = 1; m <= 5; m += (m == 1 ? 1 : 3)) {
            double v = m * pow(10, e), lv = log10(v);
            if (lv < lo - 1e-9 || lv > hi + 1e-9) continue;
            double shown = v / scale;
            char lab[32];
            snprintf(lab, sizeof lab, shown >= 100 ? "%.0f%s" : shown >= 1 ? "%.3g%s" : "%.2g%s", shown, unit);
            if (xaxis) {
                double x = px(a, v);
                put(s, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#ddd'/>\n", x, T, x, H - BOT);
                put(s, "<text x='%.1f' y='%d' text-anchor='middle' font-size='12'>%s</text>\n", x, H - BOT + 18, lab);
            } else {
                double y = py(a, v);
                put(s, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>\n", L, y, W - R, y);
                put(s, "<text x='%d' y='%.1f' text-anchor='end' font-size='12'>%s</text>\n", L - 6, y + 4, lab);
            }
        }
}

static void extend(axes *a, const svg_series *s)
{
    for (size_t i = 0; s && i < s->n; i++) {
        if (!(s->t[i] > 0) || !(s->c[i] > 0)) continue;
        a->lx0 = fmin(a->lx0, log10(s->t[i]));
        a->lx1 = fmax(a->lx1, log10(s->t[i]));
        a->ly0 = fmin(a->ly0, log10(s->c[i]));
        a->ly1 = fmax(a->ly1, log10(s->c[i]));
    }
}

static void legend(sbuf *s, int row, const char *color, const char *dash, const char *label)
{
    int y = T + 10 + 18 * row;
    put(s, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='2'%s/>"
           "<text x='%d' y='%d' font-size='12'>%s</text>\n",
        W - R + 12, y, W - R + 34, y, color, dash, W - R + 40, y + 4, label);
}

int svg_tradeoff_write(const char *path, const svg_figure *fig, scv_err *err)
{
    axes a = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (size_t i = 0; i < fig->n_series; i++) extend(&a, &fig->series[i]);
    extend(&a, fig->front);
    if (!isfinite(a.lx0)) return scv_err_set(err, SCV_EINVAL, "%s: nothing to draw", path);
    double padx = fmax(0.05, 0.05 * (a.lx1 - a.lx0)), pady = fmax(0.05, 0.05 * (a.ly1 - a.ly0));
    a.lx0 -= padx, a.lx1 += padx, a.ly0 -= pady, a.ly1 += pady;
    double tscale = a.lx1 > log10(7200) ? 3600 : a.lx1 > log10(300) ? 60 : 1;
    sbuf s = {0};
    put(&s, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>\n", W, H);
    put(&s, "<rect width='100%%' height='100%%' fill='white'/>\n");
    put(&s, "<text x='%d' y='28' font-size='16'>%s</text>\n", L, fig->title);
    ticks(&s, &a, 1, tscale, tscale == 3600 ? " h" : tscale == 60 ? " min" : " s");
    ticks(&s, &a, 0, 1, "");
    put(&s, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='black'/>\n", L, T, W - L - R, H - T - BOT);
    put(&s, "<text x='%d' y='%d' text-anchor='middle' font-size='13'>time to target (%s, log)</text>\n",
        L + (W - L - R) / 2, H - 22, tscale == 3600 ? "hours" : tscale == 60 ? "minutes" : "seconds");
    put(&s, "<text x='22' y='%d' font-size='13' transform='rotate(-90 22 %d)' text-anchor='middle'>cost ($, log)</text>\n",
        T + (H - T - BOT) / 2, T + (H - T - BOT) / 2);
    static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    int row = 0;
    for (size_t j = 0; j < fig->n_series; j++) {
        const svg_series *ser = &fig->series[j];
        const char *col = colors[j % 10];
        put(&s, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='", col);
        for (size_t i = 0; i < ser->n; i++) put(&s, "%.1f,%.1f ", px(&a, ser->t[i]), py(&a, ser->c[i]));
        put(&s, "'/>\n");
        for (size_t i = 0; i < ser->n; i++) {
            put(&s, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='%s'/>\n", px(&a, ser->t[i]), py(&a, ser->c[i]), col);
            if (ser->k)
                put(&s, "<text x='%.1f' y='%.1f' font-size='10' fill='%s'>K=%d</text>\n", px(&a, ser->t[i]) + 4,
                    py(&a, ser->c[i]) - 4, col, ser->k[i]);
        }
        legend(&s, row++, col, "", ser->label);
    }
    if (fig->front) {
        put(&s, "<polyline fill='none' stroke='black' stroke-width='2.5' stroke-dasharray='6 3' points='");
        for (size_t i = 0; i < fig->front->n; i++)
            put(&s, "%.1f,%.1f ", px(&a, fig->front->t[i]), py(&a, fig->front->c[i]));
        put(&s, "'/>\n");
        legend(&s, row++, "black", " stroke-dasharray='6 3'", "Pareto front");
    }
    if (fig->has_mark) {
        double cx = px(&a, fig->mark_t), cy = py(&a, fig->mark_c);
        put(&s, "<circle cx='%.1f' cy='%.1f' r='7' fill='red' stroke='black'/>\n", cx, cy);
        put(&s, "<text x='%.1f' y='%.1f' font-size='12'>%s</text>\n", cx + 10, cy - 10, fig->mark_label);
        put(&s, "<circle cx='%d' cy='%d' r='6' fill='red' stroke='black'/><text x='%d' y='%d' font-size='12'>chosen</text>\n",
            W - R + 23, T + 10 + 18 * row, W - R + 40, T + 14 + 18 * row);
    }
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
