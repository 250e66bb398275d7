/*
 * service.h - `scavenger serve`, the Scavenger service: a JSON API and a live dashboard over
 * HTTP (libmicrohttpd), sharing the run store with the command line. The pieces:
 *   service.c  the HTTP daemon: routing, the bearer token, the limits of a request and of a
 *              client (svc_limits: body, plan space, connections, timeouts), the API's JSON,
 *              the embedded dashboard's files;
 *   conns.c    the open connections: the request deadline, room made for a new one by
 *              closing the oldest still waiting, the plans and bodies in flight;
 *   events.c   server-sent events while a run trains: one feed per run shared by its
 *              streams, the document once, then its changes as deltas; streams bounded;
 *   jobs_check.c  strict checks of a submitted job's JSON (errors name the field, paths
 *              kept inside the data directory), of a stored job before a resume, and of
 *              a resume's body;
 *   jobs.c     submitted runs: a bounded number of `scavenger run` child
 *              processes (fork and execv with an argv array, never a shell), the rest
 *              queued; stop (SIGINT to the child's process group) and resume; the
 *              submissions saved in WORK_DIR/submissions.json on every change and
 *              reloaded on start (the queue survives a restart or a crash);
 *   web_assets.c (generated from web/ by web/embed.sh) the dashboard's HTML, JS and CSS.
 * Everything a request handler needs hangs off one svc_state, passed through MHD's cls
 * pointers; there is no other global state.
 */
#ifndef SCV_SERVICE_H
#define SCV_SERVICE_H
#include "scv.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

/* What one client, and all of them, may take of the service: connections (each has its own
 * thread, so a slow client holds a thread, not the others' time), how long one may stay
 * silent, and the work and memory of one request and of all in flight; checked before the
 * work starts, beyond them 503 with Retry-After (busy: come back), 422 naming the limit (a
 * request too large for any time), or, for connections, the oldest one still waiting for its
 * request closed to make room (conns.c): a client that sends its request gets in, whatever
 * the others hold open. */
typedef struct svc_limits {
    unsigned max_conns;         /* connections open at once, all clients (serve --max-conns) */
    unsigned max_conns_per_ip;  /* ... from one address (serve --max-conns-per-ip); behind a
                                   reverse proxy every client is the proxy's address */
    unsigned conn_timeout_s;    /* a connection silent this long is closed (serve --conn-timeout) */
    unsigned request_timeout_s; /* a request (its headers and body) not received whole this long
                                   after the connection opened, or after the previous answer on
                                   it, is cut: a client trickling bytes (serve --request-timeout) */
    long max_plan_points;       /* /api/plan: VM types x K x B x options (serve --max-plan-points) */
    size_t max_plan_response;   /* /api/plan: bytes of the report */
    long max_plan_points_open;  /* /api/plan without the token (on loopback): 10,000 points */
    unsigned max_plans;         /* plans computed at once (serve --max-plans); one of them kept
                                   for the token's holder when 2 or more */
    unsigned max_streams;       /* event streams open at once, all runs (serve --max-streams) */
    unsigned max_streams_per_run; /* ... of one run (serve --max-streams-per-run) */
    size_t max_body_total;      /* bytes of request bodies held at once, all requests (0: 32 x
                                   max_body, so 32 MiB by default) */
    unsigned conn_reserve;      /* connections kept free: past max_conns - this, the oldest
                                   waiting for its request is closed (0: max_conns / 16, >= 4) */
} svc_limits;
#define SVC_LIMITS_DEFAULT {1024, 128, 10, 20, 100000, (size_t)32 << 20, 10000, 2, 256, 32, 0, 0}

/* An open connection, as the request deadline and the room for new ones see it (conns.c):
 * its socket and address, when it began waiting for its current request, and whether that
 * request is being answered. */
typedef struct svc_conn {
    int fd;
    unsigned char ip[16];       /* the client's address (IPv4: 4 bytes, IPv6: 16) */
    int ip_len;
    double since;               /* monotonic s */
    int busy;                   /* the request arrived whole: answering it (no deadline) */
    int cut;                    /* shut down: its deadline, or room made for a newer one */
    unsigned long long passed;  /* passed over in this search for one to close (conns.c) */
    struct svc_conn *prev, *next;
} svc_conn;

