/*
 * test_cli.c - end-to-end tests of `scavenger train` through its command line, including
 * MPI runs (K = 2 through mpirun): equivalence of K=2 and K=1 at the same global batch,
 * checkpoint/resume with the same and with another K and B, Ctrl-C, and bad input; plan,
 * profile, sweep, vms and cluster replay. The target options are test_cli_target.c's,
 * `scavenger run` and the exec driver test_cli_run.c's. The binary is $SCV_BIN (default
 * build/scavenger).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* flock */
#include "scv.h"
#include "scv_test.h"
#include "scv_test_proc.h"
#include "scv_test_cli.h"

#include <cjson/cJSON.h>
#include "train/ckpt.h"
#include "drivers/child.h"
#include "store/store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ||a - b|| / ||a|| of the parameters in two checkpoint directories */
static double param_diff(const char *da, const char *db)
{
    size_t na = 0, nb = 0;
    scv_ckpt_state sa, sb;
    float *a = load_params(da, &na, &sa), *b = load_params(db, &nb, &sb);
    double r = 1e9;
    if (a && b && na == nb) {
        double num = 0, den = 0;
        for (size_t i = 0; i < na; i++) {
            num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
            den += (double)a[i] * a[i];
        }
        r = sqrt(num / den);
    }
    free(a);
    free(b);
    return r;
}

static void t_help_and_usage(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s --help", bin), 0);
    CHECK(strstr(out, "train") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --help", bin), 0);
    CHECK(strstr(out, "--target-accuracy") != NULL && strstr(out, "--checkpoint") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s frobnicate", bin), 2);
    CHECK(strstr(out, "unknown command 'frobnicate'") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --batch abc --epochs 1", bin), 2);
    CHECK(strstr(out, "--batch 'abc'") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --bogus", bin), 2);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --model mlp", bin), 2);
    CHECK(strstr(out, "no stopping rule") != NULL);
}

static void t_json_summary(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 50 --epochs 1 --metrics %s/m.jsonl --json", bin, tmp), 0);
    const char *keys[] = {"\"model\":\"mlp\"", "\"workers\":1", "\"batch\":50", "\"iterations\":40",
                          "\"epochs\":1,", "\"samples_per_sec\"", "\"test_accuracy\"", "\"test_loss\"",
                          "\"wall_seconds\"", "\"t_compute_mean\"", "\"t_comm_mean\"", "\"t_iter_mean\""};
    const char *last = strrchr(out, '{');
    CHECK(last != NULL);
    for (size_t i = 0; last && i < sizeof keys / sizeof keys[0]; i++)
        CHECK_MSG(strstr(last, keys[i]) != NULL, "missing %s in %s", keys[i], last);
    /* metrics: 40 iteration lines with the noise fields, and one evaluation at the epoch end */
    char path[512], line[2048];
    snprintf(path, sizeof path, "%s/m.jsonl", tmp);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    int iters = 0, evals = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "\"type\":\"iter\"")) {
            iters++;
            CHECK(strstr(line, "\"grad_sqnorm_local_mean\":") && strstr(line, "\"grad_sqnorm_global\":"));
            CHECK(strstr(line, "\"t_compute\":") && strstr(line, "\"t_comm\":") && strstr(line, "\"t_iter\":"));
        }
        if (strstr(line, "\"type\":\"eval\"")) evals++;
    }
    if (f) fclose(f);
    CHECK_EQ_INT(iters, 40);
    CHECK_EQ_INT(evals, 1);
}

/* K=2 and K=1 at the same global batch: the same weights after 20 iterations. */
static void t_k2_equals_k1(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 20 --checkpoint %s/k1", bin, tmp), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 20 --checkpoint %s/k2", bin, tmp), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch-split 1,3 --batch 32 --iterations 20 --checkpoint %s/k2u", bin, tmp), 0);
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s/k1", tmp);
    snprintf(b, sizeof b, "%s/k2", tmp);
    snprintf(c, sizeof c, "%s/k2u", tmp);
    double d2 = param_diff(a, b), du = param_diff(a, c);
    CHECK_MSG(d2 < 1e-4, "K=2 vs K=1: relative difference %.3g", d2);
    CHECK_MSG(du < 1e-4, "K=2 uneven vs K=1: relative difference %.3g", du);
    /* dynamic batching: the shares start at 1:1:4 and move (equal processes: towards even)
     * while the weights stay those of the whole batch */
    char m[600];
    snprintf(m, sizeof m, "%s/dyn.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 3 --batch-split 1,1,4 --dynamic-batching --batch 32 "
                                      "--iterations 60 --checkpoint %s/k3d --metrics %s", bin, tmp, m), 0);
    CHECK_MSG(file_has(m, "\"type\":\"rebalance\",\"iter\":40,"), "the shares never moved");
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 60 --checkpoint %s/k1l", bin, tmp), 0);
    snprintf(c, sizeof c, "%s/k3d", tmp);
    snprintf(b, sizeof b, "%s/k1l", tmp);
    double dd = param_diff(b, c);
    CHECK_MSG(dd < 1e-4, "K=3 dynamic batching vs K=1: relative difference %.3g", dd);
    /* a different global batch must give different weights (the check can fail) */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 64 --iterations 20 --checkpoint %s/b64", bin, tmp), 0);
    snprintf(b, sizeof b, "%s/b64", tmp);
    CHECK(param_diff(a, b) > 1e-3);
}

/* AdaScale (--lr-scaling adascale, sched.h): at K=1 the batch's halves give the noise
 * statistics, at K=2 the workers' slices, the same samples: the two train the same weights;
 * at B = 4 B0 the rate rises above the base (the gain, written with its noise scale) and
 * stays within 4x; the rule needs the statistics (exit 2 with --no-grad-stats). */
