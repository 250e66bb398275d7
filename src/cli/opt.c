/*
 * opt.c - generic code over the option tables (opt.h): getopt_long's table, --help, the
 * completion's words and the man page's paragraphs are all printed from the one table of
 * each command, so they cannot disagree with what the command parses; a value is read as
 * its row says (cli_opt_read, core/option.c's reader).
 */
#include "cli/opt.h"
#include "search/jobopts.h"

#include <string.h>

static int is_end(const scv_option *o)
{
    return !o->name && !o->help;
}

const scv_option *cli_opt_text(const scv_option *o)
{
    const scv_option *j = o->name && (o->flags & SCV_OPT_FROM_JOB) ? scv_job_option_find(o->name) : NULL;
    return j ? j : o;
}

int cli_opt_read(const scv_option *o, void *base, const char *text, scv_err *err)
{
    const scv_option *x = cli_opt_text(o);
    scv_option row = *o; /* its own name, the job key's value */
    row.v = x->v, row.values = x->values;
    return scv_option_read(&row, base, text, err);
}

const scv_option *cli_opt_find(const scv_option *t, const char *name)
{
    for (; name && !is_end(t); t++)
        if (t->name && !strcmp(t->name, name)) return t;
    return NULL;
}

int cli_opt_getopt(const scv_option *t, struct option *out, size_t cap)
{
    size_t n = 0;
    for (; !is_end(t); t++) {
        if (!t->name || !t->id) continue;
        if (n + 2 >= cap) return -1;
        out[n++] = (struct option){t->name, cli_opt_text(t)->arg ? required_argument : no_argument, NULL, t->id};
    }
    out[n] = (struct option){"help", no_argument, NULL, 'h'};
    out[n + 1] = (struct option){NULL, 0, NULL, 0};
    return (int)n + 1;
}

void cli_opt_help(FILE *f, const scv_option *t, int col, unsigned skip)
{
    for (; !is_end(t); t++) {
        if (t->flags & skip) continue;
        if (!t->name) {
            fprintf(f, "%s\n", t->help);
            continue;
        }
        const scv_option *x = cli_opt_text(t);
        int len = fprintf(f, "  --%s%s%s", t->name, x->arg ? " " : "", x->arg ? x->arg : "");
        const char *h = x->help ? x->help : "";
        fprintf(f, "%*s", len <= col - 2 ? col - len : 2, "");
        for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1) fprintf(f, "%.*s\n%*s", (int)(nl - h), h, col, "");
        fprintf(f, "%s\n", h);
    }
}

void cli_opt_words(FILE *f, const scv_option *t)
{
    for (; !is_end(t); t++)
        if (t->name) fprintf(f, "--%s\n", t->name);
}

/* s as roff text: '-' and '\' escaped, a line never starting with '.' or '\'' */
static void roff(FILE *f, const char *s, int line_start)
{
    for (; *s; s++) {
        if (line_start && (*s == '.' || *s == '\'')) fputs("\\&", f);
        line_start = *s == '\n';
        if (*s == '-') fputs("\\-", f);
        else if (*s == '\\') fputs("\\e", f);
        else fputc(*s, f);
    }
}

void cli_opt_man(FILE *f, const scv_option *t)
{
    for (; !is_end(t); t++) {
        if (!t->name) {
            fputs(".PP\n.I \"", f);
            roff(f, t->help, 0);
            fputs("\"\n", f);
            continue;
        }
        const scv_option *x = cli_opt_text(t);
        fputs(x->arg ? ".TP\n.BI \"" : ".TP\n.B \"", f);
        roff(f, "--", 0);
        roff(f, t->name, 0);
        if (x->arg) {
            fputs("\" \" ", f);
            roff(f, x->arg, 0);
        }
        fputs("\"\n", f);
        roff(f, x->help ? x->help : "", 1);
        fputs("\n", f);
    }
}
