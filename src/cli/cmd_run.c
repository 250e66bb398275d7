/*
 * cmd_run.c - `scavenger run`: the Scavenger loop on the command line. A thin shell: the
 * options (a JSON job file, then the command line; later settings win) become the loop's
 * scv_run_params and the job driver's options (--driver elastic | relaunch); scv_run() does the work; this file
 * prints its events (progress on stderr, the trade-off on stdout), writes the report and
 * maps the outcome to the exit status (0 target reached, 1 not reached or failed, 2 usage,
 * 130 interrupted). The loop itself is src/search/loop.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
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

#define RUN_USAGE "usage: scavenger run [JOB.json] [options]   |   scavenger run --resume RUN_ID\n"
#define MAX_PAIRS 96

/* the job's options, passed to every `scavenger train` the job driver starts */
static const char *const JOB_OPTS[] = {"model", "hidden", "dataset", "threads", "lr", "momentum",
                                       "weight-decay", "lr-scaling", "base-batch", "warmup-epochs",
                                       "lr-decay", "lr-step-epochs", "lr-gamma", "lr-horizon", "seed",
                                       NULL};
/* the command's own; everything else must be a loop setting (scv_run_params_set) */
static const char *const CLI_OPTS[] = {"cluster", "catalog", "db", "report", "driver", "exec", "hosts", NULL};

typedef struct pairs {
    char *name[MAX_PAIRS], *value[MAX_PAIRS];
    int n;
} pairs;

static int in_list(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

static const char *get(const pairs *p, const char *name)
{
    for (int i = p->n - 1; i >= 0; i--) /* later settings win */
        if (!strcmp(p->name[i], name)) return p->value[i];
    return NULL;
}

static void pairs_free(pairs *p)
{
    for (int i = 0; i < p->n; i++) free(p->name[i]), free(p->value[i]);
    p->n = 0;
}

static int known(const char *name)
{
    scv_run_params probe = scv_run_params_default();
    return in_list(JOB_OPTS, name) || in_list(CLI_OPTS, name) ||
           scv_run_params_set(&probe, name, "", NULL) != SCV_ENOTFOUND;
}

static int add_pair(pairs *p, const char *name, const char *value, scv_err *err)
{
    if (p->n == MAX_PAIRS) return scv_err_set(err, SCV_ERANGE, "too many settings (at most %d)", MAX_PAIRS);
    if (!(p->name[p->n] = strdup(name)) || !(p->value[p->n] = strdup(value))) {
        free(p->name[p->n]);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    p->n++;
    return SCV_OK;
}

/* The settings of a job, a JSON object of strings and finite numbers: a file or a stored
 * run's. Refused: anything after the object, a key given twice, non-finite numbers and
 * values too long to keep whole. */
static int load_job_json(const char *text, const char *where, pairs *p, scv_err *err)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(text, &end, 1);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return scv_err_set(err, SCV_EPARSE, "%s: not a JSON object%s", where,
                           end && *end ? " (or something follows it)" : "");
    }
    int rc = SCV_OK;
    for (cJSON *it = o->child; it && !rc; it = it->next) {
        char val[512];
        int len = 0;
        if (cJSON_IsString(it)) len = snprintf(val, sizeof val, "%s", it->valuestring);
        else if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) len = snprintf(val, sizeof val, "%.17g", it->valuedouble);
        else rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s' must be a string or a finite number", where, it->string);
        if (!rc && len >= (int)sizeof val)
            rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s': the value is longer than %zu characters", where,
                             it->string, sizeof val - 1);
        if (!rc && !known(it->string)) rc = scv_err_set(err, SCV_EPARSE, "%s: unknown field '%s'", where, it->string);
        for (const cJSON *q = o->child; !rc && q != it; q = q->next)
            if (!strcmp(q->string, it->string))
                rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s' is given twice", where, it->string);
        if (!rc) rc = add_pair(p, it->string, val, err);
    }
    cJSON_Delete(o);
    return rc;
}

