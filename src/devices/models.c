// SPDX-License-Identifier: MIT
/* Bus identity of the device models, parameterised from the topology. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/pcidev.h"
#include "fabric/sriov.h"
#include "ids.h"
#include "models.h"

struct model_bar {
	uint8_t index;
	bool is64, prefetch;
	uint64_t size;
};

struct model_desc {
	const char *name;
	uint16_t vendor, device;
	uint16_t vf_device;      /* VF Device ID (SR-IOV); 0: the model has no VFs */
	uint32_t class24;
	uint8_t rev;
	/* default BARs; size 0 ends the list */
	struct model_bar bars[3];
	unsigned msix_bir;
	uint32_t msix_table, msix_pba;
	int (*params)(const struct topo_device *td, struct model_bar *bars, unsigned *vectors,
		      char *err, size_t errlen);
};

static const char *param(const struct topo_device *td, const char *key)
{
	for (uint32_t i = 0; i < td->nparams; i++)
		if (!strcmp(td->params[i].key, key))
			return td->params[i].value;
	return NULL;
}

static int param_u64(const struct topo_device *td, const char *key, uint64_t def,
		     uint64_t *out, char *err, size_t errlen)
{
	const char *v = param(td, key);

	*out = def;
	if (!v)
		return 0;
	if (topo_parse_size(v, out) < 0) {
		snprintf(err, errlen, "device %s: parameter %s: '%s' is not a number or size",
			 td->name, key, v);
		return -EINVAL;
	}
	return 0;
}

/* NVMe: doorbells for `queues` I/O queue pairs + admin in BAR0; MSI-X table in BAR4. */
static int nvme_params(const struct topo_device *td, struct model_bar *bars,
		       unsigned *vectors, char *err, size_t errlen)
{
	uint64_t q;
	int rc = param_u64(td, "queues", 32, &q, err, errlen);

	if (rc)
		return rc;
	if (q < 1 || q > 1024) {
		snprintf(err, errlen, "device %s: queues must be 1..1024, not %llu", td->name,
			 (unsigned long long)q);
		return -EINVAL;
	}
	*vectors = (unsigned)q + 1;
	/* Optional Controller Memory Buffer: BAR2, 64-bit prefetchable
	 * (dev_endpoint_init counts the BARs params() adds). */
	rc = param_u64(td, "cmb", 0, &q, err, errlen);
	if (rc)
		return rc;
	if (q && (q < 4096 || (q & (q - 1)) || q > (1ull << 40))) {
		snprintf(err, errlen, "device %s: cmb must be a power of two from 4K to 1T",
			 td->name);
		return -EINVAL;
	}
	if (q)
		bars[2] = (struct model_bar){ 2, true, true, q };
	return 0;
}

/* Accelerator: BAR2 device memory, size from "memory" (power of two, >= 1 MiB). */
static int accel_params(const struct topo_device *td, struct model_bar *bars,
			unsigned *vectors, char *err, size_t errlen)
{
	uint64_t m;
	int rc = param_u64(td, "memory", 256ull << 20, &m, err, errlen);

	if (rc)
		return rc;
	if (m < (1ull << 20) || (m & (m - 1)) || m > (64ull << 30)) {
		snprintf(err, errlen, "device %s: memory must be a power of two from 1M to 64G",
			 td->name);
		return -EINVAL;
	}
	bars[1].size = m;
	return 0;
}

static const struct model_desc models[] = {
	{ .name = "test", .vendor = 0x1b36, .device = 0x0005, .vf_device = SMARTIO_PCI_DEV_TEST_VF, .class24 = 0x00ff00, .rev = 0,
	  .bars = { { 0, false, false, 4096 }, { 2, true, true, 1ull << 20 } },
	  .msix_bir = 0, .msix_table = 0x800, .msix_pba = 0xc00 },
	/* NVMe controller: 64-bit BAR0 registers+doorbells, MSI-X in BAR4. */
	{ .name = "nvme", .vendor = SMARTIO_PCI_VENDOR, .device = SMARTIO_PCI_DEV_NVME,
	  .vf_device = SMARTIO_PCI_DEV_NVME_VF,
	  .class24 = SMARTIO_PCI_CLASS_NVME, .rev = 0,
	  .bars = { { 0, true, false, 16384 }, { 4, false, false, 65536 } },
	  .msix_bir = 4, .msix_table = 0x0, .msix_pba = 0x8000, .params = nvme_params },
	/* Accelerator (DMA engine and programs): BAR0 registers, BAR2 memory. */
	{ .name = "accel", .vendor = SMARTIO_PCI_VENDOR, .device = SMARTIO_PCI_DEV_ACCEL,
	  .class24 = SMARTIO_PCI_CLASS_ACCEL, .rev = 0,
	  .bars = { { 0, false, false, 65536 }, { 2, true, true, 256ull << 20 } },
	  .msix_bir = 0, .msix_table = 0x8000, .msix_pba = 0x9000, .params = accel_params },
};

static const struct model_desc *find_model(const char *name)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (!strcmp(models[i].name, name))
			return &models[i];
	return NULL;
}

int dev_model_known(const char *model)
{
	return find_model(model) != NULL;
}

