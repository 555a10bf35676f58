// SPDX-License-Identifier: MIT
/*
 * SRIOV: enable or disable a PF's virtual functions live, as `echo N >
 * sriov_numvfs` on Linux (the PCI core's pci_sriov_configure, src/host/iov.c).
 * Enabled VFs are functions of this host's PCI core, lendable as their PF is,
 * so they join the device pool (their FDIDs) at once and leave it when
 * disabled. Refused while any VF, or the PF, is borrowed (-EBUSY): a lent
 * function must be returned first, and the PF stays with its owner. Runs on
 * a worker: the PCI core waits for the VFs' resets (at most 100 ms) with the
 * host lock let go.
 */
#include <errno.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "daemon.h"
#include "dev_priv.h"
#include "handlers.h"
#include "host/pci.h"
#include "util/log.h"

static bool borrowed(struct smd *d, uint16_t bdf)
{
	struct smd_devs *s = d->devs_pool;

	for (unsigned i = 0; s && i < s->nlends; i++)
		if (s->lends[i].bdf == bdf)
			return true;
	return false;
}

static void state_of(struct pci_dev *pf, const struct fab_func *fn, struct smio_sriov_state *o)
{
	memset(o, 0, sizeof(*o));
	o->bdf = pf->bdf;
	o->total_vfs = (uint16_t)pci_sriov_get_totalvfs(pf);
	o->num_vfs = pf->num_vfs;
	o->vf_offset = fab_cfg_get16(&fn->cfg, fn->sriov_cap + PCI_SRIOV_VF_OFFSET);
	o->vf_stride = fab_cfg_get16(&fn->cfg, fn->sriov_cap + PCI_SRIOV_VF_STRIDE);
	o->vf_device = fab_cfg_get16(&fn->cfg, fn->sriov_cap + PCI_SRIOV_VF_DID);
	o->vendor = pf->vendor;
}

int h_sriov(struct smd_req *r)
{
	const struct smio_sriov_req *m = r->p;
	struct smio_sriov_state *o = r->out;
	struct smd *d = r->d;
	struct pci_dev *pf = pci_get_dev(d->pci, m->bdf);
	struct fab_func *fn = pf ? pf->hw : NULL;
	int rc = 0;

	if (!pf || !fn || pf->ops)
		return -ENODEV;
	if (!fn->sriov_cap || pf->physfn)
		return -EOPNOTSUPP;   /* not an SR-IOV physical function */
	if (m->set && m->numvfs > fn->total_vfs)
		return -ERANGE;
	if (m->set && m->numvfs != pf->num_vfs) {
		if (borrowed(d, pf->bdf))
			return -EBUSY;
		for (unsigned n = 1; n <= pf->num_vfs; n++) {
			struct pci_dev *vf = pci_sriov_vf(pf, n);

			if (vf && borrowed(d, vf->bdf))
				return -EBUSY;
		}
		/* A new non-zero count goes through 0, as sysfs demands. */
		if (pf->num_vfs)
			rc = pci_sriov_configure(pf, 0);
		if (!rc && m->numvfs)
			rc = pci_sriov_configure(pf, m->numvfs);
		if (rc)
			return rc;
		smio_info("%s (%02x:%02x.%x): %u VFs enabled", fn->name, FAB_BDF_BUS(pf->bdf),
			  FAB_BDF_DEV(pf->bdf), FAB_BDF_FN(pf->bdf), m->numvfs);
	}
	state_of(pf, fn, o);
	r->outlen = sizeof(*o);
	return 0;
}
