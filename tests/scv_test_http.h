/*
 * scv_test_http.h - talking to `scavenger serve` from a test (test_service.c,
 * test_service_load.c): the service of this build ($SCV_BIN, else build/scavenger) started on
 * a free loopback port with a fresh store and extra options, HTTP/1.0 requests over sockets
 * (from 127.0.0.1, or a stalled client from another loopback address), the answer's JSON,
 * the service's peak memory, and plan requests on made-up metrics. The includer defines
 * _GNU_SOURCE and includes scv_test.h first.
 */
#ifndef SCV_TEST_HTTP_H
#define SCV_TEST_HTTP_H
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bin;
static char tmp[256], db[400], token[128];
static int port;
static pid_t server;

static inline void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline int connect_server(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* One request with extra header lines (each ending in CR LF; NULL: none; a Host line there
 * replaces the usual one, the service's own address and port); the status (0: no answer),
 * the headers and body into resp (cap bytes). */
static inline int http_x(const char *method, const char *path, const char *auth, const char *extra, const char *body,
                  char *resp, size_t cap)
{
    resp[0] = 0;
    int fd = connect_server();
    if (fd < 0) return 0;
    char head[2048], host[64];
    size_t blen = body ? strlen(body) : 0;
    snprintf(host, sizeof host, "Host: 127.0.0.1:%d\r\n", port);
    if (extra && !strncasecmp(extra, "Host:", 5)) host[0] = 0;
    int n = snprintf(head, sizeof head, "%s %s HTTP/1.0\r\n%s%s%s%s%s", method, path, host, extra ? extra : "",
                     auth ? "Authorization: Bearer " : "", auth ? auth : "", auth ? "\r\n" : "");
    if (body) n += snprintf(head + n, sizeof head - n, "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
    n += snprintf(head + n, sizeof head - n, "\r\n");
    if (send_all(fd, head, (size_t)n) || (body && send_all(fd, body, blen))) {
        /* the server may answer (413) before reading the whole body */
    }
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = recv(fd, resp + len, cap - 1 - len, 0)) > 0) len += (size_t)r;
    resp[len] = 0;
    close(fd);
    int status = 0;
    if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1) return 0;
    return status;
}

static inline int http(const char *method, const char *path, const char *auth, const char *body, char *resp, size_t cap)
{
    return http_x(method, path, auth, NULL, body, resp, cap);
}

static inline const char *body_of(const char *resp)
{
    const char *b = strstr(resp, "\r\n\r\n");
    return b ? b + 4 : "";
}

/* cJSON of the response body (NULL if not JSON) */
static inline cJSON *json_of(const char *resp) { return cJSON_Parse(body_of(resp)); }

static inline int has_field(const char *resp, const char *field)
{
    cJSON *o = json_of(resp);
    const cJSON *f = cJSON_GetObjectItem(o, "field");
    int ok = cJSON_IsString(f) && !strcmp(f->valuestring, field) && cJSON_IsString(cJSON_GetObjectItem(o, "error")) &&
             strstr(cJSON_GetObjectItem(o, "error")->valuestring, field);
    cJSON_Delete(o);
    return ok;
}

static inline double jnum(const cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *c = o;
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && c; t = strtok_r(NULL, ".", &save))
        c = cJSON_GetObjectItem(c, t);
    return cJSON_IsNumber(c) ? c->valuedouble : NAN;
}

static inline const char *jstr(const cJSON *o, const char *name)
{
    const cJSON *c = cJSON_GetObjectItem(o, name);
    return cJSON_IsString(c) ? c->valuestring : "";
}

/* Options the next start_server passes besides the usual ones (NULL-terminated). */
static const char *extra_args[17];

static inline int start_server(void)
{
    char portfile[400], log[400], datadir[400];
    snprintf(portfile, sizeof portfile, "%s/port", tmp);
    snprintf(log, sizeof log, "%s/serve.log", tmp);
    snprintf(datadir, sizeof datadir, "%s/data", tmp);
    mkdir(datadir, 0755);
    unlink(portfile);
    fflush(stdout); /* the child's freopen would write what is buffered a second time */
    server = fork();
    if (server == 0) {
        FILE *f = freopen(log, "a", stdout);
        if (!f || dup2(fileno(stdout), 2) < 0) _exit(126);
        const char *argv[32] = {bin, "serve", "--listen", "127.0.0.1:0", "--db", db, "--port-file", portfile,
                                "--data-dir", datadir, "--max-body", "65536", "--max-runs", "1"};
        for (int i = 0; extra_args[i] && i < 16; i++) argv[14 + i] = extra_args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 300; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            int ok = fscanf(f, "%d", &port) == 1;
            fclose(f);
            if (ok && port > 0) break;
        }
        sleep_ms(50);
    }
    char tp[450];
    snprintf(tp, sizeof tp, "%s.token", db);
    FILE *f = fopen(tp, "r");
    if (!f) return -1;
    int ok = fscanf(f, "%127s", token) == 1;
    fclose(f);
    return ok && port > 0 ? 0 : -1;
}

