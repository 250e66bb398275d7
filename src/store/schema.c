/*
 * schema.c - the store's schema as SQL text (schema.h): the tables of a new store and each
 * migration of an older one, with the version range it applies to, and what tells a
 * Scavenger store from another program's database. store.c runs them.
 */
#include "schema.h"

#include <stddef.h>
#include <stdio.h>

const char *const SCV_STORE_SCHEMA1_RUNS =
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, created REAL, job_key TEXT,"
    " job TEXT, status TEXT, actual_time REAL, actual_cost REAL, accuracy REAL, reached INTEGER);";

const char *const SCV_STORE_SCHEMA =
    "CREATE TABLE IF NOT EXISTS measurements(run INTEGER REFERENCES runs(id), phase TEXT, vm TEXT,"
    " workers INTEGER, batch INTEGER, iterations INTEGER, t_compute REAL, t_comm REAL, t_iter REAL,"
    " g_local REAL, g_global REAL, epoch_progress REAL, t_latency REAL);"
    "CREATE TABLE IF NOT EXISTS models(run INTEGER REFERENCES runs(id), kind TEXT, json TEXT, created REAL);"
    "CREATE TABLE IF NOT EXISTS decisions(run INTEGER REFERENCES runs(id), created REAL, kind TEXT,"
    " workers INTEGER, batch INTEGER, vm TEXT, predicted_time REAL, predicted_cost REAL, reason TEXT);"
    "CREATE TABLE IF NOT EXISTS switches(run INTEGER REFERENCES runs(id), created REAL, from_workers INTEGER,"
    " from_batch INTEGER, to_workers INTEGER, to_batch INTEGER, idle_s REAL);"
    "CREATE TABLE IF NOT EXISTS targets(run INTEGER REFERENCES runs(id), job_key TEXT, accuracy REAL,"
    " epochs REAL, batch INTEGER, metric TEXT DEFAULT 'accuracy');"
    "CREATE TABLE IF NOT EXISTS steps(run INTEGER REFERENCES runs(id), idx INTEGER, phase TEXT,"
    " workers INTEGER, batch INTEGER, iterations INTEGER, first_start REAL, last_end REAL,"
    " idle_before REAL, t_iter REAL, accuracy REAL, reached INTEGER, vm TEXT);"
    "CREATE TABLE IF NOT EXISTS evals(run INTEGER REFERENCES runs(id), workers INTEGER, batch INTEGER,"
    " iteration INTEGER, samples REAL, epoch REAL, accuracy REAL, loss REAL, train_loss REAL,"
    " train_loss_samples REAL);"
    "CREATE TABLE IF NOT EXISTS stragglers(run INTEGER REFERENCES runs(id), created REAL, iteration INTEGER,"
    " worker INTEGER, host TEXT, ratio REAL, replaced INTEGER, by_host TEXT, idle_s REAL, note TEXT);"
    "CREATE INDEX IF NOT EXISTS runs_job ON runs(job_key);";

const scv_store_migration SCV_STORE_MIGRATIONS[] = {
    /* 2: the loop's state (its steps' table is created by SCV_STORE_SCHEMA) */
    {0, 1, "ALTER TABLE runs ADD COLUMN state TEXT;"},
    /* 3: loss targets (targets.metric; the value stays in targets.accuracy); early schema-1
     * databases have no targets table: it is created in its old form first */
    {1, 2,
     "CREATE TABLE IF NOT EXISTS targets(run INTEGER REFERENCES runs(id), job_key TEXT, accuracy REAL,"
     " epochs REAL, batch INTEGER);"
     "ALTER TABLE targets ADD COLUMN metric TEXT DEFAULT 'accuracy';"},
    /* 3: the period-mean training loss of each evaluation (evals exists from 2) */
    {2, 2, "ALTER TABLE evals ADD COLUMN train_loss REAL; ALTER TABLE evals ADD COLUMN train_loss_samples REAL;"},
    /* 5: the latency probe's time of each measurement */
    {1, 4, "ALTER TABLE measurements ADD COLUMN t_latency REAL;"},
    /* 6: the process a running run lives in ("HOST:PID:START"): a run whose process is gone
     * is not shown as running */
    {0, 5, "ALTER TABLE runs ADD COLUMN owner TEXT;"},
    /* 7: a running run's latest forecast (NULL when none): when it was written, the time
     * left, its band, P(reach), overdue, nominal */
    {0, 6,
     "ALTER TABLE runs ADD COLUMN eta_written REAL; ALTER TABLE runs ADD COLUMN eta_s REAL;"
     " ALTER TABLE runs ADD COLUMN eta_lo_s REAL; ALTER TABLE runs ADD COLUMN eta_hi_s REAL;"
     " ALTER TABLE runs ADD COLUMN eta_p_reach REAL; ALTER TABLE runs ADD COLUMN eta_overdue INTEGER;"
     " ALTER TABLE runs ADD COLUMN eta_nominal INTEGER;"},
    /* 8: the VM type each step trained on (NULL: the run's own, before 8) */
    {2, 7, "ALTER TABLE steps ADD COLUMN vm TEXT;"},
    /* 9: why a run ended as it did (scv_store_run_end; NULL while it runs and when it is done) */
    {0, 8, "ALTER TABLE runs ADD COLUMN reason TEXT;"},
    /* 9: a run stored as running before schema 6 kept no owner, so its end can never be
     * judged: it is stored interrupted, saying so (it stays resumable) */
    {1, 8,
     "UPDATE runs SET status='interrupted', reason='its process is not known: stored as running by a build "
     "before schema 6, which kept no owner; taken as interrupted when the store moved to schema 9 "
     "(resumable with scavenger run --resume)' WHERE status='running' AND owner IS NULL;"},
    {0, 0, NULL},
};

const char *const SCV_STORE_IDENTITY_SQL =
    "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version),"
    " (SELECT count(*) FROM sqlite_master),"
    " (SELECT count(*) FROM pragma_table_info('runs') WHERE name IN ('id','created','job_key','job','status')),"
    " (SELECT count(*) FROM sqlite_master WHERE type='table'),"
    " (SELECT group_concat(name, ', ') FROM (SELECT name FROM sqlite_master WHERE type='table' ORDER BY name LIMIT 5)),"
    " (SELECT journal_mode FROM pragma_journal_mode)";

int scv_store_foreign(unsigned app_id, int version, int n_objects, int runs_cols, int n_tables, const char *tables,
                      char *why, size_t cap)
{
    if (app_id == SCV_STORE_APPLICATION_ID) return 0;
    if (app_id) {
        snprintf(why, cap, "an SQLite database of another program (application id 0x%08x)", app_id);
        return 1;
    }
    if (n_objects == 0 && version == 0) return 0; /* new */
    if (version >= 1 && version < SCV_STORE_SCHEMA_VERSION && runs_cols == 5) return 0; /* before schema 9 */
    snprintf(why, cap, "an SQLite database without a Scavenger schema (tables %s%s; user_version %d)",
             tables ? tables : "none", n_tables > 5 ? ", ..." : "", version);
    return 1;
}
