/*
 * loop_fake.h - what the loop's tests share (test_loop.c, test_target.c, test_eta.c): a fake
 * job driver on a virtual clock (no MPI, no processes) with a scripted iteration time
 * t(K, B) = c0 + c1 B/K + alpha (K-1), gradient norms of a known noise scale and a target
 * reached after a known number of samples (it can drift, fail and be interrupted); an
 * observer recording the run's events; the run's parameters and a fresh store.
 */
#ifndef SCV_TESTS_LOOP_FAKE_H
#define SCV_TESTS_LOOP_FAKE_H
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "../src/model/model.h"
#include "../src/model/stoprule.h"
#include "../src/store/store.h"
#include "../src/search/report.h"
#include "../src/search/progress.h"
#include "../src/core/util.h"

#include <cjson/cJSON.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the fake driver ---- */
typedef struct fake {
    scv_job_info job;
    int K, B;
    int64_t iteration;
    double samples;
    double clock;             /* virtual wall clock, s */
    double idle_per_segment;  /* a relaunch's idle */
    double c0, c1, alpha;     /* t_iter model */
    double b_noise;           /* the true noise scale */
    double need_e0;           /* epochs to the target at batch 32 */
    /* scripts */
    int drift_K, drift_B;     /* after drift_after iterations this configuration slows */
    int64_t drift_after;
    double drift_factor;
    int fail_calls;           /* the next this many train calls fail */
    int fail_code;            /* ... with this code (0: SCV_EMPI, a rank died) */
    int interrupt_at_call;    /* the train call (1-based) that is interrupted, 0 = none */
    int interrupt_after;      /* ... after this many of its iterations (0: 5) */
    int calls;
    int opened;
    int checkpoints;          /* checkpoint calls (the loop's own: a stop at the budget) */
    /* a learning curve: accuracy(x) = acc_max - acc_gap exp(-x / tau) in reference samples
     * x at batch 32 (a sample at B is worth E(32)/E(B) of them); 0 = the fixed-need rule;
     * with acc_c > 0 the power law to the ideal 1 - acc_gap (x / tau)^-acc_c instead */
    double tau, acc_max, acc_gap, target, x_ref, acc_c;
    /* or a training loss loss_b x^-loss_c (x in reference samples) and a loss target */
    int by_loss;
    double loss_b, loss_c;
    /* the noise floor's law (src/model/floor.c) in place of the noise scale's: a sample at B
     * is worth s(B) = (lr(B) / B) / (lr(32) / 32) reference samples (job's rule), and the
     * training loss sits F(B) = lr(B) / (1 - 0.9) tr(Sigma) / (4 B) over loss_b x^-loss_c */
    int floor_law;
    /* the smoothed rule, the trainer's own (src/model/stoprule.c): reached at an evaluation
     * when the mean of the last W values (accuracies, or period-mean losses) crosses the target */
    scv_stoprule rule;
    double x_at_eval, samples_at_eval; /* at the previous evaluation */
    scv_segment_result lost;  /* the segment an interruption cut short (recover) */
    char lost_phase[16];
    int lost_K, lost_B;
    /* a bandwidth term of communication, beta_comm 2(K-1)/K s a step (0: none), divided by
     * the factor of a segment's Top-k option; the segments that got an option, by phase */
    double beta_comm;
    int comm_train, comm_other, dense_train;
    char comm_coll[16];
    int comm_kind;                  /* the option of the last training segment with one */
    /* every evaluation's accuracy, period-mean loss and reference samples, in the order the
     * loop saw them */
    double ev_acc[1024], ev_loss[1024], ev_x[1024];
    int n_ev;
    char seg_vms[4096];       /* "phase:VM " of every train call (the type the segment named) */
    double eval_s;            /* each evaluation's own seconds (0: not measured) */
    int preempt_at_call;      /* this train call (1-based) survives a notice and a restore */
    int preempt_train;        /* ... or the first training segment, its K - 1 stretch of
                                 preempt_iters iterations at short_t_factor the iteration time */
    int64_t preempt_iters;
    int preempt_no_restore;   /* ... the notice alone: the job stays at K - 1 (its VM not back) */
    double short_t_factor;
    int64_t short_lo, short_hi; /* ... its iterations in (lo, hi] ran at K - 1 */
    double short_s, last_end; /* their wall seconds (from the previous iteration's end) */
    int fail_progress_iters;  /* a failing call first trains (and checkpoints) this many iterations */
    double eval_every_max[2]; /* the longest evaluation period asked: [warm-up and search, train] */
    /* the training segments' straggler rule, as the last one carried it; strag_ratio > 0: the
     * first training segment reports a slow worker at that ratio, decided by the model */
    int strag_train, strag_by_model;
    double strag_drop, strag_rep, strag_ratio;
    /* the first refuse_train training segments refuse every firing of the target window, as
     * the trainer's confirmation on the whole test set does when a subset's window stands
     * above it: they train on to their end, not reached */
    int refuse_train, train_calls;
} fake;

