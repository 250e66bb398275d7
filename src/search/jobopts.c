/*
 * jobopts.c - the keys a job accepts, declared once: name, value, help text, kind (an
 * option of the built-in trainer, a loop setting, or where and how the job runs) and what
 * its value is (core/option.h: type, range, and where it goes: a loop setting's field of
 * scv_run_params, a trainer option's of scv_train_params). The `scavenger run` command
 * line and --help, the job files, the service's checks of a submitted job, `scavenger
 * train` (its rows of the same names), the bash completion and the man page all read this
 * table; every value is read by the options' one reader (scv_option_read) through
 * scv_job_value_read (the loop's settings: scv_run_params_set, params.c).
 */
#include "search/jobopts.h"
#include "core/util.h"
#include "model/stoprule.h"
#include "train/train.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define T SCV_OPT_TRAINER
#define S SCV_OPT_SHELL
#define L SCV_OPT_LOOP
#define PATH SCV_OPT_PATH

#define RP(m) offsetof(scv_run_params, m)
#define TP(m) offsetof(scv_train_params, m)
#define MAX_BATCH (1 << 24)
/* a value: its type, range and field (a shell key's offset is 0: the caller's own scalar) */
#define VINT(m, lo, hi) {SCV_VT_INT, lo, hi, 0, m, 0, 0, NULL}
#define VI64(m, lo, hi) {SCV_VT_I64, lo, hi, 0, m, 0, 0, NULL}
#define VDBL(m, lo, hi, b) {SCV_VT_DBL, lo, hi, b, m, 0, 0, NULL}
#define VPOS(m, hi) {SCV_VT_DBL, 0, hi, SCV_VB_OPEN_LO, m, 0, 0, NULL} /* in (0, hi] */
#define VDUR(m, hi) {SCV_VT_DUR, 0, hi, SCV_VB_OPEN_LO, m, 0, 0, NULL}
#define VENUM(m) {SCV_VT_ENUM, 0, 0, 0, m, 0, 0, NULL}                 /* the row's words */
#define VSTR(m) {SCV_VT_STR, 1, 0, 0, m, 0, 0, NULL}                   /* not empty */
#define VBUF(m, cap) {SCV_VT_BUF, 1, 0, 0, m, 0, cap, NULL}
#define VINTS(m, n, hi, b) {SCV_VT_INTS, 1, hi, b, RP(m), RP(n), SCV_MAX_SPACE, NULL}
#define VSET(fn) {SCV_VT_SET, 0, 0, 0, 0, 0, 0, fn}

/* an enum field is stored as an int: the table's words are its values in order
 * (tests/test_options.c checks them against the library's names) */
_Static_assert(sizeof(scv_search_policy) == sizeof(int) && sizeof(scv_objective) == sizeof(int) &&
                   sizeof(scv_scaling) == sizeof(int) && sizeof(scv_lr_scaling) == sizeof(int),
               "enums stored as int");

/* "start" K,B: the first configuration */
static int set_start(void *base, const char *v, const char *label, scv_err *err)
{
    scv_run_params *p = base;
    char k[32];
    const char *comma = strchr(v, ',');
    int64_t K = 0, B = 0;
    if (comma && (size_t)(comma - v) < sizeof k) snprintf(k, sizeof k, "%.*s", (int)(comma - v), v);
    if (!comma || (size_t)(comma - v) >= sizeof k || scv_parse_i64(k, &K) || scv_parse_i64(comma + 1, &B) || K < 1 ||
        B < K || B > MAX_BATCH)
        return scv_err_set(err, SCV_EINVAL, "%s '%s': expected K,B with %d >= B >= K >= 1", label, v, MAX_BATCH);
    p->start_workers = (int)K, p->start_batch = (int)B;
    return SCV_OK;
}

/* "compress" LIST: the communication options planned besides dense */
static int set_compress(void *base, const char *v, const char *label, scv_err *err)
{
    scv_run_params *p = base;
    scv_plan_comm c[SCV_PLAN_MAX_COMMS + 1];
    size_t n = 0;
    scv_err e = {0};
    double f = p->compress_iterations > 0 ? p->compress_iterations : 1;
    int rc = scv_plan_comm_parse(v, f, c, SCV_PLAN_MAX_COMMS + 1, &n, &e);
    if (rc) return scv_err_set(err, rc, "%s %s", label, e.msg);
    memcpy(p->comms, c, n * sizeof c[0]);
    p->n_comms = n;
    return SCV_OK;
}

