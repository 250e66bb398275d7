/*
 * test_loop.c - the Scavenger loop's states (src/search/loop.c, search.c, segment.c, place.c,
 * record.c) with the fake driver of loop_fake.h: each search policy's phase sequence, the
 * re-plan/switch rule (switch when the gain pays, stay when it does not), the report's JSON
 * and a read-only report directory, a Top-k option chosen and passed to training segments only
 * (run --compress), VM types and where a segment trains, a slow worker's rule.
 */
#include "loop_fake.h"

static void t_params(void)
{
    scv_run_params p = scv_run_params_default();
    scv_err e = {0};
    CHECK_EQ_INT(scv_run_params_set(&p, "objective", "fast", &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "objective") && strstr(e.msg, "knee"), "%s", e.msg);
    CHECK_EQ_INT(scv_run_params_set(&p, "workers", "4,2", &e), SCV_EINVAL);
    CHECK_EQ_INT(scv_run_params_set(&p, "deadline", "45m", &e), SCV_OK);
    CHECK_NEAR(p.deadline_s, 2700, 0, 1e-9);
    CHECK_EQ_INT(scv_run_params_set(&p, "start", "2,1", &e), SCV_EINVAL);
    CHECK_EQ_INT(scv_run_params_set(&p, "colour", "blue", &e), SCV_ENOTFOUND);
    CHECK_EQ_INT(scv_run_params_set(&p, "search", "none", &e), SCV_OK);
    CHECK_EQ_INT(p.search, SCV_SEARCH_NONE);
    CHECK_EQ_INT(scv_run_params_check(&p, &e), SCV_EINVAL); /* no target */
    CHECK(strstr(e.msg, "target-accuracy") != NULL);
    /* K = 1 only: the warm-up trained, then no noise estimate to plan with (issue 24's item
     * 13); refused before anything runs, saying why; a space with a K >= 2 is fine */
    scv_store *db = open_db("params.db");
    p = params(db, "k1");
    CHECK_EQ_INT(scv_run_params_check(&p, &e), SCV_OK);
    CHECK_EQ_INT(scv_run_params_set(&p, "workers", "1", &e), SCV_OK);
    memset(&e, 0, sizeof e);
    CHECK_EQ_INT(scv_run_params_check(&p, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "workers") && strstr(e.msg, "K >= 2"), "%s", e.msg);
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    scv_run_result res;
    memset(&res, 0, sizeof res);
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_EINVAL);
    CHECK_EQ_INT((int)res.run_id, 0); /* nothing stored, nothing trained */
    CHECK_EQ_INT(f.calls, 0);
    scv_run_result_free(&res);
    CHECK_EQ_INT(scv_run_params_set(&p, "workers", "1,2", &e), SCV_OK);
    CHECK_EQ_INT(scv_run_params_check(&p, &e), SCV_OK);
    scv_store_close(db);
}

static void t_partial_full_none(void)
{
    scv_store *db = open_db("phases.db");
    /* partial: warm-up at (2, 32), then the corners not yet measured */
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-a");
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    const char *want = "warmup:2,32 search:1,32 search:1,128 search:4,32 search:4,128 train:";
    CHECK_MSG(!strncmp(r.seq, want, strlen(want)), "%s", r.seq);
    CHECK(res.state == SCV_STATE_DONE && res.reached);
    CHECK(res.plan != NULL && !res.relative);
    CHECK(res.workers == res.plan->points[res.plan->chosen].workers || r.switches > 4);
    /* the outcome adds up: time is the steps' spans plus the idle between them */
    double sum = 0;
    for (size_t i = 0; i < res.n_steps; i++)
        sum += res.steps[i].last_end - res.steps[i].first_start + (i ? res.steps[i].idle_before : 0);
    CHECK_NEAR(res.actual_time_s, sum, 1e-9, 1e-9);
    CHECK_NEAR(res.actual_time_s, f.clock - res.steps[0].first_start, 1e-9, 1e-9);
    CHECK(res.search_time_s > 0 && res.search_time_s < res.actual_time_s);
    CHECK_EQ_INT(res.relaunches, (long long)res.n_steps - 1);
    CHECK_EQ_INT(r.backwards, 0);
    CHECK_NEAR(r.last_elapsed, res.actual_time_s, 1e-9, 1e-9);
    CHECK(r.remaining_seen > 0); /* the time to the target is shown once there is a plan */
    scv_run_result_free(&res);
    /* full: every configuration with B >= K once */
    fake g = new_fake();
    d = driver_of(&g);
    memset(&r, 0, sizeof r);
    p = params(db, "job-b");
    p.search = SCV_SEARCH_FULL;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    int searched = 0;
    for (const char *s = r.seq; (s = strstr(s, "search:")); s++) searched++;
    CHECK_MSG(searched == 8, "%d searched: %s", searched, r.seq); /* 9 configurations, (2,32) warmed up */
    /* the warm-up's K first, then by K: three K changes in all */
    want = "warmup:2,32 search:2,64 search:2,128 search:1,32 search:1,64 search:1,128 search:4,32";
    CHECK_MSG(!strncmp(r.seq, want, strlen(want)), "%s", r.seq);
    scv_run_result_free(&res);
    /* none: plans from job-b's stored measurements, trains at once */
    fake h = new_fake();
    d = driver_of(&h);
    memset(&r, 0, sizeof r);
    p = params(db, "job-b");
    p.search = SCV_SEARCH_NONE;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK_MSG(!strncmp(r.seq, "train:", 6) && !strstr(r.seq, "search") && !strstr(r.seq, "warmup"), "%s", r.seq);
    CHECK(res.reached);
    scv_run_result_free(&res);
    /* none for a job never seen: the universal model (a warm-up, then the shapes learnt from
     * the other jobs' stored runs), and without any stored run to learn from */
    double worst[2];
    for (int with_prior = 1; with_prior >= 0; with_prior--) {
        scv_store *udb = with_prior ? db : open_db("empty.db");
        fake u = new_fake();
        d = driver_of(&u);
        memset(&r, 0, sizeof r);
        p = params(udb, "job-never");
        p.search = SCV_SEARCH_NONE;
        CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
        CHECK(res.universal && res.reached);
        CHECK_EQ_INT(res.n_prior_runs, with_prior ? 3 : 0);
        CHECK_MSG(!strncmp(r.seq, "warmup:2,32 train:", 18), "%s", r.seq);
        worst[with_prior] = 0; /* predicted iteration times against the fake's, over the grid */
        for (size_t i = 0; res.decision && i < res.decision->n_points; i++) {
            const scv_plan_point *q = &res.decision->points[i];
            worst[with_prior] = fmax(worst[with_prior], fabs(q->t_iter / fake_t_iter(&u, q->workers, q->batch) - 1));
        }
        scv_run_result_free(&res);
        if (!with_prior) scv_store_close(udb);
    }
    CHECK_MSG(worst[1] < 0.05 && worst[0] > 2 * worst[1], "worst error with the prior %.3f, without %.3f", worst[1],
              worst[0]);
    scv_store_close(db);
}