static inline double fake_acc(const fake *f)
{
    if (f->acc_c > 0) return f->x_ref > 0 ? fmax(0, 1 - f->acc_gap * pow(f->x_ref / f->tau, -f->acc_c)) : 0;
    return f->acc_max - f->acc_gap * exp(-f->x_ref / f->tau);
}

/* The power-law fake's crossing of an accuracy [reference samples]. */
static inline double fake_pow_crossing(const fake *f, double acc) { return f->tau * pow(f->acc_gap / (1 - acc), 1 / f->acc_c); }
static inline double fake_loss_at(const fake *f, double x) { return f->loss_b * pow(x, -f->loss_c); }
static inline double fake_lr(const fake *f, int B)
{
    double r = (double)B / f->job.base_batch;
    return f->job.lr * (f->job.lr_scaling == SCV_LR_SCALE_SQRT     ? sqrt(r)
                        : f->job.lr_scaling == SCV_LR_SCALE_LINEAR ? r
                                                                   : 1);
}
/* floor_law: s(B) and F(B) (tr(Sigma) = 100 b_noise, the measurements' below) */
static inline double fake_floor_rate(const fake *f, int B) { return fake_lr(f, B) / B / (fake_lr(f, 32) / 32); }
static inline double fake_floor(const fake *f, int B) { return fake_lr(f, B) / 0.1 * 100 * f->b_noise / (4.0 * B); }

/* A new invocation: the window starts from the loop's history. */
static inline void fake_rule_init(fake *f, const scv_segment_spec *sp)
{
    scv_stoprule_spec s = {.window = sp->target_window, .history = sp->history, .n_history = sp->n_history};
    if (f->by_loss) s.target_loss = f->target;
    else s.target_accuracy = f->target;
    scv_stoprule_init(&f->rule, &s);
}

static inline void fake_record(fake *f, double acc, double loss)
{
    if (f->n_ev < (int)(sizeof f->ev_acc / sizeof f->ev_acc[0]))
        f->ev_acc[f->n_ev] = acc, f->ev_loss[f->n_ev] = loss, f->ev_x[f->n_ev++] = f->x_ref;
}

static inline double fake_t_iter(const fake *f, int K, int B)
{
    double t = f->c0 + f->c1 * B / K + f->alpha * (K - 1) + f->beta_comm * 2.0 * (K - 1) / K;
    if (K == f->drift_K && B == f->drift_B && f->drift_after && f->iteration >= f->drift_after) t *= f->drift_factor;
    return t;
}

/* samples to the target at batch B: E(B) = E(32) (1 + B/Bn) / (1 + 32/Bn) epochs */
static inline double fake_need(const fake *f, int B)
{
    return f->need_e0 * f->job.n_train * (1 + B / f->b_noise) / (1 + 32 / f->b_noise);
}

