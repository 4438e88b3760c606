/* cmocka with TAP output, so automake's TAP driver counts every case. */
#ifndef MOEFLOW_UNIT_H
#define MOEFLOW_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define MOE_RUN_TESTS(tests) \
    (cmocka_set_message_output(CM_OUTPUT_TAP), cmocka_run_group_tests(tests, NULL, NULL))

#endif
