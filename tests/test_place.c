/*
 * test_place.c - a segment placed on a VM type (issue 24 item 21; scv_segment_spec.vm_type,
 * src/drivers/trainjob.c tj_place and tj_types, src/runtime/cluster.c's placement order):
 * the order in which a launch takes a mixed cluster's VMs for a type; the relaunch and
 * elastic drivers opened on a cluster state of two types (a state file only: nothing is
 * brought up) list the types they hold, start the segment's job on the type it names, and
 * refuse a type the cluster does not hold (or holds fewer than K of), naming it; the elastic
 * driver moves to another type by a relaunch of its job. The jobs are a shell script
 * standing in for `scavenger train` (the drivers' `exe`) that logs the type it was started on.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "../src/runtime/cluster.h"
#include "../src/runtime/launch.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[256], cname[16], cstate[256], logpath[400];

/* A mixed cluster's VMs, in placement order for a type: that type's first. */
static void t_order(void)
{
    scv_cluster c;
    memset(&c, 0, sizeof c);
    c.n = 4, c.subnet = 9;
    const char *types[] = {"a.large", "b.large", "a.large", "b.large"};
    for (int i = 0; i < 4; i++) snprintf(c.vm[i].catalog_type, sizeof c.vm[i].catalog_type, "%s", types[i]);
    int o[SCV_CLUSTER_MAX_VMS];
    CHECK_EQ_INT(scv_cluster_place_order(&c, "b.large", o), 2);
    CHECK_MSG(o[0] == 2 && o[1] == 4 && o[2] == 1 && o[3] == 3, "%d %d %d %d", o[0], o[1], o[2], o[3]);
    CHECK_EQ_INT(scv_cluster_place_order(&c, "a.large", o), 2);
    CHECK_MSG(o[0] == 1 && o[1] == 3 && o[2] == 2 && o[3] == 4, "%d %d %d %d", o[0], o[1], o[2], o[3]);
    CHECK_EQ_INT(scv_cluster_place_order(&c, "c.large", o), 0); /* not held: VMs 1..n */
    CHECK_MSG(o[0] == 1 && o[1] == 2 && o[2] == 3 && o[3] == 4, "%d %d %d %d", o[0], o[1], o[2], o[3]);
    CHECK_EQ_INT(scv_cluster_place_order(&c, NULL, o), 0);
    CHECK_EQ_INT(o[0], 1);
    CHECK_EQ_INT(scv_cluster_count_type(&c, "b.large"), 2);
}

/* The stand-in for `scavenger train`: logs "relaunch TYPE" or "elastic TYPE" (its --vm-type)
 * for every start; the probe and a relaunch segment write a job line and exit 0; the
 * elastic job answers each segment command and leaves at "stop". */
