/*
 * cuda-trace.so: counts and times the CUDA runtime and driver calls a process makes through its
 * dynamic symbol table (libfabric built without --enable-cuda-dlopen calls cudart and libcuda that
 * way, and so do fabtests), and prints one line per function at exit to stderr:
 *   cuda-trace pid <pid> <function> calls <n> total_us <t> mean_us <t/n>  [bytes <sum> for copies]
 * or, with CUDA_TRACE_DIR set, to <dir>/cuda-trace-<pid>.txt (a JMH fork's stderr may be gone by then).
 * A diagnostic for the GPU machine (it has no perf, nsys or ltrace), used to compare what the shm
 * provider does per device-memory write under two tools. Our JVM reaches libcuda through dlsym of
 * its own, so its own calls are not seen here: only the provider's.
 *
 * Build: gcc -O2 -shared -fPIC -o cuda-trace.so docs/perf/cuda-trace.c -ldl
 * Use:   LD_PRELOAD=/path/cuda-trace.so <command>   (after libjsig.so for a JVM)
 *
 * Every wrapper but the two IPC opens passes six integer-class arguments through: under the
 * x86-64 SysV ABI a callee with fewer reads only its own registers, and none of those functions
 * takes a float, a struct by value or more than six arguments. cudaIpcOpenMemHandle and
 * cuIpcOpenMemHandle_v2 take their 64-byte handle by value (in memory), so they have wrappers of
 * their own signature. The real functions are found with RTLD_NEXT, or, where libfabric and
 * libcudart were loaded RTLD_LOCAL (a JVM's dlopen), among the loaded objects by name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef long (*fn6)(long, long, long, long, long, long);

struct counter {
    const char *name;
    int copy_size_arg; /* index of the byte count among the arguments, or -1 */
    fn6 real;
    atomic_long calls;
    atomic_long ns;
    atomic_long bytes;
};

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* A library loaded with RTLD_LOCAL (libfabric under a JVM's dlopen, and its libcudart) is not
 * behind the preload for RTLD_NEXT: find it among the loaded objects by name instead. */
struct wanted {
    const char *part;
    void *handle;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct wanted *w = data;
    if (info->dlpi_name && strstr(info->dlpi_name, w->part)) {
        w->handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        return w->handle != NULL;
    }
    return 0;
}

static void *resolve(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (f) {
        return f;
    }
    struct wanted w = {strncmp(name, "cuda", 4) == 0 ? "libcudart" : "libcuda.so", NULL};
    dl_iterate_phdr(find_loaded, &w);
    return w.handle ? dlsym(w.handle, name) : NULL;
}

/* The real function behind c, found on first use; a process without it cannot be traced. */
static fn6 real_of(struct counter *c) {
    if (!c->real) {
        c->real = (fn6)resolve(c->name);
        if (!c->real) {
            fprintf(stderr, "cuda-trace: no %s behind the preload\n", c->name);
            _exit(97);
        }
    }
    return c->real;
}

static void tally(struct counter *c, long t0, long bytes) {
    atomic_fetch_add(&c->ns, now_ns() - t0);
    atomic_fetch_add(&c->calls, 1);
    atomic_fetch_add(&c->bytes, bytes);
}

static long traced(struct counter *c, long a, long b, long d, long e, long f, long g) {
    fn6 real = real_of(c);
    long args[6] = {a, b, d, e, f, g};
    long t0 = now_ns();
    long rc = real(a, b, d, e, f, g);
    tally(c, t0, c->copy_size_arg >= 0 ? args[c->copy_size_arg] : 0);
    return rc;
}

/* name, index of the size argument (-1: none) */
#define TRACED(X)                                                                                  \
    X(cudaMemcpy, 2)                                                                               \
    X(cudaMemcpyAsync, 2)                                                                          \
    X(cudaMemcpyPeer, 4)                                                                           \
    X(cudaMemset, 2)                                                                               \
    X(cudaStreamSynchronize, -1)                                                                   \
    X(cudaDeviceSynchronize, -1)                                                                   \
    X(cudaStreamCreateWithFlags, -1)                                                               \
    X(cudaEventRecord, -1)                                                                         \
    X(cudaEventQuery, -1)                                                                          \
    X(cudaSetDevice, -1)                                                                           \
    X(cudaGetDevice, -1)                                                                           \
    X(cudaGetDeviceCount, -1)                                                                      \
    X(cudaPointerGetAttributes, -1)                                                                \
    X(cudaIpcCloseMemHandle, -1)                                                                   \
    X(cudaIpcGetMemHandle, -1)                                                                     \
    X(cudaHostRegister, 1)                                                                         \
    X(cudaHostUnregister, -1)                                                                      \
    X(cuPointerGetAttribute, -1)                                                                   \
    X(cuPointerGetAttributes, -1)                                                                  \
    X(cuPointerSetAttribute, -1)                                                                   \
    X(cuMemGetAddressRange_v2, -1)                                                                 \
    X(cuIpcGetMemHandle, -1)                                                                       \
    X(cuIpcCloseMemHandle, -1)                                                                     \
    X(cuCtxGetCurrent, -1)                                                                         \
    X(cuCtxSetCurrent, -1)                                                                         \
    X(cuDeviceGet, -1)                                                                             \
    X(cuMemcpy, 2)                                                                                 \
    X(cuMemcpyAsync, 2)                                                                            \
    X(cuMemcpyDtoD_v2, 2)                                                                          \
    X(cuMemcpyHtoD_v2, 2)                                                                          \
    X(cuMemcpyDtoH_v2, 2)                                                                          \
    X(cuStreamSynchronize, -1)                                                                     \
    X(cuMemGetHandleForAddressRange, -1)

#define COUNTER(name, size_arg) static struct counter c_##name = {#name, size_arg};
TRACED(COUNTER)

#define WRAPPER(name, size_arg)                                                                    \
    long name(long a, long b, long d, long e, long f, long g) {                                    \
        return traced(&c_##name, a, b, d, e, f, g);                                                \
    }
TRACED(WRAPPER)

/* cudaIpcOpenMemHandle and cuIpcOpenMemHandle_v2 take a 64-byte handle by value (passed in memory). */
typedef struct {
    char reserved[64];
} ipc_handle;
typedef long (*ipc_open_fn)(void **, ipc_handle, unsigned);

/* Functions of that signature: name, then -1 (no size argument), for the list macros below. */
#define IPC_OPENS(X)                                                                               \
    X(cudaIpcOpenMemHandle, -1)                                                                    \
    X(cuIpcOpenMemHandle_v2, -1)

#define IPC_OPEN(name, size_arg)                                                                   \
    long name(void **p, ipc_handle h, unsigned flags) {                                            \
        ipc_open_fn real = (ipc_open_fn)real_of(&c_##name);                                        \
        long t0 = now_ns();                                                                        \
        long rc = real(p, h, flags);                                                               \
        tally(&c_##name, t0, 0);                                                                   \
        return rc;                                                                                 \
    }
IPC_OPENS(COUNTER)
IPC_OPENS(IPC_OPEN)

static void report(FILE *out, struct counter *c) {
    long n = atomic_load(&c->calls);
    if (n == 0) {
        return;
    }
    double us = atomic_load(&c->ns) / 1000.0;
    fprintf(out, "cuda-trace pid %d %-30s calls %10ld total_us %12.1f mean_us %9.3f", (int)getpid(), c->name, n, us,
            us / n);
    if (c->copy_size_arg >= 0) {
        fprintf(out, " bytes %ld", atomic_load(&c->bytes));
    }
    fprintf(out, "\n");
}

__attribute__((destructor)) static void report_all(void) {
    FILE *out = stderr;
    const char *dir = getenv("CUDA_TRACE_DIR");
    char path[4096];
    if (dir && snprintf(path, sizeof path, "%s/cuda-trace-%d.txt", dir, (int)getpid()) < (int)sizeof path) {
        long any = 0;
#define ANY(name, size_arg) any += atomic_load(&c_##name.calls);
        TRACED(ANY)
        IPC_OPENS(ANY)
        if (!any) {
            return;
        }
        FILE *f = fopen(path, "w");
        if (f) {
            out = f;
        }
    }
#define REPORT(name, size_arg) report(out, &c_##name);
    TRACED(REPORT)
    IPC_OPENS(REPORT)
    if (out != stderr) {
        fclose(out);
    }
}
