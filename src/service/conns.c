/*
 * conns.c - the service's open connections and the work in flight (svc_limits).
 *
 * The connections: every one is listed (MHD_OPTION_NOTIFY_CONNECTION) with its address and
 * the time it began waiting for its request. A reaper thread shuts down the socket of one
 * whose request has not arrived whole within request_timeout_s (libmicrohttpd's own timeout
 * closes only a silent connection: a client sending a byte now and then would hold its
 * connection, and its thread, for ever). And a new connection always finds room: past
 * max_conns - conn_reserve open, or past max_conns_per_ip from its address, the oldest
 * connection still waiting for its request (of that address, for the latter) is shut down.
 * A connection being answered (an event stream, a plan) is never closed so; those are
 * bounded on their own (max_streams, max_plans). Before, 9 addresses x 127 reconnecting slow
 * sockets filled the 1024 connections and /api/health went unanswered: a client that sends
 * its request now gets in, whatever the others hold open. The list's mutex is held while a
 * socket is shut down and while a connection is removed, which libmicrohttpd does before it
 * closes the socket: no socket number reused by another connection is ever touched.
 *
 * The work in flight: plans computed at once (max_plans; the last one kept for the token's
 * holder) and the bytes of request bodies held at once (max_body_total), counted here.
 */
#define _GNU_SOURCE
#include "http.h"
#include "../core/util.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

unsigned svc_conn_reserve(const svc_limits *lim)
{
    unsigned r = lim->conn_reserve ? lim->conn_reserve : lim->max_conns / 16;
    if (r < 4) r = 4;
    return r < lim->max_conns ? r : lim->max_conns - 1;
}

unsigned svc_conn_hard_limit(const svc_limits *lim)
{
    return 2 * lim->max_conns + 16;
}

static void conn_addr(struct MHD_Connection *c, svc_conn *k)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET) {
        memcpy(k->ip, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        k->ip_len = 4;
    } else if (sa && sa->sa_family == AF_INET6) {
        memcpy(k->ip, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        k->ip_len = 16;
    }
}

static int same_ip(const svc_conn *a, const svc_conn *b)
{
    return a->ip_len == b->ip_len && !memcmp(a->ip, b->ip, (size_t)a->ip_len);
}

/* Shuts down the oldest connection waiting for its request (of k's address when per_ip),
 * other than k; 0 when there is none. One whose request is already in the socket (its thread
 * has not read it yet: a loaded machine) is passed over for the next oldest, a few times at
 * most: it is about to be answered, not holding a slot (a probe sharing its address with a
 * burst of reconnecting clients was closed so). conns_mu held. */
static int cut_oldest(svc_state *s, const svc_conn *k, int per_ip)
{
    unsigned long long pass = ++s->cut_pass;
    for (int tries = 0; tries < 8; tries++) {
        svc_conn *old = NULL;
        for (svc_conn *o = s->conns; o; o = o->next)
            if (o != k && !o->busy && !o->cut && o->passed != pass && (!per_ip || same_ip(o, k)) &&
                (!old || o->since < old->since))
                old = o;
        if (!old) return 0;
        int pending = 0;
        if (tries < 7 && !ioctl(old->fd, FIONREAD, &pending) && pending > 0) {
            old->passed = pass;
            continue;
        }
        old->cut = 1;
        s->conns_cut++;
        shutdown(old->fd, SHUT_RDWR);
        return 1;
    }
    return 0;
}

void svc_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code)
{
    svc_state *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        svc_conn *k = ci ? calloc(1, sizeof *k) : NULL;
        *socket_context = k;
        if (!k) return; /* no deadline for this one: only the silence timeout */
        k->fd = ci->connect_fd;
        k->since = scv_now();
        conn_addr(c, k);
        pthread_mutex_lock(&s->conns_mu);
        k->next = s->conns;
        if (s->conns) s->conns->prev = k;
        s->conns = k;
        s->n_conns++;
        unsigned from_ip = 0, live = 0;
        for (const svc_conn *o = s->conns; o; o = o->next) {
            live += !o->cut;
            from_ip += !o->cut && same_ip(o, k);
        }
        /* room for the next one: its address's oldest waiting past the per-address bound (none
         * waiting: this one goes), everyone's oldest waiting past the reserve */
        if (from_ip > s->cfg.lim.max_conns_per_ip) {
            if (!cut_oldest(s, k, 1)) { /* all of its address's are being answered */
                k->cut = 1;
                shutdown(k->fd, SHUT_RDWR);
            }
            live--;
        }
        unsigned room = s->cfg.lim.max_conns - svc_conn_reserve(&s->cfg.lim);
        while (!k->cut && live > room && cut_oldest(s, k, 0)) live--;
        if (!k->cut && live > s->cfg.lim.max_conns) { /* every other one is being answered: this one goes */
            k->cut = 1;
            shutdown(k->fd, SHUT_RDWR);
        }
        pthread_mutex_unlock(&s->conns_mu);
        return;
    }
    svc_conn *k = *socket_context;
    if (!k) return;
    pthread_mutex_lock(&s->conns_mu);
    if (k->prev) k->prev->next = k->next;
    else s->conns = k->next;
    if (k->next) k->next->prev = k->prev;
    s->n_conns--;
    pthread_mutex_unlock(&s->conns_mu);
    free(k);
    *socket_context = NULL;
}

void svc_conn_mark(svc_state *s, struct MHD_Connection *c, int busy)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    svc_conn *k = ci ? ci->socket_context : NULL;
    if (!k) return;
    pthread_mutex_lock(&s->conns_mu);
    k->busy = busy;
    if (!busy) k->since = scv_now();
    pthread_mutex_unlock(&s->conns_mu);
}

void *svc_reaper_main(void *arg)
{
    svc_state *s = arg;
    while (!s->stopping) {
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
        double now = scv_now();
        pthread_mutex_lock(&s->conns_mu);
        for (svc_conn *k = s->conns; k; k = k->next)
            if (!k->busy && !k->cut && now - k->since > s->cfg.lim.request_timeout_s) {
                k->cut = 1;
                shutdown(k->fd, SHUT_RDWR);
            }
        pthread_mutex_unlock(&s->conns_mu);
    }
    return NULL;
}

/* ---- the work in flight ---- */

int svc_plan_begin(svc_state *s, int full)
{
    unsigned max = s->cfg.lim.max_plans, open = max > 1 ? max - 1 : max; /* the last one: the token's */
    pthread_mutex_lock(&s->admit_mu);
    int ok = s->plans_inflight < (full ? max : open);
    s->plans_inflight += (unsigned)ok;
    pthread_mutex_unlock(&s->admit_mu);
    return ok;
}

void svc_plan_done(svc_state *s)
{
    pthread_mutex_lock(&s->admit_mu);
    s->plans_inflight--;
    pthread_mutex_unlock(&s->admit_mu);
}

int svc_body_reserve(svc_state *s, size_t n)
{
    pthread_mutex_lock(&s->admit_mu);
    int ok = s->body_bytes + n <= s->cfg.lim.max_body_total;
    if (ok) s->body_bytes += n;
    pthread_mutex_unlock(&s->admit_mu);
    return ok;
}

void svc_body_release(svc_state *s, size_t n)
{
    pthread_mutex_lock(&s->admit_mu);
    s->body_bytes -= n <= s->body_bytes ? n : s->body_bytes;
    pthread_mutex_unlock(&s->admit_mu);
}
