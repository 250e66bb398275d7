/*
 * cmd_sweep.c - `scavenger sweep`: the ground truth the models are judged against. Trains
 * every (K, B) of the lists to the target accuracy (on an emulated cluster, or locally),
 * and records measured iteration time, iterations, epochs, wall time and cost (K x wall
 * time x the catalog price of the VM type the measurements stand for). Writes
 * OUT/sweep.csv, OUT/sweep.md and OUT/sweep.svg (cost against time, one line per B), and
 * each run's metrics as OUT/k<K>b<B>.jsonl.
 */
#define _POSIX_C_SOURCE 200809L
#include "../drivers/child.h"
#include "cli.h"
#include "cli/opt.h"
#include "../io/svg.h"
#include "../io/io.h"
#include "scv.h"
#include "../core/util.h"
#include "../runtime/cluster.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the most (K, B) pairs one sweep trains */
#define SWEEP_MAX_RUNS 4096

#define SWEEP_USAGE                                                                        \
    "usage: scavenger sweep [--cluster NAME] --workers LIST --batch LIST\n"                 \
    "                       --target-accuracy A --out DIR [--catalog CSV] [--vm-type TYPE]\n" \
    "                       [train options...]\n"

typedef struct {
    int K, B, reached;
    double iterations, epochs, wall, t_iter, accuracy, cost;
} row;

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* OUT/sweep.csv and OUT/sweep.md; an error names the file. */
static int write_tables(const char *csv, const char *md, const row *rows, int nr, const char *vmtype,
                        double price, scv_err *err)
{
    FILE *f = fopen(csv, "w");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: cannot write: %s", csv, strerror(errno));
    FILE *m = fopen(md, "w");
    if (!m) {
        int e = errno;
        fclose(f);
        return scv_err_set(err, SCV_EIO, "%s: cannot write: %s", md, strerror(e));
    }
    /* the VM type is a name from outside: a CSV field quoted as RFC 4180 wants, markdown
     * with its table and HTML characters escaped */
    char vcsv[256], vmd[400];
    size_t a = 0, b = 0;
    vcsv[a++] = '"';
    for (const char *p = vmtype; *p && a + 3 < sizeof vcsv; p++) {
        if (*p == '"') vcsv[a++] = '"';
        vcsv[a++] = *p == '\n' || *p == '\r' ? ' ' : *p;
    }
    vcsv[a++] = '"', vcsv[a] = 0;
    for (const char *p = vmtype; *p && b + 8 < sizeof vmd; p++) {
        const char *e = *p == '|' ? "\\|" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;"
                      : *p == '\n' || *p == '\r' ? " " : NULL;
        if (e) b += (size_t)snprintf(vmd + b, sizeof vmd - b, "%s", e);
        else vmd[b++] = *p;
    }
    vmd[b] = 0;
    int bad_f = fprintf(f, "workers,batch,reached,test_accuracy,iterations,epochs,t_iter_s,wall_s,cost_usd,vm_type,price_usd_hr\n") < 0;
    int bad_m = fprintf(m, "| K | B | reached | test acc. | iterations | epochs | t_iter (ms) | wall (s) | cost ($, %s at $%.4g/h) |\n"
                           "|---|---|---|---|---|---|---|---|---|\n", vmd, price) < 0;
    for (int i = 0; i < nr; i++) {
        const row *r = &rows[i];
        bad_f |= fprintf(f, "%d,%d,%d,%.4f,%.0f,%.4f,%.6f,%.3f,%.8f,%s,%.6g\n", r->K, r->B, r->reached,
                         r->accuracy, r->iterations, r->epochs, r->t_iter, r->wall, r->cost, vcsv,
                         price) < 0;
        bad_m |= fprintf(m, "| %d | %d | %s | %.4f | %.0f | %.2f | %.2f | %.1f | %.6f |\n", r->K, r->B,
                         r->reached ? "yes" : "no", r->accuracy, r->iterations, r->epochs,
                         1e3 * r->t_iter, r->wall, r->cost) < 0;
    }
    bad_f |= fclose(f) != 0;
    int e = errno;
    bad_m |= fclose(m) != 0;
    if (bad_f) return scv_err_set(err, SCV_EIO, "%s: write failed: %s", csv, strerror(e));
    if (bad_m) return scv_err_set(err, SCV_EIO, "%s: write failed: %s", md, strerror(errno));
    return SCV_OK;
}

