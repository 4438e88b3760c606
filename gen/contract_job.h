/* The contract checks a job script makes itself where the cluster has no
 * moeflow plugin (gen/contract_job.c). */
#ifndef MOEFLOW_GEN_CONTRACT_JOB_H
#define MOEFLOW_GEN_CONTRACT_JOB_H

/* moeflow contract check STUDY --stage STAGE [--candidate ID] [--run ID]:
 * the exit status (0 allowed, 3 refused by a rule, 2 when no check can be
 * made). */
int contract_check_job(const char *study, const char *stage, const char *candidate,
                       const char *run);

#endif
