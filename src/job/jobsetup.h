/*
 * jobsetup.h - a job's settings (the keys of src/search/jobopts.c as name/value text, from
 * a job file, a command line or a service) made into the loop's parameters and its job
 * driver, with the library's defaults: the driver (exec with an external trainer, relaunch
 * with a hostfile, else elastic), the VM type (the cluster's, else c5.xlarge), the job's
 * identity (the key stored runs are found by) and the seed. `scavenger run` is a shell over
 * this (src/cli/cmd_run.c), the service's submit checks a job with it (src/service/jobs.c);
 * a C caller gets the same job from the same settings. job/ is the facade above the loop
 * (search/) and the drivers (drivers/), the one part that knows both: the drivers never
 * call the loop, the loop never names a driver (docs/layers.txt).
 */
#ifndef SCV_JOB_JOBSETUP_H
#define SCV_JOB_JOBSETUP_H
#include "scv.h"
#include "runtime/cluster.h"

/* the library's defaults of a job that are not the built-in trainer's (its model, hidden
 * layers, dataset and seed are scv_train_params_default's) */
typedef struct scv_job_defaults {
    const char *vm_type;     /* without --vm-type or a cluster */
    int max_exec_len;        /* the longest --exec command */
} scv_job_defaults;
extern const scv_job_defaults SCV_JOB_DEFAULTS;

typedef struct scv_job_setup {
    scv_run_params params;      /* the loop's settings; job_key, job_json, catalog, store and
                                   state_dir point into this struct or the caller's */
    char job_key[512];          /* the job's identity: runs of the same key teach the target */
    char *job_json;             /* the settings as JSON (what --resume reads back; not db) */
    char driver[16];            /* elastic | relaunch | exec */
    scv_relaunch_opts drv_opts; /* the driver's options */
    scv_catalog *catalog;
    int *vms;                   /* params.vms: the catalog indices of --vm (NULL: none) */
    scv_cluster cluster;        /* when drv_opts.cluster */
    const char **train_opts;    /* "--NAME", value pairs of the trainer's keys, NULL-ended */
    char note[512];             /* something to tell the user (a cluster of mixed VM types), or "" */
    int bad_setting;            /* with an error: a setting is wrong (a usage error), not a failure */
} scv_job_setup;

/* The job from n settings (names[i] = values[i], later ones win; every name a key of
 * jobopts.c), the run store and the directory of the runs' files. On error, err names the
 * setting and js->bad_setting tells a bad setting from a failure (a catalog or cluster that
 * cannot be read). scv_job_setup_free in either case. */
int scv_job_setup_init(scv_job_setup *js, char *const *names, char *const *values, int n, scv_store *store,
                       const char *state_dir, scv_err *err);
/* The job driver js->driver names, with js->drv_opts. */
int scv_job_setup_driver(const scv_job_setup *js, scv_job_driver **out, scv_err *err);
void scv_job_setup_free(scv_job_setup *js);
#endif
