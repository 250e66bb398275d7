/*
 * service.c - the HTTP side of `scavenger serve` on libmicrohttpd (one thread per
 * connection, so a server-sent-events stream may wait; connections bounded per address and
 * overall, silent ones closed and trickling ones cut at a request deadline: svc_limits):
 * routing, the bearer token on every write (and on every API call when listening off
 * loopback), request bodies bounded (413), /api/plan's space bounded (422 naming the limit),
 * JSON errors that name the field (400), 404 and 405, and the API's documents:
 *   GET  /api/health, /api/runs (paged, job and status filters), /api/runs/ID (the run's
 *        phases, measurements, models with the latest plan's points, decisions, switches,
 *        evaluations and its report),
 *        /api/runs/ID/series (iteration time and noise scale over the run, from its
 *        segments' metrics files), /api/runs/ID/files/NAME (its report: report.md,
 *        report.json, tradeoff.svg), /api/runs/ID/log (a window of its log from a byte
 *        offset, LOG_CHUNK at most), /api/runs/ID/events (server-sent events: the run's
 *        document each time it changes, then "end"), /api/submissions[/N], /api/catalog,
 *        /api/clusters;
 *   POST /api/runs (submit a job), /api/runs/ID/stop, /api/runs/ID/resume,
 *        /api/submissions/N/stop, /api/plan (scv_plan_json on posted metrics: a read, no
 *        token needed where reads need none);
 *   GET  /, /app.js, /app.css: the dashboard, built into the binary (web_assets.c).
 * The store is one connection behind a mutex; the submissions are jobs.c's. docs/API.md
 * documents every call.
 */
#define _GNU_SOURCE
#include "http.h"
#include "../core/util.h"
#include "../io/io.h"
#include "../io/json_out.h"
#include "../io/metrics_line.h"
#include "../runtime/cluster.h"
#include "drivers/hostlimits.h"
#include "search/jobopts.h"
#include "search/report.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- small JSON writers on a FILE (open_memstream) ---- */

static void jnum(FILE *f, const char *name, double v, int comma)
{
    scv_json_num(f, name, "%.15g", v, comma); /* the API's numbers to 15 digits */
}

/* Closes the memstream: the text, or NULL when a write failed (out of memory). */
static char *mem_close(FILE *f, char **buf)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        free(*buf);
        *buf = NULL;
    }
    return *buf;
}

/* ---- responses ---- */

typedef struct req {
    char *body;
    size_t len;
    size_t held;                /* bytes counted against max_body_total (svc_body_reserve) */
    int too_big, is_post, busy; /* busy: no room for the body among the requests in flight */
} req;

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned code, char *buf, size_t len, const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *c, unsigned code, char *json)
{
    if (!json) {
        static const char oom[] = "{\"error\":\"out of memory\"}";
        char *b = strdup(oom);
        return b ? send_buf(c, 500, b, strlen(b), "application/json") : MHD_NO;
    }
    return send_buf(c, code, json, strlen(json), "application/json");
}

/* {"error": msg, "field": field} (field omitted when NULL or empty) */
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *field, const char *msg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return send_json(c, 500, NULL);
    fputs("{\"error\":", f);
    scv_json_str(f, msg);
    if (field && *field) {
        fputs(",\"field\":", f);
        scv_json_str(f, field);
    }
    fputc('}', f);
    return send_json(c, code, mem_close(f, &buf));
}

/* {"error": msg, "field": field, "limit": name, "max": value}: a request over one of the
 * service's limits (field omitted when NULL) */
static enum MHD_Result send_field_limit(struct MHD_Connection *c, unsigned code, const char *field, const char *msg,
                                        const char *name, double value)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return send_json(c, 500, NULL);
    fputs("{\"error\":", f);
    scv_json_str(f, msg);
    if (field && *field) {
        fputs(",\"field\":", f);
        scv_json_str(f, field);
    }
    fputs(",\"limit\":", f);
    scv_json_str(f, name);
    fprintf(f, ",\"max\":%.0f}", value);
    return send_json(c, code, mem_close(f, &buf));
}

static enum MHD_Result send_limit(struct MHD_Connection *c, unsigned code, const char *msg, const char *name,
                                  double value)
{
    return send_field_limit(c, code, NULL, msg, name, value);
}

enum MHD_Result svc_send_json(struct MHD_Connection *c, unsigned code, char *json) { return send_json(c, code, json); }

enum MHD_Result svc_send_error(struct MHD_Connection *c, unsigned code, const char *field, const char *msg)
{
    return send_error(c, code, field, msg);
}

