/* Real binding on this machine's CPUs.  This host has no GPU, so the test
 * exports this machine's own topology, adds one NVIDIA PCI function below
 * the first package (the only invented part), and loads it back as this
 * system (HWLOC_THISSYSTEM=1): the plan is then applied for real in child
 * processes, whose kernel masks must equal the plan. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "topology/affinity.h"
#include "unit.h"

static char xml_path[] = "/tmp/moeflow-test-bind-XXXXXX";

/* This machine's XML with a GPU (10de:2335, an H200) at 0000:42:00.0. */
static int write_host_with_gpu(void)
{
    static const char gpu[] =
        "<object type=\"PCIDev\" gp_index=\"900001\" pci_busid=\"0000:42:00.0\" "
        "pci_type=\"0302 [10de:2335] [10de:18be] a1 00\" pci_link_speed=\"0.0\"/>\n";
    hwloc_topology_t topo;
    char *buf, *at;
    int len, fd;
    FILE *f;

    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo) ||
        hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0))
        return -1;
    at = strstr(buf, "<object type=\"Package\"");
    if (!at)
        at = strstr(buf, "<object type=\"Machine\"");
    /* after the package's <info> lines, before its first child object */
    if (!at || !(at = strstr(at + 1, "<object")))
        return -1;
    fd = mkstemp(xml_path);
    f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return -1;
    fprintf(f, "%.*s%s%s", (int)(at - buf), buf, gpu, at);
    fclose(f);
    hwloc_free_xmlbuffer(topo, buf);
    hwloc_topology_destroy(topo);
    return 0;
}

/* The kernel's view of a child bound by moe_affinity_bind. */
static void bound_mask(const struct moe_nodetopo *nt, const struct moe_affinity_task *t,
                       char *out, size_t len)
{
    int fd[2];
    ssize_t n;
    pid_t pid;

    assert_int_equal(pipe(fd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char line[512];
        FILE *f;

        close(fd[0]);
        if (moe_affinity_bind(nt, t, false, NULL) != 0)
            _exit(2);
        f = fopen("/proc/self/status", "r");
        while (f && fgets(line, sizeof(line), f))
            if (sscanf(line, "Cpus_allowed_list: %511s", line) == 1)
                dprintf(fd[1], "%s", line);
        _exit(0);
    }
    close(fd[1]);
    n = read(fd[0], out, len - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd[0]);
    waitpid(pid, NULL, 0);
}

/* Every task that the plan binds gets exactly the planned CPUs from the kernel. */
static void masks_match_plan(void **state)
{
    struct moe_nodetopo nt;
    struct moe_affinity_plan plan;
    struct moe_error err;
    int ncores, gpu[64], ntasks, rc;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(write_host_with_gpu(), 0);
    setenv("HWLOC_THISSYSTEM", "1", 1);
    rc = moe_nodetopo_load(&nt, xml_path, &err);
    unsetenv("HWLOC_THISSYSTEM");
    unlink(xml_path);
    if (rc != 0)
        printf("# %s\n", err.text);
    assert_int_equal(rc, 0);
    assert_true(nt.this_system);
    assert_int_equal(nt.ngpus, 1);
    ncores = hwloc_get_nbobjs_by_type(nt.topo, HWLOC_OBJ_CORE);
    ntasks = ncores < 64 ? ncores : 64;
    printf("# this machine: %d cores, %d tasks on GPU 0\n", ncores, ntasks);
    assert_int_equal(moe_affinity_task_gpus("0", ntasks, gpu, &err), 0);
    assert_int_equal(moe_affinity_plan(&nt, MOE_AFFINITY_EXCLUSIVE, NULL, ntasks, gpu, &plan, &err),
                     0);
    for (int r = 0; r < ntasks; r++) {
        char *want = NULL, got[512];

        assert_true(plan.tasks[r].bind);
        hwloc_bitmap_list_asprintf(&want, plan.tasks[r].cpuset);
        bound_mask(&nt, &plan.tasks[r], got, sizeof(got));
        printf("# task %d: plan %s, kernel %s\n", r, want, got);
        assert_string_equal(got, want);
        free(want);
    }
    moe_affinity_plan_free(&plan);
    moe_nodetopo_free(&nt);
}

/* A plan made from another machine's XML is never applied. */
static void foreign_xml_never_binds(void **state)
{
    char path[4096];
    const char *src = getenv("MOEFLOW_SRCDIR");
    struct moe_nodetopo nt;
    struct moe_affinity_plan plan;
    struct moe_error err;
    int gpu[1] = { 0 };

    (void)state;
    moe_error_clear(&err);
    snprintf(path, sizeof(path), "%s/tests/data/topology/h200x2-vm.xml", src ? src : "..");
    assert_int_equal(moe_nodetopo_load(&nt, path, &err), 0);
    assert_int_equal(moe_affinity_plan(&nt, MOE_AFFINITY_EXCLUSIVE, NULL, 1, gpu, &plan, &err), 0);
    assert_int_equal(moe_affinity_bind(&nt, &plan.tasks[0], false, &err), -1);
    assert_non_null(strstr(err.text, "plan only"));
    moe_affinity_plan_free(&plan);
    moe_nodetopo_free(&nt);
}

/* An XML claimed to be this system is still refused when its CPUs are not
 * online here (g4dn.metal's package 1 is PUs 24-47,72-95). */
static void claimed_but_foreign(void **state)
{
    char path[4096];
    const char *src = getenv("MOEFLOW_SRCDIR");
    struct moe_nodetopo nt;
    struct moe_affinity_plan plan;
    struct moe_error err;
    int gpu[1] = { 4 };

    (void)state;
    if (sysconf(_SC_NPROCESSORS_CONF) >= 96)
        MOE_SKIP("this machine has %ld CPUs: it may really have those the test calls missing",
                 sysconf(_SC_NPROCESSORS_CONF));
    moe_error_clear(&err);
    snprintf(path, sizeof(path), "%s/tests/data/topology/mpibind-g4dnmetal.xml", src ? src : "..");
    setenv("HWLOC_THISSYSTEM", "1", 1);
    assert_int_equal(moe_nodetopo_load(&nt, path, &err), 0);
    unsetenv("HWLOC_THISSYSTEM");
    assert_true(nt.this_system);
    assert_int_equal(moe_affinity_plan(&nt, MOE_AFFINITY_EXCLUSIVE, NULL, 1, gpu, &plan, &err), 0);
    assert_int_equal(moe_affinity_bind(&nt, &plan.tasks[0], false, &err), -1);
    assert_non_null(strstr(err.text, "not all online"));
    moe_affinity_plan_free(&plan);
    moe_nodetopo_free(&nt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(masks_match_plan),
        cmocka_unit_test(foreign_xml_never_binds),
        cmocka_unit_test(claimed_but_foreign),
    };
    return MOE_RUN_TESTS(tests);
}
