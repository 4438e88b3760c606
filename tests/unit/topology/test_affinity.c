/* Affinity plans on saved topologies of real machines, compared with the
 * hand-worked answers in tests/data/topology/expected/<machine>.exp. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/affinity.h"
#include "topology/gpuminor.h"
#include "topology/gpuminor_internal.h"
#include "topology/nodetopo_internal.h"
#include "unit.h"

struct exp_case {
    enum moe_affinity_mode mode;
    int tasks;
    char gpus[160];
    char cores[160];
};

static void data_path(char *buf, size_t len, const char *rel)
{
    const char *src = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, len, "%s/tests/data/topology/%s", src ? src : "..", rel);
}

static void parse_case(const char *line, struct exp_case *c)
{
    char word[160];
    int off = 0, n;

    memset(c, 0, sizeof(*c));
    while (sscanf(line + off, " %159s%n", word, &n) == 1) {
        off += n;
        if (strncmp(word, "mode=", 5) == 0)
            assert_int_equal(moe_affinity_mode_parse(word + 5, &c->mode), 0);
        else if (strncmp(word, "tasks=", 6) == 0)
            c->tasks = atoi(word + 6);
        else if (strncmp(word, "gpus=", 5) == 0)
            snprintf(c->gpus, sizeof(c->gpus), "%s", word + 5);
        else if (strncmp(word, "cores=", 6) == 0)
            snprintf(c->cores, sizeof(c->cores), "%s", word + 6);
    }
    assert_true(c->tasks > 0);
}

/* The line an expected file holds for one task. */
static void format_task(int r, const struct moe_affinity_task *t, char *buf, size_t len)
{
    char *cpus = NULL, *numa = NULL, gpu[16];
    int off;

    hwloc_bitmap_list_asprintf(&cpus, t->cpuset);
    hwloc_bitmap_list_asprintf(&numa, t->nodeset);
    snprintf(gpu, sizeof(gpu), t->gpu < 0 ? "-" : "%d", t->gpu);
    off = snprintf(buf, len, "%d gpu=%s pci=%s numa=%s ", r, gpu, t->busid[0] ? t->busid : "-",
                   numa[0] ? numa : "-");
    if (t->bind)
        snprintf(buf + off, len - (size_t)off, "cpus=%s", cpus);
    else
        snprintf(buf + off, len - (size_t)off, "unbound: %s", t->why);
    free(cpus);
    free(numa);
}

/* Plans one case and checks the next c->tasks lines of the file. */
static int check_case(const struct moe_nodetopo *nt, const struct exp_case *c, FILE *f,
                      int *lineno)
{
    struct moe_affinity_plan plan;
    struct moe_error err;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    int *gpu = calloc((size_t)c->tasks, sizeof(int)), bad = 0;
    char all[16], want[512], got[512];

    moe_error_clear(&err);
    snprintf(all, sizeof(all), "0-%d", nt->ngpus - 1);
    if (c->cores[0])
        assert_int_equal(moe_nodetopo_cores_to_cpuset(nt, c->cores, allowed, &err), 0);
    assert_int_equal(moe_affinity_task_gpus(c->gpus[0] ? c->gpus : nt->ngpus ? all : NULL,
                                            c->tasks, gpu, &err), 0);
    assert_int_equal(moe_affinity_plan(nt, c->mode, c->cores[0] ? allowed : NULL, c->tasks, gpu,
                                       &plan, &err), 0);
    for (int r = 0; r < c->tasks; r++) {
        assert_non_null(fgets(want, sizeof(want), f));
        (*lineno)++;
        want[strcspn(want, "\n")] = '\0';
        format_task(r, &plan.tasks[r], got, sizeof(got));
        if (strcmp(want, got) != 0) {
            printf("# line %d\n#   want: %s\n#   got:  %s\n", *lineno, want, got);
            bad++;
        }
    }
    moe_affinity_plan_free(&plan);
    hwloc_bitmap_free(allowed);
    free(gpu);
    return bad;
}

static void check_machine(const char *name)
{
    char path[4096], line[512], xml[256];
    struct moe_nodetopo nt;
    struct moe_error err;
    struct exp_case c;
    int lineno = 0, bad = 0, cases = 0;
    FILE *f;

    snprintf(line, sizeof(line), "expected/%s.exp", name);
    data_path(path, sizeof(path), line);
    f = fopen(path, "r");
    assert_non_null(f);
    moe_error_clear(&err);
    nt.topo = NULL;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        if (sscanf(line, "xml %255s", xml) == 1) {
            data_path(path, sizeof(path), xml);
            assert_int_equal(moe_nodetopo_load(&nt, path, &err), 0);
            assert_false(nt.this_system);
        } else if (strncmp(line, "case ", 5) == 0) {
            assert_non_null(nt.topo);
            parse_case(line + 5, &c);
            printf("# %s: %s", name, line);
            bad += check_case(&nt, &c, f, &lineno);
            cases++;
        }
    }
    fclose(f);
    moe_nodetopo_free(&nt);
    assert_true(cases > 0);
    assert_int_equal(bad, 0);
}

