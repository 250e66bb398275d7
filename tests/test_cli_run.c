/*
 * test_cli_run.c - end-to-end tests of `scavenger run` and `scavenger runs` through the
 * command line (test_cli.c has train, plan and the others; a binary of its own so that the
 * two run side by side): the loop on a small job with each search policy, a job file, Ctrl-C
 * and --resume, a worker killed, usage errors found before a run is stored; the exec driver
 * on tests/fake_trainer.py (the contract's errors, the report directory, a budget, the first
 * hour's forecast, torchrun's variables, the probe, the watchdog, a stop during the probe and
 * the set-up, the trainer's leftover processes); communication options; --vm-type lists;
 * the runs' ETA. The binary is $SCV_BIN (default build/scavenger).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "scv_test_proc.h"
#include "scv_test_cli.h"

#include <cjson/cJSON.h>
#include "drivers/child.h"
#include "store/store.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The Scavenger loop end to end on a small job and a 2 x 2 space, with each search policy,
 * a job file, usage errors, and Ctrl-C followed by --resume. */
static void t_run_loop(void)
{
    char out[16384], db[512], path[700];
    snprintf(db, sizeof db, "%s/runs.db", tmp);
    const char *pol[] = {"partial", "full", "none"};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " --search %s", bin, db, pol[i]), 0);
        CHECK_MSG(strstr(out, "target reached") != NULL, "%s: %s", pol[i], out);
        snprintf(path, sizeof path, "%s.runs/%d/report.json", db, i + 1);
        CHECK(file_has(path, "\"reached\":true"));
        CHECK(file_has(path, "\"steps\":[{\"phase\":"));
        CHECK(file_has(path, "\"switch_idle_median_s\":"));
        if (i < 2) CHECK_MSG(file_has(path, "\"phase\":\"warmup\""), "%s: no warm-up", pol[i]);
        else CHECK(!file_has(path, "\"phase\":\"search\"") && !file_has(path, "\"phase\":\"warmup\""));
        snprintf(path, sizeof path, "%s.runs/%d/report.md", db, i + 1);
        CHECK(file_has(path, "# Scavenger run") && file_has(path, "| # | phase | K | B |"));
    }
    /* --json: the report's JSON is the last line of stdout */
    CHECK_EQ_INT(run(out, sizeof out, "{ %s run --db %s " RUNJOB " --search none --json 2>/dev/null; }", bin, db), 0);
    {
        char *last = out + strlen(out);
        while (last > out && last[-1] == '\n') *--last = 0;
        while (last > out && last[-1] != '\n') last--;
        cJSON *o = cJSON_Parse(last);
        CHECK_MSG(o != NULL, "not JSON: %s", last);
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "reached")));
        CHECK(cJSON_IsNumber(cJSON_GetObjectItem(o, "actual_time_s")));
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "steps")) >= 1);
        cJSON_Delete(o);
    }
    /* the stored runs: a list, one in detail, JSON */
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0);
    CHECK_MSG(strstr(out, "model=mlp;hidden=32;dataset=synthetic:4000") && strstr(out, "done"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs --db %s --json 2>/dev/null; }", bin, db), 0);
    {
        cJSON *o = cJSON_Parse(out);
        CHECK_MSG(cJSON_IsArray(o) && cJSON_GetArraySize(o) == 4, "%s", out);
        /* the names of GET /api/runs (one writer), created to the microsecond */
        cJSON *r0 = cJSON_GetArrayItem(o, 0);
        CHECK_MSG(cJSON_IsString(cJSON_GetObjectItem(r0, "job_key")) &&
                      cJSON_IsNumber(cJSON_GetObjectItem(r0, "n_steps")) && cJSON_GetObjectItem(r0, "accuracy") &&
                      !cJSON_GetObjectItem(r0, "job"),
                  "%s", out);
        /* ... and the list's target and VM type (scv_run_row_json: the service's rows too) */
        CHECK_MSG(cJSON_IsString(cJSON_GetObjectItem(r0, "target_metric")) &&
                      cJSON_IsNumber(cJSON_GetObjectItem(r0, "target_accuracy")) &&
                      cJSON_IsString(cJSON_GetObjectItem(r0, "vm")),
                  "%s", out);
        const char *cr = strstr(out, "\"created\":");
        CHECK_MSG(cr && strspn(cr + 10, "0123456789") == 10 && cr[20] == '.' && strspn(cr + 21, "0123456789") == 6,
                  "%s", out);
        cJSON_Delete(o);
    }
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show 1 --db %s", bin, db), 0);
    CHECK_MSG(strstr(out, "warmup") && strstr(out, "chose K="), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show 99 --db %s", bin, db), 1);
    CHECK(strstr(out, "no run 99") != NULL);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show x --db %s", bin, db), 2);
    /* a report that cannot be written is an error that names it (exit 1) */
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " --search none --report /proc/scv-no-such", bin, db),
                 1);
    CHECK_MSG(strstr(out, "/proc/scv-no-such") != NULL, "%s", out);
    /* a job file holds the same settings */
    snprintf(path, sizeof path, "%s/job.json", tmp);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"model\": \"mlp\", \"hidden\": \"32\", \"dataset\": \"synthetic:4000\", \"lr\": 0.003,"
               " \"target-accuracy\": 0.96, \"workers\": \"1,2\", \"batch\": \"32,128\", \"search\": \"partial\"}\n");
    fclose(f);
    CHECK_EQ_INT(run(out, sizeof out, "%s run %s --db %s --report %s/rep", bin, path, db, tmp), 0);
    snprintf(path, sizeof path, "%s/rep/report.json", tmp);
    CHECK(file_has(path, "\"reached\":true"));
    /* usage errors */
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s --model mlp", bin, db), 2);
    CHECK_MSG(strstr(out, "target-accuracy") && strstr(out, "target-loss"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " --search sometimes", bin, db), 2);
    snprintf(path, sizeof path, "%s/bad.json", tmp);
    f = fopen(path, "w");
    fprintf(f, "{\"model\": \"mlp\", \"colour\": \"blue\"}\n");
    fclose(f);
    CHECK_EQ_INT(run(out, sizeof out, "%s run %s --db %s", bin, path, db), 2);
    CHECK(strstr(out, "unknown field 'colour'") != NULL);
    /* job files: trailing garbage, a key twice, 1e400, an overlong value are refused */
    const char *bad_jobs[][2] = {{"{\"model\": \"mlp\"} x", "something follows"},
                                 {"{\"model\": \"mlp\", \"model\": \"lenet\"}", "given twice"},
                                 {"{\"lr\": 1e400}", "finite number"},
                                 {"{\"dataset\": \"%0600d\"}", "longer than"}};
    for (int j = 0; j < 4; j++) {
        f = fopen(path, "w");
        fprintf(f, bad_jobs[j][0], 7);
        fclose(f);
        CHECK_EQ_INT(run(out, sizeof out, "%s run %s --db %s", bin, path, db), 2);
        CHECK_MSG(strstr(out, bad_jobs[j][1]) != NULL, "%s: %s", bad_jobs[j][0], out);
    }
    /* Ctrl-C during the warm-up, then --resume finishes the run from its checkpoint */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s run --db %s/int.db --model lenet --dataset synthetic:20000 --lr 0.01 --target-accuracy 0.95 "
             "--workers 1,2 --batch 32,128 >%s/int.log 2>&1",
             bin, tmp, tmp);
    pid_t pid = spawn_group(cmd);
    snprintf(path, sizeof path, "%s/int.db.runs/1/seg-000-warmup-k2-b32.jsonl", tmp);
    struct timespec pause = {0, 50000000};
    for (int i = 0; i < 300 && !file_has(path, "\"iter\":20,"); i++) nanosleep(&pause, NULL);
    kill(-pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 130, "interrupted run: status %d", st);
    snprintf(path, sizeof path, "%s/int.log", tmp);
    CHECK(file_has(path, "scavenger run --resume 1"));
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s/int.db --resume 1", bin, tmp), 0);
    CHECK_MSG(strstr(out, "target reached") != NULL, "%s", out);
    /* the interrupted warm-up is recovered from its metrics: the run's steps start with it */
    CHECK_MSG(strstr(out, "recovered the warmup segment") != NULL, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs show 1 --db %s/int.db --json 2>/dev/null; }", bin, tmp), 0);
    CHECK_MSG(strstr(out, "\"steps\":[{\"phase\":\"warmup\"") != NULL, "%s", out);
    snprintf(path, sizeof path, "%s/int.db.runs/1/ckpt", tmp);
    size_t n;
    scv_ckpt_state cs;
    float *p = load_params(path, &n, &cs);
    CHECK(p != NULL && cs.iteration > 20);
    free(p);
}

