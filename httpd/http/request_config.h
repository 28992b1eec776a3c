/*
 * The per-request merge of per-directory configuration (request_config.c).
 */
#ifndef HD_REQUEST_CONFIG_H
#define HD_REQUEST_CONFIG_H

#include "hd.h"

/**
 * Merges the dir configs that apply to @p r (server default, then <Directory>
 * by path length, then DirectoryMatch, <Files> on the basename, then
 * <Location>, in Apache's order) into r->dir_config. Uses r->filename (may be
 * NULL: only Location applies), r->finfo (a directory is matched as itself)
 * and r->uri.
 */
void hd_request_merge_config(hd_request_t *r);

#endif
