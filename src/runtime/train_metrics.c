/*
 * train_metrics.c - the metrics lines rank 0 writes (JSON lines, line-buffered: a driver
 * tails them while the job runs), one function per line type, each taking what it writes
 * as a struct: job, latency, iter, eval, target, straggler, unabsorbed, rebalance. The
 * format is read by io/profile.c, drivers/trainjob.c, service/service.c and the tests: keep
 * it byte for byte. A failed write is noted (scv_tm_note) and reported at the next flush
 * (scv_tm_flush), where the ranks agree anyway.
 */
#include "trainer.h"
#include "../io/json_out.h"
#include "../core/util.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Rank 0, after a metrics line: keeps the errno of the first failed write (scv_tm_flush,
 * which reports it, runs later, when errno says nothing any more). */
void scv_tm_note(run_ctx *c)
{
    if (c->metrics && ferror(c->metrics) && !c->metrics_errno) c->metrics_errno = errno ? errno : EIO;
}

/* Rank 0: pushes the metrics written so far to the file and reports a failed write (a full
 * disk, say) naming the file. Checked where the ranks agree anyway: at checkpoints and at
 * the end (a write error is sticky, so none is missed). */
int scv_tm_flush(run_ctx *c, scv_err *err)
{
    if (!c->metrics) return SCV_OK;
    errno = 0;
    if (fflush(c->metrics) != 0 || ferror(c->metrics)) {
        int e = errno ? errno : c->metrics_errno; /* a line that failed before: its errno */
        c->metrics_errno = 0;
        return scv_err_set(err, SCV_EIO, "%s: cannot write metrics: %s", c->p->metrics_path,
                           e ? strerror(e) : "write error");
    }
    return SCV_OK;
}

/* The job line: what the planner needs to know about the job, once per invocation (per
 * segment in elastic mode). Negative when the write failed. */
int scv_tm_job(run_ctx *c)
{
    const scv_train_params *p = c->p;
    char vmj[256], dsj[600];
    size_t d = (size_t)c->train->c * c->train->h * c->train->w;
    return fprintf(c->metrics,
                   "{\"type\":\"job\",\"model\":\"%s\",\"arch\":\"%s\",\"params\":%zu,"
                   "\"act_bytes\":%zu,\"input_floats\":%zu,\"n_train\":%lld,\"vm\":%s,"
                   "\"threads\":%d,\"workers\":%d,\"batch\":%d,\"dataset\":%s}\n",
                   p->model, scv_net_arch(c->model), scv_net_nparams(c->model),
                   4 * scv_net_act_floats(c->model), d, (long long)c->train->n,
                   scv_json_strbuf(vmj, sizeof vmj, p->vm_type), p->threads, c->K, p->batch,
                   scv_json_strbuf(dsj, sizeof dsj, p->dataset));
}

void scv_tm_latency(run_ctx *c, double seconds)
{
    if (!c->metrics) return;
    fprintf(c->metrics, "{\"type\":\"latency\",\"iter\":%llu,\"workers\":%d,\"seconds\":%.6e}\n",
            (unsigned long long)c->st.iteration, c->K, seconds);
    scv_tm_note(c);
}

/* ",\"NAME\":[v0,v1,...]" of K 64-bit counts. */
static void counts_array(FILE *f, const char *name, const int64_t *v, int K)
{
    fprintf(f, ",\"%s\":[", name);
    for (int k = 0; k < K; k++) fprintf(f, "%s%lld", k ? "," : "", (long long)v[k]);
    fputc(']', f);
}

/* The iteration line's optional parts: the workers, streaming, the data options, the
 * exchange (each worker's array only for K <= 64). */
