/*
 * net.c - the neural networks Scavenger trains: logreg, mlp, lenet and a small residual CNN
 * (the performance, statistical and cost models live in src/model/).
 *
 * A model is a flat sequence of layers. Parameters and gradients each live in one
 * contiguous float buffer (what the allreduce, the optimiser and checkpoints work on);
 * each layer owns a slice. Residual connections are a SAVE layer (identity, remembers its
 * output) and an ADD layer (adds the saved activation), so the sequence stays flat.
 * Dense layers run on oneDNN's SGEMM, convolutions on oneDNN primitives (dnn.c); ReLU, pooling
 * and the softmax cross-entropy loss are element-wise loops.
 *
 * Loss: L = scale * sum_i CE(softmax(z_i), y_i). With scale = 1/B on every rank, the sum of
 * the ranks' gradients is the gradient of the mean loss over the global batch B.
 */
#include "scv.h"
#include "train.h"
#include "dnn.h"
#include "net_internal.h"
#include "../core/util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { L_DENSE, L_CONV, L_RELU, L_MAXPOOL, L_GAP, L_SAVE, L_ADD };

typedef struct layer {
    int kind;
    int c, h, w;    /* input shape per sample */
    int oc, oh, ow; /* output shape per sample */
    int k, pad;     /* conv */
    int ref;        /* ADD: index of the SAVE layer */
    float init_gain; /* multiplies the default init bound */
    size_t w_off, n_w, b_off, n_b;
    scv_conv *conv;
    int *argmax;    /* maxpool: per output element */
} layer;

struct scv_net {
    char arch[128];
    layer *layers;
    int n_layers, cap_layers;
    size_t n_params;
    float *params, *grads;
    int cap_batch;  /* activation buffers hold this many samples */
    float **act;    /* act[i] = output of layer i-1; act[0] is the caller's input */
    float **dact;   /* dact[i] = d loss / d act[i] */
    float **skip;   /* per SAVE layer: gradient arriving through its skip path */
};

static size_t in_size(const layer *l) { return (size_t)l->c * l->h * l->w; }
static size_t out_size(const layer *l) { return (size_t)l->oc * l->oh * l->ow; }

/* ---- building ---- */

