/*
 * cmd_runs.c - `scavenger runs`: the stored runs at a glance (`runs`), or one in detail
 * (`runs show ID`: its decision against its outcome, why it ended as it did, and every step);
 * --json for machines. Reads the store only, opened read-only (scv_store_open_read); a store
 * that cannot be read is an error (exit 1) with nothing on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "../io/json_out.h"
#include "../search/report.h"
#include "scv.h"
#include "../core/util.h"
#include "job/jobsetup.h"
#include "model/stoprule.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS_USAGE                                                                                                \
    "usage: scavenger runs [--db PATH] [--json]   |   scavenger runs show ID [--db PATH] [--json]\n"                 \
    "       scavenger runs report ID [--db PATH] [--report DIR]\n"

static void when(double t, char *buf, size_t cap)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!isfinite(t) || !gmtime_r(&s, &tm)) snprintf(buf, cap, "-");
    else strftime(buf, cap, "%Y-%m-%d %H:%M", &tm);
}

/* A running run's latest forecast in words (buf "" when it has none): "ETA 3.2 min (2.1 min
 * to 5.0 min), P 0.91", "ETA 3.2 min nominal", "overdue" as the progress line says them. */
#define ETA_AGE_SHOWN_S 10.0
static void eta_text(const struct scv_run_eta *e, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!(e->written > 0) || (!isfinite(e->remaining_s) && !e->overdue)) return; /* none known */
    char t[32], lo[32], hi[32], band[80] = "", p[24] = "", age[48] = "";
    scv_fmt_time(e->remaining_s, t, sizeof t);
    scv_fmt_time(e->remaining_lo_s, lo, sizeof lo);
    scv_fmt_time(e->remaining_hi_s, hi, sizeof hi);
    if (isfinite(e->remaining_lo_s) && isfinite(e->remaining_hi_s)) snprintf(band, sizeof band, " (%s to %s)", lo, hi);
    else if (isfinite(e->remaining_hi_s)) snprintf(band, sizeof band, " (up to %s)", hi);
    if (isfinite(e->p_reach)) snprintf(p, sizeof p, ", P %.2f", e->p_reach);
    double ago = (double)time(NULL) - e->written; /* an old one says how old (evaluations far apart) */
    if (ago >= ETA_AGE_SHOWN_S) {
        char a[32];
        scv_fmt_time(ago, a, sizeof a);
        snprintf(age, sizeof age, " (as of %s ago)", a);
    }
    if (!isfinite(e->remaining_s))
        snprintf(buf, cap, "ETA: overdue, past the %s time; re-estimating at the next evaluation%s",
                 e->nominal ? "nominal" : "predicted", age);
    else if (e->nominal && !e->overdue)
        snprintf(buf, cap, "ETA %s nominal (the target's epochs unknown; not a prediction)%s", t, age);
    else
        snprintf(buf, cap, "ETA %s%s%s%s%s", t, band, p, e->overdue ? ", overdue: re-estimated from the learning curve" : "",
                 age);
}

/* Prints the JSON built in memory (f, over *buf) when rc is SCV_OK: a store read that failed
 * prints nothing on stdout. Frees it; the status. */
static int emit(FILE *f, char **buf, int rc, scv_err *err)
{
    if (fclose(f) && !rc) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (!rc && *buf) fputs(*buf, stdout);
    free(*buf);
    return rc;
}

/* Why a run ended as it did, on a line of its own (nothing when none stored). */
static void reason_line(const scv_run_summary *r, const char *indent)
{
    if (r->reason[0]) printf("%sreason: %s\n", indent, r->reason);
}

