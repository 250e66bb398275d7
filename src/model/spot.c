/*
 * spot.c - spot pricing with the risk of preemption, for the planner (pure: libc, libm).
 * For one configuration (K workers, the on-demand-equivalent time T0 the planner predicts)
 * it prices four ways of buying it: on-demand, spot, a mix (m workers on-demand and K - m on
 * spot) and, with a deadline, spot that falls back to on-demand in time ("Can't Be Late",
 * Wu et al., NSDI'24); it picks the cheapest that meets the deadline. Units: seconds, US$,
 * preemptions per VM-hour.
 *
 *   lam_v   preemptions per VM-hour of type v: the user's figure (--preempt-rate TYPE=R or
 *           one R for all), else the policy's default for v's provider (below)
 *   L       wall time the whole job loses per preemption [s]:
 *             restart   restart_s + (ckpt_every / 2) t_iter   (relaunch from the last
 *                       checkpoint: on average half a checkpoint interval of work is lost)
 *             in place  inplace_idle_s                         (shrink within the notice,
 *                       grow when the replacement arrives; no work lost)
 *   d       = L + R c   [s]: plus the capacity missing until the replacement arrives, R =
 *           replace_s [s], during which the job trains on K - 1 of K workers with the same
 *           global batch B (the elastic driver keeps B and splits the leaving worker's share
 *           over the others: docs/CLUSTER.md "Surviving a preemption"), so the iterations to
 *           the target do not change and only the step time does:
 *             c = max(0, 1 - thr(K-1) / thr(K))   [share of the job's progress rate lost]
 *             thr(K-1) / thr(K) = (t_iter(K) + e) / (t_iter(K-1) + e)   at the same B
 *           (e: the evaluation's seconds per iteration), from the planner's performance model
 *           (scv_plan_thr_less in plan.c; K = 1: 0, the job stands still). A compute-bound
 *           job loses about 1/K (t_iter ~ B/K); a communication-bound one, whose K - 1
 *           workers step as fast as K or faster, loses nothing. (The former R / K charged
 *           every job as if its throughput were linear in K: 4-5x too long on bench spot.)
 *   Lam     = sum over the spot workers of lam_v   [preemptions per hour of the job]
 *   rho     = Lam d / 3600   [s lost per s of wall time]; rho >= 1: never finishes
 *   T       = T0 / (1 - rho)   [s]: preemptions arrive at Lam per hour of wall time and each
 *           costs d, so T = T0 + (Lam T / 3600) d
 *   N       = Lam T / 3600   expected preemptions
 *   C       = (P_od T + P_spot T - N u p_spot) / 3600   [$]: P_od, P_spot the sums of the
 *           hourly prices of the on-demand and spot workers; a preempted VM is not billed
 *           until its replacement arrives (p_spot: the mean spot price of a worker), nor after
 *           the job's end: preempted at a uniform time t of [0, T], it goes unbilled for
 *           min(R, T - t) [s], on average
 *             u = R - R^2 / (2 T)  (R <= T),  T / 2  (R > T)        (scv_spot_unbilled_s)
 *           (the former N R let a long replacement make a short job's cost negative)
 *
 * Fallback (a deadline D): on spot the job makes progress at r = 1 - rho on-demand seconds of
 * work per second; at time t the work left is W(t) = T0 - r t. Switching to on-demand costs
 * S = replace_s + restart_s (new VMs, a restart from the checkpoint taken at the switch), and
 * the safety margin is M = S + d (one more preemption may strike just before the switch).
 * The rule at run time: switch as soon as D - t - W(t) <= M. At the expected progress that
 * happens at
 *     t* = (D - T0 - M) / rho          (t* >= T: the fallback is not expected)
 * and the job then ends at t* + W(t*) + S = D - d. t* < 0: no room for spot at all (run
 * on-demand from the start). t* >= T exactly when T + M <= D: spot alone and the mix count as
 * meeting a deadline only with the margin M to spare.
 *
 * Default rates (scv_spot_policy_default) are the top of each provider's published range,
 * per VM-hour: AWS's Spot Instance Advisor buckets interruptions per month (< 5% .. > 20%):
 * 0.20 / 730 h; GCP stated its preemptible VMs' preemption rate as 5-15% a day: 0.15 / 24 h;
 * Azure's eviction-rate buckets (0-5% .. 20%+) read as AWS's: 0.20 / 730 h; another provider:
 * GCP's. These are averages over whole fleets: GPU types in demand are preempted much more
 * often (the reason Bamboo, Oobleck and Parcae exist), so a user's figure should replace
 * them. restart_s 80: checkpoint-restart measured 72.8-81.2 s for small models on clouds
 * (Or et al., as docs/BENCHMARKS.md cites them; the emulated cluster's relaunch here, 1.0-1.6
 * s, starts no VM); inplace_idle_s 1.0: a shrink (57 ms) and a spawning grow (0.93 s)
 * measured on the emulated cluster (docs/BENCHMARKS.md; a profile holds no resize timing);
 * replace_s 120: a new VM's boot and join, assumed
 * (no measurement here); ckpt_every 100 iterations: the loop's default.
 */