enum MHD_Result svc_send_busy(struct MHD_Connection *c, const char *msg, const char *name, double max,
                              unsigned retry_s)
{
    char *buf = NULL, retry[16];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return send_json(c, 500, NULL);
    fputs("{\"error\":", f);
    scv_json_str(f, msg);
    fputs(",\"limit\":", f);
    scv_json_str(f, name);
    fprintf(f, ",\"max\":%.0f,\"retry_after_s\":%u}", max, retry_s);
    if (!mem_close(f, &buf)) return send_json(c, 500, NULL);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(buf), buf, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(buf);
        return MHD_NO;
    }
    snprintf(retry, sizeof retry, "%u", retry_s);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
    enum MHD_Result ret = MHD_queue_response(c, 503, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- the response cache ----
 * Clients poll (the dashboard every few seconds, a script in a loop, an SSE stream every
 * 300 ms), so the runs list and a run's detail are kept as last built and sent again while
 * nothing they are made of changed: the store (SQLite's data_version moves with every commit
 * of another connection; this service's own connection only reads) and, for a detail, its
 * report.json (the run writes it after its last commit). The version is read before the
 * queries, so a commit racing them leaves an entry that the next request finds stale. */

/* A file's identity: inode, size and modification time; "-" when absent. */
static void file_stamp(const char *path, char *buf, size_t cap)
{
    struct stat st;
    if (stat(path, &st)) snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%llu %lld %lld.%09ld", (unsigned long long)st.st_ino, (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/* The cached body of key (a copy) if still valid, else NULL; *version gets the store's
 * current data_version (-1 when it cannot be read: nothing is then cached). */
static char *cache_get(svc_state *s, const char *key, long long *version)
{
    char *out = NULL;
    pthread_mutex_lock(&s->store_mu);
    if (scv_store_data_version(s->store, version, NULL)) *version = -1;
    for (int i = 0; i < SVC_CACHE_SLOTS && *version >= 0; i++) {
        svc_cache_slot *c = &s->cache[i];
        if (!c->key || strcmp(c->key, key) || c->version != *version) continue;
        char stamp[96];
        if (c->file) file_stamp(c->file, stamp, sizeof stamp);
        if (c->file && strcmp(stamp, c->stamp)) break;
        c->used = ++s->cache_clock;
        out = strdup(c->body);
        break;
    }
    pthread_mutex_unlock(&s->store_mu);
    return out;
}

/* Keeps body for key as built at version; file (or NULL) with its stamp taken before it was read. */
static void cache_put(svc_state *s, const char *key, long long version, const char *file, const char *stamp,
                      const char *body)
{
    if (version < 0) return;
    pthread_mutex_lock(&s->store_mu);
    svc_cache_slot *c = &s->cache[0];
    for (int i = 0; i < SVC_CACHE_SLOTS; i++) { /* the same key, else the least recently used */
        if (s->cache[i].key && !strcmp(s->cache[i].key, key)) {
            c = &s->cache[i];
            break;
        }
        if (s->cache[i].used < c->used) c = &s->cache[i];
    }
    free(c->key), free(c->file), free(c->body);
    memset(c, 0, sizeof *c);
    c->key = strdup(key), c->body = strdup(body), c->file = file ? strdup(file) : NULL;
    if (c->key && c->body && (!file || c->file)) {
        c->version = version, c->used = ++s->cache_clock;
        snprintf(c->stamp, sizeof c->stamp, "%s", stamp ? stamp : "");
    } else { /* out of memory: no entry */
        free(c->key), free(c->file), free(c->body);
        memset(c, 0, sizeof *c);
    }
    pthread_mutex_unlock(&s->store_mu);
}

static void cache_free(svc_state *s)
{
    for (int i = 0; i < SVC_CACHE_SLOTS; i++) {
        free(s->cache[i].key), free(s->cache[i].file), free(s->cache[i].body);
        memset(&s->cache[i], 0, sizeof s->cache[i]);
    }
}

/* ---- the API's documents ---- */

/* What a read without the token does not show (docs/API.md, "Who may read what"): an
 * external trainer's command, hostfiles and every path a job names (the built-in dataset
 * names are not paths). The dashboard shows the rest; with the token, everything. */

static int hidden_setting(const char *name, const char *val)
{
    if (!strcmp(name, "exec") || !strcmp(name, "hosts") || !strcmp(name, "report")) return 1;
    const scv_option *o = scv_job_option_find(name);
    if (!o || !(o->flags & SCV_OPT_PATH)) return 0;
    return !(val && !strcmp(name, "dataset") && (!strcmp(val, "fashion-mnist") || !strncmp(val, "synthetic:", 10)));
}

/* An external trainer's job key ("exec=COMMAND") without its command. */
static void hide_job_key(char *key, size_t cap)
{
    if (!strncmp(key, "exec=", 5)) snprintf(key, cap, "exec=" SVC_HIDDEN);
}

/* A stored job's JSON with the hidden settings' values replaced (malloc'ed; NULL: not JSON). */
static char *hide_job(const char *job)
{
    cJSON *o = cJSON_Parse(job);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON *shown = cJSON_CreateObject();
    for (const cJSON *it = o->child; it && shown; it = it->next) {
        int hide = hidden_setting(it->string, cJSON_IsString(it) ? it->valuestring : NULL);
        cJSON *v = hide ? cJSON_CreateString(SVC_HIDDEN) : cJSON_Duplicate(it, 1);
        if (!v || !cJSON_AddItemToObject(shown, it->string, v)) {
            cJSON_Delete(v);
            cJSON_Delete(shown);
            shown = NULL;
        }
    }
    char *out = shown ? cJSON_PrintUnformatted(shown) : NULL;
    cJSON_Delete(shown);
    cJSON_Delete(o);
    return out;
}

/* A report's "job" (its job key) without an external trainer's command; the text is kept
 * when there is none (malloc'ed copy; NULL when out of memory). */
static char *hide_report(const char *report)
{
    if (!strstr(report, "\"exec=")) return strdup(report);
    cJSON *o = cJSON_Parse(report);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "job");
    if (cJSON_IsString(j) && !strncmp(j->valuestring, "exec=", 5))
        cJSON_ReplaceItemInObjectCaseSensitive(o, "job", cJSON_CreateString("exec=" SVC_HIDDEN));
    char *out = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return out;
}

/* One run of the list (scv_run_row_json, the writer `runs --json` shares), under the store's lock. */
static void run_row_json(svc_state *s, FILE *f, const scv_run_summary *r)
{
    pthread_mutex_lock(&s->store_mu);
    scv_run_row_json(s->store, f, r);
    pthread_mutex_unlock(&s->store_mu);
}

static char *runs_list(svc_state *s, struct MHD_Connection *c, int full, unsigned *code, char *field, size_t fcap,
                       char *msg, size_t mcap)
{
    long long limit = 50, offset = 0;
    const char *names[] = {"limit", "offset"};
    long long *vals[] = {&limit, &offset};
    for (int i = 0; i < 2; i++) {
        const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, names[i]);
        if (!v) continue;
        char *e = NULL;
        errno = 0;
        long long x = strtoll(v, &e, 10);
        if (!*v || *e || errno || x < 0 || (i == 0 && (x < 1 || x > 1000))) {
            *code = 400;
            snprintf(field, fcap, "%s", names[i]);
            snprintf(msg, mcap, "query '%s': expected %s", names[i], i == 0 ? "an integer from 1 to 1000" : "an integer >= 0");
            return NULL;
        }
        *vals[i] = x;
    }
    const char *job = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "job");
    const char *status = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "status");
    if (!full && job && !strncmp(job, "exec=", 5)) { /* the count would tell a hidden command */
        *code = 401;
        snprintf(field, fcap, "job");
        snprintf(msg, mcap, "query 'job': a filter on an external trainer's command needs Authorization: Bearer TOKEN");
        return NULL;
    }
    char *key = NULL;
    long long version;
    if (asprintf(&key, "list%d %lld %lld %s\n%s", full, limit, offset, job ? job : "", status ? status : "") < 0)
        return NULL;
    char *hit = cache_get(s, key, &version);
    if (hit) {
        free(key);
        *code = 200;
        return hit;
    }
    scv_run_summary *rs = NULL;
    size_t n = 0;
    long long total = 0;
    scv_err err = {0};
    pthread_mutex_lock(&s->store_mu);
    int rc = scv_store_runs_page(s->store, job, status, limit, offset, &rs, &n, &total, &err);
    pthread_mutex_unlock(&s->store_mu);
    if (rc) {
        free(key);
        *code = 500;
        snprintf(msg, mcap, "%s", err.msg);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        free(key);
        free(rs);
        return NULL;
    }
    fputs("{\"runs\":[", f);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', f);
        if (!full) hide_job_key(rs[i].job_key, sizeof rs[i].job_key), svc_scrub_quoted(rs[i].why);
        run_row_json(s, f, &rs[i]);
    }
    fprintf(f, "],\"total\":%lld,\"limit\":%lld,\"offset\":%lld}", total, limit, offset);
    free(rs);
    *code = 200;
    if (mem_close(f, &buf)) cache_put(s, key, version, NULL, NULL, buf);
    free(key);
    return buf;
}

/* A whole small file (at most cap bytes), NUL-terminated; NULL when absent or larger. */
static char *read_small(const char *path, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *b = malloc(cap + 1);
    size_t n = b ? fread(b, 1, cap + 1, f) : 0;
    int bad = ferror(f) || n > cap;
    fclose(f);
    if (!b || bad) {
        free(b);
        return NULL;
    }
    b[n] = 0;
    return b;
}

/* Where the run's report.json is: in its job's report directory, else in its run directory. */
static void report_path(svc_state *s, long long id, const char *job, char *path, size_t cap)
{
    cJSON *o = job ? cJSON_Parse(job) : NULL;
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "report");
    if (cJSON_IsString(rep)) snprintf(path, cap, "%s/report.json", rep->valuestring);
    else snprintf(path, cap, "%s.runs/%lld/report.json", s->cfg.db, id);
    cJSON_Delete(o);
}

