/*
 * httpd: the command line (Apache's flags), then the master's life: read the
 * configuration, open listeners and logs, detach, run the MPM, and re-read
 * the configuration on every restart.
 */
#include "build_info.h"
#include "buildmark.h"
#include "config.h"
#include "connection.h"
#include "core.h"
#include "listen.h"
#include "log.h"
#include "module.h"
#include "mpm.h"
#include "pool.h"
#include "process.h"
#include "sys.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CONFIG_FILE "conf/httpd.conf"
#define MAX_CMDLINE_ITEMS 64

typedef struct {
    const char *defines[MAX_CMDLINE_ITEMS + 3];
    int ndefines;
    const char *pre[MAX_CMDLINE_ITEMS + 1];
    int npre;
    const char *post[MAX_CMDLINE_ITEMS + 1];
    int npost;
    const char *signal_cmd;
    bool test_config, show_version, show_settings, show_modules, show_directives,
        show_compiled;
} cmdline_t;

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: httpd [-D name] [-d directory] [-f file]\n"
            "             [-C \"directive\"] [-c \"directive\"]\n"
            "             [-k start|restart|graceful|graceful-stop|stop]\n"
            "             [-v] [-V] [-h] [-l] [-L] [-t] [-M] [-X] [-e level]\n"
            "Options:\n"
            "  -D name            : define a name for use in <IfDefine name> directives\n"
            "  -d directory       : specify an alternate initial ServerRoot\n"
            "  -f file            : specify an alternate ServerConfigFile\n"
            "  -C \"directive\"     : process directive before reading config files\n"
            "  -c \"directive\"     : process directive after reading config files\n"
            "  -e level           : show startup errors of level (see LogLevel)\n"
            "  -v                 : show version number\n"
            "  -V                 : show compile settings\n"
            "  -h                 : list available command line options (this page)\n"
            "  -l                 : list compiled in modules\n"
            "  -L                 : list available configuration directives\n"
            "  -t                 : run syntax check for config files\n"
            "  -M                 : show all loaded modules\n"
            "  -X                 : debug mode (only one worker, do not detach)\n"
            "  -k signal          : send a signal to the running server via its PidFile\n");
}

static void bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, "httpd: %s%s\n", what, arg);
    usage(stderr);
    exit(1);
}

static bool has_define(const cmdline_t *cl, const char *name)
{
    for (int i = 0; i < cl->ndefines; i++) {
        if (strcmp(cl->defines[i], name) == 0) {
            return true;
        }
    }
    return false;
}

static void print_version(void)
{
    printf("Server version: " HD_SERVER_BASEPRODUCT "/" HD_VERSION " (Unix)\n");
    printf("Server built:   %s\n", hd_server_built);
}

static void print_settings(const hd_server_t *s)
{
    print_version();
    printf("Git commit:     %s\n", HD_GIT_COMMIT);
    printf("Build type:     %s\n", HD_BUILD_TYPE);
    printf("Compiler:       %s\n", HD_COMPILER);
    printf("Compiler flags: %s\n", HD_CFLAGS);
    printf("Architecture:   %d-bit\n", (int)(sizeof(void *) * 8));
    if (s != NULL && s->mpm != NULL) {
        int threaded = 0, forked = 0;
        s->mpm->query(s, HD_MPMQ_IS_THREADED, &threaded);
        s->mpm->query(s, HD_MPMQ_IS_FORKED, &forked);
        printf("Server MPM:     %s\n", s->mpm->name);
        printf("  threaded:     %s\n", threaded ? "yes (fixed thread count)" : "no");
        printf("    forked:     %s\n", forked ? "yes (variable process count)" : "no");
    } else {
        printf("Server MPM:     (none: the configuration could not be read)\n");
    }
    printf("Server compiled with....\n");
    printf(" -D HTTPD_ROOT=\"%s\"\n", HD_DEFAULT_ROOT);
    printf(" -D SERVER_CONFIG_FILE=\"%s\"\n", DEFAULT_CONFIG_FILE);
}

static void print_modules(const hd_server_t *s)
{
    printf("Loaded Modules:\n");
    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        printf(" %s_module (static)\n", m->name);
    }
}

static void print_compiled(void)
{
    printf("Compiled in modules:\n");
    for (int i = 0; hd_builtin_modules[i] != NULL; i++) {
        printf("  %s\n", hd_builtin_modules[i]->source_name);
    }
}

