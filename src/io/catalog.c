/*
 * catalog.c - reads a VM price catalog in the format of shared/data/vm-catalog.csv:
 * a header row naming the columns (any order; unknown columns are ignored), then one row
 * per VM type. Required columns: provider, instance_type, vcpus, memory_gib,
 * ondemand_usd_per_hr; optional: gpu_count, spot_usd_per_hr_min/_max, network_gbps.
 * Fields may be double-quoted. A malformed row is an error naming its line and field;
 * a row that is not a whole VM (no vCPUs or memory, e.g. a GPU attachment) is skipped and
 * counted.
 * scv_vm_mix_parse reads a mixed cluster's spec "TYPE:COUNT[,TYPE:COUNT...]" (the syntax of
 * `scavenger cluster up --vm`; COUNT defaults to 1; a type named twice has its counts
 * added) against the catalog; its errors name the part of the spec at fault.
 * scv_vm_list_parse reads a list of VM types "a,b" or "all" (`plan --vm`, `run --vm`).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "io.h"
#include "../core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 64

/* Splits one CSV line in place; returns the field count or -1 on an unterminated quote. */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return n;
        char *out = p;
        fields[n++] = p;
        if (*p == '"') {
            char *r = p + 1;
            for (;;) {
                if (!*r) return -1;
                if (*r == '"' && r[1] == '"') *out++ = '"', r += 2;
                else if (*r == '"') { r++; break; }
                else *out++ = *r++;
            }
            p = r;
        } else {
            while (*p && *p != ',') *out++ = *p++;
        }
        int more = *p == ',';
        *out = 0;
        if (!more) return n;
        p++;
    }
}

static int col(char **hdr, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return i;
    return -1;
}

/* Parses a number field; empty gives NaN. Returns 0 when the text is not a number. */
static int num(const char *s, double *v)
{
    if (!*s) {
        *v = NAN;
        return 1;
    }
    return scv_parse_f64(s, v) == SCV_OK; /* finite and decimal: never hex */
}

void scv_catalog_free(scv_catalog *c)
{
    if (!c) return;
    free(c->vms);
    free(c);
}

const scv_vm_type *scv_catalog_find(const scv_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->vms[i].name, name)) return &c->vms[i];
    return NULL;
}

const char *scv_catalog_did_you_mean(const scv_catalog *c, const char *name, char *buf, size_t cap)
{
    if (cap) buf[0] = 0;
    const char **names = c && c->n ? malloc(sizeof(char *) * c->n) : NULL;
    if (!names || !name) return buf;
    for (size_t i = 0; i < c->n; i++) names[i] = c->vms[i].name;
    const char *b = scv_nearest_name(name, names, c->n);
    if (b) snprintf(buf, cap, " (did you mean '%s'?)", b);
    free(names);
    return buf;
}

int scv_vm_list_parse(const scv_catalog *c, const char *list, const char *option, const char *catalog_name,
                      int *out, size_t *n, scv_err *err)
{
    *n = 0;
    if (!strcmp(list, "all")) {
        for (size_t i = 0; i < c->n; i++) out[(*n)++] = (int)i;
        return SCV_OK;
    }
    char *copy = strdup(list), *save = NULL;
    if (!copy) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        const scv_vm_type *v = scv_catalog_find(c, t);
        if (!v) {
            char near[160];
            scv_catalog_did_you_mean(c, t, near, sizeof near);
            if (option[0] == '-') scv_err_set(err, SCV_ENOTFOUND, "%s %s: not a VM type of %s%s", option, t, catalog_name, near);
            else scv_err_set(err, SCV_ENOTFOUND, "field \"%s\": '%s' is not a VM type of %s%s", option, t, catalog_name, near);
            free(copy);
            return SCV_ENOTFOUND;
        }
        int idx = (int)(v - c->vms), dup = 0;
        for (size_t i = 0; i < *n; i++) dup |= out[i] == idx;
        if (!dup && *n < c->n) out[(*n)++] = idx;
    }
    free(copy);
    if (*n) return SCV_OK;
    return option[0] == '-' ? scv_err_set(err, SCV_EINVAL, "%s '%s': expected VM types a,b,... or all", option, list)
                            : scv_err_set(err, SCV_EINVAL, "field \"%s\": '%s': expected VM types a,b,... or all", option, list);
}