static void t_adascale(void)
{
    char out[8192], a[512], b[512], m[600];
    snprintf(m, sizeof m, "%s/ada.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s train " JOB " --lr 0.05 --lr-scaling adascale --base-batch 8 --batch 32 "
                     "--iterations 30 --checkpoint %s/ada1 --metrics %s",
                     bin, tmp, m),
                 0);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s train " JOB " --lr 0.05 --lr-scaling adascale --base-batch 8 --workers 2 "
                     "--batch 32 --iterations 30 --checkpoint %s/ada2",
                     bin, tmp),
                 0);
    snprintf(a, sizeof a, "%s/ada1", tmp), snprintf(b, sizeof b, "%s/ada2", tmp);
    double d = param_diff(a, b);
    CHECK_MSG(d < 1e-4, "AdaScale K=2 vs K=1: relative difference %.3g", d);
    FILE *f = fopen(m, "r");
    char line[4096];
    int n = 0, above = 0, within = 1, named = 0;
    while (f && fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *lr = cJSON_GetObjectItem(o, "lr"), *g = cJSON_GetObjectItem(o, "ada_gain");
        if (cJSON_IsNumber(lr) && cJSON_IsNumber(g)) {
            n++, above += lr->valuedouble > 0.05 * 1.05, within &= lr->valuedouble <= 0.2 + 1e-9;
            named += cJSON_IsNumber(cJSON_GetObjectItem(o, "ada_noise_scale"));
            within &= fabs(lr->valuedouble - 0.05 * g->valuedouble) < 1e-6;
        }
        cJSON_Delete(o);
    }
    if (f) fclose(f);
    CHECK_MSG(n == 30 && above > 10 && within && named >= 29, "%d steps, %d above the base rate, within %d, named %d",
              n, above, within, named);
    snprintf(a, sizeof a, "%s/ada-none", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s train " JOB " --lr 0.05 --base-batch 8 --batch 32 --iterations 30 "
                     "--checkpoint %s",
                     bin, a),
                 0);
    snprintf(b, sizeof b, "%s/ada1", tmp);
    CHECK(param_diff(a, b) > 1e-3); /* (the gain moved the weights: the check can fail) */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --lr-scaling adascale --no-grad-stats --iterations 2", bin), 2);
    CHECK_MSG(strstr(out, "--lr-scaling adascale measures the gradient's noise") != NULL, "%s", out);
}

/* Communication efficiency (train --compress, --selsync; docs/MODEL.md): SelSync at delta 0
 * is synchronous SGD to the bit; aiming at half local steps it takes about that many and
 * still ends with one model; Top-k over Allgather and AR-Topk sends the stated bytes after the dense start, the
 * global gradient norm is null on compressed steps, and the gain is a fraction; bad values
 * are usage errors naming the option. */
static void t_comm_efficiency(void)
{
    char out[8192], a[512], b[512], m[600];
    snprintf(a, sizeof a, "%s/ce-plain", tmp);
    snprintf(b, sizeof b, "%s/ce-sel0", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 30 --checkpoint %s", bin, a), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 30 --selsync 0 --checkpoint %s",
                     bin, b), 0);
    CHECK_MSG(param_diff(a, b) == 0, "SelSync delta 0 vs synchronous SGD: relative difference %.3g", param_diff(a, b));
    snprintf(b, sizeof b, "%s/ce-sel", tmp);
    snprintf(m, sizeof m, "%s/ce-sel.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 200 --selsync lssr:0.5 "
                                      "--checkpoint %s --metrics %s", bin, b, m), 0);
    CHECK_MSG(file_has(m, "\"sync\":false") && file_has(m, "\"sync\":true"), "no local or no synchronous step");
    double d = param_diff(a, b);
    CHECK_MSG(d > 0 && d < 1, "SelSync lssr:0.5 params vs synchronous: relative difference %.3g", d);
    /* the first 26 steps synchronise (half the history, and the first that has no change),
     * then more than half of the rest do not, to make up (0.45-0.52 over seeds 3-5) */
    CHECK_EQ_INT(run(out, sizeof out, "grep '\"type\":\"iter\"' %s | tail -1 | sed 's/.*\"lssr\":\\([0-9.]*\\).*/\\1/'", m), 0);
    CHECK_MSG(atof(out) > 0.3 && atof(out) < 0.55, "share of local steps after 200: %s", out);
    /* Top-k 10x: the MLP here has 784*32+32+32*10+10 = 25450 parameters, k = 2545 */
    const char *coll[] = {"allgather", "artopk"};
    for (int i = 0; i < 2; i++) {
        snprintf(m, sizeof m, "%s/ce-%s.jsonl", tmp, coll[i]);
        CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 40 --compress topk:10 "
                                          "--collective %s --metrics %s", bin, coll[i], m), 0);
        FILE *f = fopen(m, "r");
        char line[4096];
        int dense = 0, sparse = 0, bad = 0;
        while (f && fgets(line, sizeof line, f)) {
            if (!strstr(line, "\"type\":\"iter\"")) continue;
            const char *cf = strstr(line, "\"cf\":"), *by = strstr(line, "\"bytes_sent\":"), *gn = strstr(line, "\"gain\":");
            if (!cf || !by || !gn) {
                bad++;
                continue;
            }
            if (atof(cf + 5) == 1) { /* the dense start: the exact mean gradient */
                dense++;
                bad += strstr(line, "\"grad_sqnorm_global\":null") != NULL;
            } else {
                sparse++;
                double gain = atof(gn + 7), bytes = atof(by + 13);
                bad += !strstr(line, "\"grad_sqnorm_global\":null") || !(gain > 0 && gain <= 1);
                /* Allgather: 2545 indices + 2545 values + the scalars; AR-Topk: the values and
                 * the scalars, and the indices on the step this rank chose them */
                bad += !(bytes >= 4.0 * (i ? 1 : 2) * 2545 && bytes < 4.0 * 2 * 2545 + 4.0 * 64);
                bad += !strstr(line, i ? "\"collective\":\"artopk-" : "\"collective\":\"allgather\"");
            }
        }
        if (f) fclose(f);
        CHECK_MSG(dense == 20 && sparse == 20 && !bad, "%s: %d dense, %d sparse, %d bad lines", coll[i], dense, sparse, bad);
    }
    const char *usage[][2] = {{"--compress topk:0.5", "--compress"}, {"--compress zip", "--compress"},
                              {"--selsync -1", "--selsync"}, {"--collective ring", "--collective"},
                              {"--selsync 0.3 --compress gravac", "--selsync"}, {"--artopk-root any", "--artopk-root"},
                              {"--collective artopk", "only with --compress"}, {"--compress topk:1", "--compress"}};
    for (int i = 0; i < 8; i++) {
        CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --iterations 2 %s", bin, usage[i][0]), 2);
        CHECK_MSG(strstr(out, usage[i][1]) != NULL, "%s: %s", usage[i][0], out);
    }
}