/* "compress-iterations" R: their iterations relative to dense, in either order with "compress" */
static int set_compress_iterations(void *base, const char *v, const char *label, scv_err *err)
{
    scv_run_params *p = base;
    const scv_value r = VPOS(RP(compress_iterations), 1e6);
    int rc = scv_value_read(&r, NULL, label, p, v, err);
    for (size_t i = 0; !rc && i < p->n_comms; i++)
        if (p->comms[i].kind != SCV_PLAN_DENSE) p->comms[i].iter_factor = p->compress_iterations;
    return rc;
}

static const scv_option JOB_OPTIONS[] = {
    /* the built-in trainer's job (`scavenger train`; given to every train the driver starts) */
    {"model", "NAME", "logreg | mlp | lenet | resnet (default lenet)", 0, T, SCV_NET_NAMES, VSTR(TP(model))},
    {"hidden", "LIST", "mlp hidden sizes (default 256,128)", 0, T, NULL, VSTR(TP(hidden))},
    {"dataset", "SPEC", "fashion-mnist (default) | DIR with the 4 IDX files |\nsynthetic:N", 0, T | PATH, NULL,
     VSTR(TP(dataset))},
    {"threads", "T", "compute threads per rank (1)", 0, T, NULL, VINT(TP(threads), 1, 256)},
    {"lr", "X", "base learning rate (0.05)", 0, T, NULL, VPOS(TP(lr), INFINITY)},
    {"momentum", "X", "momentum (0.9)", 0, T, NULL, VDBL(TP(momentum), 0, 1, SCV_VB_OPEN_HI)},
    {"weight-decay", "X", "weight decay (5e-4)", 0, T, NULL, VDBL(TP(weight_decay), 0, INFINITY, 0)},
    {"lr-scaling", "R", "none | linear | sqrt | adascale, relative to --base-batch (none)", 0, T,
     "none|linear|sqrt|adascale", VENUM(TP(lr_scaling))},
    {"base-batch", "B0", "reference batch of --lr (64)", 0, T, NULL, VINT(TP(base_batch), 1, MAX_BATCH)},
    {"warmup-epochs", "E", "linear warm-up (0)", 0, T, NULL, VDBL(TP(warmup_epochs), 0, INFINITY, 0)},
    {"lr-decay", "D", "none | step | cosine (none)", 0, T, "none|step|cosine", VENUM(TP(lr_decay))},
    {"lr-step-epochs", "E", "step decay period", 0, T, NULL, VDBL(TP(lr_step_epochs), 0, INFINITY, 0)},
    {"lr-gamma", "X", "step factor (0.1)", 0, T, NULL, VDBL(TP(lr_gamma), 0, INFINITY, 0)},
    {"lr-horizon", "E", "cosine horizon in epochs (default --epochs)", 0, T, NULL,
     VDBL(TP(lr_horizon_epochs), 0, INFINITY, 0)},
    {"seed", "S", "init and data-order seed (1)", 0, T, NULL, VI64(TP(seed), 0, 9223372036854775807.0)},
    /* the loop */
    {"target-accuracy", "A", "the target (0 < A <= 1): mean of W evaluations >= A, or", 0, L, NULL,
     VPOS(RP(target_accuracy), 1)},
    {"target-loss", "L", "the period-mean training loss: mean of W periods <= L", 0, L, NULL,
     VPOS(RP(target_loss), 1e6)},
    {"max-epochs", "E", "give up after E epochs (default 30)", 0, L, NULL, VPOS(RP(max_epochs), 1e9)},
    {"out-of-reach", "stop|go-on",
     "a target the calibrated learning curve gives P(reach) < 0.2\n"
     "within --max-epochs: stop at a quarter of them, checkpointed\n"
     "and resumable, naming the value likely reached; or train on\n"
     "to the bound (default go-on)",
     0, L, "stop|go-on", VENUM(RP(policy.out_of_reach))},
    {NULL, NULL, "Search:", 0, 0, NULL, {0}},
    {"search", "partial|full|none", "how the space is profiled (default partial: its\ncorners; none: from stored runs)",
     0, L, "partial|full|none", VENUM(RP(search))},
    {"workers", "SPEC", "the space's K: a list 1,2,8 or a range 1..64[:STEP]\n(default 1,2)", 0, L, NULL,
     VINTS(workers, n_workers, 1024, 0)},
    {"batch", "SPEC", "the space's B, as --workers (default 64,256)", 0, L, NULL,
     VINTS(batches, n_batches, MAX_BATCH, SCV_VB_POW2)},
    {"start", "K,B", "first configuration (default: smallest K >= 2, smallest B)", 0, L, NULL, VSET(set_start)},
    {"search-budget", "S",
     "warm-up and search spend at most this share of the predicted\n"
     "job time (default 0.05; 0 = no budget)",
     0, L, NULL, VDBL(RP(policy.search_budget_share), 0, 1, 0)},
    {NULL, NULL, "Choice:", 0, 0, NULL, {0}},
    {"objective", "time|cost|knee|utility", "what to choose (default knee)", 0, L, "time|cost|knee|utility",
     VENUM(RP(objective))},
    {"deadline", "D", "a bound: seconds, or a number with s, m or h (45m, 2.5h)", 0, L, NULL,
     VDUR(RP(deadline_s), INFINITY)},
    {"budget", "USD", "a bound in dollars", 0, L, NULL, VPOS(RP(budget), 1e12)},
    {"value-per-hour", "V", "utility: $ an hour saved is worth (cost + V x hours is least)", 0, L, NULL,
     VPOS(RP(value_per_hour), 1e12)},
    {"policy", "plan|throughput",
     "Scavenger's plan (default), or Or et al.'s throughput\n"
     "scaling: the start's per-worker batch, workers added while\n"
     "each brings >= --scaling-threshold S (0.1) of a worker's\n"
     "throughput, then settled",
     0, L, "plan|throughput", VENUM(RP(scaling))},
    {"scaling-threshold", "S", "the throughput share of --policy throughput (default 0.1)", 0, L, NULL,
     VPOS(RP(policy.scaling_threshold), 10)},
    {"exec",
     "COMMAND",
     "drive your own trainer (a PyTorch script, say) that follows\n"
     "docs/TRAINER-CONTRACT.md: one `mpirun -np K /bin/sh -c\n"
     "COMMAND` per segment (the exec driver)",
     0,
     S,
     NULL,
     {0}},
    {"stall-timeout", "S",
     "the watchdog: a segment that writes no metrics line for S\n"
     "seconds (or 30s, 2m) fails and is retried like a dead worker\n"
     "(default 600 before its first line, then max(120, 50\n"
     "iterations); S sets both)",
     0, S, NULL, VDUR(0, 7 * 86400)},
    {"hosts", "FILE", "real machines: an Open MPI hostfile (ssh); relaunch and exec\ndrivers", 0, S, NULL, {0}},
    {"host-limits",
     "threads=N,memory=SIZE",
     "what one run may take of this host:\n"
     "its local ranks x threads (default 8 a core), its local ranks\n"
     "x a rank's memory: data, model, process (default 3/4 of it);\n"
     "ranks on a --cluster or other --hosts machines do not count",
     0,
     S,
     NULL,
     {0}},
    {"dynamic-batching", "on|off",
     "the workers' shares of B follow their measured\n"
     "throughput (heterogeneous clusters; default off)",
     0, L, "off|on", VENUM(RP(policy.dynamic_batching))},
    {"straggler-fraction", "F",
     "while training, a worker whose smoothed throughput stays\n"
     "under F (0.8) of the median worker's for --straggler-window\n"
     "(5s) is a straggler: the elastic driver replaces it with a\n"
     "spare VM of the cluster or, without one, reports it (0 =\n"
     "off; the other drivers do not look for stragglers)",
     0, L, NULL, VDBL(RP(policy.straggler.fraction), 0, 1, SCV_VB_OPEN_HI)},
    {"straggler-window", "S", "seconds (or 30s, 2m) of --straggler-fraction (default 5s)", 0, L, NULL,
     VDUR(RP(policy.straggler.window_s), 1e7)},
    {"compress", "LIST",
     "also plan communication options, e.g.\n"
     "none,topk:100,topk:10:artopk,selsync:0.9 (topk:CF[:auto|\n"
     "allgather|artopk] needs --comm ring; selsync:R, a share R of\n"
     "local steps); a chosen option trains the training segments\n"
     "(Top-k at CF over its collective, or the one the plan priced\n"
     "for auto; SelSync aiming at R); warm-up and search stay dense\n"
     "(the model is fitted on dense steps); the report shows the\n"
     "dense choice beside it. Not with --exec",
     0, L, NULL, VSET(set_compress)},
    {"compress-iterations", "R",
     "their iterations to the target relative to dense\n"
     "(default 1): assumed, not measured",
     0, L, NULL, VSET(set_compress_iterations)},
    {"stat", "gns|scavenger", "the statistical model (default gns)", 0, L, "gns|scavenger", VENUM(RP(stat))},
    {"comm", "ring|ps", "the collective of the parallel model (default ring)", 0, L, "ring|ps", VENUM(RP(topology))},
    {"pricing", "ondemand|spot|memory", "the prices (default ondemand)", 0, L, "ondemand|spot|memory",
     VENUM(RP(pricing))},
    {"eval-subset", "N",
     "periodic evaluations on N test samples, the test set's slices\n"
     "of N taken in turn (default 2000; 0 = all); the target is\n"
     "confirmed on the whole set",
     0, L, NULL, VINT(RP(policy.eval_subset), 0, 1000000)},
    {"target-window", "W", "the smoothing window of the target (default 3)", 0, L, NULL,
     VINT(RP(policy.target_window), 1, SCV_TARGET_WINDOW_MAX)},
    {"eval-every-epochs", "E", "evaluation period while training (default 0.25)", 0, L, NULL,
     VPOS(RP(policy.eval_every_epochs), 1e6)},
    {"search-eval-every-epochs", "E", "evaluation period while warming up and searching\n(default 0.05)", 0, L, NULL,
     VPOS(RP(policy.search_eval_every_epochs), 1e6)},
    {"search-eval-share", "S",
     "warm-up and search evaluations cost at most this share\nof their time once measured (default 0.1; 0 = off)", 0, L,
     NULL, VDBL(RP(policy.search_eval_share), 0, 1, SCV_VB_OPEN_HI)},
    {"target-epochs", "E",
     "the target's epochs, if known (else learnt from a stored run\n"
     "of the same job, else forecast from this run's learning curve\n"
     "with a calibrated band; nominal only before its first\n"
     "evaluations)",
     0, L, NULL, VPOS(RP(target_epochs), 1e9)},
    {"target-batch", "B0", "the batch of --target-epochs", 0, L, NULL, VINT(RP(target_batch), 1, MAX_BATCH)},
    {"curve-corpus", "FILE|none",
     "learning curves whose course is known, to calibrate the\n"
     "target's band (default data/curves.jsonl; none: only the\n"
     "store's finished runs)",
     0, L | PATH, NULL, VSTR(RP(curve_corpus))},
    {NULL, NULL, "Where:", 0, 0, NULL, {0}},
    {"driver", "elastic|relaunch|exec",
     "how segments run (default elastic; exec with\n"
     "--exec; relaunch with --hosts): one job that changes K and\n"
     "B in place, or a job per segment that resumes the checkpoint",
     0, S, "elastic|relaunch|exec", VENUM(0)},
    {"cluster", "NAME", "an emulated cluster (else local processes)", 0, S, NULL, {0}},
    {"vm-type", "TYPE", "catalog type the measurements stand for (default: the\ncluster's type, else c5.xlarge)", 0, L,
     NULL, VBUF(RP(vm_type), sizeof(((scv_run_params *)0)->vm_type))},
    {"vm",
     "LIST|all",
     "VM types the plan compares besides --vm-type (a,b or all):\n"
     "predicted from --vm-type's measurements (the report marks\n"
     "each point how); the run trains on --vm-type",
     0,
     S,
     NULL,
     {0}},
    {"catalog", "CSV", "prices (default data/vm-catalog.csv)", 0, S | PATH, NULL, {0}},
    {NULL, NULL, "State and output:", 0, 0, NULL, {0}},
    {"db",
     "PATH",
     "run database (default ~/.local/share/scavenger/scavenger.db);\n"
     "each run keeps its files in PATH.runs/ID/ (`scavenger runs`)",
     0,
     S,
     NULL,
     {0}},
    {"report", "DIR", "report.md, report.json, tradeoff.svg (default: the run's dir)", 0, S, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

const scv_option *scv_job_options(void)
{
    return JOB_OPTIONS;
}

const scv_option *scv_job_option_find(const char *name)
{
    for (const scv_option *o = JOB_OPTIONS; name && (o->name || o->help); o++)
        if (o->name && !strcmp(o->name, name)) return o;
    return NULL;
}

int scv_job_value_read(const scv_option *o, scv_run_params *rp, scv_train_params *tp, void *shell, const char *text,
                       scv_err *err)
{
    void *base = o->flags & SCV_OPT_LOOP ? (void *)rp : o->flags & SCV_OPT_TRAINER ? (void *)tp : shell;
    if (!o->v.type) return SCV_OK;
    if (!base) return scv_err_set(err, SCV_EINVAL, "--%s: nowhere to read it into", o->name);
    return scv_option_read(o, base, text, err);
}

int scv_option_value_ok(const scv_option *o, const char *value)
{
    if (!o->values) return 1;
    size_t n = strlen(value);
    for (const char *w = o->values; *w;) {
        const char *bar = strchr(w, '|');
        size_t len = bar ? (size_t)(bar - w) : strlen(w);
        if (len == n && !strncmp(w, value, n)) return 1;
        if (!bar) break;
        w = bar + 1;
    }
    return 0;
}
