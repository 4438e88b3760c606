/* Writes a synthetic Nsight Systems SQLite export for the overlap benchmark:
 * N kernels on 8 GPUs, each GPU a compute stream with short gaps and a
 * communication stream (NCCL all-to-all, DeepEP dispatch/combine) that
 * partly overlaps it, rows interleaved across GPUs as nsys writes them.
 * Deterministic (fixed seed).  usage: overlap_gen OUT.sqlite N */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#define GPUS 8
#define COMPUTE_NAMES 40

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    rng ^= rng << 13; /* xorshift64 */
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int64_t uniform(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1));
}

static int run(sqlite3 *db, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "overlap_gen: %s: %s\n", sql, msg);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static const char *const comm_names[] = {
    "ncclDevKernel_AllToAll(ncclDevKernelArgsStorage<4096ul>)",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)",
    "void deep_ep::intranode::combine<nv_bfloat16, 8, 768, 4096>(nv_bfloat16*, float*)",
};
#define COMM_NAMES (sizeof(comm_names) / sizeof(comm_names[0]))

static int strings(sqlite3 *db)
{
    sqlite3_stmt *q;
    char buf[128];
    int rc = 0;

    if (sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &q, NULL) != SQLITE_OK)
        return -1;
    for (int i = 0; i < COMPUTE_NAMES + (int)COMM_NAMES; i++) {
        if (i < COMPUTE_NAMES)
            snprintf(buf, sizeof(buf), "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize%dx128x64",
                     64 + i);
        else
            snprintf(buf, sizeof(buf), "%s", comm_names[i - COMPUTE_NAMES]);
        sqlite3_bind_int(q, 1, i + 1);
        sqlite3_bind_text(q, 2, buf, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = -1;
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc;
}

int main(int argc, char **argv)
{
    int64_t tcomp[GPUS], tcomm[GPUS];
    sqlite3_stmt *ins;
    sqlite3 *db;
    long long n;

    if (argc != 3 || (n = atoll(argv[2])) <= 0) {
        fprintf(stderr, "usage: overlap_gen OUT.sqlite KERNELS\n");
        return 1;
    }
    remove(argv[1]);
    if (sqlite3_open(argv[1], &db) != SQLITE_OK)
        return 1;
    if (run(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT "
                "NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT "
                "NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
                "shortName INTEGER NOT NULL, gridX INTEGER, blockX INTEGER);") < 0 ||
        strings(db) < 0)
        return 1;
    if (sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                               "(?, ?, ?, 1, ?, ?, 4242, ?, ?, 132, 256)",
                           -1, &ins, NULL) != SQLITE_OK)
        return 1;
    for (int g = 0; g < GPUS; g++)
        tcomp[g] = tcomm[g] = 1000000000LL + g * 1000;
    for (long long k = 0; k < n; k++) {
        int g = (int)(k % GPUS), comm = next() % 5 == 0, name;
        int64_t s, e;

        if (comm) {
            /* Launched a little after compute started: partly hidden. */
            s = tcomp[g] - uniform(0, 150000);
            if (s < tcomm[g])
                s = tcomm[g] + uniform(0, 2000);
            e = s + uniform(20000, 300000);
            tcomm[g] = e;
            name = COMPUTE_NAMES + (int)(next() % COMM_NAMES) + 1;
        } else {
            /* Short launch gaps, and now and then a host stall. */
            s = tcomp[g] + (next() % 1000 == 0 ? uniform(200000, 800000) : uniform(500, 5000));
            e = s + uniform(5000, 200000);
            tcomp[g] = e;
            name = (int)(next() % COMPUTE_NAMES) + 1;
        }
        sqlite3_bind_int64(ins, 1, s);
        sqlite3_bind_int64(ins, 2, e);
        sqlite3_bind_int(ins, 3, g);
        sqlite3_bind_int(ins, 4, comm ? 20 : 7);
        sqlite3_bind_int64(ins, 5, k);
        sqlite3_bind_int(ins, 6, name);
        sqlite3_bind_int(ins, 7, name);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            fprintf(stderr, "overlap_gen: insert: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    if (run(db, "COMMIT;") < 0)
        return 1;
    return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}
