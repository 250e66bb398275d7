/*
 * scv.h - the one public header of libscv, the library behind the `scavenger` tool.
 *
 * Scavenger trains a data-parallel model on K workers with global batch B, measures every
 * iteration (compute, communication, gradient noise) and plans the cheapest or fastest
 * (VM type, K, B). This header is the library's contract: the functions a program outside
 * the tree needs, each marked SCV_API (libscv.so exports these and nothing else):
 *
 *   versions        SCV_VERSION* macros, scv_version();
 *   status codes    one table (SCV_STATUS_MAP), scv_strerror(), and an optional scv_err
 *                   buffer passed last to every fallible call for a human-readable detail;
 *   training        scv_train_params + scv_train_run(): synchronous data-parallel SGD;
 *   planning        scv_plan_json() (a JSON request in, the plan out), profiles, the
 *                   catalog, the communication options, the printed plan;
 *   the loop        scv_run() with its parameters, policy, job drivers and observer;
 *   the store       the run database's queries (runs, summaries, steps, rows as JSON).
 *
 * The rest of the library (datasets, networks, the models' fits, the store's writes) is
 * internal: declared in headers under src/ (src/<layer>/<layer>.h), for the library's
 * layers and its in-tree tests; docs/ARCHITECTURE.md "The public contract".
 *
 * Example (one process, no MPI launcher needed):
 *
 *     scv_train_params p = scv_train_params_default();
 *     p.model = "lenet"; p.epochs = 1; p.batch = 64;
 *     scv_err err = {0};
 *     scv_train_result r;
 *     if (scv_train_run(&p, &r, &err) != SCV_OK) fprintf(stderr, "%s\n", err.msg);
 *
 * Ownership: whoever calls X_new()/X_load() frees with X_free(); X_free(NULL) is a no-op.
 * Every function that returns int returns SCV_OK (0) or a positive SCV_E* code.
 */
#ifndef SCV_H
#define SCV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions: the release this header is, and scv_version() the library's at run time ----
 * SCV_VERSION is "MAJOR.MINOR.PATCH" (the Makefile reads it: the soname is libscv.so.MAJOR);
 * SCV_VERSION_NUMBER is MAJOR * 10000 + MINOR * 100 + PATCH, for #if. A program compiled
 * against one header and run with another library can compare SCV_VERSION_NUMBER with
 * scv_version_number(). */
#define SCV_VERSION "0.1.0"
#define SCV_VERSION_MAJOR 0
#define SCV_VERSION_MINOR 1
#define SCV_VERSION_PATCH 0
#define SCV_VERSION_NUMBER (SCV_VERSION_MAJOR * 10000 + SCV_VERSION_MINOR * 100 + SCV_VERSION_PATCH)

/* SCV_API marks the functions of this contract: libscv is built with -fvisibility=hidden,
 * so libscv.so exports these and nothing else (the rest of the library is internal,
 * declared in headers under src/). */
#if defined(__GNUC__) || defined(__clang__)
#define SCV_API __attribute__((visibility("default")))
#else
#define SCV_API
#endif

SCV_API const char *scv_version(void);      /* SCV_VERSION of the library that runs */
SCV_API int scv_version_number(void);       /* its SCV_VERSION_NUMBER */

/* ---- status codes: one table; numbers are stable and never reused ---- */
#define SCV_STATUS_MAP(X)                                                      \
    X(OK, 0, "ok")                                                             \
    X(EINVAL, 1, "invalid argument")                                           \
    X(ENOMEM, 2, "out of memory")                                              \
    X(EIO, 3, "i/o error")                                                     \
    X(EPARSE, 4, "malformed input")                                            \
    X(ENOTFOUND, 5, "not found")                                               \
    X(ERANGE, 6, "value out of range")                                         \
    X(EMPI, 7, "MPI error")                                                    \
    X(ECORRUPT, 8, "corrupt data")                                             \
    X(EINTR, 9, "interrupted")                                                 \
    X(ENOCONV, 10, "did not converge")                                         \
    X(EINFEASIBLE, 11, "no configuration meets the constraints")               \
    X(EINTERNAL, 12, "internal error")                                         \
    X(EDNN, 13, "oneDNN error")

typedef enum {
#define SCV__ENUM(name, num, text) SCV_##name = num,
    SCV_STATUS_MAP(SCV__ENUM)
#undef SCV__ENUM
} scv_status;

#define SCV_ERR_LEN 512
/* Optional detail buffer. Pass NULL where no message is wanted. */
typedef struct scv_err {
    int code;
    char msg[SCV_ERR_LEN];
} scv_err;

