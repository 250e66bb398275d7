/*
 * store.h - Scavenger's run database (SQLite): every `scavenger run` with its job, the
 * measurements of each configuration, the fitted models, the decisions and switches, and
 * the predicted and actual outcome. `--search none` plans from a stored run of the same job.
 */
#ifndef SCV_STORE_H
#define SCV_STORE_H
#include "scv.h"

typedef struct scv_store scv_store;

int scv_store_open(const char *path, scv_store **out, scv_err *err);
void scv_store_close(scv_store *s);
/* A new run: returns its id. job_key identifies the job (model architecture, dataset). */
int scv_store_run_new(scv_store *s, const char *job_key, const char *job_json, long long *id, scv_err *err);
int scv_store_run_status(scv_store *s, long long id, const char *status, scv_err *err);
int scv_store_run_get(scv_store *s, long long id, char *job_json, size_t cap, char *status,
                      size_t scap, scv_err *err);
int scv_store_measurement(scv_store *s, long long run, const char *phase, const scv_config_stats *c,
                          scv_err *err);
/* Measurements of the latest finished run of job_key other than `exclude` (malloc'ed). */
int scv_store_load_measurements(scv_store *s, const char *job_key, long long exclude,
                                scv_config_stats **out, size_t *n, long long *from_run, scv_err *err);
int scv_store_model(scv_store *s, long long run, const char *kind, const char *json, scv_err *err);
int scv_store_decision(scv_store *s, long long run, const char *kind, int workers, int batch,
                       const char *vm, double predicted_time, double predicted_cost,
                       const char *reason, scv_err *err);
/* The latest decision of a run (to resume at the chosen configuration); SCV_ENOTFOUND if none. */
int scv_store_last_decision(scv_store *s, long long run, int *workers, int *batch, scv_err *err);
int scv_store_switch(scv_store *s, long long run, int from_k, int from_b, int to_k, int to_b,
                     double idle_s, scv_err *err);
int scv_store_outcome(scv_store *s, long long run, double actual_time, double actual_cost,
                      double accuracy, int reached, scv_err *err);
/* Epochs a finished run of job_key took to its target, and at which batch (for the
 * statistical model's reference). SCV_ENOTFOUND if no such run. */
int scv_store_learnt_target(scv_store *s, const char *job_key, double accuracy, double *epochs,
                            int *batch, scv_err *err);
int scv_store_set_target(scv_store *s, long long run, double accuracy, double epochs, int batch,
                         scv_err *err);
#endif
