/*
 * jobsetup.c - a job's settings made into the loop's parameters and its job driver, with
 * the library's defaults (jobsetup.h): what `scavenger run` decided in its shell before, so
 * that the command line, the service (whose jobs are `scavenger run` children) and a C
 * caller get the same job from the same settings. Every check names the setting; a bad
 * setting is told from a failure (js->bad_setting) so a shell can map it to its usage
 * error.
 */
#define _POSIX_C_SOURCE 200809L
#include "job/jobsetup.h"
#include "job/hostlimits.h"
#include "core/util.h"
#include "runtime/launch.h"
#include "io/io.h"
#include "search/jobopts.h"
#include "train/train.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const scv_job_defaults SCV_JOB_DEFAULTS = {.vm_type = "c5.xlarge", .max_exec_len = 4000};

/* the latest value of setting name, or NULL */
static const char *get(char *const *names, char *const *values, int n, const char *name)
{
    for (int i = n - 1; i >= 0; i--)
        if (!strcmp(names[i], name)) return values[i];
    return NULL;
}

static int is_trainer_key(const char *name)
{
    const scv_option *o = scv_job_option_find(name);
    return o && (o->flags & SCV_OPT_TRAINER);
}

static int bad(scv_job_setup *js, scv_err *err, const char *fmt, const char *a)
{
    char m[1024];
    snprintf(m, sizeof m, fmt, a);
    js->bad_setting = 1;
    return scv_err_set(err, SCV_EINVAL, "%s", m);
}

/* The settings as JSON, what the store keeps for --resume (not the database's path). */
static char *settings_json(char *const *names, char *const *values, int n)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < n; i++) {
        if (!strcmp(names[i], "db")) continue;
        cJSON_DeleteItemFromObjectCaseSensitive(o, names[i]);
        cJSON_AddStringToObject(o, names[i], values[i]);
    }
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

/* The catalog, the VM type and the cluster the job runs on: the one check of where a job
 * runs, for `scavenger run` and the service's submit (svc_job_check runs this setup), each
 * error naming its option (--catalog, --cluster, --vm-type, --vm: the service's field). */
static int setup_where(scv_job_setup *js, const char *catalog, const char *cl, const char *vms, scv_err *err)
{
    scv_run_params *p = &js->params;
    char catbuf[4200];
    if (scv_catalog_load(catalog ? catalog : scv_data_file("vm-catalog.csv", catbuf, sizeof catbuf), &js->catalog,
                         err)) {
        if (catalog) {
            char m[SCV_ERR_LEN];
            snprintf(m, sizeof m, "%s", err->msg);
            scv_err_set(err, err->code ? err->code : SCV_EIO, "--catalog: %s", m);
        }
        return err->code ? err->code : SCV_EIO;
    }
    if (cl) {
        scv_err ce = {0};
        int rc = scv_cluster_load(cl, &js->cluster, &ce);
        if (rc == SCV_ENOTFOUND || rc == SCV_EINVAL) /* no such cluster here, or no cluster's name: the setting's */
            return bad(js, err, "--cluster: %s", ce.msg);
        if (rc) return scv_err_set(err, rc, "--cluster: %s", ce.msg); /* its state damaged: not the setting's */
    }
    if (!p->vm_type[0])
        snprintf(p->vm_type, sizeof p->vm_type, "%s", cl ? js->cluster.vm[0].catalog_type : SCV_JOB_DEFAULTS.vm_type);
    for (int i = 1; cl && i < js->cluster.n; i++) /* the loop plans and prices one type */
        if (strcmp(js->cluster.vm[i].catalog_type, js->cluster.vm[0].catalog_type)) {
            snprintf(js->note, sizeof js->note, "cluster %s mixes VM types (VM %d is %s, VM 1 %s): the measurements "
                     "stand for K VMs of %s (its VMs first, then the others) and are priced as %s; a segment on "
                     "another type of `--vm` goes on that type's VMs; `scavenger plan --mix` prices a mix", cl, i + 1,
                     js->cluster.vm[i].catalog_type, js->cluster.vm[0].catalog_type, p->vm_type, p->vm_type);
            break;
        }
    if (!scv_catalog_find(js->catalog, p->vm_type)) {
        char m[400], near[160];
        snprintf(m, sizeof m, "--vm-type '%.200s': not a VM type of the catalog (`scavenger vms` lists them)%s", p->vm_type,
                 scv_catalog_did_you_mean(js->catalog, p->vm_type, near, sizeof near));
        return bad(js, err, "%s", m);
    }
    if (vms) { /* the types the plan compares: `plan --vm`'s parser, one check for run, job files and the service */
        scv_err ve = {0};
        if (!(js->vms = malloc(sizeof(int) * (js->catalog->n ? js->catalog->n : 1))))
            return scv_err_set(err, SCV_ENOMEM, "out of memory");
        int rc = scv_vm_list_parse(js->catalog, vms, "--vm",
                                   catalog ? catalog : catbuf,
                                   js->vms, &p->n_vms, &ve);
        if (rc == SCV_ENOMEM) return scv_err_set(err, rc, "out of memory");
        if (rc) return bad(js, err, "%s", ve.msg);
        p->vms = js->vms;
    }
    if (cl && p->workers[p->n_workers - 1] > js->cluster.n)
        return scv_err_set(err, SCV_EINVAL, "--workers goes up to %d but cluster %s has %d VMs",
                           p->workers[p->n_workers - 1], cl, js->cluster.n);
    return SCV_OK;
}

