/* What STREAM's HPCC edition asks of HPCC and MPI, for one process with
 * OpenMP threads: the reference kernels, timing and checks run unchanged,
 * and the calls between ranks are those of a single rank. */
#ifndef NNBENCH_STREAM_HPCC_H
#define NNBENCH_STREAM_HPCC_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    char outFname[256];
    int StreamVectorSize;
    int StreamThreads;
    long ArrayElements;
} HPCC_Params;

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
#define MPI_DOUBLE 1
#define MPI_MIN 1

#define Mmin(a, b) (((a) < (b)) ? (a) : (b))
#define Mmax(a, b) (((a) > (b)) ? (a) : (b))

#define HPCC_XMALLOC(type, count) ((type *)malloc(sizeof(type) * (size_t)(count)))
#define HPCC_free(pointer) free(pointer)

static inline double MPI_Wtime(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1.0e-9 * (double)now.tv_nsec;
}
static inline int MPI_Comm_size(MPI_Comm comm, int *size) { (void)comm; *size = 1; return 0; }
static inline int MPI_Comm_rank(MPI_Comm comm, int *rank) { (void)comm; *rank = 0; return 0; }
static inline int MPI_Barrier(MPI_Comm comm) { (void)comm; return 0; }
static inline int MPI_Abort(MPI_Comm comm, int code) { (void)comm; exit(code); }
static inline int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type,
                                MPI_Op op, MPI_Comm comm) {
    (void)type; (void)op; (void)comm;
    memmove(out, in, sizeof(double) * (size_t)count);
    return 0;
}
static inline int MPI_Gather(const void *in, int count, MPI_Datatype type, void *out,
                             int out_count, MPI_Datatype out_type, int root, MPI_Comm comm) {
    (void)type; (void)out_count; (void)out_type; (void)root; (void)comm;
    memmove(out, in, sizeof(double) * (size_t)count);
    return 0;
}

/* The elements of each of the three arrays: the caller's choice. */
static inline int HPCC_LocalVectorSize(HPCC_Params *params, int vectors, size_t size, int pow2) {
    (void)vectors; (void)size; (void)pow2;
    return (int)params->ArrayElements;
}

int HPCC_Stream(HPCC_Params *params, int doIO, MPI_Comm comm, int world_rank,
                double *copyGBs, double *scaleGBs, double *addGBs, double *triadGBs,
                int *failure);

#endif