static void list_table(scv_store *db, const scv_run_summary *r, size_t n)
{
    printf("%5s  %-16s  %-26s  %-12s  %13s  %10s  %10s  %11s  %s\n", "run", "created (UTC)", "status", "chose",
           "predicted", "actual", "cost", "test acc", "job");
    int nominal = 0, marked[4] = {0};
    for (size_t i = 0; i < n; i++) {
        char c[32], ch[24] = "-", pt[40], at[32], ac[32], acc[24] = "-"; /* "-": no accuracy measured */
        when(r[i].created, c, sizeof c);
        if (r[i].workers) snprintf(ch, sizeof ch, "K=%d B=%d", r[i].workers, r[i].batch);
        scv_fmt_time(r[i].predicted_time_s, pt, sizeof pt);
        if (r[i].nominal && isfinite(r[i].predicted_time_s)) { /* not a prediction: marked, see below */
            size_t len = strlen(pt);
            snprintf(pt + len, sizeof pt - len, " nom.");
            nominal = 1;
        }
        scv_fmt_time(r[i].actual_time_s, at, sizeof at);
        scv_fmt_usd(r[i].actual_cost, ac, sizeof ac);
        if (isfinite(r[i].accuracy)) snprintf(acc, sizeof acc, "%.4f", r[i].accuracy);
        char note[256]; /* reached with the last accuracy under the target: marked, see below */
        int how = r[i].reached && isfinite(r[i].accuracy) ? scv_run_row_reached(db, &r[i], note, sizeof note) : 0;
        if (how >= 2) {
            size_t len = strlen(acc);
            snprintf(acc + len, sizeof acc - len, " %s", how == 2 ? "tol." : "win.");
            marked[how] = 1;
        }
        printf("%5lld  %-16s  %-26s  %-12s  %13s  %10s  %10s  %11s  %s\n", r[i].id, c, r[i].status, ch, pt, at, ac,
               acc, r[i].job_key);
        char eta[256]; /* a running run's forecast, or an ended one's reason, on a line under it */
        eta_text(&r[i].eta, eta, sizeof eta);
        if (eta[0]) printf("%5s  %s\n", "", eta);
        reason_line(&r[i], "       ");
    }
    if (nominal)
        printf("nom.: nominal, not predicted: the target's epochs were unknown at the decision and a nominal "
               "number was assumed (`runs show ID` says how many)\n");
    if (marked[2])
        printf("tol.: reached within the confirmation tolerance " SCV_TARGET_CONFIRM_TOL_TEXT " of its target: the "
               "whole test set's accuracy is under it, its subset evaluations' window at it (`runs show ID`)\n");
    if (marked[3])
        printf("win.: reached by the mean of the evaluation window: the last accuracy is under the target "
               "(`runs show ID`)\n");
}

/* db NULL: there is no store yet (no file), so no runs. */
static int list(scv_store *db, int json, scv_err *err)
{
    scv_run_summary *r = NULL;
    size_t n = 0;
    int rc = db ? scv_store_runs(db, &r, &n, err) : SCV_OK;
    if (rc) return rc;
    if (json) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) {
            free(r);
            return scv_err_set(err, SCV_ENOMEM, "out of memory");
        }
        fputc('[', f);
        for (size_t i = 0; i < n && !rc; i++) {
            if (i) fputc(',', f);
            rc = scv_run_row_json(db, f, &r[i], err);
        }
        fputs("]\n", f);
        rc = emit(f, &buf, rc, err);
    } else if (!n) {
        printf("no runs stored yet: `scavenger run` stores each run\n");
    } else {
        list_table(db, r, n);
    }
    free(r);
    return rc;
}

static void show_steps_json(FILE *f, const scv_run_step *t, size_t n)
{
    fprintf(f, ",\"steps\":[");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"phase\":", i ? "," : "");
        scv_json_str(f, t[i].phase);
        fprintf(f, ",\"workers\":%d,\"batch\":%d,\"iterations\":%lld", t[i].workers, t[i].batch,
                (long long)t[i].iterations);
        scv_json_num(f, "t_iter", "%.6g", t[i].t_iter, 1);
        scv_json_num(f, "idle_before_s", "%.6g", t[i].idle_before, 1);
        scv_json_num(f, "test_accuracy", "%.6g", t[i].accuracy, 1);
        if (t[i].vm[0]) { /* the VM type it trained on (stored from schema 8) */
            fprintf(f, ",\"vm\":");
            scv_json_str(f, t[i].vm);
        }
        fprintf(f, "}");
    }
    fprintf(f, "]}\n");
}

