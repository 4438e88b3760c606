/* Nsight Systems exports (`nsys export --type sqlite`): kernels come from
 * CUPTI_ACTIVITY_KIND_KERNEL with names as ids into StringIds, times in ns;
 * step markers from NVTX_EVENTS.  Tables and columns differ across nsys
 * versions, so both are checked in sqlite_master / table_info first.  The
 * file is untrusted: see open_untrusted and check_table.
 *
 * Large exports are read by several threads, each with its own read-only
 * connection over one rowid range of the kernel table: stepping through
 * SQLite's records is most of the cost, and it parallelises.  The chunks
 * are concatenated in rowid order, so the kernels keep the export's order. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sqlite3.h>

#include "analysis/trace.h"
#include "core/strbuf.h"
#include "analysis/trace_internal.h"

/* StringIds ids beyond the dense map -> a value (a name index, a marker
 * text's index): open addressing, at most half full. */
struct idcache {
    struct idslot {
        sqlite3_int64 key;
        long val;
        int used;
    } *slot;
    size_t cap, n;
};

struct nsys {
    sqlite3 *db;
    sqlite3_stmt *name_q; /* SELECT value FROM StringIds WHERE id = ? */
    long *map;            /* StringIds id -> trace name index, -1 unknown */
    size_t nmap;
    struct idcache sparse; /* the same for ids at or beyond NAME_MAP_MAX */
    struct idcache marks;  /* NVTX textId -> index into mtext */
    char **mtext;          /* marker texts read from StringIds (NULL: too long for a step) */
    size_t nmtext, capmtext;
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

    /* fits: table is one of this file's literal nsys table names (< 40 bytes) */
    snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading the table layout");
    while (!found && sqlite3_step(q) == SQLITE_ROW)
        found = strcmp((const char *)sqlite3_column_text(q, 1), column) == 0;
    sqlite3_finalize(q);
    return found;
}

/* The longest string or blob SQLite hands us: real kernel names are at
 * most a few kB (demangled templates); a hostile export's could be any
 * size, or computed. */
#define VALUE_MAX (1 << 20)

/* nsys numbers its strings densely from 0, so a direct map by id is the
 * fast path; an id beyond this (a damaged or hand-made export) must not make
 * us allocate gigabytes, and goes to a hash table instead. */
#define NAME_MAP_MAX ((sqlite3_int64)1 << 22)

/* The text of StringIds row sid, "(unnamed)" when there is none; NULL
 * with err when SQLite cannot read it (a name beyond VALUE_MAX is
 * SQLITE_TOOBIG). */
static const char *lookup(struct nsys *n, sqlite3_int64 sid)
{
    const unsigned char *text = NULL;
    int rc;

    sqlite3_reset(n->name_q);
    sqlite3_bind_int64(n->name_q, 1, sid);
    rc = sqlite3_step(n->name_q);
    if (rc == SQLITE_ROW)
        text = sqlite3_column_text(n->name_q, 0);
    else if (rc != SQLITE_DONE) {
        db_fail(n, "reading StringIds");
        return NULL;
    }
    return text ? (const char *)text : "(unnamed)";
}

static long oom(struct nsys *n)
{
    moe_error_at(n->err, n->path, 0, 0, "out of memory");
    return -2;
}

static size_t idhash(sqlite3_int64 key, size_t cap)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;

    return (size_t)(h >> 32) & (cap - 1);
}

/* The slot of key: its own, or the empty one where it would go. */
static struct idslot *idcache_slot(struct idcache *c, sqlite3_int64 key)
{
    size_t i = idhash(key, c->cap);

    while (c->slot[i].used && c->slot[i].key != key)
        i = (i + 1) & (c->cap - 1);
    return &c->slot[i];
}

/* The value cached for key, or -1 when none (c may be empty). */
static long idcache_get(struct idcache *c, sqlite3_int64 key)
{
    struct idslot *s;

    if (!c->cap)
        return -1;
    s = idcache_slot(c, key);
    return s->used ? s->val : -1;
}

