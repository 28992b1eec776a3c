/*
 * When the server was built, in one place: `httpd -V`, the error log's
 * AH00293 line and mod_status's "Server Built" must agree, as Apache's
 * buildmark makes them.
 */
#include "buildmark.h"

const char hd_server_built[] = __DATE__ " " __TIME__;
