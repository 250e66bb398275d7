/*
 * params.c - the loop's settings: defaults, the policy's thresholds, and setting each one
 * by name from text (the command line, a job file or a service request share this, so a
 * setting means the same everywhere and a bad value is refused with its name): each is a
 * row of jobopts.c's table, its value read by the options' one reader (core/option.c).
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
        .noise_window = 40,
        .noise_tol = 0.25,
        .warmup_max_iters = 400,
        .warmup_min_evals = 5,
        .budget_warn_share = 0.8,
        .profile_rse = 0.03,
        .profile_min_iters = 30,
        .profile_max_iters = 60,
        .drift_tol = 0.15,
        .switch_idle_factor = 1.5,
        .switch_remaining_share = 0.05,
        .switch_idle_default_s = 1.0,
        .max_retries = 2,
        .segment_share = 0.5,
        .segment_min_iters = 200,
        .max_segments = 200,
        .eval_every_epochs = 0.25,
        .checkpoint_every = 100,
        .nominal_epochs = 10,
        .stat_drift_tol = 0.15,
        .search_eval_every_epochs = 0.05,
        .search_eval_share = 0.1,
        .eval_subset = 2000,
        .target_window = 3,
        .seed = 1,
        .search_budget_share = 0.05,
        .search_rule_out = 2,
        .band_coverage = 0.8,
        .unknown_segment_epochs = 1,
        .out_of_reach_p = 0.2,
        .out_of_reach_by = 0.25,
        .out_of_reach = 1,
        .carry_probe_epochs = 0.5,
        .scaling_threshold = 0.1,
        .straggler = scv_straggler_rule_default(),
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

static const char *const SOURCES[] = {"nominal", "given", "learnt", "curve", "carried", "carried-curve", "corpus"};

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

int scv_run_params_set(scv_run_params *p, const char *name, const char *v, scv_err *err)
{
    const scv_option *key = scv_job_option_find(name); /* the loop's settings: jobopts.c's table */
    if (!key || !(key->flags & SCV_OPT_LOOP))
        return scv_err_set(err, SCV_ENOTFOUND, "'%s' is not a setting of the loop", name ? name : "");
    return scv_job_value_read(key, p, NULL, NULL, v, err); /* its type, range and field: the row's */
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