/* The report at path as one line (an SSE data field), or NULL when absent or not whole JSON. */
static char *read_report(const char *path)
{
    char *r = read_small(path, 16u << 20);
    if (!r) return NULL;
    cJSON *chk = cJSON_Parse(r); /* only a whole JSON document goes out */
    int ok = chk != NULL;
    cJSON_Delete(chk);
    if (!ok) {
        free(r);
        return NULL;
    }
    for (char *p = r; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return r;
}

/* ---- a run's files: its report (report.md, report.json, tradeoff.svg) and its logs ---- */

/* Whether a read without the token may have a run's files: its stored job names no hidden
 * setting (an external trainer's command, a hostfile, a path), the service's own report
 * directory aside; the report and the logs would show them. */
static int run_files_open(const char *job)
{
    cJSON *o = cJSON_Parse(job);
    int open = o && cJSON_IsObject(o);
    for (const cJSON *it = open ? o->child : NULL; it && open; it = it->next)
        if (strcmp(it->string, "report") && hidden_setting(it->string, cJSON_IsString(it) ? it->valuestring : NULL))
            open = 0;
    cJSON_Delete(o);
    return open;
}

static const struct {
    const char *name, *type;
} REPORT_FILES[] = {{"report.md", "text/plain; charset=utf-8"},
                    {"report.json", "application/json"},
                    {"tradeoff.svg", "image/svg+xml"}};

#define LOG_CHUNK (64u << 10) /* bytes of a log one GET /api/runs/ID/log returns at most */

/* Sends a file of the run: the report's (files/NAME) or a window of a log (log). */
static enum MHD_Result run_file(svc_state *s, struct MHD_Connection *c, long long id, const char *rest, int full)
{
    char *job = malloc(65536), st[64], path[1400];
    scv_err err = {0};
    if (!job) return send_json(c, 500, NULL);
    pthread_mutex_lock(&s->store_mu);
    int rc = scv_store_run_get(s->store, id, job, 65536, st, sizeof st, &err);
    pthread_mutex_unlock(&s->store_mu);
    if (rc) {
        free(job);
        return send_error(c, rc == SCV_ENOTFOUND ? 404 : 500, NULL, rc == SCV_ENOTFOUND ? "no such run" : err.msg);
    }
    if (!full && !run_files_open(job)) {
        free(job);
        return send_error(c, 401, NULL, "this run's job names an external trainer, a hostfile or a path: its report "
                                        "and logs need Authorization: Bearer TOKEN");
    }
    if (!strncmp(rest, "files/", 6)) {
        const char *name = rest + 6, *type = NULL;
        for (size_t i = 0; i < sizeof REPORT_FILES / sizeof REPORT_FILES[0]; i++)
            if (!strcmp(name, REPORT_FILES[i].name)) type = REPORT_FILES[i].type;
        report_path(s, id, job, path, sizeof path);
        free(job);
        if (!type) return send_error(c, 404, NULL, "no such file (report.md, report.json, tradeoff.svg)");
        char *slash = strrchr(path, '/');
        if (slash) snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", name);
        char *text = read_small(path, 16u << 20);
        if (!text) return send_error(c, 404, NULL, "the run has no report (yet): it is written when the run ends");
        struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            free(text);
            return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        MHD_add_response_header(r, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
        enum MHD_Result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    free(job);
    /* the log: run (`scavenger run`'s output, for a run this service started), job (the
     * elastic driver's training job), trainer (an external trainer's output) */
    static const char *const NAMES[] = {"run", "job", "trainer"};
    char paths[3][1400];
    int have[3] = {0, 0, 0};
    struct stat sb;
    have[0] = svc_sub_log_path(s, id, paths[0], sizeof paths[0]) && stat(paths[0], &sb) == 0;
    for (int i = 1; i < 3; i++) {
        snprintf(paths[i], sizeof paths[i], "%s.runs/%lld/%s.log", s->cfg.db, id, NAMES[i]);
        have[i] = stat(paths[i], &sb) == 0 && S_ISREG(sb.st_mode);
    }
    const char *want = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    const char *off = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
    int pick = -1;
    for (int i = 0; i < 3; i++)
        if (want ? !strcmp(want, NAMES[i]) : have[i] && pick < 0) pick = i;
    if (want && pick < 0) return send_error(c, 400, "name", "query 'name': expected run, job or trainer");
    long long offset = -1;
    if (off) {
        char *e = NULL;
        errno = 0;
        offset = strtoll(off, &e, 10);
        if (!*off || *e || errno || offset < 0)
            return send_error(c, 400, "offset", "query 'offset': expected a byte offset >= 0");
    }
    if (pick < 0 || !have[pick])
        return send_error(c, 404, NULL, pick < 0 ? "the run has no log here (a run of the command line keeps its "
                                                   "output on its terminal)"
                                                 : "no such log for this run");
    FILE *f = fopen(paths[pick], "rb");
    if (!f || fstat(fileno(f), &sb)) {
        if (f) fclose(f);
        return send_error(c, 404, NULL, "no such log for this run");
    }
    long long size = sb.st_size, start = offset < 0 ? (size > LOG_CHUNK ? size - LOG_CHUNK : 0) : offset;
    int reset = start > size; /* the log was started again (a resume): from its beginning */
    if (reset) start = 0;
    size_t want_n = (size_t)(size - start < LOG_CHUNK ? size - start : LOG_CHUNK), n = 0;
    char *buf = malloc(want_n + 1);
    if (buf && !fseeko(f, (off_t)start, SEEK_SET)) n = fread(buf, 1, want_n, f);
    fclose(f);
    if (!buf) return send_json(c, 500, NULL);
    for (size_t i = 0; i < n; i++) /* control bytes but newlines and tabs shown as '?' */
        if ((unsigned char)buf[i] < 0x20 && buf[i] != '\n' && buf[i] != '\t') buf[i] = '?';
    buf[n] = 0;
    cJSON *o = cJSON_CreateObject(), *names = cJSON_AddArrayToObject(o, "names");
    for (int i = 0; i < 3; i++)
        if (have[i]) cJSON_AddItemToArray(names, cJSON_CreateString(NAMES[i]));
    cJSON_AddStringToObject(o, "name", NAMES[pick]);
    cJSON_AddNumberToObject(o, "offset", (double)start);
    cJSON_AddNumberToObject(o, "next", (double)(start + (long long)n));
    cJSON_AddNumberToObject(o, "size", (double)size);
    cJSON_AddBoolToObject(o, "reset", reset);
    cJSON_AddNumberToObject(o, "max_bytes", LOG_CHUNK);
    cJSON_AddStringToObject(o, "text", buf);
    free(buf);
    char *out = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return send_json(c, 200, out);
}

static const char *const ROW_TABLES[] = {"steps", "measurements", "evals", "decisions", "switches", "models",
                                         "stragglers"};
#define N_ROW_TABLES (sizeof ROW_TABLES / sizeof ROW_TABLES[0])

/* The loop stores each plan's points as a models row of kind "plan" (the live trade-off);
 * the document keeps only the newest, so it stays the size of one plan however often the
 * run re-plans. *models is replaced (left as it is when there is at most one, or on error). */
static void keep_last_plan(char **models)
{
    const char *mark = "\"kind\":\"plan\"", *p = strstr(*models, mark);
    if (!p || !strstr(p + 1, mark)) return;
    cJSON *a = cJSON_Parse(*models), *last = NULL, *it, *next;
    cJSON_ArrayForEach(it, a) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
        if (cJSON_IsString(k) && !strcmp(k->valuestring, "plan")) last = it;
    }
    for (it = a ? a->child : NULL; it; it = next) {
        next = it->next;
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
        if (it != last && cJSON_IsString(k) && !strcmp(k->valuestring, "plan"))
            cJSON_Delete(cJSON_DetachItemViaPointer(a, it));
    }
    char *out = a ? cJSON_PrintUnformatted(a) : NULL;
    cJSON_Delete(a);
    if (!out) return;
    free(*models);
    *models = out;
}

/* GET /api/runs/ID: NULL with *code 404 (no run) or 500. The document up to its report is
 * what the store and the report file say (cached); the submission is this service's state. */
static char *run_detail(svc_state *s, long long id, int full, unsigned *code, char *msg, size_t mcap)
{
    char key[48], path[1400], stamp[96] = "";
    long long version;
    snprintf(key, sizeof key, "run %lld %d", id, full);
    char *head = cache_get(s, key, &version);
    *code = 500;
    if (!head) {
        scv_run_summary sum;
        char *rows[N_ROW_TABLES] = {0};
        char *job = malloc(65536), status[64];
        scv_err err = {0};
        if (!job) return NULL;
        pthread_mutex_lock(&s->store_mu);
        int rc = scv_store_run_summary(s->store, id, &sum, &err);
        if (!rc) rc = scv_store_run_get(s->store, id, job, 65536, status, sizeof status, &err);
        for (size_t i = 0; i < N_ROW_TABLES && !rc; i++)
            rc = scv_store_run_rows_json(s->store, id, ROW_TABLES[i], &rows[i], &err);
        pthread_mutex_unlock(&s->store_mu);
        for (size_t i = 0; i < N_ROW_TABLES && !rc; i++)
            if (!strcmp(ROW_TABLES[i], "models")) keep_last_plan(&rows[i]);
        if (rc) {
            *code = rc == SCV_ENOTFOUND ? 404 : 500;
            snprintf(msg, mcap, "%s", rc == SCV_ENOTFOUND ? "no such run" : err.msg);
        } else {
            cJSON *jo = cJSON_Parse(job);
            int job_ok = jo != NULL;
            cJSON_Delete(jo);
            report_path(s, id, job, path, sizeof path);
            file_stamp(path, stamp, sizeof stamp); /* before reading: a later change is a miss */
            char *report = read_report(path), *shown = NULL;
            if (!full && report) {
                char *h = hide_report(report);
                free(report);
                report = h;
            }
            if (!full && job_ok) shown = hide_job(job);
            if (!full) hide_job_key(sum.job_key, sizeof sum.job_key), svc_scrub_quoted(sum.why);
            size_t len = 0;
            FILE *f = open_memstream(&head, &len);
            if (f) {
                fputs("{\"run\":", f);
                scv_run_summary_json(f, &sum);
                fprintf(f, ",\"job\":%s", !job_ok ? "null" : full ? job : shown ? shown : "null");
                for (size_t i = 0; i < N_ROW_TABLES; i++) fprintf(f, ",\"%s\":%s", ROW_TABLES[i], rows[i]);
                fprintf(f, ",\"report\":%s", report ? report : "null");
                if (mem_close(f, &head)) cache_put(s, key, version, path, stamp, head);
            }
            free(report);
            free(shown);
        }
        for (size_t i = 0; i < N_ROW_TABLES; i++) free(rows[i]);
        free(job);
        if (!head) return NULL;
    }
    long long sub = svc_sub_of_run(s, id, 0);
    char *subj = sub ? svc_sub_json(s, sub, full) : NULL, *out = NULL;
    if (asprintf(&out, "%s,\"submission\":%s}", head, subj ? subj : "null") < 0) out = NULL;
    free(head);
    free(subj);
    *code = out ? 200 : 500;
    return out;
}

/* ---- GET /api/runs/ID/series: the iterations of the run's segment files, in buckets ---- */

typedef struct it_pt {
    double iter, ts, k, b, t_iter, gl, gg, loss, ep;
} it_pt;

static int seg_filter(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return !strncmp(e->d_name, "seg-", 4) && n > 6 && !strcmp(e->d_name + n - 6, ".jsonl");
}

#define SERIES_MAX_ITERS 500000
#define SERIES_POINTS 400

static char *run_series(svc_state *s, long long id, unsigned *code)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s.runs/%lld", s->cfg.db, id);
    struct dirent **names = NULL;
    int nn = scandir(dir, &names, seg_filter, alphasort);
    it_pt *pts = NULL;
    size_t n = 0, cap = 0;
    scv_err bad = {0}; /* the first iteration line the strict reader refused (skipped) */
    for (int i = 0; i < nn; i++) {
        char path[1500];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        FILE *f = fopen(path, "r");
        char *line = NULL;
        size_t lcap = 0;
        int lineno = 0;
        while (f && n < SERIES_MAX_ITERS && getline(&line, &lcap, f) > 0) {
            lineno++;
            if (!strstr(line, "\"iter\"")) continue; /* not an iteration line (a quick look) */
            scv_metrics_line m;
            scv_err le = {0};
            int lrc = scv_metrics_line_parse(line, names[i]->d_name, lineno, &m, &le);
            if (m.type != SCV_ML_ITER) continue; /* another type, or a line being written */
            if (lrc) {
                if (!bad.code) bad = le;
                continue;
            }
            const scv_ml_iter *x = &m.u.iter;
            it_pt p = {x->iter, x->ts, x->workers, x->batch, x->t_iter, x->g_local, x->g_global, x->loss,
                       x->epoch_progress};
            if (n == cap) {
                size_t c = cap ? 2 * cap : 1024;
                it_pt *a = realloc(pts, c * sizeof *a);
                if (!a) break;
                pts = a, cap = c;
            }
            pts[n++] = p;
        }
        free(line);
        if (f) fclose(f);
    }
    for (int i = 0; i < nn; i++) free(names[i]);
    free(names);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        free(pts);
        *code = 500;
        return NULL;
    }
    /* buckets of consecutive iterations at one configuration: means of the times and of
     * the squared norms (the noise scale is a ratio of averages) */
    size_t per = n / SERIES_POINTS + 1, out_n = 0;
    fprintf(f, "{\"run\":%lld,\"iterations\":%zu,\"per_point\":%zu,\"points\":[", id, n, per);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double t = 0, gl = 0, gg = 0, loss = 0;
        int m = 0;
        while (j < n && j - i < per && pts[j].k == pts[i].k && pts[j].b == pts[i].b) {
            t += pts[j].t_iter, gl += pts[j].gl, gg += pts[j].gg, loss += pts[j].loss;
            m++, j++;
        }
        const it_pt *l = &pts[j - 1];
        double bs = scv_gns_b_simple((int)l->k, (int)l->b, gl / m, gg / m);
        fprintf(f, "%s{\"iter\":%.0f", out_n++ ? "," : "", l->iter);
        jnum(f, "ts", l->ts, 1);
        fprintf(f, ",\"workers\":%d,\"batch\":%d", (int)l->k, (int)l->b);
        jnum(f, "t_iter", t / m, 1);
        jnum(f, "b_simple", bs, 1);
        jnum(f, "loss", loss / m, 1);
        jnum(f, "epoch", l->ep, 1);
        fputc('}', f);
        i = j;
    }
    fputc(']', f);
    if (bad.code) { /* named: file, line, field */
        fputs(",\"error\":", f);
        scv_json_str(f, bad.msg);
    }
    fputc('}', f);
    free(pts);
    char *out = mem_close(f, &buf);
    *code = out ? 200 : 500;
    return out;
}