/* g4dn.metal: 4 GPUs per socket, 6 disjoint cores per task; partial steps. */
static void g4dnmetal(void **state) { (void)state; check_machine("mpibind-g4dnmetal"); }
/* DGX-2: GPUs 0-7 on package 0, 8-15 on package 1; oversubscription refused. */
static void dgx2(void **state) { (void)state; check_machine("hwloc-nvidiaDGX2"); }
/* H200 VM: GPUs seen only as PCI functions share the one NUMA node. */
static void h200_vm(void **state) { (void)state; check_machine("h200x2-vm"); }
/* Lassen POWER9 SMT4: four PUs per core stay together. */
static void lassen(void **state) { (void)state; check_machine("mpibind-coral-lassen"); }
/* Pascal: uneven shares differ by at most one core. */
static void pascal(void **state) { (void)state; check_machine("mpibind-cts1-pascal"); }
/* POWER8 with sparse PU numbering. */
static void power8(void **state) { (void)state; check_machine("hwloc-power8gpudistances"); }
/* Mixed-vendor display devices: only NVIDIA ones count as GPUs. */
static void em64t(void **state) { (void)state; check_machine("hwloc-32em64t-2n8c2t-pci-normalio"); }
/* A GPU domain nested in another: disjoint cores, inner GPU first; bus order. */
static void nested(void **state) { (void)state; check_machine("nested-h200x2-vm"); }
/* No GPU at all: nothing is bound, with a reason. */
static void amd_no_gpu(void **state) { (void)state; check_machine("hwloc-16amd64-8n2c-cpusets"); }
/* Integrated GPU not on PCI: nothing is bound, with a reason. */
static void gb10(void **state) { (void)state; check_machine("hwloc-nvidia-dgx-gb10"); }

/* GPU lists: Slurm's comma lists and ranges, round robin, junk refused. */
static void task_gpu_lists(void **state)
{
    struct moe_error err;
    int g[6];

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_affinity_task_gpus("3,1", 4, g, &err), 0);
    assert_int_equal(g[0], 3);
    assert_int_equal(g[1], 1);
    assert_int_equal(g[2], 3);
    assert_int_equal(g[3], 1);
    assert_int_equal(moe_affinity_task_gpus("0-2,6", 5, g, &err), 0);
    assert_int_equal(g[2], 2);
    assert_int_equal(g[3], 6);
    assert_int_equal(g[4], 0);
    assert_int_equal(moe_affinity_task_gpus("NoDevFiles", 2, g, &err), 0);
    assert_int_equal(g[0], -1);
    assert_int_equal(moe_affinity_task_gpus(NULL, 1, g, &err), 0);
    assert_int_equal(g[0], -1);
    assert_int_equal(moe_affinity_task_gpus("GPU-5d1c9a4e-aaaa", 1, g, &err), -1);
    assert_non_null(strstr(err.text, "GPU-5d1c9a4e-aaaa"));
    assert_int_equal(moe_affinity_task_gpus("1,,2", 1, g, &err), -1);
    assert_int_equal(moe_affinity_task_gpus("3-1", 1, g, &err), -1);
}

/* --moe-affinity: a mode and/or flags, each once, nothing else. */
static void affinity_option(void **state)
{
    struct moe_affinity_opts o;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_affinity_opts_parse("closest,verbose,membind", &o, &err), 0);
    assert_int_equal(o.mode, MOE_AFFINITY_CLOSEST);
    assert_true(o.mode_set && o.verbose && o.membind);
    assert_int_equal(moe_affinity_opts_parse("verbose", &o, &err), 0);
    assert_false(o.mode_set);
    assert_true(o.verbose);
    assert_false(o.membind);
    assert_int_equal(moe_affinity_opts_parse("none", &o, &err), 0);
    assert_int_equal(o.mode, MOE_AFFINITY_NONE);
    assert_int_equal(moe_affinity_opts_parse("exclusive,closest", &o, &err), -1);
    assert_non_null(strstr(err.text, "'closest' is not valid here"));
    assert_int_equal(moe_affinity_opts_parse("verbose,verbose", &o, &err), -1);
    assert_int_equal(moe_affinity_opts_parse("tight", &o, &err), -1);
    assert_int_equal(moe_affinity_opts_parse("", &o, &err), -1);
    assert_int_equal(moe_affinity_opts_parse("closest,", &o, &err), -1);
}