static void iter_extras(run_ctx *c, const scv_tm_iter *l)
{
    FILE *f = c->metrics;
    const int K = c->K;
    if (l->t_workers && K <= 64) { /* each worker's compute seconds */
        fputs(",\"t_compute_workers\":[", f);
        for (int k = 0; k < K; k++) fprintf(f, "%s%.4e", k ? "," : "", l->t_workers[k]);
        fputc(']', f);
    }
    if (l->batches && K <= 64) counts_array(f, "local_batches", c->counts, K); /* ... and samples */
    if (l->stream) { /* the stream time the data was taken at, this step's wait (in t_iter),
                      * each buffer after the step and its drops so far */
        fprintf(f, ",\"stream_clock\":%.6f,\"stream_wait\":%.6e", l->stream_clock, l->stream_wait);
        if (K <= 64) {
            fputs(",\"stream_buffers\":[", f);
            for (int k = 0; k < K; k++)
                fprintf(f, "%s%lld", k ? "," : "", (long long)scv_stream_level(c->stream, k, l->stream_clock, NULL));
            fputc(']', f);
            counts_array(f, "stream_dropped", c->stream->dropped, K);
        }
    }
    if (l->home && c->home_acc && K <= 64) /* each worker's home-class samples in its batch */
        counts_array(f, "home_samples", c->home_acc + 2 * SCV_MAX_WORKERS, K);
    if (l->data) /* the skew, and the samples of the epoch the step took (fewer than the batch
                  * with injection) */
        fprintf(f, ",\"noniid_skew\":%.6g,\"epoch_samples\":%lld", c->p->noniid_skew, (long long)l->epoch_samples);
    if (c->inj) { /* the copies the workers trained on, what sending them would cost, and each
                   * worker's own samples */
        fprintf(f, ",\"injected\":%lld,\"injected_bytes\":%.0f", (long long)c->inj->injected,
                (double)c->inj->injected * l->sample_bytes);
        if (K <= 64) counts_array(f, "own_batches", c->inj->own, K);
    }
    if (l->ada) { /* AdaScale: the step's gain ratio and the noise scale it came from (null: none yet) */
        char bn[32] = "null";
        if (isfinite(l->ada_noise_scale)) snprintf(bn, sizeof bn, "%.6g", l->ada_noise_scale);
        fprintf(f, ",\"ada_gain\":%.6g,\"ada_noise_scale\":%s", l->ada_gain, bn);
    }
    if (l->xs) { /* the exchange: what travelled, how, and what it cost */
        const scv_exchange_step *xs = l->xs;
        char gain[32] = "null";
        if (isfinite(xs->gain)) snprintf(gain, sizeof gain, "%.5f", xs->gain);
        else if (isfinite(xs->probe_gain)) snprintf(gain, sizeof gain, "%.5f", xs->probe_gain);
        fprintf(f, ",\"cf\":%.6g,\"gain\":%s,\"collective\":\"%s\",\"bytes_sent\":%.0f,\"t_exchange\":%.6e,\"t_compress\":%.6e",
                xs->cf, gain, xs->collective, xs->bytes, xs->t_exchange, xs->t_compress);
        if (c->p->comm.selsync) fprintf(f, ",\"sync\":%s,\"lssr\":%.5f", xs->local ? "false" : "true", xs->lssr);
    }
}

void scv_tm_iter_line(run_ctx *c, const scv_tm_iter *l)
{
    if (!c->metrics) return;
    char nl[32] = "null", ng[32] = "null"; /* null when the statistics are off */
    if (l->stats) {
        snprintf(nl, sizeof nl, "%.6e", l->local_mean);
        if (l->exact) snprintf(ng, sizeof ng, "%.6e", l->gsq); /* compressed, local: unknown */
    }
    fprintf(c->metrics,
            "{\"type\":\"iter\",\"iter\":%llu,\"epoch\":%llu,\"epoch_progress\":%.6f,"
            "\"workers\":%d,\"batch\":%lld,\"local_batch\":%lld,\"t_compute\":%.6e,"
            "\"t_comm\":%.6e,\"t_iter\":%.6e,\"loss\":%.6g,\"train_accuracy\":%.4f,"
            "\"lr\":%.6g,\"grad_sqnorm_local_mean\":%s,\"grad_sqnorm_global\":%s,"
            "\"samples_seen\":%llu,\"ts\":%.6f",
            (unsigned long long)c->st.iteration, (unsigned long long)c->st.epoch,
            (double)c->st.samples_seen / (double)c->train->n, c->K, (long long)l->batch, (long long)l->local_batch,
            l->t_compute, l->t_comm, l->t_iter, l->loss, l->train_accuracy, l->lr, nl, ng,
            (unsigned long long)c->st.samples_seen, scv_wall_clock());
    iter_extras(c, l);
    fputs("}\n", c->metrics);
    scv_tm_note(c);
}