static int idcache_put(struct idcache *c, sqlite3_int64 key, long val)
{
    struct idslot *s;

    if ((c->n + 1) * 2 > c->cap) {
        struct idcache g = { calloc(c->cap ? c->cap * 2 : 64, sizeof(*g.slot)),
                             c->cap ? c->cap * 2 : 64, 0 };

        if (!g.slot)
            return -1;
        for (size_t i = 0; i < c->cap; i++)
            if (c->slot[i].used)
                *idcache_slot(&g, c->slot[i].key) = c->slot[i];
        g.n = c->n;
        free(c->slot);
        *c = g;
    }
    s = idcache_slot(c, key);
    if (!s->used)
        c->n++;
    *s = (struct idslot){ key, val, 1 };
    return 0;
}

/* A sparse id's name, read and interned once: every kernel naming one
 * re-read and re-hashed its text (a 1 MiB name under 20,000 kernels, a
 * 1.6 MB export, took 50 s). */
static long name_sparse(struct nsys *n, struct moe_trace *t, sqlite3_int64 sid)
{
    long id = idcache_get(&n->sparse, sid);
    const char *text;

    if (id >= 0)
        return id;
    if (!(text = lookup(n, sid)))
        return -2;
    id = moe_trace_intern(t, text, strlen(text));
    if (id < 0 || idcache_put(&n->sparse, sid, id) < 0)
        return oom(n);
    return id;
}

/* Names are resolved on first use: a trace has few distinct kernel names
 * but StringIds holds every string nsys saw.  -1: no name (the kernel is
 * skipped); -2: an error, in n->err. */
static long name_of(struct nsys *n, struct moe_trace *t, sqlite3_int64 sid)
{
    const char *text;
    long id;

    if (sid < 0)
        return -1;
    if (sid >= NAME_MAP_MAX)
        return name_sparse(n, t, sid);
    if ((size_t)sid >= n->nmap) {
        size_t nn = n->nmap ? n->nmap : 1024;
        long *m = moe_grow_array(n->map, &nn, (size_t)sid + 1, sizeof(*m));

        if (!m)
            return oom(n);
        for (size_t i = n->nmap; i < nn; i++)
            m[i] = -1;
        n->map = m;
        n->nmap = nn;
    }
    if (n->map[sid] >= 0)
        return n->map[sid];
    if (!(text = lookup(n, sid)))
        return -2;
    id = moe_trace_add_name(t, text);
    if (id < 0)
        return oom(n);
    n->map[sid] = id;
    return id;
}

/* Which column names the kernels: demangled names keep the namespace
 * (deep_ep::intranode::dispatch) that the short name drops. */
static const char *name_column(struct nsys *n)
{
    int hd = has_column(n, "CUPTI_ACTIVITY_KIND_KERNEL", "demangledName");
    int hs = has_column(n, "CUPTI_ACTIVITY_KIND_KERNEL", "shortName");

    if (hd < 0 || hs < 0)
        return NULL;
    if (!hd && !hs) {
        moe_error_at(n->err, n->path, 0, 0,
                     "CUPTI_ACTIVITY_KIND_KERNEL has neither demangledName nor shortName");
        return NULL;
    }
    return hd ? "demangledName" : "shortName";
}