/* The chosen configuration slows down 3x after the first training segment. */
static void t_drift_switch_or_stay(void)
{
    for (int pays = 1; pays >= 0; pays--) {
        scv_store *db = open_db("drift.db");
        fake f = new_fake();
        f.need_e0 = 30; /* a long job: the rest is worth a switch */
        /* find the choice first, then script its slowdown */
        fake probe = new_fake();
        probe.need_e0 = 30;
        scv_job_driver d = driver_of(&probe);
        rec r;
    memset(&r, 0, sizeof r);
        scv_run_observer obs = {.ctx = &r, .on_event = on_event};
        scv_run_params p = params(db, "probe");
        p.max_epochs = 100;
        scv_run_result res;
        scv_err e = {0};
        CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
        int K = res.plan->points[res.plan->chosen].workers, B = res.plan->points[res.plan->chosen].batch;
        scv_run_result_free(&res);
        CHECK(r.switches >= 4); /* warm-up -> corners -> the choice */
        f.drift_K = K, f.drift_B = B, f.drift_factor = 3, f.drift_after = 1;
        f.idle_per_segment = pays ? 0.5 : 1e5; /* a switch that costs more than it saves */
        d = driver_of(&f);
        memset(&r, 0, sizeof r);
        p = params(db, pays ? "drift-pays" : "drift-stays");
        p.max_epochs = 100;
        /* the drift: the first training segment measures 3x the plan */
        CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
        CHECK(res.reached);
        if (pays) {
            CHECK_MSG(strstr(r.last_decision, "re-plan: switch") != NULL || strstr(r.seq, "train") != NULL,
                      "%s", r.last_decision);
            CHECK_MSG(res.workers != K || res.batch != B, "stayed at K=%d B=%d: %s", K, B, r.last_decision);
        } else {
            CHECK_MSG(strstr(r.last_decision, "re-plan: stay") != NULL, "%s", r.last_decision);
            CHECK_EQ_INT(res.workers, K);
            CHECK_EQ_INT(res.batch, B);
        }
        scv_run_result_free(&res);
        scv_store_close(db);
    }
}

/* Or et al.'s throughput scaling (--policy throughput): per-worker batch fixed at the
 * start's (32), K added in the space's steps while each added worker brings at least the
 * threshold of a worker's throughput. With t = c0 + c1 B/K + alpha (K - 1) = 0.0148 + 0.01
 * (K - 1) s, T(K) = 32 K / t: 2162, 2581, 2857, 3019 samples/s at K = 1, 2, 4, 8; the added
 * worker's share: 0.19 (1 -> 2), 0.11 (2 -> 4), 0.06 (4 -> 8): it settles at K = 4 with
 * S = 0.1, at K = 8 with S = 0.05; and stays there. */
static void t_throughput_policy(void)
{
    scv_store *db = open_db("or.db");
    const double S[] = {0.1, 0.05};
    const int want[] = {4, 8};
    for (int c = 0; c < 2; c++) {
        fake f = new_fake();
        f.alpha = 0.01;
        scv_job_driver d = driver_of(&f);
        char job[32];
        snprintf(job, sizeof job, "job-or-%d", c);
        scv_run_params p = params(db, job);
        CHECK_EQ_INT(scv_run_params_set(&p, "workers", "1,2,4,8", NULL), SCV_OK);
        CHECK_EQ_INT(scv_run_params_set(&p, "batch", "32,256", NULL), SCV_OK);
        CHECK_EQ_INT(scv_run_params_set(&p, "policy", "throughput", NULL), SCV_OK);
        CHECK_EQ_INT(scv_run_params_set(&p, "start", "1,32", NULL), SCV_OK);
        p.policy.scaling_threshold = S[c];
        rec rc = {0};
        scv_run_observer obs = {.ctx = &rc, .on_event = on_event};
        scv_run_result res;
        scv_err e = {0};
        CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
        CHECK(res.reached && res.decision);
        if (res.decision) {
            const scv_plan_point *ch = &res.decision->points[res.decision->chosen];
            CHECK_MSG(ch->workers == want[c] && ch->batch == 32 * want[c], "S %.2f: chose K=%d B=%d (%s)", S[c],
                      ch->workers, ch->batch, res.decision->why);
            CHECK_MSG(strstr(res.decision->why, "Or et al."), "%s", res.decision->why);
        }
        CHECK_MSG(res.workers == want[c] && res.batch == 32 * want[c], "finished at K=%d B=%d", res.workers, res.batch);
        CHECK_MSG(NOTED_NUMS(&rc, SCV_NOTE_THROUGHPUT_STEP, 1, 2, 32, 64), "%s", rc.notes); /* K=1 -> 2, B=32 -> 64 */
        scv_run_result_free(&res);
    }
    scv_err e = {0};
    scv_run_params p = scv_run_params_default();
    CHECK_EQ_INT(scv_run_params_set(&p, "policy", "greedy", &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "plan or throughput") != NULL, "%s", e.msg);
    scv_store_close(db);
}