/* The job's identity: an external trainer's command, else the built-in trainer's model,
 * hidden layers and dataset. Checks what an external trainer cannot be given. */
static int setup_identity(scv_job_setup *js, char *const *names, char *const *values, int n, scv_err *err)
{
    const char *exec = get(names, values, n, "exec"), *model = get(names, values, n, "model");
    const char *hidden = get(names, values, n, "hidden"), *dataset = get(names, values, n, "dataset");
    const scv_train_params t = scv_train_params_default(); /* the built-in trainer's defaults name the job */
    if (!model) model = t.model;
    if (exec && js->params.n_comms > 1) /* the contract cannot ask an external trainer to compress */
        return bad(js, err, "--compress: not with --exec (the trainer contract has no compression: a chosen option "
                            "would train dense; plan it with `scavenger plan --compress`)%s", "");
    if (!exec) {
        /* the built-in trainer's network, checked as its own check does before a run is
         * stored (an unknown model once stored a failed run, exit 1, its time shown "nan") */
        scv_err e = {0};
        if (scv_net_check(model, hidden ? hidden : t.hidden, &e)) return bad(js, err, "%s", e.msg);
        snprintf(js->job_key, sizeof js->job_key, "model=%s;hidden=%s;dataset=%s", model,
                 hidden ? hidden : !strcmp(model, "mlp") ? t.hidden : "-", dataset ? dataset : t.dataset);
        return SCV_OK;
    }
    for (int i = 0; i < n; i++) /* the trainer is the user's: its options are in its command */
        if (is_trainer_key(names[i]) && strcmp(names[i], "seed"))
            return bad(js, err, "--%s is an option of the built-in trainer; with --exec, give it in the trainer's "
                                "command", names[i]);
    if (!exec[0] || (int)strlen(exec) > SCV_JOB_DEFAULTS.max_exec_len) {
        char m[96];
        snprintf(m, sizeof m, "--exec: expected a command of 1 to %d characters", SCV_JOB_DEFAULTS.max_exec_len);
        return bad(js, err, "%s", m);
    }
    snprintf(js->job_key, sizeof js->job_key, "exec=%.500s", exec);
    return SCV_OK;
}

/* The driver: --driver, else exec with an external trainer, relaunch with a hostfile,
 * else elastic; and the places it may run. */
static int setup_driver(scv_job_setup *js, char *const *names, char *const *values, int n, scv_err *err)
{
    const char *exec = get(names, values, n, "exec"), *hosts = get(names, values, n, "hosts");
    const char *cl = get(names, values, n, "cluster"), *dname = get(names, values, n, "driver");
    const scv_run_params *p = &js->params;
    const char *slurm = getenv("SLURM_NTASKS");
    if (slurm && !cl && !hosts && atoi(slurm) > 0 && p->workers[p->n_workers - 1] > atoi(slurm)) {
        char m[128];
        snprintf(m, sizeof m, "--workers goes up to %d but the Slurm allocation has %d tasks (SLURM_NTASKS)",
                 p->workers[p->n_workers - 1], atoi(slurm));
        return bad(js, err, "%s", m);
    }
    if (hosts && cl) return bad(js, err, "--hosts and --cluster: one or the other%s", "");
    if (!dname) dname = exec ? "exec" : hosts ? "relaunch" : "elastic";
    snprintf(js->driver, sizeof js->driver, "%s", dname); /* checked after the loop's settings */
    return SCV_OK;
}

