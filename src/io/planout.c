/*
 * planout.c - how plans are shown: times and dollars formatted for people, the trade-off
 * table rows, the JSON of a plan point and the trade-off figure of a plan. `plan`, `run`
 * and the run reports all print through these, so a figure reads the same everywhere.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scv_fmt_time(double s, char *b, size_t cap)
{
    if (!isfinite(s)) snprintf(b, cap, "-");
    else if (s < 120) snprintf(b, cap, "%.1f s", s);
    else if (s < 7200) snprintf(b, cap, "%.1f min", s / 60);
    else snprintf(b, cap, "%.2f h", s / 3600);
}

void scv_fmt_usd(double usd, char *b, size_t cap)
{
    if (!isfinite(usd)) snprintf(b, cap, "-");
    else if (fabs(usd) >= 1 || usd == 0) snprintf(b, cap, "$%.2f", usd);
    else snprintf(b, cap, "$%.3g", usd); /* three significant digits: $0.00262 */
}

void scv_plan_print_header(FILE *f)
{
    fprintf(f, "   %-26s %4s %6s %7s %10s %10s %12s %10s  %s\n", "vm", "K", "B", "b", "t_iter ms",
            "iters", "time", "cost", "band");
}

void scv_plan_print_point(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *mark)
{
    char t[32], c[32];
    scv_fmt_time(p->time_s, t, sizeof t);
    scv_fmt_usd(p->cost, c, sizeof c);
    fprintf(f, "%-2s %-26s %4d %6d %7.1f %10.2f %10.0f %12s %10s  +-%4.1f%%%s\n", mark,
            cat->vms[p->vm].name, p->workers, p->batch, (double)p->batch / p->workers,
            p->t_iter * 1e3, p->iterations, t, c, 100 * p->err_rel,
            p->extrapolated ? "  (extrapolated)" : "");
}

void scv_plan_point_json(FILE *f, const scv_catalog *cat, const scv_plan_point *p)
{
    fprintf(f,
            "{\"vm\":\"%s\",\"workers\":%d,\"batch\":%d,\"t_iter\":%.6g,\"iterations\":%.6g,"
            "\"time_s\":%.6g,\"cost\":%.6g,\"price_hr\":%.6g,\"err_rel\":%.4g,\"extrapolated\":%s,"
            "\"pareto\":%s}",
            cat->vms[p->vm].name, p->workers, p->batch, p->t_iter, p->iterations, p->time_s,
            p->cost, p->price_hr, p->err_rel, p->extrapolated ? "true" : "false",
            p->pareto ? "true" : "false");
}

int scv_plan_svg_write(const char *path, const scv_catalog *cat, const scv_plan_result *res,
                       double actual_time_s, double actual_cost, scv_err *err)
{
    const scv_plan_point *pts = res->points, *ch = &pts[res->chosen];
    /* one series per batch on the chosen VM type (points were generated in K order);
     * at most 10 batches, spread over the range */
    int batches[4096];
    size_t nb = 0;
    for (size_t i = 0; i < res->n_points && nb < 4096; i++) {
        if (pts[i].vm != ch->vm) continue;
        size_t j = 0;
        while (j < nb && batches[j] != pts[i].batch) j++;
        if (j == nb) batches[nb++] = pts[i].batch;
    }
    size_t step = nb > 10 ? (nb + 9) / 10 : 1, ns = 0;
    svg_series ser[10], front = {.n = res->n_front};
    memset(ser, 0, sizeof ser);
    double *buf = malloc(sizeof(double) * 2 * (res->n_points + res->n_front));
    if (!buf) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    double *p = buf;
    for (size_t j = 0; j < nb && ns < 10; j += step) {
        svg_series *s = &ser[ns++];
        snprintf(s->label, sizeof s->label, "B = %d", batches[j]);
        s->t = p;
        s->n = 0;
        for (size_t i = 0; i < res->n_points; i++)
            if (pts[i].vm == ch->vm && pts[i].batch == batches[j]) p[s->n++] = pts[i].time_s;
        s->c = p + s->n;
        size_t k = 0;
        for (size_t i = 0; i < res->n_points; i++)
            if (pts[i].vm == ch->vm && pts[i].batch == batches[j]) s->c[k++] = pts[i].cost;
        p += 2 * s->n;
    }
    front.t = p;
    front.c = p + res->n_front;
    for (size_t i = 0; i < res->n_front; i++)
        front.t[i] = pts[res->front[i]].time_s, front.c[i] = pts[res->front[i]].cost;
    char title[160], mark[64];
    snprintf(title, sizeof title, "Predicted cost against time to target (%s; lines: B across K)",
             cat->vms[ch->vm].name);
    snprintf(mark, sizeof mark, "chosen: K=%d, B=%d", ch->workers, ch->batch);
    svg_figure fig = {.title = title, .series = ser, .n_series = ns, .front = &front, .has_mark = 1,
                      .mark_t = ch->time_s, .mark_c = ch->cost, .mark_label = mark};
    (void)actual_time_s, (void)actual_cost; /* TODO(svg helper): plot the outcome */
    int rc = svg_tradeoff_write(path, &fig, err);
    free(buf);
    return rc;
}
