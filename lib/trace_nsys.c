/* Nsight Systems exports (`nsys export --type sqlite`): kernels come from
 * CUPTI_ACTIVITY_KIND_KERNEL with names as ids into StringIds, times in ns;
 * step markers from NVTX_EVENTS.  Tables and columns differ across nsys
 * versions, so both are checked in sqlite_master / table_info first. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "trace.h"

struct nsys {
    sqlite3 *db;
    sqlite3_stmt *name_q; /* SELECT value FROM StringIds WHERE id = ? */
    long *map;            /* StringIds id -> trace name index, -1 unknown */
    size_t nmap;
    const char *path;
    struct moe_error *err;
};

static int db_fail(struct nsys *n, const char *what)
{
    moe_error_at(n->err, n->path, 0, 0, "%s: %s", what, sqlite3_errmsg(n->db));
    return -1;
}

static int has_table(struct nsys *n, const char *table)
{
    sqlite3_stmt *q;
    int found;

    if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading sqlite_master");
    sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
    found = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return found;
}

static int has_column(struct nsys *n, const char *table, const char *column)
{
    char sql[128];
    sqlite3_stmt *q;
    int found = 0;

    snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading the table layout");
    while (!found && sqlite3_step(q) == SQLITE_ROW)
        found = strcmp((const char *)sqlite3_column_text(q, 1), column) == 0;
    sqlite3_finalize(q);
    return found;
}

/* Names are resolved on first use: a trace has few distinct kernel names
 * but StringIds holds every string nsys saw. */
static long name_of(struct nsys *n, struct moe_trace *t, sqlite3_int64 sid)
{
    const unsigned char *text;
    long id;

    if (sid < 0)
        return -1;
    if ((size_t)sid >= n->nmap) {
        size_t nn = n->nmap ? n->nmap : 1024;
        long *m;

        while (nn <= (size_t)sid)
            nn *= 2;
        m = realloc(n->map, nn * sizeof(*m));
        if (!m)
            return -2;
        for (size_t i = n->nmap; i < nn; i++)
            m[i] = -1;
        n->map = m;
        n->nmap = nn;
    }
    if (n->map[sid] >= 0)
        return n->map[sid];
    sqlite3_reset(n->name_q);
    sqlite3_bind_int64(n->name_q, 1, sid);
    text = sqlite3_step(n->name_q) == SQLITE_ROW ? sqlite3_column_text(n->name_q, 0) : NULL;
    id = moe_trace_add_name(t, text ? (const char *)text : "(unnamed)");
    if (id < 0)
        return -2;
    n->map[sid] = id;
    return id;
}

static int read_kernels(struct nsys *n, struct moe_trace *t)
{
    const char *namecol;
    char sql[160];
    sqlite3_stmt *q;
    int rc, hd, hs;

    /* Demangled names keep the namespace (deep_ep::intranode::dispatch)
     * that the short name drops; short names are the fallback. */
    hd = has_column(n, "CUPTI_ACTIVITY_KIND_KERNEL", "demangledName");
    hs = has_column(n, "CUPTI_ACTIVITY_KIND_KERNEL", "shortName");
    if (hd < 0 || hs < 0)
        return -1;
    if (!hd && !hs) {
        moe_error_at(n->err, n->path, 0, 0,
                     "CUPTI_ACTIVITY_KIND_KERNEL has neither demangledName nor shortName");
        return -1;
    }
    namecol = hd ? "demangledName" : "shortName";
    snprintf(sql, sizeof(sql), "SELECT start, end, deviceId, %s FROM CUPTI_ACTIVITY_KIND_KERNEL",
             namecol);
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading CUPTI_ACTIVITY_KIND_KERNEL");
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        long id = name_of(n, t, sqlite3_column_int64(q, 3));

        if (id == -2 || (id >= 0 && moe_trace_add_kernel(t, sqlite3_column_int(q, 2), (uint32_t)id,
                                                          sqlite3_column_int64(q, 0),
                                                          sqlite3_column_int64(q, 1)) < 0)) {
            sqlite3_finalize(q);
            moe_error_at(n->err, n->path, 0, 0, "out of memory");
            return -1;
        }
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? 0 : db_fail(n, "reading CUPTI_ACTIVITY_KIND_KERNEL");
}

/* NVTX ranges named like the step prefix (e.g. ProfilerStep#41, or what the
 * user passed) become step markers.  Newer exports keep the text in StringIds
 * through textId. */
static int read_markers(struct nsys *n, struct moe_trace *t)
{
    char sql[256];
    sqlite3_stmt *q;
    int rc, tid = has_table(n, "NVTX_EVENTS");

    if (tid <= 0)
        return tid;
    tid = has_column(n, "NVTX_EVENTS", "textId");
    if (tid < 0)
        return -1;
    snprintf(sql, sizeof(sql),
             "SELECT start, end, %s FROM NVTX_EVENTS WHERE end IS NOT NULL",
             tid ? "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))" : "text");
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading NVTX_EVENTS");
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(q, 2);

        if (text && moe_trace_add_marker(t, (const char *)text, sqlite3_column_int64(q, 0),
                                         sqlite3_column_int64(q, 1), 0) < 0) {
            sqlite3_finalize(q);
            moe_error_at(n->err, n->path, 0, 0, "out of memory");
            return -1;
        }
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? 0 : db_fail(n, "reading NVTX_EVENTS");
}

int moe_trace_read_nsys(struct moe_trace *t, const char *path, struct moe_error *err)
{
    struct nsys n = { .path = path, .err = err };
    int rc = -1, k;

    if (sqlite3_open_v2(path, &n.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        db_fail(&n, "cannot open the nsys export");
        goto out;
    }
    k = has_table(&n, "CUPTI_ACTIVITY_KIND_KERNEL");
    if (k == 0)
        moe_error_at(err, path, 0, 0,
                     "no CUPTI_ACTIVITY_KIND_KERNEL table: not an nsys export, or profiled "
                     "without CUDA tracing (nsys profile -t cuda)");
    if (k <= 0)
        goto out;
    if (has_table(&n, "StringIds") != 1) {
        moe_error_at(err, path, 0, 0, "no StringIds table: kernel names cannot be resolved");
        goto out;
    }
    if (sqlite3_prepare_v2(n.db, "SELECT value FROM StringIds WHERE id = ?", -1, &n.name_q,
                           NULL) != SQLITE_OK) {
        db_fail(&n, "reading StringIds");
        goto out;
    }
    if (read_kernels(&n, t) < 0 || read_markers(&n, t) < 0)
        goto out;
    rc = 0;
out:
    sqlite3_finalize(n.name_q);
    sqlite3_close(n.db);
    free(n.map);
    return rc;
}
