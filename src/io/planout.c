/*
 * planout.c - how plans are shown: times and dollars formatted for people, the trade-off
 * table rows, the JSON of a plan point and the trade-off figure of a plan. `plan`, `run`
 * and the run reports all print through these, so a figure reads the same everywhere.
 * A mixed cluster's point (mix_types.n > 0) is named by its mix ("c5.xlarge:2+c6i.4xlarge:1")
 * with its per-type batches; in the figure each mix is one line across B. A point planned
 * under a communication option carries it: a "comm" column ("dense", "topk:100",
 * "selsync:0.9") in tables of plans with options, a "comm" object in its JSON (saying that
 * its iterations are assumed, not measured), and its own lines in the figure.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "../model/model.h"
#include "io.h"
#include "svg.h"
#include "json_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scv_fmt_time(double s, char *b, size_t cap)
{
    if (!isfinite(s)) snprintf(b, cap, "-");
    else if (s < 0.1) snprintf(b, cap, "%.1f ms", 1e3 * s);
    else if (s < 10) snprintf(b, cap, "%.2f s", s);
    else if (s < 120) snprintf(b, cap, "%.1f s", s);
    else if (s < 7200) snprintf(b, cap, "%.1f min", s / 60);
    else snprintf(b, cap, "%.2f h", s / 3600);
}

/* scv_fmt_usd (dollars for people) is model/cost.c's: the planner's messages use it too */

void scv_plan_print_header_ex(FILE *f, int with_comm)
{
    if (with_comm)
        fprintf(f, "   %-26s %-16s %4s %6s %7s %10s %10s %12s %10s  %s\n", "vm", "comm", "K", "B", "b", "t_iter ms",
                "iters", "time", "cost", "band");
    else
        fprintf(f, "   %-26s %4s %6s %7s %10s %10s %12s %10s  %s\n", "vm", "K", "B", "b", "t_iter ms", "iters",
                "time", "cost", "band");
}

void scv_plan_print_header(FILE *f) { scv_plan_print_header_ex(f, 0); }

/* The VM type's name, or a mix's "type:count+type:count". */
static const char *point_vm(const scv_catalog *cat, const scv_plan_point *p, char *buf, size_t cap)
{
    if (p->mix_types.n <= 0) return cat->vms[p->vm].name;
    scv_vm_mix_format(cat, &p->mix_types, buf, cap);
    return buf;
}

void scv_plan_print_point(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *mark)
{
    scv_plan_print_point_ex(f, cat, p, mark, 0);
}

void scv_plan_point_band(const scv_plan_point *p, char *buf, size_t cap)
{
    char lo[32], hi[32];
    if (!(p->time_lo_s > 0)) {
        snprintf(buf, cap, "t_iter +-%.1f%%", 100 * p->err_rel);
        return;
    }
    scv_fmt_time(p->time_lo_s, lo, sizeof lo);
    scv_fmt_time(p->time_hi_s, hi, sizeof hi);
    if (isfinite(p->time_hi_s)) snprintf(buf, cap, "%s-%s", lo, hi);
    else snprintf(buf, cap, "from %s", lo);
}

void scv_plan_print_point_ex(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *mark,
                             int with_comm)
{
    char t[32], c[32], vm[512], per[160] = "", comm[80] = "";
    scv_fmt_time(p->time_s, t, sizeof t);
    scv_fmt_usd(p->cost, c, sizeof c);
    for (int i = 0, at = 0; i < p->mix_types.n && i < SCV_MIX_MAX_TYPES && at < (int)sizeof per; i++)
        at += snprintf(per + at, sizeof per - (size_t)at, "%s%.1f", i ? "/" : "  (b per type ", p->mix_batch[i]);
    if (per[0]) snprintf(per + strlen(per), sizeof per - strlen(per), ")");
    if (with_comm) { /* the option, in its column */
        char name[64];
        scv_plan_comm_format(&p->comm_opt, name, sizeof name);
        snprintf(comm, sizeof comm, " %-16s", name);
    }
    char band[80];
    scv_plan_point_band(p, band, sizeof band);
    fprintf(f, "%-2s %-26s%s %4d %6d %7.1f %10.2f %10.0f %12s %10s  %s%s%s\n", mark, point_vm(cat, p, vm, sizeof vm),
            comm, p->workers, p->batch, (double)p->batch / p->workers, p->t_iter * 1e3, p->iterations, t, c, band, per,
            p->extrapolated ? "  (extrapolated)" : "");
}

