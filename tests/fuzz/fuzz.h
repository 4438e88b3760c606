/* What every fuzz harness shares.  Each harness defines
 * LLVMFuzzerTestOneInput(); built with -fsanitize=fuzzer it is a libFuzzer
 * target, linked with replay.c it is a plain program that make check runs
 * over the committed corpus and crash reproducers. */
#ifndef MOEFLOW_FUZZ_H
#define MOEFLOW_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (parsers take C strings).  free(). */
char *fuzz_strdup(const uint8_t *data, size_t size);

/* Writes the bytes to this process's scratch file and returns its path:
 * the readers under test take paths, as they do in production.  NULL when
 * the scratch file cannot be written (that is the harness's problem, not a
 * finding, so the harness just returns). */
const char *fuzz_file(const void *data, size_t size, const char *suffix);

#endif
