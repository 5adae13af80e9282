// A stub of the part of the HIP runtime API that an mra-bench export for AMD uses: enough to
// compile mra_transform.h with a host C++ compiler without ROCm. The functions are defined by
// the test that compiles against this (recording what they were asked), never by a runtime.
#ifndef MRA_TEST_STUB_HIP_RUNTIME_H
#define MRA_TEST_STUB_HIP_RUNTIME_H

#include <stddef.h>

typedef enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 } hipError_t;
typedef struct ihipStream_t* hipStream_t;
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8 };
typedef enum hipDeviceAttribute_t { hipDeviceAttributeMultiprocessorCount = 63 } hipDeviceAttribute_t;

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

extern "C" {
hipError_t hipLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes, hipStream_t stream);
hipError_t hipFuncSetAttribute(const void* func, enum hipFuncAttribute attr, int value);
const char* hipGetErrorString(hipError_t error);
hipError_t hipGetDevice(int* device);
hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int device);
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_size, size_t dynamic_shared_bytes);
}

#endif