#include "scv.h"
#include "model.h"
#include "../core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scv_spot_policy scv_spot_policy_default(void)
{
    scv_spot_policy p = {.rate_aws = 0.20 / 730, .rate_gcp = 0.15 / 24, .rate_azure = 0.20 / 730,
                         .rate_other = 0.15 / 24, .restart_s = 80, .inplace_idle_s = 1.0, .replace_s = 120,
                         .ckpt_every = 100, .mix_ondemand_share = 0.25};
    return p;
}

const char *scv_spot_mode_name(scv_spot_mode m)
{
    static const char *const names[] = {"ondemand", "spot", "mix", "spot+fallback"};
    return (unsigned)m < SCV_SPOT_MODES ? names[m] : "?";
}

/* One rate in [0, 3600] per VM-hour: 0, else -1. */
static int rate_value(const char *s, double *out)
{
    double v;
    if (scv_parse_f64(s, &v) || v < 0 || v > 3600) return -1; /* decimal: never hex */
    *out = v;
    return 0;
}

int scv_spot_rates_parse(const char *spec, const scv_catalog *cat, scv_spot_rates *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    out->all = -1;
    if (!spec || !spec[0])
        return scv_err_set(err, SCV_EINVAL, "empty (expected R or TYPE=R[,TYPE=R...], preemptions per VM-hour)");
    char buf[1024];
    if (strlen(spec) >= sizeof buf) return scv_err_set(err, SCV_EINVAL, "longer than %zu characters", sizeof buf - 1);
    strcpy(buf, spec);
    if (!strchr(buf, '=')) {
        if (rate_value(buf, &out->all))
            return scv_err_set(err, SCV_EINVAL, "'%s': expected a rate in [0, 3600] preemptions per VM-hour, "
                               "or TYPE=R[,TYPE=R...]", spec);
        return SCV_OK;
    }
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = 0;
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            return scv_err_set(err, SCV_EINVAL, "'%s': expected TYPE=R (preemptions per VM-hour)", tok);
        *eq = 0;
        double r;
        if (rate_value(eq + 1, &r))
            return scv_err_set(err, SCV_EINVAL, "%s='%s': expected a rate in [0, 3600] preemptions per VM-hour",
                               tok, eq + 1);
        long vi = -1;
        for (size_t i = 0; cat && i < cat->n && vi < 0; i++)
            if (!strcmp(cat->vms[i].name, tok)) vi = (long)i;
        if (vi < 0 && cat) return scv_err_set(err, SCV_ENOTFOUND, "'%s': not a VM type of the catalog", tok);
        for (size_t i = 0; vi >= 0 && i < out->n; i++)
            if (out->vm[i] == (int)vi) return scv_err_set(err, SCV_EINVAL, "'%s': given twice", tok);
        if (out->n == SCV_SPOT_MAX_RATES)
            return scv_err_set(err, SCV_EINVAL, "more than %d types", SCV_SPOT_MAX_RATES);
        out->vm[out->n] = (int)vi;
        out->rate[out->n++] = r;
    }
    return SCV_OK;
}