/* OUT/sweep.svg: measured cost against wall time, one line per B across K (svg.c groups
 * the rows: each row is drawn once whatever Bs holds). */
static int write_figure(const char *path, const row *rows, int nr, const int *Bs, long nb,
                        double target, const char *vmtype, scv_err *err)
{
    enum { MAX_SERIES = 64 };
    svg_point *pts = malloc(sizeof *pts * (size_t)(nr > 0 ? nr : 1));
    if (!pts) return scv_err_set(err, SCV_ENOMEM, "out of memory drawing %s", path);
    for (int i = 0; i < nr; i++)
        pts[i] = (svg_point){.group = rows[i].B, .k = rows[i].K, .t = rows[i].wall, .c = rows[i].cost,
                             .hollow = !rows[i].reached};
    svg_grouped g;
    int rc = svg_group_points(pts, (size_t)nr, Bs, (size_t)nb, "B=", MAX_SERIES, &g, err);
    free(pts);
    if (rc) return rc;
    char title[200], note[96];
    snprintf(title, sizeof title, "Measured cost against time to %.1f%% test accuracy (%s; lines: B across K)",
             100 * target, vmtype);
    snprintf(note, sizeof note, "did not reach %.1f%%", 100 * target);
    svg_figure fig = {.title = title,
                      .x_title = g.n_hollow ? "measured wall time to the target, or until the run stopped"
                                            : "measured wall time to target",
                      .y_title = "measured cost (K x time x price)", .series = g.series, .n_series = g.n_series,
                      .hollow_note = note};
    rc = svg_tradeoff_write(path, &fig, err);
    svg_grouped_free(&g);
    return rc;
}

enum { S_CLUSTER = 1, S_WORKERS, S_BATCH, S_OUT, S_CATALOG, S_VM, S_TARGET };

/* sweep's own options, declared once (--help, the completion, the man page); every other
 * option goes to `scavenger train` */
const scv_option SWEEP_OPTIONS[] = {
    {"workers", "LIST", "the workers K to train at (a list 1,2,4 or a range 1..8)", S_WORKERS, 0, NULL, {0}},
    {"batch", "LIST", "the global batches B (a list, or a range of powers of two)", S_BATCH, 0, NULL, {0}},
    {"target-accuracy", "A", "train each (K, B) until test accuracy >= A (0 < A <= 1)", S_TARGET, 0, NULL, {0}},
    {"out", "DIR", "sweep.csv, sweep.md, sweep.svg and each run's metrics", S_OUT, 0, NULL, {0}},
    {"cluster", "NAME", "train on an emulated cluster (scavenger cluster), else locally", S_CLUSTER, 0, NULL, {0}},
    {"vm-type", "TYPE", "catalog type the measurements stand for (default: the\ncluster's)", S_VM, 0, NULL, {0}},
    {"catalog", "CSV", "VM prices (default data/vm-catalog.csv)", S_CATALOG, 0, NULL, {0}},
    {"help", NULL, "this text (also -h)", 0, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

typedef struct sweep_cli {
    const char *cluster, *wl, *bl, *out, *catalog, *vmtype;
    double target;
    char *fwd[128]; /* the options for `scavenger train` */
    int nfwd;
} sweep_cli;

/* argv into *o: -1 to go on, else the exit status (--help, a usage error) */
static int sweep_options(int argc, char **argv, sweep_cli *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf(SWEEP_USAGE "\nTrains every (K, B) to the target and records measured time and cost:\n"
                               "the ground truth for the models.\n\n");
            cli_opt_help(stdout, SWEEP_OPTIONS, 24, 0);
            printf("Other options go to `scavenger train` (e.g. --model mlp --hidden 64 --epochs 10\n"
                   "--lr 0.05).\n");
            return EXIT_OK;
        }
        const scv_option *opt = has && !strncmp(a, "--", 2) ? cli_opt_find(SWEEP_OPTIONS, a + 2) : NULL;
        switch (opt ? opt->id : 0) {
        case S_CLUSTER: o->cluster = argv[++i]; break;
        case S_WORKERS: o->wl = argv[++i]; break;
        case S_BATCH: o->bl = argv[++i]; break;
        case S_OUT: o->out = argv[++i]; break;
        case S_CATALOG: o->catalog = argv[++i]; break;
        case S_VM: o->vmtype = argv[++i]; break;
        case S_TARGET:
            if (scv_parse_f64(argv[++i], &o->target) || !(o->target > 0) || o->target > 1) {
                fprintf(stderr, "scavenger sweep: --target-accuracy '%s': expected a number in (0,1]\n", argv[i]);
                return EXIT_USAGE;
            }
            break;
        default:
            if (a[0] == '-' && o->nfwd < 120) {
                o->fwd[o->nfwd++] = argv[i];
                if (has && argv[i + 1][0] != '-') o->fwd[o->nfwd++] = argv[++i];
            } else {
                fprintf(stderr, "scavenger sweep: unexpected argument '%s'\n" SWEEP_USAGE, a);
                return EXIT_USAGE;
            }
        }
    }
    o->fwd[o->nfwd] = NULL;
    if (!o->wl || !o->bl || !o->out || !(o->target > 0)) {
        fprintf(stderr, "scavenger sweep: --workers, --batch, --target-accuracy and --out are required\n" SWEEP_USAGE);
        return EXIT_USAGE;
    }
    return -1;
}

