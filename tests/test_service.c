/*
 * test_service.c - `scavenger serve` from the outside: starts the service of this build
 * ($SCV_BIN, else build/scavenger) on a free loopback port with a fresh store, and talks
 * HTTP/1.0 to it over sockets. Every endpoint's success and error cases (401 without the
 * token, 400 naming the field, 404, 405, 413), a tiny submitted run that reaches its target
 * and appears in the list with its report, live events while a run trains, stop and
 * resume, the live trade-off curve (the latest plan's points) in a training run's document,
 * planning from posted metrics, a burst of 10,000 bad and good requests from several
 * connections at once with slow clients held open that leaves the service up and the store
 * intact (PRAGMA integrity_check), the response cache following changes made by another
 * connection, a clean shutdown; the queue surviving a restart (SIGTERM: queued submissions
 * come back with their ids and run; the interrupted run resumes) and a crash (SIGKILL: the
 * run left alive is stopped and resumable), and a damaged state file or a second service
 * on the same store refused with an error naming the file; a second service through a
 * symbolic link to the store refused too, a damaged store answered 500 naming it (never 404),
 * and a run's stored reason in its document (its quoted command hidden without the token).
 */
#define _GNU_SOURCE
#include "scv.h"
#include "store/store.h"
#include "scv_test.h"
#include "scv_test_http.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
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

static char resp[1 << 20];

static void t_health(void)
{
    CHECK_EQ_INT(http("GET", "/api/health", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(resp, "Content-Type: application/json") != NULL);
    CHECK(strstr(body_of(resp), "\"ok\":true") != NULL);
}

static void t_token_file(void)
{
    char tp[450], log[400];
    snprintf(tp, sizeof tp, "%s.token", db);
    struct stat st;
    CHECK(stat(tp, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK_EQ_INT(strlen(token), 64);
    snprintf(log, sizeof log, "%s/serve.log", tmp);
    FILE *f = fopen(log, "r");
    char buf[8192] = "";
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    const char *a = strstr(buf, token);
    CHECK_MSG(a && !strstr(a + 1, token), "the token is printed once: %s", buf);
}

static const char *TINY = "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\",\"lr\":0.003,"
                          "\"target-accuracy\":0.8,\"workers\":\"1,2\",\"batch\":\"32,64\"}";

static void t_auth(void)
{
    CHECK_EQ_INT(http("POST", "/api/runs", NULL, TINY, resp, sizeof resp), 401);
    CHECK(strstr(body_of(resp), "Bearer") != NULL);
    CHECK_EQ_INT(http("POST", "/api/runs", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", TINY, resp,
                      sizeof resp), 401);
    CHECK_EQ_INT(http("POST", "/api/runs", "short", TINY, resp, sizeof resp), 401);
    /* a plan is a read (item 22): no token on loopback, as other reads; a cross-site page
     * still cannot post one (Origin), nor name the service's files without the token */
    CHECK_EQ_INT(http("POST", "/api/plan", NULL, "{}", resp, sizeof resp), 400);
    CHECK_EQ_INT(http_x("POST", "/api/plan", NULL, "Origin: http://evil.example\r\n", "{}", resp, sizeof resp), 403);
    CHECK_EQ_INT(http("POST", "/api/plan", NULL, "{\"catalog\":\"/etc/passwd\"}", resp, sizeof resp), 400);
    CHECK(has_field(resp, "catalog"));
    CHECK_EQ_INT(http("POST", "/api/runs/1/stop", NULL, "", resp, sizeof resp), 401);
    CHECK_EQ_INT(http("POST", "/api/runs/1/resume", NULL, "", resp, sizeof resp), 401);
    CHECK_EQ_INT(http("POST", "/api/submissions/1/stop", NULL, "", resp, sizeof resp), 401);
    /* nothing was queued */
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"submissions\":[]") != NULL);
}

static void t_validation(void)
{
    struct {
        const char *body, *field;
    } bad[] = {
        {"{\"model\":", "body"},
        {"[1,2]", "body"},
        {"{\"model\":\"mlp\"} x", "body"},
        {"", "body"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"workers\":true}", "workers"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"workers\":[1,2]}", "workers"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"workers\":\"x\"}", "workers"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"wrokers\":\"1,2\"}", "wrokers"},
        {"{\"model\":\"gpt\",\"target-accuracy\":0.8}", "model"},
        {"{\"model\":\"mlp\",\"hidden\":\"a,b\",\"target-accuracy\":0.8}", "hidden"},
        {"{\"model\":\"mlp\",\"target-accuracy\":1.5}", "target-accuracy"},
        {"{\"model\":\"mlp\",\"target-accuracy\":\"high\"}", "target-accuracy"},
        {"{\"model\":\"mlp\"}", "target-accuracy"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"lr\":-1}", "lr"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"db\":\"/tmp/x.db\"}", "db"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"report\":\"/tmp\"}", "report"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"exec\":\"rm -rf /\"}", "exec"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"hosts\":\"/etc/hosts\"}", "hosts"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"dataset\":\"/etc\"}", "dataset"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"dataset\":\"../../etc\"}", "dataset"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"catalog\":\"/etc/passwd\"}", "catalog"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"dataset\":\"synthetic:-5\"}", "dataset"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"cluster\":\"../x\"}", "cluster"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"model\":\"lenet\"}", "model"},
        {"{\"model\":\"mlp\",\"target-accuracy\":0.8,\"objective\":\"fastest\"}", "objective"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st = http("POST", "/api/runs", token, bad[i].body, resp, sizeof resp);
        CHECK_MSG(st == 400 && has_field(resp, bad[i].field), "%s -> %d %s (expected 400 naming %s)", bad[i].body, st,
                  body_of(resp), bad[i].field);
    }
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"submissions\":[]") != NULL);
}

/* A submitted job's values are read by their rows as `scavenger run` and train read them
 * (search/jobopts.c): a trainer option out of the trainer's range (was taken as "a
 * non-negative number", and the run failed once started), hex where a decimal is meant,
 * an empty item of a list: 400 naming the field, nothing queued. */
static void t_values_by_row(void)
{
    static const char *const bad[][2] = {
        {"\"threads\":0", "threads"},         {"\"threads\":1000", "threads"}, {"\"lr\":\"0x10\"", "lr"},
        {"\"momentum\":1", "momentum"},      {"\"budget\":\"0x10\"", "budget"}, {"\"workers\":\"1,2,\"", "workers"},
        {"\"lr-decay\":\"linear\"", "lr-decay"}, {"\"seed\":-1", "seed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char job[400];
        snprintf(job, sizeof job, "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\","
                 "\"target-accuracy\":0.8,%s}", bad[i][0]);
        int st = http("POST", "/api/runs", token, job, resp, sizeof resp);
        CHECK_MSG(st == 400 && has_field(resp, bad[i][1]) && strstr(body_of(resp), "expected"), "%s -> %d %s",
                  bad[i][0], st, body_of(resp));
    }
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"submissions\":[]") != NULL);
}

static void t_body_limit(void)
{
    size_t n = 70000;
    char *big = malloc(n + 1);
    if (!big) return;
    memset(big, ' ', n);
    memcpy(big, "{\"model\":\"mlp\"", 14);
    big[n - 1] = '}';
    big[n] = 0;
    CHECK_EQ_INT(http("POST", "/api/runs", token, big, resp, sizeof resp), 413);
    CHECK_EQ_INT(http("POST", "/api/plan", token, big, resp, sizeof resp), 413);
    free(big);
    CHECK_EQ_INT(http("GET", "/api/health", NULL, NULL, resp, sizeof resp), 200);
}

static void t_not_found(void)
{
    const char *paths[] = {"/api/nope", "/api/runs/999", "/api/runs/abc", "/api/runs/0", "/api/runs/1x",
                           "/api/runs/999/series", "/api/runs/999/events", "/api/runs/1/nope", "/api/submissions/999",
                           "/nope.html", "/api/runs/99999999999999999999"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int st = http("GET", paths[i], NULL, NULL, resp, sizeof resp);
        CHECK_MSG(st == 404 && strstr(body_of(resp), "\"error\""), "%s -> %d", paths[i], st);
    }
    CHECK_EQ_INT(http("POST", "/api/runs/999/stop", token, "", resp, sizeof resp), 404);
    CHECK_EQ_INT(http("POST", "/api/runs/999/resume", token, "", resp, sizeof resp), 404);
    CHECK_EQ_INT(http("POST", "/api/submissions/999/stop", token, "", resp, sizeof resp), 404);
    CHECK_EQ_INT(http("DELETE", "/api/runs", token, NULL, resp, sizeof resp), 405);
    CHECK_EQ_INT(http("GET", "/api/plan", NULL, NULL, resp, sizeof resp), 405);
    CHECK_EQ_INT(http("POST", "/api/catalog", token, "{}", resp, sizeof resp), 405);
    CHECK_EQ_INT(http("GET", "/api/runs?limit=0", NULL, NULL, resp, sizeof resp), 400);
    CHECK(has_field(resp, "limit"));
    CHECK_EQ_INT(http("GET", "/api/runs?offset=-1", NULL, NULL, resp, sizeof resp), 400);
    CHECK(has_field(resp, "offset"));
    CHECK_EQ_INT(http("GET", "/api/runs?limit=abc", NULL, NULL, resp, sizeof resp), 400);
}

