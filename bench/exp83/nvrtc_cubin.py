#!/usr/bin/env python3
"""Run 83: compile device-only sources to one sm_90 cubin with NVRTC, as mra-bench does
(--gpu-architecture=sm_90 -std=c++17), for the harness's NVRTC_CUBIN kernels."""
import ctypes, sys, glob, os
lib = glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../.ci/venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13*'))[0]
nv = ctypes.CDLL(lib)
out, srcs = sys.argv[1], sys.argv[2:]
src = ''.join(open(s).read() + '\n' for s in srcs).encode()
prog = ctypes.c_void_p()
assert nv.nvrtcCreateProgram(ctypes.byref(prog), src, b'run83.cu', 0, None, None) == 0
# the prototype's template, by its mangled name
name = b'stackp::stack_k10<2, 128, 0, 0>'
assert nv.nvrtcAddNameExpression(prog, name) == 0
opts = [b'--gpu-architecture=sm_90', b'-std=c++17', b'--ptxas-options=-v']
rc = nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
n = ctypes.c_size_t(); nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value); nv.nvrtcGetProgramLog(prog, log)
sys.stderr.write(log.value.decode())
if rc != 0: sys.exit(1)
lowered = ctypes.c_char_p(); nv.nvrtcGetLoweredName(prog, name, ctypes.byref(lowered))
print(lowered.value.decode())
nv.nvrtcGetCUBINSize(prog, ctypes.byref(n)); cub = ctypes.create_string_buffer(n.value); nv.nvrtcGetCUBIN(prog, cub)
open(out, 'wb').write(cub.raw)
