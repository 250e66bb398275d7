/*
 * test_service_restart.c - `scavenger serve` across restarts and refusals (as
 * test_service.c, a fresh service of this build over HTTP): the queue surviving a restart
 * (SIGTERM: queued submissions come back with their ids and run; the interrupted run
 * resumes) and a crash (SIGKILL: the run left alive is stopped and resumable); a damaged
 * state file or a second service on the same store refused with an error naming the file, a
 * second service through a symbolic link to the store refused too, a damaged store answered
 * 500 naming it (never 404); resumes checked, the Host and Origin checks, reads hidden
 * without the token, a submission's runnability and reasons, the token's strength, a VM
 * list, the time left of runs, and a run's stored reason in its document (its quoted
 * command hidden without the token); a budget carried across a resume.
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
        if (r && sscanf(r + 1, " %c %ld %ld", &st, &ppid, &pgrp) == 3 && pgrp == pgid && st != 'Z' && st != 'X')
            live = 1;
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
    CHECK_MSG(state[0] && strcmp(state, "stopped") && t == sub_b, "submission %lld: %s at %.17g (was %.17g)", b, state,
              t, sub_b);
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
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(o, "submissions")) if (jnum(x, "id") == d)
        pid = (long long)jnum(x, "pid");
    cJSON_Delete(o);
    CHECK_MSG(pid > 1, "%s: no pid for submission %lld", file, d);
    stop_server(SIGKILL);
    CHECK_MSG(group_live(pid), "the run's process group %lld is gone", pid);
    CHECK(start_server() == 0);
    run = wait_sub(d, 60, state, sizeof state);
    CHECK_MSG(!strcmp(state, "stopped") && run == run_a, "submission %lld: %s run %lld: %s", d, state, run,
              body_of(resp));
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
    const char *bad[][2] = {
        {"{\"version\":1,\"next_sub\":3,\"boot_id\":\"x\",\"submissions\":[{\"id\":1,", file},
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
         "\"target-accuracy\":\"0.8\"}",
         "hosts"},
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
    snprintf(job, sizeof job,
             "{\"exec\":\"%s\",\"hosts\":\"/home/me/hosts\",\"catalog\":\"/home/me/cat.csv\","
             "\"dataset\":\"/home/me/data\",\"target-accuracy\":\"0.8\"}",
             cmd);
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
    snprintf(probe, sizeof probe,
             "/api/runs?job=exec%%3Dpython3%%20%%2Fhome%%2Fme%%2Fsecret-train.py%%20--key%%3Ds3cr3t");
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
        snprintf(job, sizeof job,
                 "{\"model\":\"mlp\",\"hidden\":\"32\",\"dataset\":\"synthetic:2000\","
                 "\"target-accuracy\":0.8,\"batch\":\"32\",%s}",
                 cases[i].extra);
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
    snprintf(job, sizeof job,
             "{\"model\":\"logreg\",\"dataset\":\"synthetic:500\",\"target-accuracy\":0.5,"
             "\"workers\":\"1,2\",\"batch\":\"32\",\"catalog\":\"%s\",\"vm-type\":\"c5.2xlarge\"}",
             cat);
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
                  !strstr(e, "usage:"),
              "state %s: %s", state, body_of(resp));
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
            execl(bin, bin, "serve", "--listen", listen, "--db", db2, "--port-file", portfile, "--allow-host",
                  allow_host, (char *)NULL);
        else execl(bin, bin, "serve", "--listen", listen, "--db", db2, "--port-file", portfile, (char *)NULL);
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
                        resp, sizeof resp),
                 200);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, "Host: scv.example.com.evil\r\n", NULL, resp, sizeof resp), 421);
    CHECK_EQ_INT(http_x("GET", "/api/runs", good, "Host: scv.example.com\r\nOrigin: https://evil.example\r\n", NULL,
                        resp, sizeof resp),
                 403);
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
                  jnum(r0, "eta.written") > 1.5e9 &&
                  cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "eta"), "overdue")),
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
    CHECK_EQ_INT(
        scv_store_run_end(s, id, "failed", "failed", "the job does not start: `python3 secret.py` exited 1", &err),
        SCV_OK);
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
                  !strstr(body_of(resp), "secret.py"),
              "%.1500s", body_of(resp));
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
    for (int i = 0; s && i < 40; i++)
        CHECK_EQ_INT(scv_store_model(s, id, "x", "{\"pad\":\"................\"}", &err), SCV_OK);
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
    CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(rep, "budget_stopped")) && jnum(rep, "budget") == 0.0000001, "%.300s",
              body_of(resp));
    cJSON_Delete(o);
    snprintf(path, sizeof path, "/api/runs/%lld/resume", run);
    const char *bad[][3] = {{"{\"budget\":\"1\"}", "400", "budget"},
                            {"{\"budget\":-1}", "400", "budget"},
                            {"{\"workers\":\"2\"}", "400", "workers"},
                            {"[1]", "400", "body"},
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
    {"restart_queue", t_restart_queue}, {"state_refused", t_state_refused},   {"resume_checked", t_resume_checked},
    {"host_origin", t_host_origin},     {"hidden_reads", t_hidden_reads},     {"submit_runnable", t_submit_runnable},
    {"reject_reason", t_reject_reason}, {"token_strength", t_token_strength}, {"submit_vm_list", t_submit_vm_list},
    {"runs_eta", t_runs_eta},           {"run_reason", t_run_reason},         {"symlink_refused", t_symlink_refused},
    {"damaged_store", t_damaged_store}, {"budget_resume", t_budget_resume},
};

int main(int argc, char **argv)
{
    return service_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv, "service-restart", 1);
}
