/*
 * rundir.c - the paths of the runs' directories and their files (rundir.h): DB.runs,
 * DB.runs/ID[/NAME] and RUN_DIR/NAME, each checked to fit its buffer.
 */
#include "core/rundir.h"

#include <stdio.h>

int scv_runs_dir_path(const char *db, char *buf, size_t cap, scv_err *err)
{
    if (!db || !db[0]) return scv_err_set(err, SCV_EINVAL, "no run store: its runs' directory has no path");
    int n = snprintf(buf, cap, "%s" SCV_RUNS_DIR_SUFFIX, db);
    if (n < 0 || (size_t)n >= cap) {
        if (cap) buf[0] = 0; /* never a truncated path */
        return scv_err_set(err, SCV_ERANGE, "%s" SCV_RUNS_DIR_SUFFIX ": the runs' directory's path is over %zu bytes",
                           db, cap ? cap - 1 : 0);
    }
    return SCV_OK;
}

int scv_run_dir_path(const char *runs_dir, long long run_id, const char *name, char *buf, size_t cap, scv_err *err)
{
    if (!runs_dir || !runs_dir[0]) return scv_err_set(err, SCV_EINVAL, "run %lld: no runs' directory", run_id);
    if (run_id <= 0) return scv_err_set(err, SCV_EINVAL, "%s: run %lld is not a run's number", runs_dir, run_id);
    int n = name ? snprintf(buf, cap, "%s/%lld/%s", runs_dir, run_id, name)
                 : snprintf(buf, cap, "%s/%lld", runs_dir, run_id);
    if (n < 0 || (size_t)n >= cap) {
        if (cap) buf[0] = 0;
        return scv_err_set(err, SCV_ERANGE, "%s/%lld%s%s: the run's path is over %zu bytes", runs_dir, run_id,
                           name ? "/" : "", name ? name : "", cap ? cap - 1 : 0);
    }
    return SCV_OK;
}

int scv_run_file_path(const char *run_dir, const char *name, char *buf, size_t cap, scv_err *err)
{
    if (!run_dir || !run_dir[0] || !name || !name[0])
        return scv_err_set(err, SCV_EINVAL, "a run's file: no %s", run_dir && run_dir[0] ? "name" : "run directory");
    int n = snprintf(buf, cap, "%s/%s", run_dir, name);
    if (n < 0 || (size_t)n >= cap) {
        if (cap) buf[0] = 0;
        return scv_err_set(err, SCV_ERANGE, "%s/%s: the path is over %zu bytes", run_dir, name, cap ? cap - 1 : 0);
    }
    return SCV_OK;
}
