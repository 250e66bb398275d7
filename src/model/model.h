/*
 * model.h - the internal declarations of the model layer (src/model/): the performance,
 * statistical and learning-curve models, the sparse collectives' costs and the planner,
 * pure computation (libc and libm). Not part of the public contract (include/scv.h):
 * libscv.so does not export them; the library's other layers, the CLI, the service and the
 * in-tree tests include this header where they use them.
 */
#ifndef SCV_MODEL_MODEL_H
#define SCV_MODEL_MODEL_H

#include "scv.h"
#include "estimate.h"

/* Least squares on relative error (weights 1/y^2) with non-negative parameters. Returns
 * SCV_EINVAL for no usable point or non-positive times (never NaN parameters). */
int scv_perf_fit(const scv_config_stats *s, size_t n, scv_topology topology, double model_bytes,
                 scv_perf_model *out, scv_err *err);
/* The universal prior: fills the parameters m's measurements (s, n) left pinned from a prior
 * model of other jobs on the same VM type, calibrated to this job's measurements (equations
 * in perf.c). Returns how many parameters it set. */
int scv_perf_apply_prior(scv_perf_model *m, const scv_perf_model *prior, const scv_config_stats *s, size_t n);
double scv_perf_compute(const scv_perf_model *m, double b);
/* The share of its iteration a measurement's compute (t_iter - t_comm) must take to tell
 * anything of the compute (at K = 2 on slow links it is the small difference of two large
 * times): the fit's intercept, and the planner's ratio at K (plan.c, compute_k). */
#define SCV_PERF_FIRM_SHARE 0.25
/* The least compute seconds per sample the measurements s imply, min t_compute / (B / K)
 * (NaN: none): the planner's floor for an unmeasured configuration's compute, b x this, so a
 * fit that put no compute on the sample (c1 = 0: 9 ms predicted at an unmeasured B=256 where
 * it took 49) never prices a sample cheaper than any measured one. */
double scv_perf_sample_floor(const scv_config_stats *s, size_t n);
double scv_perf_comm(const scv_perf_model *m, int K);
/* scv_perf_comm with its bandwidth term (ring: 2((K-1)/K) M beta; ps: beta K) times
 * beta_factor: a link slower than the measured one (e.g. a mixed cluster's slowest link).
 * beta_factor 1 is scv_perf_comm exactly. */
double scv_perf_comm_scaled(const scv_perf_model *m, int K, double beta_factor);
double scv_perf_iter(const scv_perf_model *m, int K, double B);

double scv_sparse_cost(scv_sparse_coll how, double alpha, double beta, double M, double c, int N);
/* The cheapest of the three (ties to the lower enum). */
scv_sparse_coll scv_sparse_choose(double alpha, double beta, double M, double c, int N);
const char *scv_sparse_name(scv_sparse_coll how); /* "allgather", "artopk-ring", "artopk-tree" */

int scv_stat_fit(scv_stat_kind kind, const scv_config_stats *s, size_t n, double n_train,
                 double target_epochs, int target_batch, scv_stat_model *out, scv_err *err);
double scv_stat_iterations(const scv_stat_model *m, double B);

/* Memory model: bytes per worker = overhead + 3 * 4 * n_params (weights, gradients,
 * momentum) + b * (2 * act_bytes + 4 * input floats) (activations and their gradients). */
double scv_worker_mem_bytes(const scv_job_info *job, double b);

int scv_vm_mix_workers(const scv_vm_mix *m); /* K: the sum of the counts */

/* Seconds of one step's communication under option o (NULL: dense) at K workers, the
 * bandwidth term (beta) times beta_factor (a mixed cluster's slowest link; 1 = as measured):
 *   DENSE    scv_perf_comm_scaled(m, K, beta_factor)
 *   TOPK     scv_sparse_cost(the collective, alpha, beta beta_factor, M, 1/cf, K) (ring models
 *            only: alpha and beta per message and per byte; NaN for SCV_TOPO_PS)
 *   SELSYNC  (1 - lssr) scv_perf_comm_scaled(m, K, 2 beta_factor)   parameters and momenta: 2M
 *                                                  (lssr 0: beta_factor, the gradient's M)
 *            + ceil(log2 K) alpha_msg, or scv_perf_comm_scaled(m, K, 0) unprobed: every
 *              step's allreduce of the flags
 * *coll (may be NULL) gets the collective TOPK priced (SCV_SPARSE_ALLGATHER otherwise). */
double scv_perf_comm_option(const scv_perf_model *m, int K, const scv_plan_comm *o, double beta_factor,
                            scv_sparse_coll *coll);

/* The planner's policy numbers, defaults in scv_plan_policy_default(). */
typedef struct scv_plan_policy {
    /* 1.0: the knee without a Kneedle knee (fewer than 3 front points, or a straight or
     * concave front): from the cheapest point, step to the next faster front point while it
     * costs at most this many % more per 1% of time saved,
     * r = ((C_fast - C_slow)/C_slow) / ((T_slow - T_fast)/T_slow) <= this. */
    double knee_max_cost_per_time;
    /* 0.02: a mixed cluster's slowest workers get at least this share of B each, the floor of
     * the trainer's dynamic batching (scv_dynbatch_policy.min_share), or 1 sample */
    double mix_min_share;
    /* 0.01: a parallel model whose compute per sample c1 is under this share of the least the
     * measurements imply (scv_perf_sample_floor) put the compute on the fixed part (one
     * per-worker batch measured; 9 ms predicted at an unmeasured B=256 that took 49): an
     * unmeasured configuration's compute is then never under b x that least */
    double degenerate_c1_share;
    /* 0.5 s: a measurement (iterations x t_iter) shorter than this is a burst. Under a CPU quota
     * (the emulated VMs' 0.25 core, cgroup periods of 100 ms) a short profile runs at full
     * speed: the MLP's 60 search iterations at K=1, B=64 took 0.55 ms each, its training 0.80.
     * At a K with a longer measurement, a burst's configuration is priced by that K's ratio
     * (compute_k) as an unmeasured one is. */
    double sustained_s;
} scv_plan_policy;
scv_plan_policy scv_plan_policy_default(void);