SCV_API const char *scv_strerror(int code);  /* "invalid argument" */
SCV_API const char *scv_errname(int code);   /* "SCV_EINVAL" */
/* Formats msg into err (if not NULL), stores code and returns it. */
SCV_API int scv_err_set(scv_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the network a job trains (scv_net_parse_hidden; the networks themselves are
 * internal: src/train/train.h) ---- */
#define SCV_MAX_HIDDEN 8
typedef struct scv_net_spec {
    const char *name;          /* logreg | mlp | lenet | resnet */
    int hidden[SCV_MAX_HIDDEN]; /* mlp only */
    int n_hidden;
    int in_c, in_h, in_w;      /* input shape per sample */
    int n_classes;
} scv_net_spec;

/* The most workers (ranks) of a job. */
#define SCV_MAX_WORKERS 1024
/* Parses "256,128" into spec->hidden. */
SCV_API int scv_net_parse_hidden(const char *s, scv_net_spec *spec, scv_err *err);

/* ---- training ---- */
/* Splits B samples over K ranks in proportion to weights (NULL = even), by largest
 * remainder: counts[k] >= 0, sum = B; offsets[k] = sum of counts before k. The split every
 * trainer of a job must use (docs/TRAINER-CONTRACT.md's SCV_SPLIT), so an external trainer
 * (python/scavenger's split_batch) takes the same samples as the built-in one. */
SCV_API void scv_split_batch(int64_t B, int K, const double *weights, int64_t *counts, int64_t *offsets);

typedef enum { SCV_LR_CONST = 0, SCV_LR_STEP, SCV_LR_COSINE } scv_lr_decay;
/* How the learning rate follows the batch B against the base batch B0: none, B/B0, sqrt(B/B0),
 * or AdaScale's gain ratio measured from the gradient's noise at every step (the rule under
 * which the samples to a target carry between batches by the noise-scale law: src/train/sched.h) */
typedef enum { SCV_LR_SCALE_NONE = 0, SCV_LR_SCALE_LINEAR, SCV_LR_SCALE_SQRT, SCV_LR_SCALE_ADASCALE } scv_lr_scaling;
/* The rule's name ("none", "linear", "sqrt", "adascale"), and the rule of a name (SCV_EINVAL
 * naming the names accepted). */
SCV_API const char *scv_lr_scaling_name(scv_lr_scaling v);
SCV_API int scv_lr_scaling_from_name(const char *name, scv_lr_scaling *out, scv_err *err);

/* Or et al.'s straggler rule (defaults in scv_straggler_rule_default()): each iteration a
 * worker's throughput b_k / t_k (its samples over its compute seconds) is divided by the
 * median worker's and smoothed, r_k <- (1 - alpha) r_k + alpha x; a worker whose r_k stays
 * below `fraction` for window_s seconds of training and at least min_iterations iterations
 * is a straggler. */
typedef struct scv_straggler_rule {
    double fraction;            /* 0.8 (0 = off) */
    double alpha;               /* 0.1 */
    double window_s;            /* 5 */
    int min_iterations;         /* 10 */
    /* What the elastic job does with a straggler it finds at speed r (its throughput over a
     * normal worker's; model/hetero.c): by_model 0 (the default): replaced by a spare VM's
     * process whenever one exists, else kept; 1: replaced when a spare exists and
     * r < replace_below, else dropped (parked: the job goes on at K - 1 with the same B) when
     * r < drop_below, else kept (absorbed by dynamic batching when it is on). `scavenger run`
     * sets them per training segment from its performance model and the work left. */
    int by_model;
    double drop_below, replace_below; /* speeds in [0, 1] */
} scv_straggler_rule;
SCV_API scv_straggler_rule scv_straggler_rule_default(void);

/* Dynamic batching (Tyagi & Sharma): each worker's share of the global batch B follows its
 * throughput so that all finish an iteration together; B and the update's mathematics stay
 * those of an even split (gradients weighted b_k / B). Defaults in
 * scv_dynbatch_policy_default(); src/train/dynbatch.c states the rule. */
typedef struct scv_dynbatch_policy {
    double dead_band;           /* 0.05: adjust only when some batch moves by more than this */
    int every;                  /* 20: iterations between adjustments; each worker's seconds
                                   per sample is their mean over those (the paper's "EWMA since
                                   the last readjustment", as a plain mean) */
    double gain;                /* 0.5: the share of the rule's step taken (1 = the paper's
                                   full step; less damps the swings of noisy times) */
    double min_share, max_share; /* 0.02, 0.98: bounds of a worker's share of B */
    double full_step_above;     /* 0.25: the full step (gain 1) while some worker's time is
                                   this far from the mean (relative); `gain` nearer */
    double noise_z;             /* 2: adjust only when some worker's mean time is this many
                                   standard errors (of its window mean) from the workers' mean
                                   time, besides the dead-band */
    int absorb_windows;         /* 2: a worker whose balanced share stays under
                                   min_share / absorb_margin this many windows in a row cannot
                                   be absorbed: reported (and, under the elastic driver,
                                   replaced) */
    double absorb_margin;       /* 1.25: at the floor such a worker computes at least this many
                                   times as long as its balanced share would take (noise near
                                   K = 1 / min_share is not a straggler) */
} scv_dynbatch_policy;

/* GraVAC (Tyagi & Swany, IEEE CLOUD 2023): the compression factor of Top-k with error
 * feedback adapts to the compression gain, gain = E|g_c|^2 / E|g_ef|^2 (the share of the
 * error-fed gradient's energy a step sends). Factors cf_min, cf_min x growth, ... up to cf_max
 * are tried `window` steps each; a factor is feasible while its gain >= eps; the one with the
 * largest compression throughput (samples/s x gain) is kept, dense training when even
 * cf_min falls under eps. Defaults in scv_gravac_policy_default(); compress.c states it. */
typedef struct scv_gravac_policy {
    double eps;                 /* 0.7: the least gain a factor may have (the paper: 0.7, 0.9) */
    double omega;               /* 0.01: a larger factor must bring this much more throughput */
    int window;                 /* 40: steps per factor tried */
    double cf_min, cf_max;      /* 10, 1000 */
    double growth;              /* 2: the next factor tried (the paper's geometric policy) */
} scv_gravac_policy;

/* SelSync (Tyagi & Swany, IEEE CLUSTER 2023): a step synchronises (the workers average their
 * parameters) only when some worker's gradient changed by at least delta relative to the
 * previous step (|g_k|^2 smoothed by an EWMA over `window` steps); otherwise each worker
 * steps on its own gradient. delta = 0 is synchronous SGD. With a target share of local
 * steps (lssr > 0), delta follows the data instead: a step synchronises when the workers'
 * largest change is at or above the q-quantile of the last `history` steps' largest changes,
 * q = lssr + (lssr - the share of local steps so far), so that about that share of the
 * steps is local (what the planner prices). */
typedef struct scv_selsync_policy {
    double delta;               /* 0.3 (the paper: 0.25, 0.3, 0.5) */
    int window;                 /* 25: the EWMA's span, alpha = 2 / (window + 1) */
    double lssr;                /* 0: the delta rule; in (0, 1): the target share of local steps */
    int history;                /* 50: the steps the quantile is taken over (at most 256); until
                                   half of them are seen, every step synchronises */
} scv_selsync_policy;

/* Communication efficiency of `train` (all off by default): Top-k compression with error
 * feedback at a fixed factor or GraVAC's adaptive one, over Allgather or AR-Topk (auto: the
 * cheaper by the alpha-beta model fitted on the measured exchanges), or SelSync. */
typedef enum { SCV_COMPRESS_NONE = 0, SCV_COMPRESS_TOPK, SCV_COMPRESS_GRAVAC } scv_compress_kind;
typedef enum { SCV_COLL_AUTO = 0, SCV_COLL_ALLGATHER, SCV_COLL_ARTOPK } scv_coll_pref;
typedef struct scv_exchange_opts {
    scv_compress_kind compress;
    double cf;                  /* the factor of static Top-k (k = n / cf) */
    scv_coll_pref collective;
    int var_root;               /* AR-Topk's index worker: 0 round robin (STAR), 1 the largest
                                   error-fed gradient of the previous step (VAR) */
    int dense_steps;            /* 20: dense steps first (the residual starts at 0, the
                                   alpha-beta fit gets the dense allreduce's times) */
    int selsync;                /* 1: SelSync (not with compression) */
    scv_gravac_policy gravac;
    scv_selsync_policy sel;
} scv_exchange_opts;

/* Streaming (ScaDLES, Tyagi & Swany, IEEE BigData 2022): worker k receives a data stream of
 * S_k(t) samples/s; a step takes from each worker what has arrived since its last step,
 * b_k = min(buffer_k, b_max), after waiting (if needed) until every buffer holds b_min; the
 * gradients are weighted b_k / sum_j b_j and the learning rate follows sum_j b_j (with
 * --lr-scaling linear: eta (sum_j b_j) / B0). src/train/stream.c states the model. */
typedef enum {
    SCV_STREAM_TRUNCATE = 0,    /* a buffer holds at most b_max samples: the oldest are dropped
                                   (memory O(b_max) = O(S_k) per worker) */
    SCV_STREAM_PERSIST          /* every arrived sample is kept until used (memory O(S_k T)) */
} scv_stream_buffer;
typedef struct scv_stream_policy {
    int64_t b_min;              /* 8: a step waits until every worker's buffer holds this many */
    int64_t b_max;              /* 1024: the most a worker takes in a step, and the truncation
                                   bound of its buffer (the paper's [8, 1024]) */
    scv_stream_buffer buffer;   /* SCV_STREAM_TRUNCATE */
    int full_batch;             /* 1: the conventional baseline: every worker waits for its
                                   fixed even share of the global batch B, i.e. b_min = b_max =
                                   that share (b_min and b_max above are then not used) */
} scv_stream_policy;

/* Each worker's arrival rate over stream time tau (seconds since the stream started),
 * piecewise constant. */
typedef struct scv_stream_rates scv_stream_rates;
/* spec: "r1,r2,..." (one constant rate per worker, samples/s, each > 0), or the path of a
 * rate trace: lines "SECONDS r1 r2 ..." (the rates from that time on; the first line at 0,
 * times increasing, rates >= 0, every worker's last rate > 0 so no stream ends), with blank
 * lines and # comments. K > 0: exactly K rates are required (0: any count, the same on every
 * line). Errors name --stream-rate, and the file and line of a trace. */
SCV_API int scv_stream_rates_parse(const char *spec, int K, scv_stream_rates **out, scv_err *err);
SCV_API void scv_stream_rates_free(scv_stream_rates *r);

typedef struct scv_train_params {
    const char *model;         /* logreg | mlp | lenet | resnet */
    const char *hidden;        /* mlp hidden sizes, "256,128" */
    const char *dataset;       /* see scv_dataset_load */
    int workers;               /* K: expected number of ranks (checked) */
    int threads;               /* compute threads per rank */
    int batch;                 /* global batch B */
    const double *rank_weights; /* optional: per-rank share of B (K values), NULL = even;
                                  finite, > 0, largest / smallest <= SCV_RANK_WEIGHT_RATIO */
    /* optimiser */
    double lr, momentum, weight_decay;
    int base_batch;            /* reference batch for LR scaling */
    scv_lr_scaling lr_scaling;
    double warmup_epochs;
    scv_lr_decay lr_decay;
    double lr_step_epochs, lr_gamma; /* step decay: lr *= gamma every step_epochs */
    double lr_horizon_epochs;  /* cosine horizon; 0 = the --epochs value */
    /* stopping: any that is set; at least one must be */
    double epochs;             /* 0 = unset */
    int64_t iterations;        /* total iterations, counting resumed ones; 0 = unset */
    double target_accuracy;    /* test accuracy in (0,1]; 0 = unset */
    double target_loss;        /* or: period-mean training loss <= this (> 0); 0 = unset */
    int64_t eval_every;        /* iterations; 0 = once an epoch */
    double eval_every_epochs;  /* if > 0 and eval_every is 0: every this many epochs */
    uint64_t seed;
    /* output */
    const char *metrics_path;  /* JSONL per iteration, NULL = none */
    const char *vm_type;       /* catalog VM type these measurements stand for (metrics) */
    const char *checkpoint_dir;
    int64_t checkpoint_every;  /* iterations; 0 = only at the end */
    int resume;
    int progress;              /* 1 = progress line on stderr */
    int no_grad_stats;         /* 1 = skip the gradient-norm statistics (benchmarks only) */
    /* online stopping rules for the Scavenger loop (0 = off): */
    int stop_noise_window;     /* stop once B_simple of two consecutive windows of this many
                                  iterations agree within stop_noise_tol (needs K >= 2) */
    double stop_noise_tol;
    double stop_time_rse;      /* stop once the relative standard error of the mean t_iter of
                                  this invocation (after 3 warm-up iterations) is below this */
    int stop_time_min;         /* ... and at least this many iterations were measured */
    int no_final_eval;         /* 1 = no test-set evaluation when this invocation ends, unless the
                                  target or `epochs` ends it and the last evaluation was on the
                                  subset (or none) */
    int quiet;
    /* evaluation and the target decision */
    int64_t eval_subset;       /* periodic evaluations use N test samples: the test set's
                                  slices of N in turn, by the evaluation's number (the same
                                  for every K, B and resume; "from" in its metrics line);
                                  0 = the whole test set. The final evaluation and
                                  confirmations use the whole set. */
    int target_window;         /* 1: reached when the mean of the last W periodic evaluations
                                  is >= target_accuracy (with a subset, then confirmed) */
    double target_confirm_tol; /* 0.005: with a subset, reached only if the whole test set's
                                  accuracy is >= target_accuracy - this */
    const double *target_history; /* earlier invocations' periodic accuracies (or period-mean
                                  training losses, with target_loss) of the same run,
                                  oldest first: they prefill the window (NULL = none) */
    int n_target_history;
    /* elastic mode (the elastic job driver): the job stays up and trains one segment per
     * command read from elastic_control/cmd (JSON lines), answering on elastic_control/reply;
     * the command's K and B take effect in place: B at once, K by activating, parking or
     * spawning processes (elastic_argv: this program's arguments for the spawned ones;
     * elastic_hosts: "h1,h2,..." where process i runs, NULL = this host). The stopping
     * rules above apply per segment and come from each command. */
    const char *elastic_control;
    char **elastic_argv;
    const char *elastic_hosts;
    int contract_state;        /* 1: every checkpoint also writes scavenger-state.json (the trainer
                                  contract, docs/TRAINER-CONTRACT.md) */
    int dynamic_batching;      /* 1: the workers' shares of B follow their throughput (the
                                  rank_weights, if any, are the first shares) */
    scv_dynbatch_policy dynbatch;
    const scv_stream_rates *stream; /* streaming (ScaDLES): each step's per-worker batches follow
                                  these arrival rates (K workers; NULL = off, batch B split as
                                  above). The stream's clock starts with each invocation (a
                                  resumed run's buffers start empty). Not with dynamic_batching,
                                  rank_weights or elastic_control. `batch` is then nominal (the
                                  iteration count of eval_every_epochs, the progress ETA) except
                                  under stream_policy.full_batch, where it is the global batch */
    scv_stream_policy stream_policy;
    /* non-IID streams and data injection (src/train/noniid.c states the rules; with or
     * without streaming; not with elastic_control): */
    double noniid_skew;        /* 0 = IID (off); in (0, 1]: each worker's slice of a step's
                                  batch holds this fraction of its home classes' samples */
    double inject_alpha, inject_beta; /* both 0 = off; in (0, 1]: each step ceil(alpha K)
                                  random workers share a fraction beta of their own samples
                                  with every other worker, b' = b / (1 + alpha beta K) */
    scv_exchange_opts comm;        /* communication efficiency (off by default): Top-k, GraVAC, SelSync */
    scv_straggler_rule straggler; /* fraction 0 = off: find stragglers (a metrics line each);
                                  elastic mode replaces one with a spare process when it can */
    int no_end_checkpoint;     /* 1: no checkpoint when the invocation (segment) ends well: an
                                  elastic segment keeps its state in memory (the periodic
                                  checkpoints and an interruption's are still written) */
} scv_train_params;

typedef struct scv_train_result {
    int rank;                  /* this process's rank: only rank 0 reports */
    char model[64];
    int workers, batch;
    int64_t iterations;        /* total, counting resumed ones */
    int64_t iterations_run;    /* in this invocation */
    int64_t samples_seen;      /* in all, counting resumed ones */
    double epochs;             /* samples seen / training set size */
    double samples_per_sec;
    double test_accuracy, test_loss;
    double train_loss;         /* mean loss over the last iterations */
    double wall_seconds;
    double t_compute_mean, t_comm_mean, t_iter_mean;
    int reached_target;
    int interrupted;
    char stopped_by[24];       /* iterations | epochs | target | noise_stable | time_stable |
                                  interrupted | max_epochs | straggler */
    int straggler;             /* stopped_by straggler: the worker found slow, */
    double straggler_ratio;    /*   its smoothed throughput over the median's */
    double b_simple;           /* last window's estimate (noise rule), NaN if none */
    int accuracy_full;         /* 1: test_accuracy is from the whole test set, 0: the subset */
    double eval_seconds;       /* seconds spent evaluating in this invocation (all kinds) */
    int evals_subset, evals_full; /* evaluations in this invocation, by set */
    char reached_by[256];      /* how the target was decided ("" = not reached) */
    double stream_wait_seconds; /* streaming: seconds this invocation's steps waited for data
                                  (part of t_iter; 0 when off) */
    int64_t stream_dropped;    /* streaming: samples the truncated buffers dropped, all workers */
    double noniid_skew;        /* the skew in force (0: IID) */
    int n_home;                /* workers in home_fraction (min(K, 64); 0: not measured, i.e.
                                  neither streaming nor a data option was on) */
    double home_fraction[64];  /* worker k's share of its home-class samples in its local
                                  batches (own and injected) over this invocation */
    double home_fraction_mean; /* ... over all workers (NaN: not measured) */
    int64_t injected_samples;  /* data injection: the copies the workers trained on */
    double injected_bytes;     /* ... times the bytes of a sample (what sending them would cost;
                                  this emulation moves indices, every rank holds the data) */
    int rebalances;            /* dynamic batching: the controller's adjustments in this invocation */
    int n_shares;              /* K of shares (0: dynamic batching off) */
    double shares[SCV_MAX_WORKERS]; /* dynamic batching: the workers' shares of B at the end */
} scv_train_result;

#define SCV_RANK_WEIGHT_RATIO 1e6
SCV_API scv_train_params scv_train_params_default(void);
/* Validates everything that does not need the data (usage errors): returns SCV_EINVAL
 * with the option named in err. */
SCV_API int scv_train_params_check(const scv_train_params *p, scv_err *err);
/* Runs training in this process; under mpirun every rank calls it. Rank 0 writes metrics,
 * checkpoints and progress. Returns SCV_EINTR after a clean stop on SIGINT/SIGTERM (or
 * SIGUSR1). For its duration it installs its own handler for those three and blocks them in
 * the calling thread (and so in the threads it starts), taking them at iteration boundaries;
 * the previous handlers and mask come back when it returns. */
SCV_API int scv_train_run(const scv_train_params *p, scv_train_result *res, scv_err *err);
/* Writes res as one JSON object (no newline) into buf; returns the length. */
SCV_API int scv_train_result_json(const scv_train_result *res, char *buf, size_t cap);

/* ==== measurements, models and planning (src/model/ computes them, pure: libc and libm; its
 * fits and the planner's C interface are internal, src/model/model.h) ==== */

/* Measurements of one configuration, summarised from the trainer's metrics. Times are
 * means over the iterations kept (the first ones of each configuration are warm-up). */
typedef struct scv_config_stats {
    char vm[64];            /* VM type the measurements stand for ("" = unknown) */
    int workers, batch;     /* K, global batch B */
    int threads;            /* compute threads per worker (0 = unknown) */
    int n_iters;            /* iterations summarised */
    double t_compute;       /* s, forward + backward (rank 0's) */
    double t_comm;          /* s, allreduce (including waiting) */
    double t_iter;          /* s, whole iteration */
    double g_local, g_global; /* means of |g_k|^2 (over ranks) and of |g|^2; 0 = not measured */
    double epoch_progress;  /* training progress (epochs) at the end of these iterations */
    double t_compress;      /* s, mean compression kernel time (error feedback, Top-k selection,
                               reassembly: the metrics' "t_compress") of its compressed steps
                               ("cf" > 1); 0 = none measured */
    int n_compressed;       /* iterations kept with "cf" > 1 (those t_compress is the mean of) */
    double t_latency;       /* s, one allreduce of 4 bytes at this K (the metrics' "latency" line, the
                               trainer's probe at a segment's start); 0 = not measured */
} scv_config_stats;

/* What a profile knows about the job (the "job" line of a metrics file). */
typedef struct scv_job_info {
    char model[64], arch[128], vm[64], dataset[256];
    double n_params;        /* parameters */
    double act_bytes;       /* activation bytes per sample (forward values) */
    double input_floats;    /* floats per input sample */
    double n_train;         /* training-set size */
    int threads;
    /* the learning-rate rule, where the driver knows it (the built-in trainer's options):
     * lr at base_batch, scaled by lr_scaling at other batches; lr 0 = not known */
    double lr;
    int base_batch;
    scv_lr_scaling lr_scaling;
    /* the VM types a driver can place a segment on (scv_segment_spec.vm_type) and how many
     * VMs of each it holds, filled by the driver's open: an emulated cluster's types; none
     * (n_types = 0) where the driver places only on vm, the type its measurements stand for
     * (local processes, a hostfile) */
#define SCV_JOB_MAX_TYPES 8
    int n_types;
    char types[SCV_JOB_MAX_TYPES][64];
    int type_vms[SCV_JOB_MAX_TYPES];
} scv_job_info;

/* A profile: the configurations measured in one or more metrics files of the trainer.
 * Iterations of one configuration are its consecutive "iter" lines; the first
 * max(3, 10%) of each such run are warm-up and left out. */
typedef struct scv_profile {
    scv_job_info job;
    int has_job;
    scv_config_stats *configs;
    size_t n;
} scv_profile;
/* paths: one file or several separated by commas. Each malformed line is an error that
 * names its file and line. */
SCV_API int scv_profile_load(const char *paths, scv_profile **out, scv_err *err);
SCV_API void scv_profile_free(scv_profile *p);

/* Parallel model, per VM type (seconds):
 *   t_compute(b) = c0 + c1 * b                       b = B / K samples per worker
 *   ring:  t_comm(K) = 2 (K-1) alpha + 2 ((K-1)/K) M beta      M = model bytes
 *   ps:    t_comm(K) = alpha + beta * K                        (parameter server, K > 1)
 *   t_iter = t_compute + t_comm - overlap * min(t_compute, t_comm)
 * alpha [s], beta [s/byte] (ring) or [s/worker] (ps), overlap in [0,1]. */
typedef enum { SCV_TOPO_RING = 0, SCV_TOPO_PS } scv_topology;
typedef struct scv_perf_model {
    scv_topology topology;
    double c0, c1, alpha, beta, overlap;
    double alpha_msg;       /* s per message of a small collective (the latency probes, t_latency =
                               ceil(log2 K) alpha_msg); 0 = not probed: alpha is used */
    double model_bytes;
    unsigned pinned;        /* SCV_PIN_* bits: parameters the data could not identify */
    double mare;            /* mean absolute relative error of t_iter on the fitted points */
    int n_points;
    char note[160];         /* what was pinned and why */
} scv_perf_model;
#define SCV_PIN_C0 1u
#define SCV_PIN_C1 2u
#define SCV_PIN_ALPHA 4u
#define SCV_PIN_BETA 8u
#define SCV_PIN_OVERLAP 16u

/* Sparse collectives (src/model/perf.c; the trainer's exchange and the planner use them):
 * seconds to exchange a Top-k of density c (k = c n) of a gradient of M bytes over N workers,
 * alpha seconds per message and beta seconds per byte (AR-Topk paper, Table I and Eq. 4):
 *   Allgather Top-k (values and indices):  alpha log2 N + 2 M c beta (N - 1)
 *   AR-Topk, ring allreduce of the values: alpha (2(N-1) + log2 N) + M c beta (2(N-1)/N + log2 N)
 *   AR-Topk, tree allreduce:               3 alpha log2 N + 3 M c beta log2 N
 * (the log2 N terms of AR-Topk are the broadcast of the chosen worker's indices); 0 for N < 2. */
typedef enum { SCV_SPARSE_ALLGATHER = 0, SCV_SPARSE_AR_RING, SCV_SPARSE_AR_TREE } scv_sparse_coll;

/* Statistical models: iterations to reach the target at global batch B.
 *  GNS (McCandlish et al.; AdaptDL):  S(B) = S_min (1 + B_crit / B),  B_crit = B_simple
 *    B_simple = tr(Sigma) / |G|^2, from the unbiased two-batch estimators with the local
 *    (b = B/K) and global (B) squared norms, as a ratio of averages over iterations.
 *  Scavenger: gamma = mean_k |g_k|^2 / |g|^2;  gamma/K = a + s / sqrt(B);
 *    epochs e = e* + theta * gamma/K;  iterations = e * N / B.
 * The target is given as epochs E0 at batch B0 (from the user, or from a run that reached
 * it). With one reference, Scavenger's e* is pinned to 0. lag_epochs (set after the fit; 0
 * by default) adds the same epochs at every B: how far a smoothed target rule trails the
 * learning curve's crossing. */
typedef enum { SCV_STAT_GNS = 0, SCV_STAT_SCAVENGER } scv_stat_kind;
typedef struct scv_stat_model {
    scv_stat_kind kind;
    double n_train;
    double b_simple, s_min;          /* GNS */
    double gamma_a, gamma_s;         /* Scavenger noise fit */
    double e_star, theta;            /* Scavenger epochs fit */
    double target_epochs, target_batch;
    double lag_epochs;
    int by_exponent;                 /* 1: samples carry from target_batch as (B / target_batch)^exponent
                                        (a run's own batch carry-over), not by the kind's law */
    double exponent;
    int n_points;
    char note[160];
} scv_stat_model;
/* B_simple implied by one configuration's norms (NaN when K = 1 or not measured). */
SCV_API double scv_gns_b_simple(int K, int B, double g_local, double g_global);

/* VM catalog (the format of shared/data/vm-catalog.csv; unknown columns ignored). */
typedef struct scv_vm_type {
    char provider[16], name[96];
    int vcpus, gpus;
    double mem_gib, ondemand, spot_min, spot_max, net_gbps; /* NaN where the catalog is empty */
    int line;               /* line in the catalog file */
} scv_vm_type;
typedef struct scv_catalog {
    scv_vm_type *vms;
    size_t n;
    int skipped;            /* rows without a full VM (no vCPUs/memory/price) */
    char skipped_note[256];
} scv_catalog;
SCV_API int scv_catalog_load(const char *path, scv_catalog **out, scv_err *err);
SCV_API void scv_catalog_free(scv_catalog *c);
SCV_API const scv_vm_type *scv_catalog_find(const scv_catalog *c, const char *name);

typedef enum { SCV_PRICE_ONDEMAND = 0, SCV_PRICE_SPOT, SCV_PRICE_MEMORY } scv_pricing;

/* ---- planner ---- */
/* UTILITY (Or et al.'s utility against cost): the point that maximises the user's value of
 * finishing earlier less its cost, i.e. minimises C + value_per_hour T / 3600. */
typedef enum { SCV_OBJ_TIME = 0, SCV_OBJ_COST, SCV_OBJ_KNEE, SCV_OBJ_UTILITY } scv_objective;

/* How a plan point's compute time t_c = c0 + c1 b was carried from the measured VM type
 * (communication stays as measured, but for a mixed cluster's slowest link). n_v: threads a worker uses on type v (its
 * vCPUs, capped by worker_threads); n_m: threads of the measurements; f: parallel fraction. */
typedef enum {
    SCV_EXTRAP_NONE = 0,        /* the measured type at the measured threads */
    SCV_EXTRAP_SAME_THREADS,    /* other CPU type, n_v = n_m: t_c as measured */
    SCV_EXTRAP_NO_SCALING,      /* n_v != n_m, no measured f: t_c as measured (no vCPU speed-up) */
    SCV_EXTRAP_AMDAHL,          /* t_c * ((1-f) + f/n_v) / ((1-f) + f/n_m) */
    SCV_EXTRAP_GPU_ASSUMED,     /* GPU type from CPU measurements: t_c / gpu_speedup (user's) */
    SCV_EXTRAP_GPU_AS_MEASURED  /* other GPU type from GPU measurements: t_c as measured */
} scv_extrap;
/* "extrapolated: no thread-scaling measurement, compute as measured", ... */
SCV_API const char *scv_extrap_desc(scv_extrap e);

/* A mixed cluster: count[i] workers of catalog type vm[i] for i < n, K = sum of the counts
 * (1..SCV_MAX_WORKERS). docs/MODEL.md "Mixed clusters" states how it is predicted. */
#define SCV_MIX_MAX_TYPES 4
typedef struct scv_vm_mix {
    int n;
    int vm[SCV_MIX_MAX_TYPES];
    int count[SCV_MIX_MAX_TYPES];
} scv_vm_mix;
/* "c5.xlarge:2+c6i.4xlarge:1" into buf; returns the length it needs (as snprintf). */
SCV_API int scv_vm_mix_format(const scv_catalog *c, const scv_vm_mix *m, char *buf, size_t cap);

/* A communication option of the planner (docs/MODEL.md "Compression in the plan"): how a
 * step's gradient travels. The parallel model prices its bytes; its effect on the
 * iterations to the target is NOT modelled: iter_factor is the user's assumption. */
typedef enum { SCV_PLAN_DENSE = 0, SCV_PLAN_TOPK, SCV_PLAN_SELSYNC } scv_plan_comm_kind;
typedef struct scv_plan_comm {
    scv_plan_comm_kind kind;
    double cf;                  /* TOPK: the compression factor, > 1 (density c = 1/cf) */
    scv_coll_pref collective;   /* TOPK: AUTO the cheapest of the three by the model,
                                   ALLGATHER, ARTOPK (its ring or tree form, the cheaper) */
    double lssr;                /* SELSYNC: the share of local steps, in [0, 1) */
    double iter_factor;         /* iterations to target relative to dense (> 0; 0 = 1, "as
                                   dense"): assumed, not measured; ignored on DENSE */
    double t_iter_scale;        /* the option's iteration times are the model's x this (0 = 1):
                                   measured / predicted where a run trained with it (the loop
                                   sets it; the model's sparse costs are a prediction) */
} scv_plan_comm;
/* A list of options, "none,topk:10,topk:100:artopk,selsync:0.9" (src/model/commopt.c):
 * none (or dense), topk:CF[:auto|allgather|artopk], selsync:LSSR; iter_factor on every
 * option that is not dense. Dense is always planned: it comes first in *out, added when the
 * list lacks it. At most cap options; SCV_EINVAL naming the part at fault ("'topk:1': the
 * factor must be > 1"), a part named twice or an empty list included. */
SCV_API int scv_plan_comm_parse(const char *list, double iter_factor, scv_plan_comm *out, size_t cap, size_t *n,
                        scv_err *err);
/* "dense", "topk:100", "topk:100:artopk", "selsync:0.9" into buf; returns the length it
 * needs (as snprintf). */
SCV_API int scv_plan_comm_format(const scv_plan_comm *o, char *buf, size_t cap);
#define SCV_PLAN_MAX_COMMS 16 /* options besides dense that `plan --compress` and job files take */

typedef struct scv_plan_point {
    int vm;                 /* index into the catalog (a mix: its type with the slowest link) */
    int workers, batch;
    double t_iter, iterations, time_s, cost, price_hr; /* a mix: price_hr is the mean per worker */
    double err_rel;         /* relative uncertainty of time (and cost) */
    int extrapolated;       /* 1: not the measured type at the measured threads (extrap != NONE) */
    int pareto;
    scv_extrap extrap;      /* how t_compute was carried to this VM type (a mix: its worst type's) */
    double compute_scale;   /* t_compute(this type) / t_compute(measured) (a mix: its T_c over
                               the measured type's at b = B/K) */
    /* mixed clusters (zero on points built elsewhere: mix_types.n = 0 is one VM type) */
    int mix;                /* -1: one VM type; else the index into the request's mixes */
    scv_vm_mix mix_types;   /* the mix's types and counts (n = 0 on a homogeneous point) */
    double mix_batch[SCV_MIX_MAX_TYPES]; /* per-worker batch of each type (dynamic batching) */
    double comm_scale;      /* factor on the bandwidth term of communication (1 = as measured) */
    /* communication options (zero on points built elsewhere: kind DENSE) */
    int comm;               /* -1: dense, the request has no dense option; else the index into
                               the request's comms (its first dense option on dense points) */
    scv_plan_comm comm_opt; /* the option (iter_factor as applied: 1 on dense points) */
    scv_sparse_coll comm_coll; /* TOPK: the collective the model priced */
    double t_comm;          /* predicted communication seconds of a step (the option's) */
    double time_lo_s, time_hi_s; /* the band of time_s: the target's estimate's, carried to this B
                               (the planner prices it; 0: none, hi +inf: its top never reaches it) */
    double cost_lo, cost_hi;    /* ... and of cost (the same ratios: cost is proportional to time) */
    double idle_s;              /* of time_s: the idle before its training segments (their
                                   start-ups, as the run measured them; 0: not priced) */
} scv_plan_point;

typedef struct scv_plan_result {
    scv_plan_point *points;                 /* every feasible configuration */
    size_t n_points;
    size_t *front; size_t n_front;          /* indices of the Pareto front, by time */
    long chosen;                            /* index into points */
    char why[256];                          /* the rule, the neighbours, the bounds */
    size_t n_excluded_memory;               /* configurations whose b does not fit the VM */
    size_t n_excluded_gpu;                  /* VM types left out: GPU types from CPU
                                               measurements (no gpu_speedup), or the reverse */
    char note[512];                         /* what was left out or extrapolated, and how */
    size_t n_excluded_mix;                  /* mixes left out: a type of theirs is left out
                                               as above */
    /* the plan without compression (the dense points alone; with no communication option
     * front_dense lists the same points as front and chosen_dense is chosen) */
    size_t *front_dense; size_t n_front_dense; /* indices of the dense points' Pareto front, by time */
    long chosen_dense;                      /* the objective's choice among them under the same
                                               bounds (-1: none meets them) */
    char comm_note[384];                    /* with communication options: what is assumed
                                               ("iterations assumed x1.0 of dense: not
                                               measured") and left out; "" without */
} scv_plan_result;

/* The target's metric: test accuracy (higher is better) or training loss (lower). */
typedef enum { SCV_METRIC_ACCURACY = 0, SCV_METRIC_LOSS } scv_metric;

/* ---- names of the choices: the command line, job files and the service use these ---- */
typedef enum { SCV_SEARCH_PARTIAL = 0, SCV_SEARCH_FULL, SCV_SEARCH_NONE } scv_search_policy;
/* How the loop chooses: Scavenger's plan (models of time to the target, cost, the objective),
 * or Or et al.'s throughput scaling (MLSys 2020): a fixed per-worker batch b (the start
 * configuration's), B = b K up to the largest B, workers added in the space's steps while
 * each added worker brings at least policy.scaling_threshold of a worker's throughput,
 * s = (T(K') - T(K)) / ((K' - K) T(K) / K) with T = B / t_iter (samples/s); then settled. */
typedef enum { SCV_SCALING_PLAN = 0, SCV_SCALING_THROUGHPUT } scv_scaling;
/* The name of a value ("knee"), NULL when out of range. */
SCV_API const char *scv_objective_name(scv_objective v);
SCV_API const char *scv_stat_name(scv_stat_kind v);
SCV_API const char *scv_topology_name(scv_topology v);
SCV_API const char *scv_pricing_name(scv_pricing v);
SCV_API const char *scv_search_name(scv_search_policy v);
SCV_API const char *scv_scaling_name(scv_scaling v);
/* The value of a name: SCV_OK, or SCV_EINVAL with "'x': expected time, cost or knee" in err. */
SCV_API int scv_objective_from_name(const char *name, scv_objective *out, scv_err *err);
SCV_API int scv_stat_from_name(const char *name, scv_stat_kind *out, scv_err *err);
SCV_API int scv_topology_from_name(const char *name, scv_topology *out, scv_err *err);
SCV_API int scv_pricing_from_name(const char *name, scv_pricing *out, scv_err *err);
SCV_API int scv_search_from_name(const char *name, scv_search_policy *out, scv_err *err);
SCV_API int scv_scaling_from_name(const char *name, scv_scaling *out, scv_err *err);

/* ---- cost: the one place dollars are computed ---- */
/* C = K * T / 3600 * p: dollars for `workers` VMs over `seconds` at price_hr $/VM-hour. */
SCV_API double scv_cost_usd(int workers, double seconds, double price_hr);

/* ---- plan output (src/io/planout.c): one format for `plan`, `run` and the reports ---- */
/* "12.5 ms", "3.71 s", "54.9 s", "3.2 min", "1.50 h"; "-" for NaN. */
SCV_API void scv_fmt_time(double seconds, char *buf, size_t cap);
/* "$12.40", "$0.00262": small amounts keep three significant digits; "-" for NaN. */
SCV_API void scv_fmt_usd(double usd, char *buf, size_t cap);
/* The table with a "comm" column after "vm" when with_comm (plans with communication
 * options: "dense", "topk:100", "selsync:0.9"); with_comm 0 is the two above exactly. */
SCV_API void scv_plan_print_header_ex(FILE *f, int with_comm);
SCV_API void scv_plan_print_point_ex(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *mark,
                             int with_comm);
/* The figure of a plan as SVG: one line per B across K for each VM type, the front, the
 * choice and, when actual_time_s > 0, the measured outcome. Written atomically. */
SCV_API int scv_plan_svg_write(const char *path, const scv_catalog *cat, const scv_plan_result *res,
                       double actual_time_s, double actual_cost, scv_err *err);

/* ---- planning from JSON (src/io/plan_json.c): for bindings and services ----
 * `scavenger plan --json` as a call: request_json is a JSON object with the command's
 * inputs, named as its options with '_' for '-':
 *   "profile": "a.jsonl,b.jsonl" or ["a.jsonl", ...]    metrics files of `train --metrics`,
 *   "metrics": "<JSON lines>" or ["<JSON lines>", ...]  or their text (one of the two);
 *   the target, "target_epochs" (with "base_batch") or "target_run" with "target_accuracy";
 *   optional: "catalog", "measured_on", "vm" ("all", "a,b" or ["a", "b"]), "workers" and
 *   "batch" (a spec "1..64", a number or an array of numbers), "b_min", "b_max", "comm",
 *   "overlap", "stat", "pricing", "assume_gpu_speedup", "objective", "value_per_hour",
 *   "deadline" (seconds, or "45m"), "budget", "all" (true: list every point), "mix" (mixed
 *   clusters: "a:2,b:1" with mixes separated by ';', or an array of such strings),
 *   "compress" (communication options "none,topk:100,selsync:0.9" or an array of them) and
 *   "compress_iterations" (their assumed iterations relative to dense, > 0).
 * On SCV_OK *result_json is the report `plan --json` prints (one line, no newline; free it
 * with scv_json_free); else it is NULL and err names the field at fault (SCV_EPARSE: not
 * JSON; SCV_EINVAL: a field missing, unknown or of the wrong type or range) or the file,
 * and SCV_EINFEASIBLE says no configuration meets the deadline or budget. Reentrant.
 * It reads the files a request names: a service taking requests from others should pass
 * "metrics" and refuse "profile", "catalog" and "target_run". Work and memory are bounded:
 * a space (VM types and mixes x workers x batches x communication options) over 100,000
 * points is refused before planning, and a report over 32 MiB after it, with SCV_ERANGE
 * naming the limit; "max_points" (an integer) raises the first for a trusted caller. */
SCV_API int scv_plan_json(const char *request_json, char **result_json, scv_err *err);
SCV_API void scv_json_free(char *json);

/* Where a data file of the distribution is ("vm-catalog.csv", "emulated-vms.csv"): data/NAME
 * in the working directory; else beside the executable or the library (a checkout's data/,
 * an installed tree's share/scavenger/); else the directory `make install` put it in. Writes
 * the path into buf and returns buf ("data/NAME" when none exists). */
SCV_API const char *scv_data_file(const char *name, char *buf, size_t cap);

typedef struct scv_store scv_store; /* the run store, below */

/* ==== the Scavenger loop (src/search/) ====
 * scv_run() trains a job through a job driver, measures it, searches the (K, B) space,
 * fits the models, plans, chooses and trains to the target, re-planning when the
 * measurements drift from the plan. An explicit state machine:
 *
 *     WARMUP -> SEARCH -> PLAN -> TRAIN <-> REPLAN -> DONE      (or INTERRUPTED, FAILED)
 *
 * Every step is recorded in the store, so an interrupted run resumes where it stopped. The
 * loop knows neither MPI nor processes: it trains only through the driver's vtable and
 * reports only through the observer. */
typedef enum {
    SCV_STATE_WARMUP = 0, SCV_STATE_SEARCH, SCV_STATE_PLAN, SCV_STATE_TRAIN, SCV_STATE_REPLAN,
    SCV_STATE_DONE, SCV_STATE_INTERRUPTED, SCV_STATE_FAILED
} scv_run_state;
SCV_API const char *scv_run_state_name(scv_run_state s);

/* One iteration as a driver measured it (seconds; squared norms as in the metrics). */
typedef struct scv_iter_sample {
    int64_t iteration;          /* total, counting earlier segments */
    double samples_seen, epoch; /* after this iteration */
    int workers, batch;
    double t_compute, t_comm, t_iter, loss, g_local, g_global;
    double wall_end;            /* wall clock (s since the epoch) when it ended */
} scv_iter_sample;
/* One evaluation of the model on the test set. */
typedef struct scv_eval_sample {
    int64_t iteration;
    double samples_seen, epoch, accuracy, loss;
    double train_loss;          /* the period-mean training loss since the previous evaluation
                                   (NaN: not measured) */
    double train_loss_samples;  /* ... over this many samples (0: unknown) */
    double seconds;             /* the evaluation's own time (NaN or 0: not measured) */
} scv_eval_sample;
/* Where a driver delivers measurements as they come (either callback may be NULL). */
typedef struct scv_measure_sink {
    void *ctx;
    void (*on_iter)(void *ctx, const scv_iter_sample *s);
    void (*on_eval)(void *ctx, const scv_eval_sample *e);
} scv_measure_sink;

/* A straggler as a driver found and handled it. */
typedef struct scv_straggler_event {
    int64_t iteration;          /* when it was found (total) */
    int worker;                 /* its rank among the K workers then */
    char host[64];              /* where it ran ("": this machine) */
    double ratio;               /* its smoothed throughput over the median's */
    int replaced;               /* 1: a fresh worker took its place, on by_host */
    int dropped;                /* 1: left out, the job went on at K - 1 with the same B */
    char by_host[64];
    double idle_s;              /* training stood still this long for the replacement */
    char note[256];             /* what was done, and why not more (and the model's times) */
} scv_straggler_event;
#define SCV_MAX_STRAGGLER_EVENTS 8

/* A preemption the job survived in place (docs/CLUSTER.md "Surviving a preemption"): a
 * worker's notice (the job shrank to `workers`) or its VM's restore (it grew back). */
typedef struct scv_survive_event {
    int64_t iteration;          /* when it was acted on (total) */
    int process;                /* the job's process it concerned */
    int restored;               /* 0: a notice; 1: the VM came back */
    int workers;                /* K after it */
    double idle_s;              /* training stood still this long for it */
} scv_survive_event;
#define SCV_MAX_PREEMPT_EVENTS 8

/* One training segment: train at the configured (K, B) until one of the rules stops it. */
typedef struct scv_segment_spec {
    const char *phase;          /* "warmup" | "search" | "train": names files and steps */
    int64_t until_iterations;   /* stop at this total iteration count (0 = no cap) */
    int noise_window;           /* stop when B_simple of two consecutive windows of this */
    double noise_tol;           /*   many iterations agree within noise_tol (0 = off) */
    double time_rse;            /* stop when the mean t_iter's relative standard error is */
    int time_min_iters;         /*   under time_rse after at least time_min_iters (0 = off) */
    double target_accuracy;     /* stop at the target test accuracy */
    double target_loss;         /* ... or training loss (one of the two is set) */
    double max_epochs;          /* ... or after this many epochs in all */
    double eval_every_epochs;   /* evaluate on the test set this often */
    int64_t checkpoint_every;   /* iterations between checkpoints */
    int final_eval;             /* evaluate when the segment ends */
    int eval_subset;            /* periodic evaluations on this many held-out samples (0 = all) */
    double eval_max_share;      /* an external trainer skips a due periodic evaluation while its
                                   evaluations took more than this share of its time (0: never;
                                   SCV_EVAL_MAX_SHARE: warm-up and search) */
    int target_window;          /* reached when the mean of the last W evaluations >= target */
    const double *history;      /* the run's latest target values (accuracies or period-mean
                                   training losses), oldest first (W - 1 at most), */
    int n_history;              /*   so a new segment continues the smoothing */
    const scv_straggler_rule *straggler; /* find stragglers (NULL = off); a driver that can
                                   replaces them, else reports them */
    int dynamic_batching;       /* the workers' shares of B follow their throughput */
    /* the gradient exchange (NULL: dense): a TOPK option of the run's plan, set on training
     * segments at a configuration chosen with it (warm-up and search stay dense: the
     * performance model is fitted on dense steps); comm_collective: ALLGATHER or ARTOPK, the
     * collective the plan priced (the option's, or the model's pick for AUTO) */
    const scv_plan_comm *comm;
    scv_coll_pref comm_collective;
    /* the VM type to place the segment's K workers on (a catalog type; NULL or the driver's
     * own type: where it always places). Another type must be one of job.types with at least
     * K VMs, else train refuses the segment (SCV_EINVAL naming the type); the elastic driver
     * moves to another type by a relaunch of its job at the new placement (from the
     * checkpoint its stop writes) */
    const char *vm_type;
} scv_segment_spec;

/* What a segment did. first_start / last_end are wall-clock stamps of its first
 * iteration's start and last iteration's end: the loop measures idle time between
 * segments from them. */
typedef struct scv_segment_result {
    int64_t iterations;         /* run in this segment */
    int64_t total_iterations;   /* in all, after it */
    double samples_seen;        /* in all, after it */
    double first_start, last_end;
    double accuracy;            /* the last test accuracy, NaN if none */
    int reached;                /* the target was reached */
    scv_config_stats stats;     /* summary of the segment (stats.workers = 0: too few iterations) */
    scv_straggler_event stragglers[SCV_MAX_STRAGGLER_EVENTS]; /* found in this segment */
    int n_stragglers;
    scv_survive_event preemptions[SCV_MAX_PREEMPT_EVENTS]; /* survived in this segment */
    int n_preemptions;
    int rebalances;             /* dynamic batching: the controller's adjustments in it */
    int n_shares;               /* K of shares (0: dynamic batching off or not reported) */
    double shares[SCV_MAX_WORKERS]; /* the workers' shares of B at its end */
} scv_segment_result;

/* The job-driver interface: the only way the loop trains (like ggml's backends or
 * Horovod's transports). A driver keeps the job's state (model, optimiser, data position)
 * across segments and configurations. All functions return SCV_OK or an SCV_E* code;
 * train returns SCV_EINTR when the user interrupted it, SCV_EIO when the job's files (its
 * checkpoint, its metrics) cannot be written, a full disk say (the run stops at once: a
 * retry cannot help; it can be resumed once there is space), SCV_EINVAL when the job
 * refuses the segment (its options or configuration; not retried either), and any other code when the
 * segment failed otherwise, a worker that died say (the loop retries from the last durable
 * state, policy.max_retries times). */
typedef struct scv_job_driver {
    const char *name;
    void *ctx;
    /* Prepares the job with its files under run_dir, proves it starts and describes it
     * (sizes, the VM type its measurements stand for). */
    int (*open)(void *ctx, const char *run_dir, scv_job_info *job, scv_err *err);
    /* Iterations and samples the job's durable state holds (0 before the first segment). */
    int (*progress)(void *ctx, int64_t *iterations, double *samples, scv_err *err);
    /* The configuration the next segments train at: K workers, global batch B and each
     * worker's share of B (K weights; NULL = even). */
    int (*configure)(void *ctx, int workers, int batch, const double *split, scv_err *err);
    /* Trains one segment; measurements go to sink (may be NULL) as they come. */
    int (*train)(void *ctx, const scv_segment_spec *spec, const scv_measure_sink *sink,
                 scv_segment_result *out, scv_err *err);
    /* Makes the job's state durable now. */
    int (*checkpoint)(void *ctx, scv_err *err);
    /* Optional (NULL = none): what the run's segment number `index` (0-based) trained before
     * the run was killed, so a resumed run records it: SCV_OK with out, its phase, K and B;
     * SCV_ENOTFOUND when there is no such segment. */
    int (*recover)(void *ctx, int index, scv_segment_result *out, char *phase, size_t cap, int *workers,
                   int *batch, scv_err *err);
    /* Releases the job (its durable state stays); the driver can be opened again. */
    void (*close)(void *ctx);
    /* Frees the driver itself (scv_job_driver_free calls it). */
    void (*destroy)(void *ctx);
} scv_job_driver;

/* The relaunch driver: each segment is a `scavenger train` child process (through mpirun,
 * locally or on an emulated cluster) that resumes the run's checkpoint. */
typedef struct scv_relaunch_opts {
    const char *exe;            /* the scavenger executable (NULL = this process's own) */
    const char *const *train_opts; /* "--model", "lenet", ... NULL-terminated pairs */
    const char *cluster;        /* emulated cluster name, NULL = local processes */
    const char *vm_type;        /* catalog type the measurements stand for */
    const char *catalog;        /* the catalog that type is from (NULL = the default) */
    int show_progress;          /* the child's progress line on stderr */
    const char *exec;           /* the exec driver: the external trainer's command (run by
                                   /bin/sh on every worker; docs/TRAINER-CONTRACT.md) */
    const char *hostfile;       /* real machines: an Open MPI hostfile (ssh), NULL = none */
    uint64_t seed;              /* the exec driver: SCV_SEED (0 = 1) */
    double stall_timeout_s;     /* the watchdog: a segment with no metrics line for this long
                                   (before its first: start-up; later at least this, or 50
                                   iterations) fails and is retried (0 = 600 s / 120 s) */
} scv_relaunch_opts;
SCV_API int scv_relaunch_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err);
/* The elastic driver (Or et al.): one `scavenger train --elastic-control` job stays up
 * across segments and changes K and B in place (parked and spawned processes, state passed
 * in memory); a job that fails is restarted from the checkpoint. The same options. */
