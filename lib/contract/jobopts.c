#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contract/jobopts.h"
#include "contract/jobopts_internal.h"
#include "core/readfile.h"
#include "core/plugin_config.h"
#include "core/text.h"

void moe_jobopts_init(struct moe_jobopts *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->stage = MOE_STAGE_NONE;
    opts->enforce = -1;
}

int moe_jobopts_set_enforce(struct moe_jobopts *opts, const char *value, struct moe_error *err)
{
    enum moe_enforce_mode mode;

    if (value && moe_text_check("--moe-enforce", value, err) != 0)
        return -1;
    if (!value || moe_enforce_mode_parse(value, &mode) != 0) {
        moe_error_set(err, "invalid --moe-enforce '%s': valid values are strict, warn",
                      value ? value : "");
        return -1;
    }
    opts->enforce = (int)mode;
    return 0;
}

int moe_jobopts_set_stage(struct moe_jobopts *opts, const char *value, struct moe_error *err)
{
    enum moe_stage stage = moe_stage_parse(value);

    if (value && moe_text_check("--moe-stage", value, err) != 0)
        return -1;
    if (stage == MOE_STAGE_NONE) {
        moe_error_set(err, "invalid --moe-stage '%s': valid stages are %s",
                      value ? value : "", moe_stage_choices());
        return -1;
    }
    opts->stage = stage;
    return 0;
}

int moe_jobopts_set_study(struct moe_jobopts *opts, const char *value, struct moe_error *err)
{
    if (!value || !value[0]) {
        moe_error_set(err, "--moe-study needs a path to a study file or study directory");
        return -1;
    }
    /* The path reaches the job's environment (MOEFLOW_STUDY) and the
     * plugin's messages in slurmd's log. */
    if (moe_text_check("--moe-study", value, err) != 0)
        return -1;
    if (strlen(value) >= sizeof(opts->study)) {
        moe_error_set(err, "--moe-study path is longer than %zu characters", sizeof(opts->study) - 1);
        return -1;
    }
    /* fits: its length is checked above */
    snprintf(opts->study, sizeof(opts->study), "%s", value);
    return 0;
}

static bool candidate_char_ok(char c, bool first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return !first && (c == '.' || c == '_' || c == '-');
}

bool moe_candidate_id_valid(const char *id)
{
    size_t len;

    if (!id)
        return false;
    len = strlen(id);
    if (len == 0 || len > MOE_CANDIDATE_ID_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!candidate_char_ok(id[i], i == 0))
            return false;
    return true;
}

int moe_jobopts_set_candidate(struct moe_jobopts *opts, const char *value, struct moe_error *err)
{
    if (value && moe_text_check("--moe-candidate", value, err) != 0)
        return -1;
    if (!moe_candidate_id_valid(value)) {
        moe_error_set(err,
                      "invalid --moe-candidate '%s': a candidate id is 1-%d characters of "
                      "[A-Za-z0-9._-] starting with a letter or digit (e.g. c03, ep8-tp2)",
                      value ? value : "", MOE_CANDIDATE_ID_MAX);
        return -1;
    }
    /* fits: a valid id is MOE_CANDIDATE_ID_MAX at most */
    snprintf(opts->candidate, sizeof(opts->candidate), "%s", value);
    return 0;
}

int moe_study_path_check(const char *path, struct moe_error *err)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        moe_error_set(err, "--moe-study '%s': %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        moe_error_set(err, "--moe-study '%s' is neither a study file nor a study directory", path);
        return -1;
    }
    return 0;
}

static bool array_option(const char *arg)
{
    return strcmp(arg, "--array") == 0 || strncmp(arg, "--array=", 8) == 0 ||
           (arg[0] == '-' && arg[1] == 'a');
}

/* sbatch reads #SBATCH lines up to the first line that is neither blank nor
 * a comment.  -1: path is not a batch script ("#!" first), else 0 or 1. */
static int script_requests_array(const char *path)
{
    struct moe_error ignored;
    char *text, *line, *save = NULL;
    int found = 0;

    text = moe_read_file(path, "batch script", NULL, &ignored);
    if (!text)
        return -1;
    if (strncmp(text, "#!", 2) != 0) {
        free(text);
        return -1;
    }
    for (line = strtok_r(text, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
        char *p = line, *tok, *tsave = NULL;

        while (*p == ' ' || *p == '\t')
            p++;
        if (*p && *p != '#')
            break;
        if (strncmp(p, "#SBATCH", 7) != 0 || (p[7] != ' ' && p[7] != '\t'))
            continue;
        for (tok = strtok_r(p + 7, " \t", &tsave); tok && *tok != '#';
             tok = strtok_r(NULL, " \t", &tsave))
            if (array_option(tok)) {
                found = 1;
                break;
            }
    }
    free(text);
    return found;
}

bool moe_sbatch_args_request_array(int argc, char *const argv[])
{
    /* Short options other than -a are skipped, with no way to know whether
     * the next argument is their value: a value is only taken for the script
     * when it is a file that starts with "#!". */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (argv[i][0] == '-' && argv[i][1] != '-' && argv[i][1] != 'a')
            continue;
        if (array_option(argv[i]))
            return true;
        /* The script ends sbatch's options: what follows is the script's. */
        if (argv[i][0] != '-') {
            int rc = script_requests_array(argv[i]);

            if (rc >= 0)
                return rc == 1;
        }
    }
    return false;
}
