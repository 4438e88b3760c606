#!/bin/sh
# Layout enumeration + memory estimate + step-time model for DeepSeek-V3 on 4096 GPUs.
exec "$MOEFLOW_BUILDDIR/tests/bench/layouts_bench" 9