typedef struct scv_plan_request {
    const scv_catalog *catalog;
    const int *vms; size_t n_vms;           /* catalog indices to plan over */
    int measured_vm;                        /* catalog index the measurements stand for */
    const int *workers; size_t n_workers;
    const int *batches; size_t n_batches;
    int b_min, b_max;                       /* per-worker batch bounds (0 = none) */
    scv_pricing pricing;
    double mem_rate_cpu, mem_rate_gib;      /* $/vCPU-h, $/GiB-h for SCV_PRICE_MEMORY */
    const scv_perf_model *perf;
    const scv_stat_model *stat;
    const scv_job_info *job;
    scv_objective objective;
    double value_per_hour;                  /* SCV_OBJ_UTILITY: $ an hour saved is worth (> 0) */
    double deadline_s, budget;              /* 0 = none */
    /* a run in progress (0 = none: a plan from the start, `plan`'s): the seconds and dollars
     * it has spent and the share of its target done; a point meets the bounds when the run
     * ends within them there (scv_plan_run_end) */
    double spent_s, spent_cost, done_share;
    double eval_s_per_sample;               /* periodic evaluations' seconds per training sample
                                               (as measured: an evaluation's time over the samples
                                               between two), added to every point's time: time =
                                               iterations (t_iter + B eval_s_per_sample); 0 = none */
    /* the run's training segments (segment_idle_s 0 = not priced): each segment starts after
     * segment_idle_s of idle (as measured: the mean idle before the run's segments, a
     * relaunched job's start-up) and covers max(segment_min_iters, an epoch, segment_share x
     * the rest) iterations, the loop's rule; a point's time gains its segments' idle
     * (scv_plan_segments_idle; the point's idle_s) */
    double segment_idle_s, segment_share;
    double segment_min_iters;
    /* VM-type extrapolation (0 = not known / none): */
    int measured_threads;                   /* threads per worker of the measurements */
    double parallel_fraction;               /* Amdahl f in [0,1] (scv_amdahl_fit); used only
                                               with measured_threads > 0; < 0 or NaN = none */
    int worker_threads;                     /* threads a worker may use (0 = all vCPUs) */
    double gpu_speedup;                     /* user's assumed GPU/CPU compute speed-up; 0 =
                                               none: GPU types are left out */
    const scv_plan_policy *policy;          /* NULL = scv_plan_policy_default() */
    /* configurations measured on the measured type: their mean iteration time replaces
     * the model's (the model predicts the others); NULL = the model everywhere */
    const scv_config_stats *measured; size_t n_measured;
    /* mixed clusters planned besides the types of vms (NULL/0 = none): a mix's K is the sum
     * of its counts (workers does not apply), every batch of batches does */
    const scv_vm_mix *mixes; size_t n_mixes;
    /* communication options (NULL/0 = dense only, as before): every configuration is planned
     * dense and under each option that is not dense (docs/MODEL.md "Compression in the plan") */
    const scv_plan_comm *comms; size_t n_comms;
    double t_compress;                      /* s per compressed (TOPK) step of compression kernels
                                               (error feedback, selection), measured; 0 = not
                                               known: left out (the note says so) */
    /* SCV_PRICE_SPOT with the risk of preemption (NULL = spot at its bare price, as before):
     * every point's time and cost are spot's expected ones (model/spot.c: T = T0 / (1 - rho),
     * C = (K p T - N u p) / 3600, u <= replace_s); a point preempted faster than it progresses
     * (rho >= 1) is left out, counted in the note */
    const struct scv_spot_risk *spot_risk;
    /* the target's estimate (NULL = none): every point's time and cost get its band at the
     * point's batch (scv_estimate_price) */
    const scv_estimate *estimate;
} scv_plan_request;

/* Chooses as docs/MODEL.md "Choosing" states: the objective's point on the whole front,
 * kept when it meets the deadline/budget, else the objective's point on the front's
 * feasible part; SCV_EINFEASIBLE naming the bound when none meets it. */
int scv_plan(const scv_plan_request *req, scv_plan_result **out, scv_err *err);
/* The run's time and cost at its end when it goes on at point p, the measure the deadline
 * and the budget judge: spent + (1 - done_share) x the point's training and evaluations +
 * the idle of the rest's segments (done_share clamped to [0, 1]; a plan from the start: the
 * point's own); the cost at the point's dollars per second. */
void scv_plan_run_end(const scv_plan_request *req, const scv_plan_point *p, double *time_s, double *cost);
/* The idle of the training segments a rest of `iterations` at batch B takes under the
 * request's segment rule (n segments x segment_idle_s; 0 when not priced):
 *   n = #{segments: each covers max(segment_min_iters, n_train / B, segment_share x rest)} */
double scv_plan_segments_idle(const scv_plan_request *req, int B, double iterations);
/* Whether the run meets the request's deadline and budget at p (by scv_plan_run_end). */
int scv_plan_meets(const scv_plan_request *req, const scv_plan_point *p);
void scv_plan_result_free(scv_plan_result *r);
/* Pareto front of (time, cost) points, both minimised: writes indices sorted by time and
 * returns their count. front must hold n entries. Reentrant. */
size_t scv_pareto_front(const double *time, const double *cost, size_t n, size_t *front);
/* Kneedle on a convex decreasing curve (x increasing): index of the knee, -1 if none. */
long scv_kneedle(const double *x, const double *y, size_t n);
/* Amdahl's law t(n) = t1 ((1 - f) + f / n) fitted to compute times t[i] [s] measured at
 * threads[i] (two or more distinct thread counts): weighted least squares on relative error
 * of t = a + b / n with a, b >= 0, t1 = a + b, f = b / (a + b) in [0, 1]. SCV_EINVAL for
 * fewer than two thread counts or non-positive times. */
int scv_amdahl_fit(const int *threads, const double *t, size_t n, double *f, double *t1,
                   scv_err *err);
/* Per-vCPU and per-GiB hourly rates fitted on a provider's CPU-only on-demand types. */
int scv_memory_rates(const scv_catalog *c, const char *provider, double *per_cpu, double *per_gib,
                     scv_err *err);

/* ---- learning curves (src/model/curve.c; equations in docs/MODEL.md) ----
 * The target metric y against samples processed x [samples]; s = +1 for accuracy (higher
 * is better), -1 for loss (lower is better):
 *   SCV_CURVE_POW  y = a - s b (x + x0)^(-c)      (for loss: y = a + b (x + x0)^(-c))
 *   SCV_CURVE_EXP  y = a - s b exp(-x / tau)
 *   SCV_CURVE_TAIL y = a - s b x^(-c), a fixed at the ideal (loss 0, accuracy 1), fitted in
 *                  log-log on the tail of the data (x >= tail_from * max x)
 * a: asymptote; b > 0 [y units]; c > 0; x0 >= 0, tau > 0 [samples]. */
