/*
 * json_out.h - writing JSON by hand safely: strings from outside (catalog and profile
 * names, --vm-type, paths, notes) are escaped, never pasted between quotes as they are.
 * Used by src/io (plan points) and the commands' --json outputs (src/cli).
 */
#ifndef SCV_IO_JSON_OUT_H
#define SCV_IO_JSON_OUT_H
#include <stddef.h>
#include <stdio.h>

/* Writes s (NULL as "") as a JSON string, quotes included: '"', '\\' and control
 * characters are escaped (\n, \t, ... or \u00XX); other bytes pass through. */
void scv_json_str(FILE *f, const char *s);

/* The same into buf (always NUL-terminated; truncated at cap, never inside an escape);
 * returns buf, for use as a printf argument. */
char *scv_json_strbuf(char *buf, size_t cap, const char *s);
#endif
