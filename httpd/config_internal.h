/*
 * Internals shared by the configuration reader (config.c), the per-request
 * merge (config_merge.c) and the core module (core.c): the reader's own
 * directives, the error channel for post_config, and the section index the
 * merge walks.
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

/**
 * Containers. Any directive whose name starts with '<' is a container: the
 * reader strips the closing '>' and then calls its handler, which reads the
 * lines up to the matching closing tag. These are the core's containers.
 * <Directory>, <DirectoryMatch>, <Location>, <LocationMatch>, <Files>,
 * <FilesMatch> (config_merge.c).
 */
const char *hd_config_cmd_section(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);
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

/** The sections in the order the per-request merge applies them. */
typedef struct {
    hd_section_t **dirs; /**< plain <Directory>: by ncomponents, then file order */
    size_t ndirs;
    hd_section_t **dir_regex; /**< <Directory ~> and <DirectoryMatch>, file order */
    size_t ndir_regex;
    hd_section_t **files; /**< <Files>, <Files ~>, <FilesMatch>, file order */
    size_t nfiles;
    hd_section_t **locations; /**< <Location>, <Location ~>, <LocationMatch>, file order */
    size_t nlocations;
} hd_section_index_t;

/** The index of @p s, kept in the core module's server config (core.c). */
hd_section_index_t *hd_config_section_index(const hd_server_t *s);

/** Builds the section index from s->sections (config_merge.c), once per configuration. */
void hd_config_index_sections(hd_server_t *s);

/** True if the compiled regex @p re (a pcre2_code) matches @p subject. */
bool hd_config_regex_match(const void *re, const char *subject);

/**
 * Writes the Apache manual's "Context:" text for @p cmd into @p buf:
 * "server config", "directory" or "server config, directory".
 */
void hd_config_directive_context_text(const hd_command_t *cmd, char *buf, size_t size);

/** Writes the -L "Allowed in *.conf ..." wording for @p cmd into @p buf. */
void hd_config_directive_where_text(const hd_command_t *cmd, char *buf, size_t size);

#endif
