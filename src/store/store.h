/*
 * store.h - the internal declarations of the store layer (src/store/): the writes of the
 * run store and the queries only the loop makes. Not part of the public contract
 * (include/scv.h): libscv.so does not export them; the library's other layers, the CLI, the
 * service and the in-tree tests include this header where they use them.
 */
#ifndef SCV_STORE_INTERNAL_H
#define SCV_STORE_INTERNAL_H

#include "scv.h"

/* A new run: returns its id. job_key identifies the job (model architecture, dataset). */
int scv_store_run_new(scv_store *s, const char *job_key, const char *job_json, long long *id, scv_err *err);
/* Sets a run's status (its reason cleared); "running" also records this process as its owner
 * (host, pid, start). A run that starts (this, scv_store_run_new) makes the store's reserve. */
int scv_store_run_status(scv_store *s, long long id, const char *status, scv_err *err);
/* A run's end in one UPDATE: its status ("failed", "interrupted", "target not reached"), the
 * loop's state (NULL: left as it is) and why (scv_run_summary.reason; NULL or "": none); its
 * forecast cleared. On a full disk the reserve made when the run started (PATH.reserve,
 * storefile.c) is given up for this write, so that even then the end is stored. */
int scv_store_run_end(scv_store *s, long long run, const char *status, const char *state, const char *reason,
                      scv_err *err);
/* The status a run stored as running shows once its owner's process is gone (summaries,
 * scv_store_run_get): it is not running, and can be resumed. */
#define SCV_RUN_GONE "interrupted (process gone)"
/* 1 when a run's owner ("HOST:PID:START") is a process of this host that no longer exists
 * (or whose pid now names another process); 0 when alive, unknown or on another host. */
int scv_store_owner_gone(const char *owner);

/* path with every symbolic link resolved (realpath; of a file not yet there, its directory's
 * plus its name; storefile.c): one name for one file. A hard-linked store is refused by the
 * opens, so this is the store's identity on this host: what keys a lock on it (the service's,
 * PATH.serve/lock of this path). */
int scv_store_canonical(const char *path, char *buf, size_t cap, scv_err *err);

int scv_store_measurement(scv_store *s, long long run, const char *phase, const scv_config_stats *c,
                          scv_err *err);
/* The newest measurement of each configuration over the stored runs of job_key other than
 * `exclude` (malloc'ed); from_run: the newest run they come from. */
int scv_store_load_measurements(scv_store *s, const char *job_key, long long exclude,
                                scv_config_stats **out, size_t *n, long long *from_run, scv_err *err);
int scv_store_model(scv_store *s, long long run, const char *kind, const char *json, scv_err *err);
int scv_store_decision(scv_store *s, long long run, const char *kind, int workers, int batch,
                       const char *vm, double predicted_time, double predicted_cost,
                       const char *reason, scv_err *err);
/* The latest decision of a run (to resume at the chosen configuration): K, B and the VM type
 * it trains on (vm may be NULL; "" when none stored); SCV_ENOTFOUND if none. */
int scv_store_last_decision(scv_store *s, long long run, int *workers, int *batch, char *vm, size_t vm_cap,
                            scv_err *err);
int scv_store_switch(scv_store *s, long long run, int from_k, int from_b, int to_k, int to_b,
                     double idle_s, scv_err *err);
int scv_store_outcome(scv_store *s, long long run, double actual_time, double actual_cost,
                      double accuracy, int reached, scv_err *err);
/* A resumed run's job as it goes on (`run --resume ID` with settings added, a larger
 * --budget say): the stored job replaced, so that a later resume, its report and the API see
 * what it runs with. */
int scv_store_run_set_job(scv_store *s, long long run, const char *job_json, scv_err *err);
/* What a run that stops without an outcome (interrupted, stopped by its budget, failed) has
 * spent so far: its actual time and cost, as scv_store_outcome stores a finished run's, the
 * status, accuracy and reached left as they are (the runs list and the API show the spend). */
int scv_store_run_spent(scv_store *s, long long run, double actual_time, double actual_cost, scv_err *err);
/* Epochs a finished run of job_key took to its target (the same metric, the nearest value
 * at least as hard: accuracy >= value, loss <= value), and at which batch (the statistical
 * model's reference). SCV_ENOTFOUND if no such run. The loop does not plan with it: a
 * harder target's epochs are not this target's (it carries stored targets through their
 * runs' evaluations, scv_store_targets). */
int scv_store_learnt_target(scv_store *s, const char *job_key, scv_metric metric, double value, double *epochs,
                            int *batch, scv_err *err);
/* A finished run's target and the epochs it took (NaN: not reached; stored as NULL). */
int scv_store_set_target(scv_store *s, long long run, scv_metric metric, double value, double epochs, int batch,
                         scv_err *err);
/* A finished run's target: its value, the epochs it took there at a batch (as
 * scv_store_set_target wrote them; NaN: it finished without reaching it, and its
 * evaluations say how far it came). */
typedef struct scv_stored_target {
    long long run;
    double value, epochs;
    int batch;
} scv_stored_target;
/* The stored targets of job_key in metric, of runs other than exclude, newest first: at
 * most max into out, *n of them (the loop carries them to another target value). */
int scv_store_targets(scv_store *s, const char *job_key, scv_metric metric, long long exclude, scv_stored_target *out,
                      size_t max, size_t *n, scv_err *err);
/* A running run's latest forecast (struct scv_run_eta, scv.h; `written` is stamped here):
 * one UPDATE of its row, ignored once the run is not running; e NULL clears it. A run that
 * stops (scv_store_run_status other than "running", scv_store_outcome) loses it. */
int scv_store_run_eta(scv_store *s, long long run, const struct scv_run_eta *e, scv_err *err);
/* The loop's current state ("warmup", ... as scv_run_state_name) and its steps. */
int scv_store_run_state(scv_store *s, long long run, const char *state, scv_err *err);
int scv_store_step(scv_store *s, long long run, int idx, const scv_run_step *t, scv_err *err);

int scv_store_straggler(scv_store *s, long long run, const scv_straggler_event *e, scv_err *err);

int scv_store_eval(scv_store *s, long long run, int workers, int batch, const scv_eval_sample *e,
                   scv_err *err);

/* The latest fitted parallel model of every stored run of another job than exclude_job
 * measured on VM type vm (the universal prior's data; malloc'ed, comm kind unset). */
int scv_store_perf_models(scv_store *s, const char *vm, const char *exclude_job, scv_perf_model **out,
                          size_t *n, scv_err *err);

#endif /* SCV_STORE_INTERNAL_H */
