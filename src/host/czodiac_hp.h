/* SPDX-License-Identifier: MIT */
/*
 * cZodiac's virtual hot-plug (JCST 2014 sec. 4.3, docs/czodiac.md): the
 * switch presents each USER a virtual downstream port whose slot registers
 * (PCIe Slot Capabilities, Control and Status) say whether a logic
 * full-function device sits in it. The switch side inserts a shared
 * function (Presence Detect State and Changed) or asks to withdraw it
 * (Attention Button Pressed), raising the port's MSI; the USER's hot-plug
 * driver (as Linux's pciehp) reads the status, hot-adds the logic device or
 * removes it and powers the slot off, after which the switch side withdraws
 * the function from the IOPort (the `off` hook) and presence drops.
 */
#ifndef SMARTIO_HOST_CZODIAC_HP_H
#define SMARTIO_HOST_CZODIAC_HP_H

#include "czodiac_dev.h"

struct czhp_slot {
	/* The virtual port's registers (the switch's). */
	uint32_t sltcap;
	uint16_t sltctl, sltsta;
	uint64_t msi_addr;
	uint32_t msi_data;
	bool msi_on;
	uint64_t msis;                     /* messages raised */
	/* What the switch put in the slot. */
	struct fab_host *user;
	bool loaded;
	struct lend_grant g;
	uint16_t uid;
	struct shadow_transport t;
	void (*off)(void *arg);            /* the USER powered the slot off: withdraw */
	void *off_arg;
	/* The USER's hot-plug driver. */
	struct pci_host *ph;
	struct pci_dev *pdev;              /* the logic device, once added */
	int efd, vector;
};

/* The switch side. A slot of USER host `user`, empty, its number psn. */
void czhp_slot_init(struct czhp_slot *s, struct fab_host *user, uint32_t psn);
/* Put a shared function in: presence detected (MSI if enabled). -EBUSY if occupied. */
int czhp_insert(struct czhp_slot *s, const struct lend_grant *g, uint16_t uid,
		const struct shadow_transport *t, void (*off)(void *arg), void *off_arg);
/* Ask the USER to let the function go: the attention button (MSI if enabled). */
int czhp_attention(struct czhp_slot *s);

/* The registers as the USER's config cycles reach them (offsets in the PCIe capability). */
int czhp_read(struct czhp_slot *s, uint32_t reg, uint32_t *val);
int czhp_write(struct czhp_slot *s, uint32_t reg, uint32_t val);

/* The USER's hot-plug driver: an MSI vector (eventfd), events enabled. With ph's host lock. */
int czhp_driver_attach(struct czhp_slot *s, struct pci_host *ph);
void czhp_driver_detach(struct czhp_slot *s);
/*
 * Handle what the slot reports (after its eventfd fired): adds the logic
 * device on presence; on the attention button unbinds its driver (whose
 * remove quiesces the device), removes it and powers the slot off. With
 * ph's host lock; call it while the device is idle, as pciehp's button
 * delay lets users stop their I/O first.
 */
int czhp_driver_service(struct czhp_slot *s);

#endif
