/*
 * test_preempt.c - emulated preemptions (src/runtime/preempt.c): a notice is written as a
 * file the VM's processes find through $SCV_PREEMPT_NOTICE_FILE, and at its end a process
 * started in the VM is killed and the VM refuses new ones; a second preempt and an unknown VM
 * are refused with clear messages; restore brings the VM back so that a new process in it
 * reaches another VM over TCP; a replayed trace does the same in real time. The trace parser
 * refuses bad lines naming file:line, and the seeded random mode is repeatable, writes a trace
 * that reads back to the same events, and draws exponential lifetimes of the stated mean.
 * The cluster cases need root and the emulation's kernel features (as test_cluster); the
 * trace cases need nothing. About 3 s in all.
 */
#define _GNU_SOURCE
#include "scv.h"
#include "scv_test.h"
#include "runtime/cluster.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char name[16];
static int up_done;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int cluster_up(void)
{
    if (up_done) return 1;
    scv_cluster c;
    scv_err err = {0};
    if (scv_cluster_up(name, "c5.xlarge:2", "data/emulated-vms.csv", &c, &err)) {
        printf("# cluster up: %s\n", err.msg);
        return 0;
    }
    up_done = 1;
    return 1;
}

/* Starts `sleep 1000` inside VM vm as the cluster starts processes (scv_cluster_enter, exec);
 * its $SCV_PREEMPT_NOTICE_FILE comes back in env. */
static pid_t start_sleeper(int vm, char *env, size_t cap)
{
    int fd[2];
    if (pipe(fd)) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        scv_cluster c;
        if (scv_cluster_load(name, &c, NULL) || scv_cluster_enter(&c, vm, NULL)) _exit(3);
        const char *v = getenv("SCV_PREEMPT_NOTICE_FILE");
        if (write(fd[1], v ? v : "", strlen(v ? v : "")) < 0) _exit(4);
        close(fd[1]);
        execlp("sleep", "sleep", "1000", (char *)NULL);
        _exit(5);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], env, cap - 1);
    env[got > 0 ? got : 0] = 0;
    close(fd[0]);
    return pid;
}

/* 1 when a process of VM from connects over TCP to a listener in VM to and reads its reply. */
static int reach(int from, int to, int port)
{
    scv_cluster c;
    if (scv_cluster_load(name, &c, NULL)) return 0;
    char addr[32];
    scv_cluster_addr(&c, to, addr, sizeof addr);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, addr, &sa.sin_addr);
    int ready[2];
    if (pipe(ready)) return 0;
    pid_t rx = fork();
    if (rx == 0) {
        alarm(3);
        close(ready[0]);
        if (scv_cluster_enter(&c, to, NULL)) _exit(1);
        int s = socket(AF_INET, SOCK_STREAM, 0), one = 1; /* in the VM's namespace */
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(s, (struct sockaddr *)&sa, sizeof sa) || listen(s, 1)) _exit(1);
        if (write(ready[1], "r", 1) != 1) _exit(1);
        int a = accept(s, NULL, NULL);
        _exit(a >= 0 && write(a, "ok", 2) == 2 ? 0 : 1);
    }
    close(ready[1]);
    char r;
    int ok = read(ready[0], &r, 1) == 1;
    close(ready[0]);
    pid_t tx = ok ? fork() : -1;
    if (tx == 0) {
        alarm(3);
        char buf[2];
        if (scv_cluster_enter(&c, from, NULL)) _exit(1);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&sa, sizeof sa)) _exit(1);
        _exit(read(s, buf, 2) == 2 && !memcmp(buf, "ok", 2) ? 0 : 1);
    }
    int st = 1;
    if (tx > 0) {
        waitpid(tx, &st, 0);
        ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    kill(rx, SIGKILL);
    waitpid(rx, NULL, 0);
    return ok;
}

static int link_up(int vm)
{
    char cmd[128], out[512] = "";
    snprintf(cmd, sizeof cmd, "ip -n scv-%s-%d -o link show eth0", name, vm);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = 0;
    pclose(p);
    return strstr(out, ",UP") != NULL || strstr(out, "<UP") != NULL;
}