static int setup_driver_checks(scv_job_setup *js, char *const *names, char *const *values, int n, scv_err *err)
{
    const char *exec = get(names, values, n, "exec"), *hosts = get(names, values, n, "hosts");
    const char *dname = get(names, values, n, "driver");
    scv_err e = {0};
    int drv = 0;
    if (dname && scv_job_value_read(scv_job_option_find("driver"), NULL, NULL, &drv, dname, &e))
        return bad(js, err, "%s", e.msg);
    if (!strcmp(js->driver, "exec") != !!exec)
        return bad(js, err, "%s", exec ? "--exec runs the exec driver (--driver exec)" : "--driver exec needs --exec COMMAND");
    if (hosts && !strcmp(js->driver, "elastic"))
        return bad(js, err, "--hosts: the elastic driver runs locally or on an emulated cluster; use --driver "
                            "relaunch%s", "");
    if (hosts) { /* checked before the run starts (names, slots, resolving): file:line */
        scv_err he = {0};
        if (scv_hostfile_check(hosts, NULL, &he)) return bad(js, err, "--hosts: %s", he.msg);
    }
    scv_train_params t = scv_train_params_default(); /* the seed, read as the trainer reads it */
    const char *sv = get(names, values, n, "seed");
    if (sv && scv_job_value_read(scv_job_option_find("seed"), NULL, &t, NULL, sv, &e)) return bad(js, err, "%s", e.msg);
    double stall = 0;
    const char *so = get(names, values, n, "stall-timeout");
    if (so && scv_job_value_read(scv_job_option_find("stall-timeout"), NULL, NULL, &stall, so, &e))
        return bad(js, err, "%s", e.msg);
    if (!(js->train_opts = calloc((size_t)2 * n + 1, sizeof(char *))))
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int nt = 0;
    for (int i = 0; i < n; i++) /* a later setting of the same option wins in train's getopt too */
        if (is_trainer_key(names[i])) {
            char *flag = malloc(strlen(names[i]) + 3), *val = strdup(values[i]);
            if (!flag || !val) {
                free(flag), free(val);
                return scv_err_set(err, SCV_ENOMEM, "out of memory");
            }
            sprintf(flag, "--%s", names[i]);
            js->train_opts[nt++] = flag;
            js->train_opts[nt++] = val;
        }
    js->drv_opts = (scv_relaunch_opts){.train_opts = exec ? NULL : js->train_opts,
                                       .cluster = get(names, values, n, "cluster"), .vm_type = js->params.vm_type,
                                       .catalog = get(names, values, n, "catalog"), .exec = exec, .hostfile = hosts,
                                       .seed = t.seed, .stall_timeout_s = stall};
    return SCV_OK;
}

int scv_job_setup_init(scv_job_setup *js, char *const *names, char *const *values, int n, scv_store *store,
                       const char *state_dir, scv_err *err)
{
    memset(js, 0, sizeof *js);
    scv_run_params *p = &js->params;
    *p = scv_run_params_default();
    int rc;
    scv_train_params t = scv_train_params_default(); /* the trainer's options, read to check them */
    for (int i = 0; i < n; i++) { /* every value through its row: the loop's into p, the trainer's into t */
        const scv_option *o = scv_job_option_find(names[i]);
        if (!o) return bad(js, err, "unknown setting '%s'", names[i]);
        if (o->flags & SCV_OPT_SHELL) continue; /* read where they are used (setup_driver_checks) */
        scv_err e = {0};
        if (scv_job_value_read(o, p, &t, NULL, values[i], &e)) return bad(js, err, "%s", e.msg);
    }
    if ((rc = setup_where(js, get(names, values, n, "catalog"), get(names, values, n, "cluster"),
                          get(names, values, n, "vm"), err)))
        return rc;
    if ((rc = setup_identity(js, names, values, n, err))) return rc;
    if ((rc = setup_driver(js, names, values, n, err))) return rc;
    if (!(js->job_json = settings_json(names, values, n))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    p->job_key = js->job_key, p->job_json = js->job_json, p->catalog = js->catalog, p->store = store;
    p->state_dir = state_dir;
    if (scv_run_params_check(p, err)) {
        js->bad_setting = 1;
        return err->code ? err->code : SCV_EINVAL;
    }
    if ((rc = setup_driver_checks(js, names, values, n, err))) return rc;
    return scv_host_limits_check(js, names, values, n, err); /* what the run may take of this host */
}

int scv_job_setup_driver(const scv_job_setup *js, scv_job_driver **out, scv_err *err)
{
    if (!strcmp(js->driver, "elastic")) return scv_elastic_driver_new(&js->drv_opts, out, err);
    if (!strcmp(js->driver, "exec")) return scv_exec_driver_new(&js->drv_opts, out, err);
    return scv_relaunch_driver_new(&js->drv_opts, out, err);
}

void scv_job_setup_free(scv_job_setup *js)
{
    for (int i = 0; js->train_opts && js->train_opts[i]; i++) free((char *)js->train_opts[i]);
    free(js->train_opts);
    free(js->job_json);
    free(js->vms);
    scv_catalog_free(js->catalog);
    memset(js, 0, sizeof *js);
}
