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
/* One run as a runs list gives it (`runs --json`, GET /api/runs): the summary
 * (scv_run_summary_json) and what a table of runs needs besides, under report.json's names:
 * target_metric, target_accuracy, target_loss, and vm (the newest decision's type, else the
 * job's vm-type; null before either). Reads the store: a service holds its lock around it. A
 * read that fails (a damaged store) is returned, nothing written. */
int scv_run_row_json(scv_store *store, FILE *f, const scv_run_summary *r, scv_err *err);
#endif