/* A rank killed during the training phase: the run notices, resumes from the last
 * checkpoint and carries on to the end (--max-epochs 4: the training lasts about 2 s here,
 * the kill comes within 0.5 s of the choice; 8 only made the run twice as long). */
static void t_run_worker_dies(void)
{
    char cmd[2048], log[600];
    snprintf(log, sizeof log, "%s/wd.log", tmp);
    snprintf(cmd, sizeof cmd,
             "exec %s run --db %s/wd.db --model lenet --dataset synthetic:20000 --lr 0.01 "
             "--target-accuracy 0.9999 --max-epochs 4 --workers 2 --batch 64 >%s 2>&1",
             bin, tmp, log);
    pid_t pid = spawn_group(cmd);
    struct timespec pause = {0, 100000000};
    for (int i = 0; i < 300 && !file_has(log, "chosen:"); i++) nanosleep(&pause, NULL);
    nanosleep(&pause, NULL);
    /* find rank 1 of the training phase: of this run only (its children's command lines
     * name its state directory), never another job's on the same machine */
    char pg[800];
    snprintf(pg, sizeof pg, "pgrep -f 'scavenger train .*%s/wd[.]db[.]runs/'", tmp);
    int killed = 0;
    for (int tries = 0; tries < 50 && !killed; tries++) {
        FILE *ps = popen(pg, "r");
        char line[64];
        while (ps && fgets(line, sizeof line, ps) && !killed) {
            char env[128], buf[65536];
            snprintf(env, sizeof env, "/proc/%d/environ", atoi(line));
            FILE *e = fopen(env, "r");
            size_t n = e ? fread(buf, 1, sizeof buf - 1, e) : 0;
            if (e) fclose(e);
            for (size_t j = 0; j + 22 < n && !killed; j++)
                if (!memcmp(buf + j, "OMPI_COMM_WORLD_RANK=1", 22)) killed = kill(atoi(line), SIGKILL) == 0;
        }
        if (ps) pclose(ps);
        if (!killed) nanosleep(&pause, NULL);
    }
    CHECK(killed);
    int st = 0;
    waitpid(pid, &st, 0);
    /* the target is out of reach on purpose: the run ends at --max-epochs with exit 1 */
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_MSG(file_has(log, "a worker died") && file_has(log, "resuming from the last checkpoint"), "no retry");
    CHECK(file_has(log, "target NOT reached"));
}

/* --db in a directory that does not exist: run, runs and serve name the path and the
 * directory (not SQLite's "unable to open database file", not --data-dir, never passed) */
static void t_db_missing_dir(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s/nodir/r.db " RUNJOB, bin, tmp), 1);
    CHECK_MSG(strstr(out, "nodir/r.db: cannot create the database: its directory") && strstr(out, "nodir: No such"),
              "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s/nodir/r.db", bin, tmp), 1);
    CHECK_MSG(strstr(out, "its directory") && !strstr(out, "unable to open"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s serve --listen 127.0.0.1:0 --db %s/nodir/r.db", bin, tmp), 2);
    CHECK_MSG(strstr(out, "--db ") && strstr(out, "nodir/r.db: its directory") && !strstr(out, "--data-dir"), "%s",
              out);
}

/* A bad --start, --target-batch or --target-epochs is a usage error found before the run is
 * stored (it was found after, and left a run "running" for ever); --resume merges more
 * settings than a run keeps without writing past its table, and more than that on the
 * command line are refused. */
static void t_run_validated_early(void)
{
    char out[16384], db[512], many[2048];
    snprintf(db, sizeof db, "%s/early.db", tmp);
    static const char *const bad[][2] = {
        {"--start abc", "--start 'abc'"},
        {"--start 2,1", "--start '2,1'"},
        {"--target-batch abc", "--target-batch 'abc'"},
        {"--target-epochs 5 --target-batch 0", "--target-batch '0'"},
        {"--target-batch 64", "target-batch needs target-epochs"},
        {"--target-epochs abc", "--target-epochs 'abc'"},
        {"--compress selsync:1", "'selsync:1': the share of local steps must be in [0, 1)"},
        {"--compress zip", "--compress 'zip'"},
        {"--compress topk:10 --compress-iterations 0", "--compress-iterations '0'"},
        {"--compress topk:10 --exec /bin/true", "--compress: not with --exec"},
        {"--model resnet50", "--model 'resnet50': unknown model (expected one of"}, /* once a stored failed run */
        {"--model mlp --hidden 0", "--hidden 0"},
        /* where it runs: the check the service's submit uses too (job/jobsetup.c) */
        {"--cluster nosuch", "--cluster: no cluster 'nosuch'"},
        {"--vm-type c5.xlarg", "not a VM type of the catalog (`scavenger vms` lists them) (did you mean 'c5.xlarge'?)"},
        {"--workers 1", "K = 1 only"}, /* trained its warm-up, then failed to plan */
        {"--workers 4,4", "--workers '4,4': the value 4 is repeated"},
        {"--batch 32..128:32,64", "the value 64 is repeated"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " %s", bin, db, bad[i][0]), 2);
        CHECK_MSG(strstr(out, bad[i][1]) != NULL, "%s: %s", bad[i][0], out);
    }
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs --db %s --json 2>/dev/null; }", bin, db), 0);
    CHECK_MSG(strstr(out, "\"id\"") == NULL, "a refused run was stored: %s", out);
    /* a run that fails at once (its dataset is missing: found by the trainer), resumed with
     * 90 more settings than it stored (the table holds 96), then with 100 on the command line */
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s run --db %s --model mlp --hidden 32 --dataset /nonexistent/scv-data "
                     "--target-accuracy 0.99 --max-epochs 0.05 --workers 2 --batch 32 --search none",
                     bin, db),
                 1);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0); /* no accuracy: "-", not "nan" */
    CHECK_MSG(strstr(out, "failed") && !strstr(out, "nan"), "%s", out);
    /* and why, stored with it (issue 38, item 10: the run kept no reason) */
    CHECK_MSG(strstr(out, "reason: the job does not start") && strstr(out, "/nonexistent/scv-data: not a directory"),
              "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs show 1 --json --db %s 2>/dev/null; }", bin, db), 0);
    CHECK_MSG(strstr(out, "\"reason\":\"the job does not start"), "%s", out);
    size_t len = 0;
    for (int i = 0; i < 90; i++) len += (size_t)snprintf(many + len, sizeof many - len, " --lr 0.003");
    CHECK_EQ_INT(run(out, sizeof out, "%s run --resume 1 --db %s%s", bin, db, many), 1);
    CHECK_MSG(strstr(out, "resuming") != NULL, "%s", out);
    for (int i = 0; i < 10; i++) len += (size_t)snprintf(many + len, sizeof many - len, " --lr 0.003");
    CHECK_EQ_INT(run(out, sizeof out, "%s run --resume 1 --db %s%s", bin, db, many), 2);
    CHECK_MSG(strstr(out, "too many settings") != NULL, "%s", out);
}