/* Stops the service with sig; its exit status. */
static inline int stop_server(int sig)
{
    int st = -1;
    if (server <= 0) return st;
    kill(server, sig);
    for (int i = 0; i < 1200; i++) { /* up to 60 s: SIGTERM waits for the runs to checkpoint */
        if (waitpid(server, &st, WNOHANG) == server) break;
        sleep_ms(50);
    }
    server = 0;
    return st;
}

/* The server's peak resident memory (VmHWM), kB; -1 when unknown. */
static inline long server_hwm_kb(void)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)server);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

/* Metrics of n iterations at (K, B) as `train --metrics` writes them (test_plan_json's). */
static inline void metrics_text(char *s, size_t cap, int K, int B, int n)
{
    size_t at = (size_t)snprintf(s, cap,
                                 "{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"mlp:784-32-10\",\"params\":25450,"
                                 "\"act_bytes\":296,\"input_floats\":784,\"n_train\":2000,\"vm\":\"c5.xlarge\","
                                 "\"threads\":1,\"workers\":%d,\"batch\":%d}\n", K, B);
    double b = (double)B / K;
    for (int i = 1; i <= n && at < cap; i++) {
        double jit = 1 + 0.01 * ((i * 7919) % 13 - 6) / 6.0;
        double tc = (1e-3 + 2e-5 * b) * jit, tm = K > 1 ? 2e-4 * jit : 1e-5, ti = tc + tm + 1e-5;
        at += (size_t)snprintf(s + at, cap - at,
                               "{\"type\":\"iter\",\"iter\":%d,\"epoch_progress\":%.6f,\"workers\":%d,\"batch\":%d,"
                               "\"t_compute\":%.6e,\"t_comm\":%.6e,\"t_iter\":%.6e,\"loss\":1.5,"
                               "\"grad_sqnorm_local_mean\":%.6e,\"grad_sqnorm_global\":%.6e}\n",
                               i, (double)i * B / 2000, K, B, tc, tm, ti, (1 + 100 / b) * jit, (1 + 100.0 / B) * jit);
    }
}

/* A plan request on the metrics of (1, 64) and (2, 64) with the space's fields as given. */
static inline char *plan_request(const char *space)
{
    static char m1[8192], m2[8192];
    metrics_text(m1, sizeof m1, 1, 64, 12);
    metrics_text(m2, sizeof m2, 2, 64, 12);
    cJSON *req = cJSON_Parse(space), *arr = cJSON_AddArrayToObject(req, "metrics");
    cJSON_AddItemToArray(arr, cJSON_CreateString(m1));
    cJSON_AddItemToArray(arr, cJSON_CreateString(m2));
    cJSON_AddNumberToObject(req, "target_epochs", 2);
    char *body = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    return body;
}

/* A connection from 127.0.0.HOST (another client: all of 127/8 is loopback) that sends one
 * byte and stalls; -1 when refused. */
static inline int stalled_client(int host)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in me = {.sin_family = AF_INET}, a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    me.sin_addr.s_addr = htonl(0x7f000000u | (unsigned)host);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (bind(fd, (struct sockaddr *)&me, sizeof me) || connect(fd, (struct sockaddr *)&a, sizeof a) ||
        send_all(fd, "G", 1)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The answer buffer of the service tests' requests. */
static char resp[1 << 20];

/* A job that reaches its target in about a second. */
#define TINY                                                                                                           \
    "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\",\"lr\":0.003,\"target-accuracy\":0.8,"        \
    "\"workers\":\"1,2\",\"batch\":\"32,64\"}"

/* A file's text (at most 4 MiB; malloc'ed), NULL when it cannot be read. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *b = malloc(1 << 22);
    size_t n = b ? fread(b, 1, (1 << 22) - 1, f) : 0;
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

/* Waits for submission sub to leave queued/running (timeout_s); its final JSON in resp. */
static inline long long wait_sub(long long sub, double timeout_s, char *state, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/api/submissions/%lld", sub);
    long long run = 0;
    for (int i = 0; i < timeout_s * 10; i++) {
        if (http("GET", path, NULL, NULL, resp, sizeof resp) != 200) break;
        cJSON *o = json_of(resp);
        snprintf(state, cap, "%s", jstr(o, "state"));
        run = (long long)jnum(o, "run");
        cJSON_Delete(o);
        if (strcmp(state, "queued") && strcmp(state, "running")) return run;
        sleep_ms(100);
    }
    return run;
}

/* A service test binary's main: a fresh store under /tmp/scv-test-NAME-PID, the service
 * started first when `start` (a failed start is the one failure), the tests, the service
 * stopped, the directory removed when every test passed. */
static inline int service_test_main(const scv_test *tests, int n, int argc, char **argv, const char *name, int start)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-%s-%ld", name, (long)getpid());
    mkdir(tmp, 0755);
    snprintf(db, sizeof db, "%s/runs.db", tmp);
    if (start && start_server()) {
        printf("not ok - start: the service did not start (%s serve; log in %s/serve.log)\n0 passed, 1 failed\n", bin,
               tmp);
        if (server > 0) kill(server, SIGKILL);
        return 1;
    }
    int rc = scv_test_main(tests, n, argc, argv);
    if (server > 0) stop_server(SIGTERM);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}

#endif