void scv_tm_eval_line(run_ctx *c, const scv_tm_eval *l)
{
    if (!c->metrics) return;
    char tl[80] = "null";
    if (isfinite(l->train_loss))
        snprintf(tl, sizeof tl, "%.6g,\"train_loss_samples\":%.0f", l->train_loss, l->train_loss_samples);
    fprintf(c->metrics,
            "{\"type\":\"eval\",\"iter\":%llu,\"epoch_progress\":%.6f,"
            "\"test_accuracy\":%.6f,\"test_loss\":%.6f,\"train_loss\":%s,\"wall_seconds\":%.3f,"
            "\"set\":\"%s\",\"n\":%lld,\"from\":%lld,\"role\":\"%s\",\"eval_seconds\":%.6f}\n",
            (unsigned long long)c->st.iteration, (double)c->st.samples_seen / (double)c->train->n, l->accuracy, l->loss,
            tl, c->wall_before + scv_now() - c->t_start, l->full ? "full" : "subset", (long long)l->n,
            (long long)l->from, l->role, l->seconds);
    scv_tm_note(c);
}

void scv_tm_target_line(run_ctx *c, const scv_tm_target *l)
{
    if (!c->metrics) return;
    char fa[32] = "null";
    if (isfinite(l->full_accuracy)) snprintf(fa, sizeof fa, "%.6f", l->full_accuracy);
    fprintf(c->metrics,
            "{\"type\":\"target\",\"iter\":%llu,\"epoch_progress\":%.6f,"
            "\"metric\":\"%s\",\"target\":%.6f,\"window\":%d,\"window_from_history\":%d,"
            "\"window_mean\":%.6f,\"set\":\"%s\",\"n\":%lld,"
            "\"full_accuracy\":%s,\"confirm_tol\":%g,\"reached\":%s,"
            "\"reached_by\":\"%s%s%s\"}\n",
            (unsigned long long)c->st.iteration, (double)c->st.samples_seen / (double)c->train->n,
            l->by_loss ? "train_loss" : "test_accuracy", l->target, l->window, l->from_history, l->mean,
            l->subset ? "subset" : "full", (long long)l->n, fa, l->confirm_tol, l->reached ? "true" : "false", l->how,
            l->confirm, l->reached ? "" : ": not reached, training continues");
    scv_tm_note(c);
}

void scv_tm_straggler(run_ctx *c, const scv_straggler_event *ev)
{
    if (!c->metrics) return;
    const int f = ev->worker;
    fprintf(c->metrics,
            "{\"type\":\"straggler\",\"iter\":%llu,\"worker\":%d,\"ratio\":%.4f,\"fraction\":%.3g,"
            "\"below_s\":%.3f,\"below_iterations\":%d}\n",
            (unsigned long long)ev->iteration, f, ev->ratio, c->strag->rule.fraction, c->strag->below_s[f],
            c->strag->below_n[f]);
    scv_tm_note(c);
}

void scv_tm_unabsorbed(run_ctx *c, const scv_straggler_event *ev)
{
    if (!c->metrics) return;
    const scv_dynbatch_state *d = c->dyn;
    const int f = ev->worker;
    fprintf(c->metrics,
            "{\"type\":\"unabsorbed\",\"iter\":%llu,\"worker\":%d,\"ratio\":%.4f,\"balanced_share\":%.5f,"
            "\"min_share\":%.3g,\"floor_slowdown\":%.4f}\n",
            (unsigned long long)ev->iteration, f, ev->ratio, d->balanced[f], d->pol.min_share, d->floor_slowdown);
    scv_tm_note(c);
}

/* Dynamic batching: the controller's new shares and the seconds per sample it saw. */
void scv_tm_rebalance(run_ctx *c)
{
    if (!c->metrics) return;
    fprintf(c->metrics, "{\"type\":\"rebalance\",\"iter\":%llu,\"shares\":[", (unsigned long long)c->st.iteration);
    for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%.5f", k ? "," : "", c->dyn->share[k]);
    fputs("],\"seconds_per_sample\":[", c->metrics);
    for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%.4e", k ? "," : "", c->dyn->tau[k]);
    fputs("]}\n", c->metrics);
    scv_tm_note(c);
}