typedef enum { SCV_CURVE_POW = 0, SCV_CURVE_EXP, SCV_CURVE_TAIL } scv_curve_form;

const char *scv_curve_form_name(scv_curve_form f); /* "pow", "exp", "tail" */

/* The curve module's policy numbers, defaults in scv_curve_policy_default(). */
typedef struct scv_curve_policy {
    int min_points;             /* 4: fewer evaluations are an error */
    double holdout_share;       /* 0.25: the last share of points scores each form */
    int x0_min_points;          /* 6: POW's x0 is fitted from this many points (else 0) */
    double c_min, c_max;        /* 0.05, 3: POW exponent bounds */
    double x0_max_rel;          /* 10: x0 <= this * max x */
    double tau_min_rel, tau_max_rel; /* 0.01, 10: tau in [min, max] * max x */
    int n_boot;                 /* 200 bootstrap resamples */
    double band_lo, band_hi;    /* 0.05, 0.95: percentiles of the band (nominal 90%; the
                                   percentile bootstrap under-covers: 10-90 covered ~76% of
                                   synthetic crossings 1.25x beyond the data, 5-95 ~85%) */
    int smooth_window;          /* 3: W of the smoothed target rule */
    int loss_tail;              /* 1: scv_curve_fit fits a loss with the TAIL form (0: selects
                                   between POW and EXP as for accuracy) */
    double tail_from;           /* 0.5: TAIL fits the points with x >= this * max x */
} scv_curve_policy;
scv_curve_policy scv_curve_policy_default(void);

typedef struct scv_curve {
    scv_curve_form form;
    scv_metric metric;
    double a, b, c, x0, tau;    /* c, x0: POW only; tau: EXP only (others 0) */
    double rmse;                /* on the points fitted [y units] */
    double holdout_rmse[2];     /* per form, fitted on the first n_fit points (inf: none) */
    int n_points, n_fit, n_params;
} scv_curve;

/* Accuracy (and loss without policy.loss_tail): fits POW and EXP on the first
 * (1 - holdout_share) of the points, picks the one with the smaller held-out RMSE (ties:
 * EXP) and refits it on all. Loss: the TAIL form. x >= 0 non-decreasing. pol NULL =
 * defaults. SCV_EINVAL: fewer than min_points or bad values; SCV_ENOCONV: the metric does
 * not improve (mean of the last third vs the first). Parameters are never NaN. */
int scv_curve_fit(scv_metric metric, const double *x, const double *y, size_t n,
                  const scv_curve_policy *pol, scv_curve *out, scv_err *err);
/* One given form on all points. */
int scv_curve_fit_form(scv_curve_form form, scv_metric metric, const double *x, const double *y,
                       size_t n, const scv_curve_policy *pol, scv_curve *out, scv_err *err);
double scv_curve_eval(const scv_curve *c, double x);
/* Samples x* where the curve reaches target (0 if at the start; +inf: not reachable, the
 * asymptote falls short). */
double scv_curve_crossing(const scv_curve *c, double target);

typedef struct scv_curve_prediction {
    int reachable;              /* the fitted curve reaches the target */
    double x_star;              /* samples at the crossing (+inf: not reachable) */
    double lo, hi;              /* band: [band_lo, band_hi] percentiles of the bootstrap
                                   crossings (+inf when that share never reaches it) */
    double p_reach;             /* share of bootstrap fits that reach the target */
    int n_boot;
} scv_curve_prediction;
/* Residual bootstrap of fit (made from the same x, y): pol->n_boot refits on fitted values
 * plus resampled residuals (inflated by sqrt(n/(n-p))), PRNG seeded by seed (no global
 * state). A fit from scv_curve_fit is re-selected (form too) in each resample; one from
 * scv_curve_fit_form keeps its form. */
int scv_curve_predict(const scv_curve *fit, const double *x, const double *y, size_t n,
                      double target, uint64_t seed, const scv_curve_policy *pol,
                      scv_curve_prediction *out, scv_err *err);

/* Smoothed target: 1 when the mean of the last `window` values of y[0, n) is >= target
 * (accuracy) or <= target (loss); 0 with fewer than window values. */
int scv_target_reached(scv_metric metric, const double *y, size_t n, double target, int window);
/* The first evaluation index i at which the rule holds on y[0, i]; -1 if never. */
long scv_target_first_reached(scv_metric metric, const double *y, size_t n, double target,
                              int window);

/* Samples (or epochs) to target carried across batch sizes with the gradient noise scale
 * (McCandlish et al. 2018; Pollux/AdaptDL): E(B) = E(B0) (1 + B/B_noise) / (1 + B0/B_noise).
 * B_noise = +inf gives E(B0); NaN for B0, B or B_noise <= 0. */
double scv_samples_at_batch(double samples_b0, double b0, double b, double b_noise);

/* ---- the learning-curve corpus (data/curves.jsonl, read by src/io/curves.c) ----
 * Curves measured on the built-in models and datasets, each a fixed-epoch training run at
 * one (B, learning-rate rule), with the command that made it; a prior for the learning
 * curves of new jobs and the labelled examples that calibrate the curve's bands. */
typedef struct scv_lcurve {
    char job[64];               /* the job's name in the corpus (its curves share it) */
    char model[16];             /* lenet, mlp, logreg, resnet, exec (a job may be left out
                                   by model when judging one) */
    char dataset[32];           /* fashion-mnist, synthetic:N, ... */
    char arch[128];             /* the network as the trainer states it ("": not given) */
    double noise_scale;         /* an AdaScale run's gradient noise scale over its first half
                                   epoch, as a warm-up measures it (not > 0: not given) */
    int batch;                  /* global batch B */
    int base_batch;             /* B0 of the learning-rate rule */
    scv_lr_scaling lr_scaling;  /* how the learning rate followed B */
    double lr;                  /* base learning rate at B0 */
    double momentum;            /* the optimiser's momentum and weight decay (a line without */
    double weight_decay;        /*   them: train's defaults, 0.9 and 5e-4) */
    int workers, seed;
    double n_train;             /* samples per epoch */
    size_t n;                   /* evaluations, in order */
    double *samples;            /* samples seen at each (non-decreasing) */
    double *accuracy;           /* test accuracy there (NaN: not measured) */
    double *loss;               /* period-mean training loss there (NaN: not measured) */
} scv_lcurve;
typedef struct scv_lcurve_set {
    scv_lcurve *c;
    size_t n;
} scv_lcurve_set;
void scv_lcurve_set_free(scv_lcurve_set *s);

