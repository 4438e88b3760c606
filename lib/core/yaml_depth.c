#include "config.h"

#include <yaml.h>

#include "core/yaml_depth.h"

/* libyaml's event parser, not its loader: it stops at the first level too
 * deep, long before the scanner's per-token cost grows with the depth. */
int moe_yaml_check_depth(const char *name, const char *text, size_t len,
                         struct moe_error *err)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    int depth = 0, rc = 0, done = 0;

    if (!yaml_parser_initialize(&parser))
        return 0; /* out of memory: the loader fails the same way */
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!done && yaml_parser_parse(&parser, &ev)) {
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
            if (++depth > MOE_YAML_DEPTH_MAX) {
                moe_error_at(err, name, (int)ev.start_mark.line + 1,
                             (int)ev.start_mark.column + 1,
                             "YAML: nested deeper than %d levels", MOE_YAML_DEPTH_MAX);
                rc = -1;
                done = 1;
            }
        } else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        done |= ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}