static void t_dashboard(void)
{
    CHECK_EQ_INT(http("GET", "/", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(resp, "text/html") && strstr(resp, "Content-Security-Policy: default-src 'self'"));
    CHECK(strstr(body_of(resp), "<script src=\"/app.js\">") != NULL);
    CHECK(!strstr(body_of(resp), "http://") && !strstr(body_of(resp), "https://")); /* no fetches elsewhere */
    CHECK_EQ_INT(http("GET", "/app.js", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(resp, "text/javascript") && strstr(body_of(resp), "EventSource"));
    CHECK_EQ_INT(http("GET", "/app.css", NULL, NULL, resp, sizeof resp), 200);
}

static void t_catalog_clusters(void)
{
    CHECK_EQ_INT(http("GET", "/api/catalog", NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "vms")) > 10);
    CHECK(strstr(body_of(resp), "\"name\":\"c5.xlarge\"") != NULL);
    cJSON_Delete(o);
    CHECK_EQ_INT(http("GET", "/api/clusters", NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK(cJSON_IsArray(cJSON_GetObjectItem(o, "clusters")));
    cJSON_Delete(o);
}

/* Waits for submission sub to leave queued/running (timeout_s); its final JSON in resp. */
static long long wait_sub(long long sub, double timeout_s, char *state, size_t cap)
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

static long long tiny_run;

static void t_submit_run(void)
{
    CHECK_EQ_INT(http("POST", "/api/runs", token, TINY, resp, sizeof resp), 202);
    cJSON *o = json_of(resp);
    long long sub = (long long)jnum(o, "id");
    CHECK(sub >= 1 && !strcmp(jstr(o, "state"), "queued"));
    cJSON_Delete(o);
    char state[32] = "";
    tiny_run = wait_sub(sub, 90, state, sizeof state);
    CHECK_MSG(!strcmp(state, "done") && tiny_run >= 1, "state %s run %lld: %s", state, tiny_run, body_of(resp));
    if (tiny_run < 1) return;
    /* in the list, with its outcome; the filters */
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "runs"), 0);
    CHECK(jnum(r0, "id") == tiny_run && !strcmp(jstr(r0, "status"), "done") && cJSON_IsTrue(cJSON_GetObjectItem(r0, "reached")));
    CHECK(jnum(r0, "workers") >= 1 && jnum(r0, "accuracy") >= 0.79);
    /* the listed predicted_* are marked nominal or not (the report's "nominal" agrees below) */
    const cJSON *nom = cJSON_GetObjectItem(r0, "nominal");
    CHECK(cJSON_IsBool(nom));
    int listed_nominal = cJSON_IsTrue(nom);
    CHECK(jnum(o, "total") == 1);
    /* item 22: the target and the VM type, named as report.json names them */
    CHECK_MSG(jnum(r0, "target_accuracy") == 0.8 && !strcmp(jstr(r0, "target_metric"), "test_accuracy") &&
                  cJSON_IsNull(cJSON_GetObjectItem(r0, "target_loss")) && !strcmp(jstr(r0, "vm"), "c5.xlarge"),
              "%.800s", body_of(resp));
    cJSON_Delete(o);
    CHECK_EQ_INT(http("GET", "/api/runs?status=done&job=model%3Dmlp%3Bhidden%3D32%3Bdataset%3Dsynthetic%3A2000", NULL,
                      NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"total\":1,") != NULL, "%s", body_of(resp));
    CHECK_EQ_INT(http("GET", "/api/runs?status=running", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"total\":0,") != NULL);
    CHECK_EQ_INT(http("GET", "/api/runs?limit=1&offset=1", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"runs\":[],\"total\":1") != NULL);
    /* the detail: phases, measurements, models, decisions, the report with its plan */
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%lld", tiny_run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK(o != NULL);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "steps")) >= 1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "measurements")) >= 1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "decisions")) >= 1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "evals")) >= 1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "models")) >= 1);
    const cJSON *rep = cJSON_GetObjectItem(o, "report");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(rep, "reached")));
    CHECK(cJSON_IsBool(cJSON_GetObjectItem(rep, "nominal")) &&
          cJSON_IsTrue(cJSON_GetObjectItem(rep, "nominal")) == listed_nominal);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "front")) >= 1 && jnum(rep, "chosen.workers") >= 1);
    CHECK(!strcmp(jstr(cJSON_GetObjectItem(o, "submission"), "state"), "done"));
    CHECK(!strcmp(jstr(cJSON_GetObjectItem(o, "job"), "model"), "mlp"));
    cJSON_Delete(o);
    snprintf(path, sizeof path, "/api/runs/%lld/series", tiny_run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK(jnum(o, "iterations") > 10 && cJSON_GetArraySize(cJSON_GetObjectItem(o, "points")) > 10);
    CHECK(jnum(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "points"), 0), "t_iter") > 0);
    cJSON_Delete(o);
    /* a finished run's events: its document, then the end */
    snprintf(path, sizeof path, "/api/runs/%lld/events", tiny_run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(resp, "text/event-stream") != NULL);
    const char *ev = strstr(resp, "event: run\ndata: {");
    CHECK(ev && strstr(ev, "event: end\n"));
    /* finished: nothing to stop or resume */
    snprintf(path, sizeof path, "/api/runs/%lld/resume", tiny_run);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 409);
    snprintf(path, sizeof path, "/api/runs/%lld/stop", tiny_run);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 409);
}

/* Item 22: a served run's report lies in the run's own folder (DB.runs/ID) and is served
 * (files/NAME, read access as other reads); its log is read in windows from a byte offset,
 * bounded. A run whose job names an external trainer keeps both behind the token:
 * hidden_reads. */
static void t_run_files(void)
{
    CHECK(tiny_run > 0);
    if (tiny_run < 1) return;
    char path[600];
    struct stat st;
    snprintf(path, sizeof path, "%s.runs/%lld/report.json", db, tiny_run);
    CHECK_MSG(stat(path, &st) == 0 && S_ISREG(st.st_mode), "no report in the run's folder: %s", path);
    snprintf(path, sizeof path, "%s.runs/%lld/report.md", db, tiny_run);
    CHECK(stat(path, &st) == 0);
    const char *files[][2] = {{"report.md", "text/plain"}, {"report.json", "application/json"},
                              {"tradeoff.svg", "image/svg+xml"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/api/runs/%lld/files/%s", tiny_run, files[i][0]);
        CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
        CHECK_MSG(strstr(resp, files[i][1]) && strlen(body_of(resp)) > 100, "%s: %.300s", files[i][0], resp);
    }
    const char *bad[] = {"files/passwd", "files/../runs.db", "files/", "logs"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "/api/runs/%lld/%s", tiny_run, bad[i]);
        CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 404);
    }
    /* the log: the tail first, then from an offset; bounded; the offset checked */
    snprintf(path, sizeof path, "/api/runs/%lld/log", tiny_run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    double next = jnum(o, "next"), size = jnum(o, "size");
    CHECK_MSG(!strcmp(jstr(o, "name"), "run") && size > 0 && next == size && strlen(jstr(o, "text")) > 0 &&
                  jnum(o, "max_bytes") <= 65536,
              "%.500s", body_of(resp));
    cJSON_Delete(o);
    snprintf(path, sizeof path, "/api/runs/%lld/log?name=run&offset=%.0f", tiny_run, size > 10 ? size - 10 : 0);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_MSG(jnum(o, "next") == size && strlen(jstr(o, "text")) == (size > 10 ? 10 : size), "%.500s", body_of(resp));
    cJSON_Delete(o);
    const char *qs[][2] = {{"offset=-1", "offset"}, {"offset=x", "offset"}, {"name=secrets", "name"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/api/runs/%lld/log?%s", tiny_run, qs[i][0]);
        CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 400);
        CHECK(has_field(resp, qs[i][1]));
    }
    CHECK_EQ_INT(http("GET", "/api/runs/99999/log", NULL, NULL, resp, sizeof resp), 404);
    /* the elastic job's log (the default driver's), where the driver writes it: both name it
     * by core/rundir.h (the service looked for DB.runs/ID/job.log, the driver wrote
     * DB.runs/ID/elastic/job.log: never found) */
    snprintf(path, sizeof path, "%s.runs/%lld/elastic/job.log", db, tiny_run);
    CHECK_MSG(stat(path, &st) == 0 && st.st_size > 0, "the elastic job wrote no log at %s", path);
    snprintf(path, sizeof path, "/api/runs/%lld/log?name=job", tiny_run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    const cJSON *names = cJSON_GetObjectItem(o, "names");
    CHECK_MSG(!strcmp(jstr(o, "name"), "job") && jnum(o, "size") == st.st_size && cJSON_GetArraySize(names) == 2 &&
                  !strcmp(cJSON_GetArrayItem(names, 1)->valuestring, "job"),
              "%.500s", body_of(resp));
    cJSON_Delete(o);
    /* an external trainer's run: hidden_reads (its files need the token) */
}

/* A longer run: live events while it trains, then stop (interrupted) and resume (done). */
static void t_live_stop_resume(void)
{
    /* about 6 s on 2 cores: a wider network learning slowly */
    const char *job = "{\"model\":\"mlp\",\"hidden\":\"256,256\",\"dataset\":\"synthetic:8000\",\"lr\":0.0005,"
                      "\"target-accuracy\":0.9,\"workers\":\"1,2\",\"batch\":\"32,128\"}";
    CHECK_EQ_INT(http("POST", "/api/runs", token, job, resp, sizeof resp), 202);
    cJSON *o = json_of(resp);
    long long sub = (long long)jnum(o, "id");
    cJSON_Delete(o);
    char path[96];
    snprintf(path, sizeof path, "/api/submissions/%lld", sub);
    long long run = 0;
    for (int i = 0; i < 300 && !run; i++) { /* the run exists once the child stored it */
        http("GET", path, NULL, NULL, resp, sizeof resp);
        o = json_of(resp);
        run = (long long)jnum(o, "run");
        if (!(run > 0)) run = 0;
        cJSON_Delete(o);
        if (!run) sleep_ms(50);
    }
    CHECK(run > tiny_run);
    if (!run) return;
    /* the event stream: read until the running run's document and two changes of it came
     * (the document once, then deltas: test_service_load events_delta checks them) */
    int fd = connect_server();
    char req[160], buf[1 << 16];
    snprintf(req, sizeof req, "GET /api/runs/%lld/events HTTP/1.0\r\n\r\n", run);
    CHECK(fd >= 0 && send_all(fd, req, strlen(req)) == 0);
    size_t len = 0;
    int docs = 0, running_docs = 0;
    double t0 = mono_s();
    while (fd >= 0 && docs < 3 && len + 1 < sizeof buf) {
        ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (r <= 0) break;
        len += (size_t)r;
        buf[len] = 0;
        docs = 0, running_docs = 0;
        for (const char *p = buf; (p = strstr(p, "event: run\ndata: ")); p++) {
            docs++;
            const char *nl = strchr(p + 17, '\n');
            if (nl && memmem(p, (size_t)(nl - p), "\"status\":\"running\"", 18)) running_docs++;
        }
        for (const char *p = buf; running_docs && (p = strstr(p, "event: delta\ndata: {")); p++) docs++;
        if (mono_s() - t0 > 60) break;
    }
    if (fd >= 0) close(fd);
    CHECK_MSG(docs >= 3 && running_docs >= 1, "%d documents and deltas, %d documents of a running run", docs,
              running_docs);
    /* the live trade-off curve: once the loop planned, the running run's document holds the
     * latest plan's points (a models row of kind "plan", one only) before any report */
    snprintf(path, sizeof path, "/api/runs/%lld", run);
    cJSON *plan = NULL;
    int n_plans = 0, running_then = 0, no_report = 0;
    for (int i = 0; i < 600 && !plan; i++) {
        if (http("GET", path, NULL, NULL, resp, sizeof resp) != 200) break;
        o = json_of(resp);
        const cJSON *row;
        n_plans = 0;
        cJSON_ArrayForEach(row, cJSON_GetObjectItem(o, "models")) if (!strcmp(jstr(row, "kind"), "plan")) {
            n_plans++;
            cJSON_Delete(plan);
            plan = cJSON_Parse(jstr(row, "json"));
        }
        running_then = !strcmp(jstr(cJSON_GetObjectItem(o, "run"), "status"), "running");
        no_report = cJSON_IsNull(cJSON_GetObjectItem(o, "report"));
        cJSON_Delete(o);
        if (!plan) sleep_ms(50);
    }
    CHECK_MSG(plan && n_plans == 1 && running_then && no_report, "plan %p (%d rows), running %d, no report %d",
              (void *)plan, n_plans, running_then, no_report);
    const cJSON *pts = cJSON_GetObjectItem(plan, "points"), *pt;
    int n_pts = 0, good = 0, front = 0;
    cJSON_ArrayForEach(pt, pts) {
        n_pts++;
        good += jnum(pt, "time_s") > 0 && jnum(pt, "cost") > 0 && jnum(pt, "workers") >= 1 && jnum(pt, "batch") >= 32 &&
                jnum(pt, "err_rel") >= 0 && jstr(pt, "vm")[0] && cJSON_IsBool(cJSON_GetObjectItem(pt, "pareto"));
        front += cJSON_IsTrue(cJSON_GetObjectItem(pt, "pareto"));
    }
    CHECK_MSG(n_pts == 4 && good == n_pts && front >= 1, "%d points (K 1,2 x B 32,128), %d whole, %d on the front", n_pts,
              good, front);
    CHECK(cJSON_IsBool(cJSON_GetObjectItem(plan, "relative")) && jnum(plan, "chosen.workers") >= 1 &&
          jnum(plan, "chosen.time_s") > 0);
    cJSON_Delete(plan);
    /* stop it: interrupted in the store, resumable */
    snprintf(path, sizeof path, "/api/runs/%lld/stop", run);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 202);
    char state[32] = "";
    wait_sub(sub, 60, state, sizeof state);
    CHECK_MSG(!strcmp(state, "stopped"), "state %s: %s", state, body_of(resp));
    snprintf(path, sizeof path, "/api/runs/%lld", run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"status\":\"interrupted\"") != NULL, "%.300s", body_of(resp));
    snprintf(path, sizeof path, "/api/runs/%lld/resume", run);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 202);
    o = json_of(resp);
    long long sub2 = (long long)jnum(o, "id");
    CHECK(jnum(o, "resumes") == run);
    cJSON_Delete(o);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 409); /* queued or running already */
    long long run2 = wait_sub(sub2, 120, state, sizeof state);
    CHECK_MSG(!strcmp(state, "done") && run2 == run, "state %s run %lld: %s", state, run2, body_of(resp));
    snprintf(path, sizeof path, "/api/runs/%lld", run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"status\":\"done\"") != NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *b = malloc(1 << 22);
    size_t n = b ? fread(b, 1, (1 << 22) - 1, f) : 0;
    fclose(f);
    if (b) b[n] = 0;
    return b;
}

