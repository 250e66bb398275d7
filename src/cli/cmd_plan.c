/*
 * cmd_plan.c - `scavenger plan`: fits the performance and statistical models to a profile
 * (the trainer's metrics), prices every (VM type, K, B) of the search space with the
 * catalog, and prints the Pareto front, the chosen configuration and why (--json for a
 * machine-readable report, --svg for the cost-time trade-off figure); --mix adds mixed
 * clusters (docs/MODEL.md "Mixed clusters"), --compress communication options (Top-k,
 * SelSync; docs/MODEL.md "Compression in the plan"), reported beside the plan without them;
 * --preempt-rate/--spot-risk price spot with the risk of preemption against on-demand, a mix
 * and a fallback to on-demand before --deadline (model/spot.c). The options become
 * scv_plan_args; the pipeline and the JSON report are src/io/plan_job.c, shared with
 * scv_plan_json().
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "../io/json_out.h"
#include "../io/plan_job.h"
#include "../io/svg.h"
#include "scv.h"
#include "../core/util.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLAN_USAGE "usage: scavenger plan --profile METRICS[,...] [options]\n"

enum {
    O_PROFILE = 256, O_CATALOG, O_MEASURED, O_TEPOCHS, O_BASE, O_TRUN, O_TACC, O_VM, O_WORKERS,
    O_BATCH, O_BMIN, O_BMAX, O_COMM, O_OVERLAP, O_STAT, O_PRICING, O_OBJ, O_DEADLINE, O_BUDGET, O_VALUE,
    O_TOP, O_SVG, O_JSON, O_ALL, O_SORT, O_GPU, O_MIX, O_COMPRESS, O_COMPRESS_ITERS, O_PREEMPT, O_SPOT_RISK,
    O_RECOVERY, O_SPOT_RESTART, O_SPOT_IDLE, O_SPOT_REPLACE
};

/* plan's options, declared once: getopt_long's table, --help, the completion and the man
 * page are made from it (opt.c) */
