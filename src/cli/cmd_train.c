/*
 * cmd_train.c - `scavenger train`: reads its options into scv_train_params through its
 * option table (each row's value read by the options' one reader, core/option.c; a
 * segment's options, the ones the relaunch driver and sweep write, through the segment
 * codec, io/segwire.c, which writes them), launches the ranks through mpirun when
 * --workers K > 1 and this process is not already a rank, and reports the result (a
 * progress line on a terminal, a JSON summary with --json).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "scv.h"
#include "../core/util.h"
#include "../io/segwire.h"
#include "../io/io.h"
#include "../model/stoprule.h"
#include "../runtime/comm.h"
#include "../runtime/cluster.h"
#include "../runtime/launch.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRAIN_USAGE "usage: scavenger train [options]\n"

enum {
    O_MODEL = 256, O_HIDDEN, O_DATASET, O_WORKERS, O_THREADS, O_BATCH, O_SPLIT, O_LR, O_MOM,
    O_WD, O_SCALING, O_BASE, O_WARM, O_DECAY, O_STEP, O_GAMMA, O_HORIZON, O_EPOCHS, O_ITERS,
    O_TARGET, O_TLOSS, O_ELASTIC, O_EVAL, O_SEED, O_METRICS, O_CKPT, O_CKPT_EVERY, O_RESUME, O_JSON, O_PROGRESS, O_NO_STATS, O_VM, O_CLUSTER, O_STOP_NOISE, O_STOP_TIME, O_NO_EVAL, O_EVAL_EPOCHS,
    O_CATALOG, O_EVAL_SUBSET, O_TWINDOW, O_TTOL, O_THIST, O_STRAGGLER, O_HOSTS, O_DYNB, O_MINSHARE, O_SRATE, O_SBOUNDS,
    O_SBUFFER, O_SFULL, O_SNONIID, O_SINJECT, O_COMPRESS, O_COLL, O_ARROOT, O_SELSYNC
};

#define JOBKEY SCV_OPT_FROM_JOB /* arg, help and value: the job key's (src/search/jobopts.c) */
#define SEG SCV_OPT_SEGMENT      /* a segment's option: read by the segment codec (io/segwire.c) */

/* What train's options set: the trainer's parameters first (the job table's trainer rows
 * are offsets into scv_train_params, so into this struct too), the segment's options as
 * the codec reads them, and the shell's own. */
typedef struct train_cli {
    scv_train_params p;
    scv_segwire seg;            /* the SEG rows, read by the codec; copied into p (seg_to_params) */
    const char *stream_spec;    /* --stream-rate */
    const char *cluster, *catalog, *hosts;
    int json, progress;         /* progress: the index of auto|always|never */
    unsigned char given[128];   /* given[i]: row i of TRAIN_OPTIONS was given */
    scv_segwire wire;           /* the contract's variables, read (apply_contract) */
} train_cli;
_Static_assert(offsetof(train_cli, p) == 0, "the job rows' offsets are scv_train_params's");

static const char *const PROGRESS[] = {"auto", "always", "never"};

#define TP(m) offsetof(scv_train_params, m)
#define CP(m) offsetof(train_cli, m)
#define INT64_MAX_D 9223372036854775807.0
#define VSTR(m) {SCV_VT_STR, 1, 0, 0, m, 0, 0, NULL}
#define VDBL(m, lo, hi, b) {SCV_VT_DBL, lo, hi, b, m, 0, 0, NULL}
#define VI64(m, lo, hi) {SCV_VT_I64, lo, hi, 0, m, 0, 0, NULL}
#define VENUM(m) {SCV_VT_ENUM, 0, 0, 0, m, 0, 0, NULL}
#define VFLAG(m) {SCV_VT_FLAG, 0, 0, 0, m, 0, 0, NULL}
#define VSET(fn) {SCV_VT_SET, 0, 0, 0, 0, 0, 0, fn}
#define VSEG VSET(segment_option)

/* A segment's option: the codec's own reading of it, into c->seg (label: "--NAME"). */
static int segment_option(void *base, const char *text, const char *label, scv_err *err)
{
    return scv_segwire_arg(&((train_cli *)base)->seg, label, text, err);
}

