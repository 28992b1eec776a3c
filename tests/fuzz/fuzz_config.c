/*
 * libFuzzer driver for the configuration reader: the input is a config file
 * (read through a memfd, so nothing touches the disk), after the two lines
 * every config needs (a Listen and an MPM). Whatever the input, the reader
 * must answer with a server record or with an error that names the file and
 * a line, never crash, leak or loop. Directives that read other files
 * (Include, TypesConfig, ...) are left out: they would fuzz the file system.
 */
#include "config.h"
#include "log.h"
#include "module.h"
#include "pool.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

static bool reads_other_files(const char *text)
{
    static const char *const words[] = {"include", "typesconfig", "loadmodule", "serverroot"};
    char low[64];

    for (const char *p = text; *p != '\0'; p++) {
        size_t n = 0;
        while (n < sizeof(low) - 1 && p[n] != '\0' && isalpha((unsigned char)p[n])) {
            low[n] = (char)tolower((unsigned char)p[n]);
            n++;
        }
        low[n] = '\0';
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
            if (strncmp(low, words[i], strlen(words[i])) == 0) {
                return true;
            }
        }
        if (n > 0) {
            p += n - 1;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    static const char *const none[] = {NULL};
    static const char *const pre[] = {"Listen 127.0.0.1:1",
                                      "LoadModule mpm_prefork_module modules/x.so", NULL};
    char *text;

    if (!ready) {
        hd_modules_init();
        hd_log_set_level(HD_LOG_EMERG);
        ready = true;
    }
    if (size > 16384 || memchr(data, '\0', size) != NULL) {
        return 0;
    }
    text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    if (reads_other_files(text)) {
        free(text);
        return 0;
    }
    int fd = memfd_create("fuzz.conf", MFD_CLOEXEC);
    if (fd < 0 || write(fd, text, size) != (ssize_t)size) {
        abort();
    }
    free(text);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

    hd_config_args_t args = {.server_root = HD_DEFAULT_ROOT, .conf_file = path,
                             .defines = none, .pre_directives = pre, .post_directives = none,
                             .foreground = true, .cmdline_log_level = -1};
    char *err = NULL;
    hd_server_t *s = hd_config_read(&args, 0, &err);
    if (s != NULL) {
        if (err != NULL) {
            abort();
        }
        hd_config_free(s);
    } else {
        /* an error names where: "file:line: ..." or "file: ..." */
        if (err == NULL || strncmp(err, "/proc/self/fd/", 14) != 0 || strchr(err, ':') == NULL) {
            abort();
        }
        free(err);
    }
    close(fd);
    hd_pool_recycler_drain();
    return 0;
}
