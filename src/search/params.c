/*
 * params.c - the loop's settings: defaults, the policy's thresholds, and setting each one
 * by name from text (the command line, a job file or a service request share this, so a
 * setting means the same everywhere and a bad value is refused with its name).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "search/jobopts.h"
#include "../model/stoprule.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scv_run_policy scv_run_policy_default(void)
{
    return (scv_run_policy){
        .noise_window = 40, .noise_tol = 0.25, .warmup_max_iters = 400, .warmup_min_evals = 5, .budget_warn_share = 0.8,
        .profile_rse = 0.03, .profile_min_iters = 30, .profile_max_iters = 60,
        .drift_tol = 0.15, .switch_idle_factor = 1.5, .switch_remaining_share = 0.05,
        .switch_idle_default_s = 1.0, .max_retries = 2,
        .segment_share = 0.5, .segment_min_iters = 200, .max_segments = 200,
        .eval_every_epochs = 0.25, .checkpoint_every = 100, .nominal_epochs = 10,
        .stat_drift_tol = 0.15, .search_eval_every_epochs = 0.05, .search_eval_share = 0.1, .eval_subset = 2000, .target_window = 3,
        .seed = 1, .search_budget_share = 0.05, .search_rule_out = 2, .band_coverage = 0.8,
        .unknown_segment_epochs = 1, .out_of_reach_p = 0.2, .out_of_reach_by = 0.25, .carry_probe_epochs = 0.5, .scaling_threshold = 0.1, .straggler = scv_straggler_rule_default(),
    };
}

scv_run_params scv_run_params_default(void)
{
    scv_run_params p;
    memset(&p, 0, sizeof p);
    p.max_epochs = 30;
    p.workers[0] = 1, p.workers[1] = 2, p.n_workers = 2;
    p.batches[0] = 64, p.batches[1] = 256, p.n_batches = 2;
    p.search = SCV_SEARCH_PARTIAL;
    p.objective = SCV_OBJ_KNEE;
    p.stat = SCV_STAT_GNS;
    p.topology = SCV_TOPO_RING;
    p.pricing = SCV_PRICE_ONDEMAND;
    p.policy = scv_run_policy_default();
    return p;
}

static const char *const STATES[] = {"warmup", "search", "plan", "train", "replan", "done", "interrupted", "failed"};

static const char *const SOURCES[] = {"nominal", "given", "learnt", "curve", "carried", "carried-curve"};

const char *scv_target_source_name(scv_target_source s)
{
    return (unsigned)s < sizeof SOURCES / sizeof SOURCES[0] ? SOURCES[s] : "?";
}

const char *scv_run_state_name(scv_run_state s)
{
    return (unsigned)s < sizeof STATES / sizeof STATES[0] ? STATES[s] : "?";
}

void scv_job_driver_free(scv_job_driver *d)
{
    if (d && d->destroy) d->destroy(d->ctx);
}

static int set_space(int *dst, size_t *n, const char *name, const char *v, int pow2, long hi, scv_err *err)
{
    int *vals = NULL;
    scv_err e = {0};
    long k = scv_parse_int_set(v, pow2, 1, hi, &vals, &e);
    if (k < 0) return scv_err_set(err, SCV_EINVAL, "%s %s", name, e.msg);
    if (k > SCV_MAX_SPACE) {
        free(vals);
        return scv_err_set(err, SCV_ERANGE, "%s '%s': at most %d values", name, v, SCV_MAX_SPACE);
    }
    for (long i = 1; i < k; i++)
        if (vals[i] <= vals[i - 1]) {
            free(vals);
            return scv_err_set(err, SCV_EINVAL, "%s '%s': values must be distinct and ascending", name, v);
        }
    memcpy(dst, vals, sizeof(int) * (size_t)k);
    *n = (size_t)k;
    free(vals);
    return SCV_OK;
}

static int positive(const char *name, const char *v, double *out, double hi, scv_err *err)
{
    double x;
    if (scv_parse_f64(v, &x) || !(x > 0) || x > hi)
        return scv_err_set(err, SCV_EINVAL, "%s '%s': expected a number in (0, %g]", name, v, hi);
    *out = x;
    return SCV_OK;
}

int scv_run_params_set(scv_run_params *p, const char *name, const char *v, scv_err *err)
{
    scv_err e = {0};
    int rc;
    const scv_option *key = scv_job_option_find(name); /* the loop's settings: jobopts.c's table */
    if (!key || !(key->flags & SCV_OPT_LOOP))
        return scv_err_set(err, SCV_ENOTFOUND, "'%s' is not a setting of the loop", name);
