/*
 * io.h - the internal declarations of the io layer (src/io/): profiles from metrics files,
 * the VM mix spec read against the catalog, and the plan's printed rows. Not part of the
 * public contract (include/scv.h): libscv.so does not export them; the library's other
 * layers, the CLI, the service and the in-tree tests include this header where they use
 * them.
 */
#ifndef SCV_IO_INTERNAL_H
#define SCV_IO_INTERNAL_H

#include "scv.h"
#include "../model/model.h"

/* The limits of one scv_plan_json request (plan_json.c): its work and memory are bounded
 * before the planning starts; beyond them SCV_ERANGE with the limit named. */
typedef struct scv_plan_limits {
    long max_points;            /* the space: VM types (and mixes) x K x B x communication
                                   options (about 10 us and 300 bytes of memory each, and as
                                   many bytes of report with "all") */
    size_t max_response;        /* bytes of the report */
} scv_plan_limits;
/* scv_plan_json's: 100,000 points (78 VM types x 1..128 workers x 8 batch sizes fits; about
 * 1 s and 30 MB), a 32 MiB report */
#define SCV_PLAN_LIMITS_DEFAULT {100000, (size_t)32 << 20}
/* scv_plan_json with limits lim (NULL: the defaults); allow_raise: the request's field
 * "max_points" may raise the points limit (a trusted caller: scv_plan_json itself); else the
 * field is refused (a service: its operator sets the limit). */
int scv_plan_json_limited(const char *request_json, const scv_plan_limits *lim, int allow_raise, char **result_json,
                          scv_err *err);

/* The same from n metrics texts in memory, each one file's JSON lines; errors name text i
 * as "label[i]" (label NULL: "metrics"). */
int scv_profile_load_texts(const char *const *texts, size_t n, const char *label, scv_profile **out,
                           scv_err *err);

/* The configuration of p measured over the most iterations (of those, the first in p's
 * canonical order); NULL when p has none. A segment's metrics file stands for it (the
 * profile's order is by (K, B), not by the lines'). */
const scv_config_stats *scv_profile_main(const scv_profile *p);

/* The job's thread count, the one rule for the profile (p->job.threads, set by the
 * loaders) and the planner's models (plan_job.c fits them on these configurations only):
 * the thread count with the most configurations, of those the smallest; 0 when none is
 * known. From the configurations, not the order of the files. */
int scv_profile_models_threads(const scv_profile *p);

/* A plan point's band, for the trade-off tables (`run`'s, report.md's): its time band as a
 * run predicts it ("13.4 s-31.1 s", "from 13.4 s" when its top is never), else the
 * iteration time's relative error, named so ("t_iter +-0.5%": the target's epochs are
 * given or nominal, not predicted with a band). */
void scv_plan_point_band(const scv_plan_point *p, char *buf, size_t cap);

/* The job line of a metrics file. */
int scv_job_load(const char *path, scv_job_info *job, scv_err *err);
/* From the metrics of a run that reached `accuracy`: the epochs it took and its batch. */
int scv_profile_target(const char *path, double accuracy, double *epochs, int *batch,
                       scv_err *err);

/* "c5.xlarge:2,c6i.4xlarge:1" (the syntax of `cluster up --vm`; COUNT defaults to 1; a
 * type named twice adds up) against catalog c. SCV_EINVAL / SCV_ENOTFOUND naming the part
 * at fault: an unknown type, a bad count, more than SCV_MIX_MAX_TYPES types, more than
 * SCV_MAX_WORKERS workers, an empty spec or entry. */
int scv_vm_mix_parse(const scv_catalog *c, const char *spec, scv_vm_mix *out, scv_err *err);

/* " (did you mean 'c5.xlarge'?)" for a name that is not a type of c but near one (the
 * edit distance, core/util.h), else "" - for the errors that name an unknown type. */
const char *scv_catalog_did_you_mean(const scv_catalog *c, const char *name, char *buf, size_t cap);

/* A list of VM types, "c5.xlarge,c6i.4xlarge" or "all" (`plan --vm`, `run --vm`, the "vm" of
 * a plan request or a job), into catalog indices (out holds c->n; a type named twice counts
 * once; *n their count). Errors name the option ("--vm") or, without a leading '-', the field
 * ("vm") and the catalog file catalog_name: SCV_ENOTFOUND for an unknown type, with the
 * nearest name ("did you mean"), SCV_EINVAL for a list of no type. */
int scv_vm_list_parse(const scv_catalog *c, const char *list, const char *option, const char *catalog_name,
                      int *out, size_t *n, scv_err *err);

/* The text of column `column` ("region", "gpu_model") of each VM type of c, read from the
 * catalog file at path that c was loaded from (by the types' lines): out[i] for c->vms[i],
 * "" where the column is empty or absent. SCV_ENOTFOUND / SCV_EPARSE naming the file. */
int scv_catalog_text_column(const char *path, const scv_catalog *c, const char *column, char (*out)[48],
                            scv_err *err);

/* The learning-curve corpus (data/curves.jsonl, `bench/bench.py corpus`; docs/CURVES.md):
 * one JSON object per line per curve, read strictly into out (free with
 * scv_lcurve_set_free). Errors name the file, line and field ("curves.jsonl:12: field
 * 'batch': ..."): SCV_EPARSE for any fault of the text or a bound below exceeded,
 * SCV_ENOTFOUND when it cannot be opened, SCV_EIO on a read error; out is left empty. */
#define SCV_LCURVE_MAX_CURVES 4096          /* curves in a corpus */
#define SCV_LCURVE_MAX_POINTS 100000        /* points of one curve */
#define SCV_LCURVE_MAX_TOTAL_POINTS 4000000 /* points of all curves (about 100 MB read) */
#define SCV_LCURVE_MAX_LINE (8 << 20)       /* bytes of one line, its newline left out */
int scv_lcurves_load(const char *path, scv_lcurve_set *out, scv_err *err);

/* A job's learning recipe (recipe.c), its statistical identity beside the job key: from its
 * settings as the store keeps them (JSON, NULL: none given), the recipe options given or the
 * built-in trainer's defaults, "lr=0.05;momentum=0.9;weight-decay=0.0005;lr-scaling=none;...".
 * SCV_ERANGE when cap is too small (buf holds its start). */
int scv_job_recipe(const char *job_json, char *buf, size_t cap);

void scv_plan_print_header(FILE *f);
void scv_plan_print_point(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *mark);
/* scv_plan_svg_write for a plan whose times are nominal (nominal_epochs > 0 epochs at
 * nominal_batch assumed, the target's epochs unknown): the title and axes say "nominal",
 * with the epochs assumed, not "predicted". nominal_epochs 0: scv_plan_svg_write. */
int scv_plan_svg_write_nominal(const char *path, const scv_catalog *cat, const scv_plan_result *res,
                               double actual_time_s, double actual_cost, double nominal_epochs, int nominal_batch,
                               scv_err *err);
void scv_plan_point_json(FILE *f, const scv_catalog *cat, const scv_plan_point *p);
/* The same with "how" said by the caller (NULL: scv_extrap_desc's): a run's report says
 * "measured" only of a configuration the run trained at. */
void scv_plan_point_json_how(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *how);

#endif /* SCV_IO_INTERNAL_H */