/* ---- calibrated forecasts of a curve's crossing (src/model/calib.c states the method) ----
 * Split-conformal: the log errors ln(x_true / x^) of raw crossings x^ made from prefixes of
 * curves whose course is known, binned by metric, kind and extrapolation length
 * rho = ln(x^ / x_c); their quantiles turn a raw crossing into a median and a band. */
typedef enum {
    SCV_CALIB_PRIMARY = 0,
    SCV_CALIB_TAIL,
    SCV_CALIB_NONE,
    SCV_CALIB_PRIOR,
    SCV_CALIB_XPRIOR
} scv_calib_kind;
#define SCV_CALIB_KINDS 5
#define SCV_CALIB_MEMBERS 16    /* at most this many matched curves in the prior */
#define SCV_CALIB_MIN_MEMBERS 3 /* ... and at least this many for a prior crossing */
#define SCV_CALIB_BINS 6
#define SCV_CALIB_MULTS 11
const char *scv_calib_kind_name(scv_calib_kind k); /* "fit", "tail", "none", "prior", "xprior" */

typedef struct scv_calib_policy {
    double coverage;            /* 0.8: the band's nominal coverage */
    int min_examples;           /* 30: a bin with fewer pools its neighbours' */
    int prefixes;               /* 10 prefixes of each known curve, log-spaced ... */
    double first_prefix_share, last_prefix_share; /* ... from 2% to 70% of its samples */
    double rho_edges[SCV_CALIB_BINS - 1]; /* 0.25 0.6 1 1.6 2.4: bins of rho */
    double target_mults[SCV_CALIB_MULTS]; /* 1.3 .. 50: targets = the curve's best by these
                                   multiples of the prefix's end (to 14 only, a forecast far out
                                   met examples whose truths stopped at 14x: a bias to "sooner") */
    double beyond_share;        /* 0.5: and one target this share of the prefix's remaining
                                   gain beyond the curve's best (never reached) */
    int window;                 /* 3: a curve reached a target where the run's target rule of this
                                   window would say so (scv_stoprule_reached; the run's
                                   target_window, whose default this is) */
    int max_points;             /* 40: a prefix is thinned evenly to at most this many points
                                   (a run's evaluations every 0.25 epochs over 10 epochs) */
    int prior;                  /* 1: the corpus prior's crossing where the corpus has curves of
                                   the run's model and dataset (1: it alone; 2: its geometric
                                   mean with the fit's; 0: off) */
    int prior_members;          /* 5: the best matched corpus curves that predict */
    double prior_min_share;     /* 0.6: a match covers at least this share of the points */
    double prior_log_scale;     /* 2.5: the speed ratio lambda searched in e^-2.5 .. e^2.5 */
    int prior_cross;            /* 1: where the corpus holds too few curves of the run's model and
                                   dataset, other networks' curves matched by shape (a speed
                                   apart) forecast too (kind XPRIOR, calibrated on each network
                                   left out), and the forecast takes whichever of it and the fit
                                   has the narrower calibrated band */
    int cross_every;            /* 2: the XPRIOR examples from every 2nd prefix of a curve (the
                                   others' matches are many: the build took 0.61 s with every
                                   prefix, 0.42 s with every 2nd, the same errors on each network
                                   left out, bench/calib_eval.c) */
    int shift_median;           /* 0: the point is the raw crossing clamped into its band (1:
                                   times exp of its bin's median log error) */
    double acc_tail_from;       /* 0.1: accuracy's raw fit is TAIL on the points past this share
                                   of the prefix (< 0: scv_curve_fit's selection) */
    int fit_examples;           /* 1: where the prior makes an example, the fit alone makes one
                                   too (its cells serve runs the prior has no curves for); 0:
                                   only the forecast's (bench/calib_eval.c judges those) */
} scv_calib_policy;
scv_calib_policy scv_calib_policy_default(void);

typedef struct scv_calib_cell {
    double *r;                  /* log errors (+inf: never reached past x^) */
    size_t n, cap;
} scv_calib_cell;
typedef struct scv_calib_ref {  /* a corpus curve as the prior matches it */
    int metric;                 /* 0 accuracy, 1 loss */
    int group;                  /* its curve (an example never matches its own curve) */
    char key[64];               /* "model dataset": the prior matches curves of the same */
    size_t n;
    double *u, *d;              /* ln epochs (increasing), ln distance to the ideal (smoothed) */
} scv_calib_ref;
typedef struct prior_member {   /* one matched curve: ref index, ln speed, mean squared error */
    size_t k;
    double l, score;
} prior_member;
typedef struct scv_calib {
    scv_calib_cell cell[2][SCV_CALIB_KINDS][SCV_CALIB_BINS]; /* [accuracy, loss] */
    size_t n_examples[2], n_curves[2];
    scv_calib_ref *ref;         /* the prior's curves */
    size_t n_ref, ref_cap;
    double width[2][SCV_CALIB_KINDS][SCV_CALIB_BINS]; /* each cell's pooled band, ln(hi / lo)
                                   (+inf: open or too few examples): what a forecast's choice
                                   between kinds reads (refreshed by build and add) */
    const struct scv_calib *select;                   /* whose widths choose the kind of this one's examples
                                   (a judge's examples, as a run's forecasts would; NULL: each
                                   kind's examples kept) */
    scv_calib_cell rerun[2];    /* ln(x_t' / x_t): the same job, batch and rule trained again
                                   with another seed, where each reached a target (both ways):
                                   how far a stored run's epochs stand from a new run's */
    scv_calib_policy pol;       /* the policy it was built with (forecasts' default) */
} scv_calib;
/* Examples from every curve of the corpus (either metric where measured). */
int scv_calib_build(const scv_lcurve_set *corpus, const scv_calib_policy *pol, scv_calib *out, scv_err *err);
/* Examples from one more known curve (a stored run's): x samples (non-decreasing), y;
 * n_train samples an epoch (the prior's unit); key "model dataset" (NULL: no prior), group:
 * the corpus curve its raw predictions must not match (-1: none). */
int scv_calib_add(scv_calib *cal, scv_metric metric, const double *x, const double *y, size_t n, double n_train,
                  const char *key, int group, const scv_calib_policy *pol, scv_err *err);