/* The search budget: a short job profiles less; a configuration predicted far slower is
 * not profiled at all. */
static void t_search_budget(void)
{
    scv_store *db = open_db("budget.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-budget");
    p.search = SCV_SEARCH_FULL;
    p.policy.search_budget_share = 0.05;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK(isfinite(res.search_budget_s) && res.n_skipped_budget > 0);
    CHECK_MSG(res.n_profiled + res.n_skipped_budget + res.n_skipped_ruled_out == 8, "%d %d %d", res.n_profiled,
              res.n_skipped_budget, res.n_skipped_ruled_out);
    /* what it spent stays within the budget plus the last profile it started */
    CHECK_MSG(res.search_time_s <= res.search_budget_s + 2 * f.idle_per_segment + 0.5, "%g > %g", res.search_time_s,
              res.search_budget_s);
    scv_run_result_free(&res);
    /* a long job: the budget buys the full search except configurations ruled out: with a
     * costly K=4 (slow communication) they are predicted far slower */
    fake g = new_fake();
    g.need_e0 = 300;
    g.alpha = 0.05;
    d = driver_of(&g);
    p = params(db, "job-budget-2");
    p.search = SCV_SEARCH_FULL, p.max_epochs = 1000, p.target_epochs = 300;
    p.policy.search_budget_share = 0.05;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK_EQ_INT(res.n_skipped_budget, 0);
    CHECK_MSG(res.n_skipped_ruled_out > 0, "profiled %d", res.n_profiled);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A budget too small for any profile still buys the second worker count the plan needs
 * (else every other K's iteration time is extrapolated from one), with the trade stated;
 * nothing else beyond it. */
static void t_search_needs_two_k(void)
{
    scv_store *db = open_db("budget-k.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-budget-k");
    p.search = SCV_SEARCH_FULL;
    p.policy.search_budget_share = 1e-6;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK_MSG(noted(&r, SCV_NOTE_SEARCH_BEYOND), "%.3000s", r.notes);
    CHECK_MSG(res.n_profiled == 1 && res.n_skipped_budget > 0, "profiled %d, skipped %d", res.n_profiled,
              res.n_skipped_budget);
    int k[8] = {0}, nk = 0;
    for (size_t i = 0; i < res.n_steps; i++) {
        int j = 0;
        while (j < nk && k[j] != res.steps[i].workers) j++;
        if (j == nk && nk < 8) k[nk++] = res.steps[i].workers;
    }
    CHECK_MSG(nk >= 2, "trained at %d worker counts", nk);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* Evaluations that cost much (2 s each, against 0.05 epochs of training in about 0.4 s):
 * the warm-up and search widen their period so that they take at most search_eval_share
 * of the time, and say so; with the share off, the policy's period stays. */
static void t_search_eval_share(void)
{
    for (int off = 0; off < 2; off++) {
        scv_store *db = open_db(off ? "evalshare0.db" : "evalshare.db");
        fake f = new_fake();
        f.tau = 10000, f.acc_max = 0.97, f.acc_gap = 0.5, f.target = 0.9, f.eval_s = 2;
        scv_job_driver d = driver_of(&f);
        rec r = {0};
        scv_run_observer obs = {.ctx = &r, .on_event = on_event};
        scv_run_params p = params(db, "job-evalshare");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9;
        if (off) p.policy.search_eval_share = 0;
        scv_run_result res;
        scv_err e = {0};
        CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
        if (off) {
            CHECK_MSG(f.eval_every_max[0] == p.policy.search_eval_every_epochs, "%g", f.eval_every_max[0]);
            CHECK(!noted(&r, SCV_NOTE_EVAL_WIDENED));
        } else {
            CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_EVAL_WIDENED, NAN, NAN, NAN, 10), "%.3000s", r.notes); /* 10% of the time */
            CHECK_MSG(f.eval_every_max[0] > 2 * p.policy.search_eval_every_epochs, "%g", f.eval_every_max[0]);
        }
        CHECK(f.eval_every_max[1] == p.policy.eval_every_epochs);
        scv_run_result_free(&res);
        scv_store_close(db);
    }
}

/* The epochs run out during the warm-up: the run ends "not reached", without searching or
 * failing. */
static void t_epochs_spent_early(void)
{
    scv_store *db = open_db("spent.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-spent");
    p.max_epochs = 0.1;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK(res.state == SCV_STATE_DONE && !res.reached);
    CHECK_MSG(!strstr(r.seq, "train:") && !strstr(r.seq, "search:4"), "%s", r.seq);
    scv_run_result_free(&res);
    scv_store_close(db);
}

static void t_report(void)
{
    scv_store *db = open_db("rep.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-r");
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    char *js = scv_run_report_json(&p, &res);
    cJSON *o = js ? cJSON_Parse(js) : NULL;
    CHECK(o != NULL);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "reached")));
    const cJSON *at = cJSON_GetObjectItem(o, "actual_time_s");
    CHECK(cJSON_IsNumber(at) && fabs(at->valuedouble - res.actual_time_s) <= 1e-5 * res.actual_time_s);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o, "steps")) == (int)res.n_steps);
    cJSON_Delete(o);
    free(js);
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/rep", tmp);
    CHECK_EQ_INT(scv_run_report_write(&p, &res, dir, &e), SCV_OK);
    snprintf(path, sizeof path, "%s/report.md", dir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/tradeoff.svg", dir);
    CHECK(access(path, R_OK) == 0);
    /* a read-only directory: a clear error naming the file (root ignores modes: skip that check) */
    snprintf(dir, sizeof dir, "%s/ro", tmp);
    mkdir(dir, 0555);
    chmod(dir, 0555);
    if (geteuid() != 0) {
        CHECK(scv_run_report_write(&p, &res, dir, &e) == SCV_EIO);
        CHECK(strstr(e.msg, "report.json") != NULL);
    }
    /* a report directory that cannot be created */
    CHECK(scv_run_report_write(&p, &res, "/proc/no/such/dir", &e) != SCV_OK);
    CHECK_MSG(strstr(e.msg, "/proc/no/such/dir") != NULL, "%s", e.msg);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* run --compress: with communication that Top-k makes much cheaper, the plan chooses the
 * option; training segments get it in their spec, warm-up and search stay dense; the
 * report names it beside the dense choice. A SelSync option goes the same way. */
/* A fake job whose communication is bandwidth: 50 ms of a step, a 1e6-parameter model. */
static fake comm_bound_fake(void)
{
    fake f = new_fake();
    f.alpha = 1e-5, f.beta_comm = 0.05, f.job.n_params = 1e6;
    return f;
}

static void t_compress(void)
{
    scv_run_params q = scv_run_params_default();
    scv_err e = {0};
    CHECK_EQ_INT(scv_run_params_set(&q, "compress", "topk:10,selsync:0.9", &e), SCV_OK);
    CHECK(q.n_comms == 3 && q.comms[2].kind == SCV_PLAN_SELSYNC && q.comms[2].lssr == 0.9);
    CHECK_EQ_INT(scv_run_params_set(&q, "compress", "topk:1", &e), SCV_EINVAL);
    CHECK_EQ_INT(scv_run_params_set(&q, "compress", "topk:100:allgather", &e), SCV_OK);
    CHECK_EQ_INT(scv_run_params_set(&q, "compress-iterations", "1.2", &e), SCV_OK);
    CHECK(q.n_comms == 2 && q.comms[0].kind == SCV_PLAN_DENSE && q.comms[1].kind == SCV_PLAN_TOPK);
    CHECK_NEAR(q.comms[1].iter_factor, 1.2, 0, 1e-12);

    scv_store *db = open_db("compress.db");
    fake f = comm_bound_fake();
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-compress");
    p.objective = SCV_OBJ_TIME;
    CHECK_EQ_INT(scv_run_params_set(&p, "compress", "none,topk:100:allgather", &e), SCV_OK);
    scv_run_result res;
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK(res.decision != NULL);
    if (!res.decision) return;
    const scv_plan_point *ch = &res.decision->points[res.decision->chosen];
    CHECK_MSG(ch->comm_opt.kind == SCV_PLAN_TOPK && ch->comm_opt.cf == 100, "chosen comm %d", ch->comm_opt.kind);
    CHECK(res.decision->chosen_dense >= 0 &&
          res.decision->points[res.decision->chosen_dense].comm_opt.kind == SCV_PLAN_DENSE);
    CHECK_MSG(f.comm_train > 0 && f.comm_other == 0, "train %d (dense %d), other %d: %s", f.comm_train, f.dense_train,
              f.comm_other, r.seq);
    CHECK_MSG(!strcmp(f.comm_coll, "allgather"), "%s", f.comm_coll);
    CHECK_MSG(noted_with(&r, SCV_NOTE_DECISION, 0, NULL, "topk:100"), "%s", r.notes);
    CHECK(res.comm == 1);
    char *js = scv_run_report_json(&p, &res);
    cJSON *o = js ? cJSON_Parse(js) : NULL;
    const cJSON *c = cJSON_GetObjectItem(o, "communication");
    CHECK(cJSON_IsString(cJSON_GetObjectItem(c, "chosen")) &&
          !strcmp(cJSON_GetObjectItem(c, "chosen")->valuestring, "topk:100:allgather"));
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(c, "chosen_dense")));
    cJSON_Delete(o);
    free(js);
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/repc", tmp);
    CHECK_EQ_INT(scv_run_report_write(&p, &res, dir, &e), SCV_OK);
    snprintf(path, sizeof path, "%s/report.md", dir);
    FILE *fp = fopen(path, "r");
    char md[65536] = "";
    size_t got = fp ? fread(md, 1, sizeof md - 1, fp) : 0;
    md[got] = 0;
    if (fp) fclose(fp);
    CHECK_MSG(strstr(md, "Communication: **topk:100:allgather**") && strstr(md, "the dense choice beside it"), "%s",
              md);
    scv_run_result_free(&res);
    /* SelSync at 95% local steps: a twentieth of the synchronisations' bytes (twice the
     * gradient's: parameters and momenta), cheaper still; trained as such */
    fake g = comm_bound_fake();
    d = driver_of(&g);
    memset(&r, 0, sizeof r);
    p = params(db, "job-selsync");
    p.objective = SCV_OBJ_TIME;
    CHECK_EQ_INT(scv_run_params_set(&p, "compress", "none,selsync:0.95", &e), SCV_OK);
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK(res.decision && res.decision->points[res.decision->chosen].comm_opt.kind == SCV_PLAN_SELSYNC);
    CHECK_MSG(g.comm_train > 0 && g.comm_other == 0 && g.comm_kind == SCV_PLAN_SELSYNC, "train %d, other %d, kind %d",
              g.comm_train, g.comm_other, g.comm_kind);
    CHECK_MSG(noted_with(&r, SCV_NOTE_DECISION, 0, NULL, "with selsync:0.95") &&
                  !noted_with(&r, SCV_NOTE_DECISION, 0, NULL, "selsync:0.95 (allgather"), "%.300s", r.notes);
    /* the fake's SelSync steps cost what dense ones do (it prices no option): the first
     * training segment is off the plan, the option's times are scaled by what it measured,
     * once: no re-plan on the same drift after each segment */
    int corrected = noted_with(&r, SCV_NOTE_DRIFT_OPTION, 0, NULL, "selsync:0.95");
    CHECK_MSG(corrected == 1, "%d corrections: %.2000s", corrected, r.notes);
    js = scv_run_report_json(&p, &res);
    o = js ? cJSON_Parse(js) : NULL;
    c = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "communication"), "chosen");
    CHECK(cJSON_IsString(c) && !strcmp(c->valuestring, "selsync:0.95"));
    cJSON_Delete(o);
    free(js);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* The run's headline (issue 24 item 20): a run reached through the subset evaluations'
 * window whose whole test set is under the target says so, with the tolerance and both
 * figures; never a bare "target reached: test accuracy 0.8567" for a 0.86 target. */