static void t_plan(void)
{
    CHECK_EQ_INT(http("POST", "/api/plan", token, "{\"profile\":\"/etc/passwd\",\"target_epochs\":2}", resp, sizeof resp), 400);
    CHECK(has_field(resp, "profile"));
    CHECK_EQ_INT(http("POST", "/api/plan", token, "{\"catalog\":\"/etc/passwd\"}", resp, sizeof resp), 400);
    CHECK(has_field(resp, "catalog"));
    CHECK_EQ_INT(http("POST", "/api/plan", token, "{not json", resp, sizeof resp), 400);
    CHECK(has_field(resp, "body"));
    CHECK_EQ_INT(http("POST", "/api/plan", token, "{\"metrics\":5,\"target_epochs\":2}", resp, sizeof resp), 400);
    CHECK_MSG(strstr(body_of(resp), "metrics") != NULL, "%s", body_of(resp));
    /* the tiny run's segment files are metrics of two configurations: the first file of each
     * configuration (seg-N-PHASE-kK-bB.jsonl; however many segments the run made, the request
     * stays under the body limit) */
    char dir[500], cmd[700], seen[8][32];
    int n_seen = 0;
    snprintf(dir, sizeof dir, "%s.runs/%lld", db, tiny_run);
    snprintf(cmd, sizeof cmd, "ls %s/seg-*.jsonl 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    char line[600];
    cJSON *req = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(req, "metrics");
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        const char *kb = strstr(line, "-k");
        int dup = !kb;
        for (int i = 0; kb && i < n_seen; i++) dup |= !strcmp(seen[i], kb);
        if (dup || n_seen == 8) continue;
        snprintf(seen[n_seen++], sizeof seen[0], "%s", kb);
        char *t = slurp(line);
        if (t) cJSON_AddItemToArray(arr, cJSON_CreateString(t));
        free(t);
    }
    if (p) pclose(p);
    CHECK(cJSON_GetArraySize(arr) >= 2);
    cJSON_AddNumberToObject(req, "target_epochs", 2);
    cJSON_AddNumberToObject(req, "base_batch", 32);
    cJSON_AddStringToObject(req, "vm", "c5.xlarge,c5.2xlarge");
    cJSON_AddStringToObject(req, "workers", "1..4");
    cJSON_AddStringToObject(req, "batch", "32..128");
    char *body = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    int st = body ? http("POST", "/api/plan", token, body, resp, sizeof resp) : 0;
    free(body);
    CHECK_MSG(st == 200, "%d %s", st, body_of(resp));
    cJSON *o = json_of(resp);
    CHECK(jnum(o, "chosen.workers") >= 1 && cJSON_GetArraySize(cJSON_GetObjectItem(o, "front")) >= 1);
    cJSON_Delete(o);
}

/* ---- the limits of one client and of one request (svc_limits) ---- */

/* An /api/plan space over the limit (every VM type x 1..1024 workers x 8 batch sizes, 606,208
 * points: 150 MB and 6.7 s of work before the limit) is refused at once with 422 naming the
 * limit, and the service does not grow; a request may not raise the limit; a space within it
 * is planned. */
static void t_limit_plan(void)
{
    char *big = plan_request("{\"vm\":\"all\",\"workers\":\"1..1024\",\"batch\":\"32..4096\",\"all\":true}");
    char *raise = plan_request("{\"vm\":\"all\",\"workers\":\"1..1024\",\"max_points\":100000000}");
    char *small = plan_request("{\"vm\":\"c5.xlarge,c5.2xlarge\",\"workers\":\"1..8\",\"batch\":\"32..256\"}");
    long hwm0 = server_hwm_kb();
    double t0 = mono_s();
    int st = big ? http("POST", "/api/plan", token, big, resp, sizeof resp) : 0;
    double dt = mono_s() - t0;
    long hwm1 = server_hwm_kb();
    CHECK_MSG(st == 422, "%d %.300s", st, body_of(resp));
    cJSON *o = json_of(resp);
    CHECK_MSG(!strcmp(jstr(o, "limit"), "max_plan_points") && jnum(o, "max") == 100000 &&
                  strstr(jstr(o, "error"), "x 1024 worker count(s) x 8 batch size(s)") && strstr(jstr(o, "error"), "--max-plan-points"),
              "%.400s", body_of(resp));
    cJSON_Delete(o);
    CHECK_MSG(dt < 5.0, "refused after %.2f s", dt);
    CHECK_MSG(hwm0 > 0 && hwm1 - hwm0 < 20000, "the service grew from %ld to %ld kB", hwm0, hwm1);
    st = raise ? http("POST", "/api/plan", token, raise, resp, sizeof resp) : 0;
    CHECK_MSG(st == 400 && has_field(resp, "max_points"), "%d %.300s", st, body_of(resp));
    st = small ? http("POST", "/api/plan", token, small, resp, sizeof resp) : 0;
    CHECK_MSG(st == 200, "%d %.300s", st, body_of(resp));
    free(big), free(raise), free(small);
}

/* synthetic:N beyond SCV_SYNTHETIC_MAX_N (its samples within 2 GiB per rank) is refused on
 * submit, naming the limit; nothing is queued. */
static void t_limit_synthetic(void)
{
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    int n0 = cJSON_GetArraySize(cJSON_GetObjectItem(o, "submissions"));
    cJSON_Delete(o);
    static const char *const big[] = {"synthetic:10000000", "synthetic:570472"};
    for (int i = 0; i < 2; i++) {
        char job[300];
        snprintf(job, sizeof job, "{\"model\":\"mlp\",\"dataset\":\"%s\",\"target-accuracy\":0.8}", big[i]);
        int st = http("POST", "/api/runs", token, job, resp, sizeof resp);
        CHECK_MSG(st == 400 && has_field(resp, "dataset") && strstr(body_of(resp), "570471") &&
                      strstr(body_of(resp), "SCV_SYNTHETIC_MAX_N"),
                  "%s: %d %.300s", big[i], st, body_of(resp));
    }
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "submissions")), n0);
    cJSON_Delete(o);
}

/* 60 slow clients from one address against a service of 32 connections at most, 8 per
 * address, 1 s of silence, 1 s for a request: they hold 8, and a well-behaved client
 * (another address) is answered (within 5 s: a loaded machine); a silent connection is closed after its
 * timeout, and one trickling a byte every 250 ms (never silent) at its request deadline. */
