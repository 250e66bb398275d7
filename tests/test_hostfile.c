/*
 * test_hostfile.c - the hostfile check (src/runtime/hostfile.c, issue 24 item 14): an
 * overlong line or name, a bad host name, bad slots fields and a host that does not resolve
 * (at once, or not within the bound) are each refused naming the file and the line; a good
 * file passes; and `scavenger train --hosts` says the same before mpirun runs.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "scv_test_proc.h"
#include "runtime/launch.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[256];

static const char *write_hosts(const char *name, const char *text)
{
    static char path[400];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
    return path;
}

/* a resolver for the tests: "slow.test" never answers, "*.test" are unknown, others known */
static int fake_resolve(const char *name)
{
    if (!strcmp(name, "slow.test")) sleep(30);
    size_t n = strlen(name);
    return n > 5 && !strcmp(name + n - 5, ".test") ? -1 : 0;
}

static int check(const char *name, const char *text, scv_err *err)
{
    scv_hostfile_policy pol = scv_hostfile_policy_default();
    pol.resolve = fake_resolve, pol.resolve_timeout_ms = 300;
    memset(err, 0, sizeof *err);
    return scv_hostfile_check(write_hosts(name, text), &pol, err);
}

static void t_syntax(void)
{
    scv_err err;
    CHECK_EQ_INT(check("good", "# machines\nnode1 slots=4\nnode2.example.com slots=2 max_slots=8  # two\n\n"
                               "10.0.0.3\nalice@node4\n::1 slots=1\nnode1 slots=4\n", &err), SCV_OK);
    /* a 100 KB host name: the line's length, named before the name is looked at */
    size_t big = 100000;
    char *long_line = malloc(big + 32);
    CHECK(long_line != NULL);
    if (!long_line) return;
    strcpy(long_line, "node1\n");
    memset(long_line + 6, 'a', big);
    strcpy(long_line + 6 + big, " slots=1\n");
    CHECK_EQ_INT(check("long", long_line, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "/long:2: a line longer than 1024 characters"), "%s", err.msg);
    free(long_line);
    char label[200];
    memset(label, 'b', 70), label[70] = 0;
    char text[300];
    snprintf(text, sizeof text, "node1\n%s.example.com\n", label);
    CHECK_EQ_INT(check("label", text, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "/label:2: '") && strstr(err.msg, "a label longer than 63 characters"), "%s", err.msg);
    static const char *const bad[][2] = {
        {"node1\nno_de2\n", ":2: 'no_de2' is not a host name: a character other than"},
        {"-node\n", ":1: '-node' is not a host name: a label starts with '-'"},
        {"node..x\n", ":1: 'node..x' is not a host name: an empty label"},
        {"node1 slots=two\n", ":1: 'slots=two': expected a whole number of slots from 1 to 65536"},
        {"node1 slots=0\n", ":1: 'slots=0': expected a whole number"},
        {"node1\n\nnode2 slots=99999999999999999999\n", ":3: 'slots=99999999999999999999': expected a whole number"},
        {"node1 slots=4 max_slots=2\n", ":1: max_slots=2 is less than slots=4"},
        {"node1 cpus=4\n", ":1: unknown field 'cpus=4' (expected slots=N or max_slots=N)"},
        {"b@d@node1\n", ":1: 'b@d@node1': the user before '@' is not a login name"},
        {"# nothing\n\n", ": no host in the hostfile"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(check("bad", bad[i][0], &err) != SCV_OK, "accepted: %s", bad[i][0]);
        CHECK_MSG(strstr(err.msg, "/bad") && strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
    }
}

static void t_resolve(void)
{
    scv_err err;
    CHECK_EQ_INT(check("unknown", "node1\nnode2\nnosuch.test slots=2\n", &err), SCV_ENOTFOUND);
    CHECK_MSG(strstr(err.msg, "/unknown:3: host 'nosuch.test' does not resolve"), "%s", err.msg);
    /* a resolver that never answers: refused at the bound, not after a minute */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ_INT(check("slow", "node1\nslow.test\n", &err), SCV_ENOTFOUND);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK_MSG(strstr(err.msg, "/slow:2: host 'slow.test' did not resolve within 0.3 s"), "%s", err.msg);
    CHECK_MSG(s < 5.0, "took %.2f s", s);
    /* the real resolver: this machine's name resolves */
    scv_hostfile_policy pol = scv_hostfile_policy_default();
    pol.resolve_timeout_ms = 5000;
    CHECK_EQ_INT(scv_hostfile_check(write_hosts("local", "localhost slots=2\n127.0.0.1\n"), &pol, &err), SCV_OK);
}

/* The check in a threaded process (the service's HTTP threads): another thread holds a lock
 * the resolver takes (as getaddrinfo takes the C library's) while the check starts. A
 * resolver in a child forked then inherited the lock held for ever and the host was
 * refused at the bound; in a thread it waits for the lock and the host resolves. */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int holding;

static void *hold_lock(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&held);
    pthread_mutex_lock(&ready_mu);
    holding = 1;
    pthread_cond_signal(&ready_cv);
    pthread_mutex_unlock(&ready_mu);
    nanosleep(&(struct timespec){0, 150000000L}, NULL);
    pthread_mutex_unlock(&held);
    return NULL;
}

static int locking_resolve(const char *name)
{
    pthread_mutex_lock(&held);
    pthread_mutex_unlock(&held);
    return strcmp(name, "nosuch.test") ? 0 : -1;
}

static void t_threaded(void)
{
    pthread_t th;
    holding = 0;
    CHECK_EQ_INT(pthread_create(&th, NULL, hold_lock, NULL), 0);
    pthread_mutex_lock(&ready_mu);
    while (!holding) pthread_cond_wait(&ready_cv, &ready_mu);
    pthread_mutex_unlock(&ready_mu);
    scv_hostfile_policy pol = scv_hostfile_policy_default();
    pol.resolve = locking_resolve, pol.resolve_timeout_ms = 1500;
    scv_err err = {0};
    CHECK_MSG(scv_hostfile_check(write_hosts("threaded", "node1 slots=2\nnode2\n"), &pol, &err) == SCV_OK, "%s",
              err.msg);
    pthread_join(th, NULL);
    /* and an answer that comes is still read: refused by name, not by the bound */
    CHECK_EQ_INT(scv_hostfile_check(write_hosts("threaded2", "node1\nnosuch.test\n"), &pol, &err), SCV_ENOTFOUND);
    CHECK_MSG(strstr(err.msg, "threaded2:2: host 'nosuch.test' does not resolve"), "%s", err.msg);
}

/* through the command line: train --hosts refuses the file before mpirun, naming file:line
 * (a usage error: exit 2) */
static void t_cli(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char out[4096];
    const char *path = write_hosts("cli", "localhost slots=2\nlocalhost slots=x\n");
    CHECK_EQ_INT(run(out, sizeof out, "%s train --hosts %s --workers 2 --model logreg --dataset synthetic:1000 "
                                      "--batch 64 --iterations 5 --progress never", bin, path), 2);
    CHECK_MSG(strstr(out, "/cli:2: 'slots=x': expected a whole number of slots"), "%s", out);
}

static const scv_test tests[] = {{"syntax", t_syntax}, {"resolve", t_resolve}, {"threaded", t_threaded}, {"cli", t_cli}};

int main(int argc, char **argv)
{
    (void)spawn_group; /* scv_test_proc.h's other helper */
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-hostfile-%ld", (long)getpid());
    mkdir(tmp, 0755);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