static int send_signal(const hd_server_t *s, const char *cmd)
{
    const char *pidfile = hd_core_sconf(s)->pid_file;
    pid_t pid = hd_pidfile_read(pidfile);
    bool running = pid > 0 && hd_kill(pid, 0) == 0;
    int sig = 0;

    if (strcmp(cmd, "start") == 0) {
        if (running) {
            printf("httpd (pid %ld) already running\n", (long)pid);
            return 0;
        }
        return -1; /* start normally */
    }
    if (strcmp(cmd, "stop") == 0) {
        sig = SIGTERM;
    } else if (strcmp(cmd, "restart") == 0) {
        sig = SIGHUP;
    } else if (strcmp(cmd, "graceful") == 0) {
        sig = SIGUSR1;
    } else if (strcmp(cmd, "graceful-stop") == 0) {
        sig = SIGWINCH;
    }
    if (!running) {
        if (sig == SIGHUP || sig == SIGUSR1) {
            printf("httpd not running, trying to start\n");
            return -1;
        }
        if (pid > 0) {
            printf("httpd (pid %ld?) not running\n", (long)pid);
        } else {
            printf("httpd (no pid file) not running\n");
        }
        return 1;
    }
    if (hd_kill(pid, sig) < 0) {
        fprintf(stderr, "httpd: could not send signal to pid %ld: %s\n", (long)pid,
                strerror(errno));
        return 1;
    }
    return 0;
}

static int open_logs(hd_server_t *s)
{
    const hd_core_server_conf_t *sc = hd_core_sconf(s);
    if (hd_log_open(sc->error_log ? sc->error_log : "stderr", sc->log_level) != HD_OK) {
        return HD_ERROR;
    }
    hd_module_t *m;
    HD_FOR_EACH_LOADED_MODULE(s, m)
    {
        if (m->open_logs != NULL && m->open_logs(s) != HD_OK) {
            return HD_ERROR;
        }
    }
    return HD_OK;
}

/* Reads the configuration for a restart; NULL (logged) keeps the old one serving. */
static hd_server_t *reread_config(const hd_config_args_t *args, hd_server_t *old)
{
    char *err = NULL;
    hd_server_t *s = hd_config_read(args, old->generation + 1, &err);
    if (s == NULL) {
        hd_log_error(HD_LOG_ERR, "core",
                     "AH00526: configuration error, restart aborted, still serving the old "
                     "configuration: %s", err ? err : "unknown error");
        free(err);
        return NULL;
    }
    if (s->mpm != old->mpm) {
        hd_log_error(HD_LOG_ERR, "core",
                     "the MPM cannot change on a restart (%s to %s); stop and start the server",
                     old->mpm->name, s->mpm->name);
        hd_config_free(s);
        return NULL;
    }
    if (s->mpm->configure(s) != HD_OK || hd_listen_open(s, old) != HD_OK) {
        hd_log_error(HD_LOG_ERR, "core", "restart aborted, still serving the old configuration");
        hd_config_free(s);
        return NULL;
    }
    if (open_logs(s) != HD_OK) {
        hd_log_error(HD_LOG_ERR, "core", "could not open the new logs; keeping the old ones");
    }
    return s;
}