static inline int f_open(void *ctx, const char *dir, scv_job_info *job, scv_err *err)
{
    (void)dir, (void)err;
    fake *f = ctx;
    f->opened++;
    *job = f->job;
    return SCV_OK;
}
static inline int f_progress(void *ctx, int64_t *it, double *s, scv_err *err)
{
    (void)err;
    fake *f = ctx;
    *it = f->iteration, *s = f->samples;
    return SCV_OK;
}
static inline int f_configure(void *ctx, int K, int B, const double *split, scv_err *err)
{
    (void)split;
    fake *f = ctx;
    if (B < K) return scv_err_set(err, SCV_EINVAL, "B < K");
    f->K = K, f->B = B;
    return SCV_OK;
}
static inline int f_train(void *ctx, const scv_segment_spec *sp, const scv_measure_sink *sink, scv_segment_result *out,
                   scv_err *err)
{
    fake *f = ctx;
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    f->calls++;
    int tr = !strcmp(sp->phase, "train");
    int refusing = tr && ++f->train_calls <= f->refuse_train;
    if (f->calls == f->preempt_at_call || (f->preempt_train && tr && f->preempt_train++ == 1)) {
        /* as the elastic job reports them */
        int64_t back = f->iteration + 5 + (f->preempt_iters > 0 ? f->preempt_iters : 15);
        out->preemptions[0] = (scv_survive_event){.iteration = f->iteration + 5, .process = 1, .workers = f->K - 1,
                                                  .idle_s = 0.004};
        out->preemptions[1] = (scv_survive_event){.iteration = back, .process = 1, .restored = 1,
                                                  .workers = f->K, .idle_s = 0.008};
        out->n_preemptions = f->preempt_no_restore ? 1 : 2;
        f->short_lo = f->iteration + 5, f->short_hi = f->preempt_no_restore ? sp->until_iterations : back;
    }
    f->eval_every_max[tr] = fmax(f->eval_every_max[tr], sp->eval_every_epochs);
    size_t sl = strlen(f->seg_vms);
    if (sl + 128 < sizeof f->seg_vms)
        snprintf(f->seg_vms + sl, sizeof f->seg_vms - sl, "%s:%s ", sp->phase, sp->vm_type ? sp->vm_type : "(none)");
    if (f->fail_calls > 0) {
        f->fail_calls--;
        f->clock += 5;
        f->iteration += f->fail_progress_iters, f->samples += (double)f->fail_progress_iters * f->B;
        if (f->fail_code == SCV_EIO) return scv_err_set(err, SCV_EIO, "fake: disk full");
        return scv_err_set(err, SCV_EMPI, "fake: a rank died"); /* retried (SCV_EIO is not) */
    }
    f->clock += f->idle_per_segment;
    double cf = sp->comm && sp->comm->kind == SCV_PLAN_TOPK ? sp->comm->cf : 1;
    if (!strcmp(sp->phase, "train")) {
        if (sp->comm) f->comm_train++, f->comm_kind = (int)sp->comm->kind;
        else f->dense_train++;
    } else if (sp->comm) {
        f->comm_other++;
    }
    if (sp->comm)
        snprintf(f->comm_coll, sizeof f->comm_coll, "%s",
                 sp->comm_collective == SCV_COLL_ARTOPK ? "artopk" : "allgather");
    int64_t n = 0;
    double sum = 0;
    double S = 100 * f->b_noise, G2 = 100; /* tr(Sigma), |G|^2: B_simple = S / G2 = b_noise */
    int stop_at = sp->noise_window ? 2 * sp->noise_window : sp->time_rse > 0 ? sp->time_min_iters : 0;
    fake_rule_init(f, sp);
    f->x_at_eval = f->x_ref, f->samples_at_eval = f->samples;
    for (;;) {
        if (sp->until_iterations && f->iteration >= sp->until_iterations) break;
        if (stop_at && n >= stop_at) break;
        if (f->interrupt_at_call == f->calls && n == (f->interrupt_after ? f->interrupt_after : 5)) {
            /* what a killed job leaves in its metrics */
            f->lost = *out;
            f->lost.iterations = n, f->lost.total_iterations = f->iteration, f->lost.samples_seen = f->samples;
            snprintf(f->lost_phase, sizeof f->lost_phase, "%s", sp->phase);
            f->lost_K = f->K, f->lost_B = f->B;
            return scv_err_set(err, SCV_EINTR, "interrupted");
        }
        double tc = f->alpha * (f->K - 1) + f->beta_comm * 2.0 * (f->K - 1) / f->K / cf;
        double t = fake_t_iter(f, f->K, f->B) - f->beta_comm * 2.0 * (f->K - 1) / f->K * (1 - 1 / cf);
        if (n == 0) out->first_start = f->clock;
        if (f->short_t_factor > 0 && f->iteration + 1 > f->short_lo && f->iteration + 1 <= f->short_hi)
            t *= f->short_t_factor; /* at K - 1 */
        f->clock += t;
        f->iteration++, f->samples += f->B, n++, sum += t;
        f->x_ref += f->floor_law ? f->B * fake_floor_rate(f, f->B)
                                 : f->B * (1 + 32 / f->b_noise) / (1 + f->B / f->b_noise);
        int k_now = f->iteration > f->short_lo && f->iteration <= f->short_hi ? f->K - 1 : f->K; /* as the job says */
        if (k_now < f->K) f->short_s += f->clock - f->last_end;
        f->last_end = f->clock;
        scv_iter_sample s = {.iteration = f->iteration, .samples_seen = f->samples,
                             .epoch = f->samples / f->job.n_train, .workers = k_now, .batch = f->B,
                             .t_compute = t - tc, .t_comm = tc, .t_iter = t,
                             .loss = 1, .g_local = G2 + S / ((double)f->B / f->K),
                             .g_global = G2 + S / f->B, .wall_end = f->clock};
        if (sink && sink->on_iter) sink->on_iter(sink->ctx, &s);
        out->last_end = f->clock;
        int reached = f->tau <= 0 && f->samples >= fake_need(f, f->B);
        if (f->tau > 0 && sp->eval_every_epochs > 0) {
            double every = sp->eval_every_epochs * f->job.n_train;
            if (floor(f->samples / every) > floor((f->samples - f->B) / every)) {
                /* a period-mean loss: the loss at the period's middle */
                double tl = f->by_loss ? fake_loss_at(f, 0.5 * (f->x_at_eval + f->x_ref)) +
                                             (f->floor_law ? fake_floor(f, f->B) : 0)
                                       : NAN;
                scv_eval_sample e = {.iteration = f->iteration, .samples_seen = f->samples,
                                     .epoch = f->samples / f->job.n_train, .accuracy = fake_acc(f), .loss = 0.1,
                                     .train_loss = tl, .train_loss_samples = f->samples - f->samples_at_eval,
                                     .seconds = f->eval_s};
                f->clock += f->eval_s;
                f->x_at_eval = f->x_ref, f->samples_at_eval = f->samples;
                fake_record(f, e.accuracy, tl);
                if (sink && sink->on_eval) sink->on_eval(sink->ctx, &e);
                reached = scv_stoprule_on_evaluation(&f->rule, f->by_loss ? tl : e.accuracy) == SCV_STOP_TARGET &&
                          !refusing;
            }
        }
        if (reached) {
            out->reached = 1;
            break;
        }
        if (f->samples / f->job.n_train >= sp->max_epochs) break;
    }
    double acc = f->tau > 0 ? fake_acc(f) : f->samples >= fake_need(f, f->B) ? 0.95 : 0.5;
    if (sp->final_eval || out->reached) {
        out->accuracy = acc;
        scv_eval_sample e = {.iteration = f->iteration, .samples_seen = f->samples,
                             .epoch = f->samples / f->job.n_train, .accuracy = acc, .loss = 0.1,
                             .train_loss = NAN}; /* no training period: not a point of a loss curve */
        fake_record(f, acc, NAN);
        if (sink && sink->on_eval) sink->on_eval(sink->ctx, &e);
    }
    if (tr && sp->straggler) {
        f->strag_train++, f->strag_by_model = sp->straggler->by_model;
        f->strag_drop = sp->straggler->drop_below, f->strag_rep = sp->straggler->replace_below;
        if (f->strag_ratio > 0 && f->strag_train == 1 && n > 0) {
            scv_straggler_event *e = &out->stragglers[out->n_stragglers++];
            *e = (scv_straggler_event){.iteration = f->iteration - n / 2, .worker = 1, .ratio = f->strag_ratio,
                                       .idle_s = NAN};
            snprintf(e->note, sizeof e->note, "speed %.2f, the model's choice: absorb", f->strag_ratio);
        }
    }
    out->iterations = n;
    out->total_iterations = f->iteration;
    out->samples_seen = f->samples;
    if (n > 3) {
        scv_config_stats *c = &out->stats;
        snprintf(c->vm, sizeof c->vm, "c5.xlarge");
        c->workers = f->K, c->batch = f->B, c->n_iters = (int)n;
        c->t_iter = sum / n;
        c->t_comm = f->alpha * (f->K - 1) + f->beta_comm * 2.0 * (f->K - 1) / f->K / cf;
        c->t_compute = c->t_iter - c->t_comm;
        c->g_local = G2 + S / ((double)f->B / f->K), c->g_global = G2 + S / f->B;
        c->epoch_progress = f->samples / f->job.n_train;
    }
    return SCV_OK;
}
static inline int f_checkpoint(void *ctx, scv_err *err)
{
    (void)err;
    ((fake *)ctx)->checkpoints++;
    return SCV_OK;
}
static inline void f_close(void *ctx) { (void)ctx; }
static inline int f_recover(void *ctx, int index, scv_segment_result *out, char *phase, size_t cap, int *K, int *B,
                     scv_err *err)
{
    (void)index, (void)err;
    fake *f = ctx;
    if (!f->lost.iterations) return SCV_ENOTFOUND;
    *out = f->lost;
    snprintf(phase, cap, "%s", f->lost_phase);
    *K = f->lost_K, *B = f->lost_B;
    memset(&f->lost, 0, sizeof f->lost);
    return SCV_OK;
}