void scv_calib_free(scv_calib *c);

typedef struct scv_forecast {
    scv_calib_kind kind;
    scv_curve fit;              /* the curve behind x_hat */
    double x_hat;               /* raw crossing [samples] (kind NONE: the last x) */
    double rho;                 /* ln(x_hat / last x) */
    double x_med, lo, hi;       /* the point (the raw crossing clamped into the band) and the
                                   calibrated band [samples]; hi +inf: the band's top share
                                   never reaches the target */
    double p_reach;             /* P(reached within the horizon) */
    double horizon;             /* [samples] (<= 0: none) */
    double nearest;             /* when P(reach within the horizon) < 1/2: the target value
                                   reached there with probability 1/2 (NaN otherwise) */
    int calibrated;             /* 0: no examples; band from the curve's bootstrap */
    size_t n_members;           /* kind PRIOR: the corpus curves matched */
    size_t n_examples;          /* the pooled examples behind the band */
} scv_forecast;
/* The quantiles (1-C)/2, 1/2, (1+C)/2 of the log errors of a cell, pooled as a forecast pools
 * them (*n: how many); SCV_ENOTFOUND (NaN) with fewer than min_examples. */
int scv_calib_band(const scv_calib *cal, const scv_calib_policy *pol, scv_metric metric, scv_calib_kind kind,
                   int bin, double *q_lo, double *q_med, double *q_hi, size_t *n);
int scv_calib_bin(const scv_calib_policy *pol, double rho); /* the bin of rho */
/* Forecast from this curve's points x, y [0, n) (n >= the curve policy's min_points; x in
 * samples, n_train of them an epoch; pol NULL: cal's). */
int scv_calib_forecast(const scv_calib *cal, const scv_calib_policy *pol, scv_metric metric, const double *x,
                       const double *y, size_t n, double n_train, const char *key, double target, double horizon,
                       uint64_t seed, scv_forecast *out, scv_err *err);
/* The band of a target taken from a stored run of the job (learnt, or carried through its
 * evaluations): e0 exp(q) at the (1-C)/2 and (1+C)/2 quantiles of the corpus's rerun log
 * ratios of the metric, over *n of them; SCV_ENOTFOUND (lo, hi NaN, *n 0) with fewer than
 * min_examples. */
int scv_calib_rerun_band(const scv_calib *cal, scv_metric metric, double e0, double *lo, double *hi, size_t *n);
/* One metric (mi: 0 accuracy, 1 loss) of a corpus curve as the calibration reads it: its
 * measured points x (samples), values y and the target rule's window means m after each
 * (scv_stoprule_means with the default window; NaN before it is full; each array c->n
 * long); the count. What the truths and the carry-over (carry.c) read a curve through. */
size_t scv_lcurve_smoothed(const scv_lcurve *c, int mi, double *x, double *y, double *m);
/* ---- a target's crossing by the corpus's curves of one recipe (src/model/seeds.c) ---- */
#define SCV_SEEDS_MAX 16
typedef struct scv_seed_crossings {
    int batch; /* the batch they are read at: the most curves, then the nearest b0 */
    int n;     /* curves (seeds) at it */
    int seed[SCV_SEEDS_MAX];
    double x[SCV_SEEDS_MAX];   /* each one's crossing, samples at batch (+inf: not within its end) */
    double end[SCV_SEEDS_MAX]; /* the samples its curve ran */
    double best;               /* the best window mean any reached (NaN: none) */
} scv_seed_crossings;
/* The crossings of target (metric, the run's window W) by curves c[0..n) of one job and
 * recipe, at their batch with most curves (b0: the nearest among ties), each curve read at
 * the run's evaluation spacing (samples; 0: every point): one accuracy a spacing, the last
 * evaluated in it, or the mean of its period-mean losses, so that the window spans what the
 * run's does (near a plateau, a window of dense evaluations crosses early by chance).
 * SCV_ENOTFOUND: none. */
int scv_seed_crossings_of(const scv_lcurve *const *c, size_t n, scv_metric metric, double target, int window, int b0,
                          double spacing, scv_seed_crossings *out);

/* The prior's key of a job: "model dataset" into buf. */
const char *scv_calib_key(const char *model, const char *dataset, char *buf, size_t cap);

/* ---- the batch carry-over learnt from curves at several batches (src/model/carry.c) ---- */
#define SCV_CARRY_SHARES 4
typedef struct scv_carry_policy {
    int min_batches;            /* 3: curves at this many batches at least */
    double shares[SCV_CARRY_SHARES]; /* 0.3 0.5 0.7 0.85: the targets, as shares of the range */
    double lr_rel_tol;          /* 1e-6: "the same base learning rate" */
    int any_rule;               /* 0; 1: curves under every rule (what knowing it is worth) */
    double fixed_b_noise;       /* 0; > 0: this noise scale judged instead of one fitted */
    int min_jobs;               /* 2: other jobs a rule's exponent is learnt from, at least */
    int run_min_evals;          /* 3: a run's evaluations at each of two batches before its own
                                   curve is asked for the carry */
    double run_gamma_lo, run_gamma_hi, run_gamma_step; /* -1.5, 2.5, 0.05: its exponent's range,
                                   and its band's least half-width */
    double run_rate_lo, run_rate_hi; /* 1/16, 16: the rates per sample of the probe's reading */
} scv_carry_policy;
scv_carry_policy scv_carry_policy_default(void);
typedef struct scv_carry_job {  /* the job's learning-rate rule */
    double lr;                  /* at base_batch */
    int base_batch;
    scv_lr_scaling lr_scaling;
} scv_carry_job;
typedef struct scv_carry {
    double b_noise;             /* Bn_eff [samples]: the law's noise scale fitted to the curves */
    double gamma;               /* the rule's exponent learnt from other jobs (scv_carry_learn_rule;
                                   NaN: the law with b_noise) */
    int n_jobs;                 /* ... from this many jobs */
    int n_batches;              /* the batches the curves hold */
    size_t n_errors;            /* leave-one-batch-out errors measured */
    double q_lo, q_hi;          /* their (1-C)/2 and (1+C)/2 quantiles: ln(true / carried) */
    double med_abs;             /* their median |ln error| */
    int per_log;                /* q_lo, q_hi are per unit of ln(B / b0) (the rule's exponent,
                                   a run's read, the measured law's: also when gamma is NaN) */
    double bn_factor;           /* the law's noise scale is the run's measured one times this
                                   (scv_carry_learn_measured; 1 otherwise) */
    /* the run's own (scv_carry_shift): the probe's batch run_b against run_b0, its rate per
     * sample on b0's curve and its level off it, and that curve's crossing of the target,
     * f0^-1(target) [b0 samples; NaN past the horizon] */
    double run_b0, run_b, run_rate, run_level, run_cross0;
    double gamma_scratch;       /* ... the exponent of a run at b from its start (b at the read's
                                   rate and level all along), where gamma's counts from the probe */
    int read_ahead;             /* the noise floor's (scv_carry_floor): a crossing it read lies
                                   beyond the evaluations (a forecast's) */
    size_t n_evals;             /* ... the evaluations it read (0: not the floor's) */
} scv_carry;
/* Learns the carry of job (key "model dataset") for metric from the curves of set that
 * match it (same key, base learning rate, base batch and rule; a curve at the base batch
 * under any rule); SCV_ENOTFOUND (out's fields NaN) with too few. pol NULL: the default. */