/* The exec driver on a trainer that follows docs/TRAINER-CONTRACT.md (tests/fake_trainer.py:
 * no model, real sleeps): the whole loop runs on it, the stopping rules the driver
 * evaluates stop it (SIGUSR1 through mpirun), the search profiles every configuration, and
 * each way of breaking the contract gives its own error and no retry where a retry cannot
 * help; the built-in trainer's options are refused with --exec; --hosts reaches mpirun. */
static void t_exec_driver(void)
{
    char out[32768], db[512], path[800];
#define FAKE "--exec '/usr/bin/python3 tests/fake_trainer.py' --workers 1,2 --batch 64,128 --target-accuracy 0.9"
    snprintf(db, sizeof db, "%s/exec.db", tmp);
    /* 0.94 (the fake's accuracy reaches it at 7.8 epochs), not FAKE's 0.9 (4.6): the warm-up and
     * the four search segments take 4-5 epochs, and up to 7.2 when the rules wait out a loaded
     * machine's noisy times (400 warm-up iterations at B=64, 60 per configuration: at 0.93, 6.4
     * epochs, a loaded run reached it in the search), and the target must still be ahead for a
     * training segment */
    CHECK_EQ_INT(
        run(out, sizeof out, "%s run --db %s " FAKE " --search full --search-budget 0 --target-accuracy 0.94", bin, db),
        0);
    CHECK_MSG(strstr(out, "target reached") && strstr(out, "exec=/usr/bin/python3 tests/fake_trainer.py"), "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/report.json", db);
    CHECK(file_has(path, "\"reached\":true"));
    /* the warm-up stopped by the noise rule, the four configurations profiled (the profiling
     * rule), training at the choice */
    CHECK_MSG(strstr(out, "warmup  K=2 B=64") && strstr(out, "search  K=1 B=64") && strstr(out, "search  K=1 B=128") &&
                  strstr(out, "search  K=2 B=128") && strstr(out, "train "),
              "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/ckpt/scavenger-state.json", db);
    CHECK(file_has(path, "\"iteration\""));
    snprintf(path, sizeof path, "%s.runs/1/seg-000-warmup-k2-b64.jsonl", db);
    CHECK(file_has(path, "\"grad_sqnorm_global\""));
    /* the built-in trainer follows the same contract: `scavenger train` under the exec driver */
    snprintf(db, sizeof db, "%s/exec-builtin.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s run --db %s --exec '%s train --model mlp --hidden 32 --dataset synthetic:4000 "
                     "--lr 0.003' --workers 1,2 --batch 32,128 --target-accuracy 0.96",
                     bin, db, bin),
                 0);
    CHECK_MSG(strstr(out, "target reached"), "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/ckpt/scavenger-state.json", db);
    CHECK(file_has(path, "\"samples_seen\""));
    snprintf(path, sizeof path, "%s.runs/1/trainer.log", db);
    CHECK_EQ_INT(run(out, sizeof out, "cat %s", path), 0);
    CHECK_MSG(strstr(out, "mlp: 1 iterations") && strstr(out, "on 2 workers"), "%s", out); /* the trainer's own output:
                                                                  the probe, then segments */
    /* breaking the contract */
    const char *bad[][3] = {
        {"refuse", "does not start", "exited 2"},
        {"badfield", "field 't_iter' is not a number", "seg-000-warmup-k2-b64.jsonl:4"},
        {"nofield", "lacks field 't_comm'", "seg-000-warmup-k2-b64.jsonl:4"},
        {"backwards", "field 'iter' = 1 does not follow line 3's 2", "seg-000-warmup-k2-b64.jsonl:4"},
        {"nan", "the trainer diverged (loss NaN at iteration 3, ", "seg-000-warmup-k2-b64.jsonl:4)"},
        {"percent", "field 'test_accuracy' = ", "is out of range (0..1): a fraction, not a percentage"},
        {"nostate", "did not checkpoint when it stopped", "rules 4 and 5"},
        {"crash", "failed (mpirun exited 1)", "retries are spent"},
    };
    const int n_bad = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < n_bad; i++) {
        snprintf(db, sizeof db, "%s/exec-%s.db", tmp, bad[i][0]);
        CHECK_EQ_INT(run(out, sizeof out, "FAKE_MODE=%s %s run --db %s " FAKE, bad[i][0], bin, db), 1);
        CHECK_MSG(strstr(out, bad[i][1]) && strstr(out, bad[i][2]), "%s: %s", bad[i][0], out);
        if (!strcmp(bad[i][0], "refuse")) /* the trainer's own words, from its log */
            CHECK_MSG(strstr(out, "one iteration: \"fake_trainer: refusing the configuration\""), "%s", out);
        if (i < n_bad - 1) CHECK_MSG(!strstr(out, "retry"), "%s was retried: %s", bad[i][0], out);
    }
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " FAKE " --model lenet", bin, db), 2);
    CHECK_MSG(strstr(out, "--model is an option of the built-in trainer"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " FAKE " --driver elastic", bin, db), 2);
    /* --hosts: a hostfile of this machine; a missing one is named */
    snprintf(path, sizeof path, "%s/hosts", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "printf 'localhost slots=2\\n' > %s", path), 0);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s train --hosts %s --workers 2 --model logreg --dataset synthetic:1000 "
                     "--batch 64 --iterations 5 --progress never",
                     bin, path),
                 0);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s train --hosts %s/nosuch --workers 2 --model logreg --dataset synthetic:1000 "
                     "--batch 64 --iterations 5",
                     bin, tmp),
                 1);
    CHECK_MSG(strstr(out, "nosuch: cannot read the hostfile"), "%s", out);
#undef FAKE
}

/* The metrics lines of a trainer that breaks the contract, refused as a class by the reader
 * (issue 38 item 11): a trainer that ignores SCV_BATCH fails the start-up probe at once
 * naming the line and the field (not "no measurement ... measured again" and a performance
 * model of invalid times later), and so do an iteration that jumps, a key given twice, a
 * NUL byte in a line and a trainer that ignores SCV_RESUME; none is retried. */
