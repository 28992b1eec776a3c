/*
 * Sections: <Directory>, <DirectoryMatch>, <Files>, <FilesMatch>,
 * <Location> and <LocationMatch> (and the "~" forms), kept in file order in
 * s->sections, indexed once per configuration in the order the per-request
 * merge applies them, as Apache's:
 *   1. the server-level dir configs (s->dir_default);
 *   2. plain <Directory>, shortest path first;
 *   3. <Directory ~> and <DirectoryMatch>, in file order;
 *   4. <Files> and <FilesMatch> on the basename, in file order;
 *   5. <Location> and <LocationMatch> on the URI, in file order.
 */
#ifndef HD_SECTIONS_H
#define HD_SECTIONS_H

#include "config.h"
#include "hd.h"

/** The sections in the order the per-request merge applies them. */
typedef struct hd_section_index {
    hd_section_t **dirs; /**< plain <Directory>: by ncomponents, then file order */
    size_t ndirs;
    hd_section_t **dir_regex; /**< <Directory ~> and <DirectoryMatch>, file order */
    size_t ndir_regex;
    hd_section_t **files; /**< <Files>, <Files ~>, <FilesMatch>, file order */
    size_t nfiles;
    hd_section_t **locations; /**< <Location>, <Location ~>, <LocationMatch>, file order */
    size_t nlocations;
} hd_section_index_t;

/**
 * The handler of every section container the core's table lists: reads the
 * section's body into a new hd_section_t appended to s->sections.
 */
const char *hd_config_cmd_section(hd_cmd_parms_t *cmd, void *mconfig, int argc, char *argv[]);

/** Builds s->section_index from s->sections; once per configuration, after reading. */
void hd_config_index_sections(hd_server_t *s);

/**
 * Whether the <Directory> @p sec applies to the directory @p dir (absolute,
 * no trailing '/', "/" for the root): the directory itself and everything
 * below it; wildcards match component-wise, regexes see @p dir whole.
 */
bool hd_section_dir_matches(const hd_section_t *sec, const char *dir);

/** Whether the <Files> @p sec applies to the file @p base in @p dir (enclosing sections too). */
bool hd_section_files_matches(const hd_section_t *sec, const char *dir, const char *base);

/** Whether the <Location> @p sec applies to @p uri: /foo covers /foo, /foo/ and /foo/x, not /foobar. */
bool hd_section_location_matches(const hd_section_t *sec, const char *uri);

#endif