/* Terminal: the store's status is final and no submission of this service is active. */
int svc_run_finished(svc_state *s, long long id)
{
    scv_run_summary sum;
    pthread_mutex_lock(&s->store_mu);
    int rc = scv_store_run_summary(s->store, id, &sum, NULL);
    pthread_mutex_unlock(&s->store_mu);
    if (rc) return 1;
    if (svc_sub_of_run(s, id, 1)) return 0;
    return strcmp(sum.status, "running") != 0;
}

char *svc_run_detail(svc_state *s, long long id, int full, unsigned *code, char *msg, size_t mcap)
{
    return run_detail(s, id, full, code, msg, mcap);
}

/* ---- catalog and clusters ---- */

static char *catalog_json(const scv_catalog *cat)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fputs("{\"vms\":[", f);
    for (size_t i = 0; cat && i < cat->n; i++) {
        const scv_vm_type *v = &cat->vms[i];
        fputs(i ? ",{\"provider\":" : "{\"provider\":", f);
        scv_json_str(f, v->provider);
        fputs(",\"name\":", f);
        scv_json_str(f, v->name);
        fprintf(f, ",\"vcpus\":%d,\"gpus\":%d", v->vcpus, v->gpus);
        jnum(f, "mem_gib", v->mem_gib, 1);
        jnum(f, "ondemand", v->ondemand, 1);
        jnum(f, "spot_min", v->spot_min, 1);
        jnum(f, "spot_max", v->spot_max, 1);
        jnum(f, "net_gbps", v->net_gbps, 1);
        fputc('}', f);
    }
    fputs("]}", f);
    return mem_close(f, &buf);
}

