/*
 * hostlimits.c - what one run may take from the host it runs on (hostlimits.h): the host's
 * cores and memory read once (affinity, physical pages, the cgroup's memory limit), the
 * override parsed, a job's use estimated from its settings (the space's largest K and B,
 * the threads per rank, the data set each rank holds, the model's size, where the ranks
 * run) and held against the two bounds, a refusal naming the setting, the numbers and the
 * limit. Before it a `--workers 2,256` run on a 2-core VM started its K = 256 corner
 * locally (400 processes), and `synthetic:570471` x 1024 ranks asked for 2 TiB.
 */
#define _GNU_SOURCE
#include "job/hostlimits.h"
#include "train/train.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

/* the latest value of setting name, or NULL */
static const char *get(char *const *names, char *const *values, int n, const char *name)
{
    for (int i = n - 1; i >= 0; i--)
        if (!strcmp(names[i], name)) return values[i];
    return NULL;
}

/* A number of bytes in a cgroup file ("max" or unreadable: 0, no limit). */
static double cgroup_bytes(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[64] = "";
    if (!f) return 0;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    char *e = NULL;
    double v = ok ? strtod(buf, &e) : 0;
    return ok && e != buf && v > 0 && v < 1e18 ? v : 0;
}

scv_host_limits scv_host_limits_default(void)
{
    scv_host_limits l = {.threads_per_core = 8, .mem_share = 0.75, .rank_overhead_bytes = 64 * MIB};
    cpu_set_t set;
    CPU_ZERO(&set);
    l.cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (l.cores < 1) l.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (l.cores < 1) l.cores = 1;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    l.mem_bytes = pages > 0 && psz > 0 ? (double)pages * (double)psz : 4 * GIB;
    const char *cg[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (int i = 0; i < 2; i++) {
        double c = cgroup_bytes(cg[i]);
        if (c > 0 && c < l.mem_bytes) l.mem_bytes = c;
    }
    l.max_threads = (long)(l.threads_per_core * l.cores);
    l.max_mem_bytes = l.mem_share * l.mem_bytes;
    return l;
}

/* "16G", "512M", "1048576": bytes (binary units); -1 when malformed */
static double parse_size(const char *s, size_t len)
{
    char buf[64];
    if (!len || len >= sizeof buf) return -1;
    memcpy(buf, s, len), buf[len] = 0;
    char *e = NULL;
    errno = 0;
    double v = strtod(buf, &e);
    if (e == buf || errno || !(v > 0) || !isdigit((unsigned char)buf[0])) return -1;
    static const char units[] = "KMGT";
    const char *u = *e ? strchr(units, toupper((unsigned char)*e)) : NULL;
    if (*e && (!u || (e[1] && strcmp(e + 1, "iB") && strcmp(e + 1, "B")))) return -1;
    for (const char *k = units; u && k <= u; k++) v *= 1024;
    return v < 1e18 ? v : -1;
}

int scv_host_limits_parse(const char *spec, scv_host_limits *lim, scv_err *err)
{
    const char *p = spec ? spec : "";
    if (!*p) goto bad;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n > 8 && !strncmp(p, "threads=", 8)) {
            char *e = NULL;
            errno = 0;
            long v = strtol(p + 8, &e, 10);
            if (e != p + n || errno || v < 1 || v > 1L << 24)
                return scv_err_set(err, SCV_EINVAL, "--host-limits '%.100s': threads=%.*s: expected a whole number of "
                                   "rank-threads from 1 to %ld", spec, (int)(n - 8), p + 8, 1L << 24);
            lim->max_threads = v;
        } else if (n > 7 && !strncmp(p, "memory=", 7)) {
            double v = parse_size(p + 7, n - 7);
            if (v < 0)
                return scv_err_set(err, SCV_EINVAL, "--host-limits '%.100s': memory=%.*s: expected bytes, or a number "
                                   "with K, M, G or T (16G)", spec, (int)(n - 7), p + 7);
            lim->max_mem_bytes = v;
        } else {
            goto bad;
        }
        p += n + (p[n] == ',');
        if (p[-1] == ',' && !*p) goto bad;
    }
    return SCV_OK;
bad:
    return scv_err_set(err, SCV_EINVAL, "--host-limits '%.100s': expected threads=N,memory=SIZE (either or both; "
                       "SIZE as 16G)", spec ? spec : "");
}

/* An IDX file's decoded bytes: 4 per byte of its uncompressed data (pixels become floats);
 * a .gz file's uncompressed size is its last 4 bytes (RFC 1952 ISIZE). 0 when unreadable. */
static double idx_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode)) return 0;
    size_t n = strlen(path);
    if (n < 3 || strcmp(path + n - 3, ".gz")) return 4.0 * (double)st.st_size;
    FILE *f = fopen(path, "rb");
    unsigned char b[4];
    int ok = f && st.st_size >= 4 && !fseeko(f, -4, SEEK_END) && fread(b, 1, 4, f) == 4;
    if (f) fclose(f);
    return ok ? 4.0 * (double)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24)
              : 0;
}

