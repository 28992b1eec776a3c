/*
 * The build's date and time, as Apache's ap_get_server_built() gives them.
 */
#ifndef HD_BUILDMARK_H
#define HD_BUILDMARK_H

/** "Nov 30 2026 03:58:26": the compiler's __DATE__ and __TIME__ of buildmark.c. */
extern const char hd_server_built[];

#endif
