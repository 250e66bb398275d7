/*
 * mix.c - mixed clusters for the planner: a spec "TYPE:COUNT[,TYPE:COUNT...]" (the syntax
 * of `scavenger cluster up --vm`; COUNT defaults to 1) read against the price catalog into
 * a scv_vm_mix, and a mix written back for people as "c5.xlarge:2+c6i.4xlarge:1". A type
 * named twice has its counts added. Errors name the part of the spec at fault. Pure (libc).
 */
#include "scv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scv_vm_mix_parse(const scv_catalog *c, const char *spec, scv_vm_mix *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !spec[0])
        return scv_err_set(err, SCV_EINVAL, "mix '': no VM type (expected TYPE:COUNT[,TYPE:COUNT...])");
    long total = 0;
    const char *p = spec;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char part[160];
        if (len == 0)
            return scv_err_set(err, SCV_EINVAL, "mix '%.200s': an empty entry (expected TYPE:COUNT[,TYPE:COUNT...])",
                               spec);
        if (len >= sizeof part)
            return scv_err_set(err, SCV_EINVAL, "mix '%.200s': entry '%.40s...' is too long", spec, p);
        memcpy(part, p, len);
        part[len] = 0;
        char *colon = strrchr(part, ':');
        long count = 1;
        if (colon) {
            *colon = 0;
            char *e = NULL;
            errno = 0;
            count = strtol(colon + 1, &e, 10);
            if (!colon[1] || *e || errno || count < 1 || count > SCV_MAX_WORKERS)
                return scv_err_set(err, SCV_EINVAL, "mix '%.200s': count '%s' of %s: expected an integer in 1..%d",
                                   spec, colon + 1, part[0] ? part : "(no type)", SCV_MAX_WORKERS);
        }
        if (!part[0]) return scv_err_set(err, SCV_EINVAL, "mix '%.200s': an entry without a VM type", spec);
        const scv_vm_type *v = scv_catalog_find(c, part);
        if (!v) return scv_err_set(err, SCV_ENOTFOUND, "mix '%.200s': '%s' is not a VM type of the catalog", spec, part);
        int vi = (int)(v - c->vms), i = 0;
        while (i < out->n && out->vm[i] != vi) i++;
        if (i == out->n) {
            if (out->n == SCV_MIX_MAX_TYPES)
                return scv_err_set(err, SCV_EINVAL, "mix '%.200s': '%s' is a VM type too many (at most %d types)",
                                   spec, part, SCV_MIX_MAX_TYPES);
            out->vm[out->n++] = vi;
        }
        total += count;
        if (total > SCV_MAX_WORKERS)
            return scv_err_set(err, SCV_EINVAL, "mix '%.200s': %ld workers in all by %s, at most %d", spec, total,
                               part, SCV_MAX_WORKERS);
        out->count[i] += (int)count;
        if (!end) break;
        p = end + 1;
    }
    return SCV_OK;
}

int scv_vm_mix_format(const scv_catalog *c, const scv_vm_mix *m, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < m->n && i < SCV_MIX_MAX_TYPES; i++) {
        const char *name = m->vm[i] >= 0 && (size_t)m->vm[i] < c->n ? c->vms[m->vm[i]].name : "?";
        int w = snprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, "%s%s:%d", i ? "+" : "", name,
                         m->count[i]);
        if (w > 0) at += (size_t)w;
    }
    return (int)at;
}

int scv_vm_mix_workers(const scv_vm_mix *m)
{
    int k = 0;
    for (int i = 0; i < m->n && i < SCV_MIX_MAX_TYPES; i++) k += m->count[i];
    return k;
}
