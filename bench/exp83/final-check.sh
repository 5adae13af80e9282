set -uo pipefail
O=$OUT/final; mkdir -p $O
OUT=$O/gpu-check VALIDATE_KS=1,6,7,10,12,13,16,20,25,32 VALIDATE_NS=3,2047 KS="10 12 16 32" LEVELS="fused-pipe fused-cluster 3" bash scripts/gpu-check.sh target/release/mra-bench 2>&1 | tail -25
OUT=$O KS="7 10 12 15" bash bench/exp83/run-tool.sh > $O/stack-tool.txt 2>&1; grep -E "passed|wrong|us/task \(" $O/stack-tool.txt | sed -E 's/align_runs=.*stack=([0-9]).*unroll_k=0/stack=\1/' | head -30
tar -C $OUT -czf $OUT/final.tgz final && rm -rf $O