#define SLOW_CLIENTS 60
static void t_limit_slow_clients(void)
{
    CHECK(stop_server(SIGTERM) != -1);
    static const char *const lim[] = {"--max-conns", "32", "--max-conns-per-ip", "8", "--conn-timeout", "1",
                                        "--request-timeout", "1", NULL};
    memcpy(extra_args, lim, sizeof lim);
    int started = start_server() == 0;
    CHECK(started);
    int slow[SLOW_CLIENTS];
    for (int i = 0; i < SLOW_CLIENTS; i++) slow[i] = started ? stalled_client(2) : -1;
    int trickle = started ? stalled_client(3) : -1;
    double t_trickle = mono_s();
    sleep_ms(100); /* the service has taken them in (or closed them) */
    double t0 = mono_s();
    int st = http("GET", "/api/runs", NULL, NULL, resp, sizeof resp);
    double dt = mono_s() - t0;
    CHECK_MSG(st == 200 && dt < 5.0, "GET /api/runs with %d slow clients open: %d after %.2f s", SLOW_CLIENTS, st, dt);
    /* the trickling client is cut at its request deadline (1 s), though never silent */
    char b[256];
    int cut = 0;
    while (trickle >= 0 && !cut && mono_s() - t_trickle < 6.0) {
        sleep_ms(250);
        ssize_t r = recv(trickle, b, sizeof b, MSG_DONTWAIT);
        cut = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || send_all(trickle, "E", 1);
    }
    CHECK_MSG(cut, "a client trickling bytes is still connected after %.2f s", mono_s() - t_trickle);
    if (trickle >= 0) close(trickle);
    /* the first slow client (accepted) is closed for its silence: recv sees the end */
    t0 = mono_s();
    ssize_t r = slow[0] >= 0 ? recv(slow[0], b, sizeof b, 0) : 0;
    dt = mono_s() - t0;
    CHECK_MSG(slow[0] >= 0 && r >= 0 && dt < 6.0, "a silent connection: recv %zd after %.2f s", r, dt);
    for (int i = 0; i < SLOW_CLIENTS; i++)
        if (slow[i] >= 0) close(slow[i]);
    CHECK(stop_server(SIGTERM) != -1);
    extra_args[0] = NULL;
    CHECK(start_server() == 0);
}

/* One connection's share of the burst: requests i = first, first + step, ... below n. */
typedef struct burst {
    int first, step, n, answered, ok;
} burst;

static void *burst_worker(void *arg)
{
    burst *b = arg;
    static const char *const paths[] = {"/api/runs", "/api/runs/1", "/api/nope", "/api/runs/abc", "/api/health"};
    size_t cap = 1 << 18;
    char *buf = malloc(cap);
    for (int i = b->first; buf && i < b->n; i += b->step) {
        int st = i % 7 == 3 ? http("POST", "/api/runs", token, "{\"model\":", buf, cap)
                            : http("GET", paths[i % 5], NULL, NULL, buf, cap);
        b->answered += st > 0;
        b->ok += st == 200 || st == 400 || st == 404;
    }
    free(buf);
    return NULL;
}

#define BURST_REQUESTS 10000
#define BURST_CONNS 8

/* Garbage, slow clients and a burst: the service stays up and the store intact. */
static void t_bad_requests(void)
{
    const char *garbage[] = {"GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET /api/runs HTTP/9.9\r\n\r\n",
                             "POST /api/runs HTTP/1.0\r\nContent-Length: -5\r\n\r\n",
                             "POST /api/runs HTTP/1.0\r\nContent-Length: 99999999999999999999\r\n\r\n",
                             "GET /api/runs/%00 HTTP/1.0\r\n\r\n", "\x01\x02\x03\xff\r\n\r\n"};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        int fd = connect_server();
        if (fd < 0) continue;
        send_all(fd, garbage[i], strlen(garbage[i]));
        char b[4096];
        while (recv(fd, b, sizeof b, 0) > 0) {}
        close(fd);
    }
    /* slow clients: half a request each, held open while the service answers others */
    int slow[20];
    for (int i = 0; i < 20; i++) {
        slow[i] = connect_server();
        if (slow[i] >= 0) send_all(slow[i], "GET /api/runs HTTP/1.0\r\nHost: x", 31);
    }
    /* a burst: 10,000 requests of every kind, good and bad, BURST_CONNS in flight at once */
    burst b[BURST_CONNS];
    pthread_t th[BURST_CONNS];
    int started[BURST_CONNS], ok = 0, answered = 0;
    double t0 = mono_s();
    for (int k = 0; k < BURST_CONNS; k++) {
        b[k] = (burst){.first = k, .step = BURST_CONNS, .n = BURST_REQUESTS};
        started[k] = pthread_create(&th[k], NULL, burst_worker, &b[k]) == 0;
        if (!started[k]) burst_worker(&b[k]);
    }
    for (int k = 0; k < BURST_CONNS; k++) {
        if (started[k]) pthread_join(th[k], NULL);
        answered += b[k].answered, ok += b[k].ok;
    }
    printf("#   %d requests from %d connections at once in %.2f s\n", BURST_REQUESTS, BURST_CONNS, mono_s() - t0);
    CHECK_EQ_INT(answered, BURST_REQUESTS);
    CHECK_EQ_INT(ok, BURST_REQUESTS);
    for (int i = 0; i < 20; i++)
        if (slow[i] >= 0) close(slow[i]);
    CHECK_EQ_INT(http("GET", "/api/health", NULL, NULL, resp, sizeof resp), 200);
    scv_store *s = NULL;
    char msg[256] = "";
    CHECK(scv_store_open(db, &s, NULL) == SCV_OK);
    CHECK(s && scv_store_integrity(s, msg, sizeof msg, NULL) == SCV_OK && !strcmp(msg, "ok"));
    scv_store_close(s);
}

/* The runs list and a run's detail are cached: a change by another connection to the store
 * (a run created, its status set) or to a run's report.json shows in the next answer. */
static void t_cache(void)
{
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    double total = jnum(o, "total");
    cJSON_Delete(o);
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 200); /* a hit */
    CHECK(strstr(body_of(resp), "\"total\":") != NULL);
    scv_store *s = NULL;
    long long id = 0;
    CHECK(scv_store_open(db, &s, NULL) == SCV_OK);
    if (!s) return;
    CHECK(scv_store_run_new(s, "model=cache-test", "{\"model\":\"mlp\"}", &id, NULL) == SCV_OK);
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_MSG(jnum(o, "total") == total + 1 && jnum(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "runs"), 0), "id") == id,
              "%s", body_of(resp));
    cJSON_Delete(o);
    char path[64], dir[600], file[700], tmpf[720];
    snprintf(path, sizeof path, "/api/runs/%lld", id);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"report\":null") != NULL, "%s", body_of(resp));
    CHECK(scv_store_run_status(s, id, "interrupted", NULL) == SCV_OK);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_MSG(!strcmp(jstr(cJSON_GetObjectItem(o, "run"), "status"), "interrupted"), "%s", body_of(resp));
    cJSON_Delete(o);
    scv_store_close(s);
    /* the report appears, then changes (same size, a new file): each shows at once */
    snprintf(dir, sizeof dir, "%s.runs/%lld", db, id);
    snprintf(file, sizeof file, "%s/report.json", dir);
    snprintf(tmpf, sizeof tmpf, "%s.tmp", file);
    char dirs[700];
    snprintf(dirs, sizeof dirs, "%s.runs", db);
    mkdir(dirs, 0755);
    mkdir(dir, 0755);
    for (int mark = 1; mark <= 2; mark++) {
        FILE *f = fopen(tmpf, "w");
        CHECK(f && fprintf(f, "{\"mark\":%d}\n", mark) > 0 && fclose(f) == 0 && rename(tmpf, file) == 0);
        CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
        o = json_of(resp);
        CHECK_MSG(jnum(cJSON_GetObjectItem(o, "report"), "mark") == mark, "%s", body_of(resp));
        cJSON_Delete(o);
    }
}

static void t_shutdown(void)
{
    CHECK(kill(server, SIGTERM) == 0);
    int st = -1;
    for (int i = 0; i < 200; i++) {
        if (waitpid(server, &st, WNOHANG) == server) break;
        sleep_ms(50);
    }
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    server = 0;
    /* a second start reads the token and does not print it */
    char log[400];
    snprintf(log, sizeof log, "%s/serve.log", tmp);
    CHECK(start_server() == 0);
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 200);
    CHECK(strstr(body_of(resp), "\"total\":3,") != NULL); /* the two submitted, t_cache's */
    char *l = slurp(log);
    const char *a = l ? strstr(l, token) : NULL;
    CHECK(a && !strstr(a + 1, token));
    free(l);
    kill(server, SIGTERM);
    waitpid(server, &st, 0);
    server = 0;
}

/* ---- the queue across restarts ---- */

/* a run of several seconds */
static const char *SLOW = "{\"model\":\"mlp\",\"hidden\":\"256,256\",\"dataset\":\"synthetic:8000\",\"lr\":0.0005,"
                          "\"target-accuracy\":0.9,\"workers\":\"1,2\",\"batch\":\"32,128\"}";
static const char *QUICK = "{\"model\":\"logreg\",\"dataset\":\"synthetic:500\",\"lr\":0.01,\"target-accuracy\":0.5,"
                           "\"workers\":\"1,2\",\"batch\":\"32\"}"; /* a K >= 2: the loop refuses K = 1 only */

/* POSTs a job: the submission's id (0 on failure). */
static long long submit(const char *job)
{
    if (http("POST", "/api/runs", token, job, resp, sizeof resp) != 202) return 0;
    cJSON *o = json_of(resp);
    long long id = (long long)jnum(o, "id");
    cJSON_Delete(o);
    return id > 0 ? id : 0;
}

/* Submission id's state, run and submission time (state "" when it is not there). */
static void sub_info(long long id, char *state, size_t cap, long long *run, double *submitted)
{
    char path[64];
    snprintf(path, sizeof path, "/api/submissions/%lld", id);
    state[0] = 0, *run = 0, *submitted = NAN;
    if (http("GET", path, NULL, NULL, resp, sizeof resp) != 200) return;
    cJSON *o = json_of(resp);
    snprintf(state, cap, "%s", jstr(o, "state"));
    double r = jnum(o, "run");
    *run = r > 0 ? (long long)r : 0;
    *submitted = jnum(o, "submitted");
    cJSON_Delete(o);
}

/* Waits until submission id has a run and is running (timeout_s): the run, or 0. */
static long long wait_running(long long id, double timeout_s)
{
    char state[32];
    long long run = 0;
    double sub;
    for (int i = 0; i < timeout_s * 20; i++) {
        sub_info(id, state, sizeof state, &run, &sub);
        if (run && !strcmp(state, "running")) return run;
        if (strcmp(state, "queued") && strcmp(state, "running")) return 0;
        sleep_ms(50);
    }
    return 0;
}

/* Waits until run has trained an iteration: its child is past its start-up probe (a stop
 * during the probe fails the run instead of interrupting it). */