static inline fake new_fake(void)
{
    fake f = {.c0 = 0.002, .c1 = 0.0004, .alpha = 0.004, .b_noise = 100, .need_e0 = 3, .idle_per_segment = 1.0};
    snprintf(f.job.model, sizeof f.job.model, "fake");
    f.job.n_params = 1e5, f.job.act_bytes = 1e3, f.job.input_floats = 784, f.job.n_train = 10000, f.job.threads = 1;
    return f;
}

static inline scv_job_driver driver_of(fake *f)
{
    return (scv_job_driver){.name = "fake", .ctx = f, .open = f_open, .progress = f_progress,
                            .configure = f_configure, .train = f_train, .checkpoint = f_checkpoint,
                            .close = f_close, .recover = f_recover};
}

/* ---- recording events ---- */
/* A note as data, as the observer received it (its strings copied). */
#define REC_NOTES 200
typedef struct rec_note {
    scv_note_code code;
    int n_num, n_str;
    double num[SCV_NOTE_MAX_NUMS];
    char str[SCV_NOTE_MAX_STRS][224];
} rec_note;

typedef struct rec {
    char seq[4096];           /* "warmup:2,32 search:1,32 ..." */
    int switches, plans, retries, decisions;
    char last_decision[512];
    char notes[8192];         /* every note, one per line */
    double last_elapsed;      /* the run's elapsed time never goes back */
    int backwards, remaining_seen;
    int remaining_nonpos;     /* events while training with a time left <= 0 (never) */
    int overdue, overdue_estimated; /* ... past the predicted time; with the curve's re-estimate */
    double overdue_first;     /* the first re-estimate */
    int remaining_nominal, remaining_predicted; /* times left marked nominal (relative) or not */
    rec_note nt[REC_NOTES];   /* every note, decision and retry as data, oldest first */
    int n_nt;
    int uncoded;              /* ... of them without a code (never) */
} rec;

