#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <yaml.h>

#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/yaml_depth.h"
#include "topology/domains.h"
#include "topology/domains_internal.h"
#include "topology/hostlist.h"

/* Room for one more domain and more_nodes nodes.  Capacities double
 * (moe_grow_array): a map of one-node domains, one per node of a large
 * cluster, would otherwise copy every array once per domain. */
static int grow(struct moe_domains *d, int more_nodes)
{
    size_t need = (size_t)d->nnodes + (size_t)more_nodes, cap = d->nodes_cap;
    struct moe_domain *dom;
    char **nodes;
    int *nd;

    if (!(dom = moe_grow_array(d->domains, &d->domains_cap, (size_t)d->ndomains + 1,
                               sizeof(*dom))))
        return -1;
    d->domains = dom;
    /* nodes and node_domain are parallel: both grow to the one nodes_cap,
     * which is raised only once both have it */
    if (!(nodes = moe_grow_array(d->nodes, &cap, need, sizeof(*nodes))))
        return -1;
    d->nodes = nodes;
    cap = d->nodes_cap;
    if (!(nd = moe_grow_array(d->node_domain, &cap, need, sizeof(*nd))))
        return -1;
    d->node_domain = nd;
    d->nodes_cap = cap;
    return 0;
}

/* Appends a domain and its nodes; a node named twice is found once all are in. */
static int add_domain(struct moe_domains *d, const char *name, int gpn, const char *nodes,
                      const char *src, int line, int col, struct moe_error *err)
{
    struct moe_error why;
    char **names;
    int n;

    if (!name[0] || strlen(name) >= MOE_DOMAIN_NAME_MAX) {
        moe_error_at(err, src, line, col, "domain name must be 1..%d characters",
                     MOE_DOMAIN_NAME_MAX - 1);
        return -1;
    }
    moe_error_clear(&why);
    if (moe_hostlist_expand(nodes, &names, &n, &why) != 0) {
        moe_error_at(err, src, line, col, "domain '%s': %s", name, why.text);
        return -1;
    }
    /* The bound of one expression holds for the whole map: otherwise a
     * short file repeating one wide expression (a YAML alias, or one line
     * of topology.conf over and over) costs gigabytes in slurmstepd. */
    if (n > MOE_HOSTLIST_MAX - d->nnodes) {
        moe_hostlist_free(names, n);
        moe_error_at(err, src, line, col, "domain '%s': the map names more than %d nodes in all",
                     name, MOE_HOSTLIST_MAX);
        return -1;
    }
    if (grow(d, n) != 0) {
        moe_hostlist_free(names, n);
        moe_error_set(err, "out of memory");
        return -1;
    }
    /* fits: its length is checked above */
    snprintf(d->domains[d->ndomains].name, MOE_DOMAIN_NAME_MAX, "%s", name);
    d->domains[d->ndomains].gpus_per_node = gpn;
    d->domains[d->ndomains].line = line;
    d->domains[d->ndomains].column = col;
    for (int i = 0; i < n; i++) {
        d->nodes[d->nnodes] = names[i];
        d->node_domain[d->nnodes++] = d->ndomains;
    }
    free(names); /* the strings now belong to d */
    d->ndomains++;
    return 0;
}

struct named { char *name; int dom; };