/* Reads the "loss" of each iteration line of a metrics file into losses[iter-1]. */
static int read_losses(const char *path, double *losses, int cap)
{
    FILE *f = fopen(path, "r");
    char line[2048];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"type\":\"iter\"")) continue;
        int it = atoi(strstr(line, "\"iter\":") + 7);
        const char *l = strstr(line, "\"loss\":");
        if (it >= 1 && it <= cap && l) losses[it - 1] = atof(l + 7), n++;
    }
    if (f) fclose(f);
    return n;
}

static void t_resume_same_k(void)
{
    char out[8192], ma[512], mb[512];
    snprintf(ma, sizeof ma, "%s/full.jsonl", tmp);
    snprintf(mb, sizeof mb, "%s/part.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 48 --iterations 60 --metrics %s --checkpoint %s/full", bin, ma, tmp), 0);
    /* 60 iterations of 48 cross the 2000-sample epoch boundary (41.7 iterations/epoch) */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 48 --iterations 35 --metrics %s --checkpoint %s/part", bin, mb, tmp), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 48 --iterations 60 --metrics %s --checkpoint %s/part --resume", bin, mb, tmp), 0);
    double la[60] = {0}, lb[60] = {0};
    CHECK_EQ_INT(read_losses(ma, la, 60), 60);
    CHECK_EQ_INT(read_losses(mb, lb, 60), 60);
    for (int i = 0; i < 60; i++) CHECK_MSG(la[i] == lb[i], "iteration %d: loss %.9g vs %.9g", i + 1, la[i], lb[i]);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/full", tmp);
    snprintf(b, sizeof b, "%s/part", tmp);
    CHECK(param_diff(a, b) == 0);
}

/* Stop at iteration 10 on K=1, resume on K=2: same weights as never stopping (same B);
 * with another B the data position carries over. */
static void t_resume_other_k(void)
{
    char out[8192], a[512], b[512];
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 10 --checkpoint %s/x", bin, tmp), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 20 --checkpoint %s/x --resume", bin, tmp), 0);
    snprintf(a, sizeof a, "%s/k1", tmp); /* from t_k2_equals_k1: 20 iterations, K=1 */
    snprintf(b, sizeof b, "%s/x", tmp);
    double d = param_diff(a, b);
    CHECK_MSG(d < 1e-4, "resumed on K=2 vs uninterrupted K=1: relative difference %.3g", d);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 48 --iterations 25 --checkpoint %s/x --resume", bin, tmp), 0);
    size_t n;
    scv_ckpt_state st;
    free(load_params(b, &n, &st));
    CHECK_EQ_INT(st.iteration, 25);
    CHECK_EQ_INT(st.pos, 20 * 32 + 5 * 48);
    CHECK_EQ_INT(st.samples_seen, 20 * 32 + 5 * 48);
    CHECK_EQ_INT(st.workers, 2);
    CHECK_EQ_INT(st.batch, 48);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static void t_bad_input(void)
{
    char out[8192], d[512], path[600];
    CHECK_EQ_INT(run(out, sizeof out, "%s train --dataset /no/such/dir --epochs 1", bin), 1);
    CHECK(strstr(out, "/no/such/dir") != NULL);
    /* a directory with a wrong magic, then a truncated file */
    snprintf(d, sizeof d, "%s/idx", tmp);
    mkdir(d, 0755);
    unsigned char hdr[16] = {0, 0, 8, 4, 0, 0, 0, 2, 0, 0, 0, 28, 0, 0, 0, 28};
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", d);
    write_file(path, hdr, 16);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --dataset %s --epochs 1", bin, d), 1);
    CHECK_MSG(strstr(out, "wrong IDX magic") != NULL, "%s", out);
    hdr[3] = 3;
    write_file(path, hdr, 16);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --dataset %s --epochs 1", bin, d), 1);
    CHECK_MSG(strstr(out, "truncated") != NULL, "%s", out);
    /* the same error through mpirun, reported once */
    CHECK_EQ_INT(run(out, sizeof out, "%s train --workers 2 --dataset %s --epochs 1", bin, d), 1);
    CHECK_MSG(strstr(out, "truncated") != NULL, "%s", out);
    /* K larger than the batch; unknown model */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 4 --batch 2 --epochs 1", bin), 2);
    CHECK(strstr(out, "smaller than --workers") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --model transformer --epochs 1", bin), 2);
    CHECK(strstr(out, "unknown model") != NULL);
    /* a damaged checkpoint is refused and left as it was */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 5 --checkpoint %s/bad", bin, tmp), 0);
    snprintf(path, sizeof path, "%s/bad/checkpoint.scv", tmp);
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        fseek(f, 500, SEEK_SET);
        fputc(0x5a, f);
        fclose(f);
    }
    struct stat before, after;
    stat(path, &before);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 9 --checkpoint %s/bad --resume", bin, tmp), 1);
    CHECK_MSG(strstr(out, "checksum mismatch") != NULL, "%s", out);
    stat(path, &after);
    CHECK(before.st_mtime == after.st_mtime && before.st_size == after.st_size);
    /* a checkpoint of another model is refused */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 5 --checkpoint %s/k1 --resume --hidden 64", bin, tmp), 1);
    CHECK_MSG(strstr(out, "checkpoint holds model mlp:784-32-10") != NULL, "%s", out);
}