static const char *write_fake(void)
{
    static char path[400];
    snprintf(path, sizeof path, "%s/fake-scavenger", tmp);
    FILE *f = fopen(path, "w");
    if (!f) return path;
    fprintf(f,
            "#!/bin/sh\n"
            "metrics= ctl= vm=\n"
            "while [ $# -gt 0 ]; do\n"
            "  case \"$1\" in --metrics) metrics=$2; shift ;; --elastic-control) ctl=$2; shift ;;"
            " --vm-type) vm=$2; shift ;; esac\n"
            "  shift\n"
            "done\n"
            "if [ -z \"$ctl\" ]; then\n"
            "  echo \"relaunch $vm\" >> '%s'\n"
            "  echo '{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"mlp\",\"params\":10,\"act_bytes\":0,"
            "\"input_floats\":4,\"n_train\":640,\"vm\":\"c5.xlarge\",\"threads\":1}' > \"$metrics\"\n"
            "  echo '{}'; exit 0\n"
            "fi\n"
            "echo \"elastic $vm\" >> '%s'\n"
            "echo '{\"type\":\"ready\"}' >> \"$ctl/reply\"\n"
            "n=0\n"
            "while :; do\n"
            "  c=$(grep -c . \"$ctl/cmd\" 2>/dev/null); c=${c:-0}\n"
            "  if [ \"$c\" -gt \"$n\" ]; then\n"
            "    n=$c\n"
            "    if tail -n 1 \"$ctl/cmd\" | grep -q '\"stop\"'; then exit 0; fi\n"
            "    echo '{\"type\":\"segment\",\"rc\":0,\"result\":{\"iterations\":0,\"samples_seen\":0}}'"
            " >> \"$ctl/reply\"\n"
            "  fi\n"
            "  sleep 0.02\n"
            "done\n",
            logpath, logpath);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static void read_log(char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(logpath, "r");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* Opens a driver (relaunch or elastic) on the cluster state, at K workers. */
static scv_job_driver *open_driver(int elastic, const char *run, int K, scv_job_info *job)
{
    scv_relaunch_opts o = {.exe = write_fake(), .vm_type = "c5.xlarge", .cluster = cname, .stall_timeout_s = 5};
    scv_job_driver *d = NULL;
    scv_err err = {0};
    CHECK_MSG((elastic ? scv_elastic_driver_new(&o, &d, &err) : scv_relaunch_driver_new(&o, &d, &err)) == SCV_OK,
              "%s", err.msg);
    if (!d) return NULL;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/%s", tmp, run);
    mkdir(dir, 0755);
    CHECK_MSG(d->open(d->ctx, dir, job, &err) == SCV_OK, "%s", err.msg);
    CHECK_MSG(d->configure(d->ctx, K, 64, NULL, &err) == SCV_OK, "%s", err.msg);
    return d;
}

static int seg(scv_job_driver *d, const char *vm, scv_err *err)
{
    scv_segment_spec spec = {.phase = "train", .until_iterations = 10, .vm_type = vm};
    scv_segment_result res;
    memset(err, 0, sizeof *err);
    return d->train(d->ctx, &spec, NULL, &res, err);
}

static void t_relaunch(void)
{
    unlink(logpath);
    scv_job_info job;
    scv_job_driver *d = open_driver(0, "relaunch", 2, &job);
    if (!d) return;
    /* the types the driver holds: the cluster's, with their counts */
    CHECK_EQ_INT(job.n_types, 2);
    CHECK_MSG(!strcmp(job.types[0], "c5.xlarge") && job.type_vms[0] == 1 && !strcmp(job.types[1], "cheap.xlarge") &&
              job.type_vms[1] == 2, "%s:%d %s:%d", job.types[0], job.type_vms[0], job.types[1], job.type_vms[1]);
    scv_err err;
    CHECK_MSG(seg(d, "cheap.xlarge", &err) == SCV_OK, "%s", err.msg);
    CHECK_MSG(seg(d, NULL, &err) == SCV_OK, "%s", err.msg); /* none said: the driver's own */
    /* not held, and held fewer than K: refused before anything starts, naming the type */
    CHECK_EQ_INT(seg(d, "big.2xlarge", &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "big.2xlarge") && strstr(err.msg, "holds 0"), "%s", err.msg);
    d->configure(d->ctx, 3, 64, NULL, NULL);
    CHECK_EQ_INT(seg(d, "cheap.xlarge", &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "K=3") && strstr(err.msg, "cheap.xlarge") && strstr(err.msg, "holds 2"), "%s", err.msg);
    char log[1024];
    read_log(log, sizeof log);
    /* the probe, the segment on cheap.xlarge, the one on the driver's own type; no more */
    CHECK_MSG(!strcmp(log, "relaunch c5.xlarge\nrelaunch cheap.xlarge\nrelaunch c5.xlarge\n"), "%s", log);
    scv_job_driver_free(d);
}

/* Without a cluster the driver holds no other type: refused, saying where it runs. */
static void t_local_refuses(void)
{
    scv_relaunch_opts o = {.exe = write_fake(), .vm_type = "c5.xlarge"};
    scv_job_driver *d = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_relaunch_driver_new(&o, &d, &err), SCV_OK);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/local", tmp);
    mkdir(dir, 0755);
    scv_job_info job;
    CHECK_MSG(d->open(d->ctx, dir, &job, &err) == SCV_OK, "%s", err.msg);
    CHECK_EQ_INT(job.n_types, 0);
    d->configure(d->ctx, 1, 32, NULL, NULL);
    CHECK_EQ_INT(seg(d, "cheap.xlarge", &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "cheap.xlarge") && strstr(err.msg, "local processes"), "%s", err.msg);
    CHECK_MSG(seg(d, "c5.xlarge", &err) == SCV_OK, "%s", err.msg);
    scv_job_driver_free(d);
}

/* The elastic job stays up while the type stays; another type is a relaunch at the new
 * placement; a type not held is refused. */
static void t_elastic_switch(void)
{
    unlink(logpath);
    scv_job_info job;
    scv_job_driver *d = open_driver(1, "elastic", 1, &job);
    if (!d) return;
    CHECK_EQ_INT(job.n_types, 2);
    scv_err err;
    CHECK_MSG(seg(d, "c5.xlarge", &err) == SCV_OK, "%s", err.msg);
    CHECK_MSG(seg(d, "c5.xlarge", &err) == SCV_OK, "%s", err.msg); /* in place */
    CHECK_MSG(seg(d, "cheap.xlarge", &err) == SCV_OK, "%s", err.msg); /* relaunched */
    CHECK_EQ_INT(seg(d, "big.2xlarge", &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "big.2xlarge"), "%s", err.msg);
    CHECK_MSG(seg(d, "c5.xlarge", &err) == SCV_OK, "%s", err.msg); /* and back */
    scv_job_driver_free(d);
    char log[1024];
    read_log(log, sizeof log);
    CHECK_MSG(!strcmp(log, "relaunch c5.xlarge\nelastic c5.xlarge\nelastic cheap.xlarge\nelastic c5.xlarge\n"), "%s",
              log);
}

/* A launch after a take-down (issue 25 item 2): the VMs up first, then those under a notice,
 * then the preempted ones (`enter` refuses them); a job of more workers than VMs up is
 * refused before mpirun starts, naming the preempted VM and the restore. */
static void t_place_up(void)
{
    scv_cluster c;
    scv_err err = {0};
    CHECK_MSG(scv_cluster_load(cname, &c, &err) == SCV_OK, "%s", err.msg);
    char d2[300], d3[300], path[400];
    CHECK_EQ_INT(scv_cluster_vm_dir(cname, 2, 1, d2, sizeof d2, &err), SCV_OK);
    CHECK_EQ_INT(scv_cluster_vm_dir(cname, 3, 1, d3, sizeof d3, &err), SCV_OK);
    snprintf(path, sizeof path, "%s/" SCV_PREEMPT_DONE_FILE, d2);
    FILE *f = fopen(path, "w");
    if (f) fputs("{\"vm\":\"x-2\",\"at\":1,\"notice_s\":0}\n", f), fclose(f);
    int o[SCV_CLUSTER_MAX_VMS];
    CHECK_EQ_INT(scv_cluster_place_up(&c, "cheap.xlarge", o), 2); /* the type's 2, 3, then 1 */
    CHECK_MSG(o[0] == 3 && o[1] == 1 && o[2] == 2, "%d %d %d", o[0], o[1], o[2]);
    snprintf(path, sizeof path, "%s/" SCV_PREEMPT_NOTICE_FILE, d3);
    if ((f = fopen(path, "w"))) fputs("{\"vm\":\"x-3\",\"at\":1,\"notice_s\":30}\n", f), fclose(f);
    CHECK_EQ_INT(scv_cluster_place_up(&c, "cheap.xlarge", o), 2);
    CHECK_MSG(o[0] == 1 && o[1] == 3 && o[2] == 2, "%d %d %d", o[0], o[1], o[2]);
    char *argv[] = {"train", NULL};
    scv_launch l = {.workers = 3, .threads = 1, .argv = argv, .argc = 1, .cluster = cname, .place_type = "c5.xlarge"};
    pid_t pid = 0;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(scv_launch_start(&l, &pid, &err), SCV_EMPI);
    char want[200];
    snprintf(want, sizeof want, "has 2 of its 3 VMs up (VM 2 preempted: scavenger cluster restore %s 2)", cname);
    CHECK_MSG(strstr(err.msg, want), "%s", err.msg);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf /run/scavenger/clusters/%s.d", cname);
    CHECK_EQ_INT(system(cmd), 0);
}

/* Checkpoint-restart after a take-down (issue 25 item 2): the relaunch driver's K is fixed,
 * so its segment starts only once K VMs are up again (here VM 2, restored 0.4 s later by a
 * background shell), not at once into a launch that would refuse the preempted VM. */
static void t_relaunch_waits(void)
{
    unlink(logpath);
    scv_job_info job;
    scv_job_driver *d = open_driver(0, "waits", 3, &job);
    if (!d) return;
    char dir[300], mark[400];
    scv_err err = {0};
    CHECK_EQ_INT(scv_cluster_vm_dir(cname, 2, 1, dir, sizeof dir, &err), SCV_OK);
    snprintf(mark, sizeof mark, "%s/" SCV_PREEMPT_DONE_FILE, dir);
    FILE *f = fopen(mark, "w");
    if (f) fputs("{\"vm\":\"x-2\",\"at\":1,\"notice_s\":0}\n", f), fclose(f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "(sleep 0.4; rm -f '%s') >/dev/null 2>&1 &", mark);
    CHECK_EQ_INT(system(cmd), 0);
    struct timespec a, b;
    char errpath[400], said[1024] = "";
    snprintf(errpath, sizeof errpath, "%s/waits.err", tmp); /* the wait's own line, on stderr */
    fflush(stderr);
    int saved = dup(2), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 2), close(fd);
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_MSG(seg(d, NULL, &err) == SCV_OK, "%s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    fflush(stderr);
    if (saved >= 0) dup2(saved, 2), close(saved);
    f = fopen(errpath, "r");
    if (f) said[fread(said, 1, sizeof said - 1, f)] = 0, fclose(f);
    char want[200];
    snprintf(want, sizeof want, "relaunch at K=3 waits for a restore: cluster %s has 2 of its 3 VMs up (VM 2 preempted); "
                                "0 s so far, at most 600 s", cname);
    CHECK_MSG(strstr(said, want), "stderr: '%s'", said);
    double waited = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    CHECK_MSG(waited >= 0.35 && access(mark, F_OK) != 0, "the segment started after %.2f s, VM 2 %s", waited,
              access(mark, F_OK) ? "restored" : "still preempted");
    scv_job_driver_free(d);
    snprintf(cmd, sizeof cmd, "rm -rf /run/scavenger/clusters/%s.d", cname);
    CHECK_EQ_INT(system(cmd), 0);
}

/* A relaunch segment whose job dies (issue 25 item 2): the failure states the samples lost,
 * those reported after the checkpoint the retry resumes from (none here: all of them). The
 * fake job reports iterations 1-3 (64 samples each) and exits 1 without a result. */
static void t_relaunch_lost(void)
{
    char fake[400];
    snprintf(fake, sizeof fake, "%s/fake-dies", tmp);
    FILE *f = fopen(fake, "w");
    if (!f) return;
    fprintf(f, "#!/bin/sh\n"
               "metrics=\n"
               "while [ $# -gt 0 ]; do case \"$1\" in --metrics) metrics=$2; shift ;; esac; shift; done\n"
               "echo '{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"mlp\",\"params\":10,\"act_bytes\":0,"
               "\"input_floats\":4,\"n_train\":640,\"vm\":\"c5.xlarge\",\"threads\":1}' > \"$metrics\"\n"
               "case \"$metrics\" in */job.jsonl) echo '{}'; exit 0 ;; esac\n"
               "for i in 1 2 3; do echo \"{\\\"type\\\":\\\"iter\\\",\\\"iter\\\":$i,\\\"workers\\\":2,"
               "\\\"batch\\\":64,\\\"t_compute\\\":0.01,\\\"t_comm\\\":0.001,\\\"t_iter\\\":0.011,"
               "\\\"grad_sqnorm_local_mean\\\":1,\\\"grad_sqnorm_global\\\":1,\\\"epoch_progress\\\":0.1,"
               "\\\"samples_seen\\\":$((i * 64))}\" >> \"$metrics\"; done\n"
               "echo 'scavenger train: a worker died' >&2; exit 1\n");
    fclose(f);
    chmod(fake, 0755);
    scv_relaunch_opts o = {.exe = fake, .vm_type = "c5.xlarge", .stall_timeout_s = 5};
    scv_job_driver *d = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_relaunch_driver_new(&o, &d, &err), SCV_OK);
    if (!d) return;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/lost", tmp);
    mkdir(dir, 0755);
    scv_job_info job;
    CHECK_MSG(d->open(d->ctx, dir, &job, &err) == SCV_OK, "%s", err.msg);
    d->configure(d->ctx, 2, 64, NULL, NULL);
    CHECK_EQ_INT(seg(d, NULL, &err), SCV_EMPI);
    CHECK_MSG(strstr(err.msg, "exited 1") && strstr(err.msg, "; lost 192 samples (iterations 1-3, trained after the "
                                                             "checkpoint at iteration 0"), "%s", err.msg);
    scv_job_driver_free(d);
}