/* The driver's /proc files: the real H200 ones map minor i to 00:0(6+i).0. */
static void proc_minors_h200(void **state)
{
    char dir[4096];
    struct moe_gpu_minor m[8];
    int n;

    (void)state;
    data_path(dir, sizeof(dir), "../nvidia-proc/h200");
    n = moe_gpu_minors_proc(dir, m, 8);
    assert_int_equal(n, 2);
    if (m[0].minor != 0) { /* readdir order is not sorted */
        struct moe_gpu_minor t = m[0];
        m[0] = m[1];
        m[1] = t;
    }
    assert_int_equal(m[0].minor, 0);
    assert_string_equal(m[0].busid, "0000:00:06.0");
    assert_int_equal(m[1].minor, 1);
    assert_string_equal(m[1].busid, "0000:00:07.0");
    assert_int_equal(moe_gpu_minors_proc("/nonexistent", m, 8), 0);
}

/* Minors in reverse PCI order on g4dn: SLURM_STEP_GPUS=0,1 are the two
 * last GPUs by bus (f5:00.0, f4:00.0) on package 1, cores 24-47. */
static void reversed_minors(void **state)
{
    char dir[4096], xml[4096];
    struct moe_gpu_minor m[8];
    struct moe_nodetopo nt;
    struct moe_affinity_plan plan;
    struct moe_error err;
    char *cpus = NULL;
    int gpu[2];

    (void)state;
    moe_error_clear(&err);
    data_path(dir, sizeof(dir), "../nvidia-proc/g4dn-reversed");
    data_path(xml, sizeof(xml), "mpibind-g4dnmetal.xml");
    assert_int_equal(moe_nodetopo_load(&nt, xml, &err), 0);
    assert_int_equal(moe_nodetopo_set_minors(&nt, m, moe_gpu_minors_proc(dir, m, 8), &err), 0);
    assert_int_equal(moe_nodetopo_gpu_of_minor(&nt, 0), 7);
    assert_int_equal(moe_nodetopo_gpu_of_minor(&nt, 7), 0);
    assert_int_equal(moe_nodetopo_gpu_of_minor(&nt, 8), -1);
    assert_int_equal(moe_affinity_task_gpus("0,1", 2, gpu, &err), 0);
    assert_int_equal(moe_affinity_plan(&nt, MOE_AFFINITY_EXCLUSIVE, NULL, 2, gpu, &plan, &err), 0);
    assert_string_equal(plan.tasks[0].busid, "0000:f5:00.0");
    assert_string_equal(plan.tasks[1].busid, "0000:f4:00.0");
    hwloc_bitmap_list_asprintf(&cpus, plan.tasks[0].cpuset);
    assert_string_equal(cpus, "24-35,72-83");
    free(cpus);
    moe_affinity_plan_free(&plan);
    moe_nodetopo_free(&nt);
}

/* Bad inputs: a GPU the node lacks, a core the node lacks, a bad XML path. */
static void bad_inputs(void **state)
{
    char path[4096];
    struct moe_nodetopo nt;
    struct moe_affinity_plan plan;
    struct moe_error err;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int gpu[1] = { 2 };

    (void)state;
    moe_error_clear(&err);
    data_path(path, sizeof(path), "h200x2-vm.xml");
    assert_int_equal(moe_nodetopo_load(&nt, path, &err), 0);
    assert_int_equal(moe_affinity_plan(&nt, MOE_AFFINITY_EXCLUSIVE, NULL, 1, gpu, &plan, &err),
                     -1);
    assert_non_null(strstr(err.text, "GPU 2 does not exist (node has 2)"));
    assert_int_equal(moe_nodetopo_cores_to_cpuset(&nt, "30-32", set, &err), -1);
    assert_non_null(strstr(err.text, "core 32"));
    assert_int_equal(moe_nodetopo_cores_to_cpuset(&nt, "x", set, &err), -1);
    assert_int_equal(moe_nodetopo_gpu_by_busid(&nt, "00000000:00:07.0"), 1);
    assert_int_equal(moe_nodetopo_gpu_by_busid(&nt, "00:06.0"), 0);
    assert_int_equal(moe_nodetopo_gpu_by_busid(&nt, "0000:00:08.0"), -1);
    moe_nodetopo_free(&nt);
    assert_int_equal(moe_nodetopo_load(&nt, "/nonexistent/topo.xml", &err), -1);
    assert_non_null(strstr(err.source, "/nonexistent/topo.xml"));
    hwloc_bitmap_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(g4dnmetal),  cmocka_unit_test(dgx2),   cmocka_unit_test(h200_vm),
        cmocka_unit_test(lassen),     cmocka_unit_test(pascal), cmocka_unit_test(power8),
        cmocka_unit_test(em64t),      cmocka_unit_test(amd_no_gpu), cmocka_unit_test(gb10),
        cmocka_unit_test(nested),
        cmocka_unit_test(task_gpu_lists), cmocka_unit_test(affinity_option),
        cmocka_unit_test(proc_minors_h200), cmocka_unit_test(reversed_minors),
        cmocka_unit_test(bad_inputs),
    };
    return MOE_RUN_TESTS(tests);
}