static layer *push(scv_net *m, int kind, int c, int h, int w)
{
    if (m->n_layers == m->cap_layers) {
        int cap = m->cap_layers ? 2 * m->cap_layers : 16;
        layer *nl = realloc(m->layers, sizeof(layer) * (size_t)cap);
        if (!nl) return NULL;
        m->layers = nl;
        m->cap_layers = cap;
    }
    layer *l = &m->layers[m->n_layers++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->c = l->oc = c;
    l->h = l->oh = h;
    l->w = l->ow = w;
    l->init_gain = 1.0f;
    return l;
}

/* The last layer's output shape is the next layer's input shape. */
static void out_shape(const scv_net *m, int *c, int *h, int *w)
{
    const layer *l = &m->layers[m->n_layers - 1];
    *c = l->oc, *h = l->oh, *w = l->ow;
}

static int add_dense(scv_net *m, int in, int out)
{
    layer *l = push(m, L_DENSE, in, 1, 1);
    if (!l) return SCV_ENOMEM;
    l->oc = out;
    l->n_w = (size_t)in * out;
    l->n_b = (size_t)out;
    return SCV_OK;
}

static int add_simple(scv_net *m, int kind)
{
    int c, h, w;
    out_shape(m, &c, &h, &w);
    layer *l = push(m, kind, c, h, w);
    if (!l) return SCV_ENOMEM;
    if (kind == L_MAXPOOL) l->oh = h / 2, l->ow = w / 2;
    if (kind == L_GAP) l->oh = l->ow = 1;
    return SCV_OK;
}

static int add_conv(scv_net *m, int c, int h, int w, int oc, int k, int pad, float gain)
{
    layer *l = push(m, L_CONV, c, h, w);
    if (!l) return SCV_ENOMEM;
    l->oc = oc;
    l->k = k;
    l->pad = pad;
    l->oh = h + 2 * pad - k + 1;
    l->ow = w + 2 * pad - k + 1;
    l->n_w = (size_t)oc * c * k * k;
    l->n_b = (size_t)oc;
    l->init_gain = gain;
    return SCV_OK;
}

/* conv on the current output shape */
static int conv_next(scv_net *m, int oc, int k, int pad, float gain)
{
    int c, h, w;
    out_shape(m, &c, &h, &w);
    return add_conv(m, c, h, w, oc, k, pad, gain);
}

/* relu(x + conv(relu(conv(x)))), channels unchanged */
static int res_block(scv_net *m)
{
    int c, h, w, rc;
    out_shape(m, &c, &h, &w);
    int save = m->n_layers;
    if ((rc = add_simple(m, L_SAVE)) || (rc = conv_next(m, c, 3, 1, 1.0f)) ||
        (rc = add_simple(m, L_RELU)) || (rc = conv_next(m, c, 3, 1, 0.25f)) ||
        (rc = add_simple(m, L_ADD)))
        return rc;
    m->layers[m->n_layers - 1].ref = save;
    return add_simple(m, L_RELU);
}

int scv_net_parse_hidden(const char *s, scv_net_spec *spec, scv_err *err)
{
    spec->n_hidden = 0;
    const char *p = s;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 65536 || (*end && *end != ','))
            return scv_err_set(err, SCV_EINVAL,
                               "--hidden %s: expected positive sizes separated by commas", s);
        if (spec->n_hidden == SCV_MAX_HIDDEN)
            return scv_err_set(err, SCV_EINVAL, "--hidden %s: at most %d layers", s,
                               SCV_MAX_HIDDEN);
        spec->hidden[spec->n_hidden++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (spec->n_hidden == 0) return scv_err_set(err, SCV_EINVAL, "--hidden: empty");
    return SCV_OK;
}

static int build(scv_net *m, const scv_net_spec *s, scv_err *err)
{
    int C = s->in_c, H = s->in_h, W = s->in_w, K = s->n_classes, rc = SCV_OK;
    int D = C * H * W;
    const char *name = s->name;
    if (strcmp(name, "logreg") == 0) {
        rc = add_dense(m, D, K);
        snprintf(m->arch, sizeof m->arch, "logreg:%d-%d", D, K);
    } else if (strcmp(name, "mlp") == 0) {
        if (s->n_hidden < 1) return scv_err_set(err, SCV_EINVAL, "mlp: --hidden is empty");
        int in = D, len = snprintf(m->arch, sizeof m->arch, "mlp:%d", D);
        for (int i = 0; i < s->n_hidden && !rc; i++) {
            rc = add_dense(m, in, s->hidden[i]);
            if (!rc) rc = add_simple(m, L_RELU);
            in = s->hidden[i];
            if (len < (int)sizeof m->arch)
                len += snprintf(m->arch + len, sizeof m->arch - (size_t)len, "-%d", in);
        }
        if (!rc) rc = add_dense(m, in, K);
        if (len < (int)sizeof m->arch) snprintf(m->arch + len, sizeof m->arch - (size_t)len, "-%d", K);
    } else if (strcmp(name, "lenet") == 0) {
        if (H < 12 || W < 12) return scv_err_set(err, SCV_EINVAL, "lenet needs inputs of 12x12 or more");
        int c, h, w;
        (void)((rc = add_conv(m, C, H, W, 6, 5, 2, 1.0f)) || (rc = add_simple(m, L_RELU)) ||
               (rc = add_simple(m, L_MAXPOOL)) || (rc = conv_next(m, 16, 5, 0, 1.0f)) ||
               (rc = add_simple(m, L_RELU)) || (rc = add_simple(m, L_MAXPOOL)));
        if (!rc) {
            out_shape(m, &c, &h, &w);
            (void)((rc = add_dense(m, c * h * w, 120)) || (rc = add_simple(m, L_RELU)) ||
                   (rc = add_dense(m, 120, 84)) || (rc = add_simple(m, L_RELU)) ||
                   (rc = add_dense(m, 84, K)));
        }
        snprintf(m->arch, sizeof m->arch, "lenet:%dx%dx%d-%d", C, H, W, K);
    } else if (strcmp(name, "resnet") == 0) {
        if (H < 4 || W < 4) return scv_err_set(err, SCV_EINVAL, "resnet needs inputs of 4x4 or more");
        (void)((rc = add_conv(m, C, H, W, 16, 3, 1, 1.0f)) || (rc = add_simple(m, L_RELU)) ||
               (rc = res_block(m)) || (rc = add_simple(m, L_MAXPOOL)) ||
               (rc = conv_next(m, 32, 3, 1, 1.0f)) || (rc = add_simple(m, L_RELU)) ||
               (rc = res_block(m)) || (rc = add_simple(m, L_MAXPOOL)) ||
               (rc = add_simple(m, L_GAP)) || (rc = add_dense(m, 32, K)));
        snprintf(m->arch, sizeof m->arch, "resnet:%dx%dx%d-%d", C, H, W, K);
    } else {
        return scv_err_set(err, SCV_EINVAL, "unknown model '%s' (expected one of " SCV_NET_NAMES ")", name);
    }
    if (rc) return scv_err_set(err, rc, "out of memory building %s", name);
    /* A dense layer after convolutions sees the flattened shape. */
    for (int i = 0; i < m->n_layers; i++) {
        layer *l = &m->layers[i];
        if (i > 0 && l->kind == L_DENSE && in_size(l) != out_size(&m->layers[i - 1]))
            return scv_err_set(err, SCV_EINTERNAL, "layer %d: shape mismatch", i);
    }
    return SCV_OK;
}

int scv_net_known(const char *name)
{
    size_t n = strlen(name);
    for (const char *w = SCV_NET_NAMES; *w;) {
        size_t len = strcspn(w, "|");
        if (len == n && !strncmp(w, name, n)) return 1;
        w += len + (w[len] == '|');
    }
    return 0;
}

int scv_net_check(const char *model, const char *hidden, scv_err *err)
{
    if (!model || !scv_net_known(model)) {
        char near[64] = "";
        if (!model || !scv_nearest_in_list(model, SCV_NET_NAMES, near, sizeof near)) near[0] = 0;
        return scv_err_set(err, SCV_EINVAL, "--model '%.200s': unknown model (expected one of " SCV_NET_NAMES ")%s%s%s",
                           model ? model : "", near[0] ? "; did you mean '" : "", near, near[0] ? "'?" : "");
    }
    if (strcmp(model, "mlp")) return SCV_OK;
    scv_net_spec spec;
    if (!hidden) return scv_err_set(err, SCV_EINVAL, "--hidden: the mlp's layer sizes are not given");
    return scv_net_parse_hidden(hidden, &spec, err);
}

int scv_net_new(const scv_net_spec *spec, scv_net **out, scv_err *err)
{
    *out = NULL;
    if (!spec || !spec->name) return scv_err_set(err, SCV_EINVAL, "model: no name");
    if (spec->in_c < 1 || spec->in_h < 1 || spec->in_w < 1 || spec->n_classes < 2 ||
        spec->n_classes > 65536)
        return scv_err_set(err, SCV_EINVAL, "model: bad input shape or class count");
    /* sizes are ints in the layers: the input must fit comfortably (2^24 floats per sample) */
    if ((int64_t)spec->in_c * spec->in_h * spec->in_w > ((int64_t)1 << 24))
        return scv_err_set(err, SCV_EINVAL, "model: input %dx%dx%d has more than 2^24 values",
                           spec->in_c, spec->in_h, spec->in_w);
    if (!strcmp(spec->name, "mlp")) /* the parameter count before anything is built */
        for (int i = 0; i < spec->n_hidden && i < SCV_MAX_HIDDEN; i++)
            if (spec->hidden[i] < 1 || spec->hidden[i] > 65536)
                return scv_err_set(err, SCV_EINVAL, "mlp: hidden size %d: must be in 1..65536",
                                   spec->hidden[i]);
    scv_net *m = calloc(1, sizeof *m);
    if (!m) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = build(m, spec, err);
    if (rc) goto fail;
    for (int i = 0; i < m->n_layers; i++) {
        layer *l = &m->layers[i];
        l->w_off = m->n_params;
        l->b_off = l->w_off + l->n_w;
        /* n_w, n_b are products of ints in size_t (no overflow); their sum is capped */
        if (l->n_w > SCV_NET_MAX_PARAMS || l->n_b > SCV_NET_MAX_PARAMS ||
            m->n_params + l->n_w + l->n_b > SCV_NET_MAX_PARAMS) {
            rc = scv_err_set(err, SCV_EINVAL,
                             "model %s: more than %zu parameters (layer %d has %zu); use smaller "
                             "--hidden sizes", m->arch, SCV_NET_MAX_PARAMS, i, l->n_w + l->n_b);
            goto fail;
        }
        m->n_params += l->n_w + l->n_b;
        if (l->kind == L_CONV &&
            (rc = scv_conv_new(l->c, l->oc, l->k, l->pad, l->h, l->w, &l->conv, err)))
            goto fail;
    }
    m->params = calloc(m->n_params, sizeof(float));
    m->grads = calloc(m->n_params + SCV_GRAD_EXTRA, sizeof(float));
    m->act = calloc((size_t)m->n_layers + 1, sizeof(float *));
    m->dact = calloc((size_t)m->n_layers + 1, sizeof(float *));
    m->skip = calloc((size_t)m->n_layers, sizeof(float *));
    if (!m->params || !m->grads || !m->act || !m->dact || !m->skip) {
        rc = scv_err_set(err, SCV_ENOMEM, "out of memory for %zu parameters", m->n_params);
        goto fail;
    }
    *out = m;
    return SCV_OK;
fail:
    scv_net_free(m);
    return rc;
}

static void free_buffers(scv_net *m)
{
    for (int i = 1; i <= m->n_layers; i++) {
        free(m->act[i]);
        free(m->dact[i]);
        m->act[i] = m->dact[i] = NULL;
    }
    for (int i = 0; i < m->n_layers; i++) {
        free(m->skip[i]);
        free(m->layers[i].argmax);
        m->skip[i] = NULL;
        m->layers[i].argmax = NULL;
    }
    m->cap_batch = 0;
}

void scv_net_free(scv_net *m)
{
    if (!m) return;
    if (m->act) free_buffers(m);
    for (int i = 0; i < m->n_layers; i++) scv_conv_free(m->layers[i].conv);
    free(m->layers);
    free(m->params);
    free(m->grads);
    free(m->act);
    free(m->dact);
    free(m->skip);
    free(m);
}

static int ensure_batch(scv_net *m, int n, scv_err *err)
{
    if (n <= m->cap_batch) return SCV_OK;
    free_buffers(m);
    for (int i = 0; i < m->n_layers; i++) {
        layer *l = &m->layers[i];
        size_t sz = out_size(l) * (size_t)n;
        m->act[i + 1] = malloc(sz * sizeof(float));
        m->dact[i + 1] = malloc(sz * sizeof(float));
        if (!m->act[i + 1] || !m->dact[i + 1]) goto oom;
        if (l->kind == L_SAVE && !(m->skip[i] = malloc(sz * sizeof(float)))) goto oom;
        if (l->kind == L_MAXPOOL && !(l->argmax = malloc(sz * sizeof(int)))) goto oom;
    }
    m->cap_batch = n;
    return SCV_OK;
oom:
    free_buffers(m);
    return scv_err_set(err, SCV_ENOMEM, "out of memory for a batch of %d samples", n);
}

size_t scv_net_nparams(const scv_net *m) { return m->n_params; }
float *scv_net_params(scv_net *m) { return m->params; }
float *scv_net_grads(scv_net *m) { return m->grads; }
const char *scv_net_arch(const scv_net *m) { return m->arch; }

size_t scv_net_act_floats(const scv_net *m)
{
    size_t n = 0;
    for (int i = 0; i < m->n_layers; i++) n += out_size(&m->layers[i]);
    return n;
}

void scv_net_init(scv_net *m, uint64_t seed)
{
    scv_rng r;
    scv_rng_seed(&r, seed);
    for (int i = 0; i < m->n_layers; i++) {
        layer *l = &m->layers[i];
        if (!l->n_w) continue;
        double fan_in = l->kind == L_CONV ? (double)l->c * l->k * l->k : (double)l->c;
        double bound = l->init_gain / sqrt(fan_in);
        for (size_t j = 0; j < l->n_w + l->n_b; j++)
            m->params[l->w_off + j] = (float)(bound * (2 * scv_rng_uniform(&r) - 1));
    }
}

/* ---- forward ---- */

/* Element-wise kernels take restrict pointers so that the compiler vectorises them. */
static void relu_fwd(const float *restrict in, float *restrict out, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        float v = in[j];
        out[j] = v > 0.0f ? v : 0.0f;
    }
}

