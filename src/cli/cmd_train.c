/*
 * cmd_train.c - `scavenger train`: parses options into scv_train_params, launches the
 * ranks through mpirun when --workers K > 1 and this process is not already a rank, and
 * reports the result (a progress line on a terminal, a JSON summary with --json).
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

#include <errno.h>
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

#define JOBKEY SCV_OPT_FROM_JOB /* arg and help: the job key's (src/search/jobopts.c) */

/* train's options, declared once: getopt_long's table, --help, the completion and the man
 * page are made from it (opt.c) */
const scv_option TRAIN_OPTIONS[] = {
    {NULL, NULL, "Job:", 0, 0, NULL},
    {"model", NULL, NULL, O_MODEL, JOBKEY, NULL},
    {"hidden", NULL, NULL, O_HIDDEN, JOBKEY, NULL},
    {"dataset", NULL, NULL, O_DATASET, JOBKEY, NULL},
    {"workers", "K", "ranks; launched through mpirun unless already a rank (1)", O_WORKERS, 0, NULL},
    {"cluster", "NAME", "run the ranks on an emulated cluster (scavenger cluster)", O_CLUSTER, 0, NULL},
    {"hosts", "FILE", "run the ranks on real machines: an Open MPI hostfile (ssh;\n"
                      "SCV_RSH_AGENT replaces it); the data and this program must be\n"
                      "at the same paths there", O_HOSTS, 0, NULL},
    {"threads", NULL, NULL, O_THREADS, JOBKEY, NULL},
    {"batch", "B", "global batch (64), split over the ranks", O_BATCH, 0, NULL},
    {"batch-split", "W,...", "per-rank shares of B (K positive weights; default even)", O_SPLIT, 0, NULL},
    {"dynamic-batching", NULL, "the shares follow each rank's measured throughput (every 20\n"
                               "iterations, 5% dead-band; --batch-split gives the first ones)", O_DYNB, 0, NULL},
    {"min-share", "F", "the floor of a worker's share (default 0.02); a worker whose\n"
                       "throughput-proportional share stays under it is reported as\n"
                       "one dynamic batching cannot absorb (`scavenger run`'s\n"
                       "elastic driver replaces it)", O_MINSHARE, 0, NULL},
    {NULL, NULL, "Streaming (ScaDLES; not with --batch-split or --dynamic-batching):", 0, 0, NULL},
    {"stream-rate", "R,...|FILE", "worker k receives a stream of R_k samples/s (FILE: lines\n"
                                  "'SECONDS r1 r2 ...', piecewise constant from 0, # comments);\n"
                                  "each step takes what has arrived since the last, waiting\n"
                                  "until every worker has MIN; --batch is then nominal", O_SRATE, 0, NULL},
    {"stream-bounds", "MIN,MAX", "a worker's batch per step (default 8,1024)", O_SBOUNDS, 0, NULL},
    {"stream-buffer", "MODE", "truncate: keep at most MAX samples, dropping the oldest;\n"
                              "persist: keep every sample (default truncate)", O_SBUFFER, 0, "truncate|persist"},
    {"stream-full-batch", NULL, "the conventional baseline: every step waits until each\n"
                                "worker has its full even share of --batch", O_SFULL, 0, NULL},
    {"stream-noniid", "SKEW", "non-IID data: worker k's share of each step's batch holds a\n"
                              "fraction SKEW (0..1) of its home classes (the classes dealt\n"
                              "round-robin to the workers), the rest at random; 0 = IID\n"
                              "(default); also without --stream-rate", O_SNONIID, 0, NULL},
    {"stream-inject", "ALPHA,BETA", "data injection (SelSync/ScaDLES): each step ceil(ALPHA K)\n"
                                    "random workers share a fraction BETA of their own samples with\n"
                                    "every other worker, b' = b / (1 + ALPHA BETA K) own samples each\n"
                                    "(0 < ALPHA, BETA <= 1; emulated: the copies are indices)", O_SINJECT, 0, NULL},
    {NULL, NULL, "Communication efficiency (docs/MODEL.md; one of compression or SelSync):", 0, 0, NULL},
    {"compress", "C", "none | topk:CF (Top-k with error feedback, k = params / CF)\n"
                      "| gravac[:EPS] (GraVAC: CF adapts; a factor must keep a\n"
                      "compression gain of EPS, default 0.7)", O_COMPRESS, 0, NULL},
    {"collective", "C", "auto | allgather | artopk: the sparse exchange (auto: the\n"
                        "cheaper by the alpha-beta model fitted on the exchanges)", O_COLL, 0, "auto|allgather|artopk"},
    {"artopk-root", "R", "star (round robin) | var (largest gradient): whose indices", O_ARROOT, 0, "star|var"},
    {"selsync", "DELTA|lssr:R", "SelSync: synchronise only when some worker's |g|^2 moved by\n"
                                "DELTA (relative, EWMA of 25 steps); 0 = synchronous SGD;\n"
                                "lssr:R aims at a share R of local steps: DELTA follows a\n"
                                "quantile of the last 50 steps' largest change (R, corrected\n"
                                "by the share of local steps so far)", O_SELSYNC, 0, NULL},
    {NULL, NULL, "Optimiser:", 0, 0, NULL},
    {"lr", NULL, NULL, O_LR, JOBKEY, NULL},
    {"momentum", NULL, NULL, O_MOM, JOBKEY, NULL},
    {"weight-decay", NULL, NULL, O_WD, JOBKEY, NULL},
    {"lr-scaling", NULL, NULL, O_SCALING, JOBKEY, NULL},
    {"base-batch", NULL, NULL, O_BASE, JOBKEY, NULL},
    {"warmup-epochs", NULL, NULL, O_WARM, JOBKEY, NULL},
    {"lr-decay", NULL, NULL, O_DECAY, JOBKEY, NULL},
    {"lr-step-epochs", NULL, NULL, O_STEP, JOBKEY, NULL},
    {"lr-gamma", NULL, NULL, O_GAMMA, JOBKEY, NULL},
    {"lr-horizon", NULL, NULL, O_HORIZON, JOBKEY, NULL},
    {NULL, NULL, "Stopping (at least one):", 0, 0, NULL},
    {"epochs", "E", "stop after E epochs (fractions allowed)", O_EPOCHS, 0, NULL},
    {"iterations", "N", "stop after N iterations in total (resumed ones count)", O_ITERS, 0, NULL},
    {"target-accuracy", "A", "stop once test accuracy >= A (0..1)", O_TARGET, 0, NULL},
    {"target-loss", "L", "or once the period-mean training loss <= L (see --target-window)", O_TLOSS, 0, NULL},
    {"straggler-fraction", "F", "write each worker's compute time per iteration, and a\n"
                                "straggler line when a worker's smoothed throughput stays\n"
                                "under F of the median's for 5 s (Or et al.: 0.8)", O_STRAGGLER, 0, NULL},
    {"eval-every", "N", "evaluate every N iterations (default once an epoch)", O_EVAL, 0, NULL},
    {"eval-every-epochs", "F", "evaluate every F epochs (e.g. 0.25)", O_EVAL_EPOCHS, 0, NULL},
    {"eval-subset", "N", "periodic evaluations use the first N test samples, a fixed\n"
                         "held-out subset (0 = the whole test set, the default); the\n"
                         "final evaluation and confirmations use the whole test set", O_EVAL_SUBSET, 0, NULL},
    {"target-window", "W", "reached when the mean of the last W periodic evaluations is\n"
                           ">= the target (default 1: a single evaluation)", O_TWINDOW, 0, NULL},
    {"target-confirm-tol", "T", "with --eval-subset: reached only if the whole test set\n"
                                "also scores >= target - T (default 0.005); otherwise training\n"
                                "continues", O_TTOL, 0, NULL},
    {"target-history", "A,...", "earlier periodic accuracies of this run (oldest first) that\n"
                                "prefill the window when resuming (default none)", O_THIST, 0, NULL},
    {"stop-noise-stable", "W:TOL", "stop once the noise scale B_simple of two consecutive\n"
                                   "windows of W iterations agrees within TOL (K >= 2)", O_STOP_NOISE, 0, NULL},
    {"stop-time-stable", "R[:M]", "stop once the mean iteration time is known within a\n"
                                  "relative standard error R (after M iterations, default 10)", O_STOP_TIME, 0, NULL},
    {NULL, NULL, "Output and state:", 0, 0, NULL},
    {"seed", NULL, NULL, O_SEED, JOBKEY, NULL},
    {"metrics", "FILE", "one JSON object per iteration (and per evaluation)", O_METRICS, 0, NULL},
    {"vm-type", "TYPE", "catalog VM type the measurements stand for (metrics);\n"
                        "checked against the catalog; with --cluster the ranks go\n"
                        "on that type's VMs first", O_VM, 0, NULL},
    {"catalog", "CSV", "VM catalog for --vm-type (default data/vm-catalog.csv)", O_CATALOG, 0, NULL},
    {"checkpoint", "DIR", "write DIR/checkpoint.scv at the end (and every N)", O_CKPT, 0, NULL},
    {"checkpoint-every", "N", "also every N iterations", O_CKPT_EVERY, 0, NULL},
    {"resume", NULL, "continue from the checkpoint in DIR (any K and B)", O_RESUME, 0, NULL},
    {"json", NULL, "last stdout line is a JSON summary", O_JSON, 0, NULL},
    {"progress", "WHEN", "auto | always | never (auto: on a terminal)", O_PROGRESS, 0, "auto|always|never"},
    {"no-grad-stats", NULL, "skip the gradient-norm statistics (to measure their cost)", O_NO_STATS, 0, NULL},
    {"no-final-eval", NULL, "no test-set evaluation at the end of this invocation, unless\n"
                            "the target or --epochs ends it and the last evaluation was\n"
                            "on a subset (then the whole test set is evaluated)", O_NO_EVAL, 0, NULL},
    {"elastic-control", "DIR", "the elastic job driver's mode: the job stays up and trains one\n"
                               "segment per command in DIR/cmd (answers in DIR/reply), changing\n"
                               "K and B in place (docs/RUN.md); no stopping rule is needed", O_ELASTIC, 0, NULL},
    {"help", NULL, "this text (also -h)", 0, 0, NULL},
    {NULL, NULL, NULL, 0, 0, NULL},
};

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