/* The notes of code c whose numbers start with want[0..n) (NAN: any) and, with sub, one of
 * whose strings holds sub: how many. */
static inline int noted_with(const rec *r, scv_note_code c, int n, const double *want, const char *sub)
{
    int k = 0;
    for (int i = 0; i < r->n_nt; i++) {
        const rec_note *x = &r->nt[i];
        int ok = x->code == c && x->n_num >= n;
        for (int j = 0; ok && j < n; j++) ok = isnan(want[j]) || fabs(x->num[j] - want[j]) <= 1e-9 * fabs(want[j]);
        int has = !sub;
        for (int j = 0; ok && !has && j < x->n_str; j++) has = strstr(x->str[j], sub) != NULL;
        k += ok && has;
    }
    return k;
}
static inline int noted(const rec *r, scv_note_code c) { return noted_with(r, c, 0, NULL, NULL); }
#define NOTED_NUMS(r, c, ...) noted_with(r, c, (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), \
                                         (double[]){__VA_ARGS__}, NULL)

static inline void on_event(void *ctx, const scv_run_event *ev)
{
    rec *r = ctx;
    size_t len = strlen(r->seq);
    if (ev->elapsed_s < r->last_elapsed - 1e-9) r->backwards++;
    r->last_elapsed = ev->elapsed_s;
    if (ev->kind == SCV_EV_ITER && isfinite(ev->remaining_s)) r->remaining_seen++;
    if ((ev->kind == SCV_EV_ITER || ev->kind == SCV_EV_EVAL) && ev->state == SCV_STATE_TRAIN) {
        if (isfinite(ev->remaining_s) && ev->remaining_s <= 0) r->remaining_nonpos++;
        if (isfinite(ev->remaining_lo_s) && ev->remaining_lo_s <= 0) r->remaining_nonpos++; /* nor its band */
        if (isfinite(ev->remaining_s)) ev->relative ? r->remaining_nominal++ : r->remaining_predicted++;
        if (ev->overdue && !r->overdue++) r->overdue_first = NAN;
        if (ev->overdue && isfinite(ev->remaining_s) && !r->overdue_estimated++) r->overdue_first = ev->remaining_s;
    }
    if ((ev->kind == SCV_EV_NOTE || ev->kind == SCV_EV_DECISION || ev->kind == SCV_EV_RETRY) && r->n_nt < REC_NOTES) {
        r->uncoded += ev->code <= SCV_NOTE_NONE || ev->code >= SCV_NOTE_COUNT;
        rec_note *x = &r->nt[r->n_nt++];
        x->code = ev->code, x->n_num = ev->n_num, x->n_str = ev->n_str;
        memcpy(x->num, ev->num, sizeof x->num);
        for (int j = 0; j < ev->n_str; j++) snprintf(x->str[j], sizeof x->str[j], "%s", ev->str[j] ? ev->str[j] : "");
    }
    switch (ev->kind) {
    case SCV_EV_SEGMENT_START:
        snprintf(r->seq + len, sizeof r->seq - len, "%s%s:%d,%d", len ? " " : "", ev->phase, ev->workers, ev->batch);
        break;
    case SCV_EV_SWITCH: r->switches++; break;
    case SCV_EV_PLAN: r->plans++; break;
    case SCV_EV_RETRY: r->retries++; break;
    case SCV_EV_NOTE: {
        if (getenv("SCV_TEST_VERBOSE")) printf("# note: %s\n", ev->text);
        size_t nl = strlen(r->notes);
        snprintf(r->notes + nl, sizeof r->notes - nl, "%s\n", ev->text);
        break;
    }
    case SCV_EV_DECISION: {
        r->decisions++;
        snprintf(r->last_decision, sizeof r->last_decision, "%s", ev->text);
        size_t nl = strlen(r->notes); /* decisions go with the notes too */
        snprintf(r->notes + nl, sizeof r->notes - nl, "decision: %s\n", ev->text);
        if (getenv("SCV_TEST_VERBOSE")) printf("# decision: %s\n", ev->text);
        break;
    }
    default: break;
    }
}