static int wait_trained(long long run, double timeout_s)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%lld/series", run);
    for (int i = 0; i < timeout_s * 20; i++) {
        if (http("GET", path, NULL, NULL, resp, sizeof resp) != 200) return 0;
        cJSON *o = json_of(resp);
        double n = jnum(o, "iterations");
        cJSON_Delete(o);
        if (n >= 1) return 1;
        sleep_ms(50);
    }
    return 0;
}

/* Process group pgid has a member that is not a zombie (after the service's crash the run's
 * processes are reparented to init, which reaps them when it will). */
static int group_live(long long pgid)
{
    if (pgid <= 1 || (kill(-(pid_t)pgid, 0) && errno == ESRCH)) return 0;
    FILE *p = popen("cat /proc/[0-9]*/stat 2>/dev/null", "r");
    char line[1024];
    int live = 0;
    while (p && fgets(line, sizeof line, p)) {
        const char *r = strrchr(line, ')');
        char st;
        long ppid, pgrp;
        if (r && sscanf(r + 1, " %c %ld %ld", &st, &ppid, &pgrp) == 3 && pgrp == pgid && st != 'Z' && st != 'X') live = 1;
    }
    if (p) pclose(p);
    return live;
}

static void state_path(char *buf, size_t cap) { snprintf(buf, cap, "%s.serve/submissions.json", db); }

/* The run's status in the store ("" when it cannot be read). */
static void run_status(long long run, char *status, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%lld", run);
    status[0] = 0;
    if (http("GET", path, NULL, NULL, resp, sizeof resp) != 200) return;
    cJSON *o = json_of(resp);
    snprintf(status, cap, "%s", jstr(cJSON_GetObjectItem(o, "run"), "status"));
    cJSON_Delete(o);
}

/* A run and two queued behind it (--max-runs 1); SIGTERM; a restart on the same store: the
 * queued submissions are there with their ids and submission times and run to completion,
 * the interrupted one is stopped and its run interrupted; its resume gets the next id.
 * Then the service dies (SIGKILL) while the resume runs: the run's processes live on in
 * their own process group; the restarted service stops them (SIGINT, then SIGKILL) and the
 * submission is stopped: the run is resumable again. */
static void t_restart_queue(void)
{
    if (!server) CHECK(start_server() == 0);
    long long a = submit(SLOW), b = submit(QUICK), c = submit(QUICK);
    CHECK_MSG(a > 0 && b == a + 1 && c == b + 1, "submissions %lld %lld %lld", a, b, c);
    long long run_a = wait_running(a, 60);
    CHECK_MSG(run_a > 0 && wait_trained(run_a, 60), "submission %lld did not start a run", a);
    char state[32], st_b[32], st_c[32];
    long long run;
    double sub_b, sub_c, t;
    sub_info(b, st_b, sizeof st_b, &run, &sub_b);
    sub_info(c, st_c, sizeof st_c, &run, &sub_c);
    CHECK_MSG(!strcmp(st_b, "queued") && !strcmp(st_c, "queued"), "%s %s", st_b, st_c);
    int st = stop_server(SIGTERM);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    char file[500];
    state_path(file, sizeof file);
    char *saved = slurp(file);
    CHECK_MSG(saved && strstr(saved, "\"state\":\"queued\""), "%s: %.300s", file, saved ? saved : "(none)");
    free(saved);
    CHECK(start_server() == 0);
    /* the same submissions: the interrupted one stopped (resumable), the queued ones back */
    sub_info(a, state, sizeof state, &run, &t);
    CHECK_MSG(!strcmp(state, "stopped") && run == run_a && strstr(body_of(resp), "\"error\":"),
              "submission %lld: %s run %lld", a, state, run);
    sub_info(b, state, sizeof state, &run, &t);
    CHECK_MSG(state[0] && strcmp(state, "stopped") && t == sub_b, "submission %lld: %s at %.17g (was %.17g)", b, state, t,
              sub_b);
    sub_info(c, state, sizeof state, &run, &t);
    CHECK_MSG((!strcmp(state, "queued") || !strcmp(state, "running")) && t == sub_c, "submission %lld: %s", c, state);
    char status[32];
    run_status(run_a, status, sizeof status);
    CHECK_MSG(!strcmp(status, "interrupted"), "run %lld: %s", run_a, status);
    /* they run to completion, in order */
    long long rb = wait_sub(b, 60, st_b, sizeof st_b), rc = wait_sub(c, 60, st_c, sizeof st_c);
    CHECK_MSG(!strcmp(st_b, "done") && !strcmp(st_c, "done") && rb > 0 && rc > rb, "%s %s runs %lld %lld", st_b, st_c,
              rb, rc);
    /* the interrupted run resumes; the ids continue after the largest */
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%lld/resume", run_a);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 202);
    cJSON *o = json_of(resp);
    long long d = (long long)jnum(o, "id");
    cJSON_Delete(o);
    CHECK_MSG(d == c + 1, "the next submission is %lld, expected %lld", d, c + 1);
    CHECK_MSG(wait_running(d, 60) == run_a, "the resume of run %lld did not start", run_a);
    /* the crash: the resumed run's processes outlive the service (the state file has the
     * child's pid once the API says it runs) */
    saved = slurp(file);
    o = saved ? cJSON_Parse(saved) : NULL;
    free(saved);
    long long pid = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(o, "submissions")) if (jnum(x, "id") == d) pid = (long long)jnum(x, "pid");
    cJSON_Delete(o);
    CHECK_MSG(pid > 1, "%s: no pid for submission %lld", file, d);
    stop_server(SIGKILL);
    CHECK_MSG(group_live(pid), "the run's process group %lld is gone", pid);
    CHECK(start_server() == 0);
    run = wait_sub(d, 60, state, sizeof state);
    CHECK_MSG(!strcmp(state, "stopped") && run == run_a, "submission %lld: %s run %lld: %s", d, state, run, body_of(resp));
    CHECK_MSG(pid > 1 && !group_live(pid), "the run's process group %lld is still there", pid);
    /* resumable: no submission of it active (the run's own status depends on how far the
     * resume had come: interrupted once training, failed in its start-up probe) */
    snprintf(path, sizeof path, "/api/runs/%lld", run_a);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    const cJSON *sub = cJSON_GetObjectItem(o, "submission");
    CHECK_MSG(jnum(sub, "id") == d && !strcmp(jstr(sub, "state"), "stopped"), "%.300s", body_of(resp));
    cJSON_Delete(o);
}

/* `scavenger serve` on this store expecting it to refuse to start: its exit status and
 * output in out. */
static int serve_refused(char *out, size_t cap)
{
    char log[400], portfile[400];
    snprintf(log, sizeof log, "%s/refused.log", tmp);
    snprintf(portfile, sizeof portfile, "%s/port2", tmp);
    unlink(log);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(fileno(stdout), 2) < 0) _exit(126);
        execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--db", db, "--port-file", portfile, (char *)NULL);
        _exit(127);
    }
    int st = -1;
    for (int i = 0; i < 200; i++) {
        if (waitpid(p, &st, WNOHANG) == p) break;
        sleep_ms(50);
    }
    if (waitpid(p, NULL, WNOHANG) == 0) { /* still up: it was not refused */
        kill(p, SIGTERM);
        waitpid(p, &st, 0);
        st = 0;
    }
    char *l = slurp(log);
    snprintf(out, cap, "%s", l ? l : "");
    free(l);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A damaged state file is refused with an error naming it (and the field), and is left as
 * it was; a second service on the same store is refused (the lock). */
static void t_state_refused(void)
{
    char out[4096];
    CHECK(server > 0 || start_server() == 0);
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    int n_subs = cJSON_GetArraySize(cJSON_GetObjectItem(o, "submissions"));
    cJSON_Delete(o);
    int st = serve_refused(out, sizeof out);
    CHECK_MSG(st == 1 && strstr(out, ".serve/lock") && strstr(out, "another scavenger serve"), "exit %d: %s", st, out);
    st = stop_server(SIGTERM); /* the one that stopped a crashed service's run: a clean exit */
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    char file[500], keep[520];
    state_path(file, sizeof file);
    snprintf(keep, sizeof keep, "%s.good", file);
    int had = rename(file, keep) == 0; /* none when this test runs alone */
    const char *bad[][2] = {{"{\"version\":1,\"next_sub\":3,\"boot_id\":\"x\",\"submissions\":[{\"id\":1,", file},
                            {"\x01\x02 not json", file},
                            {"{\"version\":1,\"next_sub\":3,\"boot_id\":\"x\",\"submissions\":[{\"id\":1,\"state\":\"lost\"}]}",
                             "submissions[0]"},
                            {"{\"version\":7,\"next_sub\":3,\"boot_id\":\"x\",\"submissions\":[]}", "'version'"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(file, "w");
        CHECK(f && fputs(bad[i][0], f) >= 0 && fclose(f) == 0);
        st = serve_refused(out, sizeof out);
        CHECK_MSG(st == 1 && strstr(out, file) && strstr(out, bad[i][1]), "case %zu: exit %d: %s", i, st, out);
        char *after = slurp(file);
        CHECK_MSG(after && !strcmp(after, bad[i][0]), "case %zu: the file was changed", i);
        free(after);
    }
    /* the good file back: the service starts and has its submissions */
    CHECK(had ? rename(keep, file) == 0 : unlink(file) == 0);
    CHECK(start_server() == 0);
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "submissions")), had ? n_subs : 0);
    cJSON_Delete(o);
    st = stop_server(SIGTERM);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}


/* ---- the service's authority (issue 24, items 4, 5, 6, 15) ---- */

/* A run stored as the command line would (a CLI run on the same store), interrupted: an
 * external trainer's command and a path outside the data directory. */
static long long stored_cli_run(const char *job_key, const char *job)
{
    scv_store *s = NULL;
    long long id = 0;
    if (scv_store_open(db, &s, NULL) != SCV_OK) return 0;
    if (scv_store_run_new(s, job_key, job, &id, NULL) != SCV_OK ||
        scv_store_run_status(s, id, "interrupted", NULL) != SCV_OK)
        id = 0;
    scv_store_close(s);
    return id;
}

/* Item 4: a resume passes a submission's checks: a stored CLI run's exec, hosts, paths
 * outside the data directory and a report directory not the service's are refused (422
 * naming the field and the run) on a service without --allow-exec / --allow-paths; nothing
 * is queued. A service run's resume (its own report directory) is accepted
 * (live_stop_resume, restart_queue). */
