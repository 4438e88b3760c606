/* stagegen.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STAGEGEN_INTERNAL_H
#define MOEFLOW_STUDY_STAGEGEN_INTERNAL_H

#include "study/stagegen.h"

/* The planned stage st, or NULL. */
const struct moe_stage_plan *moe_gen_plan_stage(const struct moe_gen_plan *plan,
                                                enum moe_stage st);

/* candidates.tsv: the rows of the n stages, after its header line when
 * header is true. */
char *moe_gen_tsv(const struct moe_stage_plan *stages, int n, bool header);

#endif
