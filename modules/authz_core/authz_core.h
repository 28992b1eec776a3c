/*
 * mod_authz_core: access control with Require (all granted|denied, local,
 * ip, and their "not" forms).
 */
#ifndef HD_AUTHZ_CORE_H
#define HD_AUTHZ_CORE_H

#include "hd.h"

extern hd_module_t hd_authz_core_module;

/**
 * True if the client of @p c is local in the sense of "Require local":
 * 127.0.0.0/8, ::1 (IPv4-mapped forms included), or the connection's own
 * local address.
 */
bool hd_authz_client_is_local(const hd_conn_t *c);

#endif
