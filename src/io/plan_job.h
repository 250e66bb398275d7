/*
 * plan_job.h - the `plan` pipeline, one copy for `scavenger plan` (src/cli/cmd_plan.c) and
 * scv_plan_json() (plan_json.c): measurements and a target in; the profile, the catalog,
 * the fitted models and the plan out (with communication options: also the plan without
 * them); and the JSON report `plan --json` prints. The callers
 * check the values of their inputs (each naming its own options or fields); this file
 * checks what needs the files (VM types against the catalog).
 */
#ifndef SCV_IO_PLAN_JOB_H
#define SCV_IO_PLAN_JOB_H
#include <stdio.h>
#include "scv.h"
#include "../model/model.h"

typedef struct scv_plan_args {
    /* the measurements: metrics files (comma-separated), or their texts in memory */
    const char *profile;
    const char *const *metrics;     /* used when profile is NULL; errors say "metrics[i]" */
    size_t n_metrics;
    const char *catalog;            /* NULL: scv_data_file("vm-catalog.csv") */
    const char *measured_on;        /* catalog type of the measurements; NULL: the profile's */
    /* the target: epochs at base_batch (0: the smallest profiled batch), or the epochs the
     * run of target_run took to target_accuracy */
    double target_epochs;
    int base_batch;
    const char *target_run;
    double target_accuracy;
    /* the space */
    const char *vms;                /* "a,b", "all"; NULL: the measured type */
    const int *workers;
    size_t n_workers;
    const int *batches;
    size_t n_batches;
    int b_min, b_max;               /* per-worker batch bounds (0: none) */
    const char *mixes;              /* mixed clusters besides the types of vms: specs
                                       "TYPE:COUNT[,TYPE:COUNT...]" separated by ';' (NULL:
                                       none); scv_vm_mix_parse reads each */
    const char *compress;           /* communication options "none,topk:100,selsync:0.9" (NULL:
                                       dense only); scv_plan_comm_parse reads it */
    double compress_iterations;     /* their iterations relative to dense (0: 1, as dense) */
    /* models and choice */
    scv_topology topology;
    double overlap;
    scv_stat_kind stat;
    scv_pricing pricing;
    double gpu_speedup;             /* 0: GPU types left out */
    scv_objective objective;
    double value_per_hour, deadline_s, budget; /* 0: none */
    int all_points;                 /* the report lists every point too ("points") */
    long max_points;                /* the space's size at most, checked before planning: VM
                                       types (and mixes) x K x B x communication options
                                       (0: no limit; SCV_ERANGE beyond, naming the limit) */
    int option_names;               /* errors name the command's options (--vm), not fields (vm) */
    /* spot with the risk of preemption (model/spot.c), compared for the chosen configuration
     * and the front's when preempt_rate is given, spot_risk is set or pricing is spot (which
     * then plans on spot's expected times and costs: scv_plan_request.spot_risk) */
    const char *preempt_rate;       /* "R" or "TYPE=R[,TYPE=R...]" per VM-hour (NULL: the
                                       policy's defaults by provider) */
    int spot_risk;                  /* compare even without preempt_rate or spot pricing */
    int spot_inplace;               /* recovery in place (shrink/grow), else checkpoint-restart */
    const scv_spot_policy *spot_pol; /* its times (restart, in-place idle, replacement; NULL:
                                       scv_spot_policy_default(), --spot-restart etc. change it) */
} scv_plan_args;

typedef struct scv_plan_job {
    scv_profile *prof;              /* the configurations of the models' thread count */
    scv_catalog *cat;
    const char *catalog;            /* its path (args' or catbuf) */
    char catbuf[4200];
    const char *profile_name;       /* what errors call the profile */
    const scv_vm_type *measured;
    scv_perf_model perf;
    scv_stat_model stat;
    double target_epochs;
    int target_batch;
    scv_estimate estimate;          /* the target's (target_run: LEARNT with the corpus's reruns'
                                       band and the job's carry; given epochs: GIVEN, no band) */
    char scaling[160];              /* the measured thread scaling ("" = none) */
    char left_out[1024];            /* the configurations at other thread counts than the
                                       models', per file, left out of the fit ("" = none) */
    scv_plan_result *res;
    int bad_arg;                    /* the failure is a bad argument (a type of vms): usage */
    /* spot with the risk (spot_on: compared): the chosen point's and each front point's (in
     * res->front's order; NULL when not compared) */
    int spot_on;
    scv_spot_policy spot_pol;
    scv_spot_rates spot_rates;
    scv_spot_result spot_chosen;
    scv_spot_result *spot_front;
    long spot_best;                 /* the front's index with the best (point, mode) by the
                                       rule of scv_spot_eval (-1: none) */
} scv_plan_job;

/* Loads, fits and plans into *job (zeroed first). Free job with scv_plan_job_free whatever
 * this returns. */
int scv_plan_job_run(const scv_plan_args *a, scv_plan_job *job, scv_err *err);
void scv_plan_job_free(scv_plan_job *job); /* what job holds, not job */
/* The JSON report of a planned job (one line, no newline); f's errors are the caller's. */
void scv_plan_job_json(FILE *f, const scv_plan_args *a, const scv_plan_job *job);
/* The spot comparison for people (nothing when not compared): the chosen configuration's
 * modes, the best mode of each of the first `top` front points, the fallback's note. */
void scv_plan_job_spot_print(FILE *f, const scv_plan_args *a, const scv_plan_job *job, size_t top);
#endif
