#!/usr/bin/python3
"""Writes the store fixtures test_store opens (copies of) besides store-v2.db and store-v3.db:
  store-v5-running.db  a run store in schema 5 (before runs had an owner), WAL mode, with run 1
                       left `running` by a process long gone and run 2 done: the move to schema 9
                       stores run 1 interrupted with its reason (test_store run_end);
  foreign-runs.db      another program's SQLite database (rollback journal, user_version 0, no
                       application id) that happens to have a `runs` table: every open refuses it
                       and leaves it byte for byte as it was (test_store foreign).
Run from tests/data/."""
import os, sqlite3

for name in ("store-v5-running.db", "foreign-runs.db"):
    if os.path.exists(name):
        os.unlink(name)

db = sqlite3.connect("store-v5-running.db")
db.execute("PRAGMA journal_mode=WAL")
db.executescript("""
CREATE TABLE runs(id INTEGER PRIMARY KEY, created REAL, job_key TEXT, job TEXT, status TEXT,
 actual_time REAL, actual_cost REAL, accuracy REAL, reached INTEGER, state TEXT);
CREATE TABLE measurements(run INTEGER REFERENCES runs(id), phase TEXT, vm TEXT, workers INTEGER,
 batch INTEGER, iterations INTEGER, t_compute REAL, t_comm REAL, t_iter REAL, g_local REAL,
 g_global REAL, epoch_progress REAL, t_latency REAL);
CREATE TABLE models(run INTEGER REFERENCES runs(id), kind TEXT, json TEXT, created REAL);
CREATE TABLE decisions(run INTEGER REFERENCES runs(id), created REAL, kind TEXT, workers INTEGER,
 batch INTEGER, vm TEXT, predicted_time REAL, predicted_cost REAL, reason TEXT);
CREATE TABLE switches(run INTEGER REFERENCES runs(id), created REAL, from_workers INTEGER,
 from_batch INTEGER, to_workers INTEGER, to_batch INTEGER, idle_s REAL);
CREATE TABLE targets(run INTEGER REFERENCES runs(id), job_key TEXT, accuracy REAL, epochs REAL,
 batch INTEGER, metric TEXT DEFAULT 'accuracy');
CREATE TABLE steps(run INTEGER REFERENCES runs(id), idx INTEGER, phase TEXT, workers INTEGER,
 batch INTEGER, iterations INTEGER, first_start REAL, last_end REAL, idle_before REAL,
 t_iter REAL, accuracy REAL, reached INTEGER);
CREATE TABLE evals(run INTEGER REFERENCES runs(id), workers INTEGER, batch INTEGER,
 iteration INTEGER, samples REAL, epoch REAL, accuracy REAL, loss REAL, train_loss REAL,
 train_loss_samples REAL);
CREATE TABLE stragglers(run INTEGER REFERENCES runs(id), created REAL, iteration INTEGER,
 worker INTEGER, host TEXT, ratio REAL, replaced INTEGER, by_host TEXT, idle_s REAL, note TEXT);
CREATE INDEX runs_job ON runs(job_key);
INSERT INTO runs VALUES(1, 1700000000, 'job-v5', '{}', 'running', NULL, NULL, NULL, 0, 'train');
INSERT INTO runs VALUES(2, 1700000100, 'job-v5', '{}', 'done', 60, 0.01, 0.87, 1, 'done');
INSERT INTO steps VALUES(1, 0, 'warmup', 2, 64, 100, 1700000001, 1700000011, 0, 0.1, 0.5, 0);
PRAGMA user_version=5;
""")
db.commit()
db.close()

db = sqlite3.connect("foreign-runs.db")
db.executescript("""
CREATE TABLE runs(id INTEGER PRIMARY KEY, name TEXT, started TEXT);
CREATE TABLE laps(run INTEGER, seconds REAL);
INSERT INTO runs VALUES(1, 'morning', '2024-05-01');
INSERT INTO laps VALUES(1, 312.5);
""")
db.commit()
db.close()