void scv_plan_point_json(FILE *f, const scv_catalog *cat, const scv_plan_point *p)
{
    scv_plan_point_json_how(f, cat, p, NULL);
}

void scv_plan_point_json_how(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *how)
{
    char vm[512];
    fputs("{\"vm\":", f);
    scv_json_str(f, point_vm(cat, p, vm, sizeof vm));
    if (p->mix_types.n > 0) { /* a mix: its types, counts and per-worker batches */
        fputs(",\"mix\":[", f);
        for (int i = 0; i < p->mix_types.n && i < SCV_MIX_MAX_TYPES; i++) {
            fputs(i ? ",{\"vm\":" : "{\"vm\":", f);
            scv_json_str(f, cat->vms[p->mix_types.vm[i]].name);
            fprintf(f, ",\"count\":%d,\"batch\":%.6g}", p->mix_types.count[i], p->mix_batch[i]);
        }
        fprintf(f, "],\"comm_scale\":%.6g", p->comm_scale);
    }
    if (p->comm >= 0 || p->comm_opt.kind != SCV_PLAN_DENSE) { /* planned with communication options */
        const scv_plan_comm *o = &p->comm_opt;
        char name[64];
        scv_plan_comm_format(o, name, sizeof name);
        fprintf(f, ",\"comm\":{\"name\":\"%s\",\"kind\":\"%s\"", name,
                o->kind == SCV_PLAN_TOPK ? "topk" : o->kind == SCV_PLAN_SELSYNC ? "selsync" : "dense");
        if (o->kind == SCV_PLAN_TOPK)
            fprintf(f, ",\"cf\":%.6g,\"collective\":\"%s\",\"collective_asked\":\"%s\"", o->cf,
                    scv_sparse_name(p->comm_coll),
                    o->collective == SCV_COLL_ALLGATHER ? "allgather" : o->collective == SCV_COLL_ARTOPK ? "artopk" : "auto");
        if (o->kind == SCV_PLAN_SELSYNC) fprintf(f, ",\"lssr\":%.6g", o->lssr);
        if (o->t_iter_scale > 0) fprintf(f, ",\"t_iter_scale\":%.6g", o->t_iter_scale); /* a run's correction */
        fprintf(f, ",\"t_comm\":%.6g,\"iter_factor\":%.6g,\"assumed\":%s", p->t_comm, o->iter_factor,
                o->kind != SCV_PLAN_DENSE ? "true" : "false");
        if (o->kind != SCV_PLAN_DENSE)
            fprintf(f, ",\"note\":\"iterations assumed x%.6g%s of dense: not measured\"", o->iter_factor,
                    o->iter_factor == floor(o->iter_factor) && fabs(o->iter_factor) < 1e6 ? ".0" : "");
        fputc('}', f);
    }
    fprintf(f,
            ",\"workers\":%d,\"batch\":%d,\"t_iter\":%.6g,\"iterations\":%.6g,"
            "\"time_s\":%.6g,\"cost\":%.6g,\"price_hr\":%.6g,\"err_rel\":%.4g,\"extrapolated\":%s,"
            "\"how\":\"%s\",\"pareto\":%s",
            p->workers, p->batch, p->t_iter, p->iterations, p->time_s,
            p->cost, p->price_hr, p->err_rel, p->extrapolated ? "true" : "false", how ? how : scv_extrap_desc(p->extrap),
            p->pareto ? "true" : "false");
    if (p->idle_s > 0) fprintf(f, ",\"idle_s\":%.6g", p->idle_s); /* (of time_s: the segments' start-ups) */
    if (p->time_lo_s > 0) { /* the target's band (scv_estimate_price); its top absent: never reached */
        fprintf(f, ",\"time_lo_s\":%.6g,\"cost_lo\":%.6g", p->time_lo_s, p->cost_lo);
        if (isfinite(p->time_hi_s)) fprintf(f, ",\"time_hi_s\":%.6g,\"cost_hi\":%.6g", p->time_hi_s, p->cost_hi);
    }
    fputc('}', f);
}

/* ---- the plan's figure ---- */

enum { MAX_LINES = 10 };

/* A line is (vm, batch, comm): a VM type's points at one B across K; or (-1 - mix, 0, comm):
 * a mix's points (one K) across B; each communication option its own. */
