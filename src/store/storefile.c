/*
 * storefile.c - the store's file on disk apart from SQLite (storefile.h): what a path must be
 * before SQLite opens it (its directory there, a regular file, one name: a hard-linked store is
 * refused, since SQLite keys its write-ahead log by the name), the path's canonical form (a
 * store's identity for a lock), the reserve of disk space that lets a run's end be stored on a
 * full disk, and the process that owns a running run ("HOST:PID:START").
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include "storefile.h"
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

const scv_store_file_policy SCV_STORE_FILE_POLICY = {.reserve_bytes = 256 * 1024, .reserve_share = 8};

/* A database that does not exist yet is created in its directory: one that is missing (or
 * not a directory) is named, with the path, where SQLite says only "unable to open database
 * file". */
static int check_dir(const char *path, scv_err *err)
{
    char dir[4096];
    struct stat st;
    const char *sl = strrchr(path, '/');
    if (!sl) return SCV_OK; /* the working directory */
    snprintf(dir, sizeof dir, "%.*s", sl == path ? 1 : (int)(sl - path), path);
    if (stat(dir, &st)) {
        int e = errno;
        return scv_err_set(err, SCV_EIO, "%s: cannot create the database: its directory %s: %s%s", path, dir,
                           strerror(e), e == ENOENT ? " (create it first, or choose another path)" : "");
    }
    if (!S_ISDIR(st.st_mode))
        return scv_err_set(err, SCV_EIO, "%s: cannot create the database: %s is not a directory", path, dir);
    return SCV_OK;
}

int scv_store_file_check(const char *path, int create, int *exists, scv_err *err)
{
    struct stat st;
    *exists = 0;
    if (!path[0]) return scv_err_set(err, SCV_EINVAL, "the database path is empty");
    if (stat(path, &st)) {
        int e = errno;
        if (e != ENOENT && e != ENOTDIR) /* there, but not reachable: SQLite reports what is wrong */
            return SCV_OK;
        if (create) return check_dir(path, err);
        int rc = check_dir(path, err); /* a missing directory is named as for a run */
        return rc ? rc : scv_err_set(err, SCV_ENOTFOUND, "%s: no such store (no run stored there yet)", path);
    }
    *exists = 1;
    if (S_ISDIR(st.st_mode)) return scv_err_set(err, SCV_EINVAL, "%s: a directory, not a database file", path);
    if (S_ISREG(st.st_mode) && st.st_nlink > 1)
        return scv_err_set(err, SCV_EINVAL,
                           "%s: the store has %lu names (hard links): SQLite keeps its write-ahead log and "
                           "its locks by name, so runs through two names would each keep a log of their own "
                           "and lose each other's runs; keep one name (find the others with `find / -xdev "
                           "-samefile %s`, remove them) and use a symbolic link for a second path",
                           path, (unsigned long)st.st_nlink, path);
    return SCV_OK;
}

int scv_store_canonical(const char *path, char *buf, size_t cap, scv_err *err)
{
    char full[PATH_MAX];
    if (realpath(path, full)) {
        if (strlen(full) >= cap) return scv_err_set(err, SCV_ERANGE, "%s: its path is too long", path);
        snprintf(buf, cap, "%s", full);
        return SCV_OK;
    }
    /* not there yet: its directory's canonical path and its name */
    char dir[PATH_MAX];
    const char *sl = strrchr(path, '/'), *base = sl ? sl + 1 : path;
    if (!sl) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", sl == path ? 1 : (int)(sl - path), path);
    if (!*base || !realpath(dir, full))
        return scv_err_set(err, SCV_EIO, "%s: cannot resolve its directory %s: %s", path, dir,
                           *base ? strerror(errno) : "no file name");
    int n = snprintf(buf, cap, "%s%s%s", full, strcmp(full, "/") ? "/" : "", base);
    if (n < 0 || (size_t)n >= cap) return scv_err_set(err, SCV_ERANGE, "%s: its path is too long", path);
    return SCV_OK;
}

static void reserve_path(const char *db, char *buf, size_t cap) { snprintf(buf, cap, "%s.reserve", db); }

void scv_store_reserve_make(const char *db)
{
    char path[PATH_MAX + 16];
    struct stat st;
    struct statvfs fs;
    reserve_path(db, path, sizeof path);
    size_t want = SCV_STORE_FILE_POLICY.reserve_bytes;
    if (!stat(path, &st) && (size_t)st.st_blocks * 512 >= want) return; /* there (another run made it) */
    char dir[PATH_MAX];
    const char *sl = strrchr(db, '/');
    snprintf(dir, sizeof dir, "%.*s", sl ? (sl == db ? 1 : (int)(sl - db)) : 1, sl ? db : ".");
    if (statvfs(dir, &fs)) return;
    size_t share = (size_t)((unsigned long long)fs.f_bavail * fs.f_frsize / (unsigned)SCV_STORE_FILE_POLICY.reserve_share);
    if (share < want) want = share & ~(size_t)4095;
    if (want < 4096) return; /* too full for one: none */
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    /* allocated, not a sparse file: its blocks are what a release gives back */
    int e = posix_fallocate(fd, 0, (off_t)want);
    if (!e) e = fsync(fd) ? errno : 0;
    close(fd);
    if (e) unlink(path); /* half made: not kept, it would only take space */
}

int scv_store_reserve_release(const char *db)
{
    char path[PATH_MAX + 16];
    reserve_path(db, path, sizeof path);
    return unlink(path) ? -1 : 0;
}

/* A process's start time in clock ticks since boot (/proc/PID/stat, field 22; 0 when not
 * readable): with the pid it names the process, a reused pid has another. */
static unsigned long long proc_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* after the command name, which may hold spaces */
    unsigned long long start = 0;
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ') field++;
    if (p) start = strtoull(p, NULL, 10);
    return start;
}

void scv_store_owner_self(char *buf, size_t cap)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(buf, cap, "%s:%ld:%llu", host, (long)getpid(), proc_start((long)getpid()));
}

int scv_store_owner_gone(const char *owner)
{
    char host[256] = "", me[256] = "";
    long pid;
    unsigned long long start;
    if (!owner || sscanf(owner, "%255[^:]:%ld:%llu", host, &pid, &start) != 3 || pid < 1) return 0;
    gethostname(me, sizeof me - 1);
    if (strcmp(host, me)) return 0; /* another machine's process: not known here */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 1;
    unsigned long long now = proc_start(pid);
    return start && now && now != start; /* the pid was reused */
}

void scv_store_gone_reason(const char *owner, char *buf, size_t cap)
{
    char host[256] = "?";
    long pid = 0;
    if (owner) sscanf(owner, "%255[^:]:%ld", host, &pid);
    snprintf(buf, cap, "its process (pid %ld on %s) ended without storing how the run ended: killed (SIGKILL, out "
             "of memory), or the store could not be written (a full disk); resumable", pid, host);
}

void scv_store_immutable_uri(const char *path, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c && n + 4 < cap; c++) {
        int plain = strchr("/-._~", *c) || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z');
        n += (size_t)(plain ? snprintf(buf + n, cap - n, "%c", *c) : snprintf(buf + n, cap - n, "%%%02X", *c));
    }
    snprintf(buf + n, cap - n, "?immutable=1");
}

int scv_store_wal_has_frames(const char *db)
{
    char wal[PATH_MAX + 8];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", db);
    return !stat(wal, &st) && st.st_size > 32; /* more than its header */
}
