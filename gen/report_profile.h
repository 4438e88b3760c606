#ifndef MOEFLOW_REPORT_PROFILE_H
#define MOEFLOW_REPORT_PROFILE_H

#include <jansson.h>

/* moeflow report STUDY --stage validate: the matched A/B profiles of the
 * validate stage's profiling twins (analysis/profile_pair.h), printed side
 * by side, winner against baseline.  pairs: moe_profile_pairs_of_study's
 * array. */
void moe_report_print_profile_pairs(const json_t *pairs);

#endif