typedef struct {
    int vm, batch, comm;
    size_t on_front, first; /* front points of this line; its first point's index */
} line_key;

static void line_of(const scv_plan_point *p, int *vm, int *batch, int *comm)
{
    if (p->mix_types.n > 0) *vm = -1 - (p->mix > 0 ? p->mix : 0), *batch = 0;
    else *vm = p->vm, *batch = p->batch;
    *comm = p->comm_opt.kind == SCV_PLAN_DENSE ? -1 : p->comm;
}

typedef struct {
    int k;
    double t, c;
} line_pt;

static int cmp_line_pt(const void *a, const void *b)
{
    const line_pt *x = a, *y = b;
    return (x->k > y->k) - (x->k < y->k);
}

/* Index of (vm, batch, comm) in keys[0..n), or n. */
static size_t find_key(const line_key *keys, size_t n, int vm, int batch, int comm)
{
    size_t i = 0;
    while (i < n && !(keys[i].vm == vm && keys[i].batch == batch && keys[i].comm == comm)) i++;
    return i;
}

/* Sorts the chosen lines by (VM type in order of appearance, B) so the legend is grouped. */
static void sort_lines(line_key *sel, size_t n, const int *vm_order, size_t n_vm)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            size_t a = 0, b = 0;
            while (a < n_vm && vm_order[a] != sel[j - 1].vm) a++;
            while (b < n_vm && vm_order[b] != sel[j].vm) b++;
            if (a < b || (a == b && sel[j - 1].batch <= sel[j].batch)) break;
            line_key t = sel[j];
            sel[j] = sel[j - 1];
            sel[j - 1] = t;
        }
}

int scv_plan_svg_write(const char *path, const scv_catalog *cat, const scv_plan_result *res,
                       double actual_time_s, double actual_cost, scv_err *err)
{
    return scv_plan_svg_write_nominal(path, cat, res, actual_time_s, actual_cost, 0, 0, err);
}