/* SIGINT: training stops at an iteration boundary, saves a checkpoint and exits 130. */
static void t_interrupt(void)
{
    for (int k = 1; k <= 2; k++) {
        char cmd[2048], dir[512];
        snprintf(dir, sizeof dir, "%s/int%d", tmp, k);
        snprintf(cmd, sizeof cmd,
                 "%s train --model lenet --dataset synthetic:20000 --workers %d --batch 64 "
                 "--epochs 50 --checkpoint %s --metrics %s.jsonl --progress never >%s.log 2>&1",
                 bin, k, dir, dir, dir);
        pid_t pid = spawn_group(cmd);
        char metrics[600];
        snprintf(metrics, sizeof metrics, "%s.jsonl", dir);
        for (int i = 0; i < 300 && !file_has(metrics, "\"type\":\"iter\",\"iter\":20,"); i++) { /* training */
            struct timespec t = {0, 100000000};
            nanosleep(&t, NULL);
        }
        if (k == 1) { /* the trainer blocks the stop signals in every thread while it trains
                       * (a handler on oneDNN's GEMM stack corrupts the heap; trainer.c) */
            char out[4096];
            CHECK_EQ_INT(run(out, sizeof out, "for p in $(pgrep -g %d -x scavenger); do grep -h SigBlk /proc/$p/task/*/status; done",
                             (int)pid), 0);
            int lines = 0, blocked = 0;
            for (const char *q = out; (q = strstr(q, "SigBlk:")); q++, lines++)
                blocked += (strtoull(q + 7, NULL, 16) & 0x4202) == 0x4202; /* SIGINT, SIGUSR1, SIGTERM */
            CHECK_MSG(lines > 0 && blocked == lines, "%d of %d threads block the stop signals: %s", blocked, lines, out);
        }
        kill(-pid, SIGINT); /* as a terminal's Ctrl-C: the whole process group */
        int st = 0;
        waitpid(pid, &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        CHECK_MSG(code == 130, "K=%d: exit %d", k, code);
        size_t n = 0;
        scv_ckpt_state s;
        float *p = load_params(dir, &n, &s);
        CHECK_MSG(p != NULL && s.iteration > 0, "K=%d: no usable checkpoint", k);
        free(p);
    }
}


/* plan and profile on metrics of real (synthetic-data) runs */
static void t_plan_cli(void)
{
    char out[16384], m1[512], m2[512], svg[512];
    snprintf(m1, sizeof m1, "%s/p1.jsonl", tmp);
    snprintf(m2, sizeof m2, "%s/p2.jsonl", tmp);
    snprintf(svg, sizeof svg, "%s/plan.svg", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 40 --metrics %s --vm-type c5.xlarge", bin, m1), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 128 --iterations 40 --metrics %s --vm-type c5.xlarge", bin, m2), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s profile %s,%s", bin, m1, m2), 0);
    CHECK(strstr(out, "mlp:784-32-10 on c5.xlarge") != NULL);
    /* the K = 2 run's latency probe: one line at its start, read into the model's alpha_msg */
    CHECK_EQ_INT(run(out, sizeof out, "grep -c '^{\"type\":\"latency\",\"iter\":0,\"workers\":2,\"seconds\":' %s", m2), 0);
    CHECK(!strcmp(out, "1\n"));
    CHECK_EQ_INT(run(out, sizeof out, "sed -n 's/^{\"type\":\"latency\",.*\"seconds\":\\([^,}]*\\).*/\\1/p' %s", m2),
                 0);
    double probe = atof(out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --json", bin, m1, m2), 0);
    /* at K = 2 a step's flags take one message: alpha_msg is the probe's seconds (t_latency(K)
     * = ceil(log2 K) alpha_msg), however long the shared machine made it */
    const char *am = strstr(out, "\"alpha_msg\":");
    CHECK_MSG(probe > 0 && am && fabs(atof(am + 12) - probe) <= 1e-4 * probe, "probe %g s: %.300s", probe,
              am ? am : out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --base-batch 32 "
                     "--workers 1..8 --batch 32..512 --vm c5.xlarge,c5.2xlarge --svg %s", bin, m1, m2, svg), 0);
    /* the rule that chose (with measured timings, one configuration may dominate the rest) */
    CHECK_MSG(strstr(out, "chosen: ") && (strstr(out, "knee") || strstr(out, "the only front point")), "%s", out);
    CHECK(strstr(out, "(extrapolated)") == NULL); /* c5.2xlarge costs more for the same time: not on the front */
    CHECK_MSG(strstr(out, "Note: 1 VM type(s) extrapolated: other CPU type, same threads"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --base-batch 32 "
                     "--workers 1..8 --batch 32..512 --vm c5.xlarge,c5.2xlarge,g5.xlarge --all", bin, m1, m2), 0);
    CHECK(strstr(out, "(extrapolated)") != NULL); /* c5.2xlarge was not measured */
    CHECK_MSG(strstr(out, "left out: CPU measurements do not predict GPU types"), "%s", out);
    CHECK(strstr(out, "g5.xlarge ") == NULL);
    FILE *f = fopen(svg, "r");
    char head[8] = "";
    if (f) {
        CHECK(fread(head, 1, 4, f) == 4);
        fclose(f);
    }
    CHECK(!strncmp(head, "<svg", 4));
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --objective cost --json", bin, m1, m2), 0);
    CHECK(strstr(out, "{\"chosen\":{\"vm\":\"c5.xlarge\"") == out);
    CHECK(strstr(out, "\"why\":\"cheapest") != NULL || strstr(out, "\"why\":\"the only front point") != NULL);
    /* impossible deadline; bad values; unknown types */
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --deadline 0.001", bin, m1, m2), 1);
    CHECK_MSG(strstr(out, "deadline 0.001 s cannot be met") != NULL, "%s", out);
    /* a small budget in dollars people can read (was "budget $0.00 ... costs $0.00"); with
     * --json the error is a JSON object on stdout (was nothing), the exit status kept */
    CHECK_EQ_INT(run(out, sizeof out, "{ %s plan --profile %s,%s --target-epochs 5 --budget 0.000000001 --json 2>/dev/null; }",
                     bin, m1, m2), 1);
    CHECK_MSG(strstr(out, "{\"error\":\"budget $0.00000000100 cannot be met: the cheapest configuration costs $") == out &&
              strstr(out, "\"exit_status\":1}") && !strstr(out, "$0.00 "), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s plan --json --profile %s --target-epochs 5 --workers 4,4 2>/dev/null; }",
                     bin, m1), 2);
    CHECK_MSG(strstr(out, "{\"error\":\"--workers '4,4': the value 4 is repeated") == out &&
              strstr(out, "\"exit_status\":2}"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s --target-epochs 5 --batch 32..512,64", bin, m1), 2);
    CHECK_MSG(strstr(out, "--batch '32..512,64': the value 64 is repeated"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s --target-epochs 5 --workers 8..2", bin, m1), 2);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s --target-epochs 5 --objective fast", bin, m1), 2);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --target-epochs 5", bin), 2);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --vm m9.huge", bin, m1, m2), 2);
    CHECK(strstr(out, "--vm m9.huge: not a VM type") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --measured-on nope", bin, m1, m2), 1);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s --target-epochs 5", bin, m1), 1);
    CHECK_MSG(strstr(out, "K >= 2") != NULL, "%s", out); /* one K=1 profile has no noise estimate */
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile /no/file --target-epochs 5", bin), 1);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --catalog /no/cat.csv", bin, m1, m2), 1);
    CHECK(strstr(out, "/no/cat.csv") != NULL);
    /* thread scaling is measured, not assumed: the same configuration at 2 threads gives
     * Amdahl's parallel fraction, and the other CPU types are scaled with it */
    char m3[300];
    snprintf(m3, sizeof m3, "%s/p3.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 40 --threads 2 --metrics %s --vm-type c5.xlarge", bin, m3), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s,%s --target-epochs 5 --vm c5.xlarge,c5.2xlarge --all", bin, m1, m2, m3), 0);
    CHECK_MSG(strstr(out, "thread scaling measured: parallel fraction f = ") && strstr(out, "Amdahl"), "%s", out);
}