static char *clusters_json(void)
{
    char names[8192];
    scv_cluster_list(names, sizeof names);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fputs("{\"clusters\":[", f);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(names, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
        scv_cluster c;
        scv_err err = {0};
        fputs(n++ ? ",{\"name\":" : "{\"name\":", f);
        scv_json_str(f, t);
        if (scv_cluster_load(t, &c, &err)) {
            fputs(",\"status\":\"broken\",\"error\":", f);
            scv_json_str(f, err.msg);
            fputc('}', f);
            continue;
        }
        fprintf(f, ",\"status\":\"up\",\"vms\":[");
        for (int i = 0; i < c.n; i++) {
            char addr[32];
            scv_cluster_addr(&c, i + 1, addr, sizeof addr);
            fprintf(f, "%s{\"vm\":%d,\"addr\":\"%s\",\"type\":", i ? "," : "", i + 1, addr);
            scv_json_str(f, c.vm[i].name);
            fputs(",\"catalog_type\":", f);
            scv_json_str(f, c.vm[i].catalog_type);
            jnum(f, "cores", c.vm[i].cores, 1);
            jnum(f, "quota_cores", c.quota[i], 1);
            jnum(f, "bandwidth_mbit", c.vm[i].bandwidth_mbit, 1);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("]}", f);
    return mem_close(f, &buf);
}

/* ---- POST handlers ---- */

static enum MHD_Result post_run(svc_state *s, struct MHD_Connection *c, const req *q)
{
    char *job = NULL, field[64];
    scv_err err = {0};
    if (svc_job_check(&s->cfg, s->store, q->body ? q->body : "", &job, field, sizeof field, &err)) {
        /* over what a run may take of this host (drivers/hostlimits.c): the limit named, with its value here */
        int thr = strstr(err.msg, "max_local_threads") != NULL, mem = strstr(err.msg, "max_local_memory") != NULL;
        if (err.code == SCV_EINFEASIBLE && (thr || mem)) {
            scv_host_limits hl = scv_host_limits_default();
            if (s->cfg.host_limits[0]) (void)scv_host_limits_parse(s->cfg.host_limits, &hl, NULL);
            return send_field_limit(c, 422, field, err.msg, thr ? "max_local_threads" : "max_local_memory",
                                    thr ? (double)hl.max_threads : hl.max_mem_bytes);
        }
        return send_error(c, err.code == SCV_ENOMEM ? 500 : err.code == SCV_EINFEASIBLE ? 422 : 400, field, err.msg);
    }
    long long id;
    int rc = svc_submit(s, job, 0, &id, &err);
    free(job);
    if (rc) return send_error(c, rc == SCV_ERANGE ? 503 : 500, NULL, err.msg);
    return send_json(c, 202, svc_sub_json(s, id, 1));
}

static enum MHD_Result post_plan(svc_state *s, struct MHD_Connection *c, const req *q, int full)
{
    const char *body = q->body ? q->body : "";
    cJSON *o = cJSON_Parse(body);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return send_error(c, 400, "body", "body: not a JSON object");
    }
    static const char *const files[] = {"profile", "catalog", "target_run"};
    for (int i = 0; i < 3 && (!s->cfg.allow_paths || !full); i++) /* files: with the token only */
        if (cJSON_GetObjectItemCaseSensitive(o, files[i])) {
            cJSON_Delete(o);
            char m[200];
            snprintf(m, sizeof m, "field '%s': the service plans from posted metrics (\"metrics\"), not from its files",
                     files[i]);
            return send_error(c, 400, files[i], m);
        }
    cJSON_Delete(o);
    /* the work in flight: a few plans at once, the last one kept for the token's holder */
    if (!svc_plan_begin(s, full)) {
        char m[200];
        snprintf(m, sizeof m, "the service is computing %u plan%s (serve --max-plans%s): try again in a second",
                 s->cfg.lim.max_plans, s->cfg.lim.max_plans == 1 ? "" : "s",
                 full || s->cfg.lim.max_plans < 2 ? "" : "; the last one is kept for the token");
        return svc_send_busy(c, m, "max_plans", s->cfg.lim.max_plans, 1);
    }
    char *res = NULL;
    scv_err err = {0};
    /* without the token a smaller space (docs/API.md, "Who may read what") */
    long open_pts = s->cfg.lim.max_plan_points_open < s->cfg.lim.max_plan_points ? s->cfg.lim.max_plan_points_open
                                                                                  : s->cfg.lim.max_plan_points;
    scv_plan_limits lim = {full ? s->cfg.lim.max_plan_points : open_pts, s->cfg.lim.max_plan_response};
    int rc = scv_plan_json_limited(body, &lim, 0, &res, &err);
    svc_plan_done(s);
    if (rc == SCV_ERANGE) { /* the space or the report over a limit: refused before the work (the space) */
        int pts = strstr(err.msg, "max_points") != NULL, open = pts && !full && open_pts < s->cfg.lim.max_plan_points;
        char m[SCV_ERR_LEN + 200];
        if (open)
            snprintf(m, sizeof m, "%s (without the token a plan's space is at most %ld points: larger ones need "
                     "Authorization: Bearer TOKEN, up to serve --max-plan-points %ld)", err.msg, open_pts,
                     s->cfg.lim.max_plan_points);
        else
            snprintf(m, sizeof m, "%s (this service's limit%s)", err.msg, pts ? ": serve --max-plan-points" : " on a report");
        return send_limit(c, open ? 401 : 422, m, open ? "max_plan_points_open" : pts ? "max_plan_points" : "max_plan_response",
                          pts ? (double)lim.max_points : (double)lim.max_response);
    }
    if (rc) {
        /* the message names the field: 'field' or "field" at its start */
        char field[64] = "";
        const char *a = strpbrk(err.msg, "'\"");
        if (a) {
            const char *b = strchr(a + 1, *a);
            if (b && b - a - 1 < (long)sizeof field) snprintf(field, sizeof field, "%.*s", (int)(b - a - 1), a + 1);
        }
        return send_error(c, rc == SCV_EINFEASIBLE ? 422 : rc == SCV_ENOMEM ? 500 : 400, field, err.msg);
    }
    char *copy = strdup(res);
    scv_json_free(res);
    return send_json(c, 200, copy);
}

/* ---- routing ---- */

int svc_is_loopback(const char *addr)
{
    return !strncmp(addr, "127.", 4) || !strcmp(addr, "localhost") || !strcmp(addr, "::1");
}

/* The Host header names this service (DNS rebinding: a web page whose name was pointed at
 * this address sends its own name). Accepted: on loopback localhost, 127.0.0.1, [::1] and the
 * address listened on, each with the port; off loopback the address listened on (for
 * 0.0.0.0: the address the connection came in on) with the port. The port may be left out
 * only when it is 80. No Host at all (HTTP/1.0 from a program, never a browser) passes. */
static int host_ok(svc_state *s, struct MHD_Connection *c, const char *host)
{
    char port[16], local[INET6_ADDRSTRLEN] = "";
    snprintf(port, sizeof port, "%d", s->bound_port);
    const char *names[4] = {s->cfg.listen_addr, NULL, NULL, NULL};
    if (svc_is_loopback(s->cfg.listen_addr)) {
        names[1] = "localhost", names[2] = "127.0.0.1", names[3] = "[::1]";
    } else if (!strcmp(s->cfg.listen_addr, "0.0.0.0")) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        if (ci && !getsockname(ci->connect_fd, (struct sockaddr *)&sa, &sl) && sa.sin_family == AF_INET)
            inet_ntop(AF_INET, &sa.sin_addr, local, sizeof local);
        names[0] = local;
    }
    const char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
    if (colon && host[0] == '[') colon++;
    size_t hn = colon ? (size_t)(colon - host) : strlen(host);
    for (const char *a = s->cfg.allow_hosts; *a;) { /* the operator's names: any port */
        size_t n = strcspn(a, ",");
        if (n == hn && !strncasecmp(host, a, n)) return 1;
        a += n + (a[n] == ',');
    }
    if (colon ? strcmp(colon + 1, port) : s->bound_port != 80) return 0;
    for (int i = 0; i < 4; i++)
        if (names[i] && names[i][0] && strlen(names[i]) == hn && !strncasecmp(host, names[i], hn)) return 1;
    return 0;
}