int cmd_sweep(int argc, char **argv)
{
    static sweep_cli o;
    memset(&o, 0, sizeof o);
    int orc = sweep_options(argc, argv, &o);
    if (orc >= 0) return orc;
    const char *cluster = o.cluster, *wl = o.wl, *bl = o.bl, *out = o.out, *catalog = o.catalog, *vmtype = o.vmtype;
    double target = o.target;
    char **fwd = o.fwd;
    scv_err err = {0};
    int *Ks = NULL, *Bs = NULL;
    long nk = scv_parse_int_set(wl, 0, 1, 1024, &Ks, &err), nb = -1;
    if (nk > 0) nb = scv_parse_int_set(bl, 1, 1, 1 << 24, &Bs, &err);
    if (nk < 0 || nb < 0) {
        fprintf(stderr, "scavenger sweep: %s %s\n", nk < 0 ? "--workers" : "--batch", err.msg);
        free(Ks);
        return EXIT_USAGE;
    }
    /* every pair is a training run: a space beyond SWEEP_MAX_RUNS is a mistake, refused
     * before anything is allocated for it */
    if (nk * nb > SWEEP_MAX_RUNS) {
        fprintf(stderr, "scavenger sweep: --workers %s x --batch %s is %ld x %ld = %ld (K, B) pairs; "
                        "a sweep trains at most %d: give shorter lists\n", wl, bl, nk, nb, nk * nb, SWEEP_MAX_RUNS);
        free(Ks);
        free(Bs);
        return EXIT_USAGE;
    }
    scv_catalog *cat = NULL;
    row *rows = calloc((size_t)(nk * nb), sizeof(row));
    int rc = EXIT_FAIL, nr = 0;
    char buf[4200], path[4200];
    if (!rows) {
        scv_err_set(&err, SCV_ENOMEM, "out of memory");
        goto done;
    }
    if (!catalog) catalog = scv_default_data_file("vm-catalog.csv", buf, sizeof buf);
    if (scv_catalog_load(catalog, &cat, &err)) goto done;
    scv_cluster cl;
    const char *vm_from = "--vm-type";
    if (cluster) {
        if (scv_cluster_load(cluster, &cl, &err)) goto done;
        if (!vmtype) vmtype = cl.vm[0].catalog_type, vm_from = "the cluster's VM type";
    }
    if (!vmtype) {
        scv_err_set(&err, SCV_EINVAL, "say which VM type the measurements stand for: --cluster or --vm-type");
        goto done;
    }
    const scv_vm_type *vm = scv_catalog_find(cat, vmtype);
    if (!vm) {
        char near[160];
        scv_err_set(&err, SCV_ENOTFOUND, "%s %s: not a VM type of %s%s", vm_from, vmtype, catalog,
                    scv_catalog_did_you_mean(cat, vmtype, near, sizeof near));
        goto done;
    }
    if (mkdir(out, 0755) && errno != EEXIST) {
        scv_err_set(&err, SCV_EIO, "--out %s: cannot create the directory: %s", out, strerror(errno));
        goto done;
    }
    int total = (int)(nk * nb), idx = 0;
    for (long bi = 0; bi < nb; bi++)
        for (long ki = 0; ki < nk; ki++) {
            int K = Ks[ki], B = Bs[bi];
            idx++;
            if (B < K) continue;
            char mp[4200], line[4096];
            snprintf(mp, sizeof mp, "%s/k%db%d.jsonl", out, K, B);
            static scv_segwire sw; /* the segment's options (src/io/segwire.h) */
            sw = (scv_segwire){.workers = K, .batch = B, .target_accuracy = target, .final_eval = 1,
                               .eval_every_epochs = 0.25 /* --eval-every N among the job's options wins */};
            snprintf(sw.metrics, sizeof sw.metrics, "%.4095s", mp);
            scv_train_cmd tc = {.job_opts = (const char *const *)fwd, .cluster = cluster, .vm_type = vmtype,
                                .catalog = catalog, .seg = &sw};
            scv_argv av = {0};
            scv_train_argv(&av, &tc);
            if (av.oom) {
                scv_argv_free(&av);
                scv_err_set(&err, SCV_ENOMEM, "out of memory");
                goto done;
            }
            fprintf(stderr, "[%d/%d] K=%d B=%d ...", idx, total, K, B);
            double t0 = scv_now();
            int st;
            int rc2 = scv_run_self(NULL, av.v, line, sizeof line, &st, NULL, NULL, NULL, 0, &err);
            scv_argv_free(&av);
            if (rc2) goto done;
            cJSON *o = line[0] ? cJSON_Parse(line) : NULL;
            if (!o || (st != 0 && st != 1)) {
                fprintf(stderr, " failed (exit %d)\n", st);
                cJSON_Delete(o);
                scv_err_set(&err, SCV_EIO, "training K=%d B=%d failed (exit %d); metrics in %s", K, B, st, mp);
                goto done;
            }
            row *r = &rows[nr++];
            r->K = K, r->B = B;
            r->iterations = jnum(o, "iterations");
            r->epochs = jnum(o, "epochs");
            r->wall = jnum(o, "wall_seconds");
            r->t_iter = jnum(o, "t_iter_mean");
            r->accuracy = jnum(o, "test_accuracy");
            r->reached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "reached_target"));
            r->cost = scv_cost_usd(K, r->wall, vm->ondemand);
            cJSON_Delete(o);
            fprintf(stderr, " %s in %.1f s (%.0f iterations, %.2f epochs), %.1f s total\n",
                    r->reached ? "reached" : "NOT reached", r->wall, r->iterations, r->epochs, scv_now() - t0);
        }
    /* CSV and markdown */
    char csv[4200], md[4200];
    snprintf(csv, sizeof csv, "%s/sweep.csv", out);
    snprintf(md, sizeof md, "%s/sweep.md", out);
    if (write_tables(csv, md, rows, nr, vmtype, vm->ondemand, &err)) goto done;
    /* figure: one line per B across K; runs that did not reach the target are open markers
     * off the line (their time is how long they ran, not a time to the target) */
    snprintf(path, sizeof path, "%s/sweep.svg", out);
    if (nr && write_figure(path, rows, nr, Bs, nb, target, vmtype, &err)) goto done;
    FILE *mm = fopen(md, "r");
    if (!mm) {
        scv_err_set(&err, SCV_EIO, "%s: cannot read back: %s", md, strerror(errno));
        goto done;
    }
    char l2[512];
    while (fgets(l2, sizeof l2, mm)) fputs(l2, stdout);
    fclose(mm);
    rc = EXIT_OK;
done:
    if (rc != EXIT_OK) fprintf(stderr, "scavenger sweep: %s\n", err.msg);
    scv_catalog_free(cat);
    free(rows);
    free(Ks);
    free(Bs);
    return rc;
}