/* ---- review fixes: help CMD, profile files, --vm-type, --eval-every-epochs, plan --sort,
 * launcher and metrics errors ---- */

/* `scavenger help CMD` prints what `scavenger CMD --help` prints. */
static void t_help_cmd(void)
{
    static char a[16384], b[16384];
    const char *cmds[] = {"run", "train", "plan", "profile", "sweep", "cluster"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        CHECK_EQ_INT(run(a, sizeof a, "%s help %s", bin, cmds[i]), 0);
        CHECK_EQ_INT(run(b, sizeof b, "%s %s --help", bin, cmds[i]), 0);
        CHECK_MSG(!strcmp(a, b), "help %s differs from %s --help", cmds[i], cmds[i]);
        CHECK_MSG(strstr(a, "commands:") == NULL, "help %s printed the top-level help", cmds[i]);
    }
    CHECK_EQ_INT(run(a, sizeof a, "%s help plan", bin), 0);
    CHECK(strstr(a, "--sort") != NULL);
    CHECK_EQ_INT(run(a, sizeof a, "%s help frobnicate", bin), 2);
    CHECK_MSG(strstr(a, "unknown command 'frobnicate'") != NULL, "%s", a);
    CHECK_EQ_INT(run(a, sizeof a, "%s help", bin), 0);
    CHECK(strstr(a, "commands:") != NULL);
}

/* A row of the plan table: time in seconds, cost, K, B; 0 when the line is not a row. */
static int plan_row(const char *line, double *t, double *c, int *k, int *b)
{
    char vm[64], unit[16];
    double bb, ti, it;
    if (strlen(line) < 4 || (line[0] != ' ' && line[0] != '>')) return 0;
    if (sscanf(line + 3, "%63s %d %d %lf %lf %lf %lf %15s $%lf", vm, k, b, &bb, &ti, &it, t, unit, c) != 9)
        return 0;
    *t *= !strcmp(unit, "h") ? 3600 : !strcmp(unit, "min") ? 60 : !strcmp(unit, "ms") ? 1e-3 : 1;
    return 1;
}

/* Checks that the table rows of out are ordered by key (0 time, 1 cost, 2 workers, 3 batch);
 * returns the number of rows and a fingerprint of their order. */
static int check_sorted(const char *out, int key, unsigned long *print)
{
    char buf[16384];
    snprintf(buf, sizeof buf, "%s", out);
    double prev = -1;
    int n = 0;
    *print = 5381;
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        double t, c;
        int k, b;
        if (!plan_row(l, &t, &c, &k, &b)) continue;
        double v = key == 0 ? t : key == 1 ? c : key == 2 ? k : b;
        CHECK_MSG(v >= prev, "row %d (%s) out of order by key %d", n + 1, l, key);
        prev = v;
        *print = *print * 33 + (unsigned long)(k * 100003 + b);
        n++;
    }
    return n;
}

/* profile takes several files; plan sorts its table; the VM type is checked early and the
 * planner says where an unknown one came from. */
static void t_profile_plan_review(void)
{
    static char out[16384], out2[16384];
    char m1[512], m2[512], m3[512], cat[512], svg[512];
    snprintf(m1, sizeof m1, "%s/r1.jsonl", tmp);
    snprintf(m2, sizeof m2, "%s/r2.jsonl", tmp);
    snprintf(m3, sizeof m3, "%s/r3.jsonl", tmp);
    snprintf(cat, sizeof cat, "%s/cat.csv", tmp);
    snprintf(svg, sizeof svg, "%s/r.svg", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 30 --metrics %s --vm-type c5.xlarge", bin, m1), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 128 --iterations 30 --metrics %s --vm-type c5.xlarge", bin, m2), 0);
    /* several files as arguments, the same as a comma list */
    CHECK_EQ_INT(run(out, sizeof out, "%s profile %s %s", bin, m1, m2), 0);
    CHECK_MSG(strstr(out, "   1     32 ") && strstr(out, "   2    128 "), "%s", out);
    CHECK_EQ_INT(run(out2, sizeof out2, "%s profile %s,%s", bin, m1, m2), 0);
    CHECK(!strcmp(out, out2));
    CHECK_EQ_INT(run(out, sizeof out, "%s profile", bin), 2);
    CHECK_EQ_INT(run(out, sizeof out, "%s profile %s %s/none.jsonl", bin, m1, tmp), 1);
    CHECK(strstr(out, "none.jsonl") != NULL);
    /* plan --all: by time unless --sort says otherwise */