/* The headers a browser sends name this service: Host (421 otherwise) and, when present,
 * Origin ("http://" and an accepted Host; 403 otherwise). 0 when a response was queued. */
static int origin_checked(svc_state *s, struct MHD_Connection *c, enum MHD_Result *ret)
{
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    char m[400];
    if (host && !host_ok(s, c, host)) {
        snprintf(m, sizeof m, "header 'Host': '%.200s' does not name this service (%s:%d; on loopback also "
                 "localhost, 127.0.0.1, [::1]): refused against DNS rebinding", host, s->cfg.listen_addr,
                 s->bound_port);
        *ret = send_error(c, 421, "Host", m);
        return 0;
    }
    const char *oh = !origin                         ? NULL
                     : !strncmp(origin, "http://", 7)  ? origin + 7
                     : !strncmp(origin, "https://", 8) ? origin + 8 /* behind a TLS proxy (--allow-host) */
                                                       : "";
    if (origin && !host_ok(s, c, oh)) {
        snprintf(m, sizeof m, "header 'Origin': '%.200s' is not this service's page (http://%s:%d): cross-site "
                 "requests are refused", origin, s->cfg.listen_addr, s->bound_port);
        *ret = send_error(c, 403, "Origin", m);
        return 0;
    }
    return 1;
}

/* The bearer token: the Authorization header, or ?token= where a header cannot be sent (the
 * event stream: a browser's EventSource sends no headers). Constant time in the token's
 * length. */
static int token_ok(svc_state *s, struct MHD_Connection *c, int allow_query)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *t = h && !strncmp(h, "Bearer ", 7) ? h + 7 : NULL;
    if (!t && allow_query) t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (!t) return 0;
    size_t n = strlen(s->cfg.token);
    if (strlen(t) != n) return 0;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++) d |= (unsigned char)(t[i] ^ s->cfg.token[i]);
    return d == 0 && n > 0;
}

/* "123" -> 123 (1 .. 10^15); -1 otherwise */
static long long parse_id(const char *t, size_t len)
{
    if (!len || len > 15) return -1;
    long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] < '0' || t[i] > '9') return -1;
        v = 10 * v + (t[i] - '0');
    }
    return v > 0 ? v : -1;
}

/* /api/runs/ID/events: the one call that may carry ?token= */
static int is_events_url(const char *url)
{
    size_t n = strlen(url);
    return !strncmp(url, "/api/runs/", 10) && n > 17 && !strcmp(url + n - 7, "/events");
}

