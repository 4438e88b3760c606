/* A small logic-less template renderer over Jansson data, for the sbatch
 * templates: {{name}}, {{a.b}}, {{.}}, sections {{#name}}...{{/name}} (an
 * array repeats, an object or true renders once, false/empty/null skips) and
 * inverted sections {{^name}}...{{/name}}.  Nothing is escaped: the generator
 * hands over values that are already shell-quoted where they must be.  A
 * value holding a control character is an error: no value can add a line to
 * a script.  A tag alone on its line takes the line with it. */
#ifndef MOEFLOW_TEMPLATE_H
#define MOEFLOW_TEMPLATE_H

#include <jansson.h>

#include "core/error.h"

#endif
