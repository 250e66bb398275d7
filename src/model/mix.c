/*
 * mix.c - mixed clusters for the planner: a scv_vm_mix written back for people as
 * "c5.xlarge:2+c6i.4xlarge:1", and its worker count. Pure (libc): the spec
 * "TYPE:COUNT[,TYPE:COUNT...]" is read against the catalog by scv_vm_mix_parse in
 * io/catalog.c (it looks the types up in the catalog, which is io's).
 */
#include "scv.h"
#include "model.h"

#include <stdio.h>

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
