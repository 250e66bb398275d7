/*
 * cluster.h - an emulated cloud cluster on this machine: one network namespace per VM,
 * joined to a bridge by a veth whose both ends are shaped with tc tbf (each direction),
 * and one cgroup v1 CPU quota per VM. MPI jobs enter it through an rsh agent.
 */
#ifndef SCV_CLUSTER_H
#define SCV_CLUSTER_H
#include "scv.h"

#include <signal.h>

#define SCV_CLUSTER_MAX_VMS 64

typedef struct scv_emu_type {
    char name[64], catalog_type[64];
    double cores, bandwidth_mbit, memory_gib;
} scv_emu_type;

typedef struct scv_cluster {
    char name[32];
    int subnet;                 /* VMs are 10.213.<subnet>.<i> */
    int n;
    scv_emu_type vm[SCV_CLUSTER_MAX_VMS];
    double quota[SCV_CLUSTER_MAX_VMS]; /* current CPU quota in cores (throttle changes it) */
} scv_cluster;

/* Reads data/emulated-vms.csv (or path): bad rows are errors naming their line. */
int scv_emu_types_load(const char *path, scv_emu_type **types, size_t *n, scv_err *err);
/* Checks root, iproute2, tc and the cgroup v1 cpu controller; says which is missing. */
int scv_cluster_check(scv_err *err);
/* spec "TYPE:COUNT[,TYPE:COUNT...]" */
int scv_cluster_up(const char *name, const char *spec, const char *types_path, scv_cluster *out,
                   scv_err *err);
/* Removes everything `up` made for name; idempotent (nothing left is not an error). */
int scv_cluster_down(const char *name, scv_err *err);
int scv_cluster_load(const char *name, scv_cluster *out, scv_err *err);
/* Names of existing clusters (newline-separated) into buf. */
int scv_cluster_list(char *buf, size_t cap);
int scv_cluster_throttle(const char *name, int vm, double cores, scv_err *err);
/* Moves the calling process into VM i (1-based): its CPU cgroup, network and UTS namespace. */
int scv_cluster_enter(const scv_cluster *c, int vm, scv_err *err);
/* Finds the cluster and VM of an address 10.213.S.I. */
int scv_cluster_by_host(const char *host, scv_cluster *out, int *vm, scv_err *err);
void scv_cluster_addr(const scv_cluster *c, int vm, char *buf, size_t cap);
/* The VMs of c in placement order for a catalog type (a launch's place_type): those of that
 * type first, in their order, then the others; 1-based, c->n of them into order. Returns how
 * many are of the type (0, or type NULL: order is 1..n). */
int scv_cluster_place_order(const scv_cluster *c, const char *type, int *order);
/* How many VMs of c are of catalog type `type`. */
int scv_cluster_count_type(const scv_cluster *c, const char *type);

/* ---- the VM-level operations preemptions use (cluster.c) ---- */
/* A VM's own state directory, /run/scavenger/clusters/NAME.d/I (made by mkdir_p when asked). */
int scv_cluster_vm_dir(const char *name, int vm, int make, char *buf, size_t cap, scv_err *err);
/* SIGKILLs every process in VM vm's CPU cgroup, waiting up to a second for it to empty. */
void scv_cluster_vm_kill(const char *name, int vm);
/* Sets VM vm's link up or down at both ends (its eth0 and its bridge port). */
int scv_cluster_vm_link(const char *name, int vm, int up, scv_err *err);

/* ---- emulated preemptions (preempt.c, docs/CLUSTER.md "Preemptions") ---- */
#define SCV_PREEMPT_NOTICE_ENV "SCV_PREEMPT_NOTICE_FILE" /* set by scv_cluster_enter */
#define SCV_PREEMPT_NOTICE_FILE "preempt-notice"        /* in the VM's directory */
#define SCV_PREEMPT_DONE_FILE "preempted"

