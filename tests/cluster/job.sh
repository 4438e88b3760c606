#!/bin/bash
# The README's "Try the plugin" job: what the moeflow plugin saw, in the
# batch step and in one srun task per node.
echo "batch: stage=${MOEFLOW_STAGE:-unset} study=${MOEFLOW_STUDY:-unset}"
srun --ntasks-per-node=1 /bin/sh -c \
    'echo "task on $SLURMD_NODENAME: stage=${MOEFLOW_STAGE:-unset} local_rank=${LOCAL_RANK:-unset}"' |
    sort
