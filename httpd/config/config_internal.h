/*
 * Internals shared by the configuration reader (config.c), the sections
 * (sections.c) and the core module (core.c): the reader's own directives,
 * reading a container's body, and the error channel for post_config.
 */
#ifndef HD_CONFIG_INTERNAL_H
#define HD_CONFIG_INTERNAL_H

#include "config.h"
#include "hd.h"

#include <stdarg.h>

/** Maximum nesting of Include (a file including itself fails at this depth). */
#define HD_MAX_INCLUDE_DEPTH 32

/** Directives the reader handles itself; they sit in the core module's table. */
const char *hd_config_cmd_include(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** IncludeOptional: as Include, but a missing file or an empty wildcard is not an error. */
const char *hd_config_cmd_include_optional(hd_cmd_parms_t *cmd, void *mconfig, int argc,
                                           char *argv[]);
/** Define NAME [value]. */
const char *hd_config_cmd_define(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** UnDefine NAME. */
const char *hd_config_cmd_undefine(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);

/** <IfModule [!]name> */
const char *hd_config_cmd_ifmodule(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
/** <IfDefine [!]NAME> */
const char *hd_config_cmd_ifdefine(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);

/**
 * What a container handler returns when the error happened inside it and
 * was already reported with its own file and line.
 */
extern const char hd_config_nested_error[];

/** While reading: the enclosing section (NULL at server level) and its opener ("<Files"). */
hd_section_t *hd_config_current_section(const char **opener);

/**
 * While reading: appends @p sec to the configuration and reads the body of
 * the container @p cmd opened, up to its closing tag, with directives going
 * to @p sec in HD_CTX_* @p context. False on error (already reported).
 */
bool hd_config_read_section(hd_cmd_parms_t *cmd, hd_section_t *sec, unsigned context);

/** @p path made absolute against the working directory, without trailing '/'; NULL on error. */
char *hd_config_absolute_path(hd_pool_t *p, const char *path);

/**
 * Reports why a post_config hook fails: the message (printf-style) becomes
 * hd_config_read's error when the hook then returns HD_ERROR. Only the last
 * message of the calling thread is kept.
 */
void hd_config_error(hd_server_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * Writes the Apache manual's "Context:" text for @p cmd into @p buf:
 * "server config", "directory" or "server config, directory".
 */
void hd_config_directive_context_text(const hd_command_t *cmd, char *buf, size_t size);

/** Writes the -L "Allowed in *.conf ..." wording for @p cmd into @p buf. */
void hd_config_directive_where_text(const hd_command_t *cmd, char *buf, size_t size);

#endif
