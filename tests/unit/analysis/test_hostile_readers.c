/* Hostile input (issue 21): every reader is bounded in time and memory.
 * Each case builds the input that once made a reader hang, grow without
 * limit or run for minutes, and checks that it is refused quickly with a
 * message that names the file and the bound. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zlib.h>

#include "analysis/megatron_log.h"
#include "analysis/trace.h"
#include "core/readfile.h"
#include "core/yaml_depth.h"
#include "study/study.h"
#include "topology/domains.h"
#include "topology/domains_internal.h"
#include "unit.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("'%s' does not say '%s'", text, want);
}

/* Peak resident set of this process so far, in MiB. */
static long peak_mib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* ---- the one open for streaming readers ---- */

/* A FIFO is refused without waiting for a writer, a device and a
 * directory too; a regular file opens and reads as usual. */
static void open_regular_refuses_the_rest(void **state)
{
    struct moe_error e;
    char buf[8];
    int fd;

    (void)state;
    assert_int_equal(mkfifo(moe_unit_path("f"), 0600), 0);
    moe_error_clear(&e);
    assert_int_equal(moe_open_regular(moe_unit_path("f"), "log", &e), -1);
    has(e.text, "log: not a regular file (a FIFO)");
    assert_int_equal(moe_open_regular("/dev/zero", "trace", &e), -1);
    has(e.text, "trace: not a regular file (a device)");
    assert_int_equal(moe_open_regular(moe_unit_dir, "log", &e), -1);
    has(e.text, "(a directory)");
    write_text(moe_unit_path("r"), "abc");
    fd = moe_open_regular(moe_unit_path("r"), "log", &e);
    assert_true(fd >= 0);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    assert_int_equal(read(fd, buf, sizeof(buf)), 3);
    close(fd);
}

/* ---- Megatron logs ---- */

static const char *iteration_line =
    " [2025-01-01 00:00:00] iteration        5/      10 | elapsed time per iteration (ms): "
    "1000.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";

/* A dump without "end of arguments" stops after MOE_LOG_DUMP_LINES_MAX
 * lines with a warning, and the iteration records after it still count
 * (the whole rest of the log used to become arguments, in memory). */
static void log_argument_dump_is_bounded(void **state)
{
    const char *path = moe_unit_path("dump.log");
    FILE *f = fopen(path, "w");
    struct moe_log log;
    struct moe_error e;

    (void)state;
    assert_non_null(f);
    fputs("------------------------ arguments ------------------------\n", f);
    for (int i = 0; i < 3 * MOE_LOG_DUMP_LINES_MAX; i++)
        fprintf(f, "  arg%d ........................................ %d\n", i, i);
    fputs(iteration_line, f);
    fclose(f);
    moe_log_init(&log);
    assert_int_equal(moe_log_read_file(&log, path, &e), 0);
    assert_int_equal(log.nargs, MOE_LOG_DUMP_LINES_MAX);
    assert_int_equal(log.niters, 1);
    assert_true(log.nwarnings >= 1);
    has(log.warnings[0].text, "no 'end of arguments' line within 8192 lines");
    moe_log_free(&log);
}

/* A 64 MiB line is read up to MOE_LOG_LINE_MAX, with a warning; the next
 * line is read as usual (getline() held the whole line). */
static void log_line_is_bounded(void **state)
{
    const char *path = moe_unit_path("long.log");
    FILE *f = fopen(path, "w");
    struct moe_log log;
    struct moe_error e;
    char *chunk = malloc(1 << 20);
    long before = peak_mib();

    (void)state;
    assert_non_null(f);
    memset(chunk, 'x', 1 << 20);
    for (int i = 0; i < 64; i++)
        fwrite(chunk, 1, 1 << 20, f);
    fputs("\n", f);
    fputs(iteration_line, f);
    fclose(f);
    free(chunk);
    moe_log_init(&log);
    assert_int_equal(moe_log_read_file(&log, path, &e), 0);
    assert_int_equal(log.niters, 1);
    assert_int_equal(log.iters[0].line, 2);
    has(log.warnings[0].text, "long.log:1: the line is longer than 1 MiB");
    moe_log_free(&log);
    assert_true(peak_mib() - before < 32);
}

/* ---- Kineto traces ---- */

