/* The reference for bench-gen.sh: write the bytes of an existing generated
 * study directory into a new one the way `moeflow gen` does (temporary
 * directory, one write per file, one syncfs, rename), and nothing else. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct file {
    char name[300];
    char *data;
    size_t len;
};

static int load(const char *dir, const char *sub, struct file *files, int *n, int max)
{
    char path[4096];
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "%s%s%s", dir, sub[0] ? "/" : "", sub);
    if (!(d = opendir(path)))
        return -1;
    while ((e = readdir(d)) && *n < max) {
        char p[4400];
        struct stat st;
        FILE *f;
        struct file *fl = &files[*n];

        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        snprintf(fl->name, sizeof(fl->name), "%s%s%s", sub, sub[0] ? "/" : "", e->d_name);
        fl->len = (size_t)st.st_size;
        fl->data = malloc(fl->len + 1);
        if (!(f = fopen(p, "rb")) || fread(fl->data, 1, fl->len, f) != fl->len)
            return -1;
        fclose(f);
        (*n)++;
    }
    closedir(d);
    return 0;
}

int main(int argc, char **argv)
{
    static struct file files[4096];
    char tmp[4096], path[8200];
    int n = 0, fd;

    if (argc != 3) {
        fprintf(stderr, "usage: write_tree SRC DST\n");
        return 1;
    }
    if (load(argv[1], "", files, &n, 4096) < 0 || load(argv[1], "contracts", files, &n, 4096) < 0)
        return 1;
    snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", argv[2]);
    if (!mkdtemp(tmp))
        return 1;
    snprintf(path, sizeof(path), "%s/contracts", tmp);
    mkdir(path, 0755);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%.4000s/%.300s", tmp, files[i].name);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write(fd, files[i].data, files[i].len) != (ssize_t)files[i].len)
            return 1;
        close(fd);
    }
    fd = open(tmp, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || syncfs(fd) < 0 || rename(tmp, argv[2]) < 0)
        return 1;
    close(fd);
    return 0;
}
