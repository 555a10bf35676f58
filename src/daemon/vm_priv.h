/* SPDX-License-Identifier: MIT */
/*
 * The MDEV parent's pieces shared by h_vm.c (RAM, attach, BARs, vectors,
 * stats) and h_vm_life.c (a device's life: reserved at attach, borrowed when
 * the guest enables it, returned when the guest resets or releases it).
 */
#ifndef SMARTIO_DAEMON_VM_PRIV_H
#define SMARTIO_DAEMON_VM_PRIV_H

#include <stdint.h>

#include "daemon.h"

/* The MSI-X table size of a config header, 0 without MSI-X. */
unsigned smd_vm_msix_vectors(const uint8_t *cfg);

/*
 * Borrower: hold (hold=true, *r filled: config and BAR sizes) or let go of
 * fdid at its lender without borrowing it (PEER_VM_RESERVE). On a worker.
 */
int smd_vm_reserve(struct smd *d, uint32_t fdid, bool hold, struct smio_peer_vm_resv_reply *r);

/* Borrow v's device for its VM and map the guest's memory layout (on a worker). */
int smd_vm_enable(struct smd *d, struct smd_vm_dev *v);

/* Return v's borrowed device to its lender; it stays reserved (on a worker). */
void smd_vm_disable(struct smd *d, struct smd_vm_dev *v, const char *why);

/* VM_CMD: the guest wrote Command or reset the device (on a worker). */
int smd_vm_cmd(struct smd *d, struct smd_conn *c, const struct smio_vm_cmd *m,
	       struct smio_vm_cmd_reply *o);

/* Lender: PEER_VM_RESERVE, and a VM's host's connection gone (its reservations go). */
int smd_vm_resv_req(struct smd *d, struct smd_conn *c, const struct smio_peer_vm_resv *m,
		    struct smio_peer_vm_resv_reply *o);
void smd_vm_resv_conn_closed(struct smd *d, struct smd_conn *c);

/* A VM's device slot on connection cid (fdid 0: any), or a free one (cid 0). */
struct smd_vm_dev *smd_vm_dev_slot(struct smd *d, uint32_t cid, uint32_t fdid);

#endif