static void relu_bwd(const float *restrict out, const float *restrict dout, float *restrict din,
                     size_t n)
{
    for (size_t j = 0; j < n; j++) { /* both loads unconditional: a blend, not a branch */
        float o = out[j], d = dout[j];
        din[j] = o > 0.0f ? d : 0.0f;
    }
}

static void add_into(const float *restrict a, const float *restrict b, float *restrict out,
                     size_t n)
{
    for (size_t j = 0; j < n; j++) out[j] = a[j] + b[j];
}

static void maxpool_fwd(layer *l, const float *in, float *out, int n)
{
    for (int s = 0; s < n * l->c; s++) {
        const float *src = in + (size_t)s * l->h * l->w;
        float *dst = out + (size_t)s * l->oh * l->ow;
        int *am = l->argmax + (size_t)s * l->oh * l->ow;
        for (int y = 0; y < l->oh; y++)
            for (int x = 0; x < l->ow; x++) {
                int i0 = 2 * y * l->w + 2 * x, best = i0;
                int cand[3] = {i0 + 1, i0 + l->w, i0 + l->w + 1};
                for (int j = 0; j < 3; j++)
                    if (src[cand[j]] > src[best]) best = cand[j];
                dst[y * l->ow + x] = src[best];
                am[y * l->ow + x] = best;
            }
    }
}