static int load_job_file(const char *path, pairs *p, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(1 << 20);
    size_t len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (bad) {
        free(buf);
        return scv_err_set(err, SCV_EIO, "%s: read error", path);
    }
    buf[len] = 0;
    int rc = load_job_json(buf, path, p, err);
    free(buf);
    return rc;
}

/* The settings as JSON, what the store keeps for --resume (not the database's path). */
static char *job_json(const pairs *p)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < p->n; i++) {
        if (!strcmp(p->name[i], "db")) continue;
        cJSON_DeleteItemFromObjectCaseSensitive(o, p->name[i]);
        cJSON_AddStringToObject(o, p->name[i], p->value[i]);
    }
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

/* ---- printing the loop's events ---- */

typedef struct view {
    int tty, json;
    double last_line;          /* when the progress line was last drawn */
    double accuracy;           /* the latest evaluation, NaN before the first */
    int planned;
    const scv_catalog *cat;
    int comms;                 /* planned with communication options: the table's comm column */
} view;

static void progress_line(view *v, const scv_run_event *ev)
{
    double now = scv_now();
    if (now - v->last_line < 0.25) return;
    v->last_line = now;
    char el[32], rem[128] = "", acc[32] = "";
    scv_fmt_time(ev->elapsed_s, el, sizeof el);
    if (isfinite(ev->remaining_s)) {
        char t[32], lo[32], hi[32];
        scv_fmt_time(ev->remaining_s, t, sizeof t);
        if (isfinite(ev->remaining_lo_s)) {
            scv_fmt_time(ev->remaining_lo_s, lo, sizeof lo);
            scv_fmt_time(ev->remaining_hi_s, hi, sizeof hi);
            snprintf(rem, sizeof rem, ", about %s to the target (%s to %s)", t, lo, hi);
        } else {
            snprintf(rem, sizeof rem, ", about %s to the target", t);
        }
    }
    if (isfinite(v->accuracy)) snprintf(acc, sizeof acc, ", test acc %.4f", v->accuracy);
    fprintf(stderr, "\r\033[K  [%s] K=%d B=%d iteration %lld, epoch %.2f%s; %s in the run%s", scv_run_state_name(ev->state),
            ev->workers, ev->batch, (long long)ev->iter->iteration, ev->iter->epoch, acc, el, rem);
    fflush(stderr);
}

static void on_event(void *ctx, const scv_run_event *ev)
{
    view *v = ctx;
    switch (ev->kind) {
    case SCV_EV_SEGMENT_START:
        fprintf(stderr, "scavenger run: %-7s K=%d B=%d ...%s", ev->phase, ev->workers, ev->batch, v->tty ? "\n" : "");
        break;
    case SCV_EV_ITER:
        if (v->tty) progress_line(v, ev);
        break;
    case SCV_EV_EVAL:
        v->accuracy = ev->eval->accuracy;
        break;
    case SCV_EV_SEGMENT_END: {
        const scv_segment_result *s = ev->segment;
        if (v->tty) fprintf(stderr, "\r\033[K");
        fprintf(stderr, "%s %lld iterations", v->tty ? "  done:" : "", (long long)s->iterations);
        if (s->stats.workers) fprintf(stderr, ", %.2f ms/iteration", 1e3 * s->stats.t_iter);
        if (isfinite(s->accuracy)) fprintf(stderr, ", test acc %.4f", s->accuracy);
        fprintf(stderr, "%s\n", s->reached ? ", target reached" : "");
        break;
    }
    case SCV_EV_PLAN:
        if (v->planned++ || v->json) break; /* the first plan's table; re-plans print a line */
        printf("trade-off (%zu configurations; %s):\n", ev->plan->n_points,
               ev->relative ? "times and costs are nominal: the target's epochs are not known yet"
                            : "predicted time and cost to the target, from the start");
        scv_plan_print_header_ex(stdout, v->comms);
        for (size_t i = 0; i < ev->plan->n_front && i < 12; i++)
            scv_plan_print_point_ex(stdout, v->cat, &ev->plan->points[ev->plan->front[i]],
                                    (long)ev->plan->front[i] == ev->plan->chosen ? ">" : " ", v->comms);
        fflush(stdout);
        break;
    case SCV_EV_DECISION:
        if (v->planned <= 1 && !v->json && strncmp(ev->text, "re-plan", 7) && strncmp(ev->text, "resumed", 7)) {
            printf("chosen: %s\n", ev->text);
            fflush(stdout);
        } else {
            fprintf(stderr, "scavenger run: %s\n", ev->text);
        }
        break;
    case SCV_EV_RETRY:
    case SCV_EV_NOTE: fprintf(stderr, "scavenger run: %s\n", ev->text); break;
    default: break;
    }
}

