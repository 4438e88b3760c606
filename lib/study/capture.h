/* What the contract stage's capture (templates/moeflow_capture.py, copied
 * into the study directory) is told: where the trainer's code is and what
 * the study declares about the software, field by field.  The script
 * measures, compares by the rules in moeflow-study(5) and exits non-zero
 * on a contradiction, which stops submit.sh's afterok chain. */
#ifndef MOEFLOW_CAPTURE_H
#define MOEFLOW_CAPTURE_H

#include <jansson.h>

#include "study/launcher.h"
#include "study/study.h"

/* The script's file name, in the template folder and the study directory. */
#define MOE_CAPTURE_SCRIPT "moeflow_capture.py"

#endif