int scv_carry_learn(const scv_lcurve_set *set, const char *key, const scv_carry_job *job, scv_metric metric,
                    const scv_carry_policy *pol, double coverage, scv_carry *out);
/* For a job the corpus does not hold: the exponent gamma of S(B) = S(b0) (B / b0)^gamma under
 * the job's rule (and base batch), learnt from the corpus's other jobs (any key but
 * exclude_key) with their curves at policy.min_batches batches or more, at least
 * policy.min_jobs of them; q_lo, q_hi and med_abs are then errors of gamma itself (each job
 * left out), ln(true / carried) = error * ln(B / b0). SCV_ENOTFOUND with too few. */
int scv_carry_learn_rule(const scv_lcurve_set *set, const char *exclude_key, const scv_carry_job *job,
                         scv_metric metric, const scv_carry_policy *pol, double coverage, scv_carry *out);
/* Under a rule where the noise-scale law holds by construction (scv_lr_scaling_carries:
 * AdaScale): the law with the noise scale a run measures times bn_factor (b_noise and gamma
 * stay NaN: the run gives Bn), learnt from other jobs' curves of that rule that name their
 * measured noise scale. Over their targets and ordered batch pairs (a, b), Bn_a the curves'
 * measured noise scale at a (early in the run, where it is smaller than over the run: the
 * factor stands for its growth),
 *   err(f) = ln(E_b / (E_a (b + f Bn_a) / (a + f Bn_a))) / ln(b / a)
 * bn_factor is the f of least median |err| (grid 2^(k/4), k = -8..16), the band the errors of
 * each job under the f of the others (per_log). SCV_ENOTFOUND with too few jobs. */
int scv_carry_learn_measured(const scv_lcurve_set *set, const char *exclude_key, const scv_carry_job *job,
                             scv_metric metric, const scv_carry_policy *pol, double coverage, scv_carry *out);
/* The noise scale the law takes from a measured one: measured times c's bn_factor (1 where it
 * has none). */
double scv_carry_law_noise(const scv_carry *c, double measured);
/* 1 when under rule r the samples to a target carry between batches by the noise-scale law by
 * construction (AdaScale: src/train/sched.h), so a run carries by its measured noise scale. */
int scv_lr_scaling_carries(scv_lr_scaling r);
/* A run's evaluations at the batch b0 it trained at otherwise (x0, y0: n0; samples, metric)
 * and at another batch b in the probe from samples `start` on (xb, yb: nb), its segments
 * (samples seg_s0..seg_s1, each's rate per sample relative to b0, NaN at b: the rate read;
 * nseg 0: every sample at b0's rate), its target value and horizon [samples]. */
typedef struct scv_carry_run {
    scv_metric metric;
    const double *x0, *y0, *xb, *yb;
    size_t n0, nb;
    const double *seg_s0, *seg_s1, *seg_rate;
    size_t nseg;
    double b0, b, start, target, horizon;
} scv_carry_run;
/* The run's own carry (carry.c: b's evaluations read as the b0 curve at a rate r, moved by a
 * level d): the exponent gamma that carries the target's samples from b0 to b, its band at
 * coverage C as q_lo <= 0 <= q_hi about it (at least a grid step wide), run_rate and
 * run_level r and d. SCV_ENOTFOUND
 * with fewer than policy.run_min_evals at b (2 more at b0), a b0 curve that cannot be fitted,
 * the rate's best at its grid's edge, or neither batch's crossing within the horizon. */
int scv_carry_shift(const scv_carry_run *r, const scv_carry_policy *pol, double coverage, scv_carry *out);
/* The carry of a job (its model, dataset and learning-rate rule) from a corpus: learnt from
 * the corpus's curves of the job at several batches (1), else under a rule that carries by
 * construction the measured law's error from other jobs (3: the run measures Bn), else its
 * rule's exponent from other jobs' curves (2), else none (0, out's law and band NaN; also for
 * a job whose rate is not known). The one order `run` and `plan` take it in. */
int scv_carry_for_job(const scv_lcurve_set *set, const scv_job_info *job, scv_metric metric, double coverage,
                      scv_carry *out);
/* tr(Sigma) per sample from K local gradients of B / K samples each and their mean
 * (stat.c: (|g_b|^2 - |g_B|^2) / (1/b - 1/B)); NaN with K < 2 or a norm not measured. */
double scv_gns_trace(int K, int B, double g_local, double g_global);
/* The carry under a fixed rule from the gradient noise the run measures (floor.c): b's
 * curve is b0's at the rule's rate per sample s, moved by the noise floor's shift d. */
