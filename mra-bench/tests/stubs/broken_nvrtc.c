/* A libnvrtc.so.13 that loads and reports a version but lacks nvrtcCompileProgram (and the
 * rest): for mra-bench/tests/bad_environments.rs. */
int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
