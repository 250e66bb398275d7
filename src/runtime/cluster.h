/*
 * cluster.h - an emulated cloud cluster on this machine: one network namespace per VM,
 * joined to a bridge by a veth whose both ends are shaped with tc tbf (each direction),
 * and one cgroup v1 CPU quota per VM. MPI jobs enter it through an rsh agent.
 */
#ifndef SCV_CLUSTER_H
#define SCV_CLUSTER_H
#include "scv.h"

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
#endif
