/*
 * service.c - the HTTP side of `scavenger serve` on libmicrohttpd (one thread per
 * connection, so a server-sent-events stream may wait; connections bounded per address and
 * overall with room kept for a new one, silent ones closed and trickling ones cut at a
 * request deadline: conns.c): routing, the bearer token on every write (and on every API
 * call when listening off loopback), request bodies bounded (413; all of them held at once:
 * 503), /api/plan's space bounded (422 naming the limit; without the token a smaller one)
 * and the plans in flight (503), JSON errors that name the field (400), 404 and 405:
 *   GET  /api/health, /api/runs, /api/runs/ID, /api/runs/ID/series, /api/runs/ID/files/NAME,
 *        /api/runs/ID/log (the store's runs: rundocs.c), /api/runs/ID/events (server-sent
 *        events: the run's document, then its changes as deltas: events.c),
 *        /api/submissions[/N], /api/catalog, /api/clusters;
 *   POST /api/runs (submit a job), /api/runs/ID/stop, /api/runs/ID/resume,
 *        /api/submissions/N/stop, /api/plan (scv_plan_json on posted metrics: a read, no
 *        token needed where reads need none, within its smaller space);
 *   GET  /, /app.js, /app.css: the dashboard, built into the binary (web_assets.c).
 * The store is one connection behind a mutex; the submissions are jobs.c's. docs/API.md
 * documents every call.
 */
#define _GNU_SOURCE
#include "http.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../io/io.h"
#include "../io/json_out.h"
#include "../io/metrics_line.h"
#include "../runtime/cluster.h"
#include "job/hostlimits.h"
#include "search/jobopts.h"
#include "search/report.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
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
char *svc_mem_close(FILE *f, char **buf)
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
    int plan_slot;              /* holds one of max_plans until its answer is sent (on_completed) */
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
    return send_json(c, code, svc_mem_close(f, &buf));
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
    return send_json(c, code, svc_mem_close(f, &buf));
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

enum MHD_Result svc_send_run_error(struct MHD_Connection *c, int rc, const scv_err *err)
{
    return send_error(c, rc == SCV_ENOTFOUND ? 404 : 500, NULL, rc == SCV_ENOTFOUND ? "no such run" : err->msg);
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
    if (!svc_mem_close(f, &buf)) return send_json(c, 500, NULL);
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
    return svc_mem_close(f, &buf);
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
    return svc_mem_close(f, &buf);
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
    int rc = svc_submit(s, job, 0, NULL, &id, &err);
    free(job);
    if (rc) return send_error(c, rc == SCV_ERANGE ? 503 : 500, NULL, err.msg);
    return send_json(c, 202, svc_sub_json(s, id, 1));
}

static enum MHD_Result post_plan(svc_state *s, struct MHD_Connection *c, req *q, int full)
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
    /* the work in flight: a few plans at once, the last one kept for the token's holder; a
     * slot is held until the answer (up to max_plan_response) has been sent */
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
    q->plan_slot = 1;
    int rc = scv_plan_json_limited(body, &lim, 0, &res, &err);
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

static enum MHD_Result route(svc_state *s, struct MHD_Connection *c, const char *url, int post, req *q)
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
        char *b = svc_runs_list(s, c, full, &code, field, sizeof field, msg, sizeof msg);
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
            char *b = svc_run_detail(s, id, full, &code, msg, sizeof msg);
            return b ? send_json(c, code, b) : send_error(c, code, NULL, msg);
        }
        if (!strcmp(rest, "series") || !strcmp(rest, "events")) {
            if (post) return send_error(c, 405, NULL, "GET only");
            if (rest[0] == 'e') return svc_send_events(s, c, id, full);
            scv_run_summary sum;
            pthread_mutex_lock(&s->store_mu);
            scv_err serr = {0};
            int rc = scv_store_run_summary(s->store, id, &sum, &serr);
            pthread_mutex_unlock(&s->store_mu);
            if (rc) return svc_send_run_error(c, rc, &serr);
            char *b = svc_run_series(s, id, &code);
            return send_json(c, code, b);
        }
        if (!strcmp(rest, "log") || !strncmp(rest, "files/", 6)) {
            if (post) return send_error(c, 405, NULL, "GET only");
            return svc_run_file(s, c, id, rest, full);
        }
        if (!strcmp(rest, "stop") || !strcmp(rest, "resume")) {
            if (!post) return send_error(c, 405, NULL, "POST only");
            scv_run_summary sum;
            pthread_mutex_lock(&s->store_mu);
            scv_err serr = {0};
            int rc = scv_store_run_summary(s->store, id, &sum, &serr);
            pthread_mutex_unlock(&s->store_mu);
            if (rc) return svc_send_run_error(c, rc, &serr);
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
            /* a budget-stopped run goes on with a larger budget: {"budget": USD} */
            char budget[32];
            if ((rc = svc_resume_body(q->body, sum.actual_cost, budget, sizeof budget, field, sizeof field, &err)))
                return send_error(c, rc == SCV_EINFEASIBLE ? 422 : 400, field, err.msg);
            if ((rc = svc_submit(s, NULL, id, budget[0] ? budget : NULL, &sub, &err)))
                return send_error(c, rc == SCV_ERANGE ? 503 : 500, NULL, err.msg);
            return send_json(c, 202, svc_sub_json(s, sub, 1));
        }
        return send_error(c, 404, NULL, "no such path");
    }
    return send_error(c, 404, NULL, "no such path");
}

