/* Nsight Systems SQLite exports: the fuzz input is not the database file
 * (SQLite guards its own format) but the rows behind the SQL the reader
 * runs.  The harness builds an in-memory database with the nsys schema and
 * fills it from the input, then the reader and the overlap analysis run on
 * it.
 *
 * Input: byte 0 picks the schema variant (bit 0: demangledName, bit 1:
 * shortName, bit 2: an NVTX_EVENTS table, bit 3: NVTX textId, bit 4: no
 * StringIds table, bit 5: two reader threads).  Then records: a tag byte
 * (StringIds, kernel or NVTX row) followed by its values, each a type byte
 * (64-bit integer, small integer, text, NULL, real) and its bytes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "fuzz.h"
#include "analysis/overlap.h"
#include "analysis/trace.h"
#include "analysis/trace_internal.h"

#define DB_URI "file:moeflow-fuzz-nsys?mode=memory&cache=shared"
#define ROWS_MAX 2000

struct in {
    const uint8_t *p, *end;
};

static int take(struct in *in, void *out, size_t n)
{
    if ((size_t)(in->end - in->p) < n)
        return -1;
    memcpy(out, in->p, n);
    in->p += n;
    return 0;
}

/* Binds the next value of the input to parameter i. */
static int bind_value(struct in *in, sqlite3_stmt *q, int i)
{
    uint8_t type, len;
    int8_t small;
    sqlite3_int64 big;
    double real;

    if (take(in, &type, 1) < 0)
        return -1;
    switch (type % 5) {
    case 0:
        if (take(in, &big, sizeof(big)) < 0)
            return -1;
        return sqlite3_bind_int64(q, i, big);
    case 1:
        if (take(in, &small, 1) < 0)
            return -1;
        return sqlite3_bind_int(q, i, small);
    case 2:
        if (take(in, &len, 1) < 0 || (size_t)(in->end - in->p) < len)
            return -1;
        sqlite3_bind_text(q, i, (const char *)in->p, len, SQLITE_TRANSIENT);
        in->p += len;
        return 0;
    case 3:
        return sqlite3_bind_null(q, i);
    default:
        if (take(in, &real, sizeof(real)) < 0)
            return -1;
        return sqlite3_bind_double(q, i, real);
    }
}

static int fill(sqlite3 *db, uint8_t variant, struct in *in)
{
    char sql[512];
    sqlite3_stmt *q[3] = { NULL, NULL, NULL };
    int nparams[3] = { 2, 4, 4 }, rc = -1, rows = 0;
    const char *name = (variant & 1) ? "demangledName" : "shortName";

    snprintf(sql, sizeof(sql),
             "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, "
             "deviceId INTEGER, %s INTEGER%s);",
             (variant & 3) ? name : "otherName", (variant & 3) == 3 ? ", shortName INTEGER" : "");
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    if (!(variant & 16) &&
        sqlite3_exec(db, "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);", NULL,
                     NULL, NULL) != SQLITE_OK)
        return -1;
    if (variant & 4) {
        snprintf(sql, sizeof(sql), "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, "
                                   "text TEXT%s);", (variant & 8) ? ", textId INTEGER" : "");
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return -1;
    }
    if (!(variant & 16))
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO StringIds VALUES (?, ?)", -1, &q[0], NULL);
    snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, ?%s)",
             (variant & 3) == 3 ? ", ?4" : "");
    sqlite3_prepare_v2(db, sql, -1, &q[1], NULL);
    if (variant & 4)
        sqlite3_prepare_v2(db, (variant & 8) ? "INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?)"
                                             : "INSERT INTO NVTX_EVENTS VALUES (?, ?, ?)",
                           -1, &q[2], NULL);
    if (!(variant & 8))
        nparams[2] = 3;
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    while (in->p < in->end && rows++ < ROWS_MAX) {
        uint8_t tag;
        sqlite3_stmt *s;
        int k;

        take(in, &tag, 1);
        k = tag % 3;
        if (!(s = q[k]))
            continue;
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        for (int i = 1; i <= nparams[k]; i++)
            if (bind_value(in, s, i) != SQLITE_OK)
                goto done;
        sqlite3_step(s);
    }
done:
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    rc = 0;
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(q[i]);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int configured;
    struct in in = { data + 1, data + size };
    sqlite3 *db = NULL;
    struct moe_trace t;
    struct moe_error err;

    if (size < 1)
        return 0;
    if (!configured) {
        /* The reader opens a plain path; URIs let it reach the shared
         * in-memory database this connection fills. */
        sqlite3_config(SQLITE_CONFIG_URI, 1);
        configured = 1;
    }
    if (sqlite3_open_v2(DB_URI, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                        NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return 0;
    }
    if (fill(db, data[0], &in) == 0) {
        moe_trace_init(&t, "fuzz", NULL, NULL);
        t.threads = (data[0] & 32) ? 2 : 1;
        if (moe_trace_read_nsys(&t, DB_URI, &err) == 0) {
            struct moe_overlap o;
            struct moe_window w = { .kind = MOE_WINDOW_STEPS, .first = 1, .last = 2 };

            if (data[0] & 64)
                w.kind = MOE_WINDOW_ALL;
            moe_overlap_init(&o);
            if (moe_overlap_add_trace(&o, &t, &w, &err) == 0 &&
                moe_overlap_finish(&o, 5, &err) == 0)
                json_decref(moe_overlap_to_json(&o, &w, NULL));
            moe_overlap_free(&o);
        }
        moe_trace_free(&t);
    }
    sqlite3_close(db); /* the last connection frees the in-memory database */
    return 0;
}
