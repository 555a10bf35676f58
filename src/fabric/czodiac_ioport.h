/* SPDX-License-Identifier: MIT */
/*
 * cZodiac's IOPort remapping tables (JCST 2014 sec. 4.1, 5.2, figs. 6, 10):
 * the RID table and the MMIO table between a USER host's address space and
 * the OWNER's, for the functions (PF and VFs) of one device behind the port.
 *
 * USER -> device: the request's requester ID (UID) becomes the function's
 * OID and its address (in a UBAR) the same offset in the OBAR; a completion
 * the USER returns to the device has its requester ID (the device's UID in
 * the USER's space) translated back to the OID. Device -> USER: only the RID
 * (OID -> UID, RAM 3 indexed by the OID's low bits, also giving the USER's
 * port); addresses are already the USER's (its DMA descriptors).
 *
 * Pure data structure: docs/czodiac.md says what is wired to the fabric.
 */
#ifndef SMARTIO_FABRIC_CZODIAC_IOPORT_H
#define SMARTIO_FABRIC_CZODIAC_IOPORT_H

#include <stdbool.h>
#include <stdint.h>

#define CZ_IOP_FUNCS 64       /* N: functions of the device behind the port */
#define CZ_IOP_BARS  6

struct cz_iop_bar {
	uint64_t obar, ubar, size;    /* size 0: not mapped */
};

struct cz_iop_fn {
	bool used;
	uint16_t oid, uid;            /* requester IDs in the OWNER's and the USER's space */
	uint16_t user;                /* the USER's port (RAM 3's DestPort) */
	struct cz_iop_bar bar[CZ_IOP_BARS];
};

struct cz_iop {
	uint16_t oid_base;            /* the device's first OID: OIDs are sequential */
	struct cz_iop_fn fn[CZ_IOP_FUNCS];  /* indexed by OID - oid_base */
};

void cz_iop_init(struct cz_iop *t, uint16_t oid_base);
/* Function oid given to USER port `user` as uid: -ERANGE, -EEXIST (oid bound, or uid used by that USER). */
int cz_iop_bind(struct cz_iop *t, uint16_t oid, uint16_t uid, uint16_t user);
/* A BAR of a bound function: -ENOENT, -EINVAL (size not a power of two, unaligned), -EEXIST (overlaps). */
int cz_iop_set_bar(struct cz_iop *t, uint16_t oid, unsigned bar, uint64_t obar, uint64_t ubar,
		   uint64_t size);
int cz_iop_unbind(struct cz_iop *t, uint16_t oid);

/* USER -> device request: uid -> oid and addr (in a UBAR of that function) -> OBAR. -ENOENT. */
int cz_iop_user_request(const struct cz_iop *t, uint16_t user, uint16_t uid, uint64_t addr,
			uint16_t *oid, uint64_t *oaddr);
/*
 * A USER's MMIO request seen by its address alone (a CPU's requests carry the
 * root complex's RID, not a function's): the function whose UBAR holds addr,
 * its OID, the OBAR address and the bytes left in that BAR. -ENOENT.
 */
int cz_iop_user_mmio(const struct cz_iop *t, uint16_t user, uint64_t addr, uint16_t *oid,
		     uint64_t *oaddr, uint64_t *left);
/* USER -> device completion: its requester ID (the function's uid) -> oid. -ENOENT. */
int cz_iop_user_completion(const struct cz_iop *t, uint16_t user, uint16_t uid, uint16_t *oid);
/* Device -> USER request or completion: oid -> uid and the USER's port. -ENOENT. */
int cz_iop_device_to_user(const struct cz_iop *t, uint16_t oid, uint16_t *uid, uint16_t *user);

#endif