#define PLAN "%s plan --profile %s,%s --target-epochs 5 --workers 1..8 --batch 32..512 --vm c5.xlarge,c5.2xlarge --all --top 200"
    unsigned long by_time, by_cost, by_k, by_b;
    CHECK_EQ_INT(run(out, sizeof out, PLAN, bin, m1, m2), 0);
    CHECK(strstr(out, "by time") != NULL);
    CHECK_EQ_INT(check_sorted(out, 0, &by_time), 80);
    CHECK_EQ_INT(run(out, sizeof out, PLAN " --sort cost", bin, m1, m2), 0);
    CHECK_EQ_INT(check_sorted(out, 1, &by_cost), 80);
    CHECK_EQ_INT(run(out, sizeof out, PLAN " --sort workers", bin, m1, m2), 0);
    CHECK_EQ_INT(check_sorted(out, 2, &by_k), 80);
    CHECK_EQ_INT(run(out, sizeof out, PLAN " --sort batch --svg %s", bin, m1, m2, svg), 0);
    CHECK_EQ_INT(check_sorted(out, 3, &by_b), 80);
    CHECK(by_time != by_k && by_k != by_b); /* the orders differ: the checks above mean something */
    CHECK(file_has(svg, "class='xtick'") && file_has(svg, "class='klabel'") && file_has(svg, "class='front'"));
    CHECK_EQ_INT(run(out, sizeof out, PLAN " --sort speed", bin, m1, m2), 2);
    CHECK_MSG(strstr(out, "--sort 'speed'") != NULL, "%s", out);
    /* train --vm-type: checked against the catalog, with --catalog for another one */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 5 --vm-type m5.large", bin), 2);
    CHECK_MSG(strstr(out, "--vm-type 'm5.large'") && strstr(out, "vm-catalog.csv"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 5 --vm-type c5.xlarge --catalog %s/no.csv", bin, tmp), 1);
    CHECK_MSG(strstr(out, "no.csv") != NULL, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "(head -1 data/vm-catalog.csv; grep '^aws,c5.xlarge,' data/vm-catalog.csv | "
                     "sed 's/c5.xlarge/m5.large/') > %s", cat), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 30 --metrics %s --vm-type m5.large --catalog %s", bin, m3, cat), 0);
    /* plan names where an unknown measured type came from */
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s --target-epochs 5", bin, m3), 1);
    CHECK_MSG(strstr(out, "the profile's VM type 'm5.large'") && !strstr(out, "--measured-on m5.large"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s --target-epochs 5 --measured-on nope", bin, m3), 1);
    CHECK_MSG(strstr(out, "--measured-on nope: not a VM type") != NULL, "%s", out);
#undef PLAN
}

/* Usage errors say why; launcher and metrics failures are reported with what failed. */
static void t_train_errors_review(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --epochs 1 --eval-every-epochs 0", bin), 2);
    CHECK_MSG(strstr(out, "--eval-every-epochs '0': expected a positive number") != NULL, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --epochs 1 --eval-every-epochs -1", bin), 2);
    CHECK_MSG(strstr(out, "--eval-every-epochs '-1'") != NULL, "%s", out);
    /* a full disk: the metrics file is named */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 5 --metrics /dev/full", bin), 1);
    CHECK_MSG(strstr(out, "/dev/full: cannot write metrics") != NULL, "%s", out);
    /* no mpirun on PATH: one clear message, exit 1 */
    CHECK_EQ_INT(run(out, sizeof out, "PATH=/nonexistent %s train " JOB " --workers 2 --batch 32 --iterations 5", bin), 1);
    CHECK_MSG(strstr(out, "scavenger train: cannot start mpirun") != NULL, "%s", out);
    const char *first = strstr(out, "cannot start mpirun");
    CHECK(first && !strstr(first + 1, "cannot start mpirun"));
    /* more workers than the cluster has VMs is a usage error (when the cluster exists); an
     * unknown cluster is named */
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 5 --cluster nosuch", bin), 1);
    CHECK_MSG(strstr(out, "no cluster 'nosuch'") != NULL, "%s", out);
}

/* sweep's figure keeps the runs that did not reach the target, as open markers. */
static void t_sweep_figure(void)
{
    char out[8192], svg[600];
    /* one epoch: B=32 reaches 50% on this job, B=512 (4 iterations) does not */
    CHECK_EQ_INT(run(out, sizeof out, "%s sweep --workers 1 --batch 32,512 --target-accuracy 0.5 --out %s/sw "
                     "--vm-type c5.xlarge --model mlp --hidden 32 --dataset synthetic:2000 --seed 3 --epochs 1",
                     bin, tmp), 0);
    CHECK_MSG(strstr(out, "| 1 | 32 | yes |") && strstr(out, "| 1 | 512 | no |"), "%s", out);
    snprintf(svg, sizeof svg, "%s/sw/sweep.svg", tmp);
    CHECK(file_has(svg, "<circle class='hollow'"));
    CHECK(file_has(svg, ">did not reach 50.0%<"));
    CHECK(file_has(svg, ">B=512<") && file_has(svg, ">B=32<"));
    CHECK(file_has(svg, "class='klabel'") && file_has(svg, "class='ytick'"));
    CHECK_EQ_INT(run(out, sizeof out, "%s sweep --workers 1 --batch 32 --target-accuracy 0.5 --out /proc/no/dir "
                     "--vm-type c5.xlarge --epochs 1", bin), 1);
    CHECK_MSG(strstr(out, "/proc/no/dir") != NULL, "%s", out);
    /* a repeated K or B (once trained again and again, then overflowed the figure's buffer
     * after the whole sweep): refused before anything trains, naming the option and value */
    CHECK_EQ_INT(run(out, sizeof out, "%s sweep --workers 4,4,4 --batch 32 --target-accuracy 0.5 --out %s/swd "
                     "--vm-type c5.xlarge --epochs 1", bin, tmp), 2);
    CHECK_MSG(strstr(out, "--workers '4,4,4': the value 4 is repeated") && !strstr(out, "K=4"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s sweep --workers 1 --batch 8,8 --target-accuracy 0.5 --out %s/swd "
                     "--vm-type c5.xlarge --epochs 1", bin, tmp), 2);
    CHECK_MSG(strstr(out, "--batch '8,8': the value 8 is repeated"), "%s", out);
}

/* Reliability: absurd --batch-split shares (1e400 hung the job with infinite weights),
 * a second job on a locked checkpoint directory, a checkpoint whose epoch is 2^64-1 with a
 * valid CRC (crashed on resume), and --hidden sizes whose parameter count is absurd. */
static void t_reliability(void)
{
    char out[8192], d[512], lock[600];
    static const char *const splits[] = {"1,1e400", "1,inf", "1,nan", "1,1e-300", "1e300,1"};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        CHECK_EQ_INT(run(out, sizeof out, "timeout 60 %s train " JOB " --workers 2 --batch 32 --iterations 2 --batch-split %s", bin, splits[i]), 2);
        CHECK_MSG(strstr(out, "--batch-split") != NULL, "%s: %s", splits[i], out);
    }
    /* the checkpoint directory's lock: held elsewhere, the job is refused */
    snprintf(d, sizeof d, "%s/locked", tmp);
    mkdir(d, 0755);
    snprintf(lock, sizeof lock, "%s/%s", d, SCV_CKPT_LOCK_FILE);
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 3 --checkpoint %s", bin, d), 1);
    CHECK_MSG(strstr(out, "in use by another training job") && strstr(out, d), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --workers 2 --batch 32 --iterations 3 --checkpoint %s", bin, d), 1);
    CHECK_MSG(strstr(out, "in use by another training job"), "%s", out);
    if (fd >= 0) close(fd);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 3 --checkpoint %s", bin, d), 0);
    /* ... and a job holds it while it runs: a second one started meanwhile is refused (the first
     * is stopped below; its iterations only bound it: 100000 took 4.8 s, too short on a loaded
     * machine for the second to start inside it) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s train " JOB " --batch 32 --iterations 100000000 --checkpoint %s >/dev/null 2>&1", bin, d);
    pid_t pid = spawn_group(cmd);
    int held = 0;
    for (int i = 0; i < 600 && !held; i++) { /* until the first job holds the lock */
        int f2 = open(lock, O_RDWR);
        if (f2 >= 0 && flock(f2, LOCK_EX | LOCK_NB) != 0) held = 1;
        if (f2 >= 0) close(f2);
        if (!held) nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    CHECK(held);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 3 --checkpoint %s --resume", bin, d), 1);
    CHECK_MSG(strstr(out, "in use by another training job"), "%s", out);
    kill(-pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    for (int i = 0; i < 600 && held; i++) { /* the shell may go first: until the job let go */
        int f2 = open(lock, O_RDWR);
        if (f2 >= 0 && flock(f2, LOCK_EX | LOCK_NB) == 0) held = 0;
        if (f2 >= 0) close(f2);
        if (held) nanosleep(&(struct timespec){0, 50000000}, NULL);
    }
    CHECK(!held);
    /* epoch 2^64-1 with a valid CRC: refused naming the field */
    size_t n = 0;
    scv_ckpt_state cs;
    float *p = load_params(d, &n, &cs);
    CHECK(p != NULL);
    if (p) {
        cs.epoch = UINT64_MAX;
        cs.samples_seen = cs.epoch * cs.n_train + cs.pos;
        scv_err err = {0};
        CHECK(scv_ckpt_save(d, &cs, p, p, n, &err) == SCV_OK);
        free(p);
        CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --batch 32 --iterations 9 --checkpoint %s --resume", bin, d), 1);
        CHECK_MSG(strstr(out, "epoch") && strstr(out, "out of range"), "%s", out);
    }
    /* --hidden sizes whose parameter count passes the cap */
    CHECK_EQ_INT(run(out, sizeof out, "%s train --model mlp --hidden 65536,65536,65536,65536 --dataset synthetic:100 --batch 10 --iterations 1 --progress never", bin), 1);
    CHECK_MSG(strstr(out, "more than 268435456 parameters"), "%s", out);
    /* issue 24: a run whose job does not start says what the trainer said; a divergence of
     * the built-in trainer (its non-finite loss line) is named, with no retry (both drivers) */
    snprintf(d, sizeof d, "%s/rel.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s --model mlp --hidden 32 --dataset %s/nosuch-data --workers 1,2 "
                                      "--batch 32,64 --target-accuracy 0.9", bin, d, tmp), 1);
    CHECK_MSG(strstr(out, "the job does not start (scavenger train exited 1: scavenger train: --dataset "), "%s", out);
    static const char *const drivers[] = {"elastic", "relaunch"};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s --driver %s --model mlp --hidden 32 --dataset synthetic:1000 "
                                          "--lr 1e308 --workers 1,2 --batch 1,2 --target-accuracy 0.9",
                         bin, d, drivers[i]), 1);
        CHECK_MSG(strstr(out, "the trainer diverged (loss ") && strstr(out, "at iteration 2, ") &&
                      strstr(out, "seg-000-warmup-k2-b2.jsonl:4)") && !strstr(out, "retry"),
                  "%s: %s", drivers[i], out);
    }
}

/* `scavenger vms` (issue 24 item 23): the catalog's types with prices as a table and as
 * JSON, filtered by provider, vCPUs and GPUs; a provider of no type is named with the
 * nearest one. */
static void t_vms(void)
{
    static char out[1 << 16];
    CHECK_EQ_INT(run(out, sizeof out, "%s vms", bin), 0);
    CHECK_MSG(strstr(out, "TYPE") && strstr(out, "ONDEMAND_$/H") && strstr(out, "SPOT_$/H"), "%.300s", out);
    CHECK_MSG(strstr(out, "\nc5.xlarge ") && strstr(out, " aws ") && strstr(out, " us-east-1 ") &&
              strstr(out, " 0.1700 ") && strstr(out, "0.0639-0.0827"), "%.600s", out);
    CHECK_MSG(strstr(out, " VM types of "), "%.300s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s vms --json --provider aws --cpus 64", bin), 0);
    cJSON *a = cJSON_Parse(out);
    CHECK_MSG(cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0, "%.300s", out);
    cJSON *it;
    cJSON_ArrayForEach(it, a) {
        CHECK(!strcmp(cJSON_GetObjectItem(it, "provider")->valuestring, "aws"));
        CHECK(cJSON_GetObjectItem(it, "vcpus")->valueint >= 64);
        CHECK(cJSON_IsString(cJSON_GetObjectItem(it, "type")) && cJSON_IsString(cJSON_GetObjectItem(it, "region")));
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(it, "memory_gib")) &&
              cJSON_IsNumber(cJSON_GetObjectItem(it, "ondemand_usd_per_hr")) &&
              cJSON_GetObjectItem(it, "spot_usd_per_hr_min") && cJSON_GetObjectItem(it, "gpus"));
    }
    cJSON_Delete(a);
    CHECK_EQ_INT(run(out, sizeof out, "%s vms --json --gpus", bin), 0);
    a = cJSON_Parse(out);
    CHECK(cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0);
    cJSON_ArrayForEach(it, a) CHECK(cJSON_GetObjectItem(it, "gpus")->valueint >= 1 &&
                                    cJSON_IsString(cJSON_GetObjectItem(it, "gpu_model")));
    cJSON_Delete(a);
    CHECK_EQ_INT(run(out, sizeof out, "%s vms --provider asw", bin), 2);
    CHECK_MSG(strstr(out, "--provider 'asw': no VM type of that provider") && strstr(out, "did you mean 'aws'?"), "%s",
              out);
    CHECK_EQ_INT(run(out, sizeof out, "%s vms --cpus many", bin), 2);
    CHECK_MSG(strstr(out, "--cpus 'many'"), "%s", out);
}