double scv_spot_rate(const scv_spot_policy *pol, const scv_spot_rates *user, const scv_catalog *cat, int vm,
                     int *from_user)
{
    *from_user = 1;
    for (size_t i = 0; user && i < user->n; i++)
        if (user->vm[i] == vm) return user->rate[i];
    if (user && user->all >= 0) return user->all;
    *from_user = 0;
    const char *p = cat->vms[vm].provider;
    return !strcmp(p, "aws") ? pol->rate_aws : !strcmp(p, "gcp") ? pol->rate_gcp
         : !strcmp(p, "azure") ? pol->rate_azure : pol->rate_other;
}

double scv_spot_lost_s(const scv_spot_policy *pol, scv_spot_recovery how, double t_iter)
{
    if (how == SCV_SPOT_INPLACE) return pol->inplace_idle_s;
    return pol->restart_s + 0.5 * pol->ckpt_every * (t_iter > 0 && isfinite(t_iter) ? t_iter : 0);
}

double scv_spot_cap_lost(double thr_less)
{
    if (!(thr_less >= 0)) return 1; /* NaN: as if the job stood still (the most it can lose) */
    return thr_less < 1 ? 1 - thr_less : 0;
}

double scv_spot_delay_s(const scv_spot_policy *pol, scv_spot_recovery how, double t_iter, double thr_less)
{
    return scv_spot_lost_s(pol, how, t_iter) + pol->replace_s * scv_spot_cap_lost(thr_less);
}

double scv_spot_unbilled_s(double replace_s, double T)
{
    if (!(replace_s > 0) || !(T > 0)) return 0;
    if (!isfinite(T)) return replace_s;
    return replace_s <= T ? replace_s - replace_s * replace_s / (2 * T) : T / 2;
}

double scv_spot_rho(const scv_spot_policy *pol, scv_spot_recovery how, double t_iter, double thr_less, double lam)
{
    return lam * scv_spot_delay_s(pol, how, t_iter, thr_less) / 3600;
}

double scv_spot_lam(const scv_spot_risk *r, const scv_catalog *cat, const int *vm, const int *count, int n)
{
    scv_spot_policy dflt = scv_spot_policy_default();
    const scv_spot_policy *pol = r->pol ? r->pol : &dflt;
    double lam = 0;
    for (int i = 0; i < n; i++) {
        int user;
        lam += count[i] * scv_spot_rate(pol, r->rates, cat, vm[i], &user);
    }
    return lam;
}

/* On n_spot of K workers at Lam_spot preemptions per hour: time, preemptions, cost. */
static void price_mode(const scv_spot_in *in, double d, int n_od, double lam_spot, scv_spot_price *m)
{
    const scv_spot_policy *pol = in->pol;
    int K = in->workers, n_spot = K - n_od;
    double p_od = in->price_od / K, p_s = in->price_spot / K; /* per worker */
    double rho = lam_spot * d / 3600;
    m->ok = 1;
    m->n_ondemand = n_od, m->n_spot = n_spot;
    m->rho = rho;
    if (!(rho < 1)) {
        m->time_s = m->cost = m->preemptions = INFINITY;
        return;
    }
    m->time_s = in->t0_s / (1 - rho);
    m->preemptions = lam_spot * m->time_s / 3600;
    m->cost = (n_od * p_od * m->time_s + n_spot * p_s * m->time_s -
               m->preemptions * scv_spot_unbilled_s(pol->replace_s, m->time_s) * p_s) / 3600;
}

/* Safer modes first (ties go to them): on-demand, spot with fallback, mix, spot. */
static const scv_spot_mode SAFETY_ORDER[SCV_SPOT_MODES] = {SCV_SPOT_ONDEMAND, SCV_SPOT_FALLBACK, SCV_SPOT_MIX,
                                                            SCV_SPOT_SPOT};

