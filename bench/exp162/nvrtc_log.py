# Prints what NVRTC's program log holds for a tiny kernel with --ptxas-options=-v (run 162: --compile-only on the
# lent H100 said "NVRTC returned no ptxas report", while NVRTC from PyPI here returns one).
import ctypes, ctypes.util, sys
name = sys.argv[1] if len(sys.argv) > 1 else "libnvrtc.so.13"
lib = ctypes.CDLL(name)
maj, mnr = ctypes.c_int(), ctypes.c_int(); lib.nvrtcVersion(ctypes.byref(maj), ctypes.byref(mnr)); print("nvrtc", maj.value, mnr.value)
src = open(sys.argv[2], "rb").read() if len(sys.argv) > 2 else b'extern "C" __global__ void k(double* a) { a[threadIdx.x] *= 2.0; }'
prog = ctypes.c_void_p()
pname = sys.argv[3].encode() if len(sys.argv) > 3 else b"k.cu"
for opts in ([b"--gpu-architecture=sm_90", b"-std=c++17", b"--ptxas-options=-v"], [b"--gpu-architecture=sm_90", b"--ptxas-options=--verbose"], [b"--gpu-architecture=sm_90", b"-Xptxas", b"-v"]):
    p = ctypes.c_void_p(); lib.nvrtcCreateProgram(ctypes.byref(p), src, pname, 0, None, None)
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(p, len(opts), arr)
    n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(p, ctypes.byref(n)); buf = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(p, buf)
    print(opts, "rc", rc, "log:", repr(buf.value.decode(errors="replace")[-600:]))
