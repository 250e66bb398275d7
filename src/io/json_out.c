/*
 * json_out.c - see json_out.h.
 */
#include "json_out.h"

#include <math.h>
#include <string.h>

/* The escape of byte c (with room for \u00XX) into e; returns its length. */
static size_t esc(unsigned char c, char e[8])
{
    switch (c) {
    case '"': return (size_t)(memcpy(e, "\\\"", 2), 2);
    case '\\': return (size_t)(memcpy(e, "\\\\", 2), 2);
    case '\n': return (size_t)(memcpy(e, "\\n", 2), 2);
    case '\r': return (size_t)(memcpy(e, "\\r", 2), 2);
    case '\t': return (size_t)(memcpy(e, "\\t", 2), 2);
    case '\b': return (size_t)(memcpy(e, "\\b", 2), 2);
    case '\f': return (size_t)(memcpy(e, "\\f", 2), 2);
    default:
        if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            memcpy(e, "\\u00", 4);
            e[4] = hex[c >> 4], e[5] = hex[c & 15];
            return 6;
        }
        e[0] = (char)c;
        return 1;
    }
}

void scv_json_str(FILE *f, const char *s)
{
    char e[8];
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) fwrite(e, 1, esc(*p, e), f);
    fputc('"', f);
}

char *scv_json_strbuf(char *buf, size_t cap, const char *s)
{
    if (!cap) return buf;
    size_t len = 0;
    char e[8];
    if (cap > 2) buf[len++] = '"';
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        size_t n = esc(*p, e);
        if (len + n + 2 > cap) break; /* room for the closing quote and NUL */
        memcpy(buf + len, e, n);
        len += n;
    }
    if (len && len + 2 <= cap) buf[len++] = '"';
    buf[len] = 0;
    return buf;
}

void scv_json_num(FILE *f, const char *name, const char *fmt, double v, int comma)
{
    fprintf(f, "%s\"%s\":", comma ? "," : "", name);
    if (isfinite(v)) fprintf(f, fmt, v);
    else fputs("null", f);
}

static void num(FILE *f, const char *name, const char *fmt, double v)
{
    scv_json_num(f, name, fmt, v, 1);
}

void scv_run_summary_json(FILE *f, const scv_run_summary *r)
{
    fprintf(f, "{\"id\":%lld", r->id);
    num(f, "created", "%.6f", r->created);
    fputs(",\"job_key\":", f);
    scv_json_str(f, r->job_key);
    fputs(",\"status\":", f);
    scv_json_str(f, r->status);
    fputs(",\"state\":", f);
    scv_json_str(f, r->state);
    fprintf(f, ",\"workers\":%d,\"batch\":%d", r->workers, r->batch);
    num(f, "predicted_time_s", "%.15g", r->predicted_time_s);
    num(f, "predicted_cost", "%.15g", r->predicted_cost);
    num(f, "actual_time_s", "%.15g", r->actual_time_s);
    num(f, "actual_cost", "%.15g", r->actual_cost);
    num(f, "accuracy", "%.15g", r->accuracy);
    fprintf(f, ",\"reached\":%s,\"n_steps\":%d,\"why\":", r->reached ? "true" : "false", r->n_steps);
    scv_json_str(f, r->why);
    /* why it ended as it did (null: running, done, or no reason stored) */
    fputs(",\"reason\":", f);
    if (r->reason[0]) scv_json_str(f, r->reason);
    else fputs("null", f);
    /* predicted_* are nominal (not predictions) when the first decision's target was unknown */
    fprintf(f, ",\"nominal\":%s", r->nominal ? "true" : "false");
    num(f, "nominal_epochs", "%.6g", r->nominal ? r->nominal_epochs : NAN);
    /* a running run's latest forecast (null: none, or not running) */
    const struct scv_run_eta *e = &r->eta;
    if (!(e->written > 0)) {
        fputs(",\"eta\":null}", f);
        return;
    }
    fputs(",\"eta\":{", f);
    fprintf(f, "\"written\":%.6f", e->written);
    num(f, "remaining_s", "%.6g", e->remaining_s);
    num(f, "remaining_lo_s", "%.6g", e->remaining_lo_s);
    num(f, "remaining_hi_s", "%.6g", e->remaining_hi_s);
    num(f, "p_reach", "%.4g", e->p_reach);
    fprintf(f, ",\"overdue\":%s,\"nominal\":%s}}", e->overdue ? "true" : "false", e->nominal ? "true" : "false");
}