#define CHOICE(key, fn, field)                                                                     \
    if (!strcmp(name, key)) {                                                                      \
        if ((rc = fn(v, &p->field, &e))) return scv_err_set(err, rc, "%s: %s", key, e.msg);       \
        return SCV_OK;                                                                             \
    }
    CHOICE("search", scv_search_from_name, search)
    CHOICE("policy", scv_scaling_from_name, scaling)
    CHOICE("objective", scv_objective_from_name, objective)
    CHOICE("stat", scv_stat_from_name, stat)
    CHOICE("comm", scv_topology_from_name, topology)
    CHOICE("pricing", scv_pricing_from_name, pricing)
#undef CHOICE
    if (!strcmp(name, "target-accuracy")) return positive(name, v, &p->target_accuracy, 1, err);
    if (!strcmp(name, "target-loss")) return positive(name, v, &p->target_loss, 1e6, err);
    if (!strcmp(name, "max-epochs")) return positive(name, v, &p->max_epochs, 1e9, err);
    if (!strcmp(name, "target-epochs")) return positive(name, v, &p->target_epochs, 1e9, err);
    if (!strcmp(name, "budget")) return positive(name, v, &p->budget, 1e12, err);
    if (!strcmp(name, "value-per-hour")) return positive(name, v, &p->value_per_hour, 1e12, err);
    if (!strcmp(name, "eval-subset") || !strcmp(name, "target-window")) {
        int64_t x;
        if (scv_parse_i64(v, &x) || x < (name[0] == 'e' ? 0 : 1) || x > (name[0] == 'e' ? 1000000 : SCV_TARGET_WINDOW_MAX))
            return name[0] == 'e' ? scv_err_set(err, SCV_EINVAL, "%s '%s': expected a number of test samples (0 = all)",
                                                name, v)
                                  : scv_err_set(err, SCV_EINVAL, "%s '%s': expected a window of 1 to %d evaluations",
                                                name, v, SCV_TARGET_WINDOW_MAX);
        if (name[0] == 'e') p->policy.eval_subset = (int)x;
        else p->policy.target_window = (int)x;
        return SCV_OK;
    }
    if (!strcmp(name, "curve-corpus")) {
        if (!*v) return scv_err_set(err, SCV_EINVAL, "curve-corpus: expected a file or none");
        p->curve_corpus = v;
        return SCV_OK;
    }
    if (!strcmp(name, "eval-every-epochs")) return positive(name, v, &p->policy.eval_every_epochs, 1e6, err);
    if (!strcmp(name, "scaling-threshold")) return positive(name, v, &p->policy.scaling_threshold, 10, err);
    if (!strcmp(name, "dynamic-batching")) {
        if (strcmp(v, "on") && strcmp(v, "off"))
            return scv_err_set(err, SCV_EINVAL, "dynamic-batching '%s': expected on or off", v);
        p->policy.dynamic_batching = !strcmp(v, "on");
        return SCV_OK;
    }
    if (!strcmp(name, "straggler-fraction")) {
        double x;
        if (scv_parse_f64(v, &x) || !(x >= 0 && x < 1))
            return scv_err_set(err, SCV_EINVAL, "straggler-fraction '%s': expected a share of the median worker's "
                                                "throughput in [0, 1) (0 = off)", v);
        p->policy.straggler.fraction = x;
        return SCV_OK;
    }
    if (!strcmp(name, "straggler-window")) {
        double x = scv_parse_duration(v);
        if (!(x >= 0) || x > 1e7)
            return scv_err_set(err, SCV_EINVAL, "straggler-window '%s': expected seconds (or 30s, 2m)", v);
        p->policy.straggler.window_s = x;
        return SCV_OK;
    }
    if (!strcmp(name, "search-eval-every-epochs"))
        return positive(name, v, &p->policy.search_eval_every_epochs, 1e6, err);
    if (!strcmp(name, "search-eval-share")) {
        double x;
        if (scv_parse_f64(v, &x) || !(x >= 0) || x >= 1)
            return scv_err_set(err, SCV_EINVAL, "search-eval-share '%s': expected a share of the time in [0, 1) "
                                                "(0 = the period as given)", v);
        p->policy.search_eval_share = x;
        return SCV_OK;
    }
    if (!strcmp(name, "search-budget")) {
        double x;
        if (scv_parse_f64(v, &x) || x < 0 || x > 1)
            return scv_err_set(err, SCV_EINVAL, "search-budget '%s': expected a share of the job time in [0, 1] "
                                                "(0 = no budget)", v);
        p->policy.search_budget_share = x;
        return SCV_OK;
    }
    if (!strcmp(name, "target-batch")) {
        int64_t b;
        if (scv_parse_i64(v, &b) || b < 1 || b > (1 << 24))
            return scv_err_set(err, SCV_EINVAL, "target-batch '%s': expected a batch size in 1..%d", v, 1 << 24);
        p->target_batch = (int)b;
        return SCV_OK;
    }
    if (!strcmp(name, "deadline")) {
        double d = scv_parse_duration(v);
        if (!(d > 0)) /* a bad value leaves the setting as it was */
            return scv_err_set(err, SCV_EINVAL, "deadline '%s': expected seconds, or a number with s, m or h", v);
        p->deadline_s = d;
        return SCV_OK;
    }
    if (!strcmp(name, "compress")) {
        scv_plan_comm c[SCV_PLAN_MAX_COMMS + 1];
        size_t n = 0;
        double f = p->compress_iterations > 0 ? p->compress_iterations : 1;
        if ((rc = scv_plan_comm_parse(v, f, c, SCV_PLAN_MAX_COMMS + 1, &n, &e)))
            return scv_err_set(err, rc, "compress %s", e.msg);
        memcpy(p->comms, c, n * sizeof c[0]);
        p->n_comms = n;
        return SCV_OK;
    }
    if (!strcmp(name, "compress-iterations")) {
        double x;
        if ((rc = positive(name, v, &x, 1e6, err))) return rc;
        p->compress_iterations = x;
        for (size_t i = 0; i < p->n_comms; i++) /* either order of the two settings */
            if (p->comms[i].kind != SCV_PLAN_DENSE) p->comms[i].iter_factor = x;
        return SCV_OK;
    }
    if (!strcmp(name, "workers")) return set_space(p->workers, &p->n_workers, name, v, 0, 1024, err);
    if (!strcmp(name, "batch")) return set_space(p->batches, &p->n_batches, name, v, 1, 1 << 24, err);
    if (!strcmp(name, "start")) {
        int k, b;
        char tail;
        if (sscanf(v, "%d,%d%c", &k, &b, &tail) != 2 || k < 1 || b < k)
            return scv_err_set(err, SCV_EINVAL, "start '%s': expected K,B with B >= K >= 1", v);
        p->start_workers = k, p->start_batch = b;
        return SCV_OK;
    }
    if (!strcmp(name, "vm-type")) {
        if (!*v || strlen(v) >= sizeof p->vm_type)
            return scv_err_set(err, SCV_EINVAL, "vm-type '%s': expected a catalog VM type", v);
        snprintf(p->vm_type, sizeof p->vm_type, "%s", v);
        return SCV_OK;
    }
    return scv_err_set(err, SCV_ENOTFOUND, "'%s' is not a setting of the loop", name);
}

