/*
 * jobopts.c - the keys a job accepts, declared once: name, value, help text and kind (an
 * option of the built-in trainer, a loop setting, or where and how the job runs). The
 * `scavenger run` command line and --help, the job files, the service's checks of a
 * submitted job, the bash completion and the man page all read this table; the values of
 * the loop settings are parsed by scv_run_params_set (params.c), which refuses a name
 * that is not a loop setting here.
 */
#include "search/jobopts.h"
#include "train/train.h"

#include <string.h>

#define T SCV_OPT_TRAINER
#define S SCV_OPT_SHELL
#define L SCV_OPT_LOOP
#define NUM SCV_OPT_NUM
#define PATH SCV_OPT_PATH

static const scv_option JOB_OPTIONS[] = {
    /* the built-in trainer's job (`scavenger train`; given to every train the driver starts) */
    {"model", "NAME", "logreg | mlp | lenet | resnet (default lenet)", 0, T, SCV_NET_NAMES},
    {"hidden", "LIST", "mlp hidden sizes (default 256,128)", 0, T, NULL},
    {"dataset", "SPEC", "fashion-mnist (default) | DIR with the 4 IDX files |\nsynthetic:N", 0, T | PATH, NULL},
    {"threads", "T", "compute threads per rank (1)", 0, T | NUM, NULL},
    {"lr", "X", "base learning rate (0.05)", 0, T | NUM, NULL},
    {"momentum", "X", "momentum (0.9)", 0, T | NUM, NULL},
    {"weight-decay", "X", "weight decay (5e-4)", 0, T | NUM, NULL},
    {"lr-scaling", "R", "none | linear | sqrt, relative to --base-batch (none)", 0, T, "none|linear|sqrt"},
    {"base-batch", "B0", "reference batch of --lr (64)", 0, T | NUM, NULL},
    {"warmup-epochs", "E", "linear warm-up (0)", 0, T | NUM, NULL},
    {"lr-decay", "D", "none | step | cosine (none)", 0, T, "none|step|cosine"},
    {"lr-step-epochs", "E", "step decay period", 0, T | NUM, NULL},
    {"lr-gamma", "X", "step factor (0.1)", 0, T | NUM, NULL},
    {"lr-horizon", "E", "cosine horizon in epochs (default --epochs)", 0, T | NUM, NULL},
    {"seed", "S", "init and data-order seed (1)", 0, T | NUM, NULL},
    /* the loop */
    {"target-accuracy", "A", "the target (0 < A <= 1): mean of W evaluations >= A, or", 0, L, NULL},
    {"target-loss", "L", "the period-mean training loss: mean of W periods <= L", 0, L, NULL},
    {"max-epochs", "E", "give up after E epochs (default 30)", 0, L, NULL},
    {NULL, NULL, "Search:", 0, 0, NULL},
    {"search", "partial|full|none", "how the space is profiled (default partial: its\ncorners; none: from stored runs)",
     0, L, "partial|full|none"},
    {"workers", "SPEC", "the space's K: a list 1,2,8 or a range 1..64[:STEP]\n(default 1,2)", 0, L, NULL},
    {"batch", "SPEC", "the space's B, as --workers (default 64,256)", 0, L, NULL},
    {"start", "K,B", "first configuration (default: smallest K >= 2, smallest B)", 0, L, NULL},
    {"search-budget", "S", "warm-up and search spend at most this share of the predicted\n"
                           "job time (default 0.05; 0 = no budget)", 0, L, NULL},
    {NULL, NULL, "Choice:", 0, 0, NULL},
    {"objective", "time|cost|knee|utility", "what to choose (default knee)", 0, L, "time|cost|knee|utility"},
    {"deadline", "D", "a bound: seconds, or a number with s, m or h (45m, 2.5h)", 0, L, NULL},
    {"budget", "USD", "a bound in dollars", 0, L, NULL},
    {"value-per-hour", "V", "utility: $ an hour saved is worth (cost + V x hours is least)", 0, L, NULL},
    {"policy", "plan|throughput", "Scavenger's plan (default), or Or et al.'s throughput\n"
                                  "scaling: the start's per-worker batch, workers added while\n"
                                  "each brings >= --scaling-threshold S (0.1) of a worker's\n"
                                  "throughput, then settled", 0, L, "plan|throughput"},
    {"scaling-threshold", "S", "the throughput share of --policy throughput (default 0.1)", 0, L, NULL},
    {"exec", "COMMAND", "drive your own trainer (a PyTorch script, say) that follows\n"
                        "docs/TRAINER-CONTRACT.md: one `mpirun -np K /bin/sh -c\n"
                        "COMMAND` per segment (the exec driver)", 0, S, NULL},
    {"stall-timeout", "S", "the watchdog: a segment that writes no metrics line for S\n"
                           "seconds (or 30s, 2m) fails and is retried like a dead worker\n"
                           "(default 600 before its first line, then max(120, 50\n"
                           "iterations); S sets both)", 0, S, NULL},
    {"hosts", "FILE", "real machines: an Open MPI hostfile (ssh); relaunch and exec\ndrivers", 0, S, NULL},
    {"host-limits", "threads=N,memory=SIZE", "what one run may take of this host:\n"
                                             "its local ranks x threads (default 8 a core), its local ranks\n"
                                             "x a rank's memory: data, model, process (default 3/4 of it);\n"
                                             "ranks on a --cluster or other --hosts machines do not count", 0, S,
     NULL},
    {"dynamic-batching", "on|off", "the workers' shares of B follow their measured\n"
                                   "throughput (heterogeneous clusters; default off)", 0, L, "on|off"},
    {"straggler-fraction", "F", "while training, a worker whose smoothed throughput stays\n"
                                "under F (0.8) of the median worker's for --straggler-window\n"
                                "(5s) is a straggler: the elastic driver replaces it with a\n"
                                "spare VM of the cluster or, without one, reports it (0 =\n"
                                "off; the other drivers do not look for stragglers)", 0, L, NULL},
    {"straggler-window", "S", "seconds (or 30s, 2m) of --straggler-fraction (default 5s)", 0, L, NULL},
    {"compress", "LIST", "also plan communication options, e.g.\n"
                         "none,topk:100,topk:10:artopk,selsync:0.9 (topk:CF[:auto|\n"
                         "allgather|artopk] needs --comm ring; selsync:R, a share R of\n"
                         "local steps); a chosen option trains the training segments\n"
                         "(Top-k at CF over its collective, or the one the plan priced\n"
                         "for auto; SelSync aiming at R); warm-up and search stay dense\n"
                         "(the model is fitted on dense steps); the report shows the\n"
                         "dense choice beside it. Not with --exec", 0, L, NULL},
    {"compress-iterations", "R", "their iterations to the target relative to dense\n"
                                 "(default 1): assumed, not measured", 0, L, NULL},
    {"stat", "gns|scavenger", "the statistical model (default gns)", 0, L, "gns|scavenger"},
    {"comm", "ring|ps", "the collective of the parallel model (default ring)", 0, L, "ring|ps"},
    {"pricing", "ondemand|spot|memory", "the prices (default ondemand)", 0, L, "ondemand|spot|memory"},
    {"eval-subset", "N", "periodic evaluations on the first N test samples (default\n"
                         "2000; 0 = all); the target is confirmed on the whole set", 0, L, NULL},
    {"target-window", "W", "the smoothing window of the target (default 3)", 0, L, NULL},
    {"eval-every-epochs", "E", "evaluation period while training (default 0.25)", 0, L, NULL},
    {"search-eval-every-epochs", "E", "evaluation period while warming up and searching\n(default 0.05)", 0, L,
     NULL},
    {"search-eval-share", "S", "warm-up and search evaluations cost at most this share\nof their time once measured (default 0.1; 0 = off)",
     0, L, NULL},
    {"target-epochs", "E", "the target's epochs, if known (else learnt from a stored run\n"
                           "of the same job, else forecast from this run's learning curve\n"
                           "with a calibrated band; nominal only before its first\n"
                           "evaluations)", 0, L, NULL},
    {"target-batch", "B0", "the batch of --target-epochs", 0, L, NULL},
    {"curve-corpus", "FILE|none", "learning curves whose course is known, to calibrate the\n"
                                  "target's band (default data/curves.jsonl; none: only the\n"
                                  "store's finished runs)", 0, L | PATH, NULL},
    {NULL, NULL, "Where:", 0, 0, NULL},
    {"driver", "elastic|relaunch|exec", "how segments run (default elastic; exec with\n"
                                        "--exec; relaunch with --hosts): one job that changes K and\n"
                                        "B in place, or a job per segment that resumes the checkpoint",
     0, S, "elastic|relaunch|exec"},
    {"cluster", "NAME", "an emulated cluster (else local processes)", 0, S, NULL},
    {"vm-type", "TYPE", "catalog type the measurements stand for (default: the\ncluster's type, else c5.xlarge)", 0,
     L, NULL},
    {"vm", "LIST|all", "VM types the plan compares besides --vm-type (a,b or all):\n"
                       "predicted from --vm-type's measurements (the report marks\n"
                       "each point how); the run trains on --vm-type", 0, S, NULL},
    {"catalog", "CSV", "prices (default data/vm-catalog.csv)", 0, S | PATH, NULL},
    {NULL, NULL, "State and output:", 0, 0, NULL},
    {"db", "PATH", "run database (default ~/.local/share/scavenger/scavenger.db);\n"
                   "each run keeps its files in PATH.runs/ID/ (`scavenger runs`)", 0, S, NULL},
    {"report", "DIR", "report.md, report.json, tradeoff.svg (default: the run's dir)", 0, S, NULL},
    {NULL, NULL, NULL, 0, 0, NULL},
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