static enum MHD_Result route(svc_state *s, struct MHD_Connection *c, const char *url, int post, const req *q)
{
    unsigned code = 500;
    char msg[512] = "", field[64] = "";
    enum MHD_Result refused;
    if (!origin_checked(s, c, &refused)) return refused;
    int events = !post && is_events_url(url);
    /* the dashboard */
    if (!post && strncmp(url, "/api/", 5)) {
        const char *p = !strcmp(url, "/") ? "/index.html" : url;
        for (size_t i = 0; i < svc_n_assets; i++)
            if (!strcmp(p, svc_assets[i].path)) {
                struct MHD_Response *r = MHD_create_response_from_buffer(svc_assets[i].len, (void *)svc_assets[i].data,
                                                                         MHD_RESPMEM_PERSISTENT);
                if (!r) return MHD_NO;
                MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, svc_assets[i].type);
                MHD_add_response_header(r, "Content-Security-Policy",
                                        "default-src 'self'; img-src 'self' data:; style-src 'self'; "
                                        "connect-src 'self'; frame-ancestors 'none'");
                MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
                enum MHD_Result ret = MHD_queue_response(c, 200, r);
                MHD_destroy_response(r);
                return ret;
            }
        return send_error(c, 404, NULL, "no such page");
    }
    int full = token_ok(s, c, events); /* with the token a read shows everything (hidden_setting) */
    if (!svc_is_loopback(s->cfg.listen_addr) && !full)
        return send_error(c, 401, NULL, "this service listens off loopback: every call needs Authorization: Bearer "
                                        "TOKEN (?token= only on /api/runs/ID/events)");
    const char *p = url + 5; /* after /api/ */
    /* a plan is a read (it computes from what is posted, stores and starts nothing; its work
     * is bounded by svc_limits): allowed where reads are, the Host/Origin checks above kept */
    if (post && !full && strcmp(p, "plan")) return send_error(c, 401, NULL, "a write needs Authorization: Bearer TOKEN");
    if (!strcmp(p, "health")) {
        if (post) return send_error(c, 405, NULL, "GET only");
        char *b = NULL;
        if (asprintf(&b, "{\"ok\":true,\"version\":\"%s\",\"max_runs\":%d}", SCV_VERSION, s->cfg.max_runs) < 0) b = NULL;
        return send_json(c, 200, b);
    }
    if (!strcmp(p, "runs")) {
        if (post) return post_run(s, c, q);
        char *b = runs_list(s, c, full, &code, field, sizeof field, msg, sizeof msg);
        return b ? send_json(c, code, b) : send_error(c, code, field, msg[0] ? msg : "out of memory");
    }
    if (!strcmp(p, "catalog") || !strcmp(p, "clusters")) {
        if (post) return send_error(c, 405, NULL, "GET only");
        return send_json(c, 200, !strcmp(p, "catalog") ? strdup(s->catalog_json) : clusters_json());
    }
    if (!strcmp(p, "plan")) {
        if (!post) return send_error(c, 405, NULL, "POST only");
        return post_plan(s, c, q, full);
    }
    if (!strcmp(p, "submissions")) {
        if (post) return send_error(c, 405, NULL, "GET only");
        return send_json(c, 200, svc_subs_json(s, full));
    }
    int runs = !strncmp(p, "runs/", 5), subs = !strncmp(p, "submissions/", 12);
    if (runs || subs) {
        const char *t = p + (runs ? 5 : 12), *slash = strchr(t, '/');
        long long id = parse_id(t, slash ? (size_t)(slash - t) : strlen(t));
        const char *rest = slash ? slash + 1 : "";
        if (id < 0) return send_error(c, 404, NULL, runs ? "no such run" : "no such submission");
        scv_err err = {0};
        if (subs) {
            if (!*rest) {
                if (post) return send_error(c, 405, NULL, "GET only");
                char *b = svc_sub_json(s, id, full);
                return b ? send_json(c, 200, b) : send_error(c, 404, NULL, "no such submission");
            }
            if (!strcmp(rest, "stop")) {
                if (!post) return send_error(c, 405, NULL, "POST only");
                int rc = svc_stop_sub(s, id, &err);
                if (rc) return send_error(c, rc == SCV_ENOTFOUND ? 404 : rc == SCV_EINVAL ? 409 : 500, NULL, err.msg);
                return send_json(c, 202, svc_sub_json(s, id, 1));
            }
            return send_error(c, 404, NULL, "no such path");
        }
        if (!*rest) {
            if (post) return send_error(c, 405, NULL, "GET only");
            char *b = run_detail(s, id, full, &code, msg, sizeof msg);
            return b ? send_json(c, code, b) : send_error(c, code, NULL, msg);
        }
        if (!strcmp(rest, "series") || !strcmp(rest, "events")) {
            if (post) return send_error(c, 405, NULL, "GET only");
            if (rest[0] == 'e') return svc_send_events(s, c, id, full);
            scv_run_summary sum;
            pthread_mutex_lock(&s->store_mu);
            int rc = scv_store_run_summary(s->store, id, &sum, NULL);
            pthread_mutex_unlock(&s->store_mu);
            if (rc) return send_error(c, 404, NULL, "no such run");
            char *b = run_series(s, id, &code);
            return send_json(c, code, b);
        }
        if (!strcmp(rest, "log") || !strncmp(rest, "files/", 6)) {
            if (post) return send_error(c, 405, NULL, "GET only");
            return run_file(s, c, id, rest, full);
        }
        if (!strcmp(rest, "stop") || !strcmp(rest, "resume")) {
            if (!post) return send_error(c, 405, NULL, "POST only");
            scv_run_summary sum;
            pthread_mutex_lock(&s->store_mu);
            int rc = scv_store_run_summary(s->store, id, &sum, NULL);
            pthread_mutex_unlock(&s->store_mu);
            if (rc) return send_error(c, 404, NULL, "no such run");
            long long sub = svc_sub_of_run(s, id, 1);
            if (rest[0] == 's') {
                if (!sub) return send_error(c, 409, NULL, "the run is not running in this service");
                if ((rc = svc_stop_sub(s, sub, &err))) return send_error(c, rc == SCV_EINVAL ? 409 : 500, NULL, err.msg);
                return send_json(c, 202, svc_sub_json(s, sub, 1));
            }
            if (sub) return send_error(c, 409, NULL, "the run is queued or running already");
            if (!strcmp(sum.status, "done") || !strcmp(sum.status, "target not reached"))
                return send_error(c, 409, NULL, "the run has finished: nothing to resume");
            /* the stored job passes a submitted job's checks: a CLI run's exec, hosts or paths
             * are not run by a service that would refuse them in a submission */
            char *stored = malloc(65536), st[64];
            if (!stored) return send_json(c, 500, NULL);
            pthread_mutex_lock(&s->store_mu);
            rc = scv_store_run_get(s->store, id, stored, 65536, st, sizeof st, &err);
            pthread_mutex_unlock(&s->store_mu);
            if (!rc) rc = svc_resume_check(&s->cfg, s->store, id, stored, field, sizeof field, &err);
            free(stored);
            if (rc) return send_error(c, rc == SCV_EINFEASIBLE ? 422 : 500, field, err.msg);
            if ((rc = svc_submit(s, NULL, id, &sub, &err))) return send_error(c, rc == SCV_ERANGE ? 503 : 500, NULL, err.msg);
            return send_json(c, 202, svc_sub_json(s, sub, 1));
        }
        return send_error(c, 404, NULL, "no such path");
    }
    return send_error(c, 404, NULL, "no such path");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    svc_state *s = cls;
    req *q = *con_cls;
    if (!q) { /* the headers have arrived */
        int post = !strcmp(method, "POST"), get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
        if (!post && !get) return send_error(c, 405, NULL, "GET, HEAD or POST only");
        if (!(q = calloc(1, sizeof *q))) return MHD_NO;
        q->is_post = post;
        *con_cls = q;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        unsigned long long want = cl ? strtoull(cl, NULL, 10) : 0;
        if (want > s->cfg.max_body) q->too_big = 1;
        if (q->too_big) {
            char m[128];
            snprintf(m, sizeof m, "the request body is larger than %zu bytes (serve --max-body)", s->cfg.max_body);
            return send_limit(c, 413, m, "max_body", (double)s->cfg.max_body);
        }
        /* its body's room among all the bodies held at once, taken before a byte of it arrives */
        if (want && !svc_body_reserve(s, (size_t)want)) q->busy = 1;
        else q->held = (size_t)want;
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body (no Content-Length, or more than it said: counted as it comes) */
        if (!q->busy && q->len + *upload_size > q->held) {
            size_t more = q->len + *upload_size - q->held;
            if (svc_body_reserve(s, more)) q->held += more;
            else q->busy = 1;
        }
        if (q->busy) {
            /* dropped: answered 503 once the request is whole */
        } else if (!q->too_big && q->len + *upload_size <= s->cfg.max_body) {
            char *b = realloc(q->body, q->len + *upload_size + 1);
            if (!b) return MHD_NO;
            memcpy(b + q->len, upload, *upload_size);
            q->body = b;
            q->len += *upload_size;
            b[q->len] = 0;
        } else {
            q->too_big = 1;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (q->too_big) {
        char m[128];
        snprintf(m, sizeof m, "the request body is larger than %zu bytes (serve --max-body)", s->cfg.max_body);
        return send_limit(c, 413, m, "max_body", (double)s->cfg.max_body);
    }
    if (q->busy) {
        char m[160];
        snprintf(m, sizeof m, "the service holds %zu bytes of request bodies at most, all requests together: try "
                 "again in a second", s->cfg.lim.max_body_total);
        return svc_send_busy(c, m, "max_body_total", (double)s->cfg.lim.max_body_total, 1);
    }
    svc_conn_mark(s, c, 1); /* the request arrived whole: no deadline while it is answered */
    if (q->body && strlen(q->body) != q->len) return send_error(c, 400, "body", "body: contains a NUL byte");
    return route(s, c, url, q->is_post, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    svc_conn_mark(cls, c, 0); /* answered: the next request on it has its own deadline */
    req *q = *con_cls;
    if (q) {
        svc_body_release(cls, q->held);
        free(q->body);
    }
    free(q);
    *con_cls = NULL;
}

int svc_start(svc_state *s, scv_err *err)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)s->cfg.port);
    const char *a = !strcmp(s->cfg.listen_addr, "localhost") ? "127.0.0.1" : s->cfg.listen_addr;
    if (inet_pton(AF_INET, a, &sa.sin_addr) != 1)
        return scv_err_set(err, SCV_EINVAL, "--listen '%s': expected an IPv4 address", s->cfg.listen_addr);
    static const svc_limits dflt = SVC_LIMITS_DEFAULT; /* a limit left 0 takes its default */
    if (!s->cfg.lim.max_conns) s->cfg.lim.max_conns = dflt.max_conns;
    if (!s->cfg.lim.max_conns_per_ip) s->cfg.lim.max_conns_per_ip = dflt.max_conns_per_ip;
    if (!s->cfg.lim.conn_timeout_s) s->cfg.lim.conn_timeout_s = dflt.conn_timeout_s;
    if (!s->cfg.lim.max_plan_points) s->cfg.lim.max_plan_points = dflt.max_plan_points;
    if (!s->cfg.lim.max_plan_response) s->cfg.lim.max_plan_response = dflt.max_plan_response;
    if (!s->cfg.lim.request_timeout_s) s->cfg.lim.request_timeout_s = dflt.request_timeout_s;
    if (!s->cfg.lim.max_plan_points_open) s->cfg.lim.max_plan_points_open = dflt.max_plan_points_open;
    if (!s->cfg.lim.max_plans) s->cfg.lim.max_plans = dflt.max_plans;
    if (!s->cfg.lim.max_streams) s->cfg.lim.max_streams = dflt.max_streams;
    if (!s->cfg.lim.max_streams_per_run) s->cfg.lim.max_streams_per_run = dflt.max_streams_per_run;
    if (!s->cfg.lim.max_body_total) s->cfg.lim.max_body_total = dflt.max_body_total;
    if (s->cfg.lim.max_body_total < s->cfg.max_body) s->cfg.lim.max_body_total = s->cfg.max_body; /* one fits */
    pthread_mutex_init(&s->store_mu, NULL);
    pthread_mutex_init(&s->jobs_mu, NULL);
    pthread_mutex_init(&s->conns_mu, NULL);
    pthread_mutex_init(&s->admit_mu, NULL);
    pthread_mutex_init(&s->feeds_mu, NULL);
    int rc = scv_store_open(s->cfg.db, &s->store, err);
    if (rc) return rc;
    char catbuf[4200];
    scv_catalog *cat = NULL;
    if (scv_catalog_load(scv_data_file("vm-catalog.csv", catbuf, sizeof catbuf), &cat, err) == SCV_OK) {
        s->catalog_json = catalog_json(cat);
        scv_catalog_free(cat);
    } else {
        s->catalog_json = strdup("{\"vms\":[]}");
    }
    if (!s->catalog_json) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    if ((rc = svc_jobs_start(s, err))) return rc;
    /* the threads started from here on (libmicrohttpd's) inherit this thread's nice value
     * (a per-thread attribute on Linux); the manager thread, and so the runs it starts, keep
     * the service's own. Best effort: a failure leaves them equal. */
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, 0);
    if (!(nice_now == -1 && errno) && s->cfg.http_nice > 0) (void)setpriority(PRIO_PROCESS, 0, nice_now + s->cfg.http_nice);
    /* One thread per connection (poll): a server-sent-events stream and a request that
     * computes (a plan) wait in their own thread, and a slow client holds only its own thread,
     * idle in poll. What clients share is the number of connections: bounded per address and
     * overall, and a silent connection is closed (svc_limits). Each connection needs a file
     * descriptor: the soft limit is raised towards the hard one to hold max_conns. */
    struct rlimit nof;
    rlim_t want = (rlim_t)s->cfg.lim.max_conns + 256;
    if (!getrlimit(RLIMIT_NOFILE, &nof) && nof.rlim_cur != RLIM_INFINITY && nof.rlim_cur < want) {
        nof.rlim_cur = nof.rlim_max == RLIM_INFINITY || nof.rlim_max > want ? want : nof.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nof);
    }
    s->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION, (uint16_t)s->cfg.port,
                                 NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
                                 svc_on_connection, s, MHD_OPTION_CONNECTION_LIMIT, s->cfg.lim.max_conns,
                                 /* per address: conns.c (the oldest waiting one closed, not the new one) */
                                 MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.lim.conn_timeout_s,
                                 MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
    if (s->daemon && !pthread_create(&s->reaper, NULL, svc_reaper_main, s)) s->reaper_started = 1;
    if (!s->daemon)
        return scv_err_set(err, SCV_EIO, "cannot listen on %s:%d (in use, or not an address of this machine)",
                           s->cfg.listen_addr, s->cfg.port);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->bound_port = di ? di->port : s->cfg.port;
    return SCV_OK;
}

void svc_stop(svc_state *s)
{
    s->stopping = 1;
    if (s->reaper_started) pthread_join(s->reaper, NULL);
    s->reaper_started = 0;
    if (s->daemon) MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    svc_jobs_stop(s, 30);
    scv_store_close(s->store);
    s->store = NULL;
    free(s->catalog_json);
    s->catalog_json = NULL;
    free(s->subs);
    s->subs = NULL;
    cache_free(s);
    svc_feeds_free(s);
}