int scv_catalog_text_column(const char *path, const scv_catalog *c, const char *column, char (*out)[48],
                            scv_err *err)
{
    for (size_t i = 0; i < c->n; i++) out[i][0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL, *fl[MAX_FIELDS];
    size_t lcap = 0, next = 0;
    int lineno = 0, at = -2, rc = SCV_OK; /* at: the column's index (-2 before the header, -1 none) */
    while (at != -1 && next < c->n && getline(&line, &lcap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        int nf = split_csv(line, fl, MAX_FIELDS);
        if (nf < 0) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: unterminated quote", path, lineno);
            break;
        }
        if (at == -2) {
            at = col(fl, nf, column);
            continue;
        }
        while (next < c->n && c->vms[next].line < lineno) next++; /* the types in the order of their lines */
        if (next < c->n && c->vms[next].line == lineno && at < nf) snprintf(out[next], 48, "%s", fl[at]);
    }
    free(line);
    fclose(f);
    return rc;
}

int scv_catalog_load(const char *path, scv_catalog **out, scv_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    scv_catalog *c = calloc(1, sizeof *c);
    char *line = NULL, *hline = NULL, *hdr[MAX_FIELDS], *fl[MAX_FIELDS];
    size_t lcap = 0, cap = 0;
    int rc = SCV_OK, nh = 0, lineno = 0;
    enum { PROV, NAME, CPU, MEM, GPU, OD, SMIN, SMAX, NET, NCOL };
    static const char *names[NCOL] = {"provider", "instance_type", "vcpus", "memory_gib", "gpu_count",
                                      "ondemand_usd_per_hr", "spot_usd_per_hr_min",
                                      "spot_usd_per_hr_max", "network_gbps"};
    int idx[NCOL];
    /* the range of each numeric field (index CPU..NET); vCPUs below 1 mark a row that is not
     * a whole VM (skipped), like an empty field */
    static const double lim[NCOL][2] = {{0}, {0}, {0, 4096}, {0, 65536}, {0, 64},
                                        {0, 10000}, {0, 10000}, {0, 10000}, {0, 100000}};
    if (!c) {
        fclose(f);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (!hline) {
            hline = strdup(line);
            nh = hline ? split_csv(hline, hdr, MAX_FIELDS) : -1;
            for (int j = 0; j < NCOL && nh > 0; j++) {
                idx[j] = col(hdr, nh, names[j]);
                if (idx[j] < 0 && j <= OD && j != GPU) {
                    rc = scv_err_set(err, SCV_EPARSE, "%s:%d: header has no '%s' column", path,
                                     lineno, names[j]);
                    goto done;
                }
            }
            if (nh <= 0) {
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: unreadable header", path, lineno);
                goto done;
            }
            continue;
        }
        int nf = split_csv(line, fl, MAX_FIELDS);
        if (nf < 0) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: unterminated quote", path, lineno);
            goto done;
        }
        if (nf < nh) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: %d fields, the header has %d", path, lineno,
                             nf, nh);
            goto done;
        }
        double v[NCOL];
        for (int j = CPU; j < NCOL; j++) {
            v[j] = NAN;
            if (idx[j] >= 0 && !num(fl[idx[j]], &v[j])) {
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a number: '%s'", path,
                                 lineno, names[j], fl[idx[j]]);
                goto done;
            }
            /* empty (NaN) is allowed; a number must lie in the field's range */
            if (!isnan(v[j]) && (!(v[j] >= lim[j][0] && v[j] <= lim[j][1]) ||
                                 ((j == CPU || j == GPU) && v[j] >= 1 && v[j] != floor(v[j])))) {
                rc = scv_err_set(err, SCV_EPARSE,
                                 "%s:%d: field '%s' = '%s' is out of range (%s%g..%g)", path,
                                 lineno, names[j], fl[idx[j]],
                                 j == CPU || j == GPU ? "an integer in " : "", lim[j][0], lim[j][1]);
                goto done;
            }
        }
        if (!isnan(v[SMIN]) && !isnan(v[SMAX]) && v[SMIN] > v[SMAX]) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: field 'spot_usd_per_hr_min' (%g) exceeds "
                             "'spot_usd_per_hr_max' (%g)", path, lineno, v[SMIN], v[SMAX]);
            goto done;
        }
        if (!*fl[idx[NAME]]) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: empty instance_type", path, lineno);
            goto done;
        }
        if (!(v[CPU] >= 1) || !(v[MEM] > 0) || !(v[OD] > 0)) {
            size_t len = strlen(c->skipped_note);
            if (len + 8 < sizeof c->skipped_note)
                snprintf(c->skipped_note + len, sizeof c->skipped_note - len, "%s%d",
                         c->skipped ? "," : "lines ", lineno);
            c->skipped++;
            continue;
        }
        if (c->n == cap) {
            cap = cap ? 2 * cap : 64;
            scv_vm_type *nv = realloc(c->vms, cap * sizeof *nv);
            if (!nv) {
                rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
                goto done;
            }
            c->vms = nv;
        }
        scv_vm_type *vm = &c->vms[c->n++];
        memset(vm, 0, sizeof *vm);
        snprintf(vm->provider, sizeof vm->provider, "%s", fl[idx[PROV]]);
        snprintf(vm->name, sizeof vm->name, "%s", fl[idx[NAME]]);
        vm->vcpus = (int)v[CPU];
        vm->mem_gib = v[MEM];
        vm->gpus = isfinite(v[GPU]) ? (int)v[GPU] : 0;
        vm->ondemand = v[OD];
        vm->spot_min = v[SMIN];
        vm->spot_max = v[SMAX];
        vm->net_gbps = v[NET];
        vm->line = lineno;
    }
    if (!hline) rc = scv_err_set(err, SCV_EPARSE, "%s: empty catalog", path);
    else if (c->n == 0) rc = scv_err_set(err, SCV_EPARSE, "%s: no VM type in the catalog", path);
done:
    free(line);
    free(hline);
    fclose(f);
    if (rc) scv_catalog_free(c);
    else *out = c;
    return rc;
}

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
        char near[160];
        if (!v)
            return scv_err_set(err, SCV_ENOTFOUND, "mix '%.200s': '%s' is not a VM type of the catalog%s", spec, part,
                               scv_catalog_did_you_mean(c, part, near, sizeof near));
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