static void t_headline(void)
{
    scv_run_params p;
    memset(&p, 0, sizeof p);
    p.target_accuracy = 0.86;
    scv_run_result r;
    memset(&r, 0, sizeof r);
    r.reached = 1, r.accuracy = 0.8567;
    char h[256];
    scv_run_headline(&p, &r, 0.005, 0.8612, 2000, h, sizeof h);
    CHECK_MSG(!strcmp(h, "target reached within the confirmation tolerance 0.005 of 0.86: full test set 0.8567, "
                         "subset window mean 0.8612"), "%s", h);
    CHECK_MSG(!strstr(h, "target reached: test accuracy"), "%s", h);
    /* further under the target than the tolerance, or no subset: the window's mean did it */
    r.accuracy = 0.84;
    scv_run_headline(&p, &r, 0.005, 0.8612, 2000, h, sizeof h);
    CHECK_MSG(!strcmp(h, "target reached by the mean of the evaluation window (>= 0.86): last test accuracy 0.8400, "
                         "subset window mean 0.8612"), "%s", h);
    r.accuracy = 0.8567;
    scv_run_headline(&p, &r, 0.005, 0.8612, 0, h, sizeof h);
    CHECK_MSG(!strncmp(h, "target reached by the mean of the evaluation window", 51) &&
              strstr(h, "evaluation window mean 0.8612"), "%s", h);
    r.accuracy = 0.8634; /* at or over the target: the plain headline */
    scv_run_headline(&p, &r, 0.005, 0.8612, 2000, h, sizeof h);
    CHECK_MSG(!strcmp(h, "target reached: test accuracy 0.8634"), "%s", h);
    r.reached = 0, r.accuracy = 0.8567;
    scv_run_headline(&p, &r, 0.005, NAN, 0, h, sizeof h);
    CHECK_MSG(!strcmp(h, "target NOT reached: test accuracy 0.8567"), "%s", h);
}