static void t_exec_lines(void)
{
    char out[32768], db[512];
    const char *bad[][3] = {
        {"nobatch", "job.jsonl:2: field 'batch' = 1 is not the segment's B = 32 (SCV_BATCH", "TRAINER-CONTRACT"},
        {"jump", "seg-000-warmup-k2-b64.jsonl:4: field 'iter' = 1000000000003 jumps from line 3's 2", "expected"},
        {"dupkey", "seg-000-warmup-k2-b64.jsonl:4: field 'batch' is given twice", "write it once"},
        {"nul", "seg-000-warmup-k2-b64.jsonl:4: a NUL byte at byte 1 of the line", "without NUL bytes"},
        {"restart", "field 'iter' = 1 is not past the checkpoint's iteration", "SCV_RESUME=1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(db, sizeof db, "%s/lines-%s.db", tmp, bad[i][0]);
        CHECK_EQ_INT(run(out, sizeof out,
                         "FAKE_MODE=%s %s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' "
                         "--workers 1,2 --batch 64,128 --target-accuracy 0.9",
                         bad[i][0], bin, db),
                     1);
        CHECK_MSG(strstr(out, bad[i][1]) && strstr(out, bad[i][2]), "%s: %s", bad[i][0], out);
        CHECK_MSG(!strstr(out, "retry") && !strstr(out, "no measurement") && !strstr(out, "invalid times"), "%s: %s",
                  bad[i][0], out);
    }
}

/* --report DIR is made ready before any training (issue 38 item 8): a file, a dangling link
 * or a path under a file fail at once naming it, nothing trained, no run stored; a missing
 * parent is created; and any run's report can be written again from the store (`runs
 * report ID`), into its own folder or another. */
static void t_report_dir(void)
{
    char out[32768], db[512], path[800], dir[600];
    snprintf(db, sizeof db, "%s/repdir.db", tmp);
#define FAKE_RUN                                                                                                       \
    "%s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' --workers 1,2 --batch 64,128 "                     \
    "--target-accuracy 0.9 --report %s"
    snprintf(dir, sizeof dir, "%s/repdir-file", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "touch %s", dir), 0);
    CHECK_EQ_INT(run(out, sizeof out, FAKE_RUN, bin, db, dir), 1);
    CHECK_MSG(strstr(out, "--report: ") && strstr(out, "repdir-file: not a directory") &&
                  strstr(out, "nothing was trained") && !strstr(out, "warmup"),
              "%s", out);
    snprintf(dir, sizeof dir, "%s/repdir-link", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "ln -sfn %s/nowhere %s", tmp, dir), 0);
    CHECK_EQ_INT(run(out, sizeof out, FAKE_RUN, bin, db, dir), 1);
    CHECK_MSG(strstr(out, "repdir-link: a symbolic link to a path that does not exist") && !strstr(out, "warmup"), "%s",
              out);
    snprintf(dir, sizeof dir, "%s/repdir-file/sub", tmp);
    CHECK_EQ_INT(run(out, sizeof out, FAKE_RUN, bin, db, dir), 1);
    CHECK_MSG(strstr(out, "cannot create the report directory") && strstr(out, "Not a directory"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s --json", bin, db), 0);
    CHECK_MSG(!strcmp(out, "[]\n"), "a run was stored: %s", out);
    /* a missing parent: created before the run */
    snprintf(dir, sizeof dir, "%s/repdir-new/a/b", tmp);
    CHECK_EQ_INT(run(out, sizeof out, FAKE_RUN, bin, db, dir), 0);
    snprintf(path, sizeof path, "%s/report.json", dir);
    CHECK_MSG(file_has(path, "\"reached\":true") && file_has(path, "\"regenerated\":false"), "%s", out);
    /* written again from the store: into the run's own folder, then elsewhere */
    CHECK_EQ_INT(run(out, sizeof out, "%s runs report 1 --db %s", bin, db), 0);
    CHECK_MSG(strstr(out, "report written from the store in") && strstr(out, "repdir.db.runs/1/report.md"), "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/report.json", db);
    CHECK(file_has(path, "\"reached\":true") && file_has(path, "\"regenerated\":true") &&
          file_has(path, "\"chosen\":{\"vm\":\"c5.xlarge\"") && file_has(path, "\"steps\":[{\"phase\":\"warmup\""));
    snprintf(path, sizeof path, "%s.runs/1/report.md", db);
    CHECK(file_has(path, "**reached**") && file_has(path, "Regenerated from the run store") &&
          file_has(path, "## Trade-off"));
    snprintf(path, sizeof path, "%s.runs/1/tradeoff.svg", db);
    CHECK(file_has(path, "<svg"));
    CHECK_EQ_INT(run(out, sizeof out, "%s runs report 1 --db %s --report %s/repdir-again/x", bin, db, tmp), 0);
    snprintf(path, sizeof path, "%s/repdir-again/x/report.md", tmp);
    CHECK(file_has(path, "# Scavenger run 1"));
    CHECK_EQ_INT(run(out, sizeof out, "%s runs report 7 --db %s", bin, db), 1);
    CHECK_MSG(strstr(out, "no run 7"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs report 1 --db %s --report %s/repdir-file", bin, db, tmp), 1);
    CHECK_MSG(strstr(out, "repdir-file: not a directory"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s --report x", bin, db), 2);
#undef FAKE_RUN
}

/* A run stopped by its budget (issue 38 item 9): its report and its --json line (with
 * budget_stopped), the amounts as every other (scv_fmt_usd, never "$1e-05"), "at the cap"
 * when the spend went past it, the spend in the store (`runs --json` actual_cost); resumed
 * with a larger budget, the stored job keeps it (its report, written again, says so). The
 * cap, $0.000001, is about a sixth of what the shortest warm-up costs (two windows of 40
 * iterations at K=2 of 0.8 ms at least, never stopped by the budget: $0.000006): at $0.00001
 * a loaded machine's warm-up cost 98% of it, and the run stopped before the cap, not at it. */
static void t_budget_stop(void)
{
    char out[65536], db[512], path[800];
    snprintf(db, sizeof db, "%s/budget.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "{ %s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' --workers 1,2 "
                     "--batch 64,128 --target-accuracy 0.9 --budget 0.000001 --json 2>%s/budget.err; }",
                     bin, db, tmp),
                 1);
    const char *last = strrchr(out, '\n') && strlen(out) > 1 ? out + strlen(out) - 2 : out;
    while (last > out && last[-1] != '\n') last--;
    cJSON *j = cJSON_Parse(last);
    CHECK_MSG(j && cJSON_IsTrue(cJSON_GetObjectItem(j, "budget_stopped")) &&
                  cJSON_GetObjectItem(j, "actual_cost")->valuedouble > 0,
              "%s", out);
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/budget.err", tmp);
    CHECK_MSG(file_has(path, "target NOT reached, stopped at the budget's cap: $0.0000") &&
                  file_has(path, " spent of the $0.00000100 cap ($0.0000") &&
                  file_has(path, "scavenger run --resume 1 --budget USD --db ") &&
                  file_has(path, "POST /api/runs/1/resume with {\"budget\": USD}"),
              "budget.err");
    /* the command's own lines: no amount in %g (the loop's notes are the loop's) */
    CHECK_EQ_INT(run(out, sizeof out, "grep -v '^scavenger run: budget: ' %s/budget.err | grep -c 'e-0'", tmp), 1);
    snprintf(path, sizeof path, "%s.runs/1/report.md", db);
    CHECK(file_has(path, "**stopped by its budget, target not reached**") &&
          file_has(path, "Budget: stopped at the budget's cap"));
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s --json", bin, db), 0);
    j = cJSON_Parse(out);
    const cJSON *r0 = cJSON_GetArrayItem(j, 0);
    CHECK_MSG(r0 && cJSON_GetObjectItem(r0, "actual_cost")->valuedouble > 0 &&
                  !strcmp(cJSON_GetObjectItem(r0, "status")->valuestring, "interrupted"),
              "%s", out);
    cJSON_Delete(j);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s --resume 1 --budget 1", bin, db), 0);
    CHECK_MSG(strstr(out, "target reached"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs report 1 --db %s", bin, db), 0);
    snprintf(path, sizeof path, "%s.runs/1/report.json", db);
    CHECK_MSG(file_has(path, "\"budget\":1,"), "the stored job's budget is not the resume's");
}

/* The first hour (issue 38 item 15): the console's trade-off says how many of the planned
 * configurations its rows are; the last line gives the training time and the wall time
 * apart; a run reached with its last accuracy under the target says so in `runs` (marked,
 * with a footnote), `runs show` and `runs --json` (reached_how, reached_note), not only on
 * the console. */
static void t_first_hour(void)
{
    char out[32768], db[512];
    snprintf(db, sizeof db, "%s/firsthour.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' --workers 1,2 "
                     "--batch 64,128 --target-accuracy 0.9",
                     bin, db),
                 0);
    const char *t = strstr(out, "trade-off (");
    size_t front = 0, planned = 0;
    CHECK_MSG(
        t && sscanf(t, "trade-off (%zu of %zu configurations planned: the cost-time front", &front, &planned) == 2 &&
            front < planned && planned == 4,
        "%s", out);
    int rows = 0; /* the table's rows (after its header): the front's */
    const char *l = t ? strstr(t, "\n   vm ") : NULL;
    for (l = l ? strchr(l + 1, '\n') : NULL; l && !strncmp(l + 1, ">  c5.", 6) + !strncmp(l + 1, "   c5.", 6);
         l = strchr(l + 1, '\n'))
        rows++;
    CHECK_MSG(rows == (int)front, "%d rows for %zu on the front: %s", rows, front, t ? t : out);
    const char *w = strstr(out, "target reached: ");
    w = w ? strstr(w, " epochs in ") : NULL;
    const char *tw = w ? strstr(w, " training, ") : NULL, *ww = tw ? strstr(tw, " wall (") : NULL;
    CHECK_MSG(tw && ww && strstr(ww, " start-up and evaluation), $") && tw - w < 30 && ww - tw < 30, "%s", w ? w : out);
    /* a run reached within the tolerance, and one by the window (the stored outcome of each) */
    scv_store *s = NULL;
    scv_err err = {0};
    snprintf(db, sizeof db, "%s/reached.db", tmp);
    CHECK_EQ_INT(scv_store_open(db, &s, &err), SCV_OK);
    long long a = 0, b = 0, c = 0;
    CHECK_EQ_INT(scv_store_run_new(s, "job-tol", "{\"target-accuracy\":\"0.9\"}", &a, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_new(s, "job-win", "{\"target-accuracy\":0.9,\"eval-subset\":\"0\"}", &b, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_new(s, "job-at", "{\"target-accuracy\":0.9}", &c, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_outcome(s, a, 20, 0.01, 0.8962, 1, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_outcome(s, b, 20, 0.01, 0.8871, 1, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_outcome(s, c, 20, 0.01, 0.9012, 1, &err), SCV_OK);
    scv_store_close(s);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0);
    CHECK_MSG(strstr(out, "0.8962 tol.") && strstr(out, "0.8871 win.") && strstr(out, "0.9012  ") &&
                  strstr(out, "tol.: reached within the confirmation tolerance 0.005 of its target") &&
                  strstr(out, "win.: reached by the mean of the evaluation window"),
              "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show %lld --db %s", bin, a, db), 0);
    CHECK_MSG(
        strstr(out, "reached within the confirmation tolerance 0.005 of 0.9: the whole test set's accuracy 0.8962"),
        "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s --json", bin, db), 0);
    CHECK_MSG(strstr(out, "\"reached_how\":\"tolerance\",\"reached_note\":\"reached within") &&
                  strstr(out, "\"reached_how\":\"window\"") &&
                  strstr(out, "\"reached_how\":\"target\",\"reached_note\":null"),
              "%s", out);
}

/* run --compress on the built-in trainer (elastic driver): with K = 2 only, Top-k over
 * Allgather costs the model less than the dense allreduce (half the latency terms, a
 * hundredth of the bytes) and is assumed to need a fiftieth of the iterations (a margin over
 * the noise of local timings, where the dense points' iteration times are measured and the
 * option's modelled: its messages are priced at the latency probe's median, which a loaded
 * machine put at 3.2 ms against a measured dense exchange of 19 us, and half the iterations
 * no longer paid for it), so the run chooses it; its training segments train with it (their
 * metrics carry "cf"), warm-up and search stay dense; the report names it beside the dense
 * choice. An unreachable target and a few epochs keep it short (exit 1: not reached). */
static void t_run_compress(void)
{
    char out[16384], db[512], path[700];
    snprintf(db, sizeof db, "%s/compress.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s run --db %s --model mlp --hidden 32 --dataset synthetic:8000 --lr 0.003 "
                     "--target-accuracy 0.995 --max-epochs 5 --workers 2 --batch 64,128 --objective time "
                     "--compress topk:100:allgather --compress-iterations 0.02",
                     bin, db),
                 1);
    CHECK_MSG(strstr(out, "with topk:100:allgather") && strstr(out, "train "), "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/report.md", db);
    CHECK(file_has(path, "Communication: **topk:100:allgather**") && file_has(path, "the dense choice beside it"));
    snprintf(path, sizeof path, "%s.runs/1/report.json", db);
    CHECK(file_has(path, "\"communication\":{\"chosen\":\"topk:100:allgather\""));
    CHECK_EQ_INT(run(out, sizeof out, "cat %s.runs/1/seg-*-train-*.jsonl | grep -c '\"cf\":100,'", db), 0);
    CHECK_MSG(atoi(out) > 0, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out,
                     "cat %s.runs/1/seg-*-warmup-*.jsonl %s.runs/1/seg-*-search-*.jsonl | "
                     "grep -c '\"cf\"'",
                     db, db),
                 1); /* grep finds none */
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

/* Waits up to limit_s for pid; past it, the group is killed (a test must not hang) and -1
 * returned; else the exit code (128 + N for signal N). */
static int wait_bounded(pid_t pid, double limit_s, double *took)
{
    double t0 = mono_s();
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (mono_s() - t0 > limit_s) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            *took = mono_s() - t0;
            return -1;
        }
        nap(0.02);
    }
    *took = mono_s() - t0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Issue 24, item 7: the watchdog. A trainer that never writes its first line (a /bin/sh
 * command that sleeps) fails within the start-up timeout, the message naming it and what
 * was (not) seen; one that pauses itself with SIGSTOP in a segment is ended after the
 * no-progress timeout and retried like a dead worker, and the run goes on. */
static void t_stall_watchdog(void)
{
    char out[16384], db[512];
    snprintf(db, sizeof db, "%s/stall.db", tmp);
    double t0 = mono_s();
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s run --db %s --exec 'sleep 1000' --workers 1,2 --batch 64,128 "
                     "--target-accuracy 0.9 --stall-timeout 1",
                     bin, db),
                 1);
    CHECK_MSG(mono_s() - t0 < 20, "took %.1f s", mono_s() - t0);
    CHECK_MSG(strstr(out, "no metrics line in 1 s") && strstr(out, "start-up timeout") &&
                  strstr(out, "nothing written to") && strstr(out, "job.jsonl"),
              "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0);
    CHECK_MSG(strstr(out, "failed") && !strstr(out, "running"), "%s", out);
    snprintf(db, sizeof db, "%s/stall2.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "FAKE_MODE=stall %s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' "
                     "--workers 1,2 --batch 64,128 --target-accuracy 0.9 --max-epochs 2 --stall-timeout 5",
                     bin, db),
                 1);
    CHECK_MSG(strstr(out, "was ended: no progress for 5 s") && strstr(out, "last seen: iteration 5") &&
                  strstr(out, "retry 1 of 2") && strstr(out, "target NOT reached"),
              "%s", out);
    CHECK_EQ_INT(
        run(out, sizeof out, "%s run --db %s --exec 'sleep 1' --target-accuracy 0.9 --stall-timeout 0", bin, db), 2);
    CHECK_MSG(strstr(out, "--stall-timeout '0'"), "%s", out);
}

/* Issue 26 item 5: with --exec the target is the built-in trainer's rule. The trainer is
 * given --eval-subset (SCV_EVAL_SUBSET) and says which set each evaluation is on; a window
 * reached on subset evaluations is "reached" only when the whole test set confirms it (the
 * trainer's final evaluation, SCV_FINAL_EVAL=1). A subset that flatters the model by 0.2
 * reaches 0.7 where the whole set does not: not reached (exit 1), the report says so; a
 * trainer that writes no evaluation on the whole set is refused, naming SCV_FINAL_EVAL; one
 * whose periodic evaluations lack test_accuracy is named at once. */
static void t_exec_confirm(void)
{
    char out[32768], db[512], path[700];
    /* the subset's window reaches 0.7 at 0.3 epochs, in the warm-up; the whole set would need 1.4 */
#define FAKE1                                                                                                          \
    "--exec '/usr/bin/python3 tests/fake_trainer.py' --workers 2 --batch 64 --target-accuracy 0.7 --max-epochs 1"
    snprintf(db, sizeof db, "%s/confirm.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "FAKE_SUBSET_BONUS=0.2 %s run --db %s " FAKE1, bin, db), 1);
    CHECK_MSG(strstr(out, "target NOT reached") && !strstr(out, "target reached"), "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/report.json", db);
    CHECK(file_has(path, "\"reached\":false"));
    CHECK_EQ_INT(
        run(out, sizeof out, "cat %s.runs/1/seg-*.jsonl | grep -c '\"role\": \"final\", \"set\": \"full\"'", db), 0);
    CHECK_MSG(atoi(out) >= 1, "no final evaluation on the whole set: %s", out);
    snprintf(db, sizeof db, "%s/confirm-nofinal.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "FAKE_SUBSET_BONUS=0.2 FAKE_MODE=nofinal %s run --db %s " FAKE1, bin, db), 1);
    CHECK_MSG(strstr(out, "reached on subset evaluations") && strstr(out, "SCV_FINAL_EVAL=1") &&
                  strstr(out, "--eval-subset 0"),
              "%s", out);
    /* a periodic evaluation without the accuracy an accuracy target needs: named at once,
     * not a run that silently never reaches its target */
    snprintf(db, sizeof db, "%s/confirm-noacc.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "FAKE_MODE=noacc %s run --db %s " FAKE1, bin, db), 1);
    CHECK_MSG(strstr(out, "evaluation line lacks field 'test_accuracy': an accuracy target") &&
                  strstr(out, "seg-000-warmup-k2-b64.jsonl:"),
              "%s", out);
#undef FAKE1
}

/* Issue 26 item 7: report.json says where the trained model is (the trainer's checkpoint
 * directory, with its scavenger-state.json), names the configuration the run really ended at
 * (its last step that trained) and calls a configuration "measured" only where the run
 * trained at it, "predicted" where the models carried it. */
static void t_exec_report(void)
{
    static char out[1 << 17];
    char db[512], path[700];
    snprintf(db, sizeof db, "%s/report.db", tmp);
    int rc = run(out, sizeof out,
                 "%s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' --workers 1,2 "
                 "--batch 64,128 --target-accuracy 0.8 --max-epochs 3",
                 bin, db);
    CHECK_MSG(rc == 0 || rc == 1, "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/report.json", db);
    CHECK_EQ_INT(run(out, sizeof out, "cat %s", path), 0);
    cJSON *r = cJSON_Parse(out);
    CHECK_MSG(r != NULL, "%.300s", out);
    if (!r) return;
    const cJSON *steps = cJSON_GetObjectItem(r, "steps"), *st, *pt;
    int lastK = 0, lastB = 0, n_pred = 0, n_meas = 0;
    cJSON_ArrayForEach(st, steps) if (cJSON_GetObjectItem(st, "iterations")->valuedouble > 0)
        lastK = cJSON_GetObjectItem(st, "workers")->valueint,
        lastB = cJSON_GetObjectItem(st, "batch")->valueint;
    const cJSON *fin = cJSON_GetObjectItem(r, "final"), *model = cJSON_GetObjectItem(r, "model");
    CHECK_MSG(lastK && cJSON_GetObjectItem(fin, "workers")->valueint == lastK &&
                  cJSON_GetObjectItem(fin, "batch")->valueint == lastB,
              "final is not the last step K=%d B=%d", lastK, lastB);
    const cJSON *ck = cJSON_GetObjectItem(model, "checkpoint_dir");
    CHECK_MSG(cJSON_IsString(ck) && strstr(ck->valuestring, ".runs/1/ckpt"), "no model's checkpoint_dir");
    if (cJSON_IsString(ck)) {
        snprintf(path, sizeof path, "%s/scavenger-state.json", ck->valuestring);
        CHECK_MSG(access(path, F_OK) == 0, "%s", path);
    }
    cJSON_ArrayForEach(pt, cJSON_GetObjectItem(r, "points"))
    {
        int K = cJSON_GetObjectItem(pt, "workers")->valueint, B = cJSON_GetObjectItem(pt, "batch")->valueint, ran = 0;
        cJSON_ArrayForEach(st, steps) ran |= cJSON_GetObjectItem(st, "iterations")->valuedouble > 0 &&
                                             cJSON_GetObjectItem(st, "workers")->valueint == K &&
                                             cJSON_GetObjectItem(st, "batch")->valueint == B;
        const char *how = cJSON_GetObjectItem(pt, "how")->valuestring;
        CHECK_MSG(!strcmp(how, ran ? "measured" : "predicted"), "K=%d B=%d ran=%d how=%s", K, B, ran, how);
        n_pred += !ran, n_meas += ran;
    }
    CHECK_MSG(n_pred >= 1 && n_meas >= 1, "%d predicted, %d measured", n_pred, n_meas);
    cJSON_Delete(r);
    snprintf(path, sizeof path, "%s.runs/1/report.md", db);
    CHECK(file_has(path, "Trained model: the checkpoint in `") && file_has(path, ".runs/1/ckpt` (K = "));
}

/* Issue 26 item 2: every exec segment gets torchrun's environment (RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE from Open MPI's, MASTER_ADDR and MASTER_PORT as SCV_MASTER_*):
 * the fake trainer checks them in every process and exits 2 naming a wrong one, and with
 * FAKE_DIST=1 its K processes meet at MASTER_ADDR:MASTER_PORT, a port free for each segment,
 * below the kernel's ephemeral range (issue 38 item 18). */
static void t_exec_torchrun(void)
{
    char out[16384], db[512], path[700];
    snprintf(db, sizeof db, "%s/torchrun.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "FAKE_DIST=1 %s run --db %s --exec '/usr/bin/python3 tests/fake_trainer.py' "
                     "--workers 2 --batch 64 --target-accuracy 0.99 --max-epochs 0.5 --eval-subset 0",
                     bin, db),
                 1);
    CHECK_MSG(strstr(out, "target NOT reached") && !strstr(out, "torchrun's"), "%s", out);
    snprintf(path, sizeof path, "%s.runs/1/ckpt/ports.log", db);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "no %s: the processes never met", path);
    /* the port lies below the kernel's ephemeral range, which hands ports to any process's
     * outgoing connections before the trainer binds it */
    int k, port, n = 0, lo = 32768;
    FILE *r = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (r) {
        if (fscanf(r, "%d", &lo) != 1) lo = 32768;
        fclose(r);
    }
    while (f && fscanf(f, "%d %d", &k, &port) == 2) {
        CHECK_MSG(k == 2 && port >= 1024 && port < lo, "K=%d port %d (ephemeral from %d)", k, port, lo);
        n++;
    }
    if (f) fclose(f);
    CHECK_MSG(n >= 1, "%d segments met", n);
}

/* Issue 26 item 4: the start-up probe's lines are checked as they come, and a script that
 * ignores the contract is named with the variable it ignores, within seconds: one that
 * writes nothing (exits 0), one that trains past SCV_UNTIL_ITERATIONS=1 in the probe
 * (tj_watchdog's probe_iters), a job line lacking a required field. */
static void t_exec_probe(void)
{
    char out[16384], db[512];
    const char *cases[][3] = {
        {"", "true", "exited 0 without writing a metrics line"},
        {"FAKE_MODE=noprobe", "/usr/bin/python3 tests/fake_trainer.py", "it ignores SCV_UNTIL_ITERATIONS=1"},
        {"FAKE_MODE=nojobfield", "/usr/bin/python3 tests/fake_trainer.py", "job line lacks field 'n_train'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(db, sizeof db, "%s/probe%d.db", tmp, (int)i);
        double t0 = mono_s();
        int rc = run(out, sizeof out,
                     "%s %s run --db %s --exec '%s' --workers 1,2 --batch 64,128 --target-accuracy 0.9", cases[i][0],
                     bin, db, cases[i][1]);
        CHECK_MSG(rc == 1 || rc == 2, "%s: exit %d", cases[i][1], rc);
        CHECK_MSG(strstr(out, cases[i][2]), "%s: %s", cases[i][0], out);
        if (i == 0) CHECK_MSG(strstr(out, "it ignores SCV_METRICS"), "%s", out);
        CHECK_MSG(mono_s() - t0 < 10, "%s: took %.1f s", cases[i][1], mono_s() - t0);
    }
}

/* Issue 24, item 9: SIGTERM (or SIGINT) to the coordinator during the exec trainer's start-up
 * probe: the run is stored interrupted (exit 130, a message), not left running; a
 * coordinator killed outright (SIGKILL: no word) leaves a run that `runs` shows as not
 * running. */
static void t_probe_interrupt(void)
{
    char out[16384], db[512], cmd[2048], log[600];
    int sigs[] = {SIGTERM, SIGKILL}; /* SIGINT takes the same handler (catch_stops); each case
                                        costs 2 s of mpirun's teardown */
    for (int i = 0; i < 2; i++) {
        snprintf(db, sizeof db, "%s/probe%d.db", tmp, i);
        snprintf(log, sizeof log, "%s/probe%d.log", tmp, i);
        snprintf(cmd, sizeof cmd,
                 "exec %s run --db %s --exec 'sleep 30' --workers 1,2 --batch 64,128 "
                 "--target-accuracy 0.9 >%s 2>&1",
                 bin, db, log);
        pid_t pid = spawn_group(cmd);
        char tl[700];
        snprintf(tl, sizeof tl, "%s.runs/1/trainer.log", db);
        for (int k = 0; k < 600 && access(tl, F_OK) != 0; k++) nap(0.05); /* the probe started */
        CHECK_MSG(access(tl, F_OK) == 0, "no %s after 30 s", tl);
        nap(0.3);
        kill(pid, sigs[i]); /* the coordinator alone (a service's stop, kill PID) */
        double took;
        int code = wait_bounded(pid, 15, &took);
        CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0);
        if (sigs[i] != SIGKILL) {
            CHECK_MSG(code == 130, "signal %d: exit %d", sigs[i], code);
            /* stored by the coordinator itself, not found dead */
            CHECK_MSG(strstr(out, "interrupted") && !strstr(out, "process gone") && !strstr(out, "running"), "%s", out);
            CHECK_MSG(strstr(out, "reason: interrupted (SIGINT or SIGTERM"), "%s", out); /* and why */
            CHECK_EQ_INT(run(out, sizeof out, "cat %s", log), 0);
            CHECK_MSG(strstr(out, "scavenger run: interrupted"), "signal %d: %s", sigs[i], out);
        } else {
            CHECK_MSG(strstr(out, "interrupted (process gone)") && !strstr(out, "running"), "%s", out);
            CHECK_MSG(strstr(out, "reason: its process (pid ") && strstr(out, "ended without storing"), "%s", out);
        }
    }
}

/* Issue 24, item 8: a stop during setup (each rank generating a large synthetic set, the
 * stop signals blocked) is taken within a bound, not after the whole set. */
static void t_setup_interrupt(void)
{
    char cmd[2048], log[600], out[8192];
    snprintf(log, sizeof log, "%s/setup.log", tmp);
    snprintf(cmd, sizeof cmd,
             "exec %s train --workers 2 --model logreg --dataset synthetic:500000 --batch 64 "
             "--iterations 5 --progress never >%s 2>&1",
             bin, log);
    pid_t pid = spawn_group(cmd);
    nap(1.5); /* its handlers are set at once; the ranks generate for 10-20 s */
    kill(pid, SIGTERM);
    double took;
    int code = wait_bounded(pid, 10, &took);
    CHECK_MSG(code == 130 && took < 10, "exit %d after %.1f s", code, took);
    CHECK_EQ_INT(run(out, sizeof out, "cat %s", log), 0);
    CHECK_MSG(strstr(out, "interrupted") && !strstr(out, "0 iterations"), "%s", out);
}

/* 1 when pid is gone or a zombie (reaped by whoever adopted it, or not yet). */
static int proc_gone(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *q = strrchr(buf, ')');
    return q && (q[2] == 'Z' || q[2] == 'X');
}

/* The watchdog's end of a job (scv_kill_tree): the root and every descendant, a stopped
 * one and one in a process group of its own (as mpirun's ranks) too. */
static void t_kill_tree(void)
{
    char pidfile[300], cmd[2048], out[256];
    snprintf(pidfile, sizeof pidfile, "%s/tree.pids", tmp);
    snprintf(cmd, sizeof cmd,
             "sleep 60 & a=$!; setsid sleep 60 & b=$!; (sleep 60 & wait) & c=$!; "
             "kill -STOP $a; echo $a $b $c > %s.tmp; mv %s.tmp %s; wait",
             pidfile, pidfile, pidfile);
    pid_t root = spawn_group(cmd);
    for (int i = 0; i < 200 && access(pidfile, F_OK) != 0; i++) nap(0.01);
    long a = 0, b = 0, c = 0;
    FILE *f = fopen(pidfile, "r");
    CHECK(f && fscanf(f, "%ld %ld %ld", &a, &b, &c) == 3);
    if (f) fclose(f);
    nap(0.1); /* c's own sleep started */
    CHECK_EQ_INT(run(out, sizeof out, "pgrep -P %ld | head -1", c), 0);
    long cc = atol(out);
    scv_kill_tree(root);
    double took;
    CHECK_EQ_INT(wait_bounded(root, 5, &took), 128 + SIGKILL);
    for (int i = 0; i < 100 && !(proc_gone(a) && proc_gone(b) && proc_gone(c) && proc_gone(cc)); i++) nap(0.02);
    CHECK_MSG(proc_gone(a) && proc_gone(b) && proc_gone(c) && cc > 1 && proc_gone(cc), "left: %ld %ld %ld %ld",
              proc_gone(a) ? 0 : a, proc_gone(b) ? 0 : b, proc_gone(c) ? 0 : c, proc_gone(cc) ? 0 : cc);
}

/* `run --vm` (issue 24 item 21): the types the plan compares are read by `plan --vm`'s parser
 * before anything runs: an unknown one is a usage error naming it, with the nearest type,
 * and no run is stored. */
static void t_run_vm_list(void)
{
    char out[16384], db[512];
    snprintf(db, sizeof db, "%s/vmlist.db", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " --vm c5.xlarge,c5.xlarg", bin, db), 2);
    CHECK_MSG(strstr(out, "--vm c5.xlarg: not a VM type of") && strstr(out, "did you mean 'c5.xlarge'?"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " --vm c5.xlarge,nosuch", bin, db), 2);
    CHECK_MSG(strstr(out, "--vm nosuch: not a VM type of"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --db %s " RUNJOB " --vm ,", bin, db), 2);
    CHECK_MSG(strstr(out, "--vm ',': expected VM types"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs --db %s --json 2>/dev/null; }", bin, db), 0);
    CHECK_MSG(strstr(out, "\"id\"") == NULL, "a refused run was stored: %s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s run --help", bin), 0);
    CHECK_MSG(strstr(out, "--vm LIST|all") != NULL, "%s", out);
    /* a run on c5.2xlarge comparing c5.xlarge (half the price at the measured compute: the
     * plan's choice for cost): the table marks c5.xlarge's points extrapolated and shows the
     * run's own choice, the decision and a note name the plan's choice, the run stays */
    char rep[600], path[700];
    snprintf(rep, sizeof rep, "%s/vmrep", tmp);
    CHECK_EQ_INT(run(out, sizeof out,
                     "%s run --db %s --model mlp --hidden 32 --dataset synthetic:4000 --lr 0.003 "
                     "--target-accuracy 0.9 --workers 1,2 --batch 32,128 --vm-type c5.2xlarge --vm c5.xlarge "
                     "--objective cost --max-epochs 3 --report %s",
                     bin, db, rep),
                 0);
    CHECK_MSG(strstr(out, "c5.xlarge ") && strstr(out, "(extrapolated)") && strstr(out, "\n>  c5.2xlarge ") &&
                  strstr(out, "VM types (--vm): 2 planned: c5.2xlarge (measured") &&
                  strstr(out, "the plan chose c5.xlarge (K=") && strstr(out, "the run stays on c5.2xlarge"),
              "%s", out);
    snprintf(path, sizeof path, "%s/report.json", rep);
    CHECK(file_has(path, "\"vm\":\"c5.xlarge\"") && file_has(path, "\"how\":\"extrapolated: other CPU type"));
    snprintf(path, sizeof path, "%s/report.md", rep);
    CHECK(file_has(path, "the plan chose c5.xlarge") && file_has(path, "extrapolated |"));
}

/* `runs` shows a running run's latest forecast (the store's, scv_store_run_eta): a line
 * under it in the table ("ETA ... (lo to hi), P ..."), overdue and nominal said so, `runs
 * show`, and --json's "eta" object (the service's names); none for a run that ended. */
static void t_runs_eta(void)
{
    char db[400], out[16384];
    snprintf(db, sizeof db, "%s/eta.db", tmp);
    unlink(db);
    scv_store *s = NULL;
    scv_err err = {0};
    long long a = 0, b = 0, c = 0;
    CHECK_EQ_INT(scv_store_open(db, &s, &err), SCV_OK);
    if (!s) return;
    /* runs of this process: running while it lives */
    CHECK_EQ_INT(scv_store_run_new(s, "job-eta-a", "{}", &a, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_new(s, "job-eta-b", "{}", &b, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_new(s, "job-eta-c", "{}", &c, &err), SCV_OK);
    struct scv_run_eta e = {.remaining_s = 192, .remaining_lo_s = 126, .remaining_hi_s = 300, .p_reach = 0.91};
    CHECK_EQ_INT(scv_store_run_eta(s, a, &e, &err), SCV_OK);
    e = (struct scv_run_eta){
        .remaining_s = 30, .remaining_lo_s = NAN, .remaining_hi_s = NAN, .p_reach = NAN, .nominal = 1};
    CHECK_EQ_INT(scv_store_run_eta(s, b, &e, &err), SCV_OK);
    e = (struct scv_run_eta){
        .remaining_s = NAN, .remaining_lo_s = NAN, .remaining_hi_s = NAN, .p_reach = NAN, .overdue = 1};
    CHECK_EQ_INT(scv_store_run_eta(s, c, &e, &err), SCV_OK);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0);
    CHECK_MSG(strstr(out, "ETA 3.2 min (2.1 min to 5.0 min), P 0.91"), "%s", out);
    CHECK_MSG(strstr(out, "ETA 30.0 s nominal"), "%s", out);
    CHECK_MSG(strstr(out, "ETA: overdue"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show %lld --db %s", bin, a, db), 0);
    CHECK_MSG(strstr(out, "ETA 3.2 min (2.1 min to 5.0 min), P 0.91"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs --db %s --json 2>/dev/null; }", bin, db), 0);
    cJSON *o = cJSON_Parse(out), *r0 = cJSON_GetArrayItem(o, 0), *j = cJSON_GetObjectItem(r0, "eta");
    CHECK_MSG(cJSON_IsObject(j), "%s", out);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "remaining_s")), 192, 0, 1e-9);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "remaining_lo_s")), 126, 0, 1e-9);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "remaining_hi_s")), 300, 0, 1e-9);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "p_reach")), 0.91, 0, 1e-9);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "overdue")) && cJSON_IsFalse(cJSON_GetObjectItem(j, "nominal")) &&
          cJSON_GetNumberValue(cJSON_GetObjectItem(j, "written")) > 1.5e9);
    cJSON_Delete(o);
    /* ended: no forecast anywhere */
    CHECK_EQ_INT(scv_store_outcome(s, a, 200, 0.01, 0.9, 1, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_status(s, b, "interrupted", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_status(s, c, "failed", &err), SCV_OK);
    scv_store_close(s);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, db), 0);
    CHECK_MSG(!strstr(out, "ETA"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs --db %s --json 2>/dev/null; }", bin, db), 0);
    CHECK_MSG(strstr(out, "\"eta\":null") && !strstr(out, "\"eta\":{"), "%s", out);
}

static const scv_test tests[] = {
    {"kill_tree", t_kill_tree},
    {"stall_watchdog", t_stall_watchdog},
    {"probe_interrupt", t_probe_interrupt},
    {"setup_interrupt", t_setup_interrupt},
    {"run_compress", t_run_compress},
    {"exec_driver", t_exec_driver},
    {"exec_lines", t_exec_lines},
    {"report_dir", t_report_dir},
    {"budget_stop", t_budget_stop},
    {"first_hour", t_first_hour},
    {"exec_torchrun", t_exec_torchrun},
    {"exec_probe", t_exec_probe},
    {"exec_confirm", t_exec_confirm},
    {"exec_report", t_exec_report},
    {"run_loop", t_run_loop},
    {"run_worker_dies", t_run_worker_dies},
    {"run_validated_early", t_run_validated_early},
    {"db_missing_dir", t_db_missing_dir},
    {"run_vm_list", t_run_vm_list},
    {"runs_eta", t_runs_eta},
};

int main(int argc, char **argv)
{
    return scv_cli_main(tests, (int)(sizeof tests / sizeof tests[0]), "cli-run", argc, argv);
}