SCV_API int scv_elastic_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err);
/* The exec driver: drives any trainer that honours docs/TRAINER-CONTRACT.md (o->exec, a
 * PyTorch script say), one `mpirun -np K /bin/sh -c EXEC` per segment, locally, on an
 * emulated cluster or on o->hostfile's machines; it evaluates the segments' stopping rules
 * from the metrics and stops the trainer with SIGUSR1. */
SCV_API int scv_exec_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err);
/* Frees any driver (through its destroy); NULL is a no-op. */
SCV_API void scv_job_driver_free(scv_job_driver *d);

/* Events for progress displays and services. Pointers are valid during the call only. */
typedef enum {
    SCV_EV_STATE = 0,       /* the loop entered ev->state */
    SCV_EV_SEGMENT_START,   /* a segment starts at (workers, batch) */
    SCV_EV_SEGMENT_END,     /* ev->segment */
    SCV_EV_ITER,            /* ev->iter */
    SCV_EV_EVAL,            /* ev->eval */
    SCV_EV_PLAN,            /* ev->plan: a new plan */
    SCV_EV_DECISION,        /* the configuration to train at, ev->text says why */
    SCV_EV_SWITCH,          /* the configuration changes to (workers, batch) */
    SCV_EV_RETRY,           /* a failed segment is retried; ev->text says why */
    SCV_EV_NOTE             /* anything else worth a line (ev->text) */
} scv_run_event_kind;
/* What a note (NOTE, DECISION and RETRY events) says, as data: its code, and the numbers its
 * text shows, in their order (num[0..n_num); an integer as a double), and its strings (str:
 * a VM type's name, an option, a reason; str[0..n_str)). The text renders
 * them for people; a program reads the code and the numbers (docs/RUN.md "Notes as data"):
 *   target                the target's estimate          calibration   the band's examples
 *   carry_corpus, carry_rule, carry_read, carry_unread  the batch carry-over, and its source
 *   stored_other_recipe, stored_uninformed               stored runs left out
 *   budget_share, budget_shortened, budget_stop, eval_priced, bound_later, bound_missed
 *   decision, probe, probe_done, replan, replan_failed   the choices
 *   drift, drift_option, drift_other_vm, curve_absolute, curve_reach, curve_moved
 *   vm_stored, vm_chosen, vm_chosen_elsewhere, vm_types  VM types
 *   universal, stored_measurements, recovered, reached_searching, warmup_remeasured
 *   throughput_step, search_beyond, search_skipped_budget, search_skipped_slow
 *   out_of_reach, eval_widened, retry, straggler, preempt_notice, preempt_restored
 *   carry_measured                                       (appended: the codes keep their values) */