/* ---- the command ---- */

static int usage(const char *fmt, const char *arg)
{
    return cli_usage_error("run", RUN_USAGE, fmt, arg);
}

static void help(void)
{
    printf(RUN_USAGE
           "\nThe Scavenger loop: trains the job, searches (K, B) online, picks the configuration the\n"
           "objective asks for and trains to the target there; every step is training.\n\n"
           "Job (as `scavenger train`): --model --hidden --dataset --lr --momentum --weight-decay\n"
           "  --lr-scaling --base-batch --warmup-epochs --lr-decay ... --seed --threads\n"
           "  --target-accuracy A  the target (0 < A <= 1): mean of W evaluations >= A, or\n"
           "  --target-loss L      the period-mean training loss: mean of W periods <= L\n"
           "  --max-epochs E       (default 30)\n"
           "Search:\n"
           "  --search partial|full|none   (default partial)\n"
           "  --workers SPEC --batch SPEC  the space (default 1,2 and 64,256)\n"
           "  --start K,B          first configuration (default: smallest K >= 2, smallest B)\n"
           "  --search-budget S    warm-up and search spend at most this share of the predicted\n"
           "                       job time (default 0.05; 0 = no budget)\n"
           "Choice:\n"
           "  --objective time|cost|knee|utility (default knee)   --deadline D   --budget USD\n"
           "  --value-per-hour V   utility: $ an hour saved is worth (cost + V x hours is least)\n"
           "  --policy plan|throughput  Scavenger's plan (default), or Or et al.'s throughput\n"
           "                       scaling: the start's per-worker batch, workers added while\n"
           "                       each brings >= --scaling-threshold S (0.1) of a worker's\n"
           "                       throughput, then settled\n"
           "  --exec COMMAND       drive your own trainer (a PyTorch script, say) that follows\n"
           "                       docs/TRAINER-CONTRACT.md: one `mpirun -np K /bin/sh -c\n"
           "                       COMMAND` per segment (the exec driver)\n"
           "  --hosts FILE         real machines: an Open MPI hostfile (ssh); relaunch and exec\n"
           "                       drivers\n"
           "  --dynamic-batching on|off  the workers' shares of B follow their measured\n"
           "                       throughput (heterogeneous clusters; default off)\n"
           "  --straggler-fraction F  while training, a worker whose smoothed throughput stays\n"
           "                       under F (0.8) of the median worker's for --straggler-window\n"
           "                       (5s) is a straggler: the elastic driver replaces it with a\n"
           "                       spare VM of the cluster or, without one, reports it (0 =\n"
           "                       off; the other drivers do not look for stragglers)\n"
           "  --compress LIST      also plan communication options, e.g.\n"
           "                       none,topk:100,topk:10:artopk,selsync:0.9 (topk:CF[:auto|\n"
           "                       allgather|artopk] needs --comm ring; selsync:R, a share R of\n"
           "                       local steps); a chosen option trains the training segments\n"
           "                       (Top-k at CF over its collective, or the one the plan priced\n"
           "                       for auto; SelSync aiming at R); warm-up and search stay dense\n"
           "                       (the model is fitted on dense steps); the report shows the\n"
           "                       dense choice beside it. Not with --exec\n"
           "  --compress-iterations R  their iterations to the target relative to dense\n"
           "                       (default 1): assumed, not measured\n"
           "  --stat gns|scavenger  --comm ring|ps  --pricing ondemand|spot|memory\n"
           "  --eval-subset N      periodic evaluations on the first N test samples (default\n"
           "                       2000; 0 = all); the target is confirmed on the whole set\n"
           "  --target-window W    the smoothing window of the target (default 3)\n"
           "  --eval-every-epochs E, --search-eval-every-epochs E   evaluation periods while\n"
           "                       training (default 0.25) and warming up / searching (0.05)\n"
           "  --target-epochs E --target-batch B0   the target's epochs, if known (else learnt\n"
           "                       from a stored run of the same job, else predicted from this\n"
           "                       run's learning curve, else the plan is relative)\n"
           "Where:\n"
           "  --driver elastic|relaunch|exec  how segments run (default elastic; exec with\n"
           "                       --exec; relaunch with --hosts): one job that changes K and\n"
           "                       B in place, or a job per segment that resumes the checkpoint\n"
           "  --cluster NAME       an emulated cluster (else local processes)\n"
           "  --vm-type TYPE       catalog type the measurements stand for (default: the\n"
           "                       cluster's type, else c5.xlarge)\n"
           "  --catalog CSV        prices (default data/vm-catalog.csv)\n"
           "State and output:\n"
           "  --db PATH            run database (default ~/.local/share/scavenger/scavenger.db);\n"
           "                       each run keeps its files in PATH.runs/ID/ (`scavenger runs`)\n"
           "  --report DIR         report.md, report.json, tradeoff.svg (default: the run's dir)\n"
           "  --resume RUN_ID      continue an interrupted run\n"
           "  --json               the report's JSON as the last line of stdout\n"
           "A job file holds the same settings: {\"model\": \"lenet\", \"target-accuracy\": 0.89, ...}\n"
           "Exit status: 0 target reached, 1 failure or target not reached, 2 usage, 130 interrupted.\n");
}