static int layer_fwd(scv_net *m, int i, int n, int training, scv_err *err)
{
    layer *l = &m->layers[i];
    const float *in = m->act[i];
    float *out = m->act[i + 1];
    size_t osz = out_size(l) * (size_t)n, isz = in_size(l);
    switch (l->kind) {
    case L_DENSE: {
        const float *b = m->params + l->b_off;
        for (int s = 0; s < n; s++) memcpy(out + (size_t)s * l->oc, b, sizeof(float) * (size_t)l->oc);
        scv_sgemm('N', 'T', n, l->oc, (int)isz, 1.0f, in, (int)isz, m->params + l->w_off,
                  (int)isz, 1.0f, out, l->oc);
        return SCV_OK;
    }
    case L_CONV:
        return scv_conv_forward(l->conv, in, m->params + l->w_off, m->params + l->b_off, out, n,
                                training, err);
    case L_RELU:
        relu_fwd(in, out, osz);
        return SCV_OK;
    case L_MAXPOOL:
        maxpool_fwd(l, in, out, n);
        return SCV_OK;
    case L_GAP: {
        size_t hw = (size_t)l->h * l->w;
        for (int s = 0; s < n * l->c; s++) {
            double acc = 0;
            for (size_t j = 0; j < hw; j++) acc += in[s * hw + j];
            out[s] = (float)(acc / (double)hw);
        }
        return SCV_OK;
    }
    case L_SAVE:
        memcpy(out, in, osz * sizeof(float));
        return SCV_OK;
    case L_ADD: {
        add_into(in, m->act[l->ref + 1], out, osz);
        return SCV_OK;
    }
    }
    return scv_err_set(err, SCV_EINTERNAL, "layer %d: unknown kind", i);
}

