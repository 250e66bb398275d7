/*
 * rundir.h - where a run keeps its files, in one place: the runs of a run store DB keep
 * their files in DB.runs/ (the loop's scv_run_params.state_dir), each run in DB.runs/ID/
 * (its segment files, checkpoints, logs, report). Every path to a run's directory or to a
 * file in it is built here, so a caller never spells ".runs" or "%lld" itself; a path
 * that does not fit its buffer is an error naming it, never a truncated path.
 */
#ifndef SCV_CORE_RUNDIR_H
#define SCV_CORE_RUNDIR_H
#include <stddef.h>
#include "scv.h"

#define SCV_RUNS_DIR_SUFFIX ".runs"
/* The files of a run's directory that more than one part names (the rest are a driver's
 * own): the trainer's checkpoint (every driver's; report.c names it), the elastic job's
 * directory (its command, reply and log) and its log (the service's `job` log), an
 * external trainer's output (the service's `trainer` log). */
#define SCV_RUN_CKPT_DIR "ckpt"
#define SCV_RUN_ELASTIC_DIR "elastic"
#define SCV_RUN_JOB_LOG SCV_RUN_ELASTIC_DIR "/job.log"
#define SCV_RUN_TRAINER_LOG "trainer.log"

/* DB.runs: the directory of the runs of the run store at db. */
int scv_runs_dir_path(const char *db, char *buf, size_t cap, scv_err *err);
/* RUNS/ID: the directory of run run_id (> 0) under runs_dir (scv_runs_dir_path's); with a
 * name, RUNS/ID/NAME, a file in it (name NULL: the directory). */
int scv_run_dir_path(const char *runs_dir, long long run_id, const char *name, char *buf, size_t cap, scv_err *err);
/* RUN_DIR/NAME: a file in a run's directory, where the caller has the directory (a driver is
 * handed it by the loop's open) rather than the store and the run's number. */
int scv_run_file_path(const char *run_dir, const char *name, char *buf, size_t cap, scv_err *err);
#endif
