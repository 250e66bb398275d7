/*
 * report.h - the run's headline, internal to src/search/ and its shells: the one sentence
 * that says whether a run reached its target and, when the whole test set's accuracy is
 * under the target (reached through the subset evaluations' window and the confirmation's
 * tolerance), why it still counts as reached (src/search/report.c).
 */
#ifndef SCV_SEARCH_REPORT_H
#define SCV_SEARCH_REPORT_H
#include "scv.h"

#include <stddef.h>

/* "target reached: test accuracy A", "target NOT reached: ...", or, reached with A under
 * the target T: "target reached within the confirmation tolerance TOL of T: full test set
 * A, subset window mean M" when the evaluations are on a subset and A >= T - TOL, else
 * "target reached by the mean of the evaluation window (>= T): last test accuracy A, ..."
 * (the window part when window_mean is finite). Every form starts "target reached" or
 * "target NOT reached". tol: the confirmation's tolerance (SCV_TARGET_CONFIRM_TOL). */
void scv_run_headline(const scv_run_params *p, const scv_run_result *r, double tol, double window_mean, int subset,
                      char *buf, size_t cap);
/* A budget-stopped run (r->budget_stopped) in words, every amount by scv_fmt_usd: "stopped
 * before the budget's cap: $X spent of the $Y cap, the next segment would cost $Z", or, the
 * spend past the cap, "stopped at the budget's cap: $X spent of the $Y cap ($D over it: a
 * segment's actual cost exceeded its prediction), ..."; "" for any other run. */
void scv_run_budget_text(const scv_run_params *p, const scv_run_result *r, char *buf, size_t cap);
/* The run's time: "0.20 s" (actual_time_s: the steps' iterations and idle), or with the wall
 * time measured (r->wall_s) "0.20 s training, 12.5 s wall (12.3 s start-up and evaluation)". */
void scv_run_time_text(const scv_run_result *r, char *buf, size_t cap);
/* The report directory made ready before a run trains (`run --report DIR`): created with the
 * folders above it that are missing, then checked to be a directory this process can write
 * (a file created, synced and removed in it): a dangling symbolic link, a file, a read-only
 * mount or a folder without permission is an error naming the path, found before hours of
 * training rather than after them. */
int scv_run_report_dir_ready(const char *dir, scv_err *err);
/* A stored run's result rebuilt from the store for its report (src/search/report_store.c):
 * out->from_store set; p the run's parameters from its stored job; its files' directory
 * state_dir/ID. scv_run_result_free(out) after, on error too. */
int scv_run_result_load(scv_store *s, long long run, const scv_run_params *p, const char *state_dir,
                        scv_run_result *out, scv_err *err);
/* How a run reached its target: "target" (its last accuracy at the target, or a loss
 * target), "tolerance" (evaluations on a subset, the whole test set under the target by at
 * most the confirmation's tolerance), "window" (the mean of the evaluation window at the
 * target, the last accuracy under it), or NULL (not reached); note (cap bytes) the sentence
 * of the last two, "" otherwise: the console, report.md, `runs` and the dashboard say it. */
const char *scv_run_reached(const scv_run_params *p, const scv_run_result *r, char *note, size_t cap);
/* The same of a stored run (its job read from the store): 0 not reached (or its job not
 * readable), 1 target, 2 tolerance, 3 window; note as above. */
int scv_run_row_reached(scv_store *store, const scv_run_summary *r, char *note, size_t cap);
/* One run as a runs list gives it (`runs --json`, GET /api/runs): the summary
 * (scv_run_summary_json) and what a table of runs needs besides, under report.json's names:
 * target_metric, target_accuracy, target_loss, vm (the newest decision's type, else the
 * job's vm-type; null before either), reached_how and reached_note (scv_run_reached). Reads
 * the store: a service holds its lock around it. A read that fails (a damaged store) is
 * returned, nothing written. */
int scv_run_row_json(scv_store *store, FILE *f, const scv_run_summary *r, scv_err *err);
#endif