/*
 * SR-IOV: the VFs get the model's default BARs as VF BARs (no CMB), a PCI
 * Express capability with FLR, and an MSI-X table like the PF's.
 */
static int init_vfs(struct fab_func *pf, const struct model_desc *m,
		    const struct topo_device *td, unsigned vectors, char *err, size_t errlen)
{
	struct fab_vf_bar vb[6] = { { 0 } };
	int rc;

	if (!m->vf_device) {
		snprintf(err, errlen, "device %s: model '%s' has no virtual functions", td->name,
			 m->name);
		return -EINVAL;
	}
	for (unsigned i = 0; i < 3 && m->bars[i].size; i++)
		vb[m->bars[i].index] = (struct fab_vf_bar){ m->bars[i].size, m->bars[i].is64,
							    m->bars[i].prefetch };
	rc = fab_sriov_init(pf, td->sriov_vfs, pf->sriov_first_off,
			    td->vf_device_id ? td->vf_device_id : m->vf_device, vb);
	for (unsigned n = 1; !rc && n <= pf->total_vfs; n++) {
		struct fab_func *vf = fab_sriov_vf(pf, n);

		fab_cap_pcie(vf, 0, vf->link, 0);
		fab_func_set_flr_capable(vf);   /* VFs must implement FLR */
		if (!fab_cap_msix(vf, vectors, m->msix_bir, m->msix_table, m->msix_pba))
			rc = -ENOSPC;
		else
			rc = fab_msix_reset_table(vf);
	}
	if (rc == -ENOSPC)
		snprintf(err, errlen, "device %s: %u VFs do not fit: a host holds at most %d "
			 "functions and %d BAR memory objects (each VF has its own BARs); give "
			 "it fewer 'vfs'", td->name, td->sriov_vfs, FAB_MAX_FUNCS, FAB_MAX_MEMS);
	else if (rc)
		snprintf(err, errlen, "device %s: SR-IOV setup failed: %s", td->name,
			 strerror(-rc));
	return rc;
}

int dev_endpoint_init(struct fab_func *fn, const struct topo_device *td, char *err,
		      size_t errlen)
{
	const struct model_desc *m = find_model(td->model);
	struct model_bar bars[TOPO_MAX_BARS] = { 0 };
	unsigned nbars = 0, vectors = 4, msix_bir;
	uint32_t table, pba;
	int rc;

	if (!m) {
		snprintf(err, errlen, "device %s: unknown model '%s' (known: test, nvme, accel)",
			 td->name, td->model);
		return -EINVAL;
	}
	for (; nbars < 3 && m->bars[nbars].size; nbars++)
		bars[nbars] = m->bars[nbars];
	msix_bir = m->msix_bir;
	table = m->msix_table;
	pba = m->msix_pba;
	if (m->params) {
		rc = m->params(td, bars, &vectors, err, errlen);
		if (rc)
			return rc;
		/* Parameters may add BARs (e.g. an NVMe controller memory buffer). */
		while (nbars < TOPO_MAX_BARS && bars[nbars].size)
			nbars++;
	}
	if (td->nbars) {
		/* Explicit BARs replace the model's; MSI-X goes in the first BAR
		 * large enough to hold a table and PBA in its upper half. */
		nbars = 0;
		msix_bir = 6;
		for (uint32_t i = 0; i < td->nbars && i < TOPO_MAX_BARS; i++) {
			bars[nbars++] = (struct model_bar){ td->bars[i].index, td->bars[i].is64,
							    td->bars[i].prefetch, td->bars[i].size };
			if (msix_bir == 6 && td->bars[i].size >= 8192) {
				msix_bir = td->bars[i].index;
				table = (uint32_t)(td->bars[i].size / 2);
				pba = (uint32_t)(td->bars[i].size / 2 + td->bars[i].size / 4);
				vectors = 4;
			}
		}
	}
	fab_func_type0(fn, td->vendor_id ? td->vendor_id : m->vendor,
		       td->device_id ? td->device_id : m->device, m->class24, m->rev,
		       td->vendor_id ? td->vendor_id : m->vendor,
		       td->device_id ? td->device_id : m->device);
	for (unsigned i = 0; i < nbars; i++) {
		rc = fab_func_add_bar(fn, bars[i].index, bars[i].size, bars[i].is64,
				      bars[i].prefetch, true);
		if (rc) {
			snprintf(err, errlen, "device %s: BAR%u (%llu bytes): %s", td->name,
				 bars[i].index, (unsigned long long)bars[i].size,
				 rc == -EEXIST ? "overlaps another BAR" : strerror(-rc));
			return rc;
		}
	}
	fab_cap_pm(fn);
	fab_cap_msi(fn, 0);
	fab_cap_pcie(fn, 0, fn->link, 0);
	fab_func_set_flr_capable(fn);    /* every model has a reset hook (dev.h) */
	if (msix_bir < 6) {
		fab_cap_msix(fn, vectors, msix_bir, table, pba);
		rc = fab_msix_reset_table(fn);
		if (rc) {
			snprintf(err, errlen, "device %s: MSI-X table does not fit its BAR", td->name);
			return rc;
		}
	}
	if (td->sriov_vfs)
		return init_vfs(fn, m, td, m->params ? vectors : 4, err, errlen);
	return 0;
}
