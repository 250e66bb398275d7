/*
 * json_out.h - writing JSON by hand safely: strings from outside (catalog and profile
 * names, --vm-type, paths, notes) are escaped, never pasted between quotes as they are.
 * Used by src/io (plan points) and the commands' --json outputs (src/cli); one writer of
 * a run at a glance (scv_run_summary) for `scavenger runs --json` and GET /api/runs.
 */
#ifndef SCV_IO_JSON_OUT_H
#define SCV_IO_JSON_OUT_H
#include <stddef.h>
#include <stdio.h>

#include "scv.h"

/* Writes s (NULL as "") as a JSON string, quotes included: '"', '\\' and control
 * characters are escaped (\n, \t, ... or \u00XX); other bytes pass through. */
void scv_json_str(FILE *f, const char *s);

/* The same into buf (always NUL-terminated; truncated at cap, never inside an escape);
 * returns buf, for use as a printf argument. */
char *scv_json_strbuf(char *buf, size_t cap, const char *s);
/* Writes "name":v (after a comma when comma is set) with v in the printf format fmt, or
 * null when v is not finite (NaN, inf): the one number writer of the hand-written JSON. */
void scv_json_num(FILE *f, const char *name, const char *fmt, double v, int comma);
/* A run at a glance as one JSON object (no newline), the one writer of `scavenger runs
 * --json` (and `runs show --json`'s "run") and the service's GET /api/runs: the struct's
 * field names (id, created, job_key, status, state, workers, batch, predicted_time_s,
 * predicted_cost, actual_time_s, actual_cost, accuracy, reached, n_steps, why, reason (null when
 * none), nominal, nominal_epochs, and eta: null, or a running run's latest forecast {written, remaining_s,
 * remaining_lo_s, remaining_hi_s, p_reach, overdue, nominal}); created in seconds since the
 * epoch with microseconds ("%.6f", exact at the store's resolution), the other numbers to 15
 * significant digits (the forecast's to 6), NaN as null. */
void scv_run_summary_json(FILE *f, const scv_run_summary *r);
#endif