/* Kernels with lo <= rowid < hi (all of them when lo == hi). */
static int read_kernels(struct nsys *n, struct moe_trace *t, const char *namecol,
                        sqlite3_int64 lo, sqlite3_int64 hi)
{
    char sql[200];
    sqlite3_stmt *q;
    int rc;

    /* fits: namecol is one of this file's literal column names (< 20 bytes) */
    snprintf(sql, sizeof(sql),
             "SELECT start, end, deviceId, %s FROM CUPTI_ACTIVITY_KIND_KERNEL%s", namecol,
             lo < hi ? " WHERE rowid >= ?1 AND rowid < ?2" : "");
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading CUPTI_ACTIVITY_KIND_KERNEL");
    if (lo < hi) {
        sqlite3_bind_int64(q, 1, lo);
        sqlite3_bind_int64(q, 2, hi);
    }
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        long id = name_of(n, t, sqlite3_column_int64(q, 3));
        int device = 0, added = 0;

        if (id == -2) {
            sqlite3_finalize(q);
            return -1;
        }
        if (id >= 0 && moe_trace_device_id(sqlite3_column_int64(q, 2), t->names[id].text,
                                           &device, n->err) < 0) {
            sqlite3_finalize(q);
            moe_error_locate(n->err, n->path, 0, 0);
            return -1;
        }
        if (id >= 0)
            added = moe_trace_add_kernel(t, device, (uint32_t)id, sqlite3_column_int64(q, 0),
                                         sqlite3_column_int64(q, 1));
        if (added < 0) {
            sqlite3_finalize(q);
            moe_error_at(n->err, n->path, 0, 0, "%s", moe_trace_failure(added));
            return -1;
        }
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? 0 : db_fail(n, "reading CUPTI_ACTIVITY_KIND_KERNEL");
}

/* The schema can be read: the first read is where a journal beside the
 * export shows. */
static int readable(struct nsys *n);

/* 1 when PATH-suffix exists. */
static int beside(const struct nsys *n, const char *suffix)
{
    char *p = moe_strdup_printf("%s%s", n->path, suffix);
    int found = p && access(p, F_OK) == 0;

    free(p);
    return found;
}

/* The first read failed: when a journal lies beside the export, SQLite's
 * own words ("unable to open database file", "attempt to write a readonly
 * database") do not say that it is the journal, nor what to do. */
static int unreadable(struct nsys *n)
{
    if (beside(n, "-journal"))
        moe_error_at(n->err, n->path, 0, 0, "a hot rollback journal (%s-journal) lies beside "
                     "the export: a write to it was interrupted, and SQLite would have to roll "
                     "it back, which a reader does not do (%s); open the export once with "
                     "sqlite3 as its owner, or remove the journal if the export is complete",
                     n->path, sqlite3_errmsg(n->db));
    else if (beside(n, "-wal"))
        moe_error_at(n->err, n->path, 0, 0, "the export is in WAL mode: reading it and its "
                     "write-ahead log (%s-wal) needs a %s-shm file that cannot be created here "
                     "(%s); run sqlite3 %s 'PRAGMA wal_checkpoint(TRUNCATE)' as its owner, or "
                     "copy the export and its -wal file to a folder you can write", n->path,
                     n->path, sqlite3_errmsg(n->db), n->path);
    else
        return db_fail(n, "reading sqlite_master");
    return -1;
}

/* An export is a file anyone can hand us, so SQLite treats it as untrusted
 * (sqlite.org/security.html): read-only, defensive, no schema-defined
 * functions with side effects, no triggers, views or attached databases,
 * and a bound on every value.  Its schema is then checked by check_table. */
