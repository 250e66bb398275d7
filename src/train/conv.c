/*
 * conv.c - convolution through oneDNN's 2.x C API (see conv.h). One engine and stream per
 * layer object; a small cache of primitive sets keyed by batch size, since the last batch of
 * an epoch and evaluation chunks use other sizes than the training batch.
 */
#include "conv.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CACHE 4

typedef struct {
    int n; /* 0 = empty slot */
    unsigned long long used;
    dnnl_primitive_t fwd_train, fwd_inf, bwd_data, bwd_w;
    dnnl_memory_desc_t src_md, dst_md;
} conv_set;

struct scv_conv {
    int ic, oc, k, pad, ih, iw, oh, ow;
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    dnnl_memory_desc_t w_md, b_md;
    conv_set cache[CACHE];
    unsigned long long clock;
};

void scv_compute_threads(int threads)
{
    if (threads < 1) threads = 1;
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
}

static int dnn_fail(scv_err *err, dnnl_status_t s, const char *what)
{
    return scv_err_set(err, SCV_EDNN, "oneDNN %s failed (status %d)", what, (int)s);
}

static void set_free(conv_set *s)
{
    if (s->fwd_train) dnnl_primitive_destroy(s->fwd_train);
    if (s->fwd_inf) dnnl_primitive_destroy(s->fwd_inf);
    if (s->bwd_data) dnnl_primitive_destroy(s->bwd_data);
    if (s->bwd_w) dnnl_primitive_destroy(s->bwd_w);
    memset(s, 0, sizeof *s);
}

void scv_conv_free(scv_conv *c)
{
    if (!c) return;
    for (int i = 0; i < CACHE; i++) set_free(&c->cache[i]);
    if (c->stream) dnnl_stream_destroy(c->stream);
    if (c->eng) dnnl_engine_destroy(c->eng);
    free(c);
}

int scv_conv_new(int ic, int oc, int k, int pad, int ih, int iw, scv_conv **out, scv_err *err)
{
    *out = NULL;
    scv_conv *c = calloc(1, sizeof *c);
    if (!c) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    c->ic = ic, c->oc = oc, c->k = k, c->pad = pad, c->ih = ih, c->iw = iw;
    c->oh = ih + 2 * pad - k + 1;
    c->ow = iw + 2 * pad - k + 1;
    dnnl_status_t s = dnnl_engine_create(&c->eng, dnnl_cpu, 0);
    if (s == dnnl_success) s = dnnl_stream_create(&c->stream, c->eng, dnnl_stream_default_flags);
    if (s != dnnl_success) {
        scv_conv_free(c);
        return dnn_fail(err, s, "engine/stream creation");
    }
    dnnl_dims_t wd = {oc, ic, k, k}, bd = {oc};
    dnnl_memory_desc_init_by_tag(&c->w_md, 4, wd, dnnl_f32, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&c->b_md, 1, bd, dnnl_f32, dnnl_x);
    *out = c;
    return SCV_OK;
}

static dnnl_status_t make_prim(dnnl_primitive_t *p, const_dnnl_op_desc_t d, dnnl_engine_t eng,
                               const_dnnl_primitive_desc_t hint)
{
    dnnl_primitive_desc_t pd;
    dnnl_status_t s = dnnl_primitive_desc_create(&pd, d, NULL, eng, hint);
    if (s != dnnl_success) return s;
    s = dnnl_primitive_create(p, pd);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* Returns the primitive set for batch n, building it (all four primitives) on first use. */
static int get_set(scv_conv *c, int n, conv_set **out, scv_err *err)
{
    conv_set *victim = &c->cache[0];
    for (int i = 0; i < CACHE; i++) {
        if (c->cache[i].n == n) {
            c->cache[i].used = ++c->clock;
            *out = &c->cache[i];
            return SCV_OK;
        }
        if (c->cache[i].used < victim->used) victim = &c->cache[i];
    }
    set_free(victim);
    conv_set *s = victim;
    dnnl_dims_t sd = {n, c->ic, c->ih, c->iw}, dd = {n, c->oc, c->oh, c->ow};
    dnnl_dims_t strides = {1, 1}, pad = {c->pad, c->pad};
    dnnl_memory_desc_init_by_tag(&s->src_md, 4, sd, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&s->dst_md, 4, dd, dnnl_f32, dnnl_nchw);
    dnnl_convolution_desc_t fd, bdd, bwd;
    dnnl_primitive_desc_t fwd_pd = NULL;
    dnnl_status_t st = dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training,
                                                          dnnl_convolution_direct, &s->src_md,
                                                          &c->w_md, &c->b_md, &s->dst_md, strides,
                                                          pad, pad);
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&fwd_pd, &fd, NULL, c->eng, NULL);
    if (st == dnnl_success) st = dnnl_primitive_create(&s->fwd_train, fwd_pd);
    if (st == dnnl_success) {
        dnnl_convolution_desc_t id = fd;
        id.prop_kind = dnnl_forward_inference;
        st = make_prim(&s->fwd_inf, &id, c->eng, NULL);
    }
    if (st == dnnl_success)
        st = dnnl_convolution_backward_data_desc_init(&bdd, dnnl_convolution_direct, &s->src_md,
                                                      &c->w_md, &s->dst_md, strides, pad, pad);
    if (st == dnnl_success) st = make_prim(&s->bwd_data, &bdd, c->eng, fwd_pd);
    if (st == dnnl_success)
        st = dnnl_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_direct,
                                                         &s->src_md, &c->w_md, &c->b_md,
                                                         &s->dst_md, strides, pad, pad);
    if (st == dnnl_success) st = make_prim(&s->bwd_w, &bwd, c->eng, fwd_pd);
    if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
    if (st != dnnl_success) {
        set_free(s);
        return dnn_fail(err, st, "convolution primitive creation");
    }
    s->n = n;
    s->used = ++c->clock;
    *out = s;
    return SCV_OK;
}

