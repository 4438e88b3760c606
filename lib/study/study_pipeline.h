/* Megatron's --pipeline-model-parallel-layout strings ("Et|(tt|)*30mL"):
 * stages split by '|', E embedding, t decoder layer, m MTP layer, L loss,
 * "(...)*n" and "X*n" repeat. */
#ifndef MOEFLOW_STUDY_PIPELINE_H
#define MOEFLOW_STUDY_PIPELINE_H

#include "core/error.h"

/* Checks that the layout has the given number of virtual stages and holds
 * exactly num_layers decoder layers and mtp_layers MTP layers. */
int moe_pipeline_layout_check(const char *layout, int stages, int num_layers, int mtp_layers,
                              struct moe_error *err);

#endif