static void t_resume_checked(void)
{
    if (!server) CHECK(start_server() == 0);
    struct {
        const char *key, *job, *field;
    } cases[] = {
        {"exec=true", "{\"exec\":\"true\",\"target-accuracy\":\"0.8\",\"workers\":\"1,2\"}", "exec"},
        {"model=mlp;hidden=32;dataset=/etc", "{\"model\":\"mlp\",\"dataset\":\"/etc\",\"target-accuracy\":\"0.8\"}",
         "dataset"},
        {"model=mlp;hidden=32;dataset=synthetic:500",
         "{\"model\":\"mlp\",\"dataset\":\"synthetic:500\",\"hosts\":\"/etc/hosts\",\"driver\":\"relaunch\","
         "\"target-accuracy\":\"0.8\"}", "hosts"},
        {"model=mlp;hidden=32;dataset=synthetic:500",
         "{\"model\":\"mlp\",\"dataset\":\"synthetic:500\",\"report\":\"/tmp/elsewhere\",\"target-accuracy\":\"0.8\"}",
         "report"},
    };
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    int n_subs = cJSON_GetArraySize(cJSON_GetObjectItem(o, "submissions"));
    cJSON_Delete(o);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long long id = stored_cli_run(cases[i].key, cases[i].job);
        CHECK(id > 0);
        char path[64], idtxt[32];
        snprintf(path, sizeof path, "/api/runs/%lld/resume", id);
        snprintf(idtxt, sizeof idtxt, "run %lld", id);
        int st = http("POST", path, token, "", resp, sizeof resp);
        CHECK_MSG(st == 422 && has_field(resp, cases[i].field) && strstr(body_of(resp), idtxt), "case %zu: %d %s", i,
                  st, body_of(resp));
    }
    CHECK_EQ_INT(http("GET", "/api/submissions", NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "submissions")), n_subs); /* nothing queued */
    cJSON_Delete(o);
}

/* Item 5: DNS rebinding. A Host or Origin not naming this service is refused (421 naming
 * Host, 403 naming Origin) on the API and the dashboard; the service's own names pass. */
static void t_host_origin(void)
{
    if (!server) CHECK(start_server() == 0);
    char h[160];
    const char *bad_hosts[] = {"Host: evil.example:%d\r\n", "Host: evil.example\r\n", "Host: 127.0.0.1:%d1\r\n",
                               "Host: 127.0.0.1.evil.example:%d\r\n", "Host: localhost\r\n"};
    const char *paths[] = {"/api/runs", "/api/submissions", "/api/clusters", "/", "/api/health"};
    for (size_t i = 0; i < sizeof bad_hosts / sizeof bad_hosts[0]; i++)
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
            snprintf(h, sizeof h, bad_hosts[i], port);
            int st = http_x("GET", paths[k], NULL, h, NULL, resp, sizeof resp);
            CHECK_MSG(st == 421 && has_field(resp, "Host"), "%s %.*s -> %d %s", paths[k], (int)strlen(h) - 2, h, st,
                      body_of(resp));
        }
    snprintf(h, sizeof h, "Host: evil.example:%d\r\n", port);
    CHECK_EQ_INT(http_x("POST", "/api/runs", token, h, TINY, resp, sizeof resp), 421);
    const char *good_hosts[] = {"Host: 127.0.0.1:%d\r\n", "Host: localhost:%d\r\n", "Host: LOCALHOST:%d\r\n",
                                "Host: [::1]:%d\r\n"};
    for (size_t i = 0; i < sizeof good_hosts / sizeof good_hosts[0]; i++) {
        snprintf(h, sizeof h, good_hosts[i], port);
        int st = http_x("GET", "/api/runs", NULL, h, NULL, resp, sizeof resp);
        CHECK_MSG(st == 200, "%s -> %d %s", h, st, body_of(resp));
    }
    snprintf(h, sizeof h, "Origin: http://evil.example:%d\r\n", port);
    int st = http_x("GET", "/api/runs", NULL, h, NULL, resp, sizeof resp);
    CHECK_MSG(st == 403 && has_field(resp, "Origin"), "%d %s", st, body_of(resp));
    CHECK_EQ_INT(http_x("GET", "/api/runs", NULL, "Origin: null\r\n", NULL, resp, sizeof resp), 403);
    snprintf(h, sizeof h, "Origin: http://localhost:%d\r\n", port);
    CHECK_EQ_INT(http_x("GET", "/api/runs", NULL, h, NULL, resp, sizeof resp), 200);
}

/* Item 5: a read without the token does not show an external trainer's command, hostfiles
 * or paths (the run's document, the runs list, the report, the event stream); with the
 * token (the header; ?token= on the event stream only) it does. */
static void t_hidden_reads(void)
{
    if (!server) CHECK(start_server() == 0);
    const char *cmd = "python3 /home/me/secret-train.py --key=s3cr3t";
    char key[200], job[400];
    snprintf(key, sizeof key, "exec=%s", cmd);
    snprintf(job, sizeof job, "{\"exec\":\"%s\",\"hosts\":\"/home/me/hosts\",\"catalog\":\"/home/me/cat.csv\","
             "\"dataset\":\"/home/me/data\",\"target-accuracy\":\"0.8\"}", cmd);
    long long id = stored_cli_run(key, job);
    CHECK(id > 0);
    char path[96];
    snprintf(path, sizeof path, "/api/runs/%lld", id);
    const char *secrets[] = {"secret-train", "/home/me"};
    for (int pass = 0; pass < 3; pass++) { /* no token; ?token= (not accepted here); the header */
        char p2[400];
        snprintf(p2, sizeof p2, "%s%s%s", path, pass == 1 ? "?token=" : "", pass == 1 ? token : "");
        CHECK_EQ_INT(http("GET", p2, pass == 2 ? token : NULL, NULL, resp, sizeof resp), 200);
        for (int k = 0; k < 2; k++)
            CHECK_MSG(!strstr(body_of(resp), secrets[k]) == (pass < 2), "pass %d: %s", pass, body_of(resp));
        snprintf(p2, sizeof p2, "/api/runs?limit=1000%s%s", pass == 1 ? "&token=" : "", pass == 1 ? token : "");
        CHECK_EQ_INT(http("GET", p2, pass == 2 ? token : NULL, NULL, resp, sizeof resp), 200);
        CHECK_MSG(!strstr(body_of(resp), "secret-train") == (pass < 2), "list, pass %d: %s", pass, body_of(resp));
    }
    /* the list's job filter cannot probe a hidden command */
    char probe[300];
    snprintf(probe, sizeof probe, "/api/runs?job=exec%%3Dpython3%%20%%2Fhome%%2Fme%%2Fsecret-train.py%%20--key%%3Ds3cr3t");
    CHECK_EQ_INT(http("GET", probe, NULL, NULL, resp, sizeof resp), 401);
    CHECK(has_field(resp, "job"));
    CHECK_EQ_INT(http("GET", probe, token, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"total\":1,") != NULL, "%s", body_of(resp));
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    const cJSON *j = cJSON_GetObjectItem(o, "job");
    CHECK_MSG(strstr(jstr(j, "exec"), "hidden") && strstr(jstr(j, "hosts"), "hidden") &&
                  strstr(jstr(j, "dataset"), "hidden"),
              "%.600s", body_of(resp));
    CHECK(!strcmp(jstr(j, "target-accuracy"), "0.8")); /* the rest is shown */
    cJSON_Delete(o);
    /* the event stream: ?token= is the browser's only way */
    char p3[400];
    snprintf(p3, sizeof p3, "%s/events", path);
    CHECK_EQ_INT(http("GET", p3, NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(!strstr(resp, "secret-train"), "%.400s", resp);
    snprintf(p3, sizeof p3, "%s/events?token=%s", path, token);
    CHECK_EQ_INT(http("GET", p3, NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(resp, "secret-train") != NULL, "%.400s", resp);
    /* its report and logs would show them (item 22): with the token only */
    const char *files[] = {"files/report.md", "files/tradeoff.svg", "log"};
    for (int i = 0; i < 3; i++) {
        snprintf(p3, sizeof p3, "%s/%s", path, files[i]);
        CHECK_EQ_INT(http("GET", p3, NULL, NULL, resp, sizeof resp), 401);
        CHECK_MSG(!strstr(resp, "secret-train"), "%.400s", resp);
        CHECK_EQ_INT(http("GET", p3, token, NULL, resp, sizeof resp), 404); /* allowed: no report, no log */
    }
}

/* Item 15: a well-formed job that cannot run here is refused on submit (422 naming the
 * field), not accepted and rejected later: a VM type not in the catalog, a cluster that
 * does not exist, a setting the run's own setup refuses. The service's check is the run's
 * (scv_job_setup_init, job/jobsetup.c): the same words as `scavenger run` says them
 * (the suggestion for a mistyped VM type, the cluster's own message), not a second check
 * of its own. */
static void t_submit_runnable(void)
{
    if (!server) CHECK(start_server() == 0);
    struct {
        const char *extra, *field, *words;
    } cases[] = {
        {"\"workers\":\"1,2\",\"vm-type\":\"c5.xlarg\"", "vm-type",
         "--vm-type 'c5.xlarg': not a VM type of the catalog (`scavenger vms` lists them) (did you mean 'c5.xlarge'?)"},
        {"\"workers\":\"1,2\",\"cluster\":\"nosuch\"", "cluster", "--cluster: no cluster 'nosuch'"},
        {"\"workers\":\"1\"", "workers", "workers"}, /* the run's setup: K = 1 only cannot plan */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char job[600];
        snprintf(job, sizeof job, "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\","
                 "\"target-accuracy\":0.8,\"batch\":\"32\",%s}", cases[i].extra);
        int st = http("POST", "/api/runs", token, job, resp, sizeof resp);
        CHECK_MSG(st == 422 && has_field(resp, cases[i].field) && strstr(body_of(resp), cases[i].words), "%s -> %d %s",
                  cases[i].extra, st, body_of(resp));
    }
}

/* Item 15: a run the child rejects shows the child's own reason (its log's last lines),
 * never only the usage hint "Try 'scavenger run --help'". The job is valid when submitted
 * (its catalog in the data directory has its VM type) and the catalog loses that type while
 * it waits in the queue behind a running one. */
static void t_reject_reason(void)
{
    if (!server) CHECK(start_server() == 0);
    char cat[500], line[2048];
    snprintf(cat, sizeof cat, "%s/data/cat.csv", tmp);
    FILE *in = fopen("data/vm-catalog.csv", "r"), *out = fopen(cat, "w");
    CHECK(in && out);
    if (!in || !out) return;
    while (fgets(line, sizeof line, in)) fputs(line, out);
    fclose(in);
    CHECK(fclose(out) == 0);
    long long a = submit(SLOW);
    CHECK(a > 0 && wait_running(a, 60) > 0);
    char job[800];
    snprintf(job, sizeof job, "{\"model\":\"logreg\",\"dataset\":\"synthetic:500\",\"target-accuracy\":0.5,"
             "\"workers\":\"1,2\",\"batch\":\"32\",\"catalog\":\"%s\",\"vm-type\":\"c5.2xlarge\"}", cat);
    long long b = submit(job);
    CHECK_MSG(b > 0, "%s", body_of(resp));
    /* the catalog now has c5.xlarge only */
    in = fopen("data/vm-catalog.csv", "r"), out = fopen(cat, "w");
    int n = 0;
    while (in && out && fgets(line, sizeof line, in))
        if (n++ == 0 || !strncmp(line, "aws,c5.xlarge,", 14)) fputs(line, out);
    if (in) fclose(in);
    CHECK(out && fclose(out) == 0);
    char path[64], state[32] = "";
    snprintf(path, sizeof path, "/api/submissions/%lld/stop", a);
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 202);
    wait_sub(b, 60, state, sizeof state);
    cJSON *o = json_of(resp);
    const char *e = jstr(o, "error");
    CHECK_MSG(!strcmp(state, "rejected") && strstr(e, "c5.2xlarge") && strstr(e, "vm-type") && !strstr(e, "Try '") &&
              !strstr(e, "usage:"), "state %s: %s", state, body_of(resp));
    cJSON_Delete(o);
}

/* `scavenger serve` with args on a store of its own (DB2), up to wait_ms: its exit status
 * (-2: still up, left running in *pid) and output in out. */
static int serve_with(const char *db2, const char *listen, const char *allow_host, int wait_ms, pid_t *pid, char *out,
                      size_t cap)
{
    char log[500], portfile[500];
    snprintf(log, sizeof log, "%s.log", db2);
    snprintf(portfile, sizeof portfile, "%s.port", db2);
    unlink(log), unlink(portfile);
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(fileno(stdout), 2) < 0) _exit(126);
        if (allow_host)
            execl(bin, bin, "serve", "--listen", listen, "--db", db2, "--port-file", portfile, "--allow-host", allow_host,
                  (char *)NULL);
        else
            execl(bin, bin, "serve", "--listen", listen, "--db", db2, "--port-file", portfile, (char *)NULL);
        _exit(127);
    }
    int st = -1, done = 0;
    for (int i = 0; i < wait_ms / 50 && !done; i++) {
        if (waitpid(p, &st, WNOHANG) == p) done = 1;
        else {
            FILE *f = fopen(portfile, "r");
            if (f) { /* listening */
                fclose(f);
                break;
            }
            sleep_ms(50);
        }
    }
    sleep_ms(done ? 0 : 100);
    char *l = slurp(log);
    snprintf(out, cap, "%s", l ? l : "");
    free(l);
    *pid = done ? 0 : p;
    return done ? (WIFEXITED(st) ? WEXITSTATUS(st) : -1) : -2;
}