static int forward(scv_net *m, const float *x, int n, int training, scv_err *err)
{
    int rc = ensure_batch(m, n, err);
    if (rc) return rc;
    m->act[0] = (float *)x;
    for (int i = 0; i < m->n_layers && !rc; i++) rc = layer_fwd(m, i, n, training, err);
    return rc;
}

/* Softmax cross-entropy on logits z[n][K]: adds loss and correct count; writes
 * dz = scale * (softmax(z) - onehot(y)) when dz is not NULL. */
static void softmax_ce(const float *z, const uint8_t *y, int n, int K, float scale, float *dz,
                       double *loss_sum, int64_t *n_correct)
{
    for (int s = 0; s < n; s++) {
        const float *zs = z + (size_t)s * K;
        int arg = 0;
        float mx = zs[0];
        for (int k = 1; k < K; k++)
            if (zs[k] > mx) mx = zs[k], arg = k;
        double sum = 0;
        for (int k = 0; k < K; k++) sum += exp((double)(zs[k] - mx));
        double lse = (double)mx + log(sum);
        *loss_sum += lse - (double)zs[y[s]];
        *n_correct += arg == y[s];
        if (dz)
            for (int k = 0; k < K; k++) {
                double p = exp((double)zs[k] - lse);
                dz[(size_t)s * K + k] = scale * (float)(p - (k == y[s]));
            }
    }
}