int scv_plan_svg_write_nominal(const char *path, const scv_catalog *cat, const scv_plan_result *res,
                               double actual_time_s, double actual_cost, double nominal_epochs, int nominal_batch,
                               scv_err *err)
{
    if (!res->n_points || res->chosen < 0)
        return scv_err_set(err, SCV_EINVAL, "%s: the plan has no configuration to draw", path);
    const scv_plan_point *pts = res->points, *ch = &pts[res->chosen];
    /* Lines are (VM type, B) pairs across K: the chosen one, then those of the Pareto front
     * (most front points first), so every VM type on the front is drawn; the remaining of
     * MAX_LINES go to other batches of the chosen type, spread over its range. */
    line_key *keys = malloc(sizeof(line_key) * res->n_points);
    line_pt *lp = malloc(sizeof(line_pt) * res->n_points);
    double *buf = malloc(sizeof(double) * 2 * (res->n_points + res->n_front));
    int *kbuf = malloc(sizeof(int) * res->n_points);
    if (!keys || !lp || !buf || !kbuf) {
        free(keys), free(lp), free(buf), free(kbuf);
        return scv_err_set(err, SCV_ENOMEM, "out of memory drawing %s", path);
    }
    size_t nk = 0;
    int lv, lb, lc, cv, cb, cc, any_mix = 0, any_comm = 0;
    for (size_t i = 0; i < res->n_points; i++) {
        line_of(&pts[i], &lv, &lb, &lc);
        any_comm |= lc >= 0;
        size_t j = find_key(keys, nk, lv, lb, lc);
        if (j == nk) keys[nk++] = (line_key){lv, lb, lc, 0, i};
    }
    for (size_t f = 0; f < res->n_front; f++) {
        line_of(&pts[res->front[f]], &lv, &lb, &lc);
        keys[find_key(keys, nk, lv, lb, lc)].on_front++;
    }
    line_key sel[MAX_LINES];
    size_t ns = 0;
    line_of(ch, &cv, &cb, &cc);
    sel[ns++] = keys[find_key(keys, nk, cv, cb, cc)];
    /* every planned VM type (or mix) is drawn: first a line of each type the chosen one is
     * not of (its line with the most front points, else the one holding its cheapest
     * point), the types on the front first; the types left without a line (more than
     * MAX_LINES) are one series of points ("other VM types") */
    size_t n_types = 0;
    for (size_t i = 0; i < nk; i++) {
        size_t j = 0;
        while (j < i && keys[j].vm != keys[i].vm) j++;
        n_types += j == i;
    }
    for (int pass = 0; pass < 2 && ns < MAX_LINES; pass++)
        for (size_t i = 0; i < nk && ns < MAX_LINES; i++) {
            int v = keys[i].vm, seen = 0;
            for (size_t l = 0; l < ns; l++) seen |= sel[l].vm == v;
            if (seen) continue;
            size_t best = nk, cheap = nk;
            for (size_t k = 0; k < nk; k++)
                if (keys[k].vm == v && keys[k].on_front && (best == nk || keys[k].on_front > keys[best].on_front))
                    best = k;
            if (pass == 0 && best == nk) continue; /* types off the front: the second pass */
            if (best == nk) {
                for (size_t q = 0; q < res->n_points; q++) {
                    line_of(&pts[q], &lv, &lb, &lc);
                    if (lv == v && (cheap == nk || pts[q].cost < pts[cheap].cost)) cheap = q;
                }
                line_of(&pts[cheap], &lv, &lb, &lc);
                best = find_key(keys, nk, lv, lb, lc);
            }
            sel[ns++] = keys[best];
        }
    while (ns < MAX_LINES) { /* front lines, most front points first */
        size_t best = nk;
        for (size_t i = 0; i < nk; i++) {
            if (!keys[i].on_front || find_key(sel, ns, keys[i].vm, keys[i].batch, keys[i].comm) < ns) continue;
            if (best == nk || keys[i].on_front > keys[best].on_front) best = i;
        }
        if (best == nk) break;
        sel[ns++] = keys[best];
    }
    size_t n_rest = 0; /* other batches of the chosen type, ascending (reuses lp's k) */
    for (size_t i = 0; i < nk; i++)
        if (keys[i].vm == cv && keys[i].comm == cc && find_key(sel, ns, keys[i].vm, keys[i].batch, cc) == ns)
            lp[n_rest++].k = keys[i].batch;
    qsort(lp, n_rest, sizeof *lp, cmp_line_pt);
    size_t slots = MAX_LINES - ns;
    for (size_t i = 0; i < slots && i < n_rest; i++) {
        size_t j = n_rest <= slots ? i : slots == 1 ? n_rest / 2 : i * (n_rest - 1) / (slots - 1);
        sel[ns++] = keys[find_key(keys, nk, cv, lp[j].k, cc)];
    }
    /* VM types in order: the chosen one first, then as they appear on the front */
    int vm_order[MAX_LINES];
    size_t n_vm = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t j = 0;
        while (j < n_vm && vm_order[j] != sel[i].vm) j++;
        if (j == n_vm) vm_order[n_vm++] = sel[i].vm;
    }
    sort_lines(sel, ns, vm_order, n_vm);

    svg_series ser[MAX_LINES + 1];
    memset(ser, 0, sizeof ser);
    double *p = buf;
    int *kp = kbuf;
    for (size_t l = 0; l < ns; l++) {
        svg_series *sr = &ser[l];
        size_t n = 0, first = sel[l].first;
        int is_mix = sel[l].vm < 0;
        for (size_t i = 0; i < res->n_points; i++) {
            line_of(&pts[i], &lv, &lb, &lc);
            if (lv == sel[l].vm && lb == sel[l].batch && lc == sel[l].comm) /* a mix's line runs across B */
                lp[n++] = (line_pt){is_mix ? pts[i].batch : pts[i].workers, pts[i].time_s, pts[i].cost};
        }
        qsort(lp, n, sizeof *lp, cmp_line_pt);
        char vm[512];
        if (is_mix) {
            any_mix = 1;
            snprintf(sr->label, sizeof sr->label, "%.52s K=%d", point_vm(cat, &pts[first], vm, sizeof vm),
                     pts[first].workers);
        } else if (n_vm > 1)
            snprintf(sr->label, sizeof sr->label, "%.48s, B=%d", cat->vms[sel[l].vm].name, sel[l].batch);
        else snprintf(sr->label, sizeof sr->label, "B=%d", sel[l].batch);
        if (any_comm) { /* the line's communication option */
            char name[64];
            size_t len = strlen(sr->label);
            scv_plan_comm_format(&pts[first].comm_opt, name, sizeof name);
            snprintf(sr->label + len, sizeof sr->label - len, " %.20s", name);
        }
        sr->t = p, sr->c = p + n, sr->k = is_mix ? NULL : kp, sr->n = n;
        for (size_t i = 0; i < n; i++) {
            sr->t[i] = lp[i].t, sr->c[i] = lp[i].c;
            if (!is_mix) sr->k[i] = lp[i].k;
        }
        size_t d = 0;
        while (d < n_vm && vm_order[d] != sel[l].vm) d++;
        sr->dash = (int)d;
        p += 2 * n;
        kp += n;
    }
    size_t n_other = 0, n_other_types = 0; /* the points of the types without a line */
    for (size_t i = 0; i < res->n_points; i++) {
        line_of(&pts[i], &lv, &lb, &lc);
        size_t l = 0;
        while (l < ns && sel[l].vm != lv) l++;
        if (l < ns) continue;
        p[n_other] = pts[i].time_s, lp[n_other++].c = pts[i].cost;
        size_t j = 0;
        while (j < i) {
            int v2, b2, c2;
            line_of(&pts[j], &v2, &b2, &c2);
            if (v2 == lv) break;
            j++;
        }
        n_other_types += j == i;
    }
    size_t n_series = ns;
    if (n_other) {
        svg_series *sr = &ser[n_series++];
        sr->t = p, sr->c = p + n_other, sr->n = n_other, sr->no_line = 1;
        for (size_t i = 0; i < n_other; i++) sr->c[i] = lp[i].c;
        snprintf(sr->label, sizeof sr->label, "%zu other VM types: points", n_other_types);
        p += 2 * n_other;
    }
    n_vm = n_types; /* what the title and the mark count: every planned type */
    svg_series front = {.n = res->n_front, .t = p, .c = p + res->n_front};
    for (size_t i = 0; i < res->n_front; i++)
        front.t[i] = pts[res->front[i]].time_s, front.c[i] = pts[res->front[i]].cost;
    char title[320], mark[160], chbuf[512], nom[96] = "", xt[96], yt[64];
    const char *chv = point_vm(cat, ch, chbuf, sizeof chbuf);
    /* nominal times are not predictions: the figure says what they are */
    if (nominal_epochs > 0) snprintf(nom, sizeof nom, "%.3g epochs at B=%d assumed", nominal_epochs, nominal_batch);
    const char *what = nom[0] ? "Nominal" : "Predicted";
    if (n_vm > 1)
        snprintf(title, sizeof title, "%s cost against time to target (%s%s%zu VM types%s; "
                 "lines: VM type and B across K%s)", what, nom, nom[0] ? "; " : "", n_vm, any_mix ? " or mixes" : "",
                 any_mix ? ", a mix across B" : "");
    else
        snprintf(title, sizeof title, "%s cost against time to target (%s%s%.100s; lines: %s)", what, nom,
                 nom[0] ? "; " : "", chv, any_mix ? "the mix across B" : "B across K");
    if (nom[0]) {
        snprintf(xt, sizeof xt, "nominal time to target (%.3g epochs assumed)", nominal_epochs);
        snprintf(yt, sizeof yt, "nominal cost to target");
    } else {
        snprintf(xt, sizeof xt, "predicted time to target");
        snprintf(yt, sizeof yt, "predicted cost to target");
    }
    char chc[64] = "";
    if (any_comm) {
        chc[0] = ',', chc[1] = ' ';
        scv_plan_comm_format(&ch->comm_opt, chc + 2, sizeof chc - 2);
    }
    snprintf(mark, sizeof mark, "chosen: %.100s%sK=%d, B=%d%.24s", n_vm > 1 ? chv : "",
             n_vm > 1 ? ", " : "", ch->workers, ch->batch, chc);
    svg_figure fig = {.title = title, .x_title = xt, .y_title = yt, .series = ser, .n_series = n_series,
                      .front = &front, .has_mark = 1, .mark_t = ch->time_s, .mark_c = ch->cost,
                      .mark_label = mark,
                      .has_actual = actual_time_s > 0 && actual_cost > 0,
                      .actual_t = actual_time_s, .actual_c = actual_cost};
    int rc = svg_tradeoff_write(path, &fig, err);
    free(keys), free(lp), free(buf), free(kbuf);
    return rc;
}
