/*
 * jobopts.h - the keys a job accepts (a JSON job file, `scavenger run`'s options, a job
 * submitted to the service), declared once in src/search/jobopts.c: the built-in trainer's
 * options, the loop's settings and where the job runs.
 */
#ifndef SCV_SEARCH_JOBOPTS_H
#define SCV_SEARCH_JOBOPTS_H
#include "core/option.h"

/* The table, in the order `scavenger run --help` shows it (with section headings), ended by
 * a row of NULLs. */
const scv_option *scv_job_options(void);
/* The key called name (never a heading), or NULL when a job has no such key. */
const scv_option *scv_job_option_find(const char *name);
/* Whether value is one of o->values (always true when o->values is NULL). */
int scv_option_value_ok(const scv_option *o, const char *value);
#endif
