/*
 * report.c - a run's report: report.json (everything, for machines), report.md (for
 * people) and tradeoff.svg (the plan's cost-time figure with the actual outcome). Every
 * figure comes from the scv_run_result the loop filled, formatted by the same functions
 * the command line prints with, so the console and the report agree. Files are written
 * atomically; an error names the file.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "../model/model.h"
#include "../io/io.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../io/json_out.h"
#include "../model/stoprule.h"
#include "report.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* JSON has no NaN: null */
static void json_num(FILE *f, const char *key, double v, int comma)
{
    scv_json_num(f, key, "%.6g", v, comma); /* the report's numbers to 6 digits */
}

/* How a run that reached its target reached it: plainly (the last accuracy at the target,
 * or a loss target), or, the last accuracy under the target, by the confirmation's
 * tolerance (evaluations on a subset, the whole set within tol) or by the window's mean.
 * The one rule the headline and report.md say. */
typedef enum { REACHED_NOT, REACHED_PLAIN, REACHED_TOL, REACHED_WINDOW } reached_how;
static reached_how how_reached_of(int reached, double accuracy, double target_accuracy, double target_loss, double tol,
                                  int subset)
{
    if (!reached) return REACHED_NOT;
    if (target_loss > 0 || !isfinite(accuracy) || !(accuracy < target_accuracy)) return REACHED_PLAIN;
    return subset && target_accuracy - accuracy <= tol + 1e-9 ? REACHED_TOL : REACHED_WINDOW;
}
static reached_how how_reached(const scv_run_params *p, const scv_run_result *r, double tol, int subset)
{
    return how_reached_of(r->reached, r->accuracy, p->target_accuracy, p->target_loss, tol, subset);
}

static const char *const REACHED_NAMES[] = {NULL, "target", "tolerance", "window"};

/* The sentence of a run reached with its last accuracy under the target ("" otherwise). */
static void reached_note(reached_how how, double accuracy, double target, double tol, char *buf, size_t cap)
{
    buf[0] = 0;
    if (how == REACHED_TOL)
        snprintf(buf, cap, "reached within the confirmation tolerance %g of %g: the whole test set's accuracy %.4f, its "
                 "subset evaluations' window at the target", tol, target, accuracy);
    else if (how == REACHED_WINDOW)
        snprintf(buf, cap, "reached by the mean of the evaluation window (>= %g): the last accuracy %.4f is under it",
                 target, accuracy);
}

const char *scv_run_reached(const scv_run_params *p, const scv_run_result *r, char *note, size_t cap)
{
    reached_how how = how_reached(p, r, SCV_TARGET_CONFIRM_TOL, p->policy.eval_subset > 0);
    reached_note(how, r->accuracy, p->target_accuracy, SCV_TARGET_CONFIRM_TOL, note, cap);
    return REACHED_NAMES[how];
}

void scv_run_budget_text(const scv_run_params *p, const scv_run_result *r, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!r->budget_stopped) return;
    char sp[32], cp[32], nx[32], ov[32];
    scv_fmt_usd(r->actual_cost, sp, sizeof sp);
    scv_fmt_usd(p->budget, cp, sizeof cp);
    scv_fmt_usd(r->budget_next_cost, nx, sizeof nx);
    if (r->actual_cost >= p->budget) { /* a segment's actual cost above its prediction took it past */
        scv_fmt_usd(r->actual_cost - p->budget, ov, sizeof ov);
        snprintf(buf, cap, "stopped at the budget's cap: %s spent of the %s cap (%s over it: a segment is priced "
                 "before it trains, the first warm-up not at all, and may cost more than its price), the next segment "
                 "would cost %s", sp, cp, ov, nx);
    } else {
        snprintf(buf, cap, "stopped before the budget's cap: %s spent of the %s cap, the next segment would cost %s",
                 sp, cp, nx);
    }
}

void scv_run_time_text(const scv_run_result *r, char *buf, size_t cap)
{
    char at[32], wt[32], out[32];
    scv_fmt_time(r->actual_time_s, at, sizeof at);
    if (!(r->wall_s > 0) || !isfinite(r->actual_time_s)) {
        snprintf(buf, cap, "%s", at);
        return;
    }
    scv_fmt_time(r->wall_s, wt, sizeof wt);
    if (r->wall_s < r->actual_time_s) { /* a resumed run: its training spans invocations, the wall time is this one's */
        snprintf(buf, cap, "%s training over the whole run, %s wall in this invocation", at, wt);
        return;
    }
    if (r->wall_s - r->actual_time_s < 0.005) {
        snprintf(buf, cap, "%s", at);
        return;
    }
    scv_fmt_time(r->wall_s - r->actual_time_s, out, sizeof out);
    snprintf(buf, cap, "%s training, %s wall (%s start-up and evaluation)", at, wt, out);
}

void scv_run_headline(const scv_run_params *p, const scv_run_result *r, double tol, double window_mean, int subset,
                      char *buf, size_t cap)
{
    const int loss = p->target_loss > 0;
    if (r->budget_stopped) {
        char b[256];
        scv_run_budget_text(p, r, b, sizeof b);
        snprintf(buf, cap, "target NOT reached, %s: test accuracy %.4f", b, r->accuracy);
        return;
    }
    reached_how how = how_reached(p, r, tol, subset);
    if (how == REACHED_TOL || how == REACHED_WINDOW) {
        char win[96] = "";
        if (isfinite(window_mean))
            snprintf(win, sizeof win, ", %s window mean %.4f", subset ? "subset" : "evaluation", window_mean);
        if (how == REACHED_TOL)
            snprintf(buf, cap, "target reached within the confirmation tolerance %g of %g: full test set %.4f%s", tol,
                     p->target_accuracy, r->accuracy, win);
        else
            snprintf(buf, cap, "target reached by the mean of the evaluation window (>= %g): last test accuracy %.4f%s",
                     p->target_accuracy, r->accuracy, win);
        return;
    }
    char tgt[64] = "";
    if (loss) snprintf(tgt, sizeof tgt, "training loss %.4f, ", p->target_loss);
    snprintf(buf, cap, "%s: %stest accuracy %.4f", r->reached ? "target reached" : "target NOT reached", tgt,
             r->accuracy);
}

