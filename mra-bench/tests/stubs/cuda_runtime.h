// A stub of the part of the CUDA runtime API that an mra-bench export and
// examples/export_demo.cu use: enough to compile them with a host C++ compiler (or clang's CUDA
// mode with -nocudainc) on a machine without the CUDA toolkit. The functions are defined by the
// test that compiles against this (recording what they were asked), never by a real runtime.
#ifndef MRA_TEST_STUB_CUDA_RUNTIME_H
#define MRA_TEST_STUB_CUDA_RUNTIME_H

#include <stddef.h>

#if defined(__CUDA__)  // clang -x cuda -nocudainc: the attributes and built-ins CUDA headers give
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
#include <__clang_cuda_builtin_vars.h>
__device__ void __syncthreads();
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ double fma(double, double, double);
__device__ float fmaf(float, float, float);
struct __align__(16) double2 { double x, y; };
struct __align__(8) float2 { float x, y; };
struct __align__(16) float4 { float x, y, z, w; };
__device__ inline double2 make_double2(double x, double y) { double2 r; r.x = x; r.y = y; return r; }
__device__ inline float2 make_float2(float x, float y) { float2 r; r.x = x; r.y = y; return r; }
#endif

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNoDevice = 100 } cudaError_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct cudaDeviceProp {
    char name[256];
    int major, minor;
};

extern "C" {
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes, cudaStream_t stream);
cudaError_t cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetLastError(void);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_size, size_t dynamic_shared_bytes);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device);
cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, enum cudaMemcpyKind kind);
cudaError_t cudaMemset(void* ptr, int value, size_t bytes);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
// What clang lowers `kernel<<<grid, block, shared, stream>>>(...)` to.
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_bytes = 0, cudaStream_t stream = 0);
cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shared_bytes = 0, cudaStream_t stream = 0);
}

template <class T>
inline cudaError_t cudaMalloc(T** ptr, size_t bytes) {
    return cudaMalloc((void**)ptr, bytes);
}

#endif
