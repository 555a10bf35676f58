// SPDX-License-Identifier: MIT
/*
 * Virtual hot-plug (czodiac_hp.h): the slot registers of the switch's virtual
 * downstream port, and the USER's hot-plug driver over them.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <linux/pci_regs.h>

#include "czodiac_hp.h"
#include "pci_priv.h"

#define SLTSTA_RW1C (PCI_EXP_SLTSTA_ABP | PCI_EXP_SLTSTA_PDC | PCI_EXP_SLTSTA_CC)

void czhp_slot_init(struct czhp_slot *s, struct fab_host *user, uint32_t psn)
{
	*s = (struct czhp_slot){ .user = user, .efd = -1, .vector = -1 };
	/* Attention button, power controller, hot-plug capable; no surprise removal. */
	s->sltcap = PCI_EXP_SLTCAP_ABP | PCI_EXP_SLTCAP_PCP | PCI_EXP_SLTCAP_HPC |
		    (psn << 19);
	s->sltctl = PCI_EXP_SLTCTL_PCC;    /* powered off while empty */
}

/* The port's message: a posted write into the USER's MSI window (no IOMMU). */
static void raise(struct czhp_slot *s, uint16_t enable)
{
	if (!(s->sltctl & PCI_EXP_SLTCTL_HPIE) || !(s->sltctl & enable) || !s->msi_on)
		return;
	if (!fab_intc_deliver(&s->user->intc, s->msi_addr, s->msi_data))
		s->msis++;
}

int czhp_insert(struct czhp_slot *s, const struct lend_grant *g, uint16_t uid,
		const struct shadow_transport *t, void (*off)(void *arg), void *off_arg)
{
	if (s->loaded)
		return -EBUSY;
	s->loaded = true;
	s->g = *g;
	s->uid = uid;
	s->t = *t;
	s->off = off;
	s->off_arg = off_arg;
	s->sltsta |= PCI_EXP_SLTSTA_PDS | PCI_EXP_SLTSTA_PDC;
	raise(s, PCI_EXP_SLTCTL_PDCE);
	return 0;
}

int czhp_attention(struct czhp_slot *s)
{
	if (!s->loaded)
		return -ENODEV;
	s->sltsta |= PCI_EXP_SLTSTA_ABP;
	raise(s, PCI_EXP_SLTCTL_ABPE);
	return 0;
}

int czhp_read(struct czhp_slot *s, uint32_t reg, uint32_t *val)
{
	switch (reg) {
	case PCI_EXP_SLTCAP:
		*val = s->sltcap;
		return 0;
	case PCI_EXP_SLTCTL:
		*val = s->sltctl;
		return 0;
	case PCI_EXP_SLTSTA:
		*val = s->sltsta;
		return 0;
	}
	return -EINVAL;
}

/* Slot power turned off with a function in it: the switch withdraws it. */
static void powered_off(struct czhp_slot *s)
{
	void (*off)(void *) = s->off;

	if (!s->loaded)
		return;
	s->loaded = false;
	s->off = NULL;
	s->sltsta = (uint16_t)((s->sltsta & ~PCI_EXP_SLTSTA_PDS) | PCI_EXP_SLTSTA_PDC);
	if (off)
		off(s->off_arg);
	raise(s, PCI_EXP_SLTCTL_PDCE);
}

int czhp_write(struct czhp_slot *s, uint32_t reg, uint32_t val)
{
	uint16_t was;

	switch (reg) {
	case PCI_EXP_SLTCTL:
		was = s->sltctl;
		s->sltctl = (uint16_t)val;
		if (!(was & PCI_EXP_SLTCTL_PCC) && (val & PCI_EXP_SLTCTL_PCC))
			powered_off(s);
		return 0;
	case PCI_EXP_SLTSTA:
		s->sltsta &= (uint16_t)~(val & SLTSTA_RW1C);   /* write 1 to clear */
		return 0;
	case PCI_EXP_SLTCAP:
		return 0;                                      /* read-only */
	}
	return -EINVAL;
}

/* ---------- the USER's hot-plug driver ---------- */

int czhp_driver_attach(struct czhp_slot *s, struct pci_host *ph)
{
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int v;

	if (efd < 0)
		return -errno;
	v = fab_intc_alloc(&s->user->intc, efd, &s->msi_addr, &s->msi_data);
	if (v < 0) {
		close(efd);
		return v;
	}
	s->efd = efd;
	s->vector = v;
	s->msi_on = true;
	s->ph = ph;
	czhp_write(s, PCI_EXP_SLTCTL, s->sltctl | PCI_EXP_SLTCTL_HPIE | PCI_EXP_SLTCTL_PDCE |
		   PCI_EXP_SLTCTL_ABPE);
	return 0;
}

void czhp_driver_detach(struct czhp_slot *s)
{
	czhp_write(s, PCI_EXP_SLTCTL, s->sltctl & ~(PCI_EXP_SLTCTL_HPIE | PCI_EXP_SLTCTL_PDCE |
						    PCI_EXP_SLTCTL_ABPE));
	s->msi_on = false;
	if (s->efd >= 0) {
		fab_intc_free(&s->user->intc, s->msi_data);
		close(s->efd);
	}
	s->efd = -1;
	s->vector = -1;
}

int czhp_driver_service(struct czhp_slot *s)
{
	uint32_t sta = 0, ctl = 0;
	uint64_t n;
	int rc = 0;

	if (s->efd >= 0 && read(s->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	czhp_read(s, PCI_EXP_SLTSTA, &sta);
	czhp_read(s, PCI_EXP_SLTCTL, &ctl);
	if (sta & PCI_EXP_SLTSTA_PDC) {
		czhp_write(s, PCI_EXP_SLTSTA, PCI_EXP_SLTSTA_PDC);
		if ((sta & PCI_EXP_SLTSTA_PDS) && !s->pdev) {
			/* Power on, then enumerate what is in the slot. */
			czhp_write(s, PCI_EXP_SLTCTL, ctl & ~PCI_EXP_SLTCTL_PCC);
			rc = czdev_create(s->ph, s->uid, &s->g, &s->t, &s->pdev);
			if (rc)
				return rc;
		}
	}
	if (sta & PCI_EXP_SLTSTA_ABP) {
		czhp_write(s, PCI_EXP_SLTSTA, PCI_EXP_SLTSTA_ABP);
		if (s->pdev) {
			/* As pciehp: the driver's remove quiesces the device, then it goes. */
			rc = czdev_destroy(s->ph, s->pdev, true);
			if (rc)
				return rc;
			s->pdev = NULL;
		}
		czhp_read(s, PCI_EXP_SLTCTL, &ctl);
		czhp_write(s, PCI_EXP_SLTCTL, ctl | PCI_EXP_SLTCTL_PCC);
		/* The presence change of the withdrawal: acknowledged here too. */
		czhp_write(s, PCI_EXP_SLTSTA, PCI_EXP_SLTSTA_PDC);
	}
	return 0;
}