static const char *vm_name(const scv_run_params *p)
{
    return p->vm_type;
}

/* The option a point trains with ("dense", "topk:100"). */
static const char *point_comm(const scv_plan_point *pt, char *buf, size_t cap)
{
    scv_plan_comm_format(&pt->comm_opt, buf, cap);
    return buf;
}

/* The plan's dense choice beside its choice, for runs planned with communication options. */
static const scv_plan_point *dense_choice(const scv_plan_result *dec)
{
    return dec && dec->chosen_dense >= 0 && (size_t)dec->chosen_dense < dec->n_points ? &dec->points[dec->chosen_dense]
                                                                                      : NULL;
}

/* The communication options planned, the choice's and the dense choice beside it. */
static void comm_json(FILE *f, const scv_run_params *p, const scv_plan_point *ch, const scv_plan_result *dec)
{
    char o[64];
    fprintf(f, ",\"communication\":{\"chosen\":");
    if (ch) fprintf(f, "\"%s\"", point_comm(ch, o, sizeof o));
    else fputs("null", f);
    fprintf(f, ",\"options\":[");
    for (size_t i = 0; i < p->n_comms; i++) {
        scv_plan_comm_format(&p->comms[i], o, sizeof o);
        fprintf(f, "%s\"%s\"", i ? "," : "", o);
    }
    fputc(']', f);
    json_num(f, "iterations_assumed", p->compress_iterations > 0 ? p->compress_iterations : 1, 1);
    fprintf(f, ",\"chosen_dense\":");
    const scv_plan_point *cd = dense_choice(dec);
    if (cd) scv_plan_point_json(f, p->catalog, cd);
    else fputs("null", f);
    fprintf(f, ",\"note\":");
    scv_json_str(f, dec ? dec->comm_note : "");
    fputc('}', f);
}