/* Parses an integer option value into *out within [lo, hi]. */
static int opt_int(const char *name, const char *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (scv_parse_i64(v, out) != SCV_OK || *out < lo || *out > hi) {
        fprintf(stderr, "scavenger train: --%s '%s': expected an integer in %lld..%lld\n", name, v,
                (long long)lo, (long long)hi);
        return -1;
    }
    return 0;
}

static int opt_num(const char *name, const char *v, double *out)
{
    if (scv_parse_f64(v, out) != SCV_OK) {
        fprintf(stderr, "scavenger train: --%s '%s': expected a number\n", name, v);
        return -1;
    }
    return 0;
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

/* What the options set besides scv_train_params, for the checks of their combinations. */
typedef struct train_cli {
    const char *stream_spec, *stream_opt; /* --stream-rate; a --stream-* option given */
    const char *coll_opt;                 /* --collective or --artopk-root given */
    int stream_bounds, min_share_set, json, n_weights;
    const char *progress, *cluster, *catalog, *hosts;
    double weights[1024];
    scv_segwire wire; /* the contract's variables, read (apply_contract) */
} train_cli;

/* The options of dynamic batching, streaming and communication efficiency: -1 when set,
 * an exit status when arg is bad, -2 when c is none of them. */
static int stream_comm_option(int c, char *arg, scv_train_params *p, train_cli *f)
{
    switch (c) {
    case O_DYNB: p->dynamic_batching = 1; break;
    case O_MINSHARE:
        if (scv_parse_f64(arg, &p->dynbatch.min_share) || !(p->dynbatch.min_share > 0 && p->dynbatch.min_share < 0.5))
            return usage_error("--min-share '%s': expected a share of B in (0, 0.5)", arg);
        f->min_share_set = 1;
        break;
    case O_SRATE: f->stream_spec = arg; break;
    case O_SBOUNDS: {
        char *comma = strchr(arg, ',');
        int64_t lo = 0, hi = 0;
        if (comma) *comma = 0;
        int bad = !comma || scv_parse_i64(arg, &lo) || scv_parse_i64(comma + 1, &hi) || lo < 1 || hi < lo ||
                  hi > (1 << 24);
        if (comma) *comma = ',';
        if (bad)
            return usage_error("--stream-bounds '%s': expected MIN,MAX with 1 <= MIN <= MAX <= 16777216 "
                               "(samples per worker and step; ScaDLES: 8,1024)", arg);
        p->stream_policy.b_min = lo, p->stream_policy.b_max = hi;
        f->stream_opt = "--stream-bounds", f->stream_bounds = 1;
        break;
    }
    case O_SBUFFER:
        if (!strcmp(arg, "truncate")) p->stream_policy.buffer = SCV_STREAM_TRUNCATE;
        else if (!strcmp(arg, "persist")) p->stream_policy.buffer = SCV_STREAM_PERSIST;
        else return usage_error("--stream-buffer '%s': expected truncate or persist", arg);
        if (!f->stream_opt) f->stream_opt = "--stream-buffer";
        break;
    case O_SFULL:
        p->stream_policy.full_batch = 1;
        if (!f->stream_opt) f->stream_opt = "--stream-full-batch";
        break;
    case O_SNONIID:
        if (scv_parse_f64(arg, &p->noniid_skew) || !(p->noniid_skew >= 0 && p->noniid_skew <= 1))
            return usage_error("--stream-noniid %s: must be in [0, 1] (the fraction of a worker's batch "
                               "from its home classes; 0 = IID)", arg);
        break;
    case O_SINJECT: {
        char *comma = strchr(arg, ',');
        double a = 0, b = 0;
        if (comma) *comma = 0;
        int bad = !comma || scv_parse_f64(arg, &a) || scv_parse_f64(comma + 1, &b) || !(a > 0 && a <= 1) ||
                  !(b > 0 && b <= 1);
        if (comma) *comma = ',';
        if (bad)
            return usage_error("--stream-inject %s: expected ALPHA,BETA, each in (0, 1] (e.g. 0.5,0.5: half "
                               "the workers share half their samples)", arg);
        p->inject_alpha = a, p->inject_beta = b;
        break;
    }
    case O_COMPRESS:
        if (!strcmp(arg, "none")) p->comm.compress = SCV_COMPRESS_NONE;
        else if (!strcmp(arg, "gravac")) p->comm.compress = SCV_COMPRESS_GRAVAC;
        else if (!strncmp(arg, "gravac:", 7) && !scv_parse_f64(arg + 7, &p->comm.gravac.eps) &&
                 p->comm.gravac.eps > 0 && p->comm.gravac.eps < 1)
            p->comm.compress = SCV_COMPRESS_GRAVAC;
        else if (!strncmp(arg, "topk:", 5) && !scv_parse_f64(arg + 5, &p->comm.cf) && p->comm.cf > 1 &&
                 p->comm.cf <= 1e6)
            p->comm.compress = SCV_COMPRESS_TOPK;
        else
            return usage_error("--compress '%s': expected none, topk:CF (1 < CF <= 1e6, e.g. topk:100) or "
                               "gravac[:EPS] (0 < EPS < 1, default 0.7)", arg);
        break;
    case O_COLL:
        f->coll_opt = "--collective";
        if (!strcmp(arg, "auto")) p->comm.collective = SCV_COLL_AUTO;
        else if (!strcmp(arg, "allgather")) p->comm.collective = SCV_COLL_ALLGATHER;
        else if (!strcmp(arg, "artopk")) p->comm.collective = SCV_COLL_ARTOPK;
        else return usage_error("--collective '%s': expected auto, allgather or artopk", arg);
        break;
    case O_ARROOT:
        f->coll_opt = "--artopk-root";
        if (strcmp(arg, "star") && strcmp(arg, "var"))
            return usage_error("--artopk-root '%s': expected star or var", arg);
        p->comm.var_root = !strcmp(arg, "var");
        break;
    case O_SELSYNC:
        if (!strncmp(arg, "lssr:", 5)) {
            if (scv_parse_f64(arg + 5, &p->comm.sel.lssr) || !(p->comm.sel.lssr > 0 && p->comm.sel.lssr < 1))
                return usage_error("--selsync '%s': expected lssr:R with 0 < R < 1 (the share of local steps)",
                                   arg);
        } else if (p->comm.sel.lssr = 0, scv_parse_f64(arg, &p->comm.sel.delta) || !(p->comm.sel.delta >= 0) ||
                   p->comm.sel.delta > 1e6)
            return usage_error("--selsync '%s': expected DELTA >= 0 (the paper: 0.25 to 0.5; 0 = synchronous "
                               "SGD) or lssr:R", arg);
        p->comm.selsync = 1;
        break;
    case O_STOP_NOISE: {
        char *colon = strchr(arg, ':');
        int64_t w = 0;
        double tol = 0;
        if (!colon) return usage_error("--stop-noise-stable '%s': expected W:TOL, e.g. 40:0.25", arg);
        *colon = 0;
        int bad = scv_parse_i64(arg, &w) || w < 2 || scv_parse_f64(colon + 1, &tol) || !(tol > 0);
        *colon = ':';
        if (bad) return usage_error("--stop-noise-stable '%s': expected W:TOL, e.g. 40:0.25", arg);
        p->stop_noise_window = (int)w;
        p->stop_noise_tol = tol;
        break;
    }
    case O_STOP_TIME: {
        char *colon = strchr(arg, ':');
        int64_t mn = 10;
        if (colon) *colon = 0;
        int bad = scv_parse_f64(arg, &p->stop_time_rse) || !(p->stop_time_rse > 0) ||
                  (colon && (scv_parse_i64(colon + 1, &mn) || mn < 2));
        if (colon) *colon = ':';
        if (bad) return usage_error("--stop-time-stable '%s': expected REL[:MIN], e.g. 0.02:10", arg);
        p->stop_time_min = (int)mn;
        break;
    }
    default: return -2;
    }
    return -1;
}

static int train_checked(scv_train_params p, train_cli *f, int argc, char **argv);

/* --batch-split W,...: -1 when set, else the exit status */
static int parse_split(char *optarg, train_cli *f)
{
    char *s = optarg, *end;
    f->n_weights = 0;
    while (*s) {
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno == ERANGE || !(v > 0) || !isfinite(v) || (*end && *end != ',') || f->n_weights == 1024)
            return usage_error("--batch-split '%s': expected positive finite weights separated by commas", optarg);
        f->weights[f->n_weights++] = v;
        s = *end ? end + 1 : end;
    }
    return -1;
}