/* clang-format off */
#define SCV_NOTE_MAP(X) \
    X(NONE, "none") \
    X(TARGET, "target") \
    X(CALIBRATION, "calibration") \
    X(CARRY_CORPUS, "carry_corpus") \
    X(CARRY_RULE, "carry_rule") \
    X(CARRY_READ, "carry_read") \
    X(CARRY_UNREAD, "carry_unread") \
    X(STORED_OTHER_RECIPE, "stored_other_recipe") \
    X(STORED_UNINFORMED, "stored_uninformed") \
    X(BUDGET_SHARE, "budget_share") \
    X(BUDGET_SHORTENED, "budget_shortened") \
    X(BUDGET_STOP, "budget_stop") \
    X(EVAL_PRICED, "eval_priced") \
    X(BOUND_LATER, "bound_later") \
    X(BOUND_MISSED, "bound_missed") \
    X(DECISION, "decision") \
    X(PROBE, "probe") \
    X(PROBE_DONE, "probe_done") \
    X(DRIFT_OTHER_VM, "drift_other_vm") \
    X(DRIFT_OPTION, "drift_option") \
    X(DRIFT, "drift") \
    X(CURVE_ABSOLUTE, "curve_absolute") \
    X(CURVE_REACH, "curve_reach") \
    X(CURVE_MOVED, "curve_moved") \
    X(REPLAN_FAILED, "replan_failed") \
    X(REPLAN, "replan") \
    X(VM_STORED, "vm_stored") \
    X(VM_CHOSEN_ELSEWHERE, "vm_chosen_elsewhere") \
    X(VM_CHOSEN, "vm_chosen") \
    X(VM_TYPES, "vm_types") \
    X(UNIVERSAL, "universal") \
    X(STORED_MEASUREMENTS, "stored_measurements") \
    X(RECOVERED, "recovered") \
    X(REACHED_SEARCHING, "reached_searching") \
    X(WARMUP_REMEASURED, "warmup_remeasured") \
    X(THROUGHPUT_STEP, "throughput_step") \
    X(SEARCH_BEYOND, "search_beyond") \
    X(SEARCH_SKIPPED_BUDGET, "search_skipped_budget") \
    X(SEARCH_SKIPPED_SLOW, "search_skipped_slow") \
    X(OUT_OF_REACH, "out_of_reach") \
    X(EVAL_WIDENED, "eval_widened") \
    X(RETRY, "retry") \
    X(STRAGGLER, "straggler") \
    X(PREEMPT_NOTICE, "preempt_notice") \
    X(PREEMPT_RESTORED, "preempt_restored") \
    X(CARRY_MEASURED, "carry_measured") \
    X(CARRY_FLOOR, "carry_floor")