/* A warm-up whose noise settles before the learning curve has its points (2 evaluations at
 * one every 0.1 epochs) goes on at the same configuration until it has warmup_min_evals, so
 * the first plan forecasts the target instead of assuming nominal epochs. */
static void t_warmup_until_points(void)
{
    scv_store *db = open_db("warmup-points.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.9;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-warmup-points");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.policy.search_eval_every_epochs = 0.1;
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(!res.decision_relative && res.target_source == SCV_TARGET_CURVE, "%s", res.target_note);
    int warmups = 0;
    for (size_t i = 0; i < res.n_steps; i++) warmups += !strcmp(res.steps[i].phase, "warmup");
    CHECK_EQ_INT(warmups, 2);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A catalog of the given rows (provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr)
 * written to tmp/name and loaded (checked). */
static scv_catalog *test_catalog(const char *name, const char *rows)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\n", f);
        fputs(rows, f);
        fclose(f);
    }
    scv_catalog *c = NULL;
    CHECK_EQ_INT(scv_catalog_load(path, &c, NULL), SCV_OK);
    return c;
}

/* `run --vm` (issue 24 item 21): a run plans over the types it names besides its own. The
 * measured type (c5.xlarge) is the one trained on; the others are carried from its
 * measurements by the planner's stated method and marked so (extrapolated, how) in the plan,
 * report.json and report.md; a plan that chooses another type (cheaper here at the same
 * compute: the objective cost) leaves the run on its own type at that type's choice, and
 * the decision and a note name the type the plan chose and why the run stayed. */