/* --target-history A,... into history (cap values): -1 when set, else the exit status;
 * "" (no history) is allowed, so a driver can always pass the option */
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define WINDOW_MAX_TEXT TEXT(SCV_TARGET_WINDOW_MAX) /* "64", in the option's messages */
static int parse_history(char *optarg, scv_train_params *p, double *history, size_t cap)
{
    char *s = optarg, *end;
    p->n_target_history = 0;
    while (*s) {
        double v = strtod(s, &end);
        if (end == s || !(v >= 0 && v <= 1e30) || (*end && *end != ',') || (*end == ',' && !end[1]) ||
            p->n_target_history == (int)cap)
            return usage_error("--target-history '%s': expected accuracies in [0,1] (or "
                               "losses >= 0) separated by commas (at most " WINDOW_MAX_TEXT
                               ", the longest window), oldest first", optarg);
        history[p->n_target_history++] = v;
        s = *end ? end + 1 : end;
    }
    p->target_history = history;
    return -1;
}


/* The options as parsed (p.stream set): checks them, then trains here or launches the ranks.
 * Returns the exit code. */
static int train_parsed(scv_train_params p, int argc, char **argv, int json, const char *progress,
                        const char *cluster, const char *catalog, const char *hosts, int contract);

int cmd_train(int argc, char **argv)
{
    scv_train_params p = scv_train_params_default();
    static train_cli f;
    memset(&f, 0, sizeof f);
    f.progress = "auto";
    static double history[SCV_TARGET_WINDOW_MAX];
    int64_t iv;
    struct option opts[sizeof TRAIN_OPTIONS / sizeof TRAIN_OPTIONS[0] + 2];
    if (cli_opt_getopt(TRAIN_OPTIONS, opts, sizeof opts / sizeof opts[0]) < 0) return EXIT_FAIL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        const char *name = NULL;
        for (const struct option *o = opts; o->name; o++)
            if (o->val == c) name = o->name;
        switch (c) {
        case 'h': help(); return EXIT_OK;
        case O_MODEL: p.model = optarg; break;
        case O_HIDDEN: p.hidden = optarg; break;
        case O_DATASET: p.dataset = optarg; break;
        case O_WORKERS:
            if (opt_int(name, optarg, 1, 1024, &iv)) return EXIT_USAGE;
            p.workers = (int)iv;
            break;
        case O_THREADS:
            if (opt_int(name, optarg, 1, 256, &iv)) return EXIT_USAGE;
            p.threads = (int)iv;
            break;
        case O_BATCH:
            if (opt_int(name, optarg, 1, 1 << 24, &iv)) return EXIT_USAGE;
            p.batch = (int)iv;
            break;
        case O_SPLIT:
            if ((c = parse_split(optarg, &f)) >= 0) return c;
            break;
        case O_LR: if (opt_num(name, optarg, &p.lr)) return EXIT_USAGE; break;
        case O_MOM: if (opt_num(name, optarg, &p.momentum)) return EXIT_USAGE; break;
        case O_WD: if (opt_num(name, optarg, &p.weight_decay)) return EXIT_USAGE; break;
        case O_SCALING:
            if (!strcmp(optarg, "none")) p.lr_scaling = SCV_LR_SCALE_NONE;
            else if (!strcmp(optarg, "linear")) p.lr_scaling = SCV_LR_SCALE_LINEAR;
            else if (!strcmp(optarg, "sqrt")) p.lr_scaling = SCV_LR_SCALE_SQRT;
            else return usage_error("--lr-scaling '%s': expected none, linear or sqrt", optarg);
            break;
        case O_BASE:
            if (opt_int(name, optarg, 1, 1 << 24, &iv)) return EXIT_USAGE;
            p.base_batch = (int)iv;
            break;
        case O_WARM: if (opt_num(name, optarg, &p.warmup_epochs)) return EXIT_USAGE; break;
        case O_DECAY:
            if (!strcmp(optarg, "none")) p.lr_decay = SCV_LR_CONST;
            else if (!strcmp(optarg, "step")) p.lr_decay = SCV_LR_STEP;
            else if (!strcmp(optarg, "cosine")) p.lr_decay = SCV_LR_COSINE;
            else return usage_error("--lr-decay '%s': expected none, step or cosine", optarg);
            break;
        case O_STEP: if (opt_num(name, optarg, &p.lr_step_epochs)) return EXIT_USAGE; break;
        case O_GAMMA: if (opt_num(name, optarg, &p.lr_gamma)) return EXIT_USAGE; break;
        case O_HORIZON: if (opt_num(name, optarg, &p.lr_horizon_epochs)) return EXIT_USAGE; break;
        case O_EPOCHS: if (opt_num(name, optarg, &p.epochs)) return EXIT_USAGE; break;
        case O_ITERS:
            if (opt_int(name, optarg, 1, INT64_MAX, &iv)) return EXIT_USAGE;
            p.iterations = iv;
            break;
        case O_TARGET: if (opt_num(name, optarg, &p.target_accuracy)) return EXIT_USAGE; break;
        case O_TLOSS: if (opt_num(name, optarg, &p.target_loss)) return EXIT_USAGE; break;
        case O_STRAGGLER: {
            double f = 0;
            if (opt_num(name, optarg, &f)) return EXIT_USAGE;
            p.straggler = scv_straggler_rule_default();
            p.straggler.fraction = f; /* checked with the rest */
            break;
        }
        case O_ELASTIC: p.elastic_control = optarg; break;
        case O_EVAL:
            if (opt_int(name, optarg, 1, INT64_MAX, &iv)) return EXIT_USAGE;
            p.eval_every = iv;
            break;
        case O_SEED:
            if (opt_int(name, optarg, 0, INT64_MAX, &iv)) return EXIT_USAGE;
            p.seed = (uint64_t)iv;
            break;
        case O_METRICS: p.metrics_path = optarg; break;
        case O_CKPT: p.checkpoint_dir = optarg; break;
        case O_CKPT_EVERY:
            if (opt_int(name, optarg, 1, INT64_MAX, &iv)) return EXIT_USAGE;
            p.checkpoint_every = iv;
            break;
        case O_RESUME: p.resume = 1; break;
        case O_NO_STATS: p.no_grad_stats = 1; break;
        case O_NO_EVAL: p.no_final_eval = 1; break;
        case O_EVAL_EPOCHS:
            if (opt_num(name, optarg, &p.eval_every_epochs)) return EXIT_USAGE;
            if (!(p.eval_every_epochs > 0))
                return usage_error("--eval-every-epochs '%s': expected a positive number of "
                                   "epochs (e.g. 0.25); leave it out to evaluate once an epoch",
                                   optarg);
            break;
        case O_EVAL_SUBSET:
            if (opt_int(name, optarg, 0, INT64_MAX, &iv)) return EXIT_USAGE;
            p.eval_subset = iv;
            break;
        case O_TWINDOW:
            if (opt_int(name, optarg, 1, SCV_TARGET_WINDOW_MAX, &iv)) return EXIT_USAGE;
            p.target_window = (int)iv;
            break;
        case O_TTOL:
            if (scv_parse_f64(optarg, &p.target_confirm_tol) || !(p.target_confirm_tol >= 0) ||
                !(p.target_confirm_tol < 1))
                return usage_error("--target-confirm-tol '%s': expected a number in [0,1), e.g. "
                                   "0.005", optarg);
            break;
        case O_THIST:
            if ((c = parse_history(optarg, &p, history, sizeof history / sizeof history[0])) >= 0) return c;
            break;
        case O_VM: p.vm_type = optarg; break;
        case O_CATALOG: f.catalog = optarg; break;
        case O_CLUSTER: f.cluster = optarg; break;
        case O_HOSTS: f.hosts = optarg; break;
        case O_JSON: f.json = 1; break;
        case O_PROGRESS:
            if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
                return usage_error("--progress '%s': expected auto, always or never", optarg);
            f.progress = optarg;
            break;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: {
            int r = stream_comm_option(c, optarg, &p, &f);
            if (r == -2) return usage_error("unknown option '%s'", argv[optind - 1]);
            if (r >= 0) return r;
        }
        }
    }
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    return train_checked(p, &f, argc, argv);
}

