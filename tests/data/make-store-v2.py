#!/usr/bin/python3
"""Writes store-v2.db: a run store in schema 2 (as Scavenger wrote it before loss targets),
with one finished run, its accuracy target and one evaluation. test_store opens a copy and
checks the migration to schema 3. Run from tests/data/."""
import os, sqlite3
if os.path.exists("store-v2.db"):
    os.unlink("store-v2.db")
db = sqlite3.connect("store-v2.db")
db.executescript("""
CREATE TABLE runs(id INTEGER PRIMARY KEY, created REAL, job_key TEXT, job TEXT, status TEXT,
 actual_time REAL, actual_cost REAL, accuracy REAL, reached INTEGER, state TEXT);
CREATE TABLE measurements(run INTEGER REFERENCES runs(id), phase TEXT, vm TEXT, workers INTEGER,
 batch INTEGER, iterations INTEGER, t_compute REAL, t_comm REAL, t_iter REAL, g_local REAL,
 g_global REAL, epoch_progress REAL);
CREATE TABLE models(run INTEGER REFERENCES runs(id), kind TEXT, json TEXT, created REAL);
CREATE TABLE decisions(run INTEGER REFERENCES runs(id), created REAL, kind TEXT, workers INTEGER,
 batch INTEGER, vm TEXT, predicted_time REAL, predicted_cost REAL, reason TEXT);
CREATE TABLE switches(run INTEGER REFERENCES runs(id), created REAL, from_workers INTEGER,
 from_batch INTEGER, to_workers INTEGER, to_batch INTEGER, idle_s REAL);
CREATE TABLE targets(run INTEGER REFERENCES runs(id), job_key TEXT, accuracy REAL, epochs REAL,
 batch INTEGER);
CREATE TABLE steps(run INTEGER REFERENCES runs(id), idx INTEGER, phase TEXT, workers INTEGER,
 batch INTEGER, iterations INTEGER, first_start REAL, last_end REAL, idle_before REAL,
 t_iter REAL, accuracy REAL, reached INTEGER);
CREATE TABLE evals(run INTEGER REFERENCES runs(id), workers INTEGER, batch INTEGER,
 iteration INTEGER, samples REAL, epoch REAL, accuracy REAL, loss REAL);
CREATE INDEX runs_job ON runs(job_key);
INSERT INTO runs VALUES(1, 1700000000, 'job-v2', '{}', 'done', 60, 0.01, 0.87, 1, 'done');
INSERT INTO targets VALUES(1, 'job-v2', 0.87, 2.5, 64);
INSERT INTO evals VALUES(1, 2, 64, 100, 6400, 0.1067, 0.71, 0.8);
PRAGMA user_version=2;
""")
db.commit()
db.close()
