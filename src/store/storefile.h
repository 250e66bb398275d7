/*
 * storefile.h - the store's file on disk apart from SQLite (src/store/storefile.c), private to
 * the store layer: the checks before SQLite opens a path, the reserve of disk space kept for a
 * run's end, and the process that owns a running run.
 */
#ifndef SCV_STOREFILE_H
#define SCV_STOREFILE_H

#include "scv.h"

#include <stddef.h>

/* The store's file-level policy. */
typedef struct scv_store_file_policy {
    size_t reserve_bytes;       /* 256 KiB: the reserve kept beside a store a run writes (PATH.reserve),
                                   given up to store the run's end on a full disk; the largest end
                                   write rewrites a run's row with its job (up to 64 KiB) in the WAL */
    int reserve_share;          /* 8: never more than 1/8 of the space free when it is made */
} scv_store_file_policy;
extern const scv_store_file_policy SCV_STORE_FILE_POLICY;

/* Checks path before SQLite opens it. Missing: with create, its directory must exist (an
 * error naming it, SCV_EIO), else SCV_ENOTFOUND ("no store there yet"). Present: a regular
 * file, and one name only: a file with hard links is refused (SCV_EINVAL naming the count):
 * SQLite keys its write-ahead log (PATH-wal) and its lock by the name, so writers through two
 * names keep two logs and lose each other's commits. *exists says which. */
int scv_store_file_check(const char *path, int create, int *exists, scv_err *err);

/* The reserve beside the store at canonical path db (db.reserve): made when missing, best
 * effort (a disk too full for it keeps none); released (deleted: its space back) to store a
 * run's end on a full disk. Release returns 0 when there was one to give up. */
void scv_store_reserve_make(const char *db);
int scv_store_reserve_release(const char *db);

/* The SQLite URI that opens path immutable (read-only, no locks, no shared memory: a store
 * in a directory where its -shm cannot be made): file:PATH?immutable=1, PATH percent-encoded. */
void scv_store_immutable_uri(const char *path, char *buf, size_t cap);
/* 1 when the write-ahead log of the store at canonical path db (db-wal) holds frames. */
int scv_store_wal_has_frames(const char *db);

/* This process as a run's owner: "HOST:PID:START" (START: its start time since boot, so a
 * reused pid names another process). */
void scv_store_owner_self(char *buf, size_t cap);

/* Why a run stored as running shows SCV_RUN_GONE (store.h): its owner ("HOST:PID:START")
 * ended without storing the run's end. */
void scv_store_gone_reason(const char *owner, char *buf, size_t cap);

#endif /* SCV_STOREFILE_H */
