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
 * the target, "target T reached within the confirmation tolerance TOL: full test set A,
 * subset window mean M" (the window part when window_mean is finite; "evaluation window"
 * when subset is 0). tol: the confirmation's tolerance (SCV_TARGET_CONFIRM_TOL). */
void scv_run_headline(const scv_run_params *p, const scv_run_result *r, double tol, double window_mean, int subset,
                      char *buf, size_t cap);
#endif
