/*
 * names.c - the names of the planner's and the loop's choices (objective, statistical
 * model, communication model, pricing, search and scaling policy) beside their enums: one table each,
 * indexed by the enum value, used by the command line, job files, the store and reports; and
 * how a plan point's compute was carried to its VM type, in words (scv_extrap_desc).
 */
#include "scv.h"

#include <string.h>

static const char *const OBJECTIVES[] = {"time", "cost", "knee", "utility", NULL};
static const char *const STATS[] = {"gns", "scavenger", NULL};
static const char *const TOPOLOGIES[] = {"ring", "ps", NULL};
static const char *const PRICINGS[] = {"ondemand", "spot", "memory", NULL};
static const char *const SEARCHES[] = {"partial", "full", "none", NULL};
static const char *const SCALINGS[] = {"plan", "throughput", NULL};
static const char *const LR_SCALINGS[] = {"none", "linear", "sqrt", "adascale", NULL};

static const char *name_of(const char *const *names, int v)
{
    for (int i = 0; names[i]; i++)
        if (i == v) return names[i];
    return NULL;
}

/* Index of name in names; otherwise SCV_EINVAL naming what is accepted. */
static int value_of(const char *const *names, const char *what, const char *name, int *out, scv_err *err)
{
    for (int i = 0; name && names[i]; i++)
        if (!strcmp(name, names[i])) {
            *out = i;
            return SCV_OK;
        }
    char list[128] = "";
    size_t len = 0;
    for (int i = 0; names[i] && len < sizeof list; i++) {
        const char *sep = !i ? "" : names[i + 1] ? ", " : " or ";
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", sep, names[i]);
    }
    return scv_err_set(err, SCV_EINVAL, "%s '%s': expected %s", what, name ? name : "", list);
}

#define SCV__NAMES(fn, type, table, what)                                                 \
    const char *scv_##fn##_name(type v) { return name_of(table, (int)v); }                \
    int scv_##fn##_from_name(const char *name, type *out, scv_err *err)                   \
    {                                                                                     \
        int v = 0, rc = value_of(table, what, name, &v, err);                               \
        if (!rc) *out = (type)v;                                                          \
        return rc;                                                                        \
    }
SCV__NAMES(objective, scv_objective, OBJECTIVES, "objective")
SCV__NAMES(stat, scv_stat_kind, STATS, "statistical model")
SCV__NAMES(topology, scv_topology, TOPOLOGIES, "communication topology")
SCV__NAMES(pricing, scv_pricing, PRICINGS, "pricing")
SCV__NAMES(search, scv_search_policy, SEARCHES, "search policy")
SCV__NAMES(scaling, scv_scaling, SCALINGS, "scaling policy")
SCV__NAMES(lr_scaling, scv_lr_scaling, LR_SCALINGS, "learning-rate rule")

const char *scv_extrap_desc(scv_extrap e)
{
    switch (e) {
    case SCV_EXTRAP_NONE: return "measured";
    case SCV_EXTRAP_SAME_THREADS: return "extrapolated: other CPU type, same threads, compute as measured";
    case SCV_EXTRAP_NO_SCALING: return "extrapolated: no thread-scaling measurement, compute as measured";
    case SCV_EXTRAP_AMDAHL: return "extrapolated: compute scaled by Amdahl's law with the measured parallel fraction";
    case SCV_EXTRAP_GPU_ASSUMED: return "extrapolated: GPU type, compute divided by the assumed GPU speed-up";
    case SCV_EXTRAP_GPU_AS_MEASURED: return "extrapolated: other GPU type, compute as measured";
    }
    return "?";
}
