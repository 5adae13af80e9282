/* A stand-in libcuda.so.1 for the tests of mra-bench/tests/bad_environments.rs, which run
 * without a GPU. Built two ways:
 *   -DBROKEN   a library that loads but lacks cuInit (a damaged or wrong driver install);
 *   -DNO_OCCUPANCY  the stub GPU without cuOccupancyMaxActiveBlocksPerMultiprocessor (an old or
 *              partial driver);
 *   default    one "Stub GPU" of compute capability 9.0 with $STUB_FREE_MIB MiB free
 *              (default 81920): enough of the driver API for mra-bench to open the device,
 *              plan, check memory and refuse, never to launch (cuModuleLoadData fails).
 */
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, NOT_SUPPORTED = 801 };

CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuGetErrorName(CUresult e, const char **s) { (void)e; *s = "CUDA_ERROR_STUB"; return OK; }
CUresult cuGetErrorString(CUresult e, const char **s) { (void)e; *s = "the stub driver cannot do this"; return OK; }

#ifndef BROKEN
CUresult cuInit(unsigned flags) { (void)flags; return OK; }
/* NVRTC, when it finds a libcuda in the process, asks it for its private export tables: refuse. */
CUresult cuGetExportTable(const void **table, const void *id) { (void)id; *table = 0; return NOT_SUPPORTED; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return OK; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    (void)dev;
    switch (attr) {
    case 75: *v = 9; break;   /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    case 76: *v = 0; break;   /* ..._MINOR */
    case 16: *v = 132; break; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
    default: *v = 0;
    }
    return OK;
}
CUresult cuDeviceGetName(char *name, int len, int dev) { (void)dev; strncpy(name, "Stub GPU", len); return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = (void *)0x1; return OK; }
CUresult cuDevicePrimaryCtxRelease(int dev) { (void)dev; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return OK; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return OK; }
CUresult cuCtxSynchronize(void) { return OK; }
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    const char *mib = getenv("STUB_FREE_MIB");
    size_t f = (size_t)(mib ? atoll(mib) : 81920) << 20;
    *free_bytes = f;
    *total = f;
    return OK;
}
/* Present (the probe looks for them) but refusing: nothing may run on a stub. */
CUresult cuMemAlloc_v2(void *p, size_t n) { (void)p; (void)n; return NOT_SUPPORTED; }
CUresult cuMemcpyHtoD_v2(void) { return NOT_SUPPORTED; }
CUresult cuMemcpyDtoH_v2(void) { return NOT_SUPPORTED; }
CUresult cuModuleLoadData(void **m, const void *image) { (void)m; (void)image; return NOT_SUPPORTED; }
CUresult cuModuleGetFunction(void) { return NOT_SUPPORTED; }
CUresult cuLaunchKernel(void) { return NOT_SUPPORTED; }
#ifndef NO_OCCUPANCY
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int threads, size_t shared) { (void)f; (void)threads; (void)shared; *n = 0; return NOT_SUPPORTED; }
#endif
#endif

#ifndef BROKEN
/* Streams and events exist (a sweep makes them before measuring); they never run anything. */
CUresult cuStreamCreate(void **s, unsigned flags) { (void)flags; *s = (void *)0x2; return OK; }
CUresult cuStreamDestroy_v2(void *s) { (void)s; return OK; }
CUresult cuEventCreate(void **e, unsigned flags) { (void)flags; *e = (void *)0x3; return OK; }
CUresult cuEventDestroy_v2(void *e) { (void)e; return OK; }
#endif