/* The data set one rank holds (*per_rank), or once on the host (*shared: the built-in data
 * set's decoded cache in /dev/shm, mapped by every rank). */
static void data_bytes(const char *spec, double *per_rank, double *shared)
{
    *per_rank = *shared = 0;
    if (!spec) spec = scv_train_params_default().dataset;
    if (!strncmp(spec, "synthetic:", 10)) {
        long long n = atoll(spec + 10);
        if (n > 0) *per_rank = (double)(n + n / 5) * (double)SCV_SYNTHETIC_SAMPLE_BYTES;
        return;
    }
    int builtin = !strcmp(spec, "fashion-mnist");
    const char *dir = builtin ? SCV_FASHION_MNIST_DIR : spec;
    DIR *d = opendir(dir);
    double sum = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strstr(e->d_name, "-ubyte")) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            sum += idx_bytes(path);
        }
    if (d) closedir(d);
    *(builtin ? shared : per_rank) = sum;
}

/* The model's parameters and activation floats per sample (its inputs 28x28, 10 classes):
 * an mlp's and logreg's counted from their layers, a convolutional network built. */
static void model_size(const char *model, const char *hidden, double *params, double *acts)
{
    const scv_train_params t = scv_train_params_default();
    *params = *acts = 0;
    if (!model) model = t.model;
    scv_net_spec spec = {.name = model, .in_c = 1, .in_h = 28, .in_w = 28, .n_classes = 10};
    if (!strcmp(model, "mlp") || !strcmp(model, "logreg")) {
        if (!strcmp(model, "mlp") && scv_net_parse_hidden(hidden ? hidden : t.hidden, &spec, NULL)) return;
        double in = 784;
        for (int i = 0; !strcmp(model, "mlp") && i < spec.n_hidden; i++) {
            *params += in * spec.hidden[i] + spec.hidden[i];
            *acts += 2.0 * spec.hidden[i]; /* the dense layer's and its ReLU's */
            in = spec.hidden[i];
        }
        *params += in * 10 + 10, *acts += 10;
        return;
    }
    scv_net *m = NULL;
    if (scv_net_new(&spec, &m, NULL)) return;
    *params = (double)scv_net_nparams(m), *acts = (double)scv_net_act_floats(m);
    scv_net_free(m);
}

static int is_this_host(const char *h)
{
    char me[256] = "";
    if (!strcmp(h, "localhost") || !strncmp(h, "127.", 4) || !strcmp(h, "::1")) return 1;
    if (gethostname(me, sizeof me - 1)) return 0;
    size_t n = strcspn(me, ".");
    return !strcmp(h, me) || (strlen(h) == n && !strncmp(h, me, n));
}

/* A hostfile's ranks on this host: Open MPI fills the hosts' slots in the file's order (a
 * line without slots= has one); ranks beyond every slot are spread over the hosts as the
 * slots are (this host's share, rounded up). *total gets all slots. */
static int hostfile_local(const char *path, int ranks, long *total, long *local_slots)
{
    FILE *f = fopen(path, "r");
    char line[1100];
    int placed_here = 0, left = ranks;
    *total = *local_slots = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *h = line + strspn(line, " \t");
        if (*h == '#' || !h[strcspn(h, "\r\n")] || strcspn(h, " \t\r\n#") == 0) continue;
        h[strcspn(h, " \t\r\n#")] = 0;
        char *rest = h + strlen(h) + 1, *at = strchr(h, '@');
        long slots = 1;
        const char *s = strstr(rest, "slots=");
        if (s && (s == rest || s[-1] == ' ' || s[-1] == '\t')) slots = atol(s + 6);
        if (slots < 1) slots = 1;
        int here = is_this_host(at ? at + 1 : h);
        int take = left < slots ? left : (int)slots;
        left -= take;
        *total += slots;
        if (here) placed_here += take, *local_slots += slots;
    }
    if (f) fclose(f);
    if (left > 0 && *total > 0) placed_here += (int)ceil((double)left * (double)*local_slots / (double)*total);
    if (!*total) placed_here = ranks; /* nothing read: as if local */
    return placed_here;
}