static int named_cmp(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static int named_by_name_then_order(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    return c ? c : (x->dom > y->dom) - (x->dom < y->dom);
}

/* A domain name given twice, found by sorting rather than by comparing
 * each new domain with all before it (65,536 one-node domains took 9 s). */
static int check_domain_names(const struct moe_domains *d, const char *src,
                              struct moe_error *err)
{
    struct named *p = calloc((size_t)d->ndomains + 1, sizeof(*p));
    int dup = -1;

    if (!p) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    for (int i = 0; i < d->ndomains; i++)
        p[i] = (struct named){ (char *)d->domains[i].name, i };
    qsort(p, (size_t)d->ndomains, sizeof(*p), named_by_name_then_order);
    /* of all repeats, the one declared first in the file, as a scan would */
    for (int i = 1; i < d->ndomains; i++)
        if (strcmp(p[i].name, p[i - 1].name) == 0 && (dup < 0 || p[i].dom < p[dup].dom))
            dup = i;
    if (dup >= 0)
        moe_error_at(err, src, d->domains[p[dup].dom].line, d->domains[p[dup].dom].column,
                     "domain '%s' is declared twice (first at line %d)", p[dup].name,
                     d->domains[p[dup - 1].dom].line);
    free(p);
    return dup >= 0 ? -1 : 0;
}

/* Sorts nodes by name for bsearch, and refuses a node in two domains (and
 * a domain name given twice). */
static int index_nodes(struct moe_domains *d, const char *src, struct moe_error *err)
{
    struct named *p;
    int rv = 0;

    if (check_domain_names(d, src, err) != 0)
        return -1;
    p = calloc((size_t)d->nnodes + 1, sizeof(*p));
    if (!p) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    for (int i = 0; i < d->nnodes; i++)
        p[i] = (struct named){ d->nodes[i], d->node_domain[i] };
    qsort(p, (size_t)d->nnodes, sizeof(*p), named_cmp);
    for (int i = 0; i < d->nnodes; i++) {
        d->nodes[i] = p[i].name;
        d->node_domain[i] = p[i].dom;
        if (rv == 0 && i && strcmp(p[i].name, p[i - 1].name) == 0) {
            moe_error_at(err, src, d->domains[p[i].dom].line, 0, "node %s is in domains '%s' and '%s'",
                         p[i].name, d->domains[p[i - 1].dom].name, d->domains[p[i].dom].name);
            rv = -1;
        }
    }
    free(p);
    return rv;
}

int moe_domains_find(const struct moe_domains *d, const char *node)
{
    int lo = 0, hi = d->nnodes - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(node, d->nodes[mid]);
        if (c == 0)
            return d->node_domain[mid];
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

void moe_domains_free(struct moe_domains *d)
{
    for (int i = 0; i < d->nnodes; i++)
        free(d->nodes[i]);
    free(d->nodes);
    free(d->node_domain);
    free(d->domains);
    memset(d, 0, sizeof(*d));
}

/* ---- moeflow-topology.yaml ---- */

struct yctx {
    yaml_document_t *doc;
    const char *src;
    struct moe_error *err;
};

static int yerr(struct yctx *y, yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int yerr(struct yctx *y, yaml_node_t *n, const char *fmt, ...)
{
    char text[MOE_ERROR_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    /* a message: cut, it still reads and names no file */
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    moe_error_at(y->err, y->src, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1, "%s",
                 text);
    return -1;
}

static const char *scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int yint(struct yctx *y, yaml_node_t *n, const char *what, int *out)
{
    const char *s = scalar(n);
    char *end;
    long v;

    errno = 0;
    v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < 1 || v > 1024)
        return yerr(y, n, "%s: expected a GPU count 1..1024, not '%s'", what, s ? s : "(not a scalar)");
    *out = (int)v;
    return 0;
}

static int yaml_domain(struct yctx *y, struct moe_domains *d, yaml_node_t *n, int gpn_default)
{
    const char *name = NULL, *nodes = NULL;
    int gpn = gpn_default;

    if (n->type != YAML_MAPPING_NODE)
        return yerr(y, n, "domains: each entry is a mapping with name and nodes");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
        const char *key = scalar(k) ? scalar(k) : "";

        if (strcmp(key, "name") == 0 && scalar(v))
            name = scalar(v);
        else if (strcmp(key, "nodes") == 0 && scalar(v))
            nodes = scalar(v);
        else if (strcmp(key, "gpus_per_node") == 0) {
            if (yint(y, v, "gpus_per_node", &gpn) != 0)
                return -1;
        } else if (strcmp(key, "name") == 0 || strcmp(key, "nodes") == 0)
            return yerr(y, v, "%s: expected a string", key);
        else
            return yerr(y, k, "unknown key '%s' in a domain (known: name, nodes, gpus_per_node)",
                        key);
    }
    if (!name || !nodes)
        return yerr(y, n, "a domain needs %s", !name ? "name" : "nodes");
    return add_domain(d, name, gpn, nodes, y->src, (int)n->start_mark.line + 1,
                      (int)n->start_mark.column + 1, y->err);
}

static int yaml_root(struct yctx *y, struct moe_domains *d, yaml_node_t *root)
{
    yaml_node_t *list = NULL;
    int gpn = 0;

    if (!root || root->type != YAML_MAPPING_NODE) {
        moe_error_at(y->err, y->src, 1, 1, "expected a mapping with a 'domains' list");
        return -1;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
        const char *key = scalar(k) ? scalar(k) : "";

        if (strcmp(key, "domains") == 0 && v->type == YAML_SEQUENCE_NODE)
            list = v;
        else if (strcmp(key, "gpus_per_node") == 0) {
            if (yint(y, v, "gpus_per_node", &gpn) != 0)
                return -1;
        } else if (strcmp(key, "domains") == 0)
            return yerr(y, v, "domains: expected a list");
        else
            return yerr(y, k, "unknown key '%s' (known: domains, gpus_per_node)", key);
    }
    if (!list) {
        moe_error_at(y->err, y->src, 1, 1, "no 'domains' list");
        return -1;
    }
    for (yaml_node_item_t *i = list->data.sequence.items.start; i < list->data.sequence.items.top; i++)
        if (yaml_domain(y, d, yaml_document_get_node(y->doc, *i), gpn) != 0)
            return -1;
    return 0;
}

int moe_domains_load_yaml(struct moe_domains *d, const char *path, struct moe_error *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    struct yctx y = { &doc, path, err };
    size_t len;
    char *text;
    int rv = -1;

    memset(d, 0, sizeof(*d));
    /* Whole, through the one reader: slurmstepd loads this map, so a FIFO
     * must not block it and its size is bounded. */
    text = moe_read_file(path, "NVLink-domain map", &len, err);
    if (!text)
        return -1;
    if (moe_yaml_check_depth(path, text, len, err) != 0) {
        free(text);
        return -1;
    }
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        moe_error_at(err, path, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, "%s", parser.problem);
    } else {
        rv = yaml_root(&y, d, yaml_document_get_root_node(&doc));
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    free(text);
    if (rv == 0)
        rv = index_nodes(d, path, err);
    if (rv != 0)
        moe_domains_free(d);
    return rv;
}

/* ---- Slurm topology.conf ---- */

/* Value of key (case-insensitive, as Slurm reads it) among a line's words. */
static const char *conf_value(char *const *words, int n, const char *key)
{
    size_t len = strlen(key);

    for (int i = 0; i < n; i++)
        if (strncasecmp(words[i], key, len) == 0 && words[i][len] == '=')
            return words[i] + len + 1;
    return NULL;
}

static int split_words(char *line, char **words, int max)
{
    int n = 0;
    char *save = NULL;

    line[strcspn(line, "#\n")] = '\0';
    for (char *w = strtok_r(line, " \t\r", &save); w && n < max; w = strtok_r(NULL, " \t\r", &save))
        words[n++] = w;
    return n;
}

/* fopen() for the admin's files, refusing a FIFO or a device at once:
 * slurmstepd reads them. */
static FILE *open_conf(const char *path, struct moe_error *err)
{
    int fd = moe_open_regular(path, "NVLink-domain map", err);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

    if (!f && fd >= 0) {
        moe_error_at(err, path, 0, 0, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

int moe_domains_load_slurm(struct moe_domains *d, const char *path, struct moe_error *err)
{
    FILE *f;
    char line[8192], *words[64];
    int lineno = 0, rv = 0;

    memset(d, 0, sizeof(*d));
    if (!(f = open_conf(path, err)))
        return -1;
    while (rv == 0 && fgets(line, sizeof(line), f)) {
        int n;
        const char *block, *nodes;

        lineno++;
        n = split_words(line, words, 64);
        if (n == 0 || strncasecmp(words[0], "BlockName=", 10) != 0)
            continue; /* SwitchName= (tree) and BlockSizes= lines say nothing of NVLink */
        block = words[0] + 10;
        nodes = conf_value(words, n, "Nodes");
        if (!nodes) {
            moe_error_at(err, path, lineno, 0, "BlockName=%s has no Nodes=", block);
            rv = -1;
        } else {
            rv = add_domain(d, block, 0, nodes, path, lineno, 0, err);
        }
    }
    fclose(f);
    if (rv == 0 && d->ndomains == 0) {
        moe_error_at(err, path, 0, 0, "no BlockName= line: not a block topology");
        rv = -1;
    }
    if (rv == 0)
        rv = index_nodes(d, path, err);
    if (rv != 0)
        moe_domains_free(d);
    return rv;
}

/* Slurm's topology.conf is key=value lines starting with one of these. */
static int looks_like_slurm_conf(const char *path)
{
    struct moe_error ignored; /* the YAML reader says why it cannot read it */
    FILE *f = open_conf(path, &ignored);
    char line[8192], *words[4];
    int slurm = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (split_words(line, words, 4) == 0)
            continue;
        slurm = strncasecmp(words[0], "BlockName=", 10) == 0 ||
                strncasecmp(words[0], "SwitchName=", 11) == 0 ||
                strncasecmp(words[0], "BlockSizes=", 11) == 0;
        break;
    }
    fclose(f);
    return slurm;
}

int moe_domains_load(struct moe_domains *d, const char *path, struct moe_error *err)
{
    if (looks_like_slurm_conf(path))
        return moe_domains_load_slurm(d, path, err);
    return moe_domains_load_yaml(d, path, err);
}
