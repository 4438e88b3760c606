/* Megatron's --pipeline-model-parallel-layout strings ("Et|(tt|)*30mL"):
 * stages split by '|', E embedding, t decoder layer, m MTP layer, L loss,
 * "(...)*n" and "X*n" repeat. */
#ifndef MOEFLOW_STUDY_PIPELINE_H
#define MOEFLOW_STUDY_PIPELINE_H

#include "core/error.h"

#endif
