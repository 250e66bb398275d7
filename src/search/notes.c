/*
 * notes.c - a note as data: its code (scv_note_code, the names in scv.h's SCV_NOTE_MAP), and
 * the numbers and strings its text shows, read off the same format and arguments that
 * render it, in their order, so the text and the data never disagree (loop_note).
 */
#include "loop_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *scv_note_code_name(scv_note_code c)
{
    static const char *const names[] = {
#define SCV__NOTE(name, text) text,
        SCV_NOTE_MAP(SCV__NOTE)
#undef SCV__NOTE
    };
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : NULL;
}

/* The numbers and strings a printf format's arguments ap hold, in order, into ev's num and
 * str (as many as they hold). A '*' width or precision is not a number of the text's. */
static void format_args(const char *fmt, va_list ap, scv_run_event *ev)
{
    int n = 0, ns = 0;
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') continue;
        if (*++f == '%') continue;
        if (!*f) break;
        while (*f && strchr("-+ #0", *f)) f++;
        if (*f == '*') (void)va_arg(ap, int), f++;
        while (*f >= '0' && *f <= '9') f++;
        if (*f == '.') {
            f++;
            if (*f == '*') (void)va_arg(ap, int), f++;
            while (*f >= '0' && *f <= '9') f++;
        }
        int l = 0, z = 0, L = 0;
        for (;; f++) {
            if (*f == 'l') l++;
            else if (*f == 'z' || *f == 't' || *f == 'j') z = 1;
            else if (*f == 'L') L = 1;
            else if (*f != 'h') break;
        }
        double x;
        switch (*f) {
        case 'd': case 'i':
            x = z ? (double)va_arg(ap, ptrdiff_t) : l >= 2 ? (double)va_arg(ap, long long)
                : l ? (double)va_arg(ap, long) : (double)va_arg(ap, int);
            break;
        case 'u': case 'x': case 'X': case 'o':
            x = z ? (double)va_arg(ap, size_t) : l >= 2 ? (double)va_arg(ap, unsigned long long)
                : l ? (double)va_arg(ap, unsigned long) : (double)va_arg(ap, unsigned);
            break;
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
            x = L ? (double)va_arg(ap, long double) : va_arg(ap, double);
            break;
        case 'c': (void)va_arg(ap, int); continue;
        case 's': {
            const char *t = va_arg(ap, const char *);
            if (ns < SCV_NOTE_MAX_STRS) ev->str[ns++] = t;
            continue;
        }
        case 'p': (void)va_arg(ap, void *); continue;
        default: goto done; /* (the end, or no conversion this project writes: the rest is not read) */
        }
        if (n < SCV_NOTE_MAX_NUMS) ev->num[n++] = x;
    }
done:
    ev->n_num = n, ev->n_str = ns;
}

void loop_note(loop *l, scv_run_event_kind kind, scv_note_code code, const char *fmt, ...)
{
    char text[512];
    scv_run_event ev = {.kind = kind, .workers = l->K, .batch = l->B, .text = text, .code = code};
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    vsnprintf(text, sizeof text, fmt, ap);
    format_args(fmt, aq, &ev);
    va_end(aq);
    va_end(ap);
    loop_emit(l, ev);
}
