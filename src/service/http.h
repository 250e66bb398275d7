/*
 * http.h - what the service's HTTP files (service.c, conns.c, events.c) share with each other
 * on libmicrohttpd: the responses, a run's document, the connections' bookkeeping and the
 * work in flight, the event streams. Not for the rest of the program (service.h is).
 */
#ifndef SCV_SERVICE_HTTP_H
#define SCV_SERVICE_HTTP_H
#include "service.h"

#include <microhttpd.h>
#include <stdio.h>

/* service.c: the responses; rundocs.c: GET /api/runs/ID's document (NULL with *code 404 or 500 and msg) */
enum MHD_Result svc_send_json(struct MHD_Connection *c, unsigned code, char *json);
enum MHD_Result svc_send_error(struct MHD_Connection *c, unsigned code, const char *field, const char *msg);
/* A run's store read that failed: 404 only where there is no such run; a damaged or
 * unreadable store is a 500 naming it, never taken for a missing run. */
enum MHD_Result svc_send_run_error(struct MHD_Connection *c, int rc, const scv_err *err);
/* 503 {"error": msg, "limit": name, "max": max} with Retry-After: retry_s: busy, come back */
enum MHD_Result svc_send_busy(struct MHD_Connection *c, const char *msg, const char *name, double max,
                              unsigned retry_s);
char *svc_run_detail(svc_state *s, long long id, int full, unsigned *code, char *msg, size_t mcap);
/* 1 when the run is finished: its stored status is final and no submission of this service is
 * active (or it is not in the store) */
int svc_run_finished(svc_state *s, long long id);

/* Closes an open_memstream: the text, or NULL when a write failed (out of memory). */
char *svc_mem_close(FILE *f, char **buf);

/* rundocs.c: the runs list (GET /api/runs: NULL with *code, field and msg on a bad query),
 * a run's files (files/NAME, log), its series, the response cache freed */
char *svc_runs_list(svc_state *s, struct MHD_Connection *c, int full, unsigned *code, char *field, size_t fcap,
                    char *msg, size_t mcap);
enum MHD_Result svc_run_file(svc_state *s, struct MHD_Connection *c, long long id, const char *rest, int full);
char *svc_run_series(svc_state *s, long long id, unsigned *code);
void svc_cache_free(svc_state *s);

/* conns.c: the connections (MHD_OPTION_NOTIFY_CONNECTION) and the request deadline's reaper */
void svc_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
/* busy: c's request arrived whole (1), or its answer is done (0: a new deadline starts) */
void svc_conn_mark(svc_state *s, struct MHD_Connection *c, int busy);
void *svc_reaper_main(void *arg);
/* The reserve of free connections that svc_limits' conn_reserve gives (0: its default). */
unsigned svc_conn_reserve(const svc_limits *lim);
/* libmicrohttpd's bound: max_conns and the connections being closed to make room */
unsigned svc_conn_hard_limit(const svc_limits *lim);
/* A plan may start (1: counted, svc_plan_done when it ends), or the plans in flight are at
 * their bound (0; full: the token came, which may take the last one) */
int svc_plan_begin(svc_state *s, int full);
void svc_plan_done(svc_state *s);
/* n more bytes of request bodies may be held (1: counted), or not now (0) */
int svc_body_reserve(svc_state *s, size_t n);
void svc_body_release(svc_state *s, size_t n);

/* events.c: GET /api/runs/ID/events (the run's document, then its changes as deltas) */
enum MHD_Result svc_send_events(svc_state *s, struct MHD_Connection *c, long long id, int full);
void svc_feeds_free(svc_state *s);
#endif
