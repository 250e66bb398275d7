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
 * connection, a clean shutdown. Restarts, crashes and refusals are test_service_restart.c's.
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
    /* the tiny run's segment files are metrics of two configurations or more: the first file of
     * each (seg-N-PHASE-kK-bB.jsonl; the warm-up's, at K=2, holds the gradient noise the plan
     * needs), each cut to its first 30 lines, while the request stays under the body limit
     * (64 KiB): the warm-up's whole file is half of it, and a loaded machine's run made longer
     * or more segments, which passed it */
    enum { LINES = 30, BUDGET = 56000 };
    char dir[500], cmd[700], seen[8][32];
    int n_seen = 0;
    size_t used = 0;
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
        char *t = slurp(line), *c = t;
        for (int k = 0; c && *c && k < LINES; k++) c = strchr(c, '\n') ? strchr(c, '\n') + 1 : c + strlen(c);
        if (c) *c = 0;
        if (t && used + 2 * strlen(t) <= BUDGET) /* (as a JSON string: its quotes escaped, at most twice) */
            used += 2 * strlen(t), cJSON_AddItemToArray(arr, cJSON_CreateString(t));
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

static const scv_test tests[] = {
    {"health", t_health},
    {"token_file", t_token_file},
    {"auth", t_auth},
    {"validation", t_validation},
    {"values_by_row", t_values_by_row},
    {"body_limit", t_body_limit},
    {"not_found", t_not_found},
    {"dashboard", t_dashboard},
    {"catalog_clusters", t_catalog_clusters},
    {"submit_run", t_submit_run},
    {"run_files", t_run_files},
    {"plan", t_plan},
    {"live_stop_resume", t_live_stop_resume},
    {"bad_requests", t_bad_requests},
    {"cache", t_cache},
    {"limit_plan", t_limit_plan},
    {"limit_synthetic", t_limit_synthetic},
    {"limit_slow_clients", t_limit_slow_clients},
    {"shutdown", t_shutdown},
};

int main(int argc, char **argv)
{
    return service_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv, "service", 1);
}