/* Item 6: a weak DB.token is refused naming the file (one character and junk; 31
 * characters); off loopback: a loud warning about plain HTTP, every call needs the token,
 * ?token= only on the event stream. */
static void t_token_strength(void)
{
    char db2[400], tp[450], out[8192];
    snprintf(db2, sizeof db2, "%s/weak.db", tmp);
    snprintf(tp, sizeof tp, "%s.token", db2);
    const char *weak[] = {"a\njunkjunkjunkjunkjunkjunkjunkjunkjunkjunk\n", "0123456789abcdef0123456789abcde\n",
                          "0123456789abcdef 0123456789abcdef0123\n",
                          "\x01\x02junkjunkjunkjunkjunkjunkjunkjunkjunkjunk"};
    pid_t p;
    for (size_t i = 0; i < sizeof weak / sizeof weak[0]; i++) {
        FILE *f = fopen(tp, "w");
        CHECK(f && fputs(weak[i], f) >= 0 && fclose(f) == 0);
        chmod(tp, 0600);
        int st = serve_with(db2, "127.0.0.1:0", NULL, 5000, &p, out, sizeof out);
        if (p > 0) kill(p, SIGTERM), waitpid(p, NULL, 0);
        CHECK_MSG(st == 1 && strstr(out, tp) && strstr(out, "not a token"), "case %zu: exit %d: %s", i, st, out);
    }
    /* a strong one is taken: off loopback, with the warning */
    const char *good = "0123456789abcdef0123456789abcdef-._~XYZ";
    FILE *f = fopen(tp, "w");
    CHECK(f && fprintf(f, "%s\n", good) > 0 && fclose(f) == 0);
    chmod(tp, 0600);
    int st = serve_with(db2, "0.0.0.0:0", "scv.example.com,proxy.example", 10000, &p, out, sizeof out);
    CHECK_MSG(st == -2 && strstr(out, "WARNING") && strstr(out, "plain HTTP"), "exit %d: %s", st, out);
    if (st != -2) return;
    char pf[500];
    snprintf(pf, sizeof pf, "%s.port", db2);
    int keep = port;
    f = fopen(pf, "r");
    CHECK(f && fscanf(f, "%d", &port) == 1);
    if (f) fclose(f);
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 401);
    char q[200];
    snprintf(q, sizeof q, "/api/runs?token=%s", good);
    CHECK_EQ_INT(http("GET", q, NULL, NULL, resp, sizeof resp), 401);
    CHECK_EQ_INT(http("GET", "/api/runs", good, NULL, resp, sizeof resp), 200);
    snprintf(q, sizeof q, "/api/runs/1/events?token=%s", good);
    CHECK_EQ_INT(http("GET", q, NULL, NULL, resp, sizeof resp), 404); /* past the token: no such run */
    snprintf(q, sizeof q, "/api/runs/1/events");
    CHECK_EQ_INT(http("GET", q, NULL, NULL, resp, sizeof resp), 401);
    /* Host: the address the connection came to (0.0.0.0: here 127.0.0.1) with the port, and
     * the --allow-host names with any port (a TLS proxy's https Origin too) */
    char h[200];
    snprintf(h, sizeof h, "Host: evil.example:%d\r\n", port);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, h, NULL, resp, sizeof resp), 421);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, "Host: scv.example.com\r\n", NULL, resp, sizeof resp), 200);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, "Host: PROXY.example:443\r\nOrigin: https://proxy.example\r\n", NULL,
                        resp, sizeof resp), 200);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, "Host: scv.example.com.evil\r\n", NULL, resp, sizeof resp), 421);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, "Host: scv.example.com\r\nOrigin: https://evil.example\r\n", NULL,
                        resp, sizeof resp), 403);
    port = keep;
    kill(p, SIGTERM);
    waitpid(p, NULL, 0);
}

/* `run --vm` as a job's "vm" (issue 24 item 21): the service accepts the key and checks its
 * types by the run's own setup (`plan --vm`'s parser): an unknown type is 422 naming the
 * field and the type, with the nearest one; an empty list is a malformed field (400). */
static void t_submit_vm_list(void)
{
    if (!server) CHECK(start_server() == 0);
    const char *base = "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\",\"target-accuracy\":0.8,"
                       "\"workers\":\"1,2\",\"batch\":\"32\",\"vm\":";
    char job[600];
    snprintf(job, sizeof job, "%s\"c5.xlarge,c5.xlarg\"}", base);
    int st = http("POST", "/api/runs", token, job, resp, sizeof resp);
    CHECK_MSG(st == 422 && has_field(resp, "vm") && strstr(body_of(resp), "--vm c5.xlarg: not a VM type of") &&
                  strstr(body_of(resp), "did you mean 'c5.xlarge'?"),
              "%d %s", st, body_of(resp));
    snprintf(job, sizeof job, "%s\"\"}", base);
    st = http("POST", "/api/runs", token, job, resp, sizeof resp);
    CHECK_MSG(st == 400 && has_field(resp, "vm"), "%d %s", st, body_of(resp));
}

/* The runs list and a run's view carry a running run's latest forecast (the store's, written
 * by the loop) under the names `runs --json` gives it (one writer): "eta" {remaining_s, its
 * band, p_reach, overdue, nominal, written}; null once the run has ended. */
static void t_runs_eta(void)
{
    scv_store *s = NULL;
    scv_err err = {0};
    long long id = 0;
    CHECK_EQ_INT(scv_store_open(db, &s, &err), SCV_OK);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_new(s, "job-eta-svc", "{}", &id, &err), SCV_OK); /* this process's: running */
    struct scv_run_eta e = {.remaining_s = 192, .remaining_lo_s = 126, .remaining_hi_s = 300, .p_reach = 0.91};
    CHECK_EQ_INT(scv_store_run_eta(s, id, &e, &err), SCV_OK);
    CHECK_EQ_INT(http("GET", "/api/runs?job=job-eta-svc", NULL, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "runs"), 0);
    CHECK_MSG(jnum(r0, "id") == id && jnum(r0, "eta.remaining_s") == 192 && jnum(r0, "eta.remaining_lo_s") == 126 &&
                  jnum(r0, "eta.remaining_hi_s") == 300 && jnum(r0, "eta.p_reach") == 0.91 &&
                  jnum(r0, "eta.written") > 1.5e9 && cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "eta"), "overdue")),
              "%.1500s", body_of(resp));
    cJSON_Delete(o);
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%lld", id);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    CHECK_MSG(jnum(o, "run.eta.remaining_s") == 192, "%.1500s", body_of(resp));
    cJSON_Delete(o);
    /* ended: none in the list nor the view */
    CHECK_EQ_INT(scv_store_outcome(s, id, 200, 0.01, 0.9, 1, &err), SCV_OK);
    scv_store_close(s);
    CHECK_EQ_INT(http("GET", "/api/runs?job=job-eta-svc", NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"eta\":null") && !strstr(body_of(resp), "\"eta\":{"), "%.1500s", body_of(resp));
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"eta\":null") != NULL, "%.1500s", body_of(resp));
}


/* ---- the store's faults through the service (issue 38, items 5, 6, 10) ---- */

/* A run's end and its reason (scv_store_run_end, as `scavenger run` stores it) in the list and
 * the run's document; without the token its `quoted` spans (a trainer's command) hidden. */