/* The stragglers found, each with what was done about it. */
static void stragglers_json(FILE *f, const scv_run_result *r)
{
    fputs(",\"stragglers\":[", f);
    for (size_t i = 0; i < r->n_stragglers; i++) {
        const scv_straggler_event *e = &r->stragglers[i];
        fprintf(f, "%s{\"iteration\":%lld,\"worker\":%d,\"host\":", i ? "," : "", (long long)e->iteration, e->worker);
        scv_json_str(f, e->host);
        json_num(f, "ratio", e->ratio, 1);
        fprintf(f, ",\"replaced\":%s,\"dropped\":%s,\"by_host\":", e->replaced ? "true" : "false",
                e->dropped ? "true" : "false");
        scv_json_str(f, e->by_host);
        json_num(f, "idle_s", e->idle_s, 1);
        fputs(",\"note\":", f);
        scv_json_str(f, e->note);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The preemptions survived in place (notices shrunk at, restores grown back at). */
static void preemptions_json(FILE *f, const scv_run_result *r)
{
    fputs(",\"preemptions\":[", f);
    for (size_t i = 0; i < r->n_preemptions; i++) {
        const scv_survive_event *e = &r->preemptions[i];
        fprintf(f, "%s{\"iteration\":%lld,\"process\":%d,\"event\":\"%s\",\"workers\":%d", i ? "," : "",
                (long long)e->iteration, e->process, e->restored ? "restored" : "notice", e->workers);
        json_num(f, "idle_s", e->idle_s, 1);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The fitted performance and statistical models. */
static void models_json(FILE *f, const scv_run_result *r)
{
    const scv_perf_model *pf = &r->perf;
    const scv_stat_model *sm = &r->stat;
    fprintf(f, ",\"perf\":{");
    json_num(f, "c0", pf->c0, 0);
    json_num(f, "c1", pf->c1, 1);
    json_num(f, "alpha", pf->alpha, 1);
    json_num(f, "beta", pf->beta, 1);
    json_num(f, "alpha_msg", pf->alpha_msg, 1);
    json_num(f, "mare", pf->mare, 1);
    fprintf(f, "},\"stat\":{\"kind\":\"%s\"", scv_stat_name(sm->kind));
    json_num(f, "b_simple", sm->b_simple, 1);
    json_num(f, "s_min", sm->s_min, 1);
    json_num(f, "gamma_a", sm->gamma_a, 1);
    json_num(f, "gamma_s", sm->gamma_s, 1);
    json_num(f, "theta", sm->theta, 1);
    json_num(f, "target_epochs", sm->target_epochs, 1);
    json_num(f, "target_batch", sm->target_batch, 1);
    fputc('}', f);
}

/* The run's steps (segments), in order, each with the VM type it trained on (a step stored
 * before the type was: the run's). */
static void steps_json(FILE *f, const scv_run_params *p, const scv_run_result *r)
{
    fprintf(f, ",\"steps\":[");
    for (size_t i = 0; i < r->n_steps; i++) {
        const scv_run_step *t = &r->steps[i];
        fprintf(f, "%s{\"phase\":\"%s\",\"workers\":%d,\"batch\":%d,\"iterations\":%lld", i ? "," : "", t->phase,
                t->workers, t->batch, (long long)t->iterations);
        fputs(",\"vm\":", f);
        scv_json_str(f, t->vm[0] ? t->vm : vm_name(p));
        json_num(f, "t_iter", t->t_iter, 1);
        json_num(f, "seconds", t->iterations ? t->last_end - t->first_start : 0, 1);
        json_num(f, "idle_before_s", t->idle_before, 1);
        json_num(f, "test_accuracy", t->accuracy, 1);
        fprintf(f, ",\"reached\":%s}", t->reached ? "true" : "false");
    }
    fputc(']', f);
}

/* The last step that trained (NULL: none): the configuration the run really ended at. */
static const scv_run_step *last_trained(const scv_run_result *r)
{
    for (size_t i = r->n_steps; i > 0; i--)
        if (r->steps[i - 1].iterations > 0) return &r->steps[i - 1];
    return NULL;
}

/* A point's "how" in a run's report (issue 26 item 7): "measured" only where the run trained
 * at its K and B on the run's VM type; "predicted" where the models carried it from the
 * configurations measured (same type); else how the type was extrapolated. */
static const char *point_how(const scv_catalog *cat, const scv_run_params *p, const scv_run_result *r,
                             const scv_plan_point *pt)
{
    if (pt->extrap != SCV_EXTRAP_NONE) return scv_extrap_desc(pt->extrap);
    int same_vm = pt->mix_types.n <= 0 && (!vm_name(p) || !cat || !strcmp(cat->vms[pt->vm].name, vm_name(p)));
    for (size_t i = 0; same_vm && i < r->n_steps; i++)
        if (r->steps[i].iterations > 0 && r->steps[i].workers == pt->workers && r->steps[i].batch == pt->batch)
            return "measured";
    return "predicted";
}

/* ,"key":[points]: a plan's points (all, or its Pareto front's); an empty array without a plan. */
static void points_json(FILE *f, const scv_run_params *p, const scv_run_result *r, const char *key,
                        const scv_plan_result *pl, int front)
{
    fprintf(f, ",\"%s\":[", key);
    size_t n = !pl ? 0 : front ? pl->n_front : pl->n_points;
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', f);
        const scv_plan_point *pt = &pl->points[front ? pl->front[i] : i];
        scv_plan_point_json_how(f, p->catalog, pt, point_how(p->catalog, p, r, pt));
    }
    fputc(']', f);
}

char *scv_run_report_json(const scv_run_params *p, const scv_run_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    const scv_plan_result *res = r->plan, *dec = r->decision ? r->decision : res;
    const scv_plan_point *ch = dec ? &dec->points[dec->chosen] : NULL;
    fprintf(f, "{\"run\":%lld,\"job\":", r->run_id);
    scv_json_str(f, p->job_key);
    fprintf(f, ",\"vm\":");
    scv_json_str(f, vm_name(p));
    fprintf(f, ",\"state\":\"%s\",\"reached\":%s", scv_run_state_name(r->state), r->reached ? "true" : "false");
    char rnote[256];
    const char *rhow = scv_run_reached(p, r, rnote, sizeof rnote);
    fputs(",\"reached_how\":", f);
    if (rhow) scv_json_str(f, rhow);
    else fputs("null", f);
    fputs(",\"reached_note\":", f);
    if (rnote[0]) scv_json_str(f, rnote);
    else fputs("null", f);
    fprintf(f, ",\"target_metric\":\"%s\"", p->target_loss > 0 ? "train_loss" : "test_accuracy");
    json_num(f, "target_accuracy", p->target_accuracy > 0 ? p->target_accuracy : NAN, 1);
    json_num(f, "target_loss", p->target_loss > 0 ? p->target_loss : NAN, 1);
    json_num(f, "test_accuracy", r->accuracy, 1);
    json_num(f, "epochs", r->epochs, 1);
    fprintf(f, ",\"objective\":\"%s\",\"search\":\"%s\",\"pricing\":\"%s\"", scv_objective_name(p->objective),
            scv_search_name(p->search), scv_pricing_name(p->pricing));
    fprintf(f, ",\"chosen\":");
    if (ch) scv_plan_point_json_how(f, p->catalog, ch, point_how(p->catalog, p, r, ch));
    else fputs("null", f);
    /* where the run really ended (its last step that trained), and the trained model there */
    const scv_run_step *end = last_trained(r);
    fprintf(f, ",\"final\":{\"workers\":%d,\"batch\":%d", end ? end->workers : r->workers,
            end ? end->batch : r->batch);
    if (p->n_comms && r->comm >= 0 && (size_t)r->comm < p->n_comms) {
        char o[64];
        scv_plan_comm_format(&p->comms[r->comm], o, sizeof o);
        fprintf(f, ",\"comm\":\"%s\"", o);
    }
    fputc('}', f);
    if (r->run_dir[0] && end) { /* every driver's trainer checkpoints in RUN_DIR/ckpt (the exec
                                   trainer's SCV_CHECKPOINT_DIR) */
        fprintf(f, ",\"model\":{\"checkpoint_dir\":");
        char ck[1100]; /* fits: run_dir is 1024 bytes */
        if (scv_run_file_path(r->run_dir, SCV_RUN_CKPT_DIR, ck, sizeof ck, NULL)) ck[0] = 0;
        scv_json_str(f, ck);
        fprintf(f, ",\"workers\":%d,\"batch\":%d", end->workers, end->batch);
        json_num(f, "epochs", r->epochs, 1);
        json_num(f, "test_accuracy", r->accuracy, 1);
        fputc('}', f);
    }
    if (p->n_comms) comm_json(f, p, ch, dec);
    fprintf(f, ",\"why\":");
    scv_json_str(f, r->why);
    fprintf(f, ",\"relative_prediction\":%s,\"decision_relative\":%s", r->relative ? "true" : "false",
            r->decision_relative ? "true" : "false");
    /* predicted_* below are nominal, not predictions, when the decision's target was unknown:
     * nominal_epochs were assumed at nominal_batch */
    fprintf(f, ",\"nominal\":%s", r->decision_relative ? "true" : "false");
    json_num(f, "nominal_epochs", r->decision_relative ? p->policy.nominal_epochs : NAN, 1);
    fprintf(f, ",\"nominal_batch\":");
    if (r->decision_relative) fprintf(f, "%d", p->batches[0]);
    else fputs("null", f);
    json_num(f, "predicted_time_s", r->predicted_time_s, 1);
    json_num(f, "predicted_cost", r->predicted_cost, 1);
    json_num(f, "predicted_band", r->predicted_band, 1);
    json_num(f, "predicted_time_lo_s", r->predicted_lo_s, 1);
    json_num(f, "predicted_time_hi_s", r->predicted_hi_s, 1);
    fprintf(f, ",\"target\":{\"source\":\"%s\"", scv_target_source_name(r->target_source));
    json_num(f, "epochs", r->target_epochs, 1);
    json_num(f, "epochs_lo", r->target_epochs_lo, 1);
    json_num(f, "epochs_hi", r->target_epochs_hi, 1);
    json_num(f, "band_coverage", isfinite(r->target_epochs_lo) ? p->policy.band_coverage : NAN, 1);
    json_num(f, "p_reach", r->target_p_reach, 1); /* within max_epochs */
    json_num(f, "nearest", r->target_nearest, 1);
    fprintf(f, ",\"batch\":%d,\"nominal\":%s,\"note\":", r->target_batch,
            r->target_source == SCV_TARGET_NOMINAL ? "true" : "false");
    scv_json_str(f, r->target_note);
    int rule = r->carry_learnt >= 2; /* its quantiles are per ln(B / b0): stated at 4x the batch */
    fprintf(f, ",\"carry\":{\"method\":\"%s\"",
            r->carry_learnt == 1             ? "learnt"
            : r->carry_learnt == 3           ? "run"
            : r->carry_learnt == 4           ? "adascale"
            : r->carry_learnt == 5           ? "floor"
            : isfinite(r->carry_noise_scale) ? "measured"
            : rule                           ? "rule"
                                             : "none");
    if (rule)
        fprintf(f, ",\"band_from\":\"%s\"",
                r->carry_learnt == 3   ? "run"
                : r->carry_learnt == 4 ? "adascale"
                : r->carry_learnt == 5 ? "floor"
                                       : "rule");
    json_num(f, "noise_scale", r->carry_noise_scale, 1);
    json_num(f, "exponent", r->carry_gamma, 1);
    double at = rule ? log(4) : 1; /* ln(B / b0) of the stated band: 4x the batch */
    json_num(f, rule ? "band_lo_4x" : "band_lo", exp(r->carry_q_lo * at), 1);
    json_num(f, rule ? "band_hi_4x" : "band_hi", exp(r->carry_q_hi * at), 1);
    json_num(f, rule ? "median_error_4x" : "median_error", exp(r->carry_err * at) - 1, 1);
    fputs("}}", f);
    json_num(f, "price_hr", r->price_hr, 1);
    json_num(f, "actual_time_s", r->actual_time_s, 1);
    json_num(f, "wall_s", r->wall_s > 0 ? r->wall_s : NAN, 1); /* this invocation's, start-up included */
    fprintf(f, ",\"regenerated\":%s", r->from_store ? "true" : "false");
    json_num(f, "actual_cost", r->actual_cost, 1);
    json_num(f, "budget", p->budget > 0 ? p->budget : NAN, 1);
    fprintf(f, ",\"budget_stopped\":%s", r->budget_stopped ? "true" : "false");
    json_num(f, "budget_next_cost", r->budget_stopped ? r->budget_next_cost : NAN, 1);
    json_num(f, "search_time_s", r->search_time_s, 1);
    json_num(f, "search_cost", r->search_cost, 1);
    json_num(f, "search_budget_s", r->search_budget_s, 1);
    json_num(f, "overhead_s", r->overhead_s, 1);
    fprintf(f, ",\"search_profiled\":%d,\"search_skipped_budget\":%d,\"search_skipped_ruled_out\":%d",
            r->n_profiled, r->n_skipped_budget, r->n_skipped_ruled_out);
    fprintf(f, ",\"switches\":%d,\"relaunches\":%d,\"universal\":%s,\"prior_runs\":%d", r->switches,
            r->relaunches, r->universal ? "true" : "false", r->n_prior_runs);
    json_num(f, "switch_idle_median_s", r->idle_median_s, 1);
    json_num(f, "switch_idle_worst_s", r->idle_worst_s, 1);
    if (r->n_shares > 0) {
        fprintf(f, ",\"dynamic_batching\":{\"adjustments\":%d,\"shares\":[", r->rebalances);
        for (int k = 0; k < r->n_shares; k++) fprintf(f, "%s%.5f", k ? "," : "", r->shares[k]);
        fputs("]}", f);
    }
    stragglers_json(f, r);
    preemptions_json(f, r);
    if (res) models_json(f, r);
    steps_json(f, p, r);
    points_json(f, p, r, "front", res, 1);
    points_json(f, p, r, "points", res, 0);
    /* what was predicted when the decision was made, before any outcome was known */
    points_json(f, p, r, "decision_points", r->decision, 0);
    /* the first plan with absolute times (the decision's, or a later one once the learning
     * curve predicted the target), made before the outcome was known */
    points_json(f, p, r, "absolute_points", r->first_absolute, 0);
    json_num(f, "absolute_at_s", r->first_absolute ? r->absolute_at_s : NAN, 1);
    json_num(f, "absolute_at_epochs", r->first_absolute ? r->absolute_at_epochs : NAN, 1);
    json_num(f, "absolute_time_s", r->first_absolute ? r->absolute_time_s : NAN, 1);
    fprintf(f, ",\"forecasts\":[");
    for (int i = 0; i < r->n_forecasts; i++) {
        const struct scv_run_forecast *x = &r->forecasts[i];
        fprintf(f, "%s{\"workers\":%d,\"batch\":%d", i ? "," : "", x->workers, x->batch);
        json_num(f, "at_s", x->at_s, 1);
        json_num(f, "at_epochs", x->at_epochs, 1);
        json_num(f, "remaining_s", x->remaining_s, 1);
        json_num(f, "remaining_lo_s", x->remaining_lo_s, 1);
        json_num(f, "remaining_hi_s", x->remaining_hi_s, 1);
        json_num(f, "epochs", x->epochs, 1);
        json_num(f, "epochs_lo", x->epochs_lo, 1);
        json_num(f, "epochs_hi", x->epochs_hi, 1);
        json_num(f, "p_reach", x->p_reach, 1);
        fputc('}', f);
    }
    fprintf(f, "]}");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* report.md's choice: the decision, its communication option, what was predicted (or
 * assumed, when nominal) at the decision, the target and where the run finished. */
static void md_choice(FILE *f, const scv_run_params *p, const scv_run_result *r, const char *pt, const char *pc)
{
    const scv_plan_result *res = r->plan;
    if (res) {
        const scv_plan_result *dec = r->decision ? r->decision : res;
        const scv_plan_point *ch = &dec->points[dec->chosen];
        fprintf(f, "K = %d, B = %d: %s.\n\n", ch->workers, ch->batch, r->why);
        if (p->n_comms) { /* the option trained with, and the dense choice beside it */
            char o[64], dt[32], dc[32];
            const scv_plan_point *cd = dense_choice(dec);
            fprintf(f, "Communication: **%s**", point_comm(ch, o, sizeof o));
            if (ch->comm_opt.kind == SCV_PLAN_TOPK)
                fprintf(f, " over %s (training segments; warm-up and search ran dense)",
                        scv_sparse_name(ch->comm_coll));
            if (cd) {
                scv_fmt_time(cd->time_s, dt, sizeof dt);
                scv_fmt_usd(cd->cost, dc, sizeof dc);
                fprintf(f, "; the dense choice beside it: K = %d, B = %d, %s, %s", cd->workers, cd->batch, dt, dc);
            } else {
                fprintf(f, "; no dense configuration meets the bounds");
            }
            if (dec->comm_note[0]) fprintf(f, " (%s)", dec->comm_note);
            fprintf(f, ".\n\n");
        }
        if (r->decision_relative) /* not a prediction: say what it is */
            fprintf(f, "Nominal at the decision (%.3g epochs at B=%d assumed: the target's epochs were unknown; not "
                       "a prediction), from the start of the run: %s, %s (iteration time +-%.1f%%",
                    p->policy.nominal_epochs, p->batches[0], pt, pc, 100 * r->predicted_band);
        else
            fprintf(f, "Predicted at the decision, from the start of the run: %s, %s (iteration time +-%.1f%%", pt,
                    pc, 100 * r->predicted_band);
        if (isfinite(r->predicted_lo_s)) {
            char lo[32], hi[64] = "never (its top does not reach the target)";
            scv_fmt_time(r->predicted_lo_s, lo, sizeof lo);
            if (isfinite(r->predicted_hi_s)) scv_fmt_time(r->predicted_hi_s, hi, sizeof hi);
            fprintf(f, "; %.0f%% band %s to %s", 100 * p->policy.band_coverage, lo, hi);
        }
        fprintf(f, ").\n\n");
        if (r->decision_relative && isfinite(r->absolute_time_s)) {
            char ft[32], fa[32];
            scv_fmt_time(r->absolute_time_s, ft, sizeof ft);
            scv_fmt_time(r->absolute_at_s, fa, sizeof fa);
            fprintf(f, "First absolute prediction, once the learning curve predicted the target (after %.2f epochs, "
                       "%s into the run): %s to the target from the start.\n\n", r->absolute_at_epochs, fa, ft);
        }
        fprintf(f, "Target (the latest plan): %s.\n\n", r->target_note);
    } else {
        fprintf(f, "%s.\n\n", r->why[0] ? r->why : "no plan was made");
    }
    /* where the run really ended (its last step that trained) and the model trained there */
    const scv_run_step *end = last_trained(r);
    const scv_plan_point *ch = res ? &(r->decision ? r->decision : res)->points[(r->decision ? r->decision : res)->chosen]
                                   : NULL;
    if (end && ch && (end->workers != ch->workers || end->batch != ch->batch))
        fprintf(f, "Finished at K = %d, B = %d (its last step that trained, %s), not at the choice.\n\n", end->workers,
                end->batch, end->phase);
    if (end && r->run_dir[0])
        fprintf(f, "Trained model: the checkpoint in `%s/" SCV_RUN_CKPT_DIR "` (K = %d, B = %d).\n\n", r->run_dir,
                end->workers, end->batch);
}

/* report.md's steps table, the fitted models and the latest plan's front. */
static void md_steps_models(FILE *f, const scv_run_params *p, const scv_run_result *r)
{
    const scv_plan_result *res = r->plan;
    fprintf(f, "## Steps\n\n| # | phase | K | B | iterations | ms/iteration | seconds | idle before (s) | test acc | VM |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->n_steps; i++) {
        const scv_run_step *t = &r->steps[i];
        fprintf(f, "| %zu | %s | %d | %d | %lld | ", i + 1, t->phase, t->workers, t->batch, (long long)t->iterations);
        if (isfinite(t->t_iter)) fprintf(f, "%.2f", 1e3 * t->t_iter);
        else fputs("-", f);
        fprintf(f, " | %.2f | ", t->iterations ? t->last_end - t->first_start : 0);
        if (isfinite(t->idle_before)) fprintf(f, "%.2f", t->idle_before);
        else fputs("-", f);
        fputs(" | ", f);
        if (isfinite(t->accuracy)) fprintf(f, "%.4f%s", t->accuracy, t->reached ? " (target)" : "");
        else fputs("-", f);
        fprintf(f, " | %s |\n", t->vm[0] ? t->vm : vm_name(p));
    }
    if (res) {
        const scv_perf_model *pf = &r->perf;
        fprintf(f, "\n## Models\n\nParallel: t_iter = %.4g ms + %.4g ms x b + ring(alpha %.4g ms, beta %.4g ns/byte), "
                   "fit error %.1f%% over %d configurations. Statistical: %s.\n\n",
                1e3 * pf->c0, 1e3 * pf->c1, 1e3 * pf->alpha, 1e9 * pf->beta, 100 * pf->mare, pf->n_points,
                r->stat.note);
        if (r->relative) /* the latest plan's times are nominal too */
            fprintf(f, "## Trade-off (the latest plan; nominal: %.3g epochs at B=%d assumed, the target's epochs "
                       "unknown)\n\n![cost against time](tradeoff.svg)\n\n"
                       "| vm | K | B | nominal time (%.3g epochs assumed) | nominal cost | band | |\n"
                       "|---|---|---|---|---|---|---|\n", r->target_epochs, r->target_batch, r->target_epochs);
        else
            fprintf(f, "## Trade-off (the latest plan)\n\n![cost against time](tradeoff.svg)\n\n"
                       "| vm | K | B | predicted time | predicted cost | band | |\n|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < res->n_front; i++) {
            const scv_plan_point *q = &res->points[res->front[i]];
            char t[32], c[32], band[80];
            scv_fmt_time(q->time_s, t, sizeof t);
            scv_fmt_usd(q->cost, c, sizeof c);
            scv_plan_point_band(q, band, sizeof band);
            fprintf(f, "| %s | %d | %d | %s | %s | %s | %s%s |\n", p->catalog->vms[q->vm].name, q->workers, q->batch, t,
                    c, band, (long)res->front[i] == res->chosen ? "chosen" : "", q->extrapolated ? " extrapolated" : "");
        }
    }
}

static char *report_md(const scv_run_params *p, const scv_run_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    char pt[32], pc[32], at[32], ac[32], st[32], sc[32];
    scv_fmt_time(r->predicted_time_s, pt, sizeof pt);
    scv_fmt_usd(r->predicted_cost, pc, sizeof pc);
    scv_fmt_time(r->actual_time_s, at, sizeof at);
    scv_fmt_usd(r->actual_cost, ac, sizeof ac);
    scv_fmt_time(r->search_time_s, st, sizeof st);
    scv_fmt_usd(r->search_cost, sc, sizeof sc);
    fprintf(f, "# Scavenger run %lld\n\nJob `%s` on %s, target %s %.4f: **%s**", r->run_id, p->job_key,
            vm_name(p), p->target_loss > 0 ? "training loss" : "test accuracy",
            p->target_loss > 0 ? p->target_loss : p->target_accuracy,
            r->budget_stopped ? "stopped by its budget, target not reached"
            : r->state != SCV_STATE_DONE ? scv_run_state_name(r->state)
                                       : (const char *[]){"not reached", "reached",
                                                          "reached within the confirmation tolerance "
                                                          SCV_TARGET_CONFIRM_TOL_TEXT " of the whole test set",
                                                          "reached by the mean of the evaluation window"}
                                             [how_reached(p, r, SCV_TARGET_CONFIRM_TOL, p->policy.eval_subset > 0)]);
    if (isfinite(r->accuracy)) fprintf(f, " (%.4f after %.2f epochs)", r->accuracy, r->epochs);
    fprintf(f, ".\n\n## Choice\n\n");
    md_choice(f, p, r, pt, pc);
    char tt[160];
    scv_run_time_text(r, tt, sizeof tt);
    fprintf(f, "Actual, the whole run (search and idle included): %s, %s%s.\n\n", tt, ac,
            r->wall_s > 0 ? "; the wall time is this invocation's, and only the training is priced" : "");
    if (p->budget > 0) {
        char b[256], cp[32];
        scv_run_budget_text(p, r, b, sizeof b);
        scv_fmt_usd(p->budget, cp, sizeof cp);
        if (b[0])
            fprintf(f, "Budget: %s; the job is checkpointed: `scavenger run --resume %lld --budget USD` (or POST "
                       "/api/runs/%lld/resume with {\"budget\": USD}) goes on with a larger one.\n\n", b, r->run_id,
                    r->run_id);
        else
            fprintf(f, "Budget: %s spent of the %s cap.\n\n", ac, cp);
    }
    if (r->from_store)
        fprintf(f, "Regenerated from the run store (`scavenger runs report %lld`): the forecasts along the run, the "
                   "target's carry across batches and the search's accounting were not stored and are left out.\n\n",
                r->run_id);
    fprintf(f, "Search: %s and %s in warm-up and search steps (all of it training at the same data position)", st, sc);
    if (isfinite(r->search_budget_s)) {
        char bt[32];
        scv_fmt_time(r->search_budget_s, bt, sizeof bt);
        fprintf(f, "; budget %s (%.0f%% of the predicted job time)", bt, 100 * p->policy.search_budget_share);
    } else {
        fprintf(f, "; no budget (%s)", p->policy.search_budget_share > 0 ? "the job's length was not known yet"
                                                                         : "none was set");
    }
    fprintf(f, ". It profiled %d configuration(s), skipped %d over the budget and %d predicted too slow.\n\n",
            r->n_profiled, r->n_skipped_budget, r->n_skipped_ruled_out);
    if (isfinite(r->overhead_s) && r->actual_time_s > 0)
        fprintf(f, "Overhead of searching and switching: %.1f s (%.1f%% of the run): the warm-up and search "
                   "steps less what their samples would have taken at the final configuration, plus every idle "
                   "between steps.\n\n", r->overhead_s, 100 * r->overhead_s / r->actual_time_s);
    fprintf(f, "Switches (configuration changes): %d", r->switches);
    if (r->switches && isfinite(r->idle_median_s))
        fprintf(f, ", idle median %.2f s, worst %.2f s", r->idle_median_s, r->idle_worst_s);
    fprintf(f, "; %d relaunches in all.\n\n", r->relaunches);
    if (r->n_shares > 0) {
        fprintf(f, "Dynamic batching: %d adjustment%s of the workers' shares; the last segment ended with", r->rebalances,
                r->rebalances == 1 ? "" : "s");
        for (int k = 0; k < r->n_shares; k++) fprintf(f, "%s%.3f", k ? ", " : " ", r->shares[k]);
        fputs(".\n\n", f);
    }
    if (r->n_stragglers) {
        if (r->n_shares > 0)
            fputs("Stragglers (workers whose balanced share of B stayed under the controller's floor):\n\n", f);
        else
            fprintf(f, "Stragglers (smoothed throughput under %.2f of the median worker's for %.1f s):\n\n",
                    p->policy.straggler.fraction, p->policy.straggler.window_s);
        for (size_t i = 0; i < r->n_stragglers; i++) {
            const scv_straggler_event *e = &r->stragglers[i];
            fprintf(f, "- iteration %lld: worker %d%s%s at %.2f of the median: %s", (long long)e->iteration, e->worker,
                    e->host[0] ? " on " : "", e->host, e->ratio, e->note);
            if (e->replaced)
                fprintf(f, " by %s, %.2f s idle", e->by_host[0] ? e->by_host : "a spare process", e->idle_s);
            else if (e->dropped)
                fprintf(f, "; dropped, training went on at K-1, %.2f s idle", e->idle_s);
            fputs(".\n", f);
        }
        fputc('\n', f);
    }
    if (r->n_preemptions) {
        fputs("Preemptions survived in place (docs/CLUSTER.md \"Surviving a preemption\"):\n\n", f);
        for (size_t i = 0; i < r->n_preemptions; i++) {
            const scv_survive_event *e = &r->preemptions[i];
            fprintf(f, "- iteration %lld: process %d %s; K=%d after it, %.3f s idle.\n", (long long)e->iteration,
                    e->process, e->restored ? "back (its VM restored)" : "had a notice", e->workers, e->idle_s);
        }
        fputc('\n', f);
    }
    md_steps_models(f, p, r);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int write_text(const char *dir, const char *name, char *text, scv_err *err)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!text) return scv_err_set(err, SCV_ENOMEM, "%s: out of memory", path);
    scv_iov part = {text, strlen(text)};
    int rc = scv_write_atomic(path, &part, 1, err);
    free(text);
    return rc;
}

/* mkdir -p: dir and the folders above it that are missing (0755). */
static int make_dirs(const char *dir, scv_err *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return scv_err_set(err, SCV_EINVAL, "%.200s...: the report directory's path is too long", dir);
    for (char *c = path + 1;; c++) {
        if (*c && *c != '/') continue;
        char was = *c;
        *c = 0;
        struct stat st;
        if (stat(path, &st) != 0 && mkdir(path, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            struct stat ls;
            if (e == ENOENT && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) /* a link to nowhere */
                return scv_err_set(err, SCV_EIO, "%s: a symbolic link to a path that does not exist (the report "
                                   "directory %s is under it)", path, dir);
            return scv_err_set(err, SCV_EIO, "%s: cannot create the report directory%s%s: %s", path,
                               strcmp(path, dir) ? " " : "", strcmp(path, dir) ? dir : "", strerror(e));
        }
        *c = was;
        if (!was) return SCV_OK;
    }
}

int scv_run_report_dir_ready(const char *dir, scv_err *err)
{
    if (!dir || !dir[0]) return scv_err_set(err, SCV_EINVAL, "the report directory is empty");
    int rc = make_dirs(dir, err);
    if (rc) return rc;
    struct stat st;
    if (stat(dir, &st) != 0) {
        struct stat ls;
        if (lstat(dir, &ls) == 0 && S_ISLNK(ls.st_mode))
            return scv_err_set(err, SCV_EIO, "%s: a symbolic link to a path that does not exist", dir);
        return scv_err_set(err, SCV_EIO, "%s: cannot read the report directory: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return scv_err_set(err, SCV_EIO, "%s: not a directory (the report's files go in one)", dir);
    /* written to as the report will be (a file created, written, synced and removed): a
     * read-only mount or a folder without write permission is found now */
    char probe[4200];
    if (snprintf(probe, sizeof probe, "%s/.scv-report-check.%ld", dir, (long)getpid()) >= (int)sizeof probe)
        return scv_err_set(err, SCV_EINVAL, "%.200s...: the report directory's path is too long", dir);
    int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot write the report there: %s", dir, strerror(errno));
    int bad = write(fd, "\n", 1) != 1 || fsync(fd) != 0, e = errno;
    if (close(fd) != 0 && !bad) bad = 1, e = errno;
    unlink(probe);
    if (bad) return scv_err_set(err, SCV_EIO, "%s: cannot write the report there: %s", dir, strerror(e));
    return SCV_OK;
}

int scv_run_report_write(const scv_run_params *p, const scv_run_result *r, const char *dir, scv_err *err)
{
    int rc0 = make_dirs(dir, err);
    if (rc0) return rc0;
    char *json = scv_run_report_json(p, r);
    if (json) {
        size_t n = strlen(json);
        char *j2 = realloc(json, n + 2);
        if (j2) json = j2, json[n] = '\n', json[n + 1] = 0;
    }
    int rc = write_text(dir, "report.json", json, err);
    if (!rc) rc = write_text(dir, "report.md", report_md(p, r), err);
    if (!rc && r->plan) {
        char path[1400];
        snprintf(path, sizeof path, "%s/tradeoff.svg", dir);
        rc = scv_plan_svg_write_nominal(path, p->catalog, r->plan, r->actual_time_s, r->actual_cost,
                                        r->relative ? r->target_epochs : 0, r->target_batch, err);
    }
    return rc;
}

/* A job setting's value as a number (a job file may give it as a string); NaN when absent. */
static double job_num(const cJSON *job, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(job, name);
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsString(v)) {
        char *e = NULL;
        double x = strtod(v->valuestring, &e);
        if (e != v->valuestring && !*e) return x;
    }
    return NAN;
}

/* How a stored run reached its target (NULL: not reached, or its job unknown) and the note
 * of one reached under it, from its job (the target, the evaluation subset: the policy's
 * default when the job sets none) and its outcome. */
static const char *row_reached(const scv_run_summary *r, const cJSON *jo, char *note, size_t cap)
{
    note[0] = 0;
    if (!jo || !r->reached) return NULL;
    double acc = job_num(jo, "target-accuracy"), loss = job_num(jo, "target-loss"), sub = job_num(jo, "eval-subset");
    int subset = isfinite(sub) ? sub > 0 : scv_run_policy_default().eval_subset > 0;
    reached_how how = how_reached_of(1, r->accuracy, acc, loss, SCV_TARGET_CONFIRM_TOL, subset);
    reached_note(how, r->accuracy, acc, SCV_TARGET_CONFIRM_TOL, note, cap);
    return REACHED_NAMES[how];
}

int scv_run_row_reached(scv_store *store, const scv_run_summary *r, char *note, size_t cap)
{
    note[0] = 0;
    char *job = malloc(65536), status[64];
    cJSON *jo = job && scv_store_run_get(store, r->id, job, 65536, status, sizeof status, NULL) == 0 ? cJSON_Parse(job)
                                                                                                    : NULL;
    const char *how = row_reached(r, jo, note, cap);
    cJSON_Delete(jo);
    free(job);
    return !how ? 0 : !strcmp(how, "tolerance") ? 2 : !strcmp(how, "window") ? 3 : 1;
}

int scv_run_row_json(scv_store *store, FILE *f, const scv_run_summary *r, scv_err *err)
{
    char *sum = NULL, *job = malloc(65536), *dec = NULL, status[64];
    size_t len = 0;
    /* the store read first: on its error nothing is written */
    int rc = job ? scv_store_run_get(store, r->id, job, 65536, status, sizeof status, err)
                 : scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (!rc) rc = scv_store_run_rows_json(store, r->id, "decisions", &dec, err);
    FILE *m = rc ? NULL : open_memstream(&sum, &len);
    if (m) {
        scv_run_summary_json(m, r);
        if (fclose(m)) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    } else if (!rc) {
        rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    if (!rc && (!sum || !len || sum[len - 1] != '}')) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (rc) {
        free(sum);
        free(dec);
        free(job);
        return rc;
    }
    cJSON *jo = cJSON_Parse(job), *da = dec ? cJSON_Parse(dec) : NULL;
    double acc = job_num(jo, "target-accuracy"), loss = job_num(jo, "target-loss");
    char note[256];
    const char *how = row_reached(r, jo, note, sizeof note);
    const cJSON *last = cJSON_GetArrayItem(da, cJSON_GetArraySize(da) - 1);
    const cJSON *vm = cJSON_GetObjectItemCaseSensitive(last, "vm");
    if (!cJSON_IsString(vm) || !vm->valuestring[0]) vm = cJSON_GetObjectItemCaseSensitive(jo, "vm-type");
    fprintf(f, "%.*s,\"target_metric\":", (int)(len - 1), sum);
    if (isfinite(loss) && loss > 0) fputs("\"train_loss\"", f);
    else if (isfinite(acc) && acc > 0) fputs("\"test_accuracy\"", f);
    else fputs("null", f);
    json_num(f, "target_accuracy", isfinite(acc) && acc > 0 ? acc : NAN, 1);
    json_num(f, "target_loss", isfinite(loss) && loss > 0 ? loss : NAN, 1);
    fputs(",\"vm\":", f);
    if (cJSON_IsString(vm) && vm->valuestring[0]) scv_json_str(f, vm->valuestring);
    else fputs("null", f);
    fputs(",\"reached_how\":", f); /* how a reached run reached it: the last accuracy may be under the target */
    if (how) scv_json_str(f, how);
    else fputs("null", f);
    fputs(",\"reached_note\":", f);
    if (note[0]) scv_json_str(f, note);
    else fputs("null", f);
    fputc('}', f);
    cJSON_Delete(jo);
    cJSON_Delete(da);
    free(dec);
    free(job);
    free(sum);
    return SCV_OK;
}