static void show_text(scv_store *db, const scv_run_summary *r, const scv_run_step *t, size_t n)
{
    char c[32], pt[32], pc[32], at[32], ac[32];
    when(r->created, c, sizeof c);
    scv_fmt_time(r->predicted_time_s, pt, sizeof pt);
    scv_fmt_usd(r->predicted_cost, pc, sizeof pc);
    scv_fmt_time(r->actual_time_s, at, sizeof at);
    scv_fmt_usd(r->actual_cost, ac, sizeof ac);
    printf("run %lld, created %s UTC: %s (state %s)\njob %s\n", r->id, c, r->status, r->state[0] ? r->state : "-",
           r->job_key);
    reason_line(r, "");
    char nom[128] = "predicted";
    if (r->nominal && isfinite(r->nominal_epochs))
        snprintf(nom, sizeof nom, "nominal (%.3g epochs at B=%d assumed: the target's epochs were unknown; not a "
                 "prediction)", r->nominal_epochs, r->nominal_batch);
    else if (r->nominal)
        snprintf(nom, sizeof nom, "nominal (the target's epochs were unknown; not a prediction)");
    if (r->workers) printf("chose K=%d, B=%d: %s\n%s %s, %s; actual %s, %s\n", r->workers, r->batch, r->why, nom, pt,
                           pc, at, ac);
    char note[256];
    if (r->reached && scv_run_row_reached(db, r, note, sizeof note) >= 2) printf("%s\n", note);
    char eta[256];
    eta_text(&r->eta, eta, sizeof eta);
    if (eta[0]) printf("%s\n", eta);
    if (!n) { /* no step stored: said, not an empty table */
        printf("\nno step stored%s\n", r->reason[0] ? "" : " yet");
        return;
    }
    printf("\n%3s  %-7s  %4s  %6s  %10s  %12s  %8s  %8s  %s\n", "#", "phase", "K", "B", "iterations",
           "ms/iteration", "idle s", "test acc", "VM");
    for (size_t i = 0; i < n; i++)
        printf("%3zu  %-7s  %4d  %6d  %10lld  %12.2f  %8.2f  %8.4f  %s\n", i + 1, t[i].phase, t[i].workers,
               t[i].batch, (long long)t[i].iterations, 1e3 * t[i].t_iter, t[i].idle_before, t[i].accuracy,
               t[i].vm[0] ? t[i].vm : "-");
}

/* db NULL: there is no store yet (no file at path). */
static int show(scv_store *db, const char *path, long long id, int json, scv_err *err)
{
    if (!db) return scv_err_set(err, SCV_ENOTFOUND, "%s: no run %lld (no run stored there yet)", path, id);
    scv_run_summary r;
    int rc = scv_store_run_summary(db, id, &r, err);
    if (rc) return rc;
    scv_run_step *t;
    size_t n;
    if ((rc = scv_store_load_steps(db, id, &t, &n, err))) return rc;
    if (json) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
        else {
            fprintf(f, "{\"run\":");
            rc = scv_run_row_json(db, f, &r, err);
            show_steps_json(f, t, n);
            rc = emit(f, &buf, rc, err);
        }
    } else {
        show_text(db, &r, t, n);
    }
    free(t);
    return rc;
}

/* `runs report ID`: the run's report written again from the store (report.md, report.json,
 * tradeoff.svg) into dir (NULL: the run's own folder, DB.runs/ID, where `run` writes it):
 * its parameters from its stored job (the run's own setup, src/drivers/jobsetup.c), its
 * result from the store (scv_run_result_load). */
static int report_again(scv_store *db, const char *dbpath, long long id, const char *dir, scv_err *err)
{
    char *job = malloc(65536), status[64], state_dir[1100];
    if (!job) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = scv_store_run_get(db, id, job, 65536, status, sizeof status, err);
    cJSON *o = rc ? NULL : cJSON_Parse(job);
    free(job);
    if (!rc && !cJSON_IsObject(o)) rc = scv_err_set(err, SCV_ECORRUPT, "run %lld's stored job: not a JSON object", id);
    enum { MAXF = 128 };
    char *names[MAXF], *values[MAXF], vals[MAXF][512];
    int n = 0;
    for (const cJSON *it = rc ? NULL : o->child; it && n < MAXF; it = it->next, n++) {
        names[n] = it->string;
        if (cJSON_IsString(it)) snprintf(vals[n], sizeof vals[n], "%s", it->valuestring);
        else snprintf(vals[n], sizeof vals[n], "%.17g", it->valuedouble);
        values[n] = vals[n];
    }
    snprintf(state_dir, sizeof state_dir, "%s.runs", dbpath);
    scv_job_setup js;
    memset(&js, 0, sizeof js);
    scv_err se = {0};
    if (!rc && scv_job_setup_init(&js, names, values, n, db, state_dir, &se))
        rc = scv_err_set(err, se.code ? se.code : SCV_EINVAL, "run %lld's stored job: %s (its report needs the job's "
                         "settings and catalog)", id, se.msg);
    scv_run_result res;
    memset(&res, 0, sizeof res);
    if (!rc) rc = scv_run_result_load(db, id, &js.params, state_dir, &res, err);
    if (!rc) {
        char own[1200];
        snprintf(own, sizeof own, "%s/%lld", state_dir, id);
        if (!dir) dir = own;
        if (!(rc = scv_run_report_dir_ready(dir, err))) rc = scv_run_report_write(&js.params, &res, dir, err);
        if (!rc) printf("run %lld (%s): report written from the store in %s/report.md\n", id, status, dir);
    }
    scv_run_result_free(&res);
    scv_job_setup_free(&js);
    cJSON_Delete(o);
    return rc;
}