static void t_run_reason(void)
{
    if (!server) CHECK(start_server() == 0);
    scv_store *s = NULL;
    scv_err err = {0};
    long long id = 0;
    CHECK_EQ_INT(scv_store_open(db, &s, &err), SCV_OK);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_new(s, "job-reason-svc", "{}", &id, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_end(s, id, "failed", "failed", "the job does not start: `python3 secret.py` exited 1",
                                   &err), SCV_OK);
    scv_store_close(s);
    char path[64];
    snprintf(path, sizeof path, "/api/runs/%lld", id);
    CHECK_EQ_INT(http("GET", path, token, NULL, resp, sizeof resp), 200);
    cJSON *o = json_of(resp);
    const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "run"), "reason"));
    CHECK_MSG(r && !strcmp(r, "the job does not start: `python3 secret.py` exited 1"), "%.1500s", body_of(resp));
    cJSON_Delete(o);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"reason\":\"the job does not start: `...` exited 1\"") &&
                  !strstr(body_of(resp), "secret.py"), "%.1500s", body_of(resp));
    CHECK_EQ_INT(http("GET", "/api/runs?job=job-reason-svc", token, NULL, resp, sizeof resp), 200);
    CHECK_MSG(strstr(body_of(resp), "\"status\":\"failed\"") && strstr(body_of(resp), "secret.py` exited 1\""),
              "%.1500s", body_of(resp));
    CHECK_EQ_INT(http("GET", "/api/runs?job=job-reason-svc", NULL, NULL, resp, sizeof resp), 200);
    CHECK_MSG(!strstr(body_of(resp), "secret.py"), "%.1500s", body_of(resp));
}

/* One store under two names: a second service through a symbolic link to the store (or to its
 * directory) is refused, its lock the store's under its real name (before: each path had
 * its own DB.serve/lock, and two services ran one store). */
static void t_symlink_refused(void)
{
    char out[4096], saved[400], alias[300], dir[300];
    CHECK(server > 0 || start_server() == 0);
    snprintf(saved, sizeof saved, "%s", db);
    snprintf(alias, sizeof alias, "%s/alias.db", tmp);
    snprintf(dir, sizeof dir, "%s/alias-dir", tmp);
    unlink(alias);
    unlink(dir);
    CHECK(symlink(saved, alias) == 0 && symlink(tmp, dir) == 0);
    const char *names[2] = {alias, NULL};
    char viadir[320];
    snprintf(viadir, sizeof viadir, "%s/runs.db", dir);
    names[1] = viadir;
    for (int i = 0; i < 2; i++) {
        snprintf(db, sizeof db, "%s", names[i]);
        int st = serve_refused(out, sizeof out);
        snprintf(db, sizeof db, "%s", saved);
        CHECK_MSG(st == 1 && strstr(out, "another scavenger serve") && strstr(out, ".serve/lock"), "%s: exit %d: %s",
                  names[i], st, out);
    }
}

/* A damaged store (every page but the first overwritten): the list and a run answer 500
 * naming the file (before: 500 for the list, but 404 "no such run" for the run). */
static void t_damaged_store(void)
{
    char saved[400], bad[300];
    snprintf(saved, sizeof saved, "%s", db);
    snprintf(bad, sizeof bad, "%s/damaged.db", tmp);
    scv_store *s = NULL;
    scv_err err = {0};
    long long id = 0;
    CHECK_EQ_INT(scv_store_open(bad, &s, &err), SCV_OK);
    for (int i = 0; s && i < 7; i++) CHECK_EQ_INT(scv_store_run_new(s, "job-damaged", "{}", &id, &err), SCV_OK);
    for (int i = 0; s && i < 40; i++) CHECK_EQ_INT(scv_store_model(s, id, "x", "{\"pad\":\"................\"}", &err), SCV_OK);
    scv_store_close(s);
    struct stat st;
    CHECK(stat(bad, &st) == 0 && st.st_size >= 3 * 4096);
    int fd = open(bad, O_WRONLY);
    char junk[4096];
    memset(junk, 0xA5, sizeof junk);
    for (off_t at = 4096; fd >= 0 && at < st.st_size; at += 4096) CHECK(pwrite(fd, junk, sizeof junk, at) == 4096);
    if (fd >= 0) close(fd);
    int was_up = server > 0;
    if (was_up) stop_server(SIGTERM);
    snprintf(db, sizeof db, "%s", bad);
    CHECK(start_server() == 0);
    CHECK_EQ_INT(http("GET", "/api/runs", NULL, NULL, resp, sizeof resp), 500);
    CHECK_MSG(strstr(body_of(resp), "damaged.db") && strstr(body_of(resp), "damaged"), "%.800s", body_of(resp));
    CHECK_EQ_INT(http("GET", "/api/runs/1", NULL, NULL, resp, sizeof resp), 500);
    CHECK_MSG(strstr(body_of(resp), "damaged.db") && !strstr(body_of(resp), "no such run"), "%.800s", body_of(resp));
    CHECK_EQ_INT(http("GET", "/api/runs/1/events", NULL, NULL, resp, sizeof resp), 500);
    stop_server(SIGTERM);
    snprintf(db, sizeof db, "%s", saved);
    if (was_up) CHECK(start_server() == 0);
}

/* Issue 38 item 9: a run stopped by its budget is stored with what it spent (actual_cost,
 * not null) and its report (budget_stopped); its resume takes a larger budget in the body
 * ({"budget": USD}, passed on as --budget) and goes on to the target, where the stored
 * job's budget stopped it again at once; a body of anything else, or a budget the run has
 * spent already, is refused naming the field. */
static void t_budget_resume(void)
{
    const char *job = "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\",\"lr\":0.003,"
                      "\"target-accuracy\":0.8,\"workers\":\"1,2\",\"batch\":\"32,128\",\"budget\":0.0000001}";
    CHECK_EQ_INT(http("POST", "/api/runs", token, job, resp, sizeof resp), 202);
    cJSON *o = json_of(resp);
    long long sub = (long long)jnum(o, "id");
    cJSON_Delete(o);
    char state[32] = "", path[96];
    long long run = wait_sub(sub, 90, state, sizeof state);
    CHECK_MSG(run > 0 && !strcmp(state, "failed"), "state %s run %lld: %s", state, run, body_of(resp));
    if (run < 1) return;
    snprintf(path, sizeof path, "/api/runs/%lld", run);
    CHECK_EQ_INT(http("GET", path, NULL, NULL, resp, sizeof resp), 200);
    o = json_of(resp);
    const cJSON *r = cJSON_GetObjectItem(o, "run"), *rep = cJSON_GetObjectItem(o, "report");
    double spent = jnum(r, "actual_cost");
    CHECK_MSG(!strcmp(jstr(r, "status"), "interrupted") && spent > 0, "%.600s", body_of(resp));
    CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(rep, "budget_stopped")) && jnum(rep, "budget") == 0.0000001,
              "%.300s", body_of(resp));
    cJSON_Delete(o);
    snprintf(path, sizeof path, "/api/runs/%lld/resume", run);
    const char *bad[][3] = {{"{\"budget\":\"1\"}", "400", "budget"},  {"{\"budget\":-1}", "400", "budget"},
                            {"{\"workers\":\"2\"}", "400", "workers"}, {"[1]", "400", "body"},
                            {"{\"budget\":1e-9}", "422", "budget"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(http("POST", path, token, bad[i][0], resp, sizeof resp), atoi(bad[i][1]));
        CHECK_MSG(has_field(resp, bad[i][2]), "%s: %s", bad[i][0], body_of(resp));
    }
    CHECK_MSG(strstr(body_of(resp), "is not above the $") && strstr(body_of(resp), "the run has spent"), "%s",
              body_of(resp));
    /* without a budget the stored one stops it again at once */
    CHECK_EQ_INT(http("POST", path, token, "", resp, sizeof resp), 202);
    o = json_of(resp);
    long long sub2 = (long long)jnum(o, "id");
    cJSON_Delete(o);
    wait_sub(sub2, 90, state, sizeof state);
    CHECK_MSG(!strcmp(state, "failed") && strstr(body_of(resp), "budget"), "state %s: %s", state, body_of(resp));
    /* a larger one: it goes on to the target */
    CHECK_EQ_INT(http("POST", path, token, "{\"budget\": 1}", resp, sizeof resp), 202);
    o = json_of(resp);
    long long sub3 = (long long)jnum(o, "id");
    CHECK_MSG(jnum(o, "budget") == 1 && jnum(o, "resumes") == run, "%s", body_of(resp));
    cJSON_Delete(o);
    long long run3 = wait_sub(sub3, 120, state, sizeof state);
    CHECK_MSG(!strcmp(state, "done") && run3 == run, "state %s run %lld: %s", state, run3, body_of(resp));
}

static const scv_test tests[] = {
    {"health", t_health}, {"token_file", t_token_file}, {"auth", t_auth}, {"validation", t_validation}, {"values_by_row", t_values_by_row},
    {"body_limit", t_body_limit}, {"not_found", t_not_found}, {"dashboard", t_dashboard},
    {"catalog_clusters", t_catalog_clusters}, {"submit_run", t_submit_run}, {"run_files", t_run_files}, {"plan", t_plan},
    {"live_stop_resume", t_live_stop_resume}, {"bad_requests", t_bad_requests}, {"cache", t_cache},
    {"limit_plan", t_limit_plan}, {"limit_synthetic", t_limit_synthetic},
    {"limit_slow_clients", t_limit_slow_clients}, {"shutdown", t_shutdown}, {"restart_queue", t_restart_queue}, {"state_refused", t_state_refused},
    {"resume_checked", t_resume_checked}, {"host_origin", t_host_origin}, {"hidden_reads", t_hidden_reads},
    {"submit_runnable", t_submit_runnable}, {"reject_reason", t_reject_reason}, {"token_strength", t_token_strength},
    {"submit_vm_list", t_submit_vm_list},
    {"runs_eta", t_runs_eta},
    {"run_reason", t_run_reason},
    {"symlink_refused", t_symlink_refused},
    {"damaged_store", t_damaged_store},
    {"runs_eta", t_runs_eta}, {"budget_resume", t_budget_resume},
};

int main(int argc, char **argv)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-service-%ld", (long)getpid());
    mkdir(tmp, 0755);
    snprintf(db, sizeof db, "%s/runs.db", tmp);
    if (start_server()) {
        printf("not ok - start: the service did not start (%s serve; log in %s/serve.log)\n0 passed, 1 failed\n", bin, tmp);
        if (server > 0) kill(server, SIGKILL);
        return 1;
    }
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
