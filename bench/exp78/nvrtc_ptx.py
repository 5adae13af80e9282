#!/usr/bin/env python3
"""Compile a device-only .cu file to PTX with NVRTC (ctypes), for ptxas -v offline."""
import ctypes, sys, glob, os
lib = glob.glob(os.path.join(os.path.dirname(__file__), '../../.ci/venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13*'))[0]
nv = ctypes.CDLL(lib)
src = open(sys.argv[1]).read().encode()
arch = sys.argv[2] if len(sys.argv) > 2 else 'sm_90a'
prog = ctypes.c_void_p()
assert nv.nvrtcCreateProgram(ctypes.byref(prog), src, sys.argv[1].encode(), 0, None, None) == 0
opts = [f'--gpu-architecture=compute_{arch[3:]}'.encode(), b'-std=c++17', b'-default-device']
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = nv.nvrtcCompileProgram(prog, len(opts), arr)
n = ctypes.c_size_t(); nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value); nv.nvrtcGetProgramLog(prog, log)
sys.stderr.write(log.value.decode())
if rc != 0: sys.exit(1)
nv.nvrtcGetPTXSize(prog, ctypes.byref(n)); ptx = ctypes.create_string_buffer(n.value); nv.nvrtcGetPTX(prog, ptx)
sys.stdout.write(ptx.value.decode())