static void t_notice_then_kill_then_restore(void)
{
    CHECK(cluster_up());
    if (!up_done) return;
    char env[512], dir[300], want[600];
    scv_err err = {0};
    pid_t pid = start_sleeper(2, env, sizeof env);
    CHECK(pid > 0);
    scv_cluster_vm_dir(name, 2, 0, dir, sizeof dir, NULL);
    snprintf(want, sizeof want, "%s/preempt-notice", dir);
    CHECK_MSG(!strcmp(env, want), "SCV_PREEMPT_NOTICE_FILE '%s', want '%s'", env, want);

    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    CHECK_EQ_INT(scv_cluster_preempt(name, 2, 1.0, 0, &err), SCV_OK);
    /* the notice: a complete JSON file, there at once, naming the VM and when it goes */
    FILE *f = fopen(want, "r");
    char text[256] = "";
    CHECK(f != NULL);
    if (f) {
        CHECK(fgets(text, sizeof text, f) != NULL);
        fclose(f);
    }
    char vmname[32];
    snprintf(vmname, sizeof vmname, "\"vm\":\"%s-2\"", name);
    CHECK_MSG(strstr(text, vmname) && strstr(text, "\"notice_s\":1}"), "%s", text);
    const char *at = strstr(text, "\"at\":");
    CHECK(at && fabs(strtod(at + 5, NULL) - (t0.tv_sec + 1e-9 * t0.tv_nsec + 1.0)) < 0.5);
    CHECK_EQ_INT(scv_cluster_vm_state(name, 2, NULL), SCV_VM_NOTICE);
    /* a second preempt is refused, and so is a VM not in the cluster (naming the valid ones) */
    CHECK_EQ_INT(scv_cluster_preempt(name, 2, 5, 0, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "already has a preemption notice"), "%s", err.msg);
    CHECK_EQ_INT(scv_cluster_preempt(name, 3, 5, 0, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "has VMs 1..2"), "%s", err.msg);
    /* still running during the notice, killed after it */
    sleep_s(0.4);
    CHECK_MSG(waitpid(pid, NULL, WNOHANG) == 0, "the VM's process died before the notice ended");
    int st = 0, gone = 0;
    for (int i = 0; i < 40 && !gone; i++) {
        sleep_s(0.05);
        gone = waitpid(pid, &st, WNOHANG) == pid;
    }
    CHECK_MSG(gone && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the VM's process outlived the notice");
    if (!gone) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    CHECK_EQ_INT(scv_cluster_vm_wait(name, 2, 2.0), SCV_VM_PREEMPTED);
    CHECK_EQ_INT(link_up(2), 0);
    scv_cluster c;
    CHECK_EQ_INT(scv_cluster_load(name, &c, NULL), SCV_OK);
    pid = fork();
    if (pid == 0) _exit(scv_cluster_enter(&c, 2, NULL) == SCV_EINVAL ? 0 : 1);
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a preempted VM let a process in");
    CHECK_EQ_INT(scv_cluster_preempt(name, 2, 0, 0, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "already preempted"), "%s", err.msg);

    /* restore: the notice gone, the link up, a new process runs and reaches VM 1 */
    CHECK_EQ_INT(scv_cluster_restore(name, 2, &err), SCV_OK);
    CHECK_EQ_INT(scv_cluster_vm_state(name, 2, NULL), SCV_VM_UP);
    CHECK(access(want, F_OK) != 0);
    CHECK_EQ_INT(link_up(2), 1);
    CHECK_MSG(reach(2, 1, 5311), "a process in the restored VM could not reach VM 1");
    CHECK_EQ_INT(scv_cluster_restore(name, 2, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "nothing to restore"), "%s", err.msg);
}

/* notice 0: the kill is immediate; a trace replayed in real time takes down and restores. */
static void t_kill_and_replay(void)
{
    CHECK(cluster_up());
    if (!up_done) return;
    char env[512];
    scv_err err = {0};
    pid_t pid = start_sleeper(2, env, sizeof env);
    CHECK_EQ_INT(scv_cluster_preempt(name, 2, 0, 0, &err), SCV_OK);
    int st = 0;
    CHECK_MSG(waitpid(pid, &st, WNOHANG) == pid, "notice 0 left the VM's process running");
    if (!WIFSIGNALED(st)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    CHECK_EQ_INT(scv_cluster_restore(name, 2, &err), SCV_OK);

    pid = start_sleeper(2, env, sizeof env);
    scv_preempt_event ev[] = {{0, 2, SCV_PE_NOTICE, 0.3, 1}, {0.5, 2, SCV_PE_RESTORE, 0, 2}};
    volatile sig_atomic_t stop = 0;
    CHECK_EQ_INT(scv_preempt_replay(name, ev, 2, &stop, NULL, &err), SCV_OK);
    CHECK_MSG(waitpid(pid, &st, WNOHANG) == pid, "the replayed notice left the VM's process running");
    CHECK_EQ_INT(scv_cluster_vm_state(name, 2, NULL), SCV_VM_UP);
    CHECK(reach(2, 1, 5312));
    if (waitpid(pid, NULL, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

static int read_text(const char *text, int n_vms, scv_preempt_event **ev, size_t *n, scv_err *err)
{
    char path[] = "/tmp/scv-trace-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) return -1;
    close(fd);
    int rc = scv_preempt_trace_read(path, n_vms, ev, n, err);
    /* messages name the file: replace its random name for the checks */
    char *p = strstr(err->msg, path);
    if (p) {
        char rest[SCV_ERR_LEN];
        snprintf(rest, sizeof rest, "%s", p + strlen(path));
        snprintf(p, sizeof err->msg - (size_t)(p - err->msg), "T%s", rest);
    }
    unlink(path);
    return rc;
}

static void t_trace_parse(void)
{
    scv_preempt_event *ev;
    size_t n;
    scv_err err = {0};
    CHECK_EQ_INT(read_text("# a trace\n\n0 2 notice\n 10.5\t3 notice:120 # AWS\n30 2 restore\n31 3 kill\n40 3 restore\n",
                           3, &ev, &n, &err), SCV_OK);
    CHECK_EQ_INT((int)n, 5);
    if (n == 5) {
        CHECK(ev[0].t == 0 && ev[0].vm == 2 && ev[0].kind == SCV_PE_NOTICE && ev[0].notice_s == 30 && ev[0].line == 3);
        CHECK(ev[1].t == 10.5 && ev[1].vm == 3 && ev[1].notice_s == 120 && ev[1].line == 4);
        CHECK(ev[3].kind == SCV_PE_KILL && ev[4].kind == SCV_PE_RESTORE);
    }
    free(ev);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"0 1 kill\n5 1\n", "T:2: expected SECONDS VM EVENT"},
        {"0 1 kill extra\n", "T:1: 'extra' after the event"},
        {"x 1 kill\n", "T:1: SECONDS 'x'"},
        {"-1 1 kill\n", "T:1: SECONDS '-1'"},
        {"5 1 kill\n4 1 restore\n", "T:2: 4 s is before the previous event's 5 s"},
        {"0 0 kill\n", "T:1: VM '0'"},
        {"0 1.5 kill\n", "T:1: VM '1.5'"},
        {"0 1 reboot\n", "T:1: event 'reboot': expected notice[:S], kill or restore"},
        {"0 1 notice:0\n", "T:1: 'notice:0': the notice must be in (0, 3600] s"},
        {"0 1 notice:abc\n", "T:1: 'notice:abc'"},
        {"# only a comment\n", "T: no event"},
        {"0 4 kill\n", "T:1: VM 4: the cluster has VMs 1..3"},
        {"0 1 notice:10\n5 1 notice:10\n", "T:2: notice to VM 1 at 5 s, which is already under notice"},
        {"0 1 notice:10\n20 1 kill\n", "T:2: kill of VM 1 at 20 s, which is already down"},
        {"0 1 restore\n", "T:1: restore of VM 1 at 0 s, which is up"},
        {"0 1 kill\n9 1 notice\n", "T:2: notice to VM 1 at 9 s, which is down"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        int rc = read_text(bad[i].text, 3, &ev, &n, &err);
        CHECK_MSG(rc != SCV_OK && strstr(err.msg, bad[i].msg), "'%s': rc %d '%s', want '%s'", bad[i].text, rc,
                  err.msg, bad[i].msg);
        CHECK(ev == NULL && n == 0);
    }
    /* a kill during a notice is allowed (the take-down comes early) */
    CHECK_EQ_INT(read_text("0 1 notice:10\n5 1 kill\n6 1 restore\n", 3, &ev, &n, &err), SCV_OK);
    free(ev);
}

static void t_random_repeatable(void)
{
    int vms[] = {2, 3, 4};
    scv_preempt_random p = {7, 120, 30, 60, 3600, vms, 3};
    scv_preempt_event *a, *b, *c2;
    size_t na, nb, nc;
    scv_err err = {0};
    CHECK_EQ_INT(scv_preempt_trace_random(&p, &a, &na, &err), SCV_OK);
    CHECK_EQ_INT(scv_preempt_trace_random(&p, &b, &nb, &err), SCV_OK);
    CHECK(na > 10 && na == nb && !memcmp(a, b, na * sizeof *a));
    p.seed = 8;
    CHECK_EQ_INT(scv_preempt_trace_random(&p, &c2, &nc, &err), SCV_OK);
    CHECK(nc != na || memcmp(a, c2, na * sizeof *a));
    free(c2);
    /* sorted, only the VMs asked for, consistent, and the written trace reads back the same */
    for (size_t i = 0; i < na; i++) {
        CHECK(a[i].vm >= 2 && a[i].vm <= 4 && a[i].t < 3600);
        if (i) CHECK(a[i].t >= a[i - 1].t);
    }
    CHECK_EQ_INT(scv_preempt_trace_check("drawn", a, na, 4, &err), SCV_OK);
    char path[] = "/tmp/scv-trace-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (f) {
        p.seed = 7;
        scv_preempt_trace_write(f, &p, a, na);
        fclose(f);
        CHECK_EQ_INT(scv_preempt_trace_read(path, 4, &c2, &nc, &err), SCV_OK);
        CHECK_MSG(nc == na, "read back %zu of %zu: %s", nc, na, err.msg);
        for (size_t i = 0; i < na && nc == na; i++)
            CHECK(c2[i].t == a[i].t && c2[i].vm == a[i].vm && c2[i].kind == a[i].kind && c2[i].notice_s == a[i].notice_s);
        free(c2);
        unlink(path);
    }
    free(a);
    free(b);
    /* the lifetimes: exponential of the stated mean (one VM, a long horizon, kills: restore
     * at kill + down, the next kill a lifetime later) */
    int one[] = {1};
    scv_preempt_random q = {11, 50, 0, 1, 1e6, one, 1};
    CHECK_EQ_INT(scv_preempt_trace_random(&q, &a, &na, &err), SCV_OK);
    double sum = 0, sum2 = 0, last = 0;
    int k = 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i].kind == SCV_PE_KILL) {
            double life = a[i].t - last;
            sum += life;
            sum2 += life * life;
            k++;
        } else last = a[i].t;
    }
    double mean = sum / k, sd = sqrt(sum2 / k - mean * mean);
    CHECK_MSG(k > 10000 && fabs(mean - 50) < 2 && fabs(sd - 50) < 3, "%d lifetimes: mean %g sd %g", k, mean, sd);
    free(a);
    q.mean_life_s = 0;
    CHECK_EQ_INT(scv_preempt_trace_random(&q, &a, &na, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "--mean-life"), "%s", err.msg);
}

static const scv_test tests[] = {
    {"trace_parse", t_trace_parse},
    {"random_repeatable", t_random_repeatable},
    {"notice_then_kill_then_restore", t_notice_then_kill_then_restore},
    {"kill_and_replay", t_kill_and_replay},
};

int main(int argc, char **argv)
{
    snprintf(name, sizeof name, "p%d", (int)(getpid() % 100000));
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    if (up_done) scv_cluster_down(name, NULL);
    return rc;
}