const scv_option PLAN_OPTIONS[] = {
    {NULL, NULL, "Input:", 0, 0, NULL, {0}},
    {"profile", "FILES", "metrics files that `scavenger train` wrote (comma-separated)", O_PROFILE, 0, NULL, {0}},
    {"catalog", "CSV", "VM prices (default data/vm-catalog.csv)", O_CATALOG, 0, NULL, {0}},
    {"measured-on", "TYPE", "catalog type the measurements stand for (default: the\nprofile's VM type)", O_MEASURED,
     0, NULL, {0}},
    {NULL, NULL, "Target (one of):", 0, 0, NULL, {0}},
    {"target-epochs", "E", "epochs to the target at --base-batch B0", O_TEPOCHS, 0, NULL, {0}},
    {"base-batch", "B0", "(default: the smallest profiled batch)", O_BASE, 0, NULL, {0}},
    {"target-run", "FILE", "epochs a previous run took to reach accuracy A (with\n--target-accuracy A)", O_TRUN, 0,
     NULL, {0}},
    {"target-accuracy", "A", "the accuracy of --target-run", O_TACC, 0, NULL, {0}},
    {NULL, NULL, "Search space:", 0, 0, NULL, {0}},
    {"vm", "LIST|all", "VM types to plan over (default: the measured type)", O_VM, 0, NULL, {0}},
    {"workers", "SPEC", "1..64 (default), a list 1,2,8, or a range with step 1..64:4", O_WORKERS, 0, NULL, {0}},
    {"batch", "SPEC", "32..4096 (default; powers of two), 64..1024:64, or a list", O_BATCH, 0, NULL, {0}},
    {"b-min", "N", "per-worker batch bounds: the least", O_BMIN, 0, NULL, {0}},
    {"b-max", "N", "and the most", O_BMAX, 0, NULL, {0}},
    {"mix", "SPEC", "also plan a mixed cluster TYPE:COUNT[,TYPE:COUNT...]\n"
                    "(up to 4 types; K = the counts' sum; per-type batches\n"
                    "as dynamic batching sets them; the slowest link\n"
                    "communicates); repeat, or separate mixes by ';'", O_MIX, 0, NULL, {0}},
    {"compress", "LIST", "also plan communication options: none, topk:CF[:auto|\n"
                         "allgather|artopk], selsync:LSSR (e.g. none,topk:100,\n"
                         "selsync:0.9); dense is always planned, and its own front\n"
                         "is reported beside", O_COMPRESS, 0, NULL, {0}},
    {"compress-iterations", "R", "iterations to target of every option relative to dense\n"
                                 "(default 1: as dense). An assumption: compression's effect\n"
                                 "on convergence is not modelled", O_COMPRESS_ITERS, 0, NULL, {0}},
    {NULL, NULL, "Models:", 0, 0, NULL, {0}},
    {"comm", "ring|ps", "collective of the parallel model (default ring)", O_COMM, 0, "ring|ps", {0}},
    {"overlap", "X", "compute/communication overlap in [0,1] (default 0)", O_OVERLAP, 0, NULL, {0}},
    {"stat", "gns|scavenger", "statistical model (default gns)", O_STAT, 0, "gns|scavenger", {0}},
    {"pricing", "P", "ondemand (default) | spot | memory", O_PRICING, 0, "ondemand|spot|memory", {0}},
    {"preempt-rate", "R|TYPE=R,..", "spot preemptions per VM-hour, for every type or per\n"
                                    "type (default: the provider's published rate, MODEL.md);\n"
                                    "compares on-demand, spot, a mix and spot falling back\n"
                                    "to on-demand before --deadline", O_PREEMPT, 0, NULL, {0}},
    {"spot-risk", NULL, "compare those pricings with the default rates (also on\n"
                        "with --pricing spot or --preempt-rate)", O_SPOT_RISK, 0, NULL, {0}},
    {"spot-recovery", "restart|inplace", "how a preemption is survived: checkpoint-restart\n"
                                         "(default) or a shrink/grow in place", O_RECOVERY, 0,
     "restart|inplace", {0}},
    {"spot-restart", "S", "seconds a checkpoint-restart stands still (default 80;\n"
                          "the work since the last checkpoint is added)", O_SPOT_RESTART, 0, NULL, {0}},
    {"spot-idle", "S", "seconds a shrink and a grow in place stand still (default 1)", O_SPOT_IDLE, 0, NULL, {0}},
    {"spot-replace", "S", "seconds until a replacement VM joins, the job at K - 1\n"
                          "meanwhile (default 120; in place: from the notice)", O_SPOT_REPLACE, 0, NULL, {0}},
    {"assume-gpu-speedup", "X", "include GPU types with compute X times faster than the\n"
                                "measured CPU type (else GPU types are left out: CPU\n"
                                "measurements do not predict them)", O_GPU, 0, NULL, {0}},
    {NULL, NULL, "Choice:", 0, 0, NULL, {0}},
    {"objective", "O", "time | cost | knee | utility (default knee)", O_OBJ, 0, "time|cost|knee|utility", {0}},
    {"value-per-hour", "V", "utility: $ an hour saved is worth; the choice minimises\n"
                            "cost + V x hours (Or et al.'s utility against cost)", O_VALUE, 0, NULL, {0}},
    {"deadline", "D", "seconds, or 45m, 2.5h", O_DEADLINE, 0, NULL, {0}},
    {"budget", "USD", "a bound in dollars", O_BUDGET, 0, NULL, {0}},
    {NULL, NULL, "Output:", 0, 0, NULL, {0}},
    {"top", "N", "rows of the table (default 12)", O_TOP, 0, NULL, {0}},
    {"svg", "FILE", "cost-time curves, Pareto front and the choice", O_SVG, 0, NULL, {0}},
    {"json", NULL, "a JSON report on stdout instead of the table", O_JSON, 0, NULL, {0}},
    {"all", NULL, "list every configuration, not only the Pareto front", O_ALL, 0, NULL, {0}},
    {"sort", "KEY", "table order: time (default) | cost | workers | batch", O_SORT, 0, "time|cost|workers|batch", {0}},
    {"help", NULL, "this text (also -h)", 0, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

static void help(void)
{
    printf(PLAN_USAGE "\nPredicts time and cost of every (VM type, K, B) from measured configurations and\n"
                      "picks one.\n\n");
    cli_opt_help(stdout, PLAN_OPTIONS, 24, 0);
}

/* --json on the command line: an error is also a JSON object on stdout, {"error": MESSAGE,
 * "exit_status": N}, so that a script reading stdout sees why (the exit status is kept) */
static int want_json;

static void json_error(const char *msg, int rc)
{
    if (!want_json) return;
    fputs("{\"error\":", stdout);
    scv_json_str(stdout, msg);
    printf(",\"exit_status\":%d}\n", rc);
}

static int usage_error(const char *fmt, const char *arg)
{
    char m[1024];
    snprintf(m, sizeof m, fmt, arg);
    json_error(m, EXIT_USAGE);
    return cli_usage_error("plan", PLAN_USAGE, fmt, arg);
}

/* Table order (--sort): the first key, then the others to break ties. */
enum { SORT_TIME = 0, SORT_COST, SORT_WORKERS, SORT_BATCH };
static const char *const SORT_KEYS[] = {"time", "cost", "workers", "batch", NULL};

typedef struct {
    double key[4];
    size_t idx;
} sort_row;

static int cmp_rows(const void *a, const void *b)
{
    const sort_row *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->key[i] != y->key[i]) return x->key[i] < y->key[i] ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Indices of the rows to print (every point, or the front) in the order of `sort`;
 * malloc'ed, NULL when out of memory. */
static size_t *table_order(const scv_plan_result *res, int all, int sort, size_t *n)
{
    *n = all ? res->n_points : res->n_front;
    sort_row *rows = malloc(sizeof(sort_row) * (*n ? *n : 1));
    size_t *order = malloc(sizeof(size_t) * (*n ? *n : 1));
    if (!rows || !order) {
        free(rows);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) {
        size_t j = all ? i : res->front[i];
        const scv_plan_point *p = &res->points[j];
        double t = p->time_s, c = p->cost, k = p->workers, b = p->batch;
        sort_row *r = &rows[i];
        r->idx = j;
        switch (sort) {
        case SORT_COST: r->key[0] = c, r->key[1] = t, r->key[2] = k, r->key[3] = b; break;
        case SORT_WORKERS: r->key[0] = k, r->key[1] = b, r->key[2] = t, r->key[3] = c; break;
        case SORT_BATCH: r->key[0] = b, r->key[1] = k, r->key[2] = t, r->key[3] = c; break;
        default: r->key[0] = t, r->key[1] = c, r->key[2] = k, r->key[3] = b; break;
        }
    }
    qsort(rows, *n, sizeof *rows, cmp_rows);
    for (size_t i = 0; i < *n; i++) order[i] = rows[i].idx;
    free(rows);
    return order;
}

/* A point for people: "c5.xlarge K=8 B=512, 5.1 min, $0.30". */
static void point_words(const scv_catalog *cat, const scv_plan_point *p, char *buf, size_t cap)
{
    char t[32], c[32], vm[512];
    scv_fmt_time(p->time_s, t, sizeof t);
    scv_fmt_usd(p->cost, c, sizeof c);
    if (p->mix_types.n > 0) scv_vm_mix_format(cat, &p->mix_types, vm, sizeof vm);
    else snprintf(vm, sizeof vm, "%s", cat->vms[p->vm].name);
    snprintf(buf, cap, "%.200s K=%d B=%d, %s, %s", vm, p->workers, p->batch, t, c);
}

/* The plan without compression, beside the one with it: the dense front's fastest point and
 * the objective's choice on it (under the same bounds); and what the options assume. */
static void without_compression(const scv_catalog *cat, const scv_plan_result *res, scv_objective obj)
{
    char a[320], b[320];
    if (res->comm_note[0]) printf("compression: %s\n", res->comm_note);
    if (!res->n_front_dense) return;
    point_words(cat, &res->points[res->front_dense[0]], a, sizeof a);
    printf("without compression (%zu point(s) on the dense front): the fastest is %s", res->n_front_dense, a);
    if (res->chosen_dense < 0) printf("; none meets the deadline or budget\n");
    else if (obj == SCV_OBJ_TIME) printf("\n");
    else {
        point_words(cat, &res->points[res->chosen_dense], b, sizeof b);
        printf("; the %s is %s\n", obj == SCV_OBJ_COST ? "cheapest" : obj == SCV_OBJ_KNEE ? "knee" : "choice by utility",
               b);
    }
}

/* plan's options as parsed */
typedef struct plan_cli {
    const char *profile, *catalog, *measured, *trun, *vms_arg, *workers_arg, *batch_arg, *svg, *compress;
    double tepochs, tacc, overlap, deadline, budget, gpu_speedup, value, compress_iters;
    int64_t base, bmin, bmax, top;
    const char *preempt_rate;
    int json, all, sort, spot_risk, spot_inplace;
    scv_spot_policy spot_pol;  /* the default with --spot-restart, --spot-idle, --spot-replace */
    scv_topology topology;
    scv_stat_kind stat;
    scv_pricing pricing;
    scv_objective obj;
    const char *mix_args[64]; /* every --mix, joined with ';' once parsed */
    size_t n_mix_args, mix_len;
} plan_cli;

/* argv into *o: -1 to go on, else the exit status (--help, a usage error) */
static int plan_options(int argc, char **argv, plan_cli *o)
{
    struct option opts[sizeof PLAN_OPTIONS / sizeof PLAN_OPTIONS[0] + 2];
    if (cli_opt_getopt(PLAN_OPTIONS, opts, sizeof opts / sizeof opts[0]) < 0) return EXIT_FAIL;
    scv_err err = {0};
    int64_t iv;
    enum { MAX_MIX_ARGS = sizeof o->mix_args / sizeof o->mix_args[0] };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': help(); return EXIT_OK;
        case O_PROFILE: o->profile = optarg; break;
        case O_CATALOG: o->catalog = optarg; break;
        case O_MEASURED: o->measured = optarg; break;
        case O_TRUN: o->trun = optarg; break;
        case O_VM: o->vms_arg = optarg; break;
        case O_WORKERS: o->workers_arg = optarg; break;
        case O_BATCH: o->batch_arg = optarg; break;
        case O_SVG: o->svg = optarg; break;
        case O_JSON: o->json = 1; break;
        case O_MIX:
            if (o->n_mix_args == MAX_MIX_ARGS) return usage_error("--mix '%s': too many --mix (at most 64)", optarg);
            o->mix_args[o->n_mix_args++] = optarg;
            o->mix_len += strlen(optarg) + 1;
            break;
        case O_ALL: o->all = 1; break;
        case O_PREEMPT: { /* the form here; the types against the catalog once it is loaded */
            scv_spot_rates r;
            if (scv_spot_rates_parse(optarg, NULL, &r, &err))
                return usage_error("--preempt-rate %s", err.msg);
            o->preempt_rate = optarg;
            break;
        }
        case O_SPOT_RISK: o->spot_risk = 1; break;
        case O_RECOVERY: {
            static const char *const HOW[] = {"restart", "inplace", NULL};
            if ((o->spot_inplace = cli_choice(optarg, HOW)) < 0)
                return usage_error("--spot-recovery '%s': expected restart or inplace", optarg);
            break;
        }
        case O_COMPRESS: {
            scv_plan_comm tmp[SCV_PLAN_MAX_COMMS + 1];
            size_t ntmp;
            if (scv_plan_comm_parse(optarg, 1, tmp, SCV_PLAN_MAX_COMMS + 1, &ntmp, &err))
                return usage_error("--compress %s", err.msg);
            o->compress = optarg;
            break;
        }
        case O_SPOT_RESTART: case O_SPOT_IDLE: case O_SPOT_REPLACE: {
            double s; /* seconds (0 included), or a duration with s, m or h */
            if (scv_parse_f64(optarg, &s)) s = scv_parse_duration(optarg);
            if (!(s >= 0) || s > 1e6) {
                char m[160];
                snprintf(m, sizeof m, "--%s '%.100s'",
                         c == O_SPOT_RESTART ? "spot-restart" : c == O_SPOT_IDLE ? "spot-idle" : "spot-replace", optarg);
                return usage_error("%s: expected seconds in [0, 1e6] (or a number with s, m or h)", m);
            }
            *(c == O_SPOT_RESTART ? &o->spot_pol.restart_s : c == O_SPOT_IDLE ? &o->spot_pol.inplace_idle_s
                                                                              : &o->spot_pol.replace_s) = s;
            break;
        }
        case O_COMPRESS_ITERS:
            if (scv_parse_f64(optarg, &o->compress_iters) || !(o->compress_iters > 0) || !isfinite(o->compress_iters))
                return usage_error("--compress-iterations '%s': expected a factor > 0 (iterations relative to dense)",
                                   optarg);
            break;
        case O_GPU:
            if (scv_parse_f64(optarg, &o->gpu_speedup) || !(o->gpu_speedup > 0))
                return usage_error("--assume-gpu-speedup '%s': expected a positive factor", optarg);
            break;
        case O_SORT:
            if ((o->sort = cli_choice(optarg, SORT_KEYS)) < 0)
                return usage_error("--sort '%s': expected time, cost, workers or batch", optarg);
            break;
        case O_TEPOCHS:
            if (scv_parse_f64(optarg, &o->tepochs) || !(o->tepochs > 0))
                return usage_error("--target-epochs '%s': expected a positive number", optarg);
            break;
        case O_TACC:
            if (scv_parse_f64(optarg, &o->tacc) || !(o->tacc > 0) || o->tacc > 1)
                return usage_error("--target-accuracy '%s': expected a number in (0,1]", optarg);
            break;
        case O_OVERLAP:
            if (scv_parse_f64(optarg, &o->overlap) || o->overlap < 0 || o->overlap > 1)
                return usage_error("--overlap '%s': expected a number in [0,1]", optarg);
            break;
        case O_BUDGET:
            if (scv_parse_f64(optarg, &o->budget) || !(o->budget > 0))
                return usage_error("--budget '%s': expected a positive number of dollars", optarg);
            break;
        case O_VALUE:
            if (scv_parse_f64(optarg, &o->value) || !(o->value > 0) || !isfinite(o->value))
                return usage_error("--value-per-hour '%s': expected a positive number of dollars", optarg);
            break;
        case O_DEADLINE:
            if ((o->deadline = scv_parse_duration(optarg)) < 0)
                return usage_error("--deadline '%s': expected seconds, or a number with s, m or h", optarg);
            break;
        case O_BASE: case O_BMIN: case O_BMAX: case O_TOP:
            if (scv_parse_i64(optarg, &iv) || iv < 1 || iv > (1 << 24))
                return usage_error("'%s': expected a positive integer", optarg);
            if (c == O_BASE) o->base = iv;
            else if (c == O_BMIN) o->bmin = iv;
            else if (c == O_BMAX) o->bmax = iv;
            else o->top = iv;
            break;
        case O_COMM:
            if (scv_topology_from_name(optarg, &o->topology, &err)) return usage_error("--comm: %s", err.msg);
            break;
        case O_STAT:
            if (scv_stat_from_name(optarg, &o->stat, &err)) return usage_error("--stat: %s", err.msg);
            break;
        case O_PRICING:
            if (scv_pricing_from_name(optarg, &o->pricing, &err)) return usage_error("--pricing: %s", err.msg);
            break;
        case O_OBJ:
            if (scv_objective_from_name(optarg, &o->obj, &err)) return usage_error("--objective: %s", err.msg);
            break;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    return -1;
}

/* The plan for people: the models, the table of the front (or every point) and the choice.
 * Nonzero with err set when out of memory. */
static int print_table(const plan_cli *o, const scv_plan_job *job, scv_err *err)
{
    const scv_plan_result *res = job->res;
    const scv_catalog *cat = job->cat;
    const scv_plan_point *ch = &res->points[res->chosen];
    const scv_perf_model *perf = &job->perf;
    const scv_stat_model *sm = &job->stat;
    printf("profile: %zu configuration(s) of %s measured on %s; target %.2f epochs at B=%d\n",
           job->prof->n, job->prof->job.arch, job->measured->name, job->target_epochs, job->target_batch);
    if (job->scaling[0]) printf("%s\n", job->scaling);
    if (job->left_out[0]) printf("note: %s\n", job->left_out);
    printf("parallel model (%s): t_iter = %.3g + %.3g b ms%s; fit error %.1f%% on %d points%s%s\n",
           o->topology == SCV_TOPO_RING ? "ring allreduce" : "parameter server", perf->c0 * 1e3,
           perf->c1 * 1e3, perf->n_points ? " + comm(K)" : "", 100 * perf->mare, perf->n_points,
           perf->note[0] ? "; " : "", perf->note);
    if (o->stat == SCV_STAT_GNS)
        printf("statistical model (gradient noise scale): B_crit = %.1f, S_min = %.0f iterations\n",
               sm->b_simple, sm->s_min);
    else
        printf("statistical model (Scavenger): gamma/K = %.3g + %.3g/sqrt(B), epochs = %.3g gamma/K\n",
               sm->gamma_a, sm->gamma_s, sm->theta);
    printf("%zu configurations evaluated, %zu on the Pareto front%s\n\n", res->n_points,
           res->n_front, res->n_excluded_memory ? " (some excluded: batch does not fit memory)" : "");
    size_t rows = 0, *order = table_order(res, o->all, o->sort, &rows);
    if (!order) {
        scv_err_set(err, SCV_ENOMEM, "out of memory");
        return 1;
    }
    printf("%s, by %s:\n", o->all ? "every configuration" : "the Pareto front", SORT_KEYS[o->sort]);
    int with_comm = o->compress != NULL;
    scv_plan_print_header_ex(stdout, with_comm);
    for (size_t i = 0; i < rows && i < (size_t)o->top; i++) {
        size_t j = order[i];
        scv_plan_print_point_ex(stdout, cat, &res->points[j], (long)j == res->chosen ? ">" : " ", with_comm);
    }
    free(order);
    if (rows > (size_t)o->top)
        printf("   ... %zu more%s (--top N shows more)\n", rows - (size_t)o->top, o->all ? "" : " on the front");
    char t[32], c[32];
    scv_fmt_time(ch->time_s, t, sizeof t);
    scv_fmt_usd(ch->cost, c, sizeof c);
    if (res->note[0]) printf("\nNote: %s\n", res->note);
    if (with_comm) without_compression(cat, res, o->obj);
    char name[512], per[200] = "";
    if (ch->mix_types.n > 0) { /* a mix: its per-worker batches by type */
        scv_vm_mix_format(cat, &ch->mix_types, name, sizeof name);
        for (int i = 0, at = 0; i < ch->mix_types.n && at < (int)sizeof per; i++)
            at += snprintf(per + at, sizeof per - (size_t)at, "%s%.1f on %s", i ? ", " : " (per-worker batch ",
                           ch->mix_batch[i], cat->vms[ch->mix_types.vm[i]].name);
        if (per[0]) snprintf(per + strlen(per), sizeof per - strlen(per), ")");
    } else
        snprintf(name, sizeof name, "%s", cat->vms[ch->vm].name);
    char opt[80] = "";
    if (with_comm) { /* the chosen communication option */
        opt[0] = ',', opt[1] = ' ';
        scv_plan_comm_format(&ch->comm_opt, opt + 2, sizeof opt - 2);
    }
    printf("\nchosen: %s, K=%d, B=%d%s%s: %s (+-%.1f%%), %s (+-%.1f%%)%s%s -- %s\n",
           name, ch->workers, ch->batch, opt, per, t, 100 * ch->err_rel, c,
           100 * ch->err_rel, ch->extrapolated ? " -- " : "", ch->extrapolated ? scv_extrap_desc(ch->extrap) : "",
           res->why);
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    plan_cli o = {.workers_arg = "1..64", .batch_arg = "32..4096", .top = 12, .sort = SORT_TIME,
                  .topology = SCV_TOPO_RING, .stat = SCV_STAT_GNS, .pricing = SCV_PRICE_ONDEMAND, .obj = SCV_OBJ_KNEE,
                  .spot_pol = scv_spot_policy_default()};
    want_json = 0;
    for (int i = 1; i < argc; i++) want_json |= !strcmp(argv[i], "--json");
    int prc = plan_options(argc, argv, &o);
    if (prc >= 0) return prc;
    scv_err err = {0};
    if (!o.profile) return usage_error("%s", "--profile is required");
    if (!o.tepochs && !o.trun)
        return usage_error("%s", "give the target: --target-epochs E (with --base-batch) or --target-run FILE --target-accuracy A");
    if (o.trun && !o.tacc) return usage_error("%s", "--target-run needs --target-accuracy");
    if (o.bmin && o.bmax && o.bmin > o.bmax) return usage_error("%s", "--b-min is larger than --b-max");
    if (o.compress_iters && !o.compress) return usage_error("%s", "--compress-iterations needs --compress");
    int *workers = NULL, *batches = NULL;
    long nw = scv_parse_int_set(o.workers_arg, 0, 1, 100000, &workers, &err);
    if (nw < 0) return usage_error("--workers %s", err.msg);
    long nb = scv_parse_int_set(o.batch_arg, 1, 1, 1 << 24, &batches, &err);
    if (nb < 0) {
        free(workers);
        return usage_error("--batch %s", err.msg);
    }

    char *mixes = o.n_mix_args ? malloc(o.mix_len) : NULL;
    for (size_t i = 0, at = 0; mixes && i < o.n_mix_args; i++) {
        size_t n = strlen(o.mix_args[i]);
        memcpy(mixes + at, o.mix_args[i], n);
        at += n;
        mixes[at++] = i + 1 < o.n_mix_args ? ';' : 0;
    }
    int rc = EXIT_FAIL;
    scv_plan_args args = {.profile = o.profile, .catalog = o.catalog, .measured_on = o.measured,
                          .target_epochs = o.tepochs, .base_batch = (int)o.base, .target_run = o.trun,
                          .target_accuracy = o.tacc, .vms = o.vms_arg, .workers = workers,
                          .n_workers = (size_t)nw, .batches = batches, .n_batches = (size_t)nb,
                          .b_min = (int)o.bmin, .b_max = (int)o.bmax, .topology = o.topology, .overlap = o.overlap,
                          .stat = o.stat, .pricing = o.pricing, .gpu_speedup = o.gpu_speedup, .objective = o.obj,
                          .value_per_hour = o.value, .deadline_s = o.deadline, .budget = o.budget,
                          .all_points = o.all, .option_names = 1, .mixes = mixes, .compress = o.compress,
                          .compress_iterations = o.compress_iters, .preempt_rate = o.preempt_rate,
                          .spot_risk = o.spot_risk, .spot_inplace = o.spot_inplace, .spot_pol = &o.spot_pol};
    scv_plan_job job = {0};
    if (o.n_mix_args && !mixes) {
        scv_err_set(&err, SCV_ENOMEM, "out of memory");
        goto fail;
    }
    if (scv_plan_job_run(&args, &job, &err)) {
        if (job.bad_arg) rc = EXIT_USAGE;
        goto fail;
    }
    if (o.svg && scv_plan_svg_write(o.svg, job.cat, job.res, 0, 0, &err)) goto fail;
    if (o.json) {
        scv_plan_job_json(stdout, &args, &job);
        putchar('\n');
    } else if (print_table(&o, &job, &err)) {
        goto fail;
    } else {
        scv_plan_job_spot_print(stdout, &args, &job, (size_t)o.top);
    }
    rc = EXIT_OK;
fail:
    if (rc != EXIT_OK) {
        fprintf(stderr, "scavenger plan: %s\n", err.msg[0] ? err.msg : "out of memory");
        if (err.code == SCV_EINFEASIBLE) rc = EXIT_FAIL;
        json_error(err.msg[0] ? err.msg : "out of memory", rc);
    }
    scv_plan_job_free(&job);
    free(workers);
    free(batches);
    free(mixes);
    return rc;
}
