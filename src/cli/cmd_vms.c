/*
 * cmd_vms.c - `scavenger vms`: the VM types of the price catalog (data/vm-catalog.csv, read
 * by the catalog loader the planner prices with) as a table or JSON: type, provider,
 * region, vCPUs, memory, GPUs, on-demand and spot prices; filtered by provider, by a least
 * number of vCPUs and to GPU types. What `sky show-gpus` is to SkyPilot: the names that
 * `plan --vm`, `--vm-type` and `--mix` take, with what they cost.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "../core/util.h"
#include "../io/io.h"
#include "../io/json_out.h"
#include "scv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VMS_USAGE "usage: scavenger vms [--provider P] [--cpus N] [--gpus] [--catalog CSV] [--json]\n"

enum { V_JSON = 1, V_PROVIDER, V_CPUS, V_GPUS, V_CATALOG };
/* vms' options (--help, the completion, the man page) */
const scv_option VMS_OPTIONS[] = {
    {"provider", "P", "only the types of provider P (aws, gcp, azure, ...)", V_PROVIDER, 0, NULL, {0}},
    {"cpus", "N", "only the types with at least N vCPUs", V_CPUS, 0, NULL, {0}},
    {"gpus", NULL, "only the types with GPUs", V_GPUS, 0, NULL, {0}},
    {"catalog", "CSV", "VM prices (default data/vm-catalog.csv)", V_CATALOG, 0, NULL, {0}},
    {"json", NULL, "a JSON array instead of the table", V_JSON, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

static int usage_error(const char *fmt, const char *arg)
{
    return cli_usage_error("vms", VMS_USAGE, fmt, arg);
}

/* a price, or "-" where the catalog has none */
static const char *price(double v, char *buf, size_t cap)
{
    if (isfinite(v)) snprintf(buf, cap, "%.4f", v);
    else snprintf(buf, cap, "-");
    return buf;
}

int cmd_vms(int argc, char **argv)
{
    struct option opts[sizeof VMS_OPTIONS / sizeof VMS_OPTIONS[0] + 2];
    if (cli_opt_getopt(VMS_OPTIONS, opts, sizeof opts / sizeof opts[0]) < 0) return EXIT_FAIL;
    const char *provider = NULL, *catalog = NULL;
    int json = 0, gpus = 0, c;
    int64_t cpus = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf(VMS_USAGE "\nThe VM types of the price catalog, with their on-demand and spot prices\n"
                             "(US$ per hour; spot as the catalog's lowest-highest zone price).\n\n");
            cli_opt_help(stdout, VMS_OPTIONS, 24, 0);
            return EXIT_OK;
        case V_JSON: json = 1; break;
        case V_GPUS: gpus = 1; break;
        case V_PROVIDER: provider = optarg; break;
        case V_CATALOG: catalog = optarg; break;
        case V_CPUS:
            if (scv_parse_i64(optarg, &cpus) || cpus < 1 || cpus > 100000)
                return usage_error("--cpus '%s': expected a whole number of vCPUs >= 1", optarg);
            break;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    char buf[4200];
    const char *path = catalog ? catalog : scv_default_data_file("vm-catalog.csv", buf, sizeof buf);
    scv_catalog *cat = NULL;
    scv_err err = {0};
    if (scv_catalog_load(path, &cat, &err)) {
        fprintf(stderr, "scavenger vms: %s\n", err.msg);
        return EXIT_FAIL;
    }
    char(*region)[48] = calloc(cat->n ? cat->n : 1, sizeof *region);
    char(*gmodel)[48] = calloc(cat->n ? cat->n : 1, sizeof *gmodel);
    int rc = EXIT_OK;
    if (!region || !gmodel) {
        fprintf(stderr, "scavenger vms: out of memory\n");
        rc = EXIT_FAIL;
        goto out;
    }
    if (scv_catalog_text_column(path, cat, "region", region, &err) ||
        scv_catalog_text_column(path, cat, "gpu_model", gmodel, &err)) {
        fprintf(stderr, "scavenger vms: %s\n", err.msg);
        rc = EXIT_FAIL;
        goto out;
    }
    if (provider) { /* a provider of no type: say which there are */
        int any = 0;
        for (size_t i = 0; i < cat->n && !any; i++) any = !strcmp(cat->vms[i].provider, provider);
        if (!any) {
            char list[256] = "";
            const char *names[64];
            size_t n = 0, len = 0;
            for (size_t i = 0; i < cat->n && n < 64; i++) {
                size_t j = 0;
                while (j < n && strcmp(names[j], cat->vms[i].provider)) j++;
                if (j < n) continue;
                names[n++] = cat->vms[i].provider;
                if (len < sizeof list)
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", n > 1 ? ", " : "", cat->vms[i].provider);
            }
            const char *near = scv_nearest_name(provider, names, n);
            fprintf(stderr, "scavenger vms: --provider '%s': no VM type of that provider in %s (providers: %s)%s%s%s\n",
                    provider, path, list, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            rc = EXIT_USAGE;
            goto out;
        }
    }
    size_t shown = 0;
    if (json) putchar('[');
    else
        printf("%-22s %-8s %-16s %5s %8s %-14s %12s %17s\n", "TYPE", "PROVIDER", "REGION", "VCPUS", "MEM_GIB", "GPUS",
               "ONDEMAND_$/H", "SPOT_$/H");
    for (size_t i = 0; i < cat->n; i++) {
        const scv_vm_type *v = &cat->vms[i];
        if ((provider && strcmp(v->provider, provider)) || v->vcpus < cpus || (gpus && v->gpus < 1)) continue;
        if (json) {
            fputs(shown ? ",{\"type\":" : "{\"type\":", stdout);
            scv_json_str(stdout, v->name);
            fputs(",\"provider\":", stdout);
            scv_json_str(stdout, v->provider);
            fputs(",\"region\":", stdout);
            scv_json_str(stdout, region[i]);
            printf(",\"vcpus\":%d", v->vcpus);
            scv_json_num(stdout, "memory_gib", "%.6g", v->mem_gib, 1);
            printf(",\"gpus\":%d,\"gpu_model\":", v->gpus);
            if (gmodel[i][0]) scv_json_str(stdout, gmodel[i]);
            else fputs("null", stdout);
            scv_json_num(stdout, "ondemand_usd_per_hr", "%.6g", v->ondemand, 1);
            scv_json_num(stdout, "spot_usd_per_hr_min", "%.6g", v->spot_min, 1);
            scv_json_num(stdout, "spot_usd_per_hr_max", "%.6g", v->spot_max, 1);
            putchar('}');
        } else {
            char g[64], od[32], s1[32], s2[32], spot[72];
            if (v->gpus > 0) snprintf(g, sizeof g, "%dx %.40s", v->gpus, gmodel[i][0] ? gmodel[i] : "GPU");
            else snprintf(g, sizeof g, "-");
            price(v->spot_min, s1, sizeof s1), price(v->spot_max, s2, sizeof s2);
            if (!isfinite(v->spot_min) && !isfinite(v->spot_max)) snprintf(spot, sizeof spot, "-");
            else if (!strcmp(s1, s2) || !isfinite(v->spot_max)) snprintf(spot, sizeof spot, "%s", s1);
            else snprintf(spot, sizeof spot, "%s-%s", s1, s2);
            printf("%-22s %-8s %-16s %5d %8.1f %-14s %12s %17s\n", v->name, v->provider, region[i][0] ? region[i] : "-",
                   v->vcpus, v->mem_gib, g, price(v->ondemand, od, sizeof od), spot);
        }
        shown++;
    }
    if (json) printf("]\n");
    else
        printf("%zu VM type%s of %s%s%s\n", shown, shown == 1 ? "" : "s", path, cat->skipped ? "; rows skipped (not a whole VM): " : "",
               cat->skipped ? cat->skipped_note : "");
out:
    free(region);
    free(gmodel);
    scv_catalog_free(cat);
    return rc;
}
