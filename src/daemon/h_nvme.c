// SPDX-License-Identifier: MIT
/*
 * SMIO_NVME_ADMIN and SMIO_NVME_IO: a host's applications reach its NVMe
 * controllers through the in-kernel driver, as they would through
 * /dev/nvmeN's ioctls. The payload has been validated by the codec; these
 * handlers check what only the host knows (the device, its driver, the
 * namespace's block size) and refuse admin commands that would take the
 * controller away from the driver.
 *
 * Called with the host lock held; the driver drops it while it waits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "util/log.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"

#define NVME_H_MAX_TIMEOUT_MS  30000u   /* the daemon serves nobody else meanwhile */

/* The pci_dev at bdf with the NVMe driver bound, or -ENODEV (logged). */
static int nvme_dev_get(struct smd *d, uint16_t bdf, struct pci_dev **out)
{
	struct pci_dev *pdev = d->pci ? pci_get_dev(d->pci, bdf) : NULL;

	if (!pdev) {
		smio_warn("nvme: no function %02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f,
				bdf & 7);
		return -ENODEV;
	}
	if (!nvme_drv_bound(pdev)) {
		smio_warn("nvme: %s (%02x:%02x.%x): no NVMe driver bound (the device may be "
			"registered for lending)", pdev->name, bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
		return -ENODEV;
	}
	*out = pdev;
	return 0;
}

/*
 * Admin opcodes only the driver may issue: queue management (it owns the
 * queues), asynchronous events (they complete whenever an event happens,
 * not in answer to the request), and commands that change what the
 * controller is (format, sanitize, firmware, security, namespace
 * management/attachment, doorbell buffer).
 */
static bool admin_refused(const struct nvme_sqe *s)
{
	switch (s->opcode) {
	case nvme_admin_delete_sq:
	case nvme_admin_create_sq:
	case nvme_admin_delete_cq:
	case nvme_admin_create_cq:
	case nvme_admin_async_event:
	case nvme_admin_ns_mgmt:
	case nvme_admin_fw_commit:
	case nvme_admin_fw_download:
	case nvme_admin_ns_attach:
	case nvme_admin_dbbuf:
	case nvme_admin_format_nvm:
	case nvme_admin_security_send:
	case nvme_admin_security_recv:
	case nvme_admin_sanitize_nvm:
		return true;
	default:
		/* SGLs would name memory the driver did not map. */
		return NVME_SQE_PSDT(s->flags) != 0;
	}
}

int smd_h_nvme_admin(struct smd *d, const void *payload, uint32_t len, void *out,
		     uint32_t *outlen)
{
	const struct smio_nvme_admin *m = payload;
	struct smio_nvme_cpl *r = out;
	enum nvme_drv_dir dir;
	struct nvme_drv_cpl cpl;
	struct pci_dev *pdev;
	struct nvme_sqe s;
	uint32_t tmo;
	int rc;

	(void)len;   /* the codec checked it against data_len and dir */
	rc = nvme_dev_get(d, m->bdf, &pdev);
	if (rc)
		return rc;
	memcpy(&s, m->sqe, sizeof(s));
	if (admin_refused(&s))
		return -EPERM;
	/* The driver supplies the data pointers; no metadata pointer either. */
	s.mptr = 0;
	s.prp1 = 0;
	s.prp2 = 0;
	dir = m->dir == SMIO_DIR_TO_DEV ? NVME_DRV_TO_DEV :
	      m->dir == SMIO_DIR_FROM_DEV ? NVME_DRV_FROM_DEV : NVME_DRV_NONE;
	tmo = m->timeout_ms < NVME_H_MAX_TIMEOUT_MS ? m->timeout_ms : NVME_H_MAX_TIMEOUT_MS;
	memset(r, 0, sizeof(*r));
	/* Data in: the request's bytes; data out: straight into the reply. */
	if (dir == NVME_DRV_TO_DEV)
		rc = nvme_drv_admin(pdev, &s, (void *)m->data, m->data_len, dir, tmo, &cpl);
	else
		rc = nvme_drv_admin(pdev, &s, r->data, m->data_len, dir, tmo, &cpl);
	if (rc)
		return rc;
	r->result = cpl.result;
	r->status = cpl.status & 0x7fff;
	r->data_len = dir == NVME_DRV_FROM_DEV ? m->data_len : 0;
	*outlen = (uint32_t)sizeof(*r) + r->data_len;
	return 0;
}

int smd_h_nvme_io(struct smd *d, const void *payload, uint32_t len, void *out, uint32_t *outlen)
{
	static const enum nvme_drv_op ops[] = {
		[SMIO_NVME_READ] = NVME_DRV_READ,
		[SMIO_NVME_WRITE] = NVME_DRV_WRITE,
		[SMIO_NVME_FLUSH] = NVME_DRV_FLUSH,
		[SMIO_NVME_WRITE_ZEROES] = NVME_DRV_WRITE_ZEROES,
		[SMIO_NVME_DEALLOCATE] = NVME_DRV_DEALLOCATE,
	};
	const struct smio_nvme_io *m = payload;
	struct smio_nvme_cpl *r = out;
	struct nvme_drv_ns ns;
	struct nvme_drv_cpl cpl;
	struct pci_dev *pdev;
	uint64_t bytes = 0;
	void *buf = NULL;
	int rc;

	(void)len;
	rc = nvme_dev_get(d, m->bdf, &pdev);
	if (rc)
		return rc;
	rc = nvme_drv_ns_info(pdev, m->nsid, &ns);
	if (rc)
		return rc == -ENOENT ? -ENXIO : rc;
	if (m->op == SMIO_NVME_READ || m->op == SMIO_NVME_WRITE) {
		bytes = (uint64_t)m->nlb << ns.lba_shift;
		if (bytes > SMIO_NVME_MAX_DATA)
			return -E2BIG;
		if (m->op == SMIO_NVME_WRITE && bytes != m->data_len)
			return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	if (m->op == SMIO_NVME_WRITE)
		buf = (void *)m->data;
	else if (m->op == SMIO_NVME_READ)
		buf = r->data;
	rc = nvme_drv_io(pdev, m->nsid, ops[m->op], m->slba, m->nlb, buf, &cpl);
	if (rc)
		return rc;
	r->result = cpl.result;
	r->status = cpl.status & 0x7fff;
	r->data_len = m->op == SMIO_NVME_READ && !cpl.status ? (uint32_t)bytes : 0;
	*outlen = (uint32_t)sizeof(*r) + r->data_len;
	return 0;
}