/* "did you mean" (issue 24 item 23): a mistyped command, option, model or VM type is
 * answered with the nearest name; a word near nothing gets no guess. */
static void t_did_you_mean(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s plna", bin), 2);
    CHECK_MSG(strstr(out, "unknown command 'plna'; did you mean 'plan'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s frobnicate", bin), 2);
    CHECK_MSG(strstr(out, "unknown command 'frobnicate'") && !strstr(out, "did you mean"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --workres 2", bin), 2);
    CHECK_MSG(strstr(out, "unknown option '--workres'; did you mean '--workers'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --workres 2", bin), 2);
    CHECK_MSG(strstr(out, "did you mean '--workers'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --workres 2", bin), 2);
    CHECK_MSG(strstr(out, "did you mean '--workers'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s vms --jsno", bin), 2);
    CHECK_MSG(strstr(out, "did you mean '--json'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s cluster status --jsno", bin), 2);
    CHECK_MSG(strstr(out, "unknown option '--jsno'; did you mean '--json'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s help swep", bin), 2);
    CHECK_MSG(strstr(out, "unknown command 'swep'; did you mean 'sweep'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --model lenett --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "unknown model") && strstr(out, "did you mean 'lenet'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s/dym.db --model lenett --target-accuracy 0.9", bin, tmp), 2);
    CHECK_MSG(strstr(out, "did you mean 'lenet'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train --vm-type c5.xlarg --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "'c5.xlarg': not a VM type") && strstr(out, "did you mean 'c5.xlarge'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s/dym.db --vm-type c5.xlarg --target-accuracy 0.9", bin, tmp), 2);
    CHECK_MSG(strstr(out, "did you mean 'c5.xlarge'?"), "%s", out);
}

/* `cluster replay`: the drawn trace is the same for a seed (no cluster needed with --dry-run
 * and --vms), a bad trace line is named FILE:LINE, and preempt's and replay's usage errors. */
static void t_cluster_replay_cli(void)
{
    static char a[1 << 14], b[1 << 14];
    const char *draw = "%s cluster replay nosuch --random 9 --mean-life 100 --horizon 1000 --vms 2,3 --dry-run";
    CHECK_EQ_INT(run(a, sizeof a, draw, bin), 0);
    CHECK_EQ_INT(run(b, sizeof b, draw, bin), 0);
    CHECK_MSG(!strcmp(a, b) && strstr(a, " 2 notice:30\n") && strstr(a, "exponential, mean 100 s"), "%.400s", a);
    char trace[300];
    snprintf(trace, sizeof trace, "%s/bad.trace", tmp);
    FILE *f = fopen(trace, "w");
    if (f) {
        fputs("# ok\n0 2 kill\n1 2 bogus\n", f);
        fclose(f);
    }
    CHECK_EQ_INT(run(a, sizeof a, "%s cluster replay nosuch --trace %s --dry-run", bin, trace), 1);
    snprintf(b, sizeof b, "%s:3: event 'bogus'", trace);
    CHECK_MSG(strstr(a, b), "%s", a);
    CHECK_EQ_INT(run(a, sizeof a, "%s cluster preempt nosuch 2", bin), 1);
    CHECK_MSG(strstr(a, "no cluster 'nosuch'"), "%s", a);
    CHECK_EQ_INT(run(a, sizeof a, "%s cluster up --name x --vm c5.xlarge:1 --notice 3", bin), 2);
    CHECK_MSG(strstr(a, "--notice is not an option of 'up'"), "%s", a);
    CHECK_EQ_INT(run(a, sizeof a, "%s cluster replay nosuch --trace %s --mean-life 3", bin, trace), 2);
    CHECK_MSG(strstr(a, "go with --random"), "%s", a);
}

static const scv_test tests[] = {
    {"vms", t_vms},
    {"did_you_mean", t_did_you_mean},
    {"reliability", t_reliability},
    {"help_and_usage", t_help_and_usage},
    {"json_summary", t_json_summary},
    {"k2_equals_k1", t_k2_equals_k1},
    {"adascale", t_adascale},
    {"comm_efficiency", t_comm_efficiency},
    {"resume_same_k", t_resume_same_k},
    {"resume_other_k", t_resume_other_k},
    {"bad_input", t_bad_input},
    {"interrupt", t_interrupt},
    {"plan_cli", t_plan_cli},
    {"help_cmd", t_help_cmd},
    {"profile_plan_review", t_profile_plan_review},
    {"train_errors_review", t_train_errors_review},
    {"sweep_figure", t_sweep_figure},
    {"cluster_replay_cli", t_cluster_replay_cli},
};

int main(int argc, char **argv)
{
    return scv_cli_main(tests, (int)(sizeof tests / sizeof tests[0]), "cli", argc, argv);
}
