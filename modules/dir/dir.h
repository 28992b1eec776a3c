/*
 * mod_dir: DirectoryIndex, the trailing-slash redirect for directories, and
 * the server-generated listing (Options Indexes).
 */
#ifndef HD_DIR_H
#define HD_DIR_H

#include "hd.h"

extern hd_module_t hd_dir_module;

/**
 * The DirectoryIndex names that apply to @p r ("index.html" by default).
 * Sets *@p names and returns how many there are (0 for "disabled").
 */
int hd_dir_index_names(const hd_request_t *r, const char *const **names);

/**
 * Answers @p r with an HTML listing of the directory r->filename (200,
 * text/html;charset=UTF-8, entries sorted by name, "." and ".." left out).
 * HD_OK, or 403 if the directory can't be read.
 */
int hd_dir_listing(hd_request_t *r);

#endif
