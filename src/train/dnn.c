/*
 * dnn.c - GEMM and convolution through oneDNN's 2.x C API (see dnn.h).
 *
 * GEMM is dnnl_sgemm (JIT for the CPU's ISA). OpenBLAS 0.3.21, Debian 12's, identifies
 * these machines' Xeon as "Prescott" and runs its SSE3 kernels: 3-4x slower on the
 * dense-layer shapes of the models (bench/gemm_shapes in docs/BENCHMARKS.md).
 *
 * The callers keep plain NCHW/OIHW buffers. Each primitive is created with format "any",
 * so oneDNN picks its fastest (blocked) layout and JIT kernel; every argument whose chosen
 * layout differs from the plain one goes through a reorder into or out of a scratch buffer
 * owned by that primitive. On AVX2/AVX-512 this is ~4x faster than forcing plain layouts
 * (oneDNN then falls back to im2col + GEMM). Primitives are built per batch size and kept in
 * a small cache: the last batch of an epoch and evaluation use other sizes.
 */
#include "dnn.h"

#include <dnnl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CACHE 4
#define MAX_ARGS 4

/* One argument of a primitive: the layout the primitive wants, and the reorder that
 * converts from (input) or to (output) the caller's plain layout when the two differ. */
typedef struct {
    int arg, output;
    dnnl_memory_desc_t plain, want;
    dnnl_primitive_t reorder; /* NULL: plain layout used directly */
    void *buf;
} slot;

typedef struct {
    dnnl_primitive_t prim;
    slot slots[MAX_ARGS];
    int n;
} op;

enum { FWD_TRAIN, FWD_INF, BWD_DATA, BWD_W, N_OPS };

typedef struct {
    int n; /* batch size; 0 = empty slot */
    unsigned long long used;
    op ops[N_OPS];
} conv_set;

struct scv_conv {
    int ic, oc, k, pad, ih, iw, oh, ow;
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    conv_set cache[CACHE];
    unsigned long long clock;
};

void scv_compute_threads(int threads)
{
    omp_set_num_threads(threads < 1 ? 1 : threads);
}

void scv_sgemm(char transa, char transb, int M, int N, int K, float alpha, const float *A,
               int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    /* arguments are validated by the callers' shapes; oneDNN only fails on bad arguments */
    dnnl_sgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

static int dnn_fail(scv_err *err, dnnl_status_t s, const char *what)
{
    return scv_err_set(err, SCV_EDNN, "oneDNN %s failed (status %d)", what, (int)s);
}

static void op_free(op *o)
{
    if (o->prim) dnnl_primitive_destroy(o->prim);
    for (int i = 0; i < o->n; i++) {
        if (o->slots[i].reorder) dnnl_primitive_destroy(o->slots[i].reorder);
        free(o->slots[i].buf);
    }
    memset(o, 0, sizeof *o);
}

static void set_free(conv_set *s)
{
    for (int i = 0; i < N_OPS; i++) op_free(&s->ops[i]);
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
    *out = c;
    return SCV_OK;
}

/* Creates the primitive of pd and, for each argument, the reorder its layout needs. */
static dnnl_status_t op_init(scv_conv *c, op *o, const_dnnl_primitive_desc_t pd, const int *args,
                             const int *outputs, const dnnl_memory_desc_t *const *plain, int n)
{
    dnnl_status_t st = dnnl_primitive_create(&o->prim, pd);
    for (int i = 0; i < n && st == dnnl_success; i++) {
        slot *s = &o->slots[o->n++];
        s->arg = args[i];
        s->output = outputs[i];
        s->plain = *plain[i];
        s->want = *dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, args[i]);
        if (dnnl_memory_desc_equal(&s->plain, &s->want)) continue;
        dnnl_primitive_desc_t rpd;
        const dnnl_memory_desc_t *from = s->output ? &s->want : &s->plain;
        const dnnl_memory_desc_t *to = s->output ? &s->plain : &s->want;
        st = dnnl_reorder_primitive_desc_create(&rpd, from, c->eng, to, c->eng, NULL);
        if (st != dnnl_success) break;
        st = dnnl_primitive_create(&s->reorder, rpd);
        dnnl_primitive_desc_destroy(rpd);
        s->buf = aligned_alloc(64, (dnnl_memory_desc_get_size(&s->want) + 63) / 64 * 64);
        if (!s->buf) st = dnnl_out_of_memory;
    }
    return st;
}

static dnnl_status_t run_reorder(scv_conv *c, dnnl_primitive_t r, const dnnl_memory_desc_t *from_md,
                                 void *from, const dnnl_memory_desc_t *to_md, void *to)
{
    dnnl_memory_t a = NULL, b = NULL;
    dnnl_status_t st = dnnl_memory_create(&a, from_md, c->eng, from);
    if (st == dnnl_success) st = dnnl_memory_create(&b, to_md, c->eng, to);
    if (st == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};
        st = dnnl_primitive_execute(r, c->stream, 2, args);
    }
    if (a) dnnl_memory_destroy(a);
    if (b) dnnl_memory_destroy(b);
    return st;
}

/* Runs op with the caller's plain buffers ptrs[i] for slot i: inputs are reordered in,
 * the primitive runs, outputs are reordered out. */
