/* SPDX-License-Identifier: MIT */
/* Codec checks of the Device Lending messages (proto_lend.c), for proto.c's table. */
#ifndef SMARTIO_PROTO_LEND_PRIV_H
#define SMARTIO_PROTO_LEND_PRIV_H

#include <stdint.h>

int smio_check_lend_pool(const void *p, uint32_t len);
int smio_check_lend_req(const void *p, uint32_t len);
int smio_check_lend_info(const void *p, uint32_t len);
int smio_check_peer_lend_setup(const void *p, uint32_t len);
int smio_check_lend_grant(const void *p, uint32_t len);
int smio_check_peer_lend_ref(const void *p, uint32_t len);
int smio_check_peer_lend_cfg(const void *p, uint32_t len);
int smio_check_peer_lend_p2p(const void *p, uint32_t len);
int smio_check_lend_p2p(const void *p, uint32_t len);

#endif