typedef struct scv_floor_policy {
    double kappa_lo, kappa_hi; /* 0.2, 1.5: the band's rates per sample, s^kappa */
    double level_err;          /* 0.5: the floor's shift within this relative error */
    int min_evals;             /* 4: the run's evaluations at b0 before it is read */
} scv_floor_policy;
scv_floor_policy scv_floor_policy_default(void);
typedef struct scv_floor_in {
    scv_metric metric;   /* the target's */
    const double *x, *y; /* the run's evaluations of it at b0 and where they stand
                                   [samples], in order */
    size_t n;
    double per_loss;     /* accuracy: its change per unit of training loss at the target
                                   (< 0; the level moves by d per_loss), measured by the caller */
    double trace;        /* tr(Sigma) per sample, measured (stat.c) */
    double lr, momentum; /* at base_batch, by lr_scaling */
    double base_batch, b0, b;
    scv_lr_scaling lr_scaling;
    double target, horizon; /* the target's value; the run's bound [samples] */
    double rate;            /* the progress per sample at b against b0's, measured (> 0); 0: the
                               rule's, s = (lr(b) / b) / (lr(b0) / b0) (a run leaves it at 0:
                               it measures b from the start nowhere; bench/floor_eval.c) */
    /* where b0 reaches a value v its evaluations have not [samples, 2 horizon: not within
     * it]: cross(ctx, v) (the run's forecast), NULL: the curve fitted to them (one they have
     * reached: linearly between the two it falls between) */
    double (*cross)(void *ctx, double v);
    void *ctx;
} scv_floor_in;
/* F(batch) = lr(batch) / (1 - momentum) tr(Sigma) / (4 batch) [loss]. */
double scv_floor_level(const scv_floor_in *in, double batch);
/* The exponent gamma of the target's carry from b0 to b and its band (q_lo <= 0 <= q_hi,
 * per_log), and the law it carries by: run_b0, run_b, run_rate s, run_level the level in the
 * target's metric (d, or d per_loss); n_evals the evaluations read, read_ahead 1 where a
 * crossing is the forecast's, not the evaluations'; SCV_ENOTFOUND under
 * AdaScale, without a trace, with fewer than policy.min_evals evaluations, an accuracy
 * without per_loss < 0, curves that cannot be fitted, or a target b0 does not reach within
 * the horizon. pol NULL: the default. */
int scv_carry_floor(const scv_floor_in *in, const scv_floor_policy *pol, scv_carry *out);
/* The carry's error as an estimate carries it (estimate.h). */
scv_carry_err scv_carry_err_of(const scv_carry *c);
/* The carry's band from b0 to b as ln(true / carried) quantiles (0, 0 at b0; NaN: none). */
void scv_carry_quantiles(const scv_carry *c, double b0, double b, double *q_lo, double *q_hi);

/* How samples to a target carry from batch b0 to batch b:
 *   gamma finite  S(b) = S(b0) (b / b0)^gamma              (a rule's exponent, carry.c)
 *   else          S(b) = S(b0) (b + Bn) / (b0 + Bn)        (the noise-scale law, Bn = b_noise;
 *                                                           +inf: samples count the same)
 * known: one of the two is usable. */
typedef struct scv_carry_law {
    double b_noise, gamma;
    /* a run's own read (scv_carry_shift; run_b 0: none), for the samples that run trained up
     * to run_until (samples in all; the rest carries by gamma, as the future does): a sample
     * at run_b made run_rate samples of progress on run_b0's curve, its evaluations there sit
     * run_level off that curve, which crosses the target at run_cross0 samples */
    double run_b0, run_b, run_rate, run_level, run_cross0, run_until;
} scv_carry_law;
double scv_carry_samples(scv_carry_law law, double samples_b0, double b0, double b);
int scv_carry_law_known(scv_carry_law law);
int scv_carry_law_same(scv_carry_law a, scv_carry_law b);

/* A VM type's price per hour under a pricing policy: on-demand; spot = the middle of the
 * catalog's spot range; memory = vcpus * rate_cpu + ceil(mem_bytes in GiB) * rate_gib.
 * NaN when the catalog has no such price. */
double scv_vm_price(const scv_vm_type *v, scv_pricing pricing, double mem_bytes,
                    double rate_cpu, double rate_gib);

/* ---- spot pricing with the risk of preemption (src/model/spot.c states the equations) ---- */
typedef enum { SCV_SPOT_RESTART = 0, SCV_SPOT_INPLACE } scv_spot_recovery;
typedef enum { SCV_SPOT_ONDEMAND = 0, SCV_SPOT_SPOT, SCV_SPOT_MIX, SCV_SPOT_FALLBACK } scv_spot_mode;
#define SCV_SPOT_MODES 4
const char *scv_spot_mode_name(scv_spot_mode m); /* "ondemand", "spot", "mix", "spot+fallback" */

/* The policy's numbers, defaults and their sources in scv_spot_policy_default() (spot.c). */
typedef struct scv_spot_policy {
    double rate_aws, rate_gcp, rate_azure, rate_other; /* preemptions per VM-hour by provider */
    double restart_s;           /* 80: a checkpoint-restart's idle */
    double inplace_idle_s;      /* 1.0: a shrink and a grow in place */
    double replace_s;           /* 120: until a replacement VM has joined */
    double ckpt_every;          /* 100 iterations between checkpoints */
    double mix_ondemand_share;  /* 0.25: the mix's on-demand workers, ceil(share K) */
} scv_spot_policy;
scv_spot_policy scv_spot_policy_default(void);

#define SCV_SPOT_MAX_RATES 32
typedef struct scv_spot_rates { /* the user's figures */
    double all;                 /* one rate for every type (< 0: none) */
    int vm[SCV_SPOT_MAX_RATES]; /* catalog indices ... */
    double rate[SCV_SPOT_MAX_RATES]; /* ... and their rates */
    size_t n;
} scv_spot_rates;
/* "R" (every type) or "TYPE=R[,TYPE=R...]", R in [0, 3600] preemptions per VM-hour, TYPE a
 * type of cat (NULL: the form alone is checked, vm -1). err's message names the bad part (the
 * caller prefixes its option or field). */
int scv_spot_rates_parse(const char *spec, const scv_catalog *cat, scv_spot_rates *out, scv_err *err);
/* The rate of catalog type vm: the user's for it, else the user's for all, else the policy's
 * for its provider (*from_user 0). */
double scv_spot_rate(const scv_spot_policy *pol, const scv_spot_rates *user, const scv_catalog *cat, int vm,
                     int *from_user);
/* L: the job's wall time lost per preemption (t_iter: s per iteration, lost work). */
double scv_spot_lost_s(const scv_spot_policy *pol, scv_spot_recovery how, double t_iter);
/* c = max(0, 1 - thr_less): the share of the job's progress rate missing while one of its K
 * workers is being replaced, thr_less = thr(K-1) / thr(K) at the same B (NaN or < 0: 1). */
double scv_spot_cap_lost(double thr_less);
/* d = L + replace_s c: the wall time the job loses per preemption [s]. */
double scv_spot_delay_s(const scv_spot_policy *pol, scv_spot_recovery how, double t_iter, double thr_less);
/* u: the expected seconds a worker preempted at a uniform time of a T s job goes unbilled
 * until its replacement (replace_s) or the job's end: R - R^2/(2T), or T/2 when R > T. */