/* This connection's thread (one per connection) at the API's nice value: a request's work
 * yields the CPU to the runs (a burst of requests must not slow training); /api/health does
 * not, so that it answers while runs and requests take every core (before, at nice +10 like
 * the rest, a probe waited 0.5 s behind a training run and reconnecting clients). Once per
 * thread: a nice value is only ever raised. */
static void yield_to_runs(svc_state *s, const char *url)
{
    static _Thread_local int done;
    if (done || !s->api_nice || !strcmp(url, "/api/health")) return;
    done = 1;
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), s->api_nice);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    svc_state *s = cls;
    req *q = *con_cls;
    if (!q) { /* the headers have arrived */
        yield_to_runs(s, url);
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
    if (q && q->plan_slot) {
        svc_plan_done(cls);
        /* the plan's small allocations go back to the system, not kept in this thread's
         * malloc arena (each connection's thread may use another; its large ones are
         * mapped: svc_start) */
        malloc_trim(0);
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
    if (!s->cfg.lim.max_body_total) s->cfg.lim.max_body_total = 32 * s->cfg.max_body;
    if (s->cfg.lim.max_body_total < s->cfg.max_body) s->cfg.lim.max_body_total = s->cfg.max_body; /* one fits */
    if (!s->cfg.host_limits[0]) { /* this host's, given to every run: a resumed run's stored bound never wins */
        scv_host_limits hl = scv_host_limits_default();
        snprintf(s->cfg.host_limits, sizeof s->cfg.host_limits, "threads=%ld,memory=%.0f", hl.max_threads,
                 hl.max_mem_bytes);
    }
    pthread_mutex_init(&s->store_mu, NULL);
    pthread_mutex_init(&s->jobs_mu, NULL);
    pthread_mutex_init(&s->conns_mu, NULL);
    pthread_mutex_init(&s->admit_mu, NULL);
    /* a block of 1 MiB or more (a plan's report, its copy, a run's document) is mapped and
     * given back when freed: glibc's threshold would else rise to 32 MiB after the first such
     * free, and the blocks stay resident in the arenas of the connections' threads */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
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
    /* the connections' threads answer the API at http_nice above the service's own nice
     * (a per-thread attribute on Linux: yield_to_runs), but for /api/health; the accepting
     * thread keeps the service's, so a busy machine still takes connections in */
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, 0);
    s->api_nice = !(nice_now == -1 && errno) && s->cfg.http_nice > 0 ? nice_now + s->cfg.http_nice : 0;
    /* One thread per connection (poll): a server-sent-events stream and a request that
     * computes (a plan) wait in their own thread, and a slow client holds only its own thread,
     * idle in poll. What clients share is the number of connections: bounded per address and
     * overall, and a silent connection is closed (svc_limits). libmicrohttpd's own bound is
     * above max_conns by the connections being closed to make room (conns.c keeps the open
     * ones within max_conns; a closed one's thread ends a moment later): a new connection is
     * never refused for a slot a closing one still holds. Each connection needs a file
     * descriptor: the soft limit is raised towards the hard one to hold them. */
    unsigned hard = svc_conn_hard_limit(&s->cfg.lim);
    struct rlimit nof;
    rlim_t want = (rlim_t)hard + 256;
    if (!getrlimit(RLIMIT_NOFILE, &nof) && nof.rlim_cur != RLIM_INFINITY && nof.rlim_cur < want) {
        nof.rlim_cur = nof.rlim_max == RLIM_INFINITY || nof.rlim_max > want ? want : nof.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nof);
    }
    s->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION, (uint16_t)s->cfg.port,
                                 NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
                                 svc_on_connection, s, MHD_OPTION_CONNECTION_LIMIT, hard,
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
    svc_cache_free(s);
    svc_feeds_free(s);
}
