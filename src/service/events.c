/*
 * events.c - GET /api/runs/ID/events: server-sent events while a run trains. One feed per
 * run (and view: with the token or without) is shared by all its streams: it rebuilds the
 * run's document at most every FEED_CHECK_S, and when it changed keeps the delta from the
 * previous one (a ring of FEED_DELTAS). A stream sends the whole document once ("run"), then
 * only the deltas ("delta") - before, every stream rebuilt and resent the whole document
 * (134 KB after 300 epochs; 300 streams sent 500 MB in 21 s). A stream too far behind the
 * ring (or a delta larger than half the document) gets the document again. Streams are
 * bounded per run and in all (svc_limits: max_streams_per_run, max_streams): beyond them
 * 503 with Retry-After naming the limit.
 *
 * A delta is {"set": {MEMBER: value, ...}, "splice": {MEMBER: [FROM, [ITEMS...]], ...}}:
 * each member of "set" replaces the document's (null: removed), and each array of "splice"
 * keeps its first FROM items and then ITEMS (the rows added to a run's evaluations, steps,
 * decisions: only the new ones, and the last changed one, travel). Both only when not empty.
 */
#define _GNU_SOURCE
#include "http.h"
#include "../core/util.h"

#include <cjson/cJSON.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FEED_DELTAS 16        /* the deltas a feed keeps: a stream this far behind gets the document */
#define FEED_CHECK_S 0.3      /* the document is rebuilt at most this often */
#define KEEPALIVE_S 15        /* a comment when nothing changed for so long (proxies, browsers), or
                                 within half the connection timeout: libmicrohttpd closes a
                                 connection idle that long (an unchanged run's stream ended at 15 s) */
#define STREAM_RETRY_S 5      /* Retry-After when the streams are at their bound */

typedef struct svc_feed {
    long long run;
    int full;                 /* the token's view (nothing hidden) */
    int refs;                 /* streams attached (feeds_mu) */
    pthread_mutex_t mu;       /* the rest */
    unsigned long long version; /* of doc: 0 before the first */
    char *doc;
    uint64_t hash;
    char *delta[FEED_DELTAS]; /* delta[v % FEED_DELTAS]: from version v - 1 to v (NULL: none kept) */
    int finished;             /* the run was finished when doc was built */
    int missing;              /* the run is gone (404) */
    double checked;           /* monotonic s */
    struct svc_feed *next;
} svc_feed;

typedef struct sse {
    svc_state *s;
    svc_feed *feed;
    int fd;                   /* the connection's socket: a client gone is seen while waiting (-1: not known) */
    unsigned long long sent;  /* the feed's version this stream has */
    char *pending;
    size_t plen, poff;
    int ended;
    double last_send;
} sse;

static uint64_t fnv1a(const char *t)
{
    uint64_t h = 1469598103934665603ull;
    for (; *t; t++) h = (h ^ (unsigned char)*t) * 1099511628211ull;
    return h;
}

/* The delta from the document a to b (both JSON objects' text), or NULL (not JSON, no
 * memory); "{}" when they do not differ. */
static char *doc_delta(const char *a, const char *b)
{
    cJSON *pa = cJSON_Parse(a), *pb = cJSON_Parse(b), *d = cJSON_CreateObject();
    cJSON *set = cJSON_CreateObject(), *splice = cJSON_CreateObject();
    char *out = NULL;
    if (!cJSON_IsObject(pa) || !cJSON_IsObject(pb) || !d || !set || !splice) goto done;
    for (cJSON *m = pb->child; m; m = m->next) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(pa, m->string);
        if (o && cJSON_IsArray(o) && cJSON_IsArray(m)) {
            int no = cJSON_GetArraySize(o), nm = cJSON_GetArraySize(m), from = 0;
            const cJSON *x = o->child, *y = m->child;
            while (x && y && cJSON_Compare(x, y, 1)) x = x->next, y = y->next, from++;
            if (from == no && from == nm) continue; /* the same rows */
            cJSON *items = cJSON_CreateArray(), *pair = cJSON_CreateArray();
            for (; y; y = y->next) cJSON_AddItemToArray(items, cJSON_Duplicate(y, 1));
            cJSON_AddItemToArray(pair, cJSON_CreateNumber(from));
            cJSON_AddItemToArray(pair, items);
            cJSON_AddItemToObject(splice, m->string, pair);
        } else if (!o || !cJSON_Compare(o, m, 1)) {
            cJSON_AddItemToObject(set, m->string, cJSON_Duplicate(m, 1));
        }
    }
    for (cJSON *m = pa->child; m; m = m->next) /* a member gone: null */
        if (!cJSON_GetObjectItemCaseSensitive(pb, m->string)) cJSON_AddItemToObject(set, m->string, cJSON_CreateNull());
    if (set->child) cJSON_AddItemToObject(d, "set", set), set = NULL;
    if (splice->child) cJSON_AddItemToObject(d, "splice", splice), splice = NULL;
    out = cJSON_PrintUnformatted(d);
done:
    cJSON_Delete(pa), cJSON_Delete(pb), cJSON_Delete(d), cJSON_Delete(set), cJSON_Delete(splice);
    return out;
}