int main(int argc, char **argv)
{
    cmdline_t cl;
    memset(&cl, 0, sizeof(cl));
    hd_config_args_t args = {.server_root = HD_DEFAULT_ROOT, .conf_file = DEFAULT_CONFIG_FILE,
                             .cmdline_log_level = -1};
    int opt;

    opterr = 0;
    while ((opt = getopt(argc, argv, ":f:d:C:c:D:e:E:k:tvVMLlXhS")) != -1) {
        switch (opt) {
        case 'f':
            args.conf_file = optarg;
            break;
        case 'd':
            args.server_root = optarg;
            break;
        case 'C':
        case 'c':
            if ((opt == 'C' ? cl.npre : cl.npost) >= MAX_CMDLINE_ITEMS) {
                bad_usage("too many options -", opt == 'C' ? "C" : "c");
            }
            if (opt == 'C') {
                cl.pre[cl.npre++] = optarg;
            } else {
                cl.post[cl.npost++] = optarg;
            }
            break;
        case 'D':
            if (cl.ndefines >= MAX_CMDLINE_ITEMS) {
                bad_usage("too many -D options", "");
            }
            cl.defines[cl.ndefines++] = optarg;
            break;
        case 'e':
            args.cmdline_log_level = hd_log_level_parse(optarg);
            if (args.cmdline_log_level < 0) {
                bad_usage("-e: unknown log level: ", optarg);
            }
            break;
        case 'E':
            break; /* startup log file: errors go to stderr here */
        case 'k':
            if (strcmp(optarg, "start") != 0 && strcmp(optarg, "stop") != 0 &&
                strcmp(optarg, "restart") != 0 && strcmp(optarg, "graceful") != 0 &&
                strcmp(optarg, "graceful-stop") != 0) {
                bad_usage("-k: unknown signal (start, restart, graceful, graceful-stop, stop): ",
                          optarg);
            }
            cl.signal_cmd = optarg;
            break;
        case 't':
            cl.test_config = true;
            break;
        case 'v':
            cl.show_version = true;
            break;
        case 'V':
            cl.show_settings = true;
            break;
        case 'M':
            cl.show_modules = true;
            break;
        case 'L':
            cl.show_directives = true;
            break;
        case 'l':
            cl.show_compiled = true;
            break;
        case 'S':
            cl.test_config = true;
            break;
        case 'X':
            args.one_process = true;
            cl.defines[cl.ndefines++] = "ONE_PROCESS";
            cl.defines[cl.ndefines++] = "DEBUG";
            break;
        case 'h':
            usage(stdout);
            return 0;
        case ':':
            bad_usage("option requires an argument -- ", (char[]){(char)optopt, 0});
            break;
        default:
            bad_usage("illegal option -- ", (char[]){(char)optopt, 0});
        }
    }
    if (optind < argc) {
        bad_usage("unexpected argument: ", argv[optind]);
    }

    hd_modules_init();
    if (cl.show_version) {
        print_version();
        return 0;
    }
    if (cl.show_directives) {
        hd_config_list_directives(stdout);
        return 0;
    }
    if (cl.show_compiled) {
        print_compiled();
        return 0;
    }

    args.foreground = args.one_process || has_define(&cl, "FOREGROUND");
    args.defines = cl.defines;
    args.pre_directives = cl.pre;
    args.post_directives = cl.post;
    if (args.cmdline_log_level >= 0) {
        hd_log_set_level(args.cmdline_log_level);
    }

    char *err = NULL;
    hd_server_t *s = hd_config_read(&args, 0, &err);
    if (s == NULL) {
        if (cl.show_settings) {
            print_settings(NULL);
        }
        fprintf(stderr, "%s\n", err ? err : "httpd: configuration error");
        free(err);
        return 1;
    }
    int rv = -1;
    if (s->mpm->configure(s) != HD_OK) {
        rv = 1;
    } else if (cl.show_settings) {
        print_settings(s);
        rv = 0;
    } else if (cl.show_modules) {
        print_modules(s);
        rv = 0;
    } else if (cl.test_config) {
        fprintf(stderr, "Syntax OK\n");
        rv = 0;
    } else if (cl.signal_cmd != NULL) {
        rv = send_signal(s, cl.signal_cmd);
    }
    if (rv >= 0) {
        hd_config_free(s);
        hd_pool_recycler_drain();
        return rv;
    }

    /*
     * From the moment the port accepts, a client (or a test) may signal the
     * master: until its handlers exist (the MPM installs them) the signals
     * wait, blocked, instead of killing it (HUP's default action).
     */
    hd_master_signals_block();
    if (hd_listen_open(s, NULL) != HD_OK) {
        fprintf(stderr, "httpd: no listening sockets available, shutting down\n");
        return 1;
    }
    if (open_logs(s) != HD_OK) {
        fprintf(stderr, "httpd: could not open log files, shutting down\n");
        return 1;
    }
    if (!args.foreground && hd_detach() != HD_OK) {
        return 1;
    }
    if (hd_log_fd() != 2) {
        hd_dup2(hd_log_fd(), 2); /* stray stderr output lands in the error log */
    }
    static char pidfile[4096];
    snprintf(pidfile, sizeof(pidfile), "%s", hd_core_sconf(s)->pid_file);
    if (!args.one_process) {
        hd_pidfile_write(pidfile);
    }

    for (;;) {
        hd_mpm_exit_t how = s->mpm->run(s);
        if (how == HD_MPM_STOP || how == HD_MPM_GRACEFUL_STOP || how == HD_MPM_FAILED) {
            break;
        }
        hd_server_t *fresh = reread_config(&args, s);
        if (fresh != NULL) {
            hd_config_free(s);
            s = fresh;
        }
    }
    hd_modules_flush(s);
    if (!args.one_process) {
        hd_pidfile_remove(pidfile);
    }
    hd_log_error(HD_LOG_NOTICE, "core", "AH00170: server stopped");
    hd_listen_close(s);
    hd_config_free(s);
    hd_pool_recycler_drain();
    return 0;
}