/* "A,B" into a and b, each read as v says (labelled "LABEL 'TEXT': NAME_A", "...: NAME_B") */
static int read_two(const char *text, const char *label, const char *form, const scv_value *v, void *a, void *b,
                    scv_err *err)
{
    const char *comma = strchr(text, ',');
    char first[64], sub[400];
    if (!comma || comma - text >= (int)sizeof first || strchr(comma + 1, ','))
        return scv_err_set(err, SCV_EINVAL, "%s '%s': expected %s", label, text, form);
    snprintf(first, sizeof first, "%.*s", (int)(comma - text), text);
    const char *names = strchr(form, ' '); /* form: "MIN,MAX with ...": the names before the space */
    int la = (int)strcspn(form, ","), lb = (int)((names ? names - form : (long)strlen(form)) - la - 1);
    snprintf(sub, sizeof sub, "%s '%s': %.*s", label, text, la, form);
    if (!label[0]) snprintf(sub, sizeof sub, "%.*s", la, form); /* the element alone */
    int rc = scv_value_read(v, NULL, sub, a, first, err);
    snprintf(sub, sizeof sub, "%s '%s': %.*s", label, text, lb, form + la + 1);
    if (!label[0]) snprintf(sub, sizeof sub, "%.*s", lb, form + la + 1);
    return rc ? rc : scv_value_read(v, NULL, sub, b, comma + 1, err);
}

/* --stream-bounds MIN,MAX */
static int set_stream_bounds(void *base, const char *text, const char *label, scv_err *err)
{
    scv_stream_policy *sp = &((train_cli *)base)->p.stream_policy;
    const scv_value v = VI64(0, 1, 1 << 24);
    int64_t lo = 0, hi = 0;
    int rc = read_two(text, label, "MIN,MAX with 1 <= MIN <= MAX <= 16777216 (samples per worker and step; "
                      "ScaDLES: 8,1024)", &v, &lo, &hi, err);
    if (!rc && hi < lo)
        return scv_err_set(err, SCV_EINVAL, "%s '%s': expected MIN,MAX with MIN <= MAX", label, text);
    if (!rc) sp->b_min = lo, sp->b_max = hi;
    return rc;
}

/* --stream-inject ALPHA,BETA (its message's form is the option's own: "--stream-inject
 * 0,0.5: expected ALPHA,BETA, each in (0, 1] (...)") */
static int set_stream_inject(void *base, const char *text, const char *label, scv_err *err)
{
    scv_train_params *p = &((train_cli *)base)->p;
    const scv_value v = VDBL(0, 0, 1, SCV_VB_OPEN_LO);
    double a = 0, b = 0;
    scv_err e = {0};
    int rc = read_two(text, "", "ALPHA,BETA", &v, &a, &b, &e);
    if (rc)
        return scv_err_set(err, rc, "%s %s: expected ALPHA,BETA, each in (0, 1] (e.g. 0.5,0.5: half the workers share "
                                    "half their samples)%s%s", label, text, e.msg[0] == ' ' ? "" : "; ",
                           e.msg[0] == ' ' ? "" : e.msg);
    p->inject_alpha = a, p->inject_beta = b;
    return SCV_OK;
}

/* --compress none | topk:CF (the codec's form) | gravac[:EPS] */
static int set_compress(void *base, const char *text, const char *label, scv_err *err)
{
    train_cli *c = base;
    scv_exchange_opts *x = &c->p.comm;
    int rc = SCV_OK;
    if (!strcmp(text, "none")) {
        x->compress = SCV_COMPRESS_NONE;
    } else if (!strncmp(text, "topk:", 5)) {
        if (!(rc = scv_segwire_arg(&c->seg, label, text, err))) x->compress = SCV_COMPRESS_TOPK, x->cf = c->seg.compress_cf;
    } else if (!strcmp(text, "gravac") || !strncmp(text, "gravac:", 7)) {
        const scv_value eps = VDBL(offsetof(scv_exchange_opts, gravac.eps), 0, 1, SCV_VB_OPEN_LO | SCV_VB_OPEN_HI);
        char sub[300];
        snprintf(sub, sizeof sub, "%s '%s': EPS", label, text);
        if (text[6] && !(rc = scv_value_read(&eps, NULL, sub, x, text + 7, err))) x->compress = SCV_COMPRESS_GRAVAC;
        if (!text[6]) x->compress = SCV_COMPRESS_GRAVAC;
    } else {
        rc = scv_err_set(err, SCV_EINVAL, "%s '%s': expected none, topk:CF (1 < CF <= 1e6, e.g. topk:100) or "
                                          "gravac[:EPS] (0 < EPS < 1, default 0.7)", label, text);
    }
    return rc;
}

/* --selsync lssr:R | 0 (the codec's forms) | DELTA */
static int set_selsync(void *base, const char *text, const char *label, scv_err *err)
{
    train_cli *c = base;
    scv_exchange_opts *x = &c->p.comm;
    int rc;
    if (!strcmp(text, "0") || !strncmp(text, "lssr:", 5)) {
        if (!(rc = scv_segwire_arg(&c->seg, label, text, err))) x->sel.lssr = c->seg.selsync_lssr, x->sel.delta = 0;
    } else {
        const scv_value delta = VDBL(offsetof(scv_exchange_opts, sel.delta), 0, 1e6, 0);
        scv_err e = {0};
        if ((rc = scv_value_read(&delta, NULL, label, x, text, &e)))
            return scv_err_set(err, rc, "%s; or lssr:R, a share 0 < R < 1 of local steps (DELTA: the paper's 0.25 to "
                                        "0.5; 0 = synchronous SGD)", e.msg);
        x->sel.lssr = 0;
    }
    if (!rc) x->selsync = 1;
    return rc;
}

