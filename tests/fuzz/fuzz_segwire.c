/*
 * fuzz_segwire.c - the segment codec's decoders (src/io/segwire.c), each format that
 * crosses a process boundary: the first byte picks the format, the rest is
 *   0: JSON, an elastic command (scv_segwire_json_read);
 *   1: an environment, NAME=VALUE lines (scv_segwire_env_read);
 *   2: argv, options split at '\n' (scv_segwire_argv_read).
 * A refused input must name its format; an accepted one is encoded in every format and
 * decoded again, and the second encoding must equal the first (what one process writes,
 * the other reads back the same).
 */
#include "fuzz_util.h"
#include "scv.h"
#include "io/segwire.h"

#include <cjson/cJSON.h>

typedef struct {
    char *names[64], *values[64];
    int n;
} envtab;

static const char *env_get(const char *name, void *ctx)
{
    envtab *e = ctx;
    for (int i = e->n - 1; i >= 0; i--)
        if (!strcmp(e->names[i], name)) return e->values[i];
    return NULL;
}

static char *json_of(const scv_segwire *w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) abort();
    fputc('{', f);
    scv_segwire_json_write(f, w);
    fputc('}', f);
    if (fclose(f)) abort();
    return buf;
}

/* every encoding of w decoded again and encoded: the same text */
static void round_trip(const scv_segwire *w)
{
    static scv_segwire a, b;
    scv_err err = {0};
    /* JSON */
    char *j1 = json_of(w);
    cJSON *o = cJSON_Parse(j1);
    if (!o) abort();
    memset(&a, 0, sizeof a);
    if (scv_segwire_json_read(&a, o, "json", &err)) {
        fprintf(stderr, "%s\n%s\n", j1, err.msg);
        abort();
    }
    cJSON_Delete(o);
    char *j2 = json_of(&a);
    if (strcmp(j1, j2)) {
        fprintf(stderr, "%s\n%s\n", j1, j2);
        abort();
    }
    free(j1), free(j2);
    /* argv */
    scv_argv v1 = {0}, v2 = {0};
    scv_segwire_argv(&v1, w);
    memset(&b, 0, sizeof b);
    b.final_eval = 1; /* train's default: the codec writes only --no-final-eval */
    if (!v1.oom && scv_segwire_argv_read(&b, v1.n, v1.v, &err) == SCV_OK) {
        b.workers = w->workers; /* argv carries K */
        scv_segwire_argv(&v2, &b);
        if (v1.n != v2.n) {
            for (int i = 0; i < v1.n || i < v2.n; i++)
                fprintf(stderr, "%s | %s\n", i < v1.n ? v1.v[i] : "-", i < v2.n ? v2.v[i] : "-");
            abort();
        }
        for (int i = 0; i < v1.n; i++)
            if (strcmp(v1.v[i], v2.v[i])) {
                fprintf(stderr, "%s != %s\n", v1.v[i], v2.v[i]);
                abort();
            }
    } else if (!v1.oom) {
        fprintf(stderr, "argv refused: %s\n", err.msg);
        abort();
    }
    scv_argv_free(&v1), scv_argv_free(&v2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)fuzz_write; /* fuzz_util.h's file helper: unused here */
    if (!size) return 0;
    int mode = data[0] % 3;
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    static scv_segwire w;
    memset(&w, 0, sizeof w);
    scv_err err = {0};
    int rc;
    const char *what = mode == 0 ? "cmd" : mode == 1 ? "environment" : "argv";
    if (mode == 0) {
        cJSON *o = cJSON_Parse(text);
        if (!o) {
            free(text);
            return 0;
        }
        rc = scv_segwire_json_read(&w, o, "cmd", &err);
        cJSON_Delete(o);
    } else if (mode == 1) {
        envtab e = {.n = 0};
        for (char *p = text, *nl; p && e.n < 64; p = nl ? nl + 1 : NULL) {
            nl = strchr(p, '\n');
            if (nl) *nl = 0;
            char *eq = strchr(p, '=');
            if (!eq) continue;
            *eq = 0;
            e.names[e.n] = p, e.values[e.n++] = eq + 1;
        }
        rc = scv_segwire_env_read(&w, env_get, &e, &err);
    } else {
        char *argv[256];
        int argc = 0;
        for (char *p = text, *nl; p && argc < 256; p = nl ? nl + 1 : NULL) {
            nl = strchr(p, '\n');
            if (nl) *nl = 0;
            argv[argc++] = p;
        }
        w.workers = 1, w.batch = 1; /* argv's K and B come from train's own options too */
        rc = scv_segwire_argv_read(&w, argc, argv, &err);
    }
    if (rc != SCV_OK && rc != SCV_EINVAL) abort();
    if (rc && strncmp(err.msg, what, strlen(what))) abort(); /* names its format */
    if (rc == SCV_OK && w.workers >= 1 && w.batch >= 1 && (!w.n_split || w.n_split == w.workers))
        round_trip(&w);
    free(text);
    return 0;
}