static void t_vm_types(void)
{
    scv_catalog *vc = test_catalog("vm-types.csv", "aws,c5.xlarge,4,8,0.17\naws,cheap.xlarge,4,8,0.05\n"
                                                   "aws,big.2xlarge,8,16,0.34\n");
    scv_store *db = open_db("vm-types.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-vm-types");
    p.catalog = vc, p.objective = SCV_OBJ_COST;
    const int vms[] = {1, 2, 0}; /* cheap.xlarge, big.2xlarge and the run's own, named again */
    p.vms = vms, p.n_vms = 3;
    rec rc = {0};
    scv_run_observer obs = {.on_event = on_event, .ctx = &rc};
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK(res.plan != NULL && res.decision != NULL);
    int per_type[3] = {0}, unmarked = 0;
    for (size_t i = 0; res.decision && i < res.decision->n_points; i++) {
        const scv_plan_point *q = &res.decision->points[i];
        CHECK(q->vm >= 0 && q->vm < 3);
        per_type[q->vm]++;
        unmarked += (q->vm != 0) != (q->extrapolated && q->extrap != SCV_EXTRAP_NONE);
    }
    CHECK_MSG(per_type[0] > 0 && per_type[0] == per_type[1] && per_type[1] == per_type[2], "%d %d %d", per_type[0],
              per_type[1], per_type[2]);
    CHECK_EQ_INT(unmarked, 0);
    /* the run trains on its own type, and says which type the plan chose */
    const scv_plan_point *ch = res.decision ? &res.decision->points[res.decision->chosen] : NULL;
    CHECK(ch && ch->vm == 0);
    CHECK_MSG(strstr(res.why, "the plan chose cheap.xlarge") && strstr(res.why, "stays on c5.xlarge"), "%s", res.why);
    CHECK_MSG(noted_with(&rc, SCV_NOTE_VM_CHOSEN_ELSEWHERE, 0, NULL, "cheap.xlarge") &&
                  noted_with(&rc, SCV_NOTE_VM_CHOSEN_ELSEWHERE, 0, NULL, "c5.xlarge"), "%s", rc.notes);
    CHECK_MSG(NOTED_NUMS(&rc, SCV_NOTE_VM_TYPES, 3) && /* 3 planned: */
                  noted_with(&rc, SCV_NOTE_VM_TYPES, 0, NULL, "c5.xlarge (measured: the run trains on it); cheap.xlarge, "
                             "big.2xlarge (extrapolated: other CPU type, same threads, compute as measured)"),
              "%s", rc.notes);
    CHECK(fabs(res.price_hr - 0.17) < 1e-9);
    /* report.json: every point names its type and how it was predicted */
    char *js = scv_run_report_json(&p, &res);
    cJSON *o = js ? cJSON_Parse(js) : NULL;
    CHECK(o != NULL);
    int seen_ex = 0, seen_meas = 0;
    const cJSON *pts = cJSON_GetObjectItem(o, "points"), *it;
    cJSON_ArrayForEach(it, pts) {
        const char *vm = cJSON_GetStringValue(cJSON_GetObjectItem(it, "vm"));
        const char *how = cJSON_GetStringValue(cJSON_GetObjectItem(it, "how"));
        int ex = cJSON_IsTrue(cJSON_GetObjectItem(it, "extrapolated"));
        CHECK(vm && how);
        if (vm && how && strcmp(vm, "c5.xlarge")) seen_ex += ex && !strncmp(how, "extrapolated", 12);
        /* on the run's own type: "measured" where the run trained at the point's K and B, else
         * "predicted" (issue 26 item 7: a configuration never run is not "measured") */
        int K = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "workers"));
        int B = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "batch")), ran = 0;
        for (size_t s = 0; s < res.n_steps; s++)
            ran |= res.steps[s].iterations > 0 && res.steps[s].workers == K && res.steps[s].batch == B;
        if (vm && how && !strcmp(vm, "c5.xlarge")) seen_meas += !ex && !strcmp(how, ran ? "measured" : "predicted");
    }
    CHECK_MSG(seen_ex == 2 * per_type[0] && seen_meas == per_type[0], "%d %d", seen_ex, seen_meas);
    CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "why")), "the plan chose cheap.xlarge") != NULL);
    cJSON_Delete(o);
    free(js);
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/vm-types", tmp);
    CHECK_EQ_INT(scv_run_report_write(&p, &res, dir, &e), SCV_OK);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    CHECK_MSG(md && strstr(md, "| cheap.xlarge |") && strstr(md, "extrapolated"), "%s", md ? md : "(none)");
    free(md);
    scv_run_result_free(&res);
    /* the plan keeps the run's own type (the other costs more at the same compute): its
     * reason counts the types compared, and no note of another type's choice */
    const int dearer[] = {2}, beyond[] = {3};
    p.vms = beyond, p.n_vms = 1; /* an index past the catalog: refused, naming the setting */
    CHECK_EQ_INT(scv_run_params_check(&p, &e), SCV_EINVAL);
    CHECK_MSG(!strncmp(e.msg, "vm:", 3), "%s", e.msg);
    p.vms = dearer, p.n_vms = 1, p.job_key = "job-vm-types-own";
    memset(&rc, 0, sizeof rc);
    f = new_fake();
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK(res.decision && res.decision->points[res.decision->chosen].vm == 0);
    CHECK_MSG(strstr(res.why, "; over 2 VM types (1 extrapolated)") && !strstr(res.why, "the plan chose"), "%s", res.why);
    CHECK_MSG(!noted(&rc, SCV_NOTE_VM_CHOSEN_ELSEWHERE) && !noted(&rc, SCV_NOTE_VM_CHOSEN), "%s", rc.notes);
    scv_run_result_free(&res);
    scv_store_close(db);
    scv_catalog_free(vc);
}

