/*
 * rundocs.c - the service's documents of the store's runs (service.c routes to them): the
 * runs list (paged, filtered), a run's document (GET /api/runs/ID: the store's rows of the
 * run, the newest plan, its report and its submission), a run's report files and its logs
 * from a byte offset, its series (iteration time and noise scale from its segment files);
 * what a read without the token does not see (an external trainer's command, hostfiles,
 * paths) hidden; the list and the documents kept in a response cache while the store and the
 * report file are unchanged.
 */
#define _GNU_SOURCE
#include "http.h"
#include "../core/rundir.h"
#include "../io/io.h"
#include "../io/json_out.h"
#include "../io/metrics_line.h"
#include "search/jobopts.h"
#include "search/report.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void jnum(FILE *f, const char *name, double v, int comma)
{
    scv_json_num(f, name, "%.15g", v, comma); /* the API's numbers to 15 digits */
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

void svc_cache_free(svc_state *s)
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
static int run_row_json(svc_state *s, FILE *f, const scv_run_summary *r, scv_err *err)
{
    pthread_mutex_lock(&s->store_mu);
    int rc = scv_run_row_json(s->store, f, r, err);
    pthread_mutex_unlock(&s->store_mu);
    return rc;
}

char *svc_runs_list(svc_state *s, struct MHD_Connection *c, int full, unsigned *code, char *field, size_t fcap,
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
    for (size_t i = 0; i < n && !rc; i++) {
        if (i) fputc(',', f);
        if (!full)
            hide_job_key(rs[i].job_key, sizeof rs[i].job_key), svc_scrub_quoted(rs[i].why),
                svc_scrub_quoted(rs[i].reason);
        rc = run_row_json(s, f, &rs[i], &err);
    }
    fprintf(f, "],\"total\":%lld,\"limit\":%lld,\"offset\":%lld}", total, limit, offset);
    free(rs);
    if (rc) { /* a damaged store: the error, not a shortened list */
        fclose(f);
        free(buf);
        free(key);
        *code = 500;
        snprintf(msg, mcap, "%s", err.msg);
        return NULL;
    }
    *code = 200;
    if (svc_mem_close(f, &buf)) cache_put(s, key, version, NULL, NULL, buf);
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
    else if (svc_run_path(&s->cfg, id, "report.json", path, cap)) path[0] = 0; /* none: read as absent */
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
enum MHD_Result svc_run_file(svc_state *s, struct MHD_Connection *c, long long id, const char *rest, int full)
{
    char *job = malloc(65536), st[64], path[1400];
    scv_err err = {0};
    if (!job) return svc_send_json(c, 500, NULL);
    pthread_mutex_lock(&s->store_mu);
    int rc = scv_store_run_get(s->store, id, job, 65536, st, sizeof st, &err);
    pthread_mutex_unlock(&s->store_mu);
    if (rc) {
        free(job);
        return svc_send_error(c, rc == SCV_ENOTFOUND ? 404 : 500, NULL, rc == SCV_ENOTFOUND ? "no such run" : err.msg);
    }
    if (!full && !run_files_open(job)) {
        free(job);
        return svc_send_error(c, 401, NULL, "this run's job names an external trainer, a hostfile or a path: its report "
                                        "and logs need Authorization: Bearer TOKEN");
    }
    if (!strncmp(rest, "files/", 6)) {
        const char *name = rest + 6, *type = NULL;
        for (size_t i = 0; i < sizeof REPORT_FILES / sizeof REPORT_FILES[0]; i++)
            if (!strcmp(name, REPORT_FILES[i].name)) type = REPORT_FILES[i].type;
        report_path(s, id, job, path, sizeof path);
        free(job);
        if (!type) return svc_send_error(c, 404, NULL, "no such file (report.md, report.json, tradeoff.svg)");
        char *slash = strrchr(path, '/');
        if (slash) snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", name);
        char *text = read_small(path, 16u << 20);
        if (!text) return svc_send_error(c, 404, NULL, "the run has no report (yet): it is written when the run ends");
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
    static const char *const FILES[] = {NULL, SCV_RUN_JOB_LOG, SCV_RUN_TRAINER_LOG}; /* in the run's directory */
    char paths[3][1400];
    int have[3] = {0, 0, 0};
    struct stat sb;
    have[0] = svc_sub_log_path(s, id, paths[0], sizeof paths[0]) && stat(paths[0], &sb) == 0;
    for (int i = 1; i < 3; i++) {
        have[i] = !svc_run_path(&s->cfg, id, FILES[i], paths[i], sizeof paths[i]) && stat(paths[i], &sb) == 0 &&
                  S_ISREG(sb.st_mode);
    }
    const char *want = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    const char *off = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
    int pick = -1;
    for (int i = 0; i < 3; i++)
        if (want ? !strcmp(want, NAMES[i]) : have[i] && pick < 0) pick = i;
    if (want && pick < 0) return svc_send_error(c, 400, "name", "query 'name': expected run, job or trainer");
    long long offset = -1;
    if (off) {
        char *e = NULL;
        errno = 0;
        offset = strtoll(off, &e, 10);
        if (!*off || *e || errno || offset < 0)
            return svc_send_error(c, 400, "offset", "query 'offset': expected a byte offset >= 0");
    }
    if (pick < 0 || !have[pick])
        return svc_send_error(c, 404, NULL, pick < 0 ? "the run has no log here (a run of the command line keeps its "
                                                   "output on its terminal)"
                                                 : "no such log for this run");
    FILE *f = fopen(paths[pick], "rb");
    if (!f || fstat(fileno(f), &sb)) {
        if (f) fclose(f);
        return svc_send_error(c, 404, NULL, "no such log for this run");
    }
    long long size = sb.st_size, start = offset < 0 ? (size > LOG_CHUNK ? size - LOG_CHUNK : 0) : offset;
    int reset = start > size; /* the log was started again (a resume): from its beginning */
    if (reset) start = 0;
    size_t want_n = (size_t)(size - start < LOG_CHUNK ? size - start : LOG_CHUNK), n = 0;
    char *buf = malloc(want_n + 1);
    if (buf && !fseeko(f, (off_t)start, SEEK_SET)) n = fread(buf, 1, want_n, f);
    fclose(f);
    if (!buf) return svc_send_json(c, 500, NULL);
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
    return svc_send_json(c, 200, out);
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
char *svc_run_detail(svc_state *s, long long id, int full, unsigned *code, char *msg, size_t mcap)
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
            if (!full)
                hide_job_key(sum.job_key, sizeof sum.job_key), svc_scrub_quoted(sum.why),
                    svc_scrub_quoted(sum.reason);
            size_t len = 0;
            FILE *f = open_memstream(&head, &len);
            if (f) {
                fputs("{\"run\":", f);
                scv_run_summary_json(f, &sum);
                fprintf(f, ",\"job\":%s", !job_ok ? "null" : full ? job : shown ? shown : "null");
                for (size_t i = 0; i < N_ROW_TABLES; i++) fprintf(f, ",\"%s\":%s", ROW_TABLES[i], rows[i]);
                fprintf(f, ",\"report\":%s", report ? report : "null");
                if (svc_mem_close(f, &head)) cache_put(s, key, version, path, stamp, head);
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

char *svc_run_series(svc_state *s, long long id, unsigned *code)
{
    char dir[1200];
    struct dirent **names = NULL;
    int nn = svc_run_path(&s->cfg, id, NULL, dir, sizeof dir) ? -1 : scandir(dir, &names, seg_filter, alphasort);
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
    char *out = svc_mem_close(f, &buf);
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