typedef struct {
    int arg;
    const dnnl_memory_desc_t *md;
    const void *ptr;
} arg_spec;

/* Wraps the buffers in oneDNN memory objects, runs the primitive and waits. */
static int run(scv_conv *c, dnnl_primitive_t p, const arg_spec *a, int na, scv_err *err)
{
    dnnl_exec_arg_t args[5];
    dnnl_status_t st = dnnl_success;
    int made = 0;
    for (; made < na && st == dnnl_success; made++) {
        args[made].arg = a[made].arg;
        st = dnnl_memory_create(&args[made].memory, a[made].md, c->eng, (void *)a[made].ptr);
        if (st != dnnl_success) break;
    }
    if (st == dnnl_success) st = dnnl_primitive_execute(p, c->stream, na, args);
    if (st == dnnl_success) st = dnnl_stream_wait(c->stream);
    for (int i = 0; i < made; i++) dnnl_memory_destroy(args[i].memory);
    return st == dnnl_success ? SCV_OK : dnn_fail(err, st, "convolution execution");
}

int scv_conv_forward(scv_conv *c, const float *src, const float *w, const float *b, float *dst,
                     int n, int training, scv_err *err)
{
    if (n <= 0) return SCV_OK;
    conv_set *s;
    int rc = get_set(c, n, &s, err);
    if (rc) return rc;
    arg_spec a[] = {{DNNL_ARG_SRC, &s->src_md, src},
                    {DNNL_ARG_WEIGHTS, &c->w_md, w},
                    {DNNL_ARG_BIAS, &c->b_md, b},
                    {DNNL_ARG_DST, &s->dst_md, dst}};
    return run(c, training ? s->fwd_train : s->fwd_inf, a, 4, err);
}

int scv_conv_backward(scv_conv *c, const float *src, const float *w, const float *ddst,
                      float *dsrc, float *dw, float *db, int n, scv_err *err)
{
    if (n <= 0) {
        memset(dw, 0, sizeof(float) * (size_t)c->oc * c->ic * c->k * c->k);
        memset(db, 0, sizeof(float) * (size_t)c->oc);
        return SCV_OK;
    }
    conv_set *s;
    int rc = get_set(c, n, &s, err);
    if (rc) return rc;
    arg_spec aw[] = {{DNNL_ARG_SRC, &s->src_md, src},
                     {DNNL_ARG_DIFF_DST, &s->dst_md, ddst},
                     {DNNL_ARG_DIFF_WEIGHTS, &c->w_md, dw},
                     {DNNL_ARG_DIFF_BIAS, &c->b_md, db}};
    rc = run(c, s->bwd_w, aw, 4, err);
    if (rc || !dsrc) return rc;
    arg_spec ad[] = {{DNNL_ARG_DIFF_DST, &s->dst_md, ddst},
                     {DNNL_ARG_WEIGHTS, &c->w_md, w},
                     {DNNL_ARG_DIFF_SRC, &s->src_md, dsrc}};
    return run(c, s->bwd_data, ad, 3, err);
}
