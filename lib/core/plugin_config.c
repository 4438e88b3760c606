#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/plugin_config.h"
#include "core/plugin_config_internal.h"

struct config_key {
    const char *name;
    int (*apply)(struct moe_plugin_config *cfg, const char *value, struct moe_error *err);
    const char *help;
};

static const char *const affinity_names[] = {
    [MOE_AFFINITY_EXCLUSIVE] = "exclusive", [MOE_AFFINITY_CLOSEST] = "closest",
    [MOE_AFFINITY_NONE] = "none",
};
_Static_assert(sizeof(affinity_names) / sizeof(affinity_names[0]) == MOE_AFFINITY_NONE + 1,
               "one name per affinity mode");

int moe_affinity_mode_parse(const char *s, enum moe_affinity_mode *mode)
{
    for (size_t i = 0; i < sizeof(affinity_names) / sizeof(affinity_names[0]); i++) {
        if (strcmp(s, affinity_names[i]) == 0) {
            *mode = (enum moe_affinity_mode)i;
            return 0;
        }
    }
    return -1;
}

const char *moe_affinity_mode_name(enum moe_affinity_mode mode)
{
    if ((size_t)mode >= sizeof(affinity_names) / sizeof(affinity_names[0]))
        return NULL;
    return affinity_names[mode];
}

static int apply_affinity(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    if (moe_affinity_mode_parse(value, &cfg->affinity) == 0)
        return 0;
    moe_error_set(err, "valid values are exclusive, closest, none");
    return -1;
}

static int parse_allow(bool *dst, const char *value, struct moe_error *err)
{
    if (strcmp(value, "allow") == 0)
        *dst = true;
    else if (strcmp(value, "deny") == 0)
        *dst = false;
    else {
        moe_error_set(err, "valid values are allow, deny");
        return -1;
    }
    return 0;
}

static int apply_override(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    return parse_allow(&cfg->affinity_user_override, value, err);
}

int moe_enforce_mode_parse(const char *s, enum moe_enforce_mode *mode)
{
    if (strcmp(s, "strict") == 0)
        *mode = MOE_ENFORCE_STRICT;
    else if (strcmp(s, "warn") == 0)
        *mode = MOE_ENFORCE_WARN;
    else
        return -1;
    return 0;
}

static int apply_enforce(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    if (moe_enforce_mode_parse(value, &cfg->enforce) == 0)
        return 0;
    moe_error_set(err, "valid values are strict, warn");
    return -1;
}

static int apply_enforce_override(struct moe_plugin_config *cfg, const char *value,
                                  struct moe_error *err)
{
    return parse_allow(&cfg->enforce_user_override, value, err);
}

static int apply_auto_freeze(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    return parse_allow(&cfg->auto_freeze, value, err);
}

static int apply_path(char *dst, size_t size, const char *value, struct moe_error *err)
{
    if (value[0] != '/') {
        moe_error_set(err, "must be an absolute path (slurmstepd's working directory is not yours)");
        return -1;
    }
    if (strlen(value) >= size) {
        moe_error_set(err, "path is longer than %zu characters", size - 1);
        return -1;
    }
    /* fits: its length is checked above */
    snprintf(dst, size, "%s", value);
    return 0;
}

static int apply_hwloc_xml(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    return apply_path(cfg->hwloc_xml, sizeof(cfg->hwloc_xml), value, err);
}

static int apply_cache_dir(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    return apply_path(cfg->cache_dir, sizeof(cfg->cache_dir), value, err);
}

static int apply_topology(struct moe_plugin_config *cfg, const char *value, struct moe_error *err)
{
    return apply_path(cfg->topology, sizeof(cfg->topology), value, err);
}

static const struct config_key config_keys[] = {
    { "affinity", apply_affinity, "default --moe-affinity mode: exclusive|closest|none" },
    { "affinity_override", apply_override, "may users choose --moe-affinity: allow|deny" },
    { "hwloc_xml", apply_hwloc_xml, "absolute path of a cached hwloc XML topology" },
    { "cache_dir", apply_cache_dir,
      "root-owned directory of the per-boot topology cache (default /run/moeflow)" },
    { "topology", apply_topology, "absolute path of the NVLink-domain map or Slurm topology.conf" },
    { "enforce", apply_enforce, "contract violations: strict (refuse) or warn" },
    { "enforce_override", apply_enforce_override, "may users pass --moe-enforce=warn: allow|deny" },
    { "auto_freeze", apply_auto_freeze, "freeze the baseline on a study's first run: allow|deny" },
};
#define N_CONFIG_KEYS (sizeof(config_keys) / sizeof(config_keys[0]))

void moe_plugin_config_defaults(struct moe_plugin_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->affinity = MOE_AFFINITY_EXCLUSIVE;
    cfg->affinity_user_override = true;
}

static const struct config_key *find_key(const char *arg, size_t keylen)
{
    for (size_t i = 0; i < N_CONFIG_KEYS; i++)
        if (strlen(config_keys[i].name) == keylen && strncmp(arg, config_keys[i].name, keylen) == 0)
            return &config_keys[i];
    return NULL;
}

static const char *key_list(void)
{
    static char names[256];

    if (!names[0]) {
        size_t off = 0;
        for (size_t i = 0; i < N_CONFIG_KEYS && off < sizeof(names); i++)
            off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
                                    i ? ", " : "", config_keys[i].name);
    }
    return names;
}

static int parse_one(struct moe_plugin_config *cfg, const char *arg, bool seen[],
                     struct moe_error *err)
{
    const char *eq = strchr(arg, '=');
    const struct config_key *key;
    struct moe_error why;

    if (!eq || eq == arg) {
        moe_error_at(err, arg, 0, 0, "plugstack argument is not key=value (known keys: %s)",
                     key_list());
        return -1;
    }
    key = find_key(arg, (size_t)(eq - arg));
    if (!key) {
        moe_error_at(err, arg, 0, 0, "unknown plugstack key '%.*s' (known keys: %s)",
                     (int)(eq - arg), arg, key_list());
        return -1;
    }
    if (seen[key - config_keys]) {
        moe_error_at(err, arg, 0, 0, "plugstack key '%s' is given twice", key->name);
        return -1;
    }
    seen[key - config_keys] = true;
    moe_error_clear(&why);
    if (key->apply(cfg, eq + 1, &why) != 0) {
        moe_error_at(err, arg, 0, 0, "bad value for plugstack key '%s': %s", key->name, why.text);
        return -1;
    }
    return 0;
}

int moe_plugin_config_parse(struct moe_plugin_config *cfg, int argc, char *const argv[],
                            struct moe_error *err)
{
    bool seen[N_CONFIG_KEYS] = { false };

    moe_plugin_config_defaults(cfg);
    for (int i = 0; i < argc; i++)
        if (parse_one(cfg, argv[i], seen, err) != 0)
            return -1;
    return 0;
}