static char tmp[256];
static scv_catalog *cat;

static inline scv_run_params params(scv_store *db, const char *job)
{
    scv_run_params p = scv_run_params_default();
    p.job_key = job;
    p.target_accuracy = 0.9;
    p.target_epochs = 3, p.target_batch = 32;
    CHECK_EQ_INT(scv_run_params_set(&p, "workers", "1,2,4", NULL), SCV_OK);
    CHECK_EQ_INT(scv_run_params_set(&p, "batch", "32,64,128", NULL), SCV_OK);
    snprintf(p.vm_type, sizeof p.vm_type, "c5.xlarge");
    p.catalog = cat, p.store = db, p.state_dir = tmp;
    p.policy.search_budget_share = 0; /* the phase sequences below are the policies' own */
    p.curve_corpus = "none"; /* the fake's exact curves against its own truth: calibrated on the
                                store's runs of fakes only (t_calibrated_band: a corpus) */
    return p;
}

static inline scv_store *open_db(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    unlink(path);
    scv_store *db = NULL;
    CHECK_EQ_INT(scv_store_open(path, &db, NULL), SCV_OK);
    return db;
}

/* Where the fake's evaluations, in order, cross a target (accuracy, or the loss with
 * by_loss) under the smoothed rule of window W: its reference samples at batch 32 (NaN:
 * never). */