/* The longest notice accepted (SCV_PREEMPT_POLICY.max_notice_s; `cluster`'s --notice row). */
#define SCV_PREEMPT_MAX_NOTICE_S 3600.0
/* Policy numbers of preemptions and their traces. */
typedef struct scv_preempt_policy {
    double default_notice_s; /* `preempt` without --notice, `notice` without :S (GCP, Azure: ~30 s) */
    double max_notice_s;     /* longest notice accepted (AWS gives 120 s) */
    double default_down_s;   /* random mode: time from a take-down to the VM's restore */
    size_t max_events;       /* a trace's longest */
} scv_preempt_policy;
extern const scv_preempt_policy SCV_PREEMPT_POLICY;

typedef enum { SCV_VM_UP = 0, SCV_VM_NOTICE, SCV_VM_PREEMPTED } scv_vm_state;
/* A VM's preemption state; *at (may be NULL): when it goes (NOTICE) or went (PREEMPTED), epoch s. */
scv_vm_state scv_cluster_vm_state(const char *name, int vm, double *at);
/* Waits up to timeout_s for a notice to end and a take-down or restore under way to finish;
 * returns the VM's state then. */
scv_vm_state scv_cluster_vm_wait(const char *name, int vm, double timeout_s);
/* Preempts VM vm: with notice_s > 0 writes the notice file and leaves a detached process that
 * takes the VM down at the notice's end; with 0 takes it down now. A VM already under notice
 * or preempted is refused, except that kill_now (notice_s 0) ends a running notice early. */
int scv_cluster_preempt(const char *name, int vm, double notice_s, int kill_now, scv_err *err);
/* scv_cluster_place_order, with the VMs a launch can use first: those up, then those under a
 * notice, then the preempted ones (`enter` refuses them), each group in placement order.
 * Returns how many are not preempted (the first ones of order). */
int scv_cluster_place_up(const scv_cluster *c, const char *type, int *order);
/* Brings a preempted VM back in place (or cancels its notice): link up, files removed. */
int scv_cluster_restore(const char *name, int vm, scv_err *err);

typedef enum { SCV_PE_NOTICE = 0, SCV_PE_KILL, SCV_PE_RESTORE } scv_preempt_kind;
typedef struct scv_preempt_event {
    double t;        /* seconds from the replay's start */
    int vm;          /* 1-based */
    int kind;        /* scv_preempt_kind */
    double notice_s; /* SCV_PE_NOTICE */
    int line;        /* in the trace file (0 for a drawn trace) */
} scv_preempt_event;

/* Reads a trace: lines "SECONDS VM EVENT" (EVENT notice[:S] | kill | restore), '#' comments,
 * times not decreasing; with n_vms > 0 VMs must lie in 1..n_vms and the events must make
 * sense in order (no notice to a VM already leaving, no restore of a running one). Errors
 * name path:line. *ev is malloc'ed. */
int scv_preempt_trace_read(const char *path, int n_vms, scv_preempt_event **ev, size_t *n, scv_err *err);
/* The same order check on events (path names the trace in messages). */
int scv_preempt_trace_check(const char *path, const scv_preempt_event *ev, size_t n, int n_vms, scv_err *err);

/* The seeded random mode: per VM, lifetimes (from the start or a restore to the notice) are
 * exponential with mean mean_life_s; the take-down follows notice_s later (0: a kill), the
 * restore down_s after that; events from horizon_s on are not drawn. */
typedef struct scv_preempt_random {
    uint64_t seed;
    double mean_life_s, notice_s, down_s, horizon_s;
    const int *vms; /* the VMs that can be preempted */
    int n_vms;
} scv_preempt_random;
int scv_preempt_trace_random(const scv_preempt_random *p, scv_preempt_event **ev, size_t *n, scv_err *err);
/* Writes events as a trace file that scv_preempt_trace_read reads back to the same events;
 * p (may be NULL) is stated in its header comment. */
void scv_preempt_trace_write(FILE *f, const scv_preempt_random *p, const scv_preempt_event *ev, size_t n);
/* Replays events on cluster name in real time from now, progress lines on progress (may be
 * NULL); returns when the last take-down is due, or SCV_EINTR soon after *stop is set. */
int scv_preempt_replay(const char *name, const scv_preempt_event *ev, size_t n, volatile sig_atomic_t *stop,
                       FILE *progress, scv_err *err);
#endif