/* The combinations of the options (and the trainer contract's variables) checked, the
 * stream's rates read; then train_parsed. Returns the exit status. */
static int train_checked(scv_train_params p, train_cli *f, int argc, char **argv)
{
    int contract = 0, crc = apply_contract(&p, &f->wire, f->weights, &f->n_weights, &contract);
    if (crc >= 0) return crc;
    if (f->min_share_set && !p.dynamic_batching) return usage_error("--min-share %s: only with --dynamic-batching", "F");
    if (f->min_share_set && p.dynbatch.min_share * p.workers >= 0.9) { /* K as the contract may have set it */
        char m[96];
        snprintf(m, sizeof m, "%g: must be under 0.9/K = %.4g for --workers %d", p.dynbatch.min_share,
                 0.9 / p.workers, p.workers);
        return usage_error("--min-share %s (an even share is 1/K)", m);
    }
    if (contract) f->progress = "never";
    if (f->n_weights) {
        if (f->n_weights != p.workers) {
            fprintf(stderr, "scavenger train: --batch-split has %d weights for --workers %d\n",
                    f->n_weights, p.workers);
            return EXIT_USAGE;
        }
        p.rank_weights = f->weights;
    }
    if (f->stream_opt && !f->stream_spec) return usage_error("%s needs --stream-rate", f->stream_opt);
    if (f->coll_opt && p.comm.compress == SCV_COMPRESS_NONE)
        return usage_error("%s: only with --compress (how a compressed gradient travels)", f->coll_opt);
    if (p.comm.selsync && p.comm.compress != SCV_COMPRESS_NONE)
        return usage_error("%s and --compress: choose one (SelSync's local steps send nothing to compress)",
                           "--selsync");
    if (p.stream_policy.full_batch && f->stream_bounds)
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
    int rc = train_parsed(p, argc, argv, f->json, f->progress, f->cluster, f->catalog, f->hosts, contract);
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