int scv_host_use_of(const scv_job_setup *js, char *const *names, char *const *values, int n,
                    const scv_host_limits *lim, scv_host_use *u, scv_err *err)
{
    (void)err;
    const scv_run_params *p = &js->params;
    memset(u, 0, sizeof *u);
    u->ranks = p->n_workers ? p->workers[p->n_workers - 1] : 1;
    u->batch = p->n_batches ? p->batches[p->n_batches - 1] : 0;
    const char *th = get(names, values, n, "threads"), *hosts = get(names, values, n, "hosts");
    const char *cl = get(names, values, n, "cluster"), *exec = get(names, values, n, "exec");
    u->threads = th && atoi(th) > 0 ? atoi(th) : 1;
    if (cl) {
        u->local_ranks = 0;
        snprintf(u->where, sizeof u->where, "on cluster %s's VMs", cl);
    } else if (hosts) {
        long total = 0, here = 0;
        u->local_ranks = hostfile_local(hosts, u->ranks, &total, &here);
        snprintf(u->where, sizeof u->where, "here (hostfile %.60s: %ld slots, %ld here)", hosts, total, here);
    } else {
        u->local_ranks = u->ranks;
        snprintf(u->where, sizeof u->where, "here");
    }
    if (!exec) { /* an external trainer's data and model are its own: its ranks count as processes */
        double params = 0, acts = 0;
        data_bytes(get(names, values, n, "dataset"), &u->data_bytes, &u->shared_bytes);
        model_size(get(names, values, n, "model"), get(names, values, n, "hidden"), &params, &acts);
        u->model_bytes = 16.0 * params;
        u->act_bytes = 4.0 * (2.0 * acts + 784);
    }
    u->rank_bytes = lim->rank_overhead_bytes + u->data_bytes + u->model_bytes;
    u->total_bytes = u->local_ranks * u->rank_bytes + (u->local_ranks ? u->shared_bytes + u->batch * u->act_bytes : 0);
    return SCV_OK;
}

/* bytes for people: "2.1 GiB", "512 MiB" */
static const char *bytes_text(double b, char *buf, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    while (b >= 1024 && i < 5) b /= 1024, i++;
    snprintf(buf, cap, b < 10 && i ? "%.1f %s" : "%.0f %s", b, unit[i]);
    return buf;
}

int scv_host_limits_eval(const scv_host_limits *lim, const scv_host_use *u, const char *workers, char *limit,
                         size_t lcap, scv_err *err)
{
    if (limit) snprintf(limit, lcap, "%s", "");
    const char *raise = "fewer --workers (a partial search starts the space's corners), a --cluster or --hosts with "
                        "enough slots (ranks elsewhere do not count), or --host-limits";
    char wk[160];
    snprintf(wk, sizeof wk, "--workers %.100s", workers ? workers : "1,2 (the default)");
    double threads = (double)u->local_ranks * u->threads;
    if (threads > lim->max_threads) {
        if (limit) snprintf(limit, lcap, "max_local_threads");
        char what[200];
        if (u->threads > 1 && u->local_ranks <= lim->max_threads) /* the threads alone would fit: blame them */
            snprintf(what, sizeof what, "--threads %d with %s", u->threads, wk);
        else
            snprintf(what, sizeof what, "%s", wk);
        return scv_err_set(err, SCV_EINVAL, "%s: %d ranks %s x %d thread%s (--threads) = %.0f rank-threads, over this "
                           "host's limit max_local_threads = %ld (%g a core x %d cores); %s threads=N", what,
                           u->local_ranks, u->where, u->threads, u->threads == 1 ? "" : "s", threads, lim->max_threads,
                           lim->threads_per_core, lim->cores, raise);
    }
    if (u->total_bytes > lim->max_mem_bytes) {
        char rank[32], data[32], model[32], proc[32], total[32], max[32], host[32];
        if (limit) snprintf(limit, lcap, "max_local_memory");
        return scv_err_set(err, SCV_EINVAL, "%s with --dataset: %d ranks %s x %s a rank (data %s, model %s, process %s) "
                           "= %s, over this host's limit max_local_memory = %s (%g of %s); a smaller data set, %s "
                           "memory=SIZE", wk, u->local_ranks, u->where, bytes_text(u->rank_bytes, rank, sizeof rank),
                           bytes_text(u->data_bytes, data, sizeof data), bytes_text(u->model_bytes, model, sizeof model),
                           bytes_text(lim->rank_overhead_bytes, proc, sizeof proc),
                           bytes_text(u->total_bytes, total, sizeof total), bytes_text(lim->max_mem_bytes, max, sizeof max),
                           lim->mem_share, bytes_text(lim->mem_bytes, host, sizeof host), raise);
    }
    return SCV_OK;
}

int scv_host_limits_check(scv_job_setup *js, char *const *names, char *const *values, int n, scv_err *err)
{
    scv_host_limits lim = scv_host_limits_default();
    const char *spec = get(names, values, n, "host-limits");
    scv_host_use u;
    int rc = spec ? scv_host_limits_parse(spec, &lim, err) : SCV_OK;
    if (!rc) rc = scv_host_use_of(js, names, values, n, &lim, &u, err);
    if (!rc) rc = scv_host_limits_eval(&lim, &u, get(names, values, n, "workers"), NULL, 0, err);
    if (rc && rc != SCV_ENOMEM) js->bad_setting = 1;
    return rc;
}