/* One gzip member holding n bytes of c; gzread reads members back to back,
 * so a file of many copies unpacks to their sum. */
static void *gzip_member(const char *text, size_t len, size_t *out_len)
{
    const char *path = moe_unit_path("member.gz");
    gzFile gz = gzopen(path, "wb9");
    struct stat st;
    void *bytes;
    FILE *f;

    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)len), (int)len);
    gzclose(gz);
    assert_int_equal(stat(path, &st), 0);
    bytes = malloc((size_t)st.st_size);
    f = fopen(path, "rb");
    assert_int_equal(fread(bytes, 1, (size_t)st.st_size, f), (size_t)st.st_size);
    fclose(f);
    *out_len = (size_t)st.st_size;
    return bytes;
}

static void append_member(FILE *out, const char *text, size_t len, int copies)
{
    size_t n;
    void *m = gzip_member(text, len, &n);

    for (int i = 0; i < copies; i++)
        fwrite(m, 1, n, out);
    free(m);
}

/* A 3 MB gzip of one 3 GB JSON string: refused fast and small (it grew to
 * 4.2 GB and ran for two minutes), now at the unpacking ratio, before the
 * value bound. */
static void kineto_gzip_of_a_3gb_string(void **state)
{
    const char *path = moe_unit_path("bomb.json.gz");
    static const char head[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"";
    FILE *f = fopen(path, "wb");
    char *mib = malloc(1 << 20);
    struct moe_trace t;
    struct moe_error e;
    struct stat st;
    long before = peak_mib();

    (void)state;
    memset(mib, 'A', 1 << 20);
    append_member(f, head, strlen(head), 1);
    append_member(f, mib, 1 << 20, 3072);
    append_member(f, "\"}]}", 4, 1);
    fclose(f);
    free(mib);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size < 4 * 1024 * 1024);
    moe_trace_init(&t, path, NULL, NULL);
    moe_error_clear(&e);
    assert_int_equal(moe_trace_load(&t, path, &e), -1);
    has(e.source, "bomb.json.gz");
    has(e.text, "the gzip unpacks to more than 32 times its size");
    moe_trace_free(&t);
    assert_true(peak_mib() - before < 256);
}

/* Whitespace between values costs no window, but the file as a whole
 * unpacks to no more than the bound (MOE_TRACE_UNPACKED_MAX, 16 GiB; 64 MiB
 * here, to keep the test short; a plain file, which the ratio does not
 * bound). */
static void kineto_unpacked_size_is_bounded(void **state)
{
    const char *path = moe_unit_path("spaces.json");
    FILE *f = fopen(path, "wb");
    char *mib = malloc(1 << 20);
    struct moe_trace t;
    struct moe_error e;

    (void)state;
    memset(mib, ' ', 1 << 20);
    fputc('[', f);
    for (int i = 0; i < 65; i++)
        fwrite(mib, 1, 1 << 20, f);
    fputc(']', f);
    fclose(f);
    free(mib);
    moe_trace_init(&t, path, NULL, NULL);
    assert_int_equal(moe_trace_load(&t, path, &e), 0);
    moe_trace_free(&t);
    moe_trace_init(&t, path, NULL, NULL);
    t.unpacked_max = 64 << 20;
    moe_error_clear(&e);
    assert_int_equal(moe_trace_load(&t, path, &e), -1);
    has(e.text, "unpacks to more than 64 MiB");
    moe_trace_free(&t);
    unlink(path);
}

/* Issue 38 (D07): a gzip bounded in size is not bounded in time (a 256 KB
 * gzip of 256 MiB of '{},' took 18-31 s); the text may be at most
 * MOE_TRACE_UNPACK_RATIO times the file read so far, past a floor. */
static void kineto_unpack_ratio_is_bounded(void **state)
{
    const char *path = moe_unit_path("empties.json.gz");
    FILE *f = fopen(path, "wb");
    size_t n = (16 << 20) / 3 * 3;
    char *ev = malloc(n);
    struct moe_trace t;
    struct moe_error e;

    (void)state;
    for (size_t i = 0; i < n; i += 3)
        memcpy(ev + i, "{},", 3);
    append_member(f, "[", 1, 1);
    append_member(f, ev, n, 1);
    append_member(f, "{}]", 3, 1);
    fclose(f);
    free(ev);
    moe_trace_init(&t, path, NULL, NULL);
    moe_error_clear(&e);
    assert_int_equal(moe_trace_load(&t, path, &e), -1);
    has(e.text, "the gzip unpacks to more than 32 times its size");
    moe_trace_free(&t);
    unlink(path);
}