/* Options and job file -> pairs; returns an exit status or -1 to go on. */
static int parse_args(int argc, char **argv, pairs *p, long long *resume, int *json)
{
    scv_err err = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            return EXIT_OK;
        }
        if (!strcmp(a, "--json")) {
            *json = 1;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            int64_t v;
            if (i + 1 >= argc || scv_parse_i64(argv[i + 1], &v) || v < 1)
                return usage("--resume needs a run id%s", "");
            *resume = v;
            i++;
            continue;
        }
        if (a[0] != '-') {
            if (load_job_file(a, p, &err)) {
                fprintf(stderr, "scavenger run: %s\n", err.msg);
                return err.code == SCV_ENOTFOUND || err.code == SCV_EIO ? EXIT_FAIL : EXIT_USAGE;
            }
            continue;
        }
        if (strncmp(a, "--", 2) || !known(a + 2)) return usage("unknown option '%s'", a);
        if (i + 1 >= argc) return usage("%s needs a value", a);
        if (add_pair(p, a + 2, argv[++i], &err)) return usage("%s", err.msg);
    }
    return -1;
}

int cmd_run(int argc, char **argv)
{
    pairs opt = {0};
    long long resume = 0;
    int json = 0, rc = parse_args(argc, argv, &opt, &resume, &json);
    if (rc >= 0) {
        pairs_free(&opt);
        return rc;
    }
    rc = EXIT_FAIL;
    scv_err err = {0};
    scv_store *db = NULL;
    scv_catalog *cat = NULL;
    scv_job_driver *drv = NULL;
    char *jj = NULL;
    const char **train_opts = NULL;
    scv_run_result res;
    memset(&res, 0, sizeof res);
    /* the database, and on --resume the stored job first (the command line adds to it) */
    char dbpath[1024], state_dir[1100];
    const char *dbarg = get(&opt, "db");
    if (dbarg) snprintf(dbpath, sizeof dbpath, "%s", dbarg);
    else if (cli_default_db(dbpath, sizeof dbpath, &err)) goto out;
    if (scv_store_open(dbpath, &db, &err)) goto out;
    if (resume) {
        char job[65536], status[64];
        pairs stored = {0};
        if (scv_store_run_get(db, resume, job, sizeof job, status, sizeof status, &err)) goto out;
        char where[64];
        snprintf(where, sizeof where, "run %lld's stored job", resume);
        if (load_job_json(job, where, &stored, &err)) {
            pairs_free(&stored);
            goto out;
        }
        for (int i = 0; i < opt.n && stored.n < MAX_PAIRS; i++) /* the command line after */
            stored.name[stored.n] = opt.name[i], stored.value[stored.n++] = opt.value[i];
        opt.n = 0;
        opt = stored;
    }
    /* the loop's settings */
    scv_run_params p = scv_run_params_default();
    for (int i = 0; i < opt.n; i++) {
        if (in_list(JOB_OPTS, opt.name[i]) || in_list(CLI_OPTS, opt.name[i])) continue;
        if (scv_run_params_set(&p, opt.name[i], opt.value[i], &err)) {
            rc = usage("--%s", err.msg);
            goto out_quiet;
        }
    }
    char catbuf[4200];
    const char *catalog = get(&opt, "catalog") ? get(&opt, "catalog")
                                               : scv_default_data_file("vm-catalog.csv", catbuf, sizeof catbuf);
    if (scv_catalog_load(catalog, &cat, &err)) goto out;
    const char *cl = get(&opt, "cluster");
    scv_cluster cluster;
    if (cl && scv_cluster_load(cl, &cluster, &err)) goto out;
    if (!p.vm_type[0]) snprintf(p.vm_type, sizeof p.vm_type, "%s", cl ? cluster.vm[0].catalog_type : "c5.xlarge");
    for (int i = 1; cl && i < cluster.n; i++) /* the loop plans and prices one type */
        if (strcmp(cluster.vm[i].catalog_type, cluster.vm[0].catalog_type)) {
            fprintf(stderr, "scavenger run: note: cluster %s mixes VM types (VM %d is %s, VM 1 %s): the measurements "
                            "stand for the first K VMs and are priced as %s; `scavenger plan --mix` prices a mix\n",
                    cl, i + 1, cluster.vm[i].catalog_type, cluster.vm[0].catalog_type, p.vm_type);
            break;
        }
    if (!scv_catalog_find(cat, p.vm_type)) {
        rc = usage("--vm-type '%s': not a VM type of the catalog (see --catalog)", p.vm_type);
        goto out_quiet;
    }
    if (cl && p.workers[p.n_workers - 1] > cluster.n) {
        scv_err_set(&err, SCV_EINVAL, "--workers goes up to %d but cluster %s has %d VMs", p.workers[p.n_workers - 1],
                    cl, cluster.n);
        goto out;
    }
    char job_key[512];
    const char *exec = get(&opt, "exec"), *hosts = get(&opt, "hosts");
    const char *model = get(&opt, "model") ? get(&opt, "model") : "lenet";
    if (exec && p.n_comms > 1) { /* the contract cannot ask an external trainer to compress */
        rc = usage("--compress: not with --exec (the trainer contract has no compression: a chosen option "
                   "would train dense; plan it with `scavenger plan --compress`)%s", "");
        goto out_quiet;
    }
    if (exec) { /* the trainer is the user's: its options are in its command */
        for (int i = 0; i < opt.n; i++)
            if (in_list(JOB_OPTS, opt.name[i]) && strcmp(opt.name[i], "seed")) {
                rc = usage("--%s is an option of the built-in trainer; with --exec, give it in the trainer's command",
                           opt.name[i]);
                goto out_quiet;
            }
        if (!exec[0] || strlen(exec) > 4000) {
            rc = usage("--exec: expected a command of 1 to 4000 characters%s", "");
            goto out_quiet;
        }
        snprintf(job_key, sizeof job_key, "exec=%.500s", exec);
    } else {
        snprintf(job_key, sizeof job_key, "model=%s;hidden=%s;dataset=%s", model,
                 get(&opt, "hidden") ? get(&opt, "hidden") : !strcmp(model, "mlp") ? "256,128" : "-",
                 get(&opt, "dataset") ? get(&opt, "dataset") : "fashion-mnist");
    }
    const char *slurm = getenv("SLURM_NTASKS");
    if (slurm && !cl && !hosts && atoi(slurm) > 0 && p.workers[p.n_workers - 1] > atoi(slurm)) {
        char m[128];
        snprintf(m, sizeof m, "--workers goes up to %d but the Slurm allocation has %d tasks (SLURM_NTASKS)",
                 p.workers[p.n_workers - 1], atoi(slurm));
        rc = usage("%s", m);
        goto out_quiet;
    }
    if (hosts && cl) {
        rc = usage("--hosts and --cluster: one or the other%s", "");
        goto out_quiet;
    }
    if (!(jj = job_json(&opt))) {
        scv_err_set(&err, SCV_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(state_dir, sizeof state_dir, "%s.runs", dbpath);
    p.job_key = job_key, p.job_json = jj, p.catalog = cat, p.store = db, p.state_dir = state_dir;
    p.resume_run = resume;
    if (scv_run_params_check(&p, &err)) {
        rc = usage("%s", err.msg);
        goto out_quiet;
    }
    /* the job driver with the job's options */
    const char *dname = get(&opt, "driver") ? get(&opt, "driver") : exec ? "exec" : hosts ? "relaunch" : "elastic";
    if (strcmp(dname, "elastic") && strcmp(dname, "relaunch") && strcmp(dname, "exec")) {
        rc = usage("--driver '%s': expected elastic, relaunch or exec", dname);
        goto out_quiet;
    }
    if (!strcmp(dname, "exec") != !!exec) {
        rc = usage("%s", exec ? "--exec runs the exec driver (--driver exec)" : "--driver exec needs --exec COMMAND");
        goto out_quiet;
    }
    if (hosts && !strcmp(dname, "elastic")) {
        rc = usage("--hosts: the elastic driver runs locally or on an emulated cluster; use --driver relaunch%s", "");
        goto out_quiet;
    }
    uint64_t seed = 1;
    if (get(&opt, "seed")) {
        int64_t sv;
        if (scv_parse_i64(get(&opt, "seed"), &sv) || sv < 0) {
            rc = usage("--seed '%s': expected a non-negative integer", get(&opt, "seed"));
            goto out_quiet;
        }
        seed = (uint64_t)sv;
    }
    if (!(train_opts = calloc((size_t)2 * opt.n + 1, sizeof(char *)))) goto out;
    int nt = 0;
    for (int i = 0; i < opt.n; i++) /* a later setting of the same option wins in train's getopt too */
        if (in_list(JOB_OPTS, opt.name[i])) {
            char *flag = malloc(strlen(opt.name[i]) + 3);
            if (!flag) goto out;
            sprintf(flag, "--%s", opt.name[i]);
            train_opts[nt++] = flag;
            train_opts[nt++] = opt.value[i];
        }
    view v = {.tty = isatty(STDERR_FILENO), .json = json, .accuracy = NAN, .cat = cat, .comms = p.n_comms > 0};
    scv_relaunch_opts ro = {.train_opts = exec ? NULL : train_opts, .cluster = cl, .vm_type = p.vm_type,
                            .catalog = get(&opt, "catalog"), .exec = exec, .hostfile = hosts, .seed = seed};
    if ((!strcmp(dname, "elastic")  ? scv_elastic_driver_new
         : !strcmp(dname, "exec") ? scv_exec_driver_new
                                  : scv_relaunch_driver_new)(&ro, &drv, &err))
        goto out;
    fprintf(stderr, "scavenger run: %s (%s), search %s, state in %s/\n", resume ? "resuming" : "a new run", job_key,
            scv_search_name(p.search), state_dir);
    scv_run_observer obs = {.ctx = &v, .on_event = on_event};
    int st = scv_run(&p, drv, &obs, &res, &err);
    if (st == SCV_EINTR) {
        fprintf(stderr, "\nscavenger run: interrupted; the checkpoint is kept: scavenger run --resume %lld%s%s\n",
                res.run_id, dbarg ? " --db " : "", dbarg ? dbarg : "");
        rc = EXIT_INTR;
        goto out_quiet;
    }
    if (st) {
        if (res.run_id) fprintf(stderr, "scavenger run: run %lld failed; its files are in %s\n", res.run_id, res.run_dir);
        goto out;
    }
    const char *rep = get(&opt, "report") ? get(&opt, "report") : res.run_dir;
    if (scv_run_report_write(&p, &res, rep, &err)) goto out;
    char at[32], ac[32];
    scv_fmt_time(res.actual_time_s, at, sizeof at);
    scv_fmt_usd(res.actual_cost, ac, sizeof ac);
    char pt[32] = "", band[96] = "";
    if (isfinite(res.predicted_time_s) && !res.decision_relative) {
        scv_fmt_time(res.predicted_time_s, pt, sizeof pt);
        if (isfinite(res.predicted_lo_s)) {
            char lo[32], hi[32];
            scv_fmt_time(res.predicted_lo_s, lo, sizeof lo);
            scv_fmt_time(res.predicted_hi_s, hi, sizeof hi);
            snprintf(band, sizeof band, ", band %s to %s", lo, hi);
        }
    }
    char first[96] = "", tgt[64];
    if (res.decision_relative && isfinite(res.absolute_time_s)) {
        char ft[32];
        scv_fmt_time(res.absolute_time_s, ft, sizeof ft);
        snprintf(first, sizeof first, " (first predicted after %.2f epochs: %s)", res.absolute_at_epochs, ft);
    }
    if (p.target_loss > 0) snprintf(tgt, sizeof tgt, "training loss %.4f, ", p.target_loss);
    else tgt[0] = 0;
    fprintf(json ? stderr : stdout,
            "%s: %stest accuracy %.4f after %.2f epochs in %s, %s%s%s%s%s%s; report in %s/report.md (run %lld)\n",
            res.reached ? "target reached" : "target NOT reached", tgt, res.accuracy, res.epochs, at, ac,
            pt[0] ? " (predicted at the decision: " : "", pt, band, pt[0] ? ")" : "", first, rep, res.run_id);
    if (json) {
        char *s = scv_run_report_json(&p, &res);
        if (!s) {
            scv_err_set(&err, SCV_ENOMEM, "out of memory");
            goto out;
        }
        printf("%s\n", s);
        free(s);
    }
    rc = res.reached ? EXIT_OK : EXIT_FAIL;
    goto out_quiet;
out:
    if (rc != EXIT_OK && rc != EXIT_USAGE) fprintf(stderr, "scavenger run: %s\n", err.msg[0] ? err.msg : "failed");
out_quiet:
    scv_run_result_free(&res);
    scv_job_driver_free(drv);
    for (int i = 0; train_opts && train_opts[i]; i += 2) free((char *)train_opts[i]);
    free(train_opts);
    free(jj);
    scv_store_close(db);
    scv_catalog_free(cat);
    pairs_free(&opt);
    return rc;
}
