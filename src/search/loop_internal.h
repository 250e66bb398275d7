/*
 * loop_internal.h - the loop's context and the functions its files share (src/search/).
 */
#ifndef SCV_SEARCH_LOOP_INTERNAL_H
#define SCV_SEARCH_LOOP_INTERNAL_H
#include "scv.h"
#include "../model/model.h"
#include "../io/io.h"
#include "../store/store.h"
#include "progress.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../model/stoprule.h"

#include <stdio.h>

/* The stored targets of the job a run looks at to carry one to its own value (the newest). */
#define SCV_STORED_TARGETS_MAX 16

/* The stored runs of the job as the target's stored estimators read them (est_stored.c):
 * read once, the store's targets do not change while this run trains. */
typedef struct stored_est {
    int loaded;
    scv_stored_target t[SCV_STORED_TARGETS_MAX]; /* newest first */
    size_t n;
    int other_recipe;               /* stored runs of the job left out: another recipe */
    char recipe[512];               /* this run's (scv_job_recipe) */
    int far;                        /* the nearest value whose evaluations did not cross this
                                       run's (-1: none; CARRIED finds it for CARRIED_CURVE) */
} stored_est;

/* An estimator's answer kept for the run's life (target.c: the list's `once` estimators). */
#define LOOP_ESTIMATORS 7
typedef struct est_kept {
    int asked, yes;
    scv_estimate est;
    char note[sizeof ((scv_run_result *)0)->target_note];
} est_kept;

/* Where the run measures and trains, and the bounds its plan kept (place.c) */
typedef struct place_state {
    const scv_vm_type *vm;
    int vm_index;
    int train_vm;                   /* the VM type (catalog index) training segments go on: the
                                       run's own, or the decision's choice where the driver holds
                                       K VMs of it (`run --vm`, vm_place); re-plans keep it */
    int seg_vm;                     /* ... the current (or last) segment's: warm-up and search
                                       measure on the run's own */
    double plan_deadline_s, plan_budget; /* the bounds the latest plan kept (plan_bounded) */
} place_state;

/* What the run spends and may spend (ledger.c) */
typedef struct ledger_state {
    double rate_cpu, rate_gib;      /* memory pricing */
    double seg_short_ws;            /* worker-seconds the segment under way ran below its K (an
                                       elastic drop: a preemption's notice, a dropped straggler) */
    int seg_shrunk;                 /* ... it ran an iteration below its K */
    double short_usd, short_search_usd; /* what the recorded steps' K x seconds over-count for
                                       those (all, search steps'): taken off the cost; not stored,
                                       so a resumed run prices its earlier steps at their K */
    double eval_s_sum;              /* the evaluations' own times, summed, and how many: the */
    int eval_n;                     /*   plan prices them per training sample */
    int budget_warned;              /* the budget's warning share was passed (noted once) */
    int budget_stop;                /* the next segment does not fit the budget: the run stops */
} ledger_state;

/* The learning curve, online, and its latest prediction (target.c, est_curve.c) */
typedef struct curve_state {
    progress prog;                  /* the learning curve, online */
    progress_pred pred;             /* its latest prediction */
    int pred_fitted;                /* ... made from pred_nev evaluations, pred_nseg segments */
    size_t pred_nev, pred_nseg;     /*   (the last ending at pred_s1 samples) and the carry */
    double pred_s1;                 /*   pred_law */
    scv_carry_law pred_law;
    double planned_x_star;          /* the prediction the plan used (re-plan when it moves) */
    double history[SCV_TARGET_WINDOW_MAX]; /* the latest target values, oldest first (a window's worth) */
    int n_history;
} curve_state;

/* The progress predicted from the plan (eta.c) */
typedef struct eta_state {
    double need_iters, pred_t_iter;
    double pred_iter_factor;        /* ... its iterations relative to dense */
    double eta_stored;              /* when the forecast was last stored (scv_now; 0: never) */
} eta_state;

