/* Megatron-LM's own "Theoretical memory footprints" estimate
 * (megatron/training/theoretical_memory_usage.py, the version that splits
 * expert parameters by EP*ETP and shards their optimizer over EDP), so that
 * users can put it next to ours.  Units are MiB, as Megatron prints "MB". */
#ifndef MOEFLOW_MEGATRON_MEMORY_H
#define MOEFLOW_MEGATRON_MEMORY_H

#include "fit/memory.h"
#include "core/model.h"

struct moe_megatron_memory {
    double params_most_loaded;   /* parameters on the most loaded shard */
    double weight_and_optimizer; /* MiB */
    double activation;           /* MiB */
    double total;                /* MiB */
    double per_layer_activation; /* MiB, the "per transformer layer" line */
    bool with_sp;                /* which of Megatron's two activation formulas ran */
};

/* world = TP*CP*DP*PP.  Never fails on a shape moe_memory_estimate accepts. */
void moe_megatron_memory(const struct moe_model *m, const struct moe_layout *l,
                         const struct moe_workload *w, const struct moe_train *t,
                         struct moe_megatron_memory *out);

#endif
