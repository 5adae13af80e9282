// Every block-level transform of this export: #include in a kernel's translation unit and call
// mra::k<K>_<dtype>::transform_block(...) (see each <entry>_device.h and README.md).
#ifndef MRA_TRANSFORM_DEVICE_H
#define MRA_TRANSFORM_DEVICE_H

#include "mra_fused_pipe_k5_f64_device.h"  // K = 5: fused-pipe
#include "mra_fused_pipe_k8_f64_device.h"  // K = 8: fused-pipe
#include "mra_fused_pipe_k13_f64_device.h"  // K = 13: fused-pipe
#include "mra_fused_pipe_k16_f64_device.h"  // K = 16: fused-pipe
#include "mra_fused_pipe_k20_f64_device.h"  // K = 20: fused-pipe
#include "mra_l7_breg_k28_f64_device.h"  // K = 28: L7-breg
#include "mra_l7_breg_k32_f64_device.h"  // K = 32: L7-breg

#endif  // MRA_TRANSFORM_DEVICE_H