enum { R_DB = 1, R_JSON, R_REPORT };
/* runs' options (--help and the completion are made from it) */
const scv_option RUNS_OPTIONS[] = {
    {"db", "PATH", "the run database (default as `scavenger run`)", R_DB, 0, NULL, {0}},
    {"json", NULL, "JSON on stdout", R_JSON, 0, NULL, {0}},
    {"report", "DIR", "`runs report ID`: where (default the run's folder, DB.runs/ID)", R_REPORT, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

int cmd_runs(int argc, char **argv)
{
    const char *dbarg = NULL, *report_dir = NULL;
    int json = 0, report = 0;
    long long id = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf(RUNS_USAGE "\nLists the runs `scavenger run` stored: status, the first decision, its\n"
                              "predicted and actual time and cost; a running run's latest time left to the\n"
                              "target (ETA, its band, P(reach)) under it, an ended run's reason (why it\n"
                              "failed, stopped or missed its target). `show ID` adds every step. Reads the\n"
                              "store read-only; a damaged store is an error (exit 1), never an empty list.\n"
                              "`report ID` writes a run's report again from the store (one that could not be\n"
                              "written, or a run that stopped without one).\n");
            cli_opt_help(stdout, RUNS_OPTIONS, 14, 0);
            return EXIT_OK;
        }
        const scv_option *o = !strncmp(a, "--", 2) ? cli_opt_find(RUNS_OPTIONS, a + 2) : NULL;
        if (o && o->id == R_JSON) json = 1;
        else if (o && o->id == R_DB && i + 1 < argc) dbarg = argv[++i];
        else if (o && o->id == R_REPORT && i + 1 < argc) report_dir = argv[++i];
        else if ((!strcmp(a, "show") || !strcmp(a, "report")) && i + 1 < argc && !id) {
            int64_t v;
            report = a[0] == 'r';
            if (scv_parse_i64(argv[++i], &v) || v < 1)
                return cli_usage_error("runs", RUNS_USAGE, report ? "report '%s': expected a run id"
                                                                  : "show '%s': expected a run id", argv[i]);
            id = v;
        } else return cli_usage_error("runs", RUNS_USAGE, "unexpected argument '%s'", a);
    }
    if (report_dir && !report) return cli_usage_error("runs", RUNS_USAGE, "--report goes with `runs report ID`%s", "");
    if (report && json) return cli_usage_error("runs", RUNS_USAGE, "--json does not go with `runs report ID`%s", "");
    scv_err err = {0};
    char dbpath[1024];
    scv_store *db = NULL;
    int rc = SCV_OK;
    if (dbarg) snprintf(dbpath, sizeof dbpath, "%s", dbarg);
    else rc = cli_default_db(dbpath, sizeof dbpath, &err);
    /* read-only: no lock taken, nothing changed (a store on a read-only disk is listed);
     * no file yet: no runs (`runs report` opens it to write) */
    if (!rc && !report && (rc = scv_store_open_read(dbpath, &db, &err)) == SCV_ENOTFOUND) rc = SCV_OK;
    else if (!rc && report) rc = scv_store_open(dbpath, &db, &err);
    if (!rc) rc = report ? report_again(db, dbpath, id, report_dir, &err) : id ? show(db, dbpath, id, json, &err)
                                                                                 : list(db, json, &err);
    scv_store_close(db);
    if (rc) fprintf(stderr, "scavenger runs: %s\n", err.msg);
    return rc ? EXIT_FAIL : EXIT_OK;
}