/* ---- backward ---- */

static int layer_bwd(scv_net *m, int i, int n, scv_err *err)
{
    layer *l = &m->layers[i];
    const float *in = m->act[i], *out = m->act[i + 1], *dout = m->dact[i + 1];
    float *din = i > 0 ? m->dact[i] : NULL; /* the input needs no gradient */
    size_t osz = out_size(l) * (size_t)n, isz = in_size(l);
    switch (l->kind) {
    case L_DENSE: {
        float *gw = m->grads + l->w_off, *gb = m->grads + l->b_off;
        scv_sgemm('T', 'N', l->oc, (int)isz, n, 1.0f, dout, l->oc, in, (int)isz, 0.0f, gw,
                  (int)isz);
        for (int j = 0; j < l->oc; j++) gb[j] = 0;
        for (int s = 0; s < n; s++)
            for (int j = 0; j < l->oc; j++) gb[j] += dout[(size_t)s * l->oc + j];
        if (din)
            scv_sgemm('N', 'N', n, (int)isz, l->oc, 1.0f, dout, l->oc, m->params + l->w_off,
                      (int)isz, 0.0f, din, (int)isz);
        return SCV_OK;
    }
    case L_CONV:
        return scv_conv_backward(l->conv, in, m->params + l->w_off, dout, din,
                                 m->grads + l->w_off, m->grads + l->b_off, n, err);
    case L_RELU:
        if (din) relu_bwd(out, dout, din, osz);
        return SCV_OK;
    case L_MAXPOOL:
        if (din) {
            memset(din, 0, isz * (size_t)n * sizeof(float));
            size_t hw = (size_t)l->oh * l->ow;
            for (int s = 0; s < n * l->c; s++)
                for (size_t j = 0; j < hw; j++)
                    din[(size_t)s * l->h * l->w + (size_t)l->argmax[s * hw + j]] += dout[s * hw + j];
        }
        return SCV_OK;
    case L_GAP:
        if (din) {
            size_t hw = (size_t)l->h * l->w;
            for (int s = 0; s < n * l->c; s++)
                for (size_t j = 0; j < hw; j++) din[s * hw + j] = dout[s] / (float)hw;
        }
        return SCV_OK;
    case L_SAVE:
        if (din) add_into(dout, m->skip[i], din, osz);
        return SCV_OK;
    case L_ADD:
        memcpy(m->skip[l->ref], dout, osz * sizeof(float));
        if (din) memcpy(din, dout, osz * sizeof(float));
        return SCV_OK;
    }
    return scv_err_set(err, SCV_EINTERNAL, "layer %d: unknown kind", i);
}

int scv_net_train_step(scv_net *m, const float *x, const uint8_t *y, int n, float scale,
                         double *loss_sum, int64_t *n_correct, scv_err *err)
{
    if (n <= 0) {
        memset(m->grads, 0, m->n_params * sizeof(float));
        return SCV_OK;
    }
    int rc = forward(m, x, n, 1, err);
    if (rc) return rc;
    int L = m->n_layers;
    softmax_ce(m->act[L], y, n, m->layers[L - 1].oc, scale, m->dact[L], loss_sum, n_correct);
    for (int i = L - 1; i >= 0 && !rc; i--) rc = layer_bwd(m, i, n, err);
    return rc;
}

int scv_net_eval(scv_net *m, const float *x, const uint8_t *y, int n, double *loss_sum,
                   int64_t *n_correct, scv_err *err)
{
    if (n <= 0) return SCV_OK;
    int rc = forward(m, x, n, 0, err);
    if (rc) return rc;
    int L = m->n_layers;
    softmax_ce(m->act[L], y, n, m->layers[L - 1].oc, 0, NULL, loss_sum, n_correct);
    return SCV_OK;
}

/* ---- introspection (net_internal.h) ---- */

int scv_net_layer_count(const scv_net *m) { return m->n_layers; }

const char *scv_net_layer_info(const scv_net *m, int i, size_t *offset, size_t *n)
{
    static const char *const names[] = {"dense", "conv", "relu", "maxpool", "gap", "save", "add"};
    const layer *l = &m->layers[i];
    *offset = l->w_off;
    *n = l->n_w + l->n_b;
    return names[l->kind];
}
