/* Strict: an unknown key is an error, so a typo cannot silently leave a
 * field at its default. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "core/readfile.h"
#include "study/model_json.h"
#include "study/presets.h"

enum kind { K_INT, K_BOOL };

struct field {
    const char *key;
    enum kind kind;
    size_t off;
};

#define I(f) { #f, K_INT, offsetof(struct moe_model, f) }
#define B(f) { #f, K_BOOL, offsetof(struct moe_model, f) }
static const struct field fields[] = {
    I(num_layers), I(hidden), I(ffn_hidden), I(moe_ffn_hidden), I(num_experts), I(topk),
    I(shared_expert_ffn), I(first_dense_layers), I(mtp_layers), I(router_groups),
    I(router_group_topk), I(num_heads), I(num_query_groups), I(head_dim), B(qk_layernorm),
    I(q_lora_rank), I(kv_lora_rank), I(qk_head_dim), I(qk_pos_head_dim), I(v_head_dim),
    I(vocab), B(swiglu), B(untie_embeddings),
};
#undef I
#undef B

static int set_enum(struct moe_model *m, const char *key, const char *v)
{
    int i;

    if (strcmp(key, "attention") == 0 && (i = moe_enum_parse(moe_attention_names, v)) >= 0)
        m->attention = (enum moe_attention_kind)i;
    else if (strcmp(key, "router_score") == 0 &&
             (i = moe_enum_parse(moe_router_score_names, v)) >= 0)
        m->router_score = (enum moe_router_score)i;
    else
        return -1;
    return 0;
}

static int set_field(struct moe_model *m, const char *key, json_t *v)
{
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (strcmp(fields[i].key, key) != 0)
            continue;
        if (fields[i].kind == K_INT) {
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > 1 << 30)
                return -1;
            *(int *)((char *)m + fields[i].off) = (int)json_integer_value(v);
        } else {
            if (!json_is_boolean(v))
                return -1;
            *(bool *)((char *)m + fields[i].off) = json_is_true(v);
        }
        return 0;
    }
    if (strcmp(key, "name") == 0 && json_is_string(v)) {
        /* a cut name would name another preset */
        if (strlen(json_string_value(v)) >= sizeof(m->name))
            return -1;
        /* fits: checked above */
        snprintf(m->name, sizeof(m->name), "%s", json_string_value(v));
        return 0;
    }
    if (json_is_string(v))
        return set_enum(m, key, json_string_value(v));
    return -1;
}

int moe_model_from_json_file(const char *path, struct moe_model *m, struct moe_error *err)
{
    json_t *root = moe_read_json(path, "model", err), *v;
    const char *key;
    int rc = -1;

    if (!root)
        return -1;
    memset(m, 0, sizeof(*m));
    /* fits: a literal shorter than the name buffer */
    snprintf(m->name, sizeof(m->name), "custom");
    if (!json_is_object(root)) {
        moe_error_at(err, path, 0, 0, "a model must be a JSON object");
        goto out;
    }
    v = json_object_get(root, "base");
    if (v) {
        const struct moe_model *p = json_is_string(v) ? moe_preset_find(json_string_value(v))
                                                      : NULL;
        if (!p) {
            moe_error_at(err, path, 0, 0, "base: unknown preset");
            goto out;
        }
        *m = *p;
    }
    json_object_foreach(root, key, v) {
        if (strcmp(key, "base") == 0)
            continue;
        if (set_field(m, key, v) < 0) {
            moe_error_at(err, path, 0, 0, "%s: unknown key or wrong type", key);
            goto out;
        }
    }
    if (m->num_query_groups == 0)
        m->num_query_groups = m->num_heads;
    if (m->head_dim == 0 && m->num_heads > 0)
        m->head_dim = m->hidden / m->num_heads;
    rc = 0;
out:
    json_decref(root);
    return rc;
}
