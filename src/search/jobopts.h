/*
 * jobopts.h - the keys a job accepts (a JSON job file, `scavenger run`'s options, a job
 * submitted to the service), declared once in src/search/jobopts.c: the built-in trainer's
 * options, the loop's settings and where the job runs.
 */
#ifndef SCV_SEARCH_JOBOPTS_H
#define SCV_SEARCH_JOBOPTS_H
#include "core/option.h"
#include "scv.h"

/* The table, in the order `scavenger run --help` shows it (with section headings), ended by
 * a row of NULLs. */
const scv_option *scv_job_options(void);
/* The key called name (never a heading), or NULL when a job has no such key. */
const scv_option *scv_job_option_find(const char *name);
/* The value of key o in text read as its row says (core/option.h) into the struct it
 * belongs to: a loop setting into *rp, a trainer option into *tp, a shell key that has a
 * type (stall-timeout, driver) into *shell, a scalar of that type. A key without a type
 * is not read here (SCV_OK). SCV_EINVAL: "--NAME 'TEXT': expected WHAT (WHY)". */
int scv_job_value_read(const scv_option *o, scv_run_params *rp, scv_train_params *tp, void *shell, const char *text,
                       scv_err *err);
/* Whether value is one of o->values (always true when o->values is NULL). */
int scv_option_value_ok(const scv_option *o, const char *value);
#endif