/* Rebuilds the feed's document when FEED_CHECK_S has passed; a change makes a new version
 * with its delta. f->mu held. */
static void feed_refresh(svc_state *s, svc_feed *f)
{
    double now = scv_now();
    if (f->version && now - f->checked < FEED_CHECK_S) return;
    f->checked = now;
    int fin = svc_run_finished(s, f->run); /* before the document: the last one is complete */
    unsigned code;
    char msg[256];
    char *doc = svc_run_detail(s, f->run, f->full, &code, msg, sizeof msg);
    if (!doc) {
        f->missing = code == 404;
        f->finished = 1;
        return;
    }
    uint64_t h = fnv1a(doc);
    if (f->version && h == f->hash) {
        free(doc);
        f->finished = fin;
        return;
    }
    char *d = f->doc ? doc_delta(f->doc, doc) : NULL;
    if (d && strlen(d) > strlen(doc) / 2) { /* as large as the document: streams behind take it whole */
        free(d);
        d = NULL;
    }
    f->version++;
    free(f->delta[f->version % FEED_DELTAS]);
    f->delta[f->version % FEED_DELTAS] = d;
    free(f->doc);
    f->doc = doc, f->hash = h, f->finished = fin;
}

/* What stream e has not seen of its feed, as events into e->pending (NULL: nothing new);
 * the end after the last document of a finished run. f->mu held. */