typedef struct svc_config {
    char listen_addr[64];       /* "127.0.0.1" */
    int port;                   /* 0: any free port */
    char db[1024];              /* the run store */
    char data_dir[1024];        /* job paths (dataset, catalog) must lie under it */
    char work_dir[1100];        /* DB.serve/: job files, child logs, reports */
    char token[80];             /* required for writes (and for everything off loopback) */
    char allow_hosts[512];      /* --allow-host: more names the Host header may carry (a DNS name, a
                                   reverse proxy's public name), comma-separated, any port */
    char exe[1024];             /* the scavenger executable the runs are started with */
    int max_runs;               /* runs at a time (the rest queue) */
    int http_nice;              /* 10: the HTTP threads' nice value above the runs' (the runs,
                                   which the manager thread starts, keep the service's own),
                                   so a burst of requests yields the CPU to training */
    int max_queue;              /* queued submissions at most */
    size_t max_body;            /* bytes of a request body at most (413 beyond) */
    svc_limits lim;             /* connections and work per request (SVC_LIMITS_DEFAULT) */
    char host_limits[96];       /* serve --host-limits: what one run may take of this host
                                   (job/hostlimits.h; "": the host's defaults, written out at
                                   start), given to every run, a resumed one too */
    int allow_paths;            /* job paths anywhere (the operator's choice) */
    int allow_exec;             /* jobs may carry "exec" / "hosts" (the operator's choice) */
    int quiet;
} svc_config;

typedef enum { SUB_QUEUED = 0, SUB_RUNNING, SUB_DONE, SUB_FAILED, SUB_STOPPED, SUB_REJECTED } svc_sub_state;
const char *svc_sub_state_name(svc_sub_state s);

typedef struct svc_sub {
    long long id;               /* the submission's number (1, 2, ...) */
    long long run_id;           /* the store's run, once the child created it (0: not yet) */
    long long resume_run;       /* a resume: the run it continues (0: a new run) */
    svc_sub_state state;
    pid_t pid;                  /* the child while running (its own process group) */
    int exit_code;
    int stop_requested;
    double submitted, started, ended;
    long long pid_start;        /* the child's start time (/proc/PID/stat, clock ticks since boot) */
    int orphan;                 /* running when a previous service ended: not our child (jobs.c) */
    double orphan_signalled;    /* when it was sent SIGINT (monotonic s; 0: not yet) */
    char tag[64];               /* the report directory's name: finds the run in the store */
    char job_path[1300], log_path[1300], report_dir[1300];
    char error[512];            /* why it failed or was rejected (the child's last line) */
    char resume_budget[32];     /* a resume's new budget in dollars, as the request gave it (passed
                                   on as --budget; "": the stored job's) */
} svc_sub;

/* The response cache (service.c): the runs list and runs' details as last built, each valid
 * while the store's data_version (and a detail's report file) is unchanged. */
#define SVC_CACHE_SLOTS 32
typedef struct svc_cache_slot {
    char *key;                  /* the request: "list LIMIT OFFSET JOB\nSTATUS" or "run ID" */
    long long version;          /* the store's data_version when it was built */
    char *file;                 /* a detail's report.json path, and its identity then: */
    char stamp[96];             /* inode, size, mtime ("-": absent) */
    char *body;
    unsigned long long used;    /* the least recently used slot is replaced */
} svc_cache_slot;

typedef struct svc_state {
    svc_config cfg;
    scv_store *store;           /* guarded by store_mu */
    pthread_mutex_t store_mu;
    char *catalog_json;         /* GET /api/catalog, built once */
    /* submissions, guarded by jobs_mu */
    pthread_mutex_t jobs_mu;
    svc_sub *subs;
    size_t n_subs, cap_subs;
    long long next_sub;
    char state_file[1200];      /* WORK_DIR/submissions.json: the submissions, saved on every change */
    int state_loaded;           /* read (or absent) at start: only then is it ever written */
    int state_dirty;            /* a save failed: the manager retries */
    char state_err[512];        /* the last save error reported (reported once) */
    char boot_id[40];           /* this boot's id: a saved child's pid means nothing after a reboot */
    int lock_fd, have_lock;     /* WORK_DIR/lock, held while serving: one service per store */
    pthread_t manager;
    int manager_started;
    volatile int stopping;
    struct MHD_Daemon *daemon;
    int bound_port;
    svc_cache_slot cache[SVC_CACHE_SLOTS]; /* guarded by store_mu */
    pthread_mutex_t conns_mu;   /* the open connections, for the request deadline and the room */
    svc_conn *conns;
    unsigned n_conns;           /* listed in conns */
    unsigned long long conns_cut; /* closed to make room (for the log and the tests) */
    unsigned long long cut_pass;  /* the searches for one to close, counted (conns.c) */
    pthread_mutex_t admit_mu;   /* the work in flight: */
    unsigned plans_inflight;    /* /api/plan computing now */
    size_t body_bytes;          /* request bodies held now */
    pthread_mutex_t feeds_mu;   /* the runs' event feeds (events.c) */
    struct svc_feed *feeds;
    unsigned n_streams;         /* event streams open now */
    pthread_t reaper;           /* cuts the connections past their request deadline */
    int reaper_started;
    unsigned long long cache_clock;
    int api_nice;               /* the nice value the API's threads take (service.c yield_to_runs;
                                   0: left as they are) */
} svc_state;