/* clang-format on */
typedef enum {
#define SCV__NOTE(name, text) SCV_NOTE_##name,
    SCV_NOTE_MAP(SCV__NOTE)
#undef SCV__NOTE
    SCV_NOTE_COUNT
} scv_note_code;
#define SCV_NOTE_MAX_NUMS 16
#define SCV_NOTE_MAX_STRS 12
/* "carry_corpus"; NULL out of range. */
SCV_API const char *scv_note_code_name(scv_note_code c);
typedef struct scv_run_event {
    scv_run_event_kind kind;
    scv_run_state state;
    const char *phase;
    int workers, batch;
    const char *vm;             /* SEGMENT_START, SEGMENT_END, SWITCH: the VM type the segment
                                   trains on (NULL: not said) */
    const scv_segment_result *segment;
    const scv_iter_sample *iter;
    const scv_eval_sample *eval;
    const scv_plan_result *plan;
    int relative;               /* PLAN: its times are nominal (the target's epochs unknown);
                                   other events: the plan's are, and so is remaining_s (not
                                   a prediction: policy.nominal_epochs assumed) */
    double elapsed_s;           /* since the run started */
    double remaining_s;         /* predicted time left to the target (NaN: not known yet);
                                   never <= 0 while training goes on */
    double remaining_lo_s, remaining_hi_s; /* its statistical band (NaN: none; lo NaN with hi
                                   finite: "up to hi", the band's low end is passed) */
    const char *text;
    scv_note_code code;         /* NOTE, DECISION, RETRY: what the text says, as data */
    int n_num, n_str;           /* ... the numbers and the strings (names, reasons) it shows, */
    double num[SCV_NOTE_MAX_NUMS]; /* each in their order */
    const char *str[SCV_NOTE_MAX_STRS];
    double spent_usd;           /* the run's cost so far: its steps and the segment under way */
    int overdue;                /* the plan's predicted time to the target is spent and the
                                   target not reached: remaining_s is then the learning curve's
                                   re-estimate from this point, refitted at every evaluation
                                   (NaN: none yet, "re-estimating at the next evaluation") */
} scv_run_event;
typedef struct scv_run_observer {
    void *ctx;
    void (*on_event)(void *ctx, const scv_run_event *ev);
    /* asked before each segment: nonzero stops the run there, checkpointed and resumable
     * (SCV_EINTR, state interrupted): a stop that came while no segment ran, which a driver
     * cannot see (NULL: never) */
    int (*stop_requested)(void *ctx);
} scv_run_observer;