/* The batch carry-over read from a probe, this run's or a stored run's (carryread.c) */
typedef struct probe_state {
    int carry_run;                  /* carry was read from a probe, this run's or a stored
                                       run's (take_run_carry) */
    long long carry_from;           /* ... that stored run (0: this run's, read at carry_until
                                       samples) */
    double carry_until;
    int probing;                    /* the first training segment probes another batch (the
                                       decision's choice's carry is inside its band) */
    double probe_end;               /* ... until this iteration (policy.carry_probe_epochs on) */
    int probed_b;                   /* the batch probed, until the run's own carry is learnt */
    int carry_replan;               /* ... learnt since the segment's start: re-plan at its end */
    int retarget_replan;            /* a nominal plan's target was forecast during the segment
                                       (loop_reforecast): re-plan at its end */
} probe_state;

/* What informs the target besides the run's own curve (carryread.c, est_stored.c) */
typedef struct inputs_state {
    scv_perf_model prior;           /* the universal prior: medians over other jobs' models */
    int n_prior;                    /* ... over this many stored runs (0: none) */
    stored_est stored;              /* the stored runs of the job (est_stored.c) */
    est_kept est_kept[LOOP_ESTIMATORS]; /* the estimators' answers kept (target.c) */
    scv_calib calib;                /* the band's calibration: the corpus's curves and the
                                       store's finished runs (load_calib) */
    scv_carry carry;                /* the batch carry-over learnt from the corpus's curves of
                                       this job under its learning-rate rule, else its rule's
                                       exponent from other jobs' (NaN: none) */
    scv_carry floor;                /* the carry from the noise floor the run measures, to the
                                       batch of its space farthest from the reference one
                                       (floor.c; gamma NaN: none, loop_refresh_floor) */
    scv_carry floor_stored;         /* ... the newest stored run's of the job (NaN: none) */
    double floor_momentum;          /* the recipe's momentum, read once; NaN where its schedule
                                       decays (the floor moves with the rate: no floor's carry) */
    scv_seed_crossings seeds;       /* the corpus's curves of the job under its recipe: their
                                       crossings of the target (n 0: none; est_corpus.c) */
    int seeds_other;                /* ... curves of the job's network and data under another
                                       recipe (not read) */
} inputs_state;

/* The loop's context: the run's orchestration state (the state, the configuration trained
 * at, the segment under way, retries), and each concern's own state as a member. */
typedef struct loop {
    place_state place;              /* where it measures and trains (place.c) */
    ledger_state ledger;            /* what it spends (ledger.c) */
    curve_state curve;              /* its learning curve and prediction (est_curve.c) */
    eta_state eta;                  /* its progress predicted from the plan (eta.c) */
    probe_state probe;              /* the carry read from a probe (carryread.c) */
    inputs_state in;                /* the target's other inputs (carryread.c, est_stored.c) */
    const scv_run_params *p;
    const scv_job_driver *d;
    const scv_run_observer *obs;
    scv_run_result *r;
    const scv_run_policy *pol;
    scv_err store_err;              /* a store read that failed (a damaged store, I/O) where it
                                       could not be returned (an estimator, an input): the next
                                       plan fails with it (loop_store_read) */
    scv_job_info job;
    scv_config_stats *cs;           /* the measurements the models are fitted to */
    size_t ncs, cs_cap, steps_cap;
    scv_run_state state;
    int K, B;                       /* the configuration trained at */
    int comm;                       /* ... its communication option (index into comms;
                                       -1: no options, dense) */
    int dense;                      /* the dense option's index (-1: no options) */
    scv_plan_comm comms[SCV_PLAN_MAX_COMMS + 1]; /* p->comms, the loop's copy: each option's
                                       t_iter_scale, measured / predicted where it trained */
    int seg_compressed;             /* the current segment trains compressed: its times are
                                       not dense measurements (the models are fitted on dense) */
    int trained_compressed;         /* some segment of this invocation did */
    int cfg_K, cfg_B;               /* ... the driver is configured for */
    int retries, rounds, decided, resumed_decision;
    int64_t retry_it;               /* the checkpoint's iteration at the last failure */
    /* progress: predicted from the plan once there is one */
    int64_t iteration;              /* the latest the driver reported */
    double samples;                 /* ... and samples seen */
    double last_accuracy;
    scv_err sink_err;               /* a store write that failed inside the sink */
    double seg_t0, seg_t1;          /* wall clock of the current segment's first and latest iteration */
    int profiling;                  /* the current segment is a search profile: its evaluations
                                       are stored but not points of the learning curve (a few
                                       dozen iterations at another batch, carried to the
                                       reference batch by the noise scale, bend the fitted
                                       slope more than they inform it) */
    int universal;                  /* --search none on a job never stored: warm-up, then the prior */
    int bs[2 * SCV_MAX_SPACE];      /* the batches planned over: the space's, and with Or et al.'s */
    size_t n_bs;                    /*   scaling the B = b K it trains at */
    int settled_K, settled_B;       /* Or et al.'s scaling: where it settled (0: not yet) */
    char settled_why[200];
    int eval_widened;               /* the warm-up's evaluation period was widened (noted once) */
    scv_straggler_rule strag_rule;  /* the current training segment's (hetero_rule) */
} loop;