static int stream_catch_up(sse *e)
{
    svc_feed *f = e->feed;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return -1;
    if (f->missing && !f->doc) {
        fputs("event: error\ndata: {\"error\":\"no such run\"}\n\n", m);
        e->ended = 1;
    } else if (f->doc && e->sent < f->version) {
        int whole = !e->sent || f->version - e->sent >= FEED_DELTAS;
        for (unsigned long long v = e->sent + 1; !whole && v <= f->version; v++) whole = !f->delta[v % FEED_DELTAS];
        if (whole) fprintf(m, "event: run\ndata: %s\n\n", f->doc);
        for (unsigned long long v = e->sent + 1; !whole && v <= f->version; v++)
            fprintf(m, "event: delta\ndata: %s\n\n", f->delta[v % FEED_DELTAS]);
        e->sent = f->version;
    }
    if (f->finished && !e->ended && (e->sent == f->version || f->missing)) {
        fputs("event: end\ndata: {}\n\n", m);
        e->ended = 1;
    }
    int bad = ferror(m);
    if (fclose(m) || bad) {
        free(buf);
        return -1;
    }
    if (!len) {
        free(buf);
        return 0;
    }
    e->pending = buf, e->plen = len, e->poff = 0;
    return 1;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    sse *e = cls;
    for (;;) {
        if (e->poff < e->plen) {
            size_t k = e->plen - e->poff < max ? e->plen - e->poff : max;
            memcpy(buf, e->pending + e->poff, k);
            e->poff += k;
            return (ssize_t)k;
        }
        free(e->pending);
        e->pending = NULL;
        e->plen = e->poff = 0;
        if (e->ended || e->s->stopping) return MHD_CONTENT_READER_END_OF_STREAM;
        pthread_mutex_lock(&e->feed->mu);
        feed_refresh(e->s, e->feed);
        int got = stream_catch_up(e);
        pthread_mutex_unlock(&e->feed->mu);
        if (got < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (got) {
            e->last_send = scv_now();
            continue;
        }
        double keep = e->s->cfg.lim.conn_timeout_s / 2.0 < KEEPALIVE_S ? e->s->cfg.lim.conn_timeout_s / 2.0 : KEEPALIVE_S;
        if (scv_now() - e->last_send > keep) { /* a comment keeps proxies, the browser and the timeout patient */
            e->last_send = scv_now();
            if (!(e->pending = strdup(": keep-alive\n\n"))) return MHD_CONTENT_READER_END_WITH_ERROR;
            e->plen = strlen(e->pending);
            continue;
        }
        /* the wait: woken early when the client hangs up (its slot is freed then, not at
         * the next write, which may be a keep-alive 15 s away) */
        struct pollfd p = {.fd = e->fd, .events = POLLRDHUP};
        if (e->fd >= 0 && poll(&p, 1, (int)(FEED_CHECK_S * 1000)) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (e->fd < 0) {
            struct timespec ts = {0, (long)(FEED_CHECK_S * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
}

static void feed_free(svc_feed *f)
{
    for (int i = 0; i < FEED_DELTAS; i++) free(f->delta[i]);
    free(f->doc);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* A stream leaves feed f; the last one frees it. */
static void feed_detach(svc_state *s, svc_feed *f)
{
    pthread_mutex_lock(&s->feeds_mu);
    s->n_streams--;
    if (--f->refs == 0) {
        for (svc_feed **p = &s->feeds; *p; p = &(*p)->next)
            if (*p == f) {
                *p = f->next;
                break;
            }
        feed_free(f);
    }
    pthread_mutex_unlock(&s->feeds_mu);
}

static void sse_free(void *cls)
{
    sse *e = cls;
    feed_detach(e->s, e->feed);
    free(e->pending);
    free(e);
}

/* Attaches a stream of run (view full) to its feed, made when none: NULL when the streams are
 * at a bound (*limit names it) or out of memory (*limit ""). */
static svc_feed *feed_attach(svc_state *s, long long run, int full, const char **limit)
{
    svc_feed *f = NULL;
    unsigned of_run = 0;
    *limit = "";
    pthread_mutex_lock(&s->feeds_mu);
    for (svc_feed *g = s->feeds; g; g = g->next)
        if (g->run == run) {
            of_run += (unsigned)g->refs;
            if (g->full == full) f = g;
        }
    if (s->n_streams >= s->cfg.lim.max_streams) *limit = "max_streams";
    else if (of_run >= s->cfg.lim.max_streams_per_run) *limit = "max_streams_per_run";
    if (!**limit && !f && (f = calloc(1, sizeof *f))) {
        f->run = run, f->full = full;
        pthread_mutex_init(&f->mu, NULL);
        f->next = s->feeds;
        s->feeds = f;
    }
    if (**limit) f = NULL;
    if (f) f->refs++, s->n_streams++;
    pthread_mutex_unlock(&s->feeds_mu);
    return f;
}

enum MHD_Result svc_send_events(svc_state *s, struct MHD_Connection *c, long long id, int full)
{
    scv_run_summary sum;
    pthread_mutex_lock(&s->store_mu);
    scv_err err = {0};
    int rc = scv_store_run_summary(s->store, id, &sum, &err);
    pthread_mutex_unlock(&s->store_mu);
    if (rc) return svc_send_run_error(c, rc, &err);
    const char *limit;
    svc_feed *f = feed_attach(s, id, full, &limit);
    if (!f && *limit) {
        int per_run = !strcmp(limit, "max_streams_per_run");
        char m[300];
        snprintf(m, sizeof m, "%s event streams are open%s (serve --%s): try again later, or poll GET /api/runs/%lld",
                 per_run ? "this run's" : "all", per_run ? " for this run" : "",
                 per_run ? "max-streams-per-run" : "max-streams", id);
        return svc_send_busy(c, m, limit, per_run ? s->cfg.lim.max_streams_per_run : s->cfg.lim.max_streams,
                             STREAM_RETRY_S);
    }
    sse *e = f ? calloc(1, sizeof *e) : NULL;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (e) e->s = s, e->feed = f, e->last_send = scv_now(), e->fd = ci ? ci->connect_fd : -1;
    struct MHD_Response *r = e ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, e, sse_free)
                               : NULL;
    if (!r) {
        if (e) sse_free(e);
        else if (f) feed_detach(s, f);
        return svc_send_json(c, 500, NULL);
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

void svc_feeds_free(svc_state *s)
{
    while (s->feeds) {
        svc_feed *f = s->feeds;
        s->feeds = f->next;
        feed_free(f);
    }
}