/* Every threshold of the loop, with its default in scv_run_policy_default(). */
typedef struct scv_run_policy {
    int noise_window;           /* 40: warm-up until two windows of this many iterations ... */
    double noise_tol;           /* 0.25: ... agree on B_simple within this */
    int warmup_max_iters;       /* 400 */
    double budget_warn_share;   /* 0.8: with a budget, a note when the spend passes this share */
    int warmup_min_evals;       /* 5: a warm-up that stopped with fewer evaluations (the
                                   learning curve's points; 4 at least make a forecast) goes on
                                   until it has them, when the target's epochs are not given */
    double profile_rse;         /* 0.03: profile a configuration until its mean t_iter has this RSE */
    int profile_min_iters;      /* 30 */
    int profile_max_iters;      /* 60 */
    double drift_tol;           /* 0.15: re-plan when the measured t_iter is this far off */
    double switch_idle_factor;  /* 1.5: switch when the gain exceeds this x the switch idle */
    double switch_remaining_share; /* 0.05: ... plus this share of the remaining time */
    double switch_idle_default_s; /* 1.0: the switch idle assumed before one was measured */
    int max_retries;            /* 2: failed segments retried per run */
    double segment_share;       /* 0.5: a training segment is this share of the predicted rest */
    int64_t segment_min_iters;  /* 200: ... and at least this many iterations (and an epoch) */
    int max_segments;           /* 200 */
    double eval_every_epochs;   /* 0.25 */
    int64_t checkpoint_every;   /* 100 iterations */
    double nominal_epochs;      /* 10: a relative plan's epochs when the target's are unknown */
    double stat_drift_tol;      /* 0.15: re-plan when the predicted samples to target move this much */
    double search_eval_every_epochs; /* 0.05: evaluations while warming up and searching
                                   (the learning curve needs points early) */
    double search_eval_share;   /* 0.1: ... at most this share of those segments' time, the
                                   period widened once evaluations are measured (0 = off) */
    double carry_probe_epochs;  /* 0.5: when the choice trains at the warm-up's batch and
                                   another batch's best could be faster within the batch
                                   carry-over's band, the first training segment probes it for
                                   this many epochs (evaluating as the search does), and the run
                                   learns the carry from its own curve (0 = never) */
    int eval_subset;            /* 2000: periodic evaluations on this many held-out samples
                                   (0 = all); the target is confirmed on the whole test set */
    int target_window;          /* 3: reached when the mean of this many evaluations >= target */
    uint64_t seed;              /* 1: the bootstrap of the learning curve's band */
    double search_budget_share; /* 0.05: warm-up and search spend at most this share of the
                                   predicted job time (0 = no budget; unknown job: none) */
    double search_rule_out;     /* 2: skip profiling a configuration predicted this many times
                                   slower to the target than the best measured one */
    double band_coverage;       /* 0.8: the nominal coverage of the target's band, calibrated
                                   on curves whose course is known (the corpus, stored runs) */
    double unknown_segment_epochs; /* 1: training segments while the target is unknown (the
                                   loop re-plans after each, once the curve predicts it) */
    double out_of_reach_p;      /* 0.2: with out_of_reach 0 (stop), a run whose learning curve gives its target a calibrated
                                   P(reached within max_epochs) under this, once it has trained
                                   out_of_reach_by of the bound, stops there (or at a later
                                   segment's start), checkpointed and resumable, naming the value
                                   likely reached by the bound (0: it trains on to the bound) */
    double out_of_reach_by;     /* 0.25: ... a training segment ends at this share of the bound */
    int out_of_reach;           /* 1 (`--out-of-reach go-on`, the default): never stops; 0 (`stop`):
                                   as above. The calibrated P(reach) holds on the corpus with each
                                   job left out (docs/BENCHMARKS.md), but not on every job: a
                                   synthetic MLP stopped at P 0.20 reaches its target at 14.1 of 30
                                   epochs (docs/RUN.md; test_service live_stop_resume's job) */
    double scaling_threshold;   /* 0.1: Or et al.'s S (scaling SCV_SCALING_THROUGHPUT) */
    scv_straggler_rule straggler; /* stragglers found in training segments (fraction 0: off) */
    int dynamic_batching;       /* 0: the workers' shares of B follow their throughput (dynamic
                                   batching, for heterogeneous clusters) in every segment */
} scv_run_policy;
SCV_API scv_run_policy scv_run_policy_default(void);