int scv_spot_eval(const scv_spot_in *in, scv_spot_result *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    const scv_spot_policy *pol = in->pol;
    int K = in->workers;
    if (K < 1 || !(in->t0_s > 0) || !isfinite(in->t0_s) || !(in->price_od > 0) || !(in->lam >= 0) ||
        !isfinite(in->lam) || !(in->thr_less >= 0) || !isfinite(in->thr_less))
        return scv_err_set(err, SCV_EINVAL, "spot: needs K >= 1, T0 > 0, an on-demand price > 0, a rate >= 0, "
                           "thr(K-1)/thr(K) >= 0");
    double L = scv_spot_lost_s(pol, in->recovery, in->t_iter);
    double d = scv_spot_delay_s(pol, in->recovery, in->t_iter, in->thr_less);
    out->lost_s = L, out->delay_s = d, out->cap_lost = scv_spot_cap_lost(in->thr_less);
    out->fallback_s = NAN;
    out->switch_s = pol->replace_s + pol->restart_s;
    out->margin_s = out->switch_s + d;
    /* on-demand: no preemption */
    scv_spot_price *od = &out->mode[SCV_SPOT_ONDEMAND];
    od->ok = 1, od->n_ondemand = K, od->time_s = in->t0_s, od->cost = in->price_od * in->t0_s / 3600;
    out->best = SCV_SPOT_ONDEMAND;
    out->meets = !(in->deadline_s > 0 && in->t0_s > in->deadline_s);
    if (!(in->price_spot > 0) || !isfinite(in->price_spot)) return SCV_OK; /* no spot price: on-demand only */
    price_mode(in, d, 0, in->lam, &out->mode[SCV_SPOT_SPOT]);
    /* mix: ceil(share K) on-demand, at least one on spot (a homogeneous configuration only) */
    int m = (int)ceil(pol->mix_ondemand_share * K - 1e-9);
    if (in->homogeneous && K >= 2 && m >= 1 && m < K) price_mode(in, d, m, in->lam * (K - m) / K, &out->mode[SCV_SPOT_MIX]);
    /* spot with fallback */
    const scv_spot_price *sp = &out->mode[SCV_SPOT_SPOT];
    if (in->deadline_s > 0) {
        double rho = sp->rho, slack = in->deadline_s - in->t0_s - out->margin_s;
        double ts = slack < 0 ? -1 : rho > 0 ? slack / rho : INFINITY;
        out->fallback_s = ts < 0 ? 0 : ts;
        scv_spot_price *fb = &out->mode[SCV_SPOT_FALLBACK];
        if (ts < 0) {
            fb->ok = 0; /* no room for spot: on-demand from the start */
        } else if (ts >= sp->time_s) {
            *fb = *sp; /* spot ends in time at its expected progress */
        } else {
            double r = 1 - rho, w = in->t0_s - r * ts, n = in->lam * ts / 3600;
            fb->ok = 1, fb->n_ondemand = K, fb->n_spot = K, fb->rho = rho, fb->preemptions = n;
            fb->time_s = ts + w + out->switch_s;
            fb->cost = (in->price_spot * ts - n * scv_spot_unbilled_s(pol->replace_s, ts) * in->price_spot / K) / 3600 +
                       in->price_od * (w + out->switch_s) / 3600;
        }
    }
    /* the choice: the cheapest meeting the deadline (objective time: the fastest); none: the fastest */
    int best = -1, fastest = SCV_SPOT_ONDEMAND;
    for (int i = 0; i < SCV_SPOT_MODES; i++) {
        scv_spot_mode k = SAFETY_ORDER[i];
        const scv_spot_price *p = &out->mode[k];
        if (!p->ok || !isfinite(p->time_s)) continue;
        if (p->time_s < out->mode[fastest].time_s) fastest = k;
        /* spot and mix meet a deadline only with the fallback's margin to spare (then the
         * fallback is priced the same as spot and, safer, wins the tie) */
        double need = p->time_s + (k == SCV_SPOT_SPOT || k == SCV_SPOT_MIX ? out->margin_s : 0);
        if (in->deadline_s > 0 && need > in->deadline_s) continue;
        if (best < 0) best = k;
        else if (in->objective == SCV_OBJ_TIME ? p->time_s < out->mode[best].time_s
                                                : p->cost < out->mode[best].cost * (1 - 1e-12))
            best = k;
    }
    out->best = best < 0 ? (scv_spot_mode)fastest : (scv_spot_mode)best;
    out->meets = best >= 0;
    return SCV_OK;
}