double scv_spot_unbilled_s(double replace_s, double T);
/* rho = lam d / 3600: the share of wall time the workers lose at lam preemptions per hour
 * over them. */
double scv_spot_rho(const scv_spot_policy *pol, scv_spot_recovery how, double t_iter, double thr_less, double lam);

/* What the planner needs to price spot with the risk (scv_plan_request.spot_risk). */
typedef struct scv_spot_risk {
    const scv_spot_policy *pol;     /* NULL: scv_spot_policy_default() */
    const scv_spot_rates *rates;    /* the user's (NULL: the policy's by provider) */
    scv_spot_recovery recovery;
} scv_spot_risk;
/* Lam: the preemptions per hour of count[i] workers of catalog types vm[i] (i < n). */
double scv_spot_lam(const scv_spot_risk *r, const scv_catalog *cat, const int *vm, const int *count, int n);
/* thr(K-1) / thr(K) of point p of a plan made for req: its progress rate with one worker
 * fewer at the same global batch B (the elastic driver keeps B) over its own, by the
 * request's models (both measured where the request measured both); 0 for K = 1. A mix: the
 * mean over its types of losing one worker of that type, weighted by the type's
 * preemptions per hour under risk (NULL: by its workers). model/plan.c. */
double scv_plan_thr_less(const scv_plan_request *req, const scv_plan_point *p, const scv_spot_risk *risk);

typedef struct scv_spot_in {
    const scv_spot_policy *pol;
    scv_spot_recovery recovery;
    int workers;                /* K */
    int homogeneous;            /* one VM type (a mix mode is priced only then) */
    double t0_s;                /* the on-demand-equivalent time [s] */
    double t_iter;              /* s per iteration */
    double thr_less;            /* thr(K-1) / thr(K) at the same B, >= 0 (scv_plan_thr_less;
                                   0: the job stands still while a worker is replaced) */
    double lam;                 /* preemptions per hour over all K workers on spot */
    double price_od, price_spot; /* $ per hour of all K workers (spot NaN: none, on-demand only) */
    double deadline_s;          /* 0: none */
    scv_objective objective;    /* SCV_OBJ_TIME: the fastest mode; otherwise the cheapest */
} scv_spot_in;
typedef struct scv_spot_price {
    int ok;                     /* priced (mix: K >= 2, one type; fallback: a deadline with room) */
    int n_ondemand, n_spot;     /* workers bought each way */
    double rho;                 /* s lost per s of wall time */
    double preemptions, time_s, cost; /* expected; inf: never finishes (rho >= 1) */
} scv_spot_price;
typedef struct scv_spot_result {
    scv_spot_price mode[SCV_SPOT_MODES];
    double lost_s, delay_s;     /* L and d = L + R c per preemption [s] */
    double cap_lost;            /* c: the share of the progress rate missing at K - 1 */
    double switch_s, margin_s;  /* S and M of the fallback [s] */
    double fallback_s;          /* t*: the latest switch to on-demand at the expected progress
                                   (NaN: no deadline; 0: no room, on-demand from the start;
                                   inf: never needed, no preemption) */
    scv_spot_mode best;         /* the cheapest meeting the deadline (else the fastest) */
    int meets;                  /* best meets the deadline (1 without one) */
} scv_spot_result;
int scv_spot_eval(const scv_spot_in *in, scv_spot_result *out, scv_err *err);

/* ---- a slow worker: absorbed, dropped or replaced (src/model/hetero.c states the model) ---- */
typedef enum { SCV_HETERO_ABSORB = 0, SCV_HETERO_DROP, SCV_HETERO_REPLACE } scv_hetero_choice;
const char *scv_hetero_choice_name(scv_hetero_choice c); /* "absorb", "drop", "replace" */
/* The policy's numbers; defaults and their sources in scv_hetero_policy_default(). */
typedef struct scv_hetero_policy {
    double comm_drag;           /* 0.4: the share of the allreduce's time paced by its slowest
                                   member's CPU (fitted on BENCHMARKS' 1.62x at H = 4) */
    double floor_share;         /* 0.02: dynamic batching's floor of a worker's share of B */
    double drop_idle_s;         /* 0.05: a shrink's idle where none is measured [s] */
    double replace_idle_s;      /* 1.0: a replacement's idle where none is measured [s] */
} scv_hetero_policy;
scv_hetero_policy scv_hetero_policy_default(void);
typedef struct scv_hetero_case {
    const scv_perf_model *perf; /* the job's parallel-performance model */
    int K;                      /* workers, the slow one among them (>= 2) */
    double B;                   /* the global batch */
    double r;                   /* the slow worker's speed over a normal worker's, (0, 1] */
    double iters_left;          /* iterations still to go at B */
    int spare;                  /* a spare VM to replace it on */
    int no_drop;                /* K - 1 workers is not an option (outside the run's space) */
    int balanced;               /* 1: dynamic batching balances the shares; 0: even shares */
    double drop_idle_s, replace_idle_s; /* measured idle [s] (NaN: the policy's default) */
} scv_hetero_case;
typedef struct scv_hetero_pred {
    double t_iter_absorb, t_iter_drop, t_iter_replace; /* s per iteration */
    double drop_idle_s, replace_idle_s;                /* the idle used [s] */
    double absorb_s, drop_s, replace_s; /* s to finish (replace: inf without a spare) */
    scv_hetero_choice choice;           /* the fastest */
} scv_hetero_pred;
int scv_hetero_predict(const scv_hetero_case *c, const scv_hetero_policy *pol, scv_hetero_pred *out, scv_err *err);
/* Seconds per iteration with the slow worker at r kept (balanced or even shares). */
double scv_hetero_t_absorb(const scv_perf_model *m, int K, double B, double r, int balanced,
                           const scv_hetero_policy *pol);
/* The speeds under which the job drops (no spare, or replacing is not faster) or replaces
 * (with a spare) a slow worker; c->r is not used. */
int scv_hetero_thresholds(const scv_hetero_case *c, const scv_hetero_policy *pol, double *drop_below,
                          double *replace_below, scv_err *err);
/* A straggler rule's ratio (throughput over the median worker's) as the speed r above. */
double scv_hetero_speed_of_ratio(double ratio, int K);
double scv_hetero_ratio_of_speed(double r, int K); /* and back */

#endif /* SCV_MODEL_MODEL_H */