/* Kernels on n distinct devices, every kernel on another device than the
 * one before (so the last-device cache never helps). */
static const char *kineto_devices(int n, int kernels)
{
    const char *path = moe_unit_path("devices.json");
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs("{\"traceEvents\":[", f);
    for (int i = 0; i < kernels; i++)
        fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":%d,\"dur\":1,"
                   "\"args\":{\"device\":%d}}", i ? "," : "", i, (i % n) * 997);
    fputs("]}", f);
    fclose(f);
    return path;
}

/* 400,000 distinct device ids: refused at the bound (a linear search and a
 * realloc per new device took 141 s). */
static void trace_devices_are_bounded(void **state)
{
    const char *path = kineto_devices(400000, 400000);
    struct moe_trace t;
    struct moe_error e;

    (void)state;
    moe_trace_init(&t, path, NULL, NULL);
    moe_error_clear(&e);
    assert_int_equal(moe_trace_load(&t, path, &e), -1);
    has(e.text, "more than " MOE_TRACE_DEVICES_MAX_TEXT " devices");
    moe_trace_free(&t);
}

/* Up to the bound every device is kept, in order of first appearance, with
 * its own kernels: the hash finds each again. */
static void trace_devices_up_to_the_bound(void **state)
{
    const char *path = kineto_devices(MOE_TRACE_DEVICES_MAX, 4 * MOE_TRACE_DEVICES_MAX);
    struct moe_trace t;
    struct moe_error e;

    (void)state;
    moe_trace_init(&t, path, NULL, NULL);
    assert_int_equal(moe_trace_load(&t, path, &e), 0);
    assert_int_equal(t.ndevices, MOE_TRACE_DEVICES_MAX);
    for (size_t i = 0; i < t.ndevices; i++) {
        assert_int_equal(t.devices[i].id, (int)i * 997);
        assert_int_equal(t.devices[i].ncompute, 4);
    }
    moe_trace_free(&t);
}

/* ---- Nsight Systems exports ---- */

static void exec_sql(sqlite3 *db, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

/* An export whose StringIds table is created by strings_sql. */
static const char *nsys_with(const char *name, const char *strings_sql)
{
    const char *path = moe_unit_path(name);
    sqlite3 *db;

    unlink(path);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec_sql(db, strings_sql);
    exec_sql(db, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, "
                 "deviceId INTEGER, shortName INTEGER);"
                 "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199) "
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 10, i * 10 + 5, 0, i FROM n;");
    sqlite3_close(db);
    return path;
}

static void nsys_refused(const char *path, const char *want)
{
    struct moe_trace t;
    struct moe_error e;
    long before = peak_mib();

    moe_trace_init(&t, path, NULL, NULL);
    moe_error_clear(&e);
    assert_int_equal(moe_trace_load(&t, path, &e), -1);
    has(e.text, want);
    moe_trace_free(&t);
    assert_true(peak_mib() - before < 64);
}

/* A generated column is never evaluated: StringIds.value AS
 * (hex(zeroblob(2e7))) made 40 MB per kernel name (7.9 GB, 156 s). */
static void nsys_generated_column_is_refused(void **state)
{
    (void)state;
    nsys_refused(nsys_with("gen.sqlite", "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, v TEXT, "
                                         "value TEXT AS (hex(zeroblob(2e7))));"
                                         "INSERT INTO StringIds (id, v) VALUES (1, 'k');"),
                 "StringIds.value is a generated or hidden column");
    nsys_refused(nsys_with("stored.sqlite", "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, "
                                            "v TEXT, value TEXT AS (v || v) STORED);"),
                 "StringIds.value is a generated or hidden column");
}

/* A virtual table runs its module's code: refused. */
static void nsys_virtual_table_is_refused(void **state)
{
    (void)state;
    nsys_refused(nsys_with("fts.sqlite", "CREATE VIRTUAL TABLE StringIds USING fts5(id, value);"),
                 "StringIds is a virtual table");
}

/* A StringIds.id that is not the rowid would make each name lookup scan the
 * whole table. */
static void nsys_string_ids_must_be_keyed(void **state)
{
    (void)state;
    nsys_refused(nsys_with("scan.sqlite", "CREATE TABLE StringIds (id INTEGER, value TEXT);"),
                 "StringIds.id is not the table's INTEGER PRIMARY KEY");
}

/* A kernel name beyond the bound is an error, not an allocation of
 * whatever size the file holds. */
static void nsys_values_are_bounded(void **state)
{
    (void)state;
    nsys_refused(nsys_with("big.sqlite", "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, "
                                         "value TEXT);"
                                         "INSERT INTO StringIds VALUES (0, "
                                         "hex(zeroblob(2000000)));"),
                 "reading StringIds: string or blob too big");
}

/* ---- YAML ---- */

static char *nested(const char *head, int depth)
{
    size_t n = strlen(head);
    char *text = malloc(n + (size_t)depth + 2);

    memcpy(text, head, n);
    memset(text + n, '[', (size_t)depth);
    strcpy(text + n + depth, "\n");
    return text;
}

/* A study of 100,000 nested '[' (200 kB) is refused at depth 65 (the top
 * mapping is the first level), naming file:line:column, at once (it took
 * 27 s to parse). */
static void study_yaml_nesting_is_bounded(void **state)
{
    char *text = nested("name: x\nmodel: ", 100000);
    struct moe_study s;
    struct moe_error e;
    char buf[1024];

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_study_load_text(&s, "deep.yaml", text, strlen(text), &e), -1);
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)),
                        "deep.yaml:2:71: YAML: nested deeper than 64 levels");
    free(text);
}

