/* SPDX-License-Identifier: MIT */
/*
 * cZodiac sharing of a function (issue 16 item 3, docs/czodiac.md): the
 * OWNER programs its IOPort's RID and MMIO tables for the function, and the
 * USER hot-adds a "logic full-function device" (JCST 2014 sec. 4.2, fig. 7):
 * a pci_dev at the function's UID whose BARs are the UBARs in the USER's port
 * window and whose header fields the USER must not see raw (IDs of a VF,
 * BARs, expansion ROM, interrupt pin, header type) are emulated; the rest of
 * its config cycles go to the real function. Its DMA needs nothing else: the
 * IOPort gives the device's requests the UID, so the USER's DMA API maps as
 * for a local device of that RID. All calls with the respective host's lock.
 */
#ifndef SMARTIO_HOST_CZODIAC_DEV_H
#define SMARTIO_HOST_CZODIAC_DEV_H

#include "lend.h"
#include "pci.h"

/*
 * OWNER: share function bdf through czodiac switch cswitch with host user as
 * RID uid, its BARs laid out from ubar (the USER's port window, ubar_size
 * bytes), each aligned to its size. g: what the USER is told (bar_addr are
 * the UBARs). -ENODEV (no such endpoint), -EINVAL (not a czodiac switch, or
 * a host without a port on it), -ENOSPC (window or tables full), -EEXIST.
 */
int czdev_share(struct fab_host *owner, uint32_t cswitch, uint16_t bdf, uint32_t user,
		uint16_t uid, uint64_t ubar, uint64_t ubar_size, struct lend_grant *g);
int czdev_unshare(struct fab_host *owner, uint32_t cswitch, uint16_t bdf);

/* USER: its port window on cswitch (the NTB window BAR cabled to it). -ENODEV. */
int czdev_port_window(struct fab_host *user, uint32_t cswitch, uint64_t *base, uint64_t *size);
/* USER: a RID no function of this host answers to, for a shared function. -ENOSPC. */
int czdev_pick_uid(struct pci_host *ph, uint16_t *uid);
/*
 * USER: for another function of the OWNER device whose logic device has a
 * function at `near`: the first free function of that device (one
 * multi-function logic device, fig. 7), else a device of its own.
 */
int czdev_pick_uid_near(struct pci_host *ph, uint16_t near, uint16_t *uid);
/* USER: hot-add the logic full-function device of g at uid (t: config cycles). */
int czdev_create(struct pci_host *ph, uint16_t uid, const struct lend_grant *g,
		 const struct shadow_transport *t, struct pci_dev **out);
/* USER: hot-remove it (-EBUSY while a driver is bound, unless force). */
int czdev_destroy(struct pci_host *ph, struct pci_dev *pdev, bool force);
bool czdev_is(const struct pci_dev *pdev);

/* In-process sharing (tests): both hosts in this process. */
struct czdev_local;
int czdev_local_share(struct fab_host *owner, uint32_t cswitch, uint16_t bdf,
		      struct pci_host *user, struct czdev_local **out, struct pci_dev **pdev);
int czdev_local_unshare(struct czdev_local *l, bool force);
/*
 * The same through virtual hot-plug (czodiac_hp.h): the OWNER's side shares
 * the function and the switch inserts it into the USER's slot; the USER's
 * hot-plug driver adds the logic device, and when it powers the slot off the
 * function is withdrawn and the share ends.
 */
struct czhp_slot;
int czdev_local_offer(struct fab_host *owner, uint32_t cswitch, uint16_t bdf,
		      struct pci_host *user, struct czhp_slot *slot);

#endif
