/* study_pipeline.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_PIPELINE_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_PIPELINE_INTERNAL_H

#include "study/study_pipeline.h"

/* Checks that the layout has the given number of virtual stages and holds
 * exactly num_layers decoder layers and mtp_layers MTP layers. */
int moe_pipeline_layout_check(const char *layout, int stages, int num_layers, int mtp_layers,
                              struct moe_error *err);

#endif