/* Up to the bound, nesting is the loader's business (here: a schema
 * error), not a depth error. */
static void yaml_depth_at_the_bound(void **state)
{
    char *text = nested("a: ", MOE_YAML_DEPTH_MAX - 1);
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_yaml_check_depth("ok.yaml", text, strlen(text), &e), 0);
    free(text);
    text = nested("a: ", MOE_YAML_DEPTH_MAX);
    assert_int_equal(moe_yaml_check_depth("deep.yaml", text, strlen(text), &e), -1);
    assert_int_equal(e.line, 1);
    assert_int_equal(e.column, 4 + MOE_YAML_DEPTH_MAX - 1);
    free(text);
}

/* The NVLink-domain map (read by slurmstepd) is bounded the same way. */
static void topology_yaml_nesting_is_bounded(void **state)
{
    char *text = nested("domains: ", 100000);
    struct moe_domains d;
    struct moe_error e;
    char buf[1024];

    (void)state;
    write_text(moe_unit_path("deep-topology.yaml"), text);
    free(text);
    moe_error_clear(&e);
    assert_int_equal(moe_domains_load_yaml(&d, moe_unit_path("deep-topology.yaml"), &e), -1);
    has(moe_error_format(&e, buf, sizeof(buf)),
        "deep-topology.yaml:1:73: YAML: nested deeper than 64 levels");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_regular_refuses_the_rest),
        cmocka_unit_test(log_argument_dump_is_bounded),
        cmocka_unit_test(log_line_is_bounded),
        cmocka_unit_test(kineto_gzip_of_a_3gb_string),
        cmocka_unit_test(kineto_unpacked_size_is_bounded),
        cmocka_unit_test(kineto_unpack_ratio_is_bounded),
        cmocka_unit_test(trace_devices_are_bounded),
        cmocka_unit_test(trace_devices_up_to_the_bound),
        cmocka_unit_test(nsys_generated_column_is_refused),
        cmocka_unit_test(nsys_virtual_table_is_refused),
        cmocka_unit_test(nsys_string_ids_must_be_keyed),
        cmocka_unit_test(nsys_values_are_bounded),
        cmocka_unit_test(study_yaml_nesting_is_bounded),
        cmocka_unit_test(yaml_depth_at_the_bound),
        cmocka_unit_test(topology_yaml_nesting_is_bounded),
    };
    return MOE_RUN_GROUP(tests, moe_unit_make_dir, moe_unit_remove_dir);
}