static const scv_test tests[] = {
    {"order", t_order},
    {"relaunch", t_relaunch},
    {"local_refuses", t_local_refuses},
    {"elastic_switch", t_elastic_switch},
    {"relaunch_lost", t_relaunch_lost},
    {"place_up", t_place_up},
    {"relaunch_waits", t_relaunch_waits},
};

int main(int argc, char **argv)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-place-%ld", (long)getpid());
    mkdir(tmp, 0755);
    snprintf(logpath, sizeof logpath, "%s/starts.log", tmp);
    /* a cluster's state, as `cluster up` leaves it (1 VM of c5.xlarge, 2 of cheap.xlarge);
     * nothing is brought up: the drivers read it, the fake job ignores --cluster */
    snprintf(cname, sizeof cname, "tp%ld", (long)getpid() % 100000);
    mkdir("/run/scavenger", 0755);
    mkdir("/run/scavenger/clusters", 0755);
    snprintf(cstate, sizeof cstate, "/run/scavenger/clusters/%s", cname);
    FILE *f = fopen(cstate, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", cstate);
        return 1;
    }
    fputs("subnet 250\nvm c5.xlarge c5.xlarge 0.25 625 0.5 0.25\nvm cheap.xlarge cheap.xlarge 0.25 625 0.5 0.25\n"
          "vm cheap.xlarge cheap.xlarge 0.25 625 0.5 0.25\n", f);
    fclose(f);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    unlink(cstate);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