/* `run --vm` trains on the chosen type where the driver holds it (issue 24 item 21): the
 * fake driver holds VMs of c5.xlarge and cheap.xlarge (scv_job_info.types); the plan chooses
 * cheap.xlarge (same compute, cheaper: objective cost), so every training segment names
 * cheap.xlarge (warm-up and search name c5.xlarge, the type measured), each step records its
 * type, the cost prices each step at its own type's rate and price_hr is cheap.xlarge's;
 * report.json's steps say the type. A driver holding fewer VMs of it than the choice's K:
 * the run stays, saying why. */
static void t_vm_train_on_chosen(void)
{
    scv_catalog *vc = test_catalog("vm-place.csv", "aws,c5.xlarge,4,8,0.17\naws,cheap.xlarge,4,8,0.05\n");
    scv_store *db = open_db("vm-place.db");
    fake f = new_fake();
    f.job.n_types = 2;
    snprintf(f.job.types[0], sizeof f.job.types[0], "c5.xlarge"), f.job.type_vms[0] = 4;
    snprintf(f.job.types[1], sizeof f.job.types[1], "cheap.xlarge"), f.job.type_vms[1] = 4;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-vm-place");
    p.catalog = vc, p.objective = SCV_OBJ_COST;
    const int vms[] = {1};
    p.vms = vms, p.n_vms = 1;
    rec rc = {0};
    scv_run_observer obs = {.on_event = on_event, .ctx = &rc};
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    const scv_plan_point *ch = res.decision ? &res.decision->points[res.decision->chosen] : NULL;
    CHECK_MSG(ch && ch->vm == 1, "%s", res.why);
    CHECK_MSG(NOTED_NUMS(&rc, SCV_NOTE_VM_CHOSEN, NAN, NAN, 4), "%s", rc.notes); /* the driver holds 4 VMs of it */
    /* the driver was asked for the type of every segment */
    CHECK_MSG(strstr(f.seg_vms, "warmup:c5.xlarge ") && strstr(f.seg_vms, "train:cheap.xlarge ") &&
              !strstr(f.seg_vms, "train:c5.xlarge") && !strstr(f.seg_vms, "(none)") &&
              !strstr(f.seg_vms, "warmup:cheap") && !strstr(f.seg_vms, "search:cheap"), "%s", f.seg_vms);
    /* each step names its type and is priced at its rate */
    double cost = 0;
    int n_train = 0;
    for (size_t i = 0; i < res.n_steps; i++) {
        const scv_run_step *t = &res.steps[i];
        int train = !strcmp(t->phase, "train");
        n_train += train;
        CHECK_MSG(!strcmp(t->vm, train ? "cheap.xlarge" : "c5.xlarge"), "step %zu (%s): %s", i, t->phase, t->vm);
        double secs = (t->iterations ? t->last_end - t->first_start : 0) + (isfinite(t->idle_before) ? t->idle_before : 0);
        cost += scv_cost_usd(t->workers, secs, train ? 0.05 : 0.17);
    }
    CHECK(n_train > 0);
    CHECK_MSG(fabs(res.actual_cost - cost) < 1e-9 * fmax(1, cost), "%.9g vs %.9g", res.actual_cost, cost);
    CHECK_MSG(fabs(res.price_hr - 0.05) < 1e-9, "%g", res.price_hr);
    /* report.json's steps say the type */
    char *js = scv_run_report_json(&p, &res);
    cJSON *o = js ? cJSON_Parse(js) : NULL;
    CHECK(o != NULL);
    const cJSON *it;
    int named = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "steps")) {
        const char *vm = cJSON_GetStringValue(cJSON_GetObjectItem(it, "vm"));
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(it, "phase"));
        named += vm && ph && !strcmp(vm, strcmp(ph, "train") ? "c5.xlarge" : "cheap.xlarge");
    }
    CHECK_EQ_INT(named, (int)res.n_steps);
    cJSON_Delete(o);
    free(js);
    /* the stored steps keep the type (a resumed run prices them so) */
    scv_run_step *st = NULL;
    size_t ns = 0;
    CHECK_EQ_INT(scv_store_load_steps(db, res.run_id, &st, &ns, NULL), SCV_OK);
    CHECK(ns == res.n_steps && ns && !strcmp(st[ns - 1].vm, "cheap.xlarge"));
    free(st);
    int K = ch ? ch->workers : 1;
    scv_run_result_free(&res);
    /* fewer VMs of the chosen type than its K (none, at K = 1): the run stays on its own
     * type, saying why */
    {
        f = new_fake();
        f.job.n_types = 1;
        snprintf(f.job.types[0], sizeof f.job.types[0], "cheap.xlarge"), f.job.type_vms[0] = K - 1;
        p.job_key = "job-vm-place-few";
        memset(&rc, 0, sizeof rc);
        CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
        CHECK_MSG(!strstr(f.seg_vms, "cheap.xlarge"), "%s", f.seg_vms);
        CHECK_MSG(noted_with(&rc, SCV_NOTE_VM_CHOSEN_ELSEWHERE, 0, NULL, "the driver holds") &&
                      noted_with(&rc, SCV_NOTE_VM_CHOSEN_ELSEWHERE, 0, NULL, "of cheap.xlarge"), "%s", rc.notes);
        CHECK(fabs(res.price_hr - 0.17) < 1e-9);
        scv_run_result_free(&res);
    }
    scv_store_close(db);
    scv_catalog_free(vc);
}

