/* What a decision rests on, named so that a reader can check it: each
 * candidate's log with its SHA-256 and the plugin's sealed run record
 * (runs/<id>/contract.json) with its digest.  A baseline is adopted only
 * from a run record `contract verify` accepts (contract_check.h). */
#ifndef MOEFLOW_LOOP_EVIDENCE_H
#define MOEFLOW_LOOP_EVIDENCE_H

#include <jansson.h>

#include "core/error.h"
#include "core/stage.h"

#endif