static int open_untrusted(struct nsys *n)
{
    if (sqlite3_open_v2(n->path, &n->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return db_fail(n, "cannot open the nsys export");
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_db_config(n->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    sqlite3_limit(n->db, SQLITE_LIMIT_LENGTH, VALUE_MAX);
    sqlite3_limit(n->db, SQLITE_LIMIT_ATTACHED, 0);
    return readable(n);
}

static int readable(struct nsys *n)
{
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(n->db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    sqlite3_finalize(q);
    return rc == SQLITE_ROW ? 0 : unreadable(n);
}

static int refuse(struct nsys *n, const char *table, const char *column, const char *what)
{
    moe_error_at(n->err, n->path, 0, 0, "%s%s%s %s: not an nsys export (refusing to read it)",
                 table, column ? "." : "", column ? column : "", what);
    return -1;
}

/* Reading a generated column runs its expression (a StringIds.value of
 * hex(zeroblob(2e7)) made 40 MB per kernel name), and a virtual table runs
 * its module's code: nsys writes neither, so a table that has one is
 * refused before any row is read.  table_xinfo's "hidden" is 0 for an
 * ordinary column. */
static int check_table(struct nsys *n, const char *table)
{
    char sql[128];
    sqlite3_stmt *q;
    int rc = 0, step;

    if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1 "
                           "AND sql LIKE 'CREATE VIRTUAL%'", -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading sqlite_master");
    sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
    if (sqlite3_step(q) == SQLITE_ROW)
        rc = refuse(n, table, NULL, "is a virtual table");
    sqlite3_finalize(q);
    if (rc < 0)
        return -1;
    /* fits: table is one of this file's literal nsys table names (< 40 bytes) */
    snprintf(sql, sizeof(sql), "PRAGMA table_xinfo(%s)", table);
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading the table layout");
    while (rc == 0 && (step = sqlite3_step(q)) == SQLITE_ROW)
        if (sqlite3_column_int(q, 6) != 0)
            rc = refuse(n, table, (const char *)sqlite3_column_text(q, 1),
                        "is a generated or hidden column");
    sqlite3_finalize(q);
    if (rc == 0 && step != SQLITE_DONE)
        return db_fail(n, "reading the table layout");
    return rc;
}

/* Each kernel name is looked up by StringIds.id: as the table's INTEGER
 * PRIMARY KEY (nsys writes it so) that is a b-tree seek; any other column
 * would make every lookup scan the table. */
static int check_string_ids(struct nsys *n)
{
    sqlite3_stmt *q;
    int pks = 0, id_is_rowid = 0, step;

    if (check_table(n, "StringIds") < 0)
        return -1;
    if (sqlite3_prepare_v2(n->db, "PRAGMA table_xinfo(StringIds)", -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading the table layout");
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 1);
        const char *type = (const char *)sqlite3_column_text(q, 2);

        if (sqlite3_column_int(q, 5) == 0)
            continue;
        pks++;
        id_is_rowid = name && type && strcmp(name, "id") == 0 && strcasecmp(type, "INTEGER") == 0;
    }
    sqlite3_finalize(q);
    if (step != SQLITE_DONE)
        return db_fail(n, "reading the table layout");
    if (pks != 1 || !id_is_rowid)
        return refuse(n, "StringIds", "id", "is not the table's INTEGER PRIMARY KEY");
    return 0;
}

static int open_db(struct nsys *n)
{
    if (open_untrusted(n) < 0)
        return -1;
    if (sqlite3_prepare_v2(n->db, "SELECT value FROM StringIds WHERE id = ?", -1, &n->name_q,
                           NULL) != SQLITE_OK)
        return db_fail(n, "reading StringIds");
    return 0;
}

static void close_db(struct nsys *n)
{
    sqlite3_finalize(n->name_q);
    sqlite3_close(n->db);
    free(n->map);
    free(n->sparse.slot);
    free(n->marks.slot);
    for (size_t i = 0; i < n->nmtext; i++)
        free(n->mtext[i]);
    free(n->mtext);
    n->name_q = NULL;
    n->db = NULL;
    n->map = NULL;
    n->sparse = n->marks = (struct idcache){ 0 };
    n->mtext = NULL;
    n->nmtext = n->capmtext = 0;
}

struct chunk {
    struct nsys n;
    struct moe_trace sub;
    struct moe_error err;
    const char *namecol;
    sqlite3_int64 lo, hi;
    int rc;
};

static void *chunk_main(void *arg)
{
    struct chunk *c = arg;

    c->rc = open_db(&c->n);
    if (c->rc == 0)
        c->rc = read_kernels(&c->n, &c->sub, c->namecol, c->lo, c->hi);
    close_db(&c->n);
    return NULL;
}

/* Below this many rows one thread is as fast. */
#define ROWS_PER_THREAD_MIN 262144
#define THREADS_MAX 8

static int threads_for(sqlite3_int64 rows)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    sqlite3_int64 k = rows / ROWS_PER_THREAD_MIN;

    if (cpus < 1)
        cpus = 1;
    if (k > cpus)
        k = cpus;
    if (k > THREADS_MAX)
        k = THREADS_MAX;
    return k < 1 ? 1 : (int)k;
}

/* [lo, hi) covering every rowid, for splitting among threads; -1 when
 * the table is empty, or its rowids reach INT64_MAX (hi would overflow) or
 * span more than INT64_MAX / THREADS_MAX (chunk i's bound, lo + span * i /
 * k, would): nsys numbers rows from 1, so such an export is hand-made and
 * is read in one pass, in rowid order all the same. */
static int rowid_range(struct nsys *n, sqlite3_int64 *lo, sqlite3_int64 *hi)
{
    sqlite3_stmt *q;
    sqlite3_int64 min, max, span;
    int rc = -1;

    /* Both ends of the rowid b-tree: no scan. */
    if (sqlite3_prepare_v2(n->db, "SELECT min(rowid), max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                           -1, &q, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) == SQLITE_INTEGER) {
        min = sqlite3_column_int64(q, 0);
        max = sqlite3_column_int64(q, 1);
        if (max < INT64_MAX && !__builtin_sub_overflow(max + 1, min, &span) &&
            span <= INT64_MAX / THREADS_MAX) {
            *lo = min;
            *hi = max + 1;
            rc = 0;
        }
    }
    sqlite3_finalize(q);
    return rc;
}

static int read_parallel(struct nsys *n, struct moe_trace *t, const char *namecol, int k,
                         sqlite3_int64 lo, sqlite3_int64 hi)
{
    struct chunk *c = calloc((size_t)k, sizeof(*c));
    pthread_t *th = calloc((size_t)k, sizeof(*th));
    int rc = 0, started = 0, absorbed;

    if (!c || !th) {
        free(c);
        free(th);
        moe_error_at(n->err, n->path, 0, 0, "out of memory");
        return -1;
    }
    for (int i = 0; i < k; i++) {
        c[i].n.path = n->path;
        c[i].n.err = &c[i].err;
        c[i].namecol = namecol;
        c[i].lo = lo + (hi - lo) * i / k;
        c[i].hi = lo + (hi - lo) * (i + 1) / k;
        moe_trace_init(&c[i].sub, t->source, t->comm_patterns, t->step_prefix);
        c[i].sub.compute_names = t->compute_names;
        if (pthread_create(&th[i], NULL, chunk_main, &c[i]) != 0) {
            c[i].rc = -1;
            moe_error_at(&c[i].err, n->path, 0, 0, "cannot start a reader thread");
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < k; i++) {
        if (rc == 0 && c[i].rc < 0) {
            *n->err = c[i].err;
            rc = -1;
        }
        if (rc == 0 && (absorbed = moe_trace_absorb(t, &c[i].sub)) < 0) {
            moe_error_at(n->err, n->path, 0, 0, "%s", moe_trace_failure(absorbed));
            rc = -1;
        }
        moe_trace_free(&c[i].sub);
    }
    free(c);
    free(th);
    return rc;
}

static int read_all_kernels(struct nsys *n, struct moe_trace *t)
{
    const char *namecol = name_column(n);
    sqlite3_int64 lo, hi;
    int k;

    if (!namecol)
        return -1;
    if (rowid_range(n, &lo, &hi) < 0)
        return read_kernels(n, t, namecol, 0, 0);
    k = t->threads > 0 ? t->threads : threads_for(hi - lo);
    if (k > hi - lo)
        k = (int)(hi - lo);
    if (k <= 1)
        return read_kernels(n, t, namecol, 0, 0);
    return read_parallel(n, t, namecol, k, lo, hi);
}

/* A step marker's text is the step prefix (under 64 bytes) and a number:
 * a longer StringIds text cannot be one, and is not kept. */
#define MARK_TEXT_MAX 96

/* The text of NVTX textId sid, read from StringIds once per id (markers
 * naming one 1 MiB string would each re-read it); *text NULL when it cannot
 * be a step marker.  -1 with n->err on an SQLite or memory failure. */
static int marker_text(struct nsys *n, sqlite3_int64 sid, const char **text)
{
    long idx = idcache_get(&n->marks, sid);
    const char *v;
    char **grown, *copy = NULL;

    if (idx >= 0) {
        *text = n->mtext[idx];
        return 0;
    }
    if (!(v = lookup(n, sid)))
        return -1;
    if (strlen(v) <= MARK_TEXT_MAX && !(copy = strdup(v)))
        return (int)oom(n);
    if (!(grown = moe_grow_array(n->mtext, &n->capmtext, n->nmtext + 1, sizeof(*grown))) ||
        idcache_put(&n->marks, sid, (long)n->nmtext) < 0) {
        if (grown)
            n->mtext = grown;
        free(copy);
        return (int)oom(n);
    }
    n->mtext = grown;
    n->mtext[n->nmtext++] = copy;
    *text = copy;
    return 0;
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
    /* fits: a literal of under 100 bytes in sql[256] */
    snprintf(sql, sizeof(sql), "SELECT start, end, text%s FROM NVTX_EVENTS WHERE end IS NOT NULL",
             tid ? ", textId" : "");
    if (sqlite3_prepare_v2(n->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading NVTX_EVENTS");
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(q, 2);

        if (!text && tid && sqlite3_column_type(q, 3) == SQLITE_INTEGER &&
            marker_text(n, sqlite3_column_int64(q, 3), &text) < 0) {
            sqlite3_finalize(q);
            return -1;
        }
        if (text && moe_trace_add_marker(t, text, sqlite3_column_int64(q, 0),
                                         sqlite3_column_int64(q, 1), 0) < 0) {
            sqlite3_finalize(q);
            moe_error_at(n->err, n->path, 0, 0, "out of memory");
            return -1;
        }
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? 0 : db_fail(n, "reading NVTX_EVENTS");
}

/* CUDA graph launches: the runtime calls named cudaGraphLaunch, which
 * nsys exports as "cudaGraphLaunch_v10000" (the API version after the
 * name) in CUPTI_ACTIVITY_KIND_RUNTIME.  An export without that table
 * (nsys profile without CUDA API tracing) has none to count. */
static int read_graph_launches(struct nsys *n, struct moe_trace *t)
{
    sqlite3_stmt *q;
    int rc, has = has_table(n, "CUPTI_ACTIVITY_KIND_RUNTIME");

    if (has <= 0)
        return has;
    if (check_table(n, "CUPTI_ACTIVITY_KIND_RUNTIME") < 0)
        return -1;
    if ((has = has_column(n, "CUPTI_ACTIVITY_KIND_RUNTIME", "nameId")) <= 0)
        return has;
    if (sqlite3_prepare_v2(n->db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId "
                           "IN (SELECT id FROM StringIds WHERE value = 'cudaGraphLaunch' OR value "
                           "LIKE 'cudaGraphLaunch\\_v%' ESCAPE '\\')", -1, &q, NULL) != SQLITE_OK)
        return db_fail(n, "reading CUPTI_ACTIVITY_KIND_RUNTIME");
    if ((rc = sqlite3_step(q)) == SQLITE_ROW)
        t->graph_launches += (size_t)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return rc == SQLITE_ROW ? 0 : db_fail(n, "reading CUPTI_ACTIVITY_KIND_RUNTIME");
}

int moe_trace_read_nsys(struct moe_trace *t, const char *path, struct moe_error *err)
{
    struct nsys n = { .path = path, .err = err };
    int rc = -1, k;

    if (open_untrusted(&n) < 0)
        goto out;
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
    if (check_table(&n, "CUPTI_ACTIVITY_KIND_KERNEL") < 0 || check_string_ids(&n) < 0 ||
        (has_table(&n, "NVTX_EVENTS") == 1 && check_table(&n, "NVTX_EVENTS") < 0))
        goto out;
    if (sqlite3_prepare_v2(n.db, "SELECT value FROM StringIds WHERE id = ?", -1, &n.name_q,
                           NULL) != SQLITE_OK) {
        db_fail(&n, "reading StringIds");
        goto out;
    }
    if (read_all_kernels(&n, t) < 0 || read_markers(&n, t) < 0 ||
        read_graph_launches(&n, t) < 0)
        goto out;
    rc = 0;
out:
    close_db(&n);
    return rc;
}