/* ---- loop.c ---- */
void loop_emit(loop *l, scv_run_event ev);
/* A note (notes.c): its text, and as data its code and the numbers the text shows. */
void loop_note(loop *l, scv_run_event_kind kind, scv_note_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void loop_start_config(const scv_run_params *p, int *K, int *B);
void loop_reforecast(loop *l);
int loop_finish(loop *l, scv_err *err);

/* ---- search.c ---- */
int loop_do_warmup(loop *l, scv_err *err);
double loop_est_t_iter(const loop *l, int K, int B);
int loop_spent(const loop *l);
int loop_scaled_batch(const scv_run_params *p, int K);
int loop_do_search(loop *l, scv_err *err);

/* ---- segment.c ---- */
void loop_history_push(loop *l, double y);
int loop_keep_measurement(loop *l, const scv_config_stats *s, scv_err *err);
int loop_measured(const loop *l, int K, int B);
void loop_shortfall_to_steps(loop *l, const char *phase, int K, int B);
int loop_live_forecast(const loop *l);
void loop_on_eval(void *ctx, const scv_eval_sample *e);
double loop_search_eval_every(loop *l, int K, int B);
int loop_segment(loop *l, const char *phase, int K, int B, scv_segment_spec spec, scv_run_step **out,
                   scv_err *err);

/* ---- ledger.c ---- */
double loop_elapsed(const loop *l);
double loop_price_at(const loop *l, int vm, int K, int B);
void loop_tally(loop *l);
double loop_switch_idle(const loop *l);
/* The request's segments priced (scv_plan_segments_idle): the idle measured before a segment
 * that goes on at the same configuration (else before any step; none: not priced) and the
 * loop's segment rule (segment_share, segment_min_iters, an epoch of the job). */
void loop_segments_priced(const loop *l, scv_plan_request *req);
double loop_spend_usd(const loop *l);
int loop_budget_check(loop *l, const char *phase, int K, int B, scv_segment_spec *spec);
double loop_eval_s_per_sample(const loop *l);

/* ---- eta.c ---- */
int loop_probe_left(const loop *l, scv_run_event *ev);
int loop_overdue(const loop *l);
void loop_time_left(const loop *l, scv_run_event *ev);
void loop_store_eta(loop *l, const scv_run_event *ev, int force);
const scv_plan_point *loop_find_point(const scv_plan_result *r, int K, int B, int comm);
double loop_done_share(const loop *l, const scv_stat_model *sm);
double loop_rest_iters(const loop *l, const scv_stat_model *sm, int B);
double loop_iter_factor(const scv_plan_point *pt);
void loop_predict_progress(loop *l);
void loop_record_forecast(loop *l, int force_store);

/* ---- record.c ---- */
int loop_record_step(loop *l, const char *phase, int K, int B, const scv_segment_result *rs, scv_run_step **out,
                       scv_err *err);
const char *loop_comm_text(const loop *l, int comm, scv_sparse_coll coll, char *buf, size_t cap);
int loop_store_models(loop *l, scv_err *err);
int loop_store_plan(loop *l, const scv_plan_result *res, scv_err *err);

/* ---- place.c ---- */
int loop_vm_held(const loop *l, int vm);
int loop_vm_place(const loop *l, const scv_plan_point *other, char *why, size_t cap);
int loop_plan(loop *l, scv_plan_result **res, scv_perf_model *perf, scv_stat_model *sm, scv_err *err);

/* ---- carryread.c ---- */
int loop_load_calib(loop *l, scv_err *err);
int loop_load_prior(loop *l, scv_err *err);
/* A store read's result rc (its message in e): 1 when it read, 0 when not (SCV_ENOTFOUND:
 * nothing there; anything else is kept in l->store_err, the first only, and fails the next
 * plan: a damaged store is never read as an empty one). */
int loop_store_read(loop *l, int rc, const scv_err *e);
scv_carry_law loop_carry_law(const loop *l);
scv_carry_law loop_read_law(const loop *l, double until);
/* The noise floor's state at the run's start: none read yet, the recipe's momentum. */
void loop_floor_init(loop *l);
void loop_refresh_floor(loop *l);
const scv_carry *loop_carry_in_force(const loop *l);
double loop_horizon(const loop *l);
void loop_try_run_carry(loop *l, int final);
double loop_stored_noise_scale(loop *l, long long run);
scv_carry_law loop_stored_carry_law(loop *l, long long run);
void loop_learn_stored_carry(loop *l, const scv_stored_target *t, size_t n);

/* ---- target.c ---- */
scv_metric loop_metric_of(const scv_run_params *p);
double loop_target_value(const scv_run_params *p);
double loop_target_y(const loop *l, const scv_eval_sample *e);
double loop_target_x(const loop *l, const scv_eval_sample *e);
/* An evaluation into a curve g: the target's metric, and the period-mean training loss. */
int loop_progress_eval(const loop *l, progress *g, const scv_eval_sample *e);
double loop_rule_lag(const loop *l);
void loop_predict_target(loop *l);
void loop_curve_epochs(const progress_pred *pr, double n, double *e, double *lo, double *hi);
/* The target's estimate: the first of the estimators' list with an opinion (its note into
 * note), carried by the run's carry in force (loop_carry_err). */
scv_estimate loop_target_of(loop *l, char *note, size_t cap);
scv_carry_err loop_carry_err(const loop *l);
/* The target likely out of reach within the epoch bound by this run's curve refitted now,
 * once the run has trained policy.out_of_reach_by of the bound (a training segment ends
 * there) and from then on: its calibrated P(reached) under policy.out_of_reach_p (an
 * uncalibrated one, the fit's bootstrap, never stops a run). Said, with the value likely
 * reached by the bound; 1: the run stops (before a training segment, checkpointed,
 * resumable). */
int loop_out_of_reach(loop *l);

/* ---- the estimators (est_*.c): 1 and the estimate, or 0 (no opinion) and why, in note ---- */
int loop_est_given(loop *l, scv_estimate *e, char *note, size_t cap);
int loop_est_learnt(loop *l, scv_estimate *e, char *note, size_t cap);
int loop_est_carried(loop *l, scv_estimate *e, char *note, size_t cap);
int loop_est_carried_curve(loop *l, scv_estimate *e, char *note, size_t cap);
int loop_est_corpus(loop *l, scv_estimate *e, char *note, size_t cap);
void loop_corpus_seeds(loop *l, const scv_lcurve_set *set);
int loop_est_curve(loop *l, scv_estimate *e, char *note, size_t cap);
int loop_est_nominal(loop *l, scv_estimate *e, char *note, size_t cap);

/* ---- est_stored.c ---- */
double loop_window_crossing(const loop *l, const scv_eval_sample *ev, size_t i, int W);
int loop_stored_curve(const loop *l, long long run, const scv_run_step *steps, size_t n_steps, progress *g,
                        scv_eval_sample **ev, size_t *n, scv_err *err);

#endif