#define SCV_MAX_SPACE 256
#define SCV_RUN_FORECASTS_MAX 64
typedef struct scv_run_params {
    const char *job_key;        /* the job's identity in the store ("model=lenet;...") */
    const char *job_json;       /* its settings as JSON, kept for resume */
    double target_accuracy;     /* the target: test accuracy in (0, 1], */
    double target_loss;         /* or period-mean training loss > 0 (exactly one is set) */
    double max_epochs;          /* 30 */
    double target_epochs;       /* the target's epochs at target_batch, if known (0: learn) */
    int target_batch;
    int workers[SCV_MAX_SPACE]; size_t n_workers;   /* the space, ascending */
    int batches[SCV_MAX_SPACE]; size_t n_batches;
    int start_workers, start_batch; /* 0: the smallest K >= 2, the smallest B */
    scv_search_policy search;
    scv_scaling scaling;        /* Scavenger's plan (default) or Or et al.'s throughput scaling */
    scv_objective objective;
    double value_per_hour;      /* objective utility: $ an hour saved is worth */
    scv_stat_kind stat;
    scv_topology topology;
    scv_pricing pricing;
    double deadline_s, budget;  /* 0 = none */
    const scv_catalog *catalog;
    char vm_type[96];           /* the catalog type the measurements stand for */
    const int *vms; size_t n_vms; /* catalog indices of more types the plan compares (`run --vm`;
                                   NULL/0: vm_type alone): extrapolated from vm_type's
                                   measurements, the run trains on vm_type */
    scv_store *store;           /* required */
    const char *state_dir;      /* runs keep their files in state_dir/<run id>/ */
    long long resume_run;       /* 0 = a new run */
    scv_run_policy policy;
    /* communication options planned besides dense ("compress" "none,topk:100,selsync:0.9";
     * n_comms 0 = dense only): comms[0] is dense */
    scv_plan_comm comms[SCV_PLAN_MAX_COMMS + 1]; size_t n_comms;
    double compress_iterations; /* their iterations to target relative to dense (0 = 1) */
    const char *curve_corpus;   /* learning curves that calibrate the target's band (NULL: the
                                   shipped data/curves.jsonl; "none": only the store's runs) */
} scv_run_params;
/* Defaults: workers 1,2; batches 64,256; partial search; knee; gns; ring; on-demand. */
SCV_API scv_run_params scv_run_params_default(void);
/* Sets one setting from its name and text, as a job file or the command line gives it
 * ("workers" "1,2,4"; "objective" "knee"; "deadline" "45m"; "start" "2,64"). SCV_ENOTFOUND
 * when the name is not a loop setting (it may be the driver's); SCV_EINVAL naming the
 * setting when the value is bad. */
SCV_API int scv_run_params_set(scv_run_params *p, const char *name, const char *value, scv_err *err);
/* Checks the whole: required settings, consistent space. SCV_EINVAL naming the setting. */
SCV_API int scv_run_params_check(const scv_run_params *p, scv_err *err);

/* Where a plan's target (epochs to the target accuracy at a batch) comes from. */
typedef enum {
    SCV_TARGET_NOMINAL = 0,   /* unknown: relative plan with policy.nominal_epochs */
    SCV_TARGET_GIVEN,         /* target_epochs / target_batch in the parameters */
    SCV_TARGET_LEARNT,        /* a stored run of the same job to the same target value */
    SCV_TARGET_CURVE,         /* this run's learning curve, predicted online */
    SCV_TARGET_CARRIED,       /* a stored run of the same job for another target value of
                                   the metric, whose evaluations crossed this one (read off
                                   them under this run's target rule) */
    SCV_TARGET_CARRIED_CURVE, /* ... whose evaluations did not: its fitted learning curve's
                                   crossing, extrapolated (with its band) */
    SCV_TARGET_CORPUS         /* the curve corpus's curves of the job under its recipe: their
                                   seeds' crossings (the median, the seeds' spread); the last */
} scv_target_source;
SCV_API const char *scv_target_source_name(scv_target_source s);

/* One segment as the loop recorded it. */
typedef struct scv_run_step {
    char phase[16];
    int workers, batch;
    int64_t iterations;
    double first_start, last_end; /* wall clock */
    double idle_before;         /* s since the previous step's last iteration */
    double t_iter;              /* mean measured, s (NaN: too few iterations) */
    double accuracy;            /* NaN: not evaluated */
    int reached;
    char vm[96];                /* the VM type it trained on ("": the run's, params.vm_type) */
} scv_run_step;