int scv_run_params_check(const scv_run_params *p, scv_err *err)
{
    if ((p->target_accuracy > 0) == (p->target_loss > 0))
        return scv_err_set(err, SCV_EINVAL, p->target_loss > 0
                                                ? "target-accuracy and target-loss: give one target, not both"
                                                : "a target is required: target-accuracy A (0 < A <= 1) or "
                                                  "target-loss L (training loss, > 0)");
    if (p->target_accuracy > 1 || !(p->target_accuracy >= 0) || !(p->target_loss >= 0) || !isfinite(p->target_loss))
        return scv_err_set(err, SCV_EINVAL, "target-accuracy must be in (0, 1], target-loss a finite loss > 0");
    if (!p->n_workers || !p->n_batches) return scv_err_set(err, SCV_EINVAL, "workers and batch: the space is empty");
    /* the warm-up runs at the smallest K >= 2 and the statistical model fits the gradient
     * noise between workers (K = 1 has one gradient, no noise to measure): a space of K = 1
     * only would train its warm-up and then fail to plan, so it is refused before anything runs */
    if (p->workers[p->n_workers - 1] < 2)
        return scv_err_set(err, SCV_EINVAL, "workers: the space holds K = 1 only; the loop needs a K >= 2 "
                                            "(the warm-up and the statistical model measure the gradient noise "
                                            "between workers): give e.g. 1..8 (`scavenger train` trains at one K)");
    if (p->batches[p->n_batches - 1] < p->workers[0])
        return scv_err_set(err, SCV_EINVAL, "batch: no batch is at least the smallest K (%d)", p->workers[0]);
    if (!p->store) return scv_err_set(err, SCV_EINVAL, "run: no store");
    if (!p->catalog) return scv_err_set(err, SCV_EINVAL, "run: no VM catalog");
    if (!p->vm_type[0]) return scv_err_set(err, SCV_EINVAL, "vm-type: say which catalog type the job runs on");
    if (!scv_catalog_find(p->catalog, p->vm_type))
        return scv_err_set(err, SCV_ENOTFOUND, "vm-type '%s': not a type of the catalog", p->vm_type);
    for (size_t i = 0; i < p->n_vms; i++)
        if (!p->vms || p->vms[i] < 0 || (size_t)p->vms[i] >= p->catalog->n)
            return scv_err_set(err, SCV_EINVAL, "vm: VM type %zu of %zu is not an index of the catalog", i + 1, p->n_vms);
    if (!p->state_dir || !p->state_dir[0]) return scv_err_set(err, SCV_EINVAL, "run: no state directory");
    /* every run's directory under it fits scv_run_result.run_dir (the loop's, whose files the
     * drivers name from it), up to the largest run number: never a truncated directory */
    char probe[sizeof((scv_run_result *)0)->run_dir];
    if (scv_run_dir_path(p->state_dir, LLONG_MAX, NULL, probe, sizeof probe, NULL))
        return scv_err_set(err, SCV_EINVAL,
                           "run: state directory '%.200s%s' (%zu bytes): too long for a run's "
                           "directory under it (%zu bytes at most)",
                           p->state_dir, strlen(p->state_dir) > 200 ? "..." : "", strlen(p->state_dir),
                           sizeof probe - 1);
    if (!(p->deadline_s >= 0) || !(p->budget >= 0) || !(p->max_epochs > 0) || p->target_epochs < 0)
        return scv_err_set(err, SCV_EINVAL, "deadline, budget, max-epochs or target-epochs out of range");
    if (p->objective == SCV_OBJ_UTILITY && !(p->value_per_hour > 0))
        return scv_err_set(err, SCV_EINVAL, "objective utility needs value-per-hour V ($ an hour saved is worth)");
    for (size_t i = 0; i < p->n_comms; i++)
        if (p->comms[i].kind == SCV_PLAN_TOPK && p->topology != SCV_TOPO_RING)
            return scv_err_set(err, SCV_EINVAL, "compress: Top-k options need comm ring (their collectives are "
                                                "priced by the ring's alpha and beta)");
    if (p->policy.target_window < 1 || p->policy.target_window > SCV_TARGET_WINDOW_MAX)
        return scv_err_set(err, SCV_EINVAL, "target-window %d: must be in 1..%d", p->policy.target_window,
                           SCV_TARGET_WINDOW_MAX);
    if (p->target_batch && !(p->target_epochs > 0))
        return scv_err_set(err, SCV_EINVAL, "target-batch needs target-epochs");
    return SCV_OK;
}