/* jobs_check.c */
/* Checks a submitted job (a JSON object of settings as `scavenger run JOB.json` takes) and
 * writes its normalised copy to *out (malloc'ed); SCV_EINVAL/SCV_EPARSE with the field named
 * in err (and its name in field) for a malformed job (400), SCV_EINFEASIBLE for a well-formed
 * one that cannot run here (422: a VM type not in the catalog, no such cluster, a setting the
 * run's own setup refuses). store: handed to the run's setup, which only keeps the pointer. */
int svc_job_check(const svc_config *cfg, scv_store *store, const char *body, char **out, char *field, size_t fcap,
                  scv_err *err);
/* Checks a stored run's job (JSON as the store keeps it) before a resume re-runs it: the
 * same checks as a submitted job (svc_job_check), its report directory the service's own;
 * SCV_EINFEASIBLE naming the run and the field. */
int svc_resume_check(const svc_config *cfg, scv_store *store, long long run, const char *stored, char *field,
                     size_t fcap, scv_err *err);
/* A resume's body (POST /api/runs/ID/resume): empty, or a JSON object whose only field is
 * "budget", a positive finite number of dollars above what the run has spent (spent: the
 * store's, NaN when not known), written into budget (cap bytes; "" when none). SCV_EINVAL
 * (400) or SCV_EINFEASIBLE (422, a budget the run has spent already) naming the field. */
int svc_resume_body(const char *body, double spent, char *budget, size_t cap, char *field, size_t fcap, scv_err *err);

/* jobs.c */
/* Queues a checked job (or a resume of run resume_run when job is NULL, with budget, a
 * checked number in dollars, as its new --budget, or NULL): the submission's id. */
int svc_submit(svc_state *s, const char *job, long long resume_run, const char *budget, long long *sub_id,
               scv_err *err);
/* Stops submission sub (queued: dropped; running: SIGINT to its process group). */
int svc_stop_sub(svc_state *s, long long sub, scv_err *err);
/* The submission running or queued for run (0: none), under jobs_mu. */
long long svc_sub_of_run(svc_state *s, long long run, int active_only);
/* The log of the newest submission that ran run (`scavenger run`'s output: WORK_DIR/logs/
 * TAG.log) into buf; 0 when this service never ran it. */
int svc_sub_log_path(svc_state *s, long long run, char *buf, size_t cap);
/* Run run_id's directory DB.runs/ID (name NULL) or a file in it, DB.runs/ID/NAME, of the
 * service's store (core/rundir.h builds them); non-zero when the path does not fit cap. */
int svc_run_path(const svc_config *cfg, long long run_id, const char *name, char *buf, size_t cap);
/* JSON of one submission, or of all (malloc'ed). */
/* full: the reader sent the token; without it a submission's error has its quoted commands
 * hidden (svc_scrub_quoted). */
char *svc_sub_json(svc_state *s, long long sub, int full);
char *svc_subs_json(svc_state *s, int full);
/* 1 when the service listens on a loopback address (127.x, localhost, ::1): the one test of
 * who can reach it (reads without the token, the Host names accepted, serve's warning). */
int svc_is_loopback(const char *addr);
/* What a read without the token sees in place of a hidden setting. */
#define SVC_HIDDEN "(hidden: send the token)"
/* text (NUL-terminated, changed in place, never longer) with every `quoted` span - how the
 * drivers' messages quote a trainer's command - replaced by `SVC_HIDDEN` where it fits, else
 * by `...`: a failure's words shown without the token do not carry the command. */
void svc_scrub_quoted(char *text);
/* Creates WORK_DIR, takes its lock, reloads the saved submissions (SCV_ECORRUPT naming the
 * file when it is damaged: it is left untouched) and starts the manager thread. */
int svc_jobs_start(svc_state *s, scv_err *err);
void svc_jobs_stop(svc_state *s, double wait_s);

/* service.c */
int svc_start(svc_state *s, scv_err *err);
void svc_stop(svc_state *s);
/* web_assets.c (generated) */
typedef struct svc_asset {
    const char *path, *type;
    const unsigned char *data;
    size_t len;
} svc_asset;
extern const svc_asset svc_assets[];
extern const size_t svc_n_assets;
#endif