typedef struct scv_run_result {
    long long run_id;
    char run_dir[1024];
    scv_run_state state;        /* DONE, INTERRUPTED or FAILED */
    int reached;
    double accuracy, epochs;
    int workers, batch;         /* the configuration trained at last */
    int comm;                   /* ... its communication option: an index into the params'
                                   comms (-1: dense, no options) */
    scv_plan_result *plan;      /* the latest plan (owned), NULL when none was made */
    scv_plan_result *decision;  /* the plan of the first decision (owned; may be plan) */
    int decision_relative;      /* ... whose times were nominal */
    scv_plan_result *first_absolute; /* the first plan with absolute times (owned; may be the
                                   decision or plan; NULL: none), made after */
    double absolute_at_s, absolute_at_epochs; /* ... this much of the run */
    double absolute_time_s;     /* its time to target, from the start, at the configuration
                                   trained then (NaN: none) */
    scv_perf_model perf;
    scv_stat_model stat;
    int relative;               /* the plan's times are nominal: the target's epochs were unknown */
    double predicted_time_s;    /* the first decision's time and cost to target, from the start */
    double predicted_cost;
    double predicted_band;      /* its relative uncertainty (iteration time) */
    double predicted_lo_s, predicted_hi_s; /* its band from the statistical prediction */
    scv_target_source target_source; /* where the target's epochs came from */
    double target_epochs, target_epochs_lo, target_epochs_hi; /* at target_batch */
    int target_batch;
    char target_note[384];      /* how the target was predicted (curve, evaluations, band) */
    long long target_from_run;  /* the stored run the target was read off (learnt, carried,
                                   carried-curve; 0: none) */
    size_t target_n_calib;      /* the examples its band was calibrated on (0: not calibrated) */
    double target_carried_share; /* a stored run's samples at other batches than target_batch,
                                   carried to it (0..1; 0: none) */
    char target_curve[64];      /* the learning curve's form and fit ("tail, rmse 0.012"; "": not
                                   from a curve) */
    double target_p_reach;      /* P(the target is reached within max_epochs) (NaN: not from a
                                   curve) */
    double target_nearest;      /* the target predicted out of reach: the value reached by
                                   max_epochs with probability 1/2 (NaN otherwise) */
    /* how the target's samples are carried to other batches: carry_learnt 1, S(B) = S(b0)
     * (B + Bn)/(b0 + Bn) with Bn learnt from the corpus's curves of the job under its
     * learning-rate rule (its band's ln-quantiles and median |ln error|, each batch left
     * out); 2, the law with the measured noise scale (else S(B) = S(b0) (B/b0)^gamma),
     * gamma the rule's exponent learnt from other jobs' curves and the quantiles and error
     * its spread over them, each left out (ln error = exponent error * ln(B/b0)); 3, the
     * exponent read from a probe at another batch (this run's, or a stored run's of the job),
     * with its profile band, and the plan follows it; 4, under AdaScale, the law with the
     * measured noise scale (times the corpus's factor) and the band of other jobs' AdaScale
     * curves, per ln(B/b0) as 2's; 5, under a fixed rule, the exponent from the noise floor
     * the run measures (docs/MODEL.md), its band from the floor's and the rate's ranges, per
     * ln(B/b0) as 2's; 0, the law with the measured noise scale and no band (the others NaN) */
    int carry_learnt;
    double carry_noise_scale, carry_gamma, carry_q_lo, carry_q_hi, carry_err;
    double price_hr;            /* per VM under the run's pricing */
    double actual_time_s, actual_cost; /* the whole run, search and idle included */
    double search_time_s, search_cost; /* warm-up and search steps */
    double search_budget_s;     /* the budget for them (NaN: the job's length was unknown) */
    double overhead_s;          /* what searching and switching cost: warm-up and search time
                                   less what their samples would have taken at the final
                                   configuration, plus the idle of every switch (NaN: the final
                                   configuration's iteration time is not measured) */
    int n_profiled, n_skipped_budget, n_skipped_ruled_out; /* search configurations */
    int universal;              /* planned by the universal model (search none, job never seen) */
    int n_prior_runs;           /* stored runs of other jobs behind the universal prior */
    int switches, relaunches;
    double idle_median_s, idle_worst_s;
    scv_straggler_event *stragglers; /* found during the run, oldest first */
    size_t n_stragglers;
    scv_survive_event *preemptions; /* survived in place in this invocation, oldest first */
    size_t n_preemptions;
    int rebalances;             /* dynamic batching: the controller's adjustments in this
                                   invocation's segments (each segment's in the store, models
                                   kind "dynbatch") */
    int n_shares;               /* K of shares (0: no segment reported them) */
    double shares[SCV_MAX_WORKERS]; /* the shares of B the last such segment ended with */
    scv_run_step *steps;
    size_t n_steps;
    char why[256];              /* why the chosen configuration */
    /* the forecasts made along the run, oldest first (at each plan, each training segment's
     * end and, when the target comes from this run's curve, each training evaluation; when
     * full, those up to the first absolute one kept and every other after it): what it
     * predicted when */
    struct scv_run_forecast {
        double at_s, at_epochs;     /* the run's time and epochs so far */
        double remaining_s, remaining_lo_s, remaining_hi_s; /* to the target at the configuration
                                       trained (NaN: none) */
        double epochs, epochs_lo, epochs_hi; /* the target's epochs at target_batch (NaN: none) */
        double p_reach;             /* within max_epochs (NaN: not from a curve) */
        int workers, batch;
    } forecasts[SCV_RUN_FORECASTS_MAX];
    int n_forecasts;
    int budget_stopped;         /* stopped before the budget's cap (scv_run returns SCV_EINTR,
                                   state interrupted, the job checkpointed): resumable with a
                                   larger budget */
    double budget_next_cost;    /* ... the next segment's predicted cost that did not fit */
    int reach_stopped;          /* stopped: the target likely out of reach within max_epochs
                                   (policy.out_of_reach_p; scv_run returns SCV_EINTR, state
                                   interrupted, the job checkpointed): resumable, and goes on
                                   with policy.out_of_reach 1 (`--out-of-reach go-on`) */
    double wall_s;              /* this invocation's wall-clock seconds, scv_run's start to its end:
                                   actual_time_s (the steps' iterations and idle) and what lies
                                   outside it, the job's start-up, evaluations after a segment's
                                   last iteration, planning (0: not measured; `scavenger run`
                                   measures it around scv_run when the loop does not) */
    int from_store;             /* rebuilt from the run store (scv_run_result_load): the forecasts,
                                   the carry, the search's accounting and the live figures of the
                                   run that wrote it are not stored and are absent */
} scv_run_result;
SCV_API void scv_run_result_free(scv_run_result *r); /* frees what r holds, not r */

SCV_API int scv_run(const scv_run_params *p, const scv_job_driver *driver, const scv_run_observer *obs,
            scv_run_result *out, scv_err *err);

/* The run's report: report.md, report.json and tradeoff.svg in dir, each written
 * atomically; an error names the file. */
SCV_API int scv_run_report_write(const scv_run_params *p, const scv_run_result *r, const char *dir,
                         scv_err *err);
/* The report's JSON as one malloc'ed line (NULL when out of memory). */
SCV_API char *scv_run_report_json(const scv_run_params *p, const scv_run_result *r);

/* ==== the run store (src/store/store.c, SQLite) ====
 * Every `scavenger run` with its job, the measurements of each configuration, the fitted
 * models, the decisions and switches, and the predicted and actual outcome. The loop
 * resumes from it and `--search none` plans from a stored run of the same job. */

/* Opens (creating where missing) the store at path for reading and writing: its schema
 * created or migrated. Refused, the file left as it was: another program's SQLite database
 * (SCV_EINVAL), a file that is not a database (SCV_ECORRUPT), a newer schema (SCV_EINVAL), a
 * file with more than one name (hard links: SCV_EINVAL; SQLite keys its write-ahead log by the
 * name). A symbolic link is followed. */
SCV_API int scv_store_open(const char *path, scv_store **out, scv_err *err);
/* The same for reading only: opened read-only (no journal mode set, no write lock, a store
 * on a read-only file or disk can be read); SCV_ENOTFOUND when there is no file (its missing
 * directory named as scv_store_open names it). A store of an older schema is migrated first
 * where the file can be written (else SCV_EINVAL says so). A write on it fails. */
SCV_API int scv_store_open_read(const char *path, scv_store **out, scv_err *err);
SCV_API void scv_store_close(scv_store *s);
/* Every read below reads to the end: a damaged file (SCV_ECORRUPT) or an i/o error (SCV_EIO)
 * is an error naming the path, never an empty or shortened answer. */
SCV_API int scv_store_run_get(scv_store *s, long long id, char *job_json, size_t cap, char *status,
                      size_t scap, scv_err *err);
SCV_API int scv_store_load_steps(scv_store *s, long long run, scv_run_step **out, size_t *n, scv_err *err);
/* A run's stragglers, oldest first (malloc'ed). */
SCV_API int scv_store_load_stragglers(scv_store *s, long long run, scv_straggler_event **out, size_t *n, scv_err *err);
/* Every measurement of one run (malloc'ed). */
SCV_API int scv_store_run_measurements(scv_store *s, long long run, scv_config_stats **out, size_t *n,
                               scv_err *err);
/* A run's evaluations in the order they were stored (malloc'ed). */
SCV_API int scv_store_load_evals(scv_store *s, long long run, scv_eval_sample **out, size_t *n, scv_err *err);
/* A run at a glance (`scavenger runs`): its first plan's decision and its outcome; NaN
 * where not known. */
typedef struct scv_run_summary {
    long long id;
    double created;             /* s since the epoch */
    char job_key[512], status[32], state[16];
    int workers, batch;         /* the first decision (0: none) */
    double predicted_time_s, predicted_cost;
    double actual_time_s, actual_cost, accuracy;
    int reached, n_steps;
    char why[256];
    char reason[512];           /* why it ended as it did ("" while running, and when done):
                                   a failure's error, an interruption's cause, why the target
                                   was not reached; for SCV_RUN_GONE why it is not running */
    int nominal;                /* the first decision's times are nominal, not predictions (the
                                   target's epochs were unknown): */
    double nominal_epochs;      /* ... this many epochs were assumed (NaN: not recorded) */
    int nominal_batch;          /* ... at this batch (0: not recorded) */
    /* A running run's latest forecast (the loop writes it at each plan and, at most once a
     * second, at each evaluation; cleared when the run stops; only a running run has one). */
    struct scv_run_eta {
        double written;             /* when (s since the epoch; 0: no forecast) */
        double remaining_s;         /* time left to the target (NaN: none yet, overdue) */
        double remaining_lo_s, remaining_hi_s; /* its band (NaN: none; lo NaN alone: "up to") */
        double p_reach;             /* P(the target within max_epochs) (NaN: not known) */
        int overdue;                /* past the predicted time: the curve's re-estimate */
        int nominal;                /* remaining_s is nominal (the target's epochs unknown) */
    } eta;
} scv_run_summary;
SCV_API int scv_store_runs(scv_store *s, scv_run_summary **out, size_t *n, scv_err *err);
SCV_API int scv_store_run_summary(scv_store *s, long long run, scv_run_summary *out, scv_err *err);

/* ---- store queries for services (`scavenger serve`) ---- */
/* A page of runs, newest first: those of job_key (NULL or "" = any) with status (NULL or ""
 * = any), at most limit from offset; *total counts every matching run. */
SCV_API int scv_store_runs_page(scv_store *s, const char *job_key, const char *status, long long limit, long long offset,
                        scv_run_summary **out, size_t *n, long long *total, scv_err *err);
/* A run's rows of one table ("measurements", "models", "decisions", "switches", "steps",
 * "evals", "stragglers", "targets") as a JSON array of objects keyed by column, in the order
 * they were stored; *json is malloc'ed. SCV_EINVAL naming the table for any other name. */
SCV_API int scv_store_run_rows_json(scv_store *s, long long run, const char *table, char **json, scv_err *err);
/* The newest run whose stored job has setting `field` equal to the text value (a service
 * finds the run a child process started by a setting it gave it); SCV_ENOTFOUND if none. */
SCV_API int scv_store_run_by_job_field(scv_store *s, const char *field, const char *value, long long *id, scv_err *err);
/* SQLite's data_version: it changes whenever another connection (a `scavenger run` in another
 * process, say) has committed since this one last read it; a reader caches what it built
 * from the store until it changes. */
SCV_API int scv_store_data_version(scv_store *s, long long *version, scv_err *err);
/* PRAGMA integrity_check: SCV_OK when the database says "ok" (msg holds its answer). */
SCV_API int scv_store_integrity(scv_store *s, char *msg, size_t cap, scv_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SCV_H */
