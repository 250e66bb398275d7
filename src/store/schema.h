/*
 * schema.h - the store's schema as SQL text (src/store/schema.c), private to the store layer:
 * what a new store is created with, and the migrations of an older one, applied in order by
 * store.c inside one transaction.
 */
#ifndef SCV_STORE_SCHEMA_H
#define SCV_STORE_SCHEMA_H

#include <stddef.h>

/* The schema this build writes (PRAGMA user_version). */
#define SCV_STORE_SCHEMA_VERSION 9
/* PRAGMA application_id of a Scavenger store ("SCVG"), set from schema 9 on. */
#define SCV_STORE_APPLICATION_ID 0x53435647

/* The runs table of schema 1: a new store is created as schema 1 and migrates like an old one. */
extern const char *const SCV_STORE_SCHEMA1_RUNS;
/* Every other table and index in its current form (CREATE ... IF NOT EXISTS). */
extern const char *const SCV_STORE_SCHEMA;

/* A migration: sql runs on a store whose version is within [from_lo, from_hi]. */
typedef struct scv_store_migration {
    int from_lo, from_hi;
    const char *sql;
} scv_store_migration;
/* In order; ends with a NULL sql. */
extern const scv_store_migration SCV_STORE_MIGRATIONS[];

/* What a file is, read in one row before anything changes it: application_id, user_version,
 * the count of its schema objects, of the runs table's schema-1 columns (id, created, job_key,
 * job, status) and of its tables, the first five tables' names, its journal mode. */
extern const char *const SCV_STORE_IDENTITY_SQL;
/* 1 when that row says another program's database (why: what it is, for the refusal); 0 for
 * a Scavenger store (application id SCV_STORE_APPLICATION_ID; before schema 9 none, a version
 * of 1..8 and the runs table of schema 1) and for a new, empty database. */
int scv_store_foreign(unsigned app_id, int version, int n_objects, int runs_cols, int n_tables, const char *tables,
                      char *why, size_t cap);

#endif /* SCV_STORE_SCHEMA_H */