/* A slow worker while training (issue 25 item 5): every training segment at K >= 2 carries
 * the speeds under which the model (model/hetero.c) predicts dropping or replacing a slow
 * worker beats keeping it, computed from the fitted performance model and the work left;
 * warm-up and search segments look for none; a straggler the job decided on by the model
 * gets the predicted times to finish in its note. */
static void t_hetero_rule(void)
{
    scv_store *db = open_db("hetero.db");
    fake f = new_fake();
    f.strag_ratio = 0.3;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-hetero");
    p.objective = SCV_OBJ_TIME; /* K = 4: the fastest */
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(res.reached && res.decision && res.decision->points[res.decision->chosen].workers >= 2, "%s", r.seq);
    CHECK_MSG(f.strag_train > 0 && f.strag_by_model == 1, "%d training segments, by_model %d", f.strag_train,
              f.strag_by_model);
    CHECK_MSG(f.strag_drop > 0 && f.strag_drop <= 1 && f.strag_rep >= 0 && f.strag_rep <= 1, "drop %g, replace %g",
              f.strag_drop, f.strag_rep);
    /* the fake's times: t(K, B) = c0 + c1 B / K + alpha (K - 1), the fit's own; keeping a worker at
     * 0.3 of the others' speed costs more than K - 1 workers (its step and drag on the exchange) */
    CHECK_MSG(f.strag_drop > 0.3, "drop under %g", f.strag_drop);
    CHECK_MSG(noted_with(&r, SCV_NOTE_STRAGGLER, 0, NULL, "predicted to finish: absorb"), "%.3000s", r.notes);
    char *js = scv_run_report_json(&p, &res); /* each straggler with what was done: kept here */
    CHECK(js && strstr(js, "\"replaced\":false,\"dropped\":false"));
    free(js);
    scv_run_result_free(&res);
    /* a space of K = 2 alone: K - 1 is under the user's bound, never a drop (a spare may
     * still replace it) */
    fake g = new_fake();
    g.strag_ratio = 0.3;
    d = driver_of(&g);
    p = params(db, "job-hetero-k2");
    CHECK_EQ_INT(scv_run_params_set(&p, "workers", "2", NULL), SCV_OK);
    CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(g.strag_train > 0 && g.strag_by_model == 1 && g.strag_drop == 0, "by_model %d, drop under %g",
              g.strag_by_model, g.strag_drop);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* Notes as data (issue 36 item 6): every note, decision and retry of a run has a code, its
 * name is the map's, and its numbers and strings are those its text shows (the search's,
 * the target's and the decision's notes of a partial search, read back as the text renders
 * them). */
static void t_notes_as_data(void)
{
    CHECK(!strcmp(scv_note_code_name(SCV_NOTE_CARRY_CORPUS), "carry_corpus"));
    CHECK(!strcmp(scv_note_code_name(SCV_NOTE_PREEMPT_RESTORED), "preempt_restored"));
    CHECK(scv_note_code_name(SCV_NOTE_COUNT) == NULL && scv_note_code_name((scv_note_code)-1) == NULL);
    scv_store *db = open_db("notes.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-notes");
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(r.n_nt >= 3 && r.uncoded == 0, "%d notes, %d uncoded: %.2000s", r.n_nt, r.uncoded, r.notes);
    /* each number and string of the decision is in its text, in order */
    int decisions = 0;
    const char *q = r.notes;
    for (int i = 0; i < r.n_nt; i++) {
        if (r.nt[i].code != SCV_NOTE_DECISION) continue;
        decisions++;
        char k[64];
        snprintf(k, sizeof k, "K=%.0f, B=%.0f", r.nt[i].num[0], r.nt[i].num[1]);
        CHECK_MSG(r.nt[i].n_num >= 2 && r.nt[i].num[0] == res.workers && r.nt[i].num[1] == res.batch, "%s", k);
        CHECK_MSG((q = strstr(q, k)) != NULL && r.nt[i].n_str >= 1 && strstr(q, r.nt[i].str[r.nt[i].n_str - 1]),
                  "%s: %.500s", k, r.notes);
    }
    CHECK_EQ_INT(decisions, 1);
    scv_run_result_free(&res);
    scv_store_close(db);
}

static const scv_test tests[] = {
    {"notes_as_data", t_notes_as_data},
    {"headline", t_headline},
    {"compress", t_compress},
    {"params", t_params},
    {"partial_full_none", t_partial_full_none},
    {"drift_switch_or_stay", t_drift_switch_or_stay},
    {"throughput_policy", t_throughput_policy},
    {"search_budget", t_search_budget},
    {"search_eval_share", t_search_eval_share},
    {"search_needs_two_k", t_search_needs_two_k},
    {"epochs_spent_early", t_epochs_spent_early},
    {"report", t_report},
    {"warmup_until_points", t_warmup_until_points},
    {"vm_types", t_vm_types},
    {"vm_train_on_chosen", t_vm_train_on_chosen},
    {"hetero_rule", t_hetero_rule},
};
LOOP_TEST_MAIN(tests, "loop")
