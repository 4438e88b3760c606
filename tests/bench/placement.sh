#!/bin/sh
# make bench: NVLink placement against Slurm's node order and the bound.
exec "$MOEFLOW_BUILDDIR/tests/bench/placement_sim"
