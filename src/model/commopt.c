/*
 * commopt.c - the planner's communication options as people write them: a list
 * "none,topk:10,topk:100:artopk,selsync:0.9" (`plan --compress`, a job's "compress") read
 * into scv_plan_comm values, and one option written back ("topk:100", "selsync:0.9").
 * Dense is always planned (the plan without compression is the reference): it comes first,
 * added when the list lacks it. Errors name the part at fault. Pure (libc and libm); the
 * options' communication time is the parallel model's (perf.c, scv_perf_comm_option).
 */
#include "scv.h"
#include "../core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const COLLS[] = {"auto", "allgather", "artopk", NULL};

#define EXPECTED "expected none, topk:CF[:auto|allgather|artopk] or selsync:LSSR"

/* A number that is all of s (finite, decimal: never hex), else -1. */
static int number(const char *s, double *out)
{
    return scv_parse_f64(s, out) ? -1 : 0;
}

/* One entry (NUL-terminated, not empty) into *o. */
static int parse_one(const char *part, double iter_factor, scv_plan_comm *o, scv_err *err)
{
    memset(o, 0, sizeof *o);
    char buf[96];
    if (strlen(part) >= sizeof buf) return scv_err_set(err, SCV_EINVAL, "'%.40s...': too long (%s)", part, EXPECTED);
    snprintf(buf, sizeof buf, "%s", part);
    char *arg = strchr(buf, ':');
    if (arg) *arg++ = 0;
    if (!strcmp(buf, "none") || !strcmp(buf, "dense")) {
        if (arg) return scv_err_set(err, SCV_EINVAL, "'%s': %s takes no value", part, buf);
        o->kind = SCV_PLAN_DENSE;
        o->iter_factor = 1;
        return SCV_OK;
    }
    o->iter_factor = iter_factor;
    if (!strcmp(buf, "topk")) {
        o->kind = SCV_PLAN_TOPK;
        char *coll = arg ? strchr(arg, ':') : NULL;
        if (coll) *coll++ = 0;
        if (!arg || number(arg, &o->cf))
            return scv_err_set(err, SCV_EINVAL, "'%s': expected topk:CF[:auto|allgather|artopk] with a factor CF > 1",
                               part);
        if (!(o->cf > 1)) return scv_err_set(err, SCV_EINVAL, "'%s': the factor must be > 1 (1 is dense)", part);
        if (o->cf > 1e6) return scv_err_set(err, SCV_EINVAL, "'%s': the factor must be at most 1e6 (as train's)", part);
        o->collective = SCV_COLL_AUTO;
        if (coll) {
            int i = 0;
            while (COLLS[i] && strcmp(COLLS[i], coll)) i++;
            if (!COLLS[i])
                return scv_err_set(err, SCV_EINVAL, "'%s': collective '%s': expected auto, allgather or artopk", part,
                                   coll);
            o->collective = (scv_coll_pref)i;
        }
        return SCV_OK;
    }
    if (!strcmp(buf, "selsync")) {
        o->kind = SCV_PLAN_SELSYNC;
        if (!arg || number(arg, &o->lssr))
            return scv_err_set(err, SCV_EINVAL, "'%s': expected selsync:LSSR, the share of local steps in [0, 1)",
                               part);
        if (!(o->lssr >= 0 && o->lssr < 1))
            return scv_err_set(err, SCV_EINVAL, "'%s': the share of local steps must be in [0, 1)", part);
        return SCV_OK;
    }
    return scv_err_set(err, SCV_EINVAL, "'%s': %s", part, EXPECTED);
}

int scv_plan_comm_parse(const char *list, double iter_factor, scv_plan_comm *out, size_t cap, size_t *n,
                        scv_err *err)
{
    *n = 0;
    if (!(iter_factor > 0) || !isfinite(iter_factor))
        return scv_err_set(err, SCV_EINVAL, "iterations relative to dense %g: expected a factor > 0", iter_factor);
    if (!list || !list[0]) return scv_err_set(err, SCV_EINVAL, "'': no option (%s)", EXPECTED);
    if (cap < 2) return scv_err_set(err, SCV_EINVAL, "room for at least 2 options is needed");
    scv_plan_comm dense = {.kind = SCV_PLAN_DENSE, .iter_factor = 1};
    out[(*n)++] = dense; /* dense first, always */
    int named_dense = 0;
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char part[96];
        if (len == 0) return scv_err_set(err, SCV_EINVAL, "'%.200s': an empty entry (%s)", list, EXPECTED);
        snprintf(part, sizeof part, "%.*s", (int)(len < sizeof part ? len : sizeof part - 1), p);
        if (len >= sizeof part) return scv_err_set(err, SCV_EINVAL, "'%.40s...': too long (%s)", part, EXPECTED);
        scv_plan_comm o;
        int rc = parse_one(part, iter_factor, &o, err);
        if (rc) return rc;
        char a[64], b[64];
        scv_plan_comm_format(&o, a, sizeof a);
        int dup = o.kind == SCV_PLAN_DENSE && named_dense;
        for (size_t i = 1; i < *n && !dup; i++) {
            scv_plan_comm_format(&out[i], b, sizeof b);
            dup = !strcmp(a, b);
        }
        if (dup) return scv_err_set(err, SCV_EINVAL, "'%s': named twice (as %s)", part, a);
        if (o.kind == SCV_PLAN_DENSE) named_dense = 1;
        else if (*n == cap)
            return scv_err_set(err, SCV_EINVAL, "'%s': an option too many (at most %zu besides dense)", part, cap - 1);
        else
            out[(*n)++] = o;
        if (!end) break;
        p = end + 1;
    }
    return SCV_OK;
}

int scv_plan_comm_format(const scv_plan_comm *o, char *buf, size_t cap)
{
    switch (o ? o->kind : SCV_PLAN_DENSE) {
    case SCV_PLAN_TOPK:
        if (o->collective == SCV_COLL_ALLGATHER || o->collective == SCV_COLL_ARTOPK)
            return snprintf(buf, cap, "topk:%.6g:%s", o->cf, COLLS[o->collective]);
        return snprintf(buf, cap, "topk:%.6g", o->cf);
    case SCV_PLAN_SELSYNC: return snprintf(buf, cap, "selsync:%.6g", o->lssr);
    case SCV_PLAN_DENSE: break;
    }
    return snprintf(buf, cap, "dense");
}