static int op_run(scv_conv *c, op *o, void *const *ptrs, scv_err *err)
{
    dnnl_exec_arg_t args[MAX_ARGS];
    dnnl_status_t st = dnnl_success;
    int made = 0;
    for (int i = 0; i < o->n && st == dnnl_success; i++) {
        slot *s = &o->slots[i];
        void *p = s->reorder ? s->buf : ptrs[i];
        if (s->reorder && !s->output) st = run_reorder(c, s->reorder, &s->plain, ptrs[i], &s->want, s->buf);
        if (st == dnnl_success) st = dnnl_memory_create(&args[i].memory, &s->want, c->eng, p);
        if (st == dnnl_success) args[i].arg = s->arg, made++;
    }
    if (st == dnnl_success) st = dnnl_primitive_execute(o->prim, c->stream, o->n, args);
    for (int i = 0; i < o->n && st == dnnl_success; i++) {
        slot *s = &o->slots[i];
        if (s->reorder && s->output) st = run_reorder(c, s->reorder, &s->want, s->buf, &s->plain, ptrs[i]);
    }
    if (st == dnnl_success) st = dnnl_stream_wait(c->stream);
    for (int i = 0; i < made; i++) dnnl_memory_destroy(args[i].memory);
    return st == dnnl_success ? SCV_OK : dnn_fail(err, st, "convolution execution");
}

/* Returns the primitive set for batch n, building all four operations on first use. */
static int get_set(scv_conv *c, int n, conv_set **out, scv_err *err)
{
    conv_set *s = &c->cache[0];
    for (int i = 0; i < CACHE; i++) {
        if (c->cache[i].n == n) {
            c->cache[i].used = ++c->clock;
            *out = &c->cache[i];
            return SCV_OK;
        }
        if (c->cache[i].used < s->used) s = &c->cache[i];
    }
    set_free(s);
    dnnl_dims_t sd = {n, c->ic, c->ih, c->iw}, dd = {n, c->oc, c->oh, c->ow};
    dnnl_dims_t wd = {c->oc, c->ic, c->k, c->k}, bd = {c->oc};
    dnnl_dims_t strides = {1, 1}, pad = {c->pad, c->pad};
    dnnl_memory_desc_t src, dst, w, b, src_any, dst_any, w_any;
    dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&w, 4, wd, dnnl_f32, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&b, 1, bd, dnnl_f32, dnnl_x);
    dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&w_any, 4, wd, dnnl_f32, dnnl_format_tag_any);

    dnnl_convolution_desc_t d;
    dnnl_primitive_desc_t fwd_pd = NULL, pd = NULL;
    const int fa[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST}, fo[] = {0, 0, 0, 1};
    const dnnl_memory_desc_t *fp[] = {&src, &w, &b, &dst};
    dnnl_status_t st = dnnl_convolution_forward_desc_init(&d, dnnl_forward_training,
                                                          dnnl_convolution_direct, &src_any,
                                                          &w_any, &b, &dst_any, strides, pad, pad);
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&fwd_pd, &d, NULL, c->eng, NULL);
    if (st == dnnl_success) st = op_init(c, &s->ops[FWD_TRAIN], fwd_pd, fa, fo, fp, 4);
    if (st == dnnl_success) {
        d.prop_kind = dnnl_forward_inference;
        st = dnnl_primitive_desc_create(&pd, &d, NULL, c->eng, NULL);
        if (st == dnnl_success) st = op_init(c, &s->ops[FWD_INF], pd, fa, fo, fp, 4);
        if (pd) dnnl_primitive_desc_destroy(pd), pd = NULL;
    }
    if (st == dnnl_success)
        st = dnnl_convolution_backward_data_desc_init(&d, dnnl_convolution_direct, &src_any,
                                                      &w_any, &dst_any, strides, pad, pad);
    if (st == dnnl_success) {
        const int a[] = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC}, o[] = {0, 0, 1};
        const dnnl_memory_desc_t *p[] = {&dst, &w, &src};
        st = dnnl_primitive_desc_create(&pd, &d, NULL, c->eng, fwd_pd);
        if (st == dnnl_success) st = op_init(c, &s->ops[BWD_DATA], pd, a, o, p, 3);
        if (pd) dnnl_primitive_desc_destroy(pd), pd = NULL;
    }
    if (st == dnnl_success)
        st = dnnl_convolution_backward_weights_desc_init(&d, dnnl_convolution_direct, &src_any,
                                                         &w_any, &b, &dst_any, strides, pad, pad);
    if (st == dnnl_success) {
        const int a[] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS};
        const int o[] = {0, 0, 1, 1};
        const dnnl_memory_desc_t *p[] = {&src, &dst, &w, &b};
        st = dnnl_primitive_desc_create(&pd, &d, NULL, c->eng, fwd_pd);
        if (st == dnnl_success) st = op_init(c, &s->ops[BWD_W], pd, a, o, p, 4);
        if (pd) dnnl_primitive_desc_destroy(pd);
    }
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

int scv_conv_forward(scv_conv *c, const float *src, const float *w, const float *b, float *dst,
                     int n, int training, scv_err *err)
{
    if (n <= 0) return SCV_OK;
    conv_set *s;
    int rc = get_set(c, n, &s, err);
    if (rc) return rc;
    void *ptrs[] = {(void *)src, (void *)w, (void *)b, dst};
    return op_run(c, &s->ops[training ? FWD_TRAIN : FWD_INF], ptrs, err);
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
    void *pw[] = {(void *)src, (void *)ddst, dw, db};
    rc = op_run(c, &s->ops[BWD_W], pw, err);
    if (rc || !dsrc) return rc;
    void *pd[] = {(void *)ddst, (void *)w, dsrc};
    return op_run(c, &s->ops[BWD_DATA], pd, err);
}