static inline double fake_rule_crossing(const fake *f, int by_loss, double target, int W)
{
    scv_stoprule r;
    scv_stoprule_spec s = {.window = W};
    if (by_loss) s.target_loss = target;
    else s.target_accuracy = target;
    scv_stoprule_init(&r, &s);
    for (int i = 0; i < f->n_ev; i++)
        if (scv_stoprule_on_evaluation(&r, by_loss ? f->ev_loss[i] : f->ev_acc[i]) == SCV_STOP_TARGET) return f->ev_x[i];
    return NAN;
}
/* A fake whose training loss is 20 x^-0.4 in reference samples (0.3 at x* = 0.015^-2.5 =
 * 36289, 3.6 epochs), and a job with that loss target (0.3) to learn; with relative, warm-up
 * and search evaluate nothing, so the first decision is relative (nominal). */
static inline fake loss_fake(void)
{
    fake f = new_fake();
    f.tau = 10000, f.acc_max = 0.97, f.acc_gap = 0.5, f.target = 0.3, f.by_loss = 1, f.loss_b = 20, f.loss_c = 0.4;
    return f;
}
static inline scv_run_params loss_params(scv_store *db, const char *job, int relative)
{
    scv_run_params p = params(db, job);
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0, p.target_loss = 0.3;
    if (relative) p.policy.search_eval_every_epochs = 100; /* no evaluation before the first plan */
    return p;
}
/* A file's text (malloc'ed; NULL when it cannot be read). */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *b = calloc(1, 1 << 20);
    if (b) b[fread(b, 1, (1 << 20) - 1, f)] = 0;
    fclose(f);
    return b;
}

/* main: the tests of table t in a fresh directory under /tmp, with the catalog loaded */
static inline int loop_test_main(const scv_test *tests, int n, int argc, char **argv, const char *name)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-%s-%ld", name, (long)getpid());
    mkdir(tmp, 0755);
    if (scv_catalog_load("data/vm-catalog.csv", &cat, NULL) != SCV_OK) {
        printf("not ok - data/vm-catalog.csv not found (run from the repository root)\n0 passed, 1 failed\n");
        return 1;
    }
    int rc = scv_test_main(tests, n, argc, argv);
    scv_catalog_free(cat);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", tmp, tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return rc;
}
#define LOOP_TEST_MAIN(table, name)                                                              \
    int main(int argc, char **argv)                                                            \
    {                                                                                          \
        return loop_test_main(table, (int)(sizeof table / sizeof table[0]), argc, argv, name); \
    }
#endif