/* --straggler-fraction F: the rule's defaults with F (0 = off) */
static int set_straggler(void *base, const char *text, const char *label, scv_err *err)
{
    scv_train_params *p = &((train_cli *)base)->p;
    const scv_value v = VDBL(0, 0, 1, SCV_VB_OPEN_HI);
    double f = 0;
    int rc = scv_value_read(&v, NULL, label, &f, text, err);
    if (!rc) p->straggler = scv_straggler_rule_default(), p->straggler.fraction = f;
    return rc;
}

/* train's options, declared once: getopt_long's table, --help, the completion and the man
 * page are made from it (opt.c), and each row says how its value is read */
const scv_option TRAIN_OPTIONS[] = {
    {NULL, NULL, "Job:", 0, 0, NULL, {0}},
    {"model", NULL, NULL, O_MODEL, JOBKEY, NULL, {0}},
    {"hidden", NULL, NULL, O_HIDDEN, JOBKEY, NULL, {0}},
    {"dataset", NULL, NULL, O_DATASET, JOBKEY, NULL, {0}},
    {"workers", "K", "ranks; launched through mpirun unless already a rank (1)", O_WORKERS, SEG, NULL, VSEG},
    {"cluster", "NAME", "run the ranks on an emulated cluster (scavenger cluster)", O_CLUSTER, 0, NULL,
     VSTR(CP(cluster))},
    {"hosts", "FILE",
     "run the ranks on real machines: an Open MPI hostfile (ssh;\n"
     "SCV_RSH_AGENT replaces it); the data and this program must be\n"
     "at the same paths there",
     O_HOSTS, 0, NULL, VSTR(CP(hosts))},
    {"threads", NULL, NULL, O_THREADS, JOBKEY, NULL, {0}},
    {"batch", "B", "global batch (64), split over the ranks", O_BATCH, SEG, NULL, VSEG},
    {"batch-split", "W,...", "per-rank shares of B (K positive weights; default even)", O_SPLIT, SEG, NULL, VSEG},
    {"dynamic-batching", NULL,
     "the shares follow each rank's measured throughput (every 20\n"
     "iterations, 5% dead-band; --batch-split gives the first ones)",
     O_DYNB, SEG, NULL, VSEG},
    {"min-share", "F",
     "the floor of a worker's share (default 0.02); a worker whose\n"
     "throughput-proportional share stays under it is reported as\n"
     "one dynamic batching cannot absorb (`scavenger run`'s\n"
     "elastic driver replaces it)",
     O_MINSHARE, 0, NULL, VDBL(TP(dynbatch.min_share), 0, 0.5, SCV_VB_OPEN_LO | SCV_VB_OPEN_HI)},
    {NULL, NULL, "Streaming (ScaDLES; not with --batch-split or --dynamic-batching):", 0, 0, NULL, {0}},
    {"stream-rate", "R,...|FILE",
     "worker k receives a stream of R_k samples/s (FILE: lines\n"
     "'SECONDS r1 r2 ...', piecewise constant from 0, # comments);\n"
     "each step takes what has arrived since the last, waiting\n"
     "until every worker has MIN; --batch is then nominal",
     O_SRATE, 0, NULL, VSTR(CP(stream_spec))},
    {"stream-bounds", "MIN,MAX", "a worker's batch per step (default 8,1024)", O_SBOUNDS, 0, NULL,
     VSET(set_stream_bounds)},
    {"stream-buffer", "MODE",
     "truncate: keep at most MAX samples, dropping the oldest;\n"
     "persist: keep every sample (default truncate)",
     O_SBUFFER, 0, "truncate|persist", VENUM(TP(stream_policy.buffer))},
    {"stream-full-batch", NULL,
     "the conventional baseline: every step waits until each\n"
     "worker has its full even share of --batch",
     O_SFULL, 0, NULL, VFLAG(TP(stream_policy.full_batch))},
    {"stream-noniid", "SKEW",
     "non-IID data: worker k's share of each step's batch holds a\n"
     "fraction SKEW (0..1) of its home classes (the classes dealt\n"
     "round-robin to the workers), the rest at random; 0 = IID\n"
     "(default); also without --stream-rate",
     O_SNONIID, 0, NULL, VDBL(TP(noniid_skew), -INFINITY, INFINITY, 0)},
    {"stream-inject", "ALPHA,BETA",
     "data injection (SelSync/ScaDLES): each step ceil(ALPHA K)\n"
     "random workers share a fraction BETA of their own samples with\n"
     "every other worker, b' = b / (1 + ALPHA BETA K) own samples each\n"
     "(0 < ALPHA, BETA <= 1; emulated: the copies are indices)",
     O_SINJECT, 0, NULL, VSET(set_stream_inject)},
    {NULL, NULL, "Communication efficiency (docs/MODEL.md; one of compression or SelSync):", 0, 0, NULL, {0}},
    {"compress", "C",
     "none | topk:CF (Top-k with error feedback, k = params / CF)\n"
     "| gravac[:EPS] (GraVAC: CF adapts; a factor must keep a\n"
     "compression gain of EPS, default 0.7)",
     O_COMPRESS, 0, NULL, VSET(set_compress)},
    {"collective", "C",
     "auto | allgather | artopk: the sparse exchange (auto: the\n"
     "cheaper by the alpha-beta model fitted on the exchanges)",
     O_COLL, SEG, "auto|allgather|artopk", VSEG},
    {"artopk-root", "R", "star (round robin) | var (largest gradient): whose indices", O_ARROOT, 0, "star|var",
     VENUM(TP(comm.var_root))},
    {"selsync", "DELTA|lssr:R",
     "SelSync: synchronise only when some worker's |g|^2 moved by\n"
     "DELTA (relative, EWMA of 25 steps); 0 = synchronous SGD;\n"
     "lssr:R aims at a share R of local steps: DELTA follows a\n"
     "quantile of the last 50 steps' largest change (R, corrected\n"
     "by the share of local steps so far)",
     O_SELSYNC, 0, NULL, VSET(set_selsync)},
    {NULL, NULL, "Optimiser:", 0, 0, NULL, {0}},
    {"lr", NULL, NULL, O_LR, JOBKEY, NULL, {0}},
    {"momentum", NULL, NULL, O_MOM, JOBKEY, NULL, {0}},
    {"weight-decay", NULL, NULL, O_WD, JOBKEY, NULL, {0}},
    {"lr-scaling", NULL, NULL, O_SCALING, JOBKEY, NULL, {0}},
    {"base-batch", NULL, NULL, O_BASE, JOBKEY, NULL, {0}},
    {"warmup-epochs", NULL, NULL, O_WARM, JOBKEY, NULL, {0}},
    {"lr-decay", NULL, NULL, O_DECAY, JOBKEY, NULL, {0}},
    {"lr-step-epochs", NULL, NULL, O_STEP, JOBKEY, NULL, {0}},
    {"lr-gamma", NULL, NULL, O_GAMMA, JOBKEY, NULL, {0}},
    {"lr-horizon", NULL, NULL, O_HORIZON, JOBKEY, NULL, {0}},
    {NULL, NULL, "Stopping (at least one):", 0, 0, NULL, {0}},
    {"epochs", "E", "stop after E epochs (fractions allowed)", O_EPOCHS, SEG, NULL, VSEG},
    {"iterations", "N", "stop after N iterations in total (resumed ones count)", O_ITERS, SEG, NULL, VSEG},
    {"target-accuracy", "A", "stop once test accuracy >= A (0..1)", O_TARGET, SEG, NULL, VSEG},
    {"target-loss", "L", "or once the period-mean training loss <= L (see --target-window)", O_TLOSS, SEG, NULL, VSEG},
    {"straggler-fraction", "F",
     "write each worker's compute time per iteration, and a\n"
     "straggler line when a worker's smoothed throughput stays\n"
     "under F of the median's for 5 s (Or et al.: 0.8)",
     O_STRAGGLER, 0, NULL, VSET(set_straggler)},
    {"eval-every", "N", "evaluate every N iterations (default once an epoch)", O_EVAL, 0, NULL,
     VI64(TP(eval_every), 1, INT64_MAX_D)},
    {"eval-every-epochs", "F", "evaluate every F epochs (e.g. 0.25)", O_EVAL_EPOCHS, SEG, NULL, VSEG},
    {"eval-subset", "N",
     "periodic evaluations use N test samples, the test set's slices\n"
     "of N in turn (0 = the whole test set, the default); the final\n"
     "evaluation and confirmations use the whole test set",
     O_EVAL_SUBSET, SEG, NULL, VSEG},
    {"target-window", "W",
     "reached when the mean of the last W periodic evaluations is\n"
     ">= the target (default 1: a single evaluation)",
     O_TWINDOW, SEG, NULL, VSEG},
    {"target-confirm-tol", "T",
     "with --eval-subset: reached only if the whole test set\n"
     "also scores >= target - T (default 0.005); otherwise training\n"
     "continues",
     O_TTOL, 0, NULL, VDBL(TP(target_confirm_tol), 0, 1, SCV_VB_OPEN_HI)},
    {"target-history", "A,...",
     "earlier periodic accuracies of this run (oldest first) that\n"
     "prefill the window when resuming (default none)",
     O_THIST, SEG, NULL, VSEG},
    {"stop-noise-stable", "W:TOL",
     "stop once the noise scale B_simple of two consecutive\n"
     "windows of W iterations agrees within TOL (K >= 2)",
     O_STOP_NOISE, SEG, NULL, VSEG},
    {"stop-time-stable", "R[:M]",
     "stop once the mean iteration time is known within a\n"
     "relative standard error R (after M iterations, default 10)",
     O_STOP_TIME, SEG, NULL, VSEG},
    {NULL, NULL, "Output and state:", 0, 0, NULL, {0}},
    {"seed", NULL, NULL, O_SEED, JOBKEY, NULL, {0}},
    {"metrics", "FILE", "one JSON object per iteration (and per evaluation)", O_METRICS, SEG, NULL, VSEG},
    {"vm-type", "TYPE",
     "catalog VM type the measurements stand for (metrics);\n"
     "checked against the catalog; with --cluster the ranks go\n"
     "on that type's VMs first",
     O_VM, 0, NULL, VSTR(TP(vm_type))},
    {"catalog", "CSV", "VM catalog for --vm-type (default data/vm-catalog.csv)", O_CATALOG, 0, NULL, VSTR(CP(catalog))},
    {"checkpoint", "DIR", "write DIR/checkpoint.scv at the end (and every N)", O_CKPT, SEG, NULL, VSEG},
    {"checkpoint-every", "N", "also every N iterations", O_CKPT_EVERY, SEG, NULL, VSEG},
    {"resume", NULL, "continue from the checkpoint in DIR (any K and B)", O_RESUME, SEG, NULL, VSEG},
    {"json", NULL, "last stdout line is a JSON summary", O_JSON, 0, NULL, VFLAG(CP(json))},
    {"progress", "WHEN", "auto | always | never (auto: on a terminal)", O_PROGRESS, 0, "auto|always|never",
     VENUM(CP(progress))},
    {"no-grad-stats", NULL, "skip the gradient-norm statistics (to measure their cost)", O_NO_STATS, 0, NULL,
     VFLAG(TP(no_grad_stats))},
    {"no-final-eval", NULL,
     "no test-set evaluation at the end of this invocation, unless\n"
     "the target or --epochs ends it and the last evaluation was\n"
     "on a subset (then the whole test set is evaluated)",
     O_NO_EVAL, SEG, NULL, VSEG},
    {"elastic-control", "DIR",
     "the elastic job driver's mode: the job stays up and trains one\n"
     "segment per command in DIR/cmd (answers in DIR/reply), changing\n"
     "K and B in place (docs/RUN.md); no stopping rule is needed",
     O_ELASTIC, 0, NULL, VSTR(TP(elastic_control))},
    {"help", NULL, "this text (also -h)", 0, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

_Static_assert(sizeof TRAIN_OPTIONS / sizeof TRAIN_OPTIONS[0] <= sizeof((train_cli *)0)->given, "train_cli.given");

static void help(void)
{
    printf(TRAIN_USAGE "\nSynchronous data-parallel SGD on K MPI ranks with global batch B.\n\n");
    cli_opt_help(stdout, TRAIN_OPTIONS, 24, 0);
    printf("\nExit status: 0 done, 1 failure (or target not reached), 2 usage error,\n"
           "130 interrupted (a checkpoint is written when --checkpoint is given).\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    return cli_usage_error("train", TRAIN_USAGE, fmt, arg);
}

/* Only rank 0 of a job (or a process outside one) reports, so a usage error found by every
 * rank is printed once. */
static int reports(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    return !r || !strcmp(r, "0");
}

/* --vm-type must name a type of the catalog (the planner looks it up later). Returns an
 * exit code: EXIT_USAGE naming --vm-type and the catalog, EXIT_FAIL when the catalog cannot
 * be read. */
static int check_vm_type(const char *vm_type, const char *catalog)
{
    char buf[4200];
    if (!catalog) catalog = scv_default_data_file("vm-catalog.csv", buf, sizeof buf);
    scv_catalog *cat = NULL;
    scv_err err = {0};
    if (scv_catalog_load(catalog, &cat, &err) != SCV_OK) {
        if (reports())
            fprintf(stderr, "scavenger train: --vm-type %s needs the VM catalog: %s (--catalog CSV)\n",
                    vm_type, err.msg);
        return EXIT_FAIL;
    }
    int found = scv_catalog_find(cat, vm_type) != NULL;
    char near[160];
    scv_catalog_did_you_mean(cat, vm_type, near, sizeof near);
    scv_catalog_free(cat);
    if (found) return EXIT_OK;
    if (reports())
        fprintf(stderr, "scavenger train: --vm-type '%s': not a VM type of %s (the catalog the "
                        "planner prices with; see its instance_type column or `scavenger vms`, or pass --catalog "
                        "CSV)%s\n", vm_type, catalog, near);
    return EXIT_USAGE;
}

/* The trainer contract (docs/TRAINER-CONTRACT.md): started by the exec driver, the built-in
 * trainer takes its configuration from the SCV_* variables (they win over the options),
 * read by the segment codec (io/segwire.c, the one reading of the environment form), and
 * writes scavenger-state.json with its checkpoints. w holds the strings p then points to.
 * Returns EXIT_USAGE naming a bad variable, else -1. */
static const char *env_get(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

static int apply_contract(scv_train_params *p, scv_segwire *w, double *weights, int *n_weights, int *contract)
{
    *contract = getenv("SCV_BATCH") && getenv("SCV_METRICS") && getenv("SCV_CHECKPOINT_DIR");
    if (!*contract) return -1;
    memset(w, 0, sizeof *w);
    w->workers = 1, w->seed = 1; /* the contract's defaults */
    scv_err err = {0};
    if (scv_segwire_env_read(w, env_get, NULL, &err) != SCV_OK) {
        if (reports()) fprintf(stderr, "scavenger train: %s\n", err.msg);
        return EXIT_USAGE;
    }
    p->workers = w->workers, p->batch = w->batch, p->iterations = w->until_iterations, p->seed = w->seed;
    p->epochs = w->epochs, p->eval_every_epochs = w->eval_every_epochs;
    *n_weights = w->n_split;
    memcpy(weights, w->split, sizeof(double) * (size_t)w->n_split);
    p->metrics_path = w->metrics;
    p->checkpoint_dir = w->checkpoint_dir;
    p->resume = w->resume;
    if (w->probe) /* one iteration, no checkpoint */
        p->iterations = 1, p->checkpoint_dir = NULL, p->resume = 0;
    if (p->iterations && !(p->epochs > 0)) p->epochs = 0;
    p->contract_state = 1;
    p->no_final_eval = 1; /* the driver decides; the run's end is evaluated by the loop's rules */
    return -1;
}

static int train_checked(train_cli *f, int argc, char **argv);

/* Whether the option of id was given. */
static int given(const train_cli *f, int id)
{
    for (const scv_option *o = TRAIN_OPTIONS; o->name || o->help; o++)
        if (o->name && o->id == id) return f->given[o - TRAIN_OPTIONS];
    return 0;
}

/* The segment's options as the codec read them into p (seg starts as p's defaults, so an
 * option left out keeps its default). */
static void seg_of_params(scv_segwire *w, const scv_train_params *p)
{
    memset(w, 0, sizeof *w);
    w->workers = p->workers, w->batch = p->batch, w->target_window = p->target_window;
    w->final_eval = !p->no_final_eval, w->collective = p->comm.collective;
}

static void seg_to_params(train_cli *f)
{
    const scv_segwire *w = &f->seg;
    scv_train_params *p = &f->p;
    p->workers = w->workers, p->batch = w->batch, p->iterations = w->until_iterations, p->epochs = w->epochs;
    p->target_accuracy = w->target_accuracy, p->target_loss = w->target_loss;
    p->eval_every_epochs = w->eval_every_epochs, p->eval_subset = w->eval_subset, p->target_window = w->target_window;
    p->stop_noise_window = w->noise_window, p->stop_noise_tol = w->noise_tol;
    p->stop_time_rse = w->time_rse, p->stop_time_min = w->time_min;
    p->no_final_eval = !w->final_eval, p->checkpoint_every = w->checkpoint_every;
    p->dynamic_batching = w->dynamic_batching, p->comm.collective = w->collective;
    p->metrics_path = w->metrics[0] ? w->metrics : NULL;
    p->checkpoint_dir = w->checkpoint_dir[0] ? w->checkpoint_dir : NULL;
    p->resume = w->resume;
    if (given(f, O_THIST)) p->n_target_history = w->n_history, p->target_history = w->history;
}

int cmd_train(int argc, char **argv)
{
    static train_cli f;
    memset(&f, 0, sizeof f);
    f.p = scv_train_params_default();
    seg_of_params(&f.seg, &f.p);
    struct option opts[sizeof TRAIN_OPTIONS / sizeof TRAIN_OPTIONS[0] + 2];
    if (cli_opt_getopt(TRAIN_OPTIONS, opts, sizeof opts / sizeof opts[0]) < 0) return EXIT_FAIL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            help();
            return EXIT_OK;
        }
        if (c == ':') return usage_error("option '%s' needs a value", argv[optind - 1]);
        const scv_option *o = TRAIN_OPTIONS;
        while ((o->name || o->help) && !(o->name && o->id == c)) o++;
        if (!o->name) return usage_error("unknown option '%s'", argv[optind - 1]);
        scv_err err = {0};
        if (cli_opt_read(o, &f, optarg, &err)) return usage_error("%s", err.msg); /* the row says how */
        f.given[o - TRAIN_OPTIONS] = 1;
    }
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    seg_to_params(&f);
    return train_checked(&f, argc, argv);
}

/* The combinations of the options (and the trainer contract's variables) checked, the
 * stream's rates read; then train_parsed. Returns the exit status. */
/* The options as parsed (p.stream set): checks them, then trains here or launches the ranks.
 * Returns the exit code. */
static int train_parsed(scv_train_params p, int argc, char **argv, int json, const char *progress,
                        const char *cluster, const char *catalog, const char *hosts, int contract);

static int train_checked(train_cli *f, int argc, char **argv)
{
    scv_train_params p = f->p;
    int contract = 0, crc = apply_contract(&p, &f->wire, f->seg.split, &f->seg.n_split, &contract);
    if (crc >= 0) return crc;
    int min_share = given(f, O_MINSHARE);
    if (min_share && !p.dynamic_batching) return usage_error("--min-share %s: only with --dynamic-batching", "F");
    if (min_share && p.dynbatch.min_share * p.workers >= 0.9) { /* K as the contract may have set it */
        char m[96];
        snprintf(m, sizeof m, "%g: must be under 0.9/K = %.4g for --workers %d", p.dynbatch.min_share,
                 0.9 / p.workers, p.workers);
        return usage_error("--min-share %s (an even share is 1/K)", m);
    }
    const char *progress = contract ? "never" : PROGRESS[f->progress];
    if (f->seg.n_split) {
        if (f->seg.n_split != p.workers) {
            fprintf(stderr, "scavenger train: --batch-split has %d weights for --workers %d\n", f->seg.n_split,
                    p.workers);
            return EXIT_USAGE;
        }
        p.rank_weights = f->seg.split;
    }
    const char *stream_opt = given(f, O_SBOUNDS)   ? "--stream-bounds"
                             : given(f, O_SBUFFER) ? "--stream-buffer"
                             : given(f, O_SFULL)   ? "--stream-full-batch"
                                                   : NULL;
    const char *coll_opt = given(f, O_COLL) ? "--collective" : given(f, O_ARROOT) ? "--artopk-root" : NULL;
    if (stream_opt && !f->stream_spec) return usage_error("%s needs --stream-rate", stream_opt);
    if (coll_opt && p.comm.compress == SCV_COMPRESS_NONE)
        return usage_error("%s: only with --compress (how a compressed gradient travels)", coll_opt);
    if (p.comm.selsync && p.comm.compress != SCV_COMPRESS_NONE)
        return usage_error("%s and --compress: choose one (SelSync's local steps send nothing to compress)",
                           "--selsync");
    if (p.stream_policy.full_batch && given(f, O_SBOUNDS))
        return usage_error("%s: not with --stream-full-batch (its bounds are each worker's share of --batch)",
                           "--stream-bounds");
    scv_stream_rates *rates = NULL;
    if (f->stream_spec) {
        scv_err err = {0};
        int src = scv_stream_rates_parse(f->stream_spec, p.workers, &rates, &err);
        if (src) {
            if (reports()) fprintf(stderr, "scavenger train: %s\n", err.msg);
            return src == SCV_EINVAL ? EXIT_USAGE : EXIT_FAIL;
        }
        p.stream = rates;
    }
    int rc = train_parsed(p, argc, argv, f->json, progress, f->cluster, f->catalog, f->hosts, contract);
    scv_stream_rates_free(rates);
    return rc;
}

static int train_parsed(scv_train_params p, int argc, char **argv, int json, const char *progress,
                        const char *cluster, const char *catalog, const char *hosts, int contract)
{
    scv_err err = {0};
    if (scv_train_params_check(&p, &err) != SCV_OK) {
        fprintf(stderr, "scavenger train: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (p.vm_type) {
        int vrc = check_vm_type(p.vm_type, catalog);
        if (vrc != EXIT_OK) return vrc;
    }
    if (!strcmp(progress, "auto")) progress = isatty(STDERR_FILENO) ? "always" : "never";
    p.progress = !strcmp(progress, "always");

    if (p.elastic_control && scv_comm_under_launcher()) { /* spawned processes start alike */
        p.elastic_argv = argv; /* {"train", options..., NULL} */
        p.elastic_hosts = getenv("SCV_ELASTIC_HOSTS");
    }
    if ((p.workers > 1 || cluster || p.elastic_control) && !scv_comm_under_launcher()) {
        /* Relaunch this command as K ranks; the ranks inherit the resolved progress mode and,
         * on a cluster, the VM type the measurements stand for. */
        char **args = calloc((size_t)argc + 5, sizeof(char *));
        if (!args) {
            fprintf(stderr, "scavenger train: out of memory\n");
            return EXIT_FAIL;
        }
        int na = 0;
        args[na++] = "train";
        for (int i = 1; i < argc; i++) args[na++] = argv[i];
        args[na++] = "--progress";
        args[na++] = (char *)progress;
        scv_cluster cl;
        if (cluster) {
            if (scv_cluster_load(cluster, &cl, &err)) {
                fprintf(stderr, "scavenger train: %s\n", err.msg);
                free(args);
                return EXIT_FAIL;
            }
            if (p.workers > cl.n) {
                fprintf(stderr, "scavenger train: --workers %d but cluster %s has %d VMs\n",
                        p.workers, cluster, cl.n);
                free(args);
                return EXIT_USAGE;
            }
            if (!p.vm_type) {
                args[na++] = "--vm-type";
                args[na++] = cl.vm[0].catalog_type;
            }
        }
        if (hosts && (cluster || p.elastic_control)) {
            fprintf(stderr, "scavenger train: --hosts: not with --cluster or --elastic-control\n");
            free(args);
            return EXIT_USAGE;
        }
        /* on a cluster the ranks go on the VMs of the type the measurements stand for
         * (its VMs first: a mixed cluster's other types after them) */
        scv_launch l = {.workers = p.workers, .threads = p.threads, .argv = args, .argc = na,
                        .cluster = cluster, .hostfile = hosts, .elastic = p.elastic_control != NULL,
                        .place_type = cluster ? (p.vm_type ? p.vm_type : cl.vm[0].catalog_type) : NULL};
        int st = 0;
        int lrc = scv_launch_mpirun(&l, &st, &err);
        free(args);
        if (lrc != SCV_OK) {
            fprintf(stderr, "scavenger train: %s\n", err.msg[0] ? err.msg : scv_strerror(lrc));
            return lrc == SCV_EINVAL ? EXIT_USAGE : EXIT_FAIL;
        }
        /* the ranks' own exit codes pass through; anything else (a crash) is a failure */
        return st == EXIT_OK || st == EXIT_USAGE || st == EXIT_INTR ? st : EXIT_FAIL;
    }

    scv_train_result r;
    int rc = scv_train_run(&p, &r, &err);
    /* the contract's exit codes: a stop on a signal is a clean end (0), a file that cannot be
     * written 3 */
    const int intr = contract ? EXIT_OK : EXIT_INTR, io = contract ? 3 : EXIT_FAIL;
    if (r.rank != 0) return rc == SCV_OK ? EXIT_OK : rc == SCV_EINTR ? intr : rc == SCV_EIO ? io : EXIT_FAIL;
    if (rc != SCV_OK && rc != SCV_EINTR) {
        fprintf(stderr, "scavenger train: %s\n", err.msg[0] ? err.msg : scv_strerror(rc));
        return rc == SCV_EIO ? io : EXIT_FAIL;
    }
    if (rc == SCV_EINTR) fprintf(stderr, "scavenger train: %s\n", err.msg);
    if (rc == SCV_EINTR && !r.model[0] && !json) return intr; /* stopped during setup: nothing trained */
    if (!json)
        printf("%s: %lld iterations (%.2f epochs) on %d worker%s, batch %d: test accuracy %.4f, "
               "loss %.4f, %.0f samples/s, %.1f s\n",
               r.model, (long long)r.iterations, r.epochs, r.workers, r.workers > 1 ? "s" : "",
               r.batch, r.test_accuracy, r.test_loss, r.samples_per_sec, r.wall_seconds);
    if (!json && p.stream)
        printf("streaming: waited %.2f s for data, %lld samples dropped by the buffers\n", r.stream_wait_seconds,
               (long long)r.stream_dropped);
    if (!json && r.n_home > 0 && (p.noniid_skew > 0 || p.inject_alpha > 0))
        printf("non-IID: skew %g, home-class share of the batches %.4f; injection: %lld copies (%.1f MB if "
               "sent)\n", p.noniid_skew, r.home_fraction_mean, (long long)r.injected_samples, r.injected_bytes / 1e6);
    if (!json && r.n_shares > 0) {
        printf("dynamic batching: %d adjustment%s, shares", r.rebalances, r.rebalances == 1 ? "" : "s");
        for (int k = 0; k < r.n_shares; k++) printf("%s%.3f", k ? " " : " ", r.shares[k]);
        putchar('\n');
    }
    if (!json) {
        if (r.reached_target) printf("target reached: %s\n", r.reached_by);
    } else {
        char buf[16384];
        scv_train_result_json(&r, buf, sizeof buf);
        printf("%s\n", buf);
    }
    if (rc == SCV_EINTR) return intr;
    if ((p.target_accuracy > 0 || p.target_loss > 0) && !r.reached_target &&
        (!strcmp(r.stopped_by, "epochs") || !strcmp(r.stopped_by, "max_epochs"))) {
        if (p.target_loss > 0)
            fprintf(stderr, "scavenger train: target training loss %.4f not reached (latest %.4f)\n",
                    p.target_loss, r.train_loss);
        else
            fprintf(stderr, "scavenger train: target accuracy %.4f not reached (best so far %.4f)\n",
                    p.target_accuracy, r.test_accuracy);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}
