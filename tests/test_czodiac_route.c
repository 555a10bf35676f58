// SPDX-License-Identifier: MIT
/*
 * cZodiac mode on the fabric (docs/czodiac.md, issue 16 item 3): a USER's
 * CPU reaches the OWNER's device BAR through the IOPort's MMIO table, the
 * device's DMA and MSI reach the USER with its requester ID remapped, and
 * the topology key that selects the mode.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fabric/czodiac_route.h"
#include "fabric_util.h"
#include "host/czodiac_dev.h"
#include "host/czodiac_hp.h"
#include "host/devrun.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/pci.h"

static struct fab_route R;

static void resolve(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len, bool write)
{
	assert_int_equal(fab_route_resolve(h, rid, addr, len, write, &R), 0);
}

/* tests/topologies/czodiac.yaml, read whole. */
static char *sample_yaml(void)
{
	const char *src = getenv("SMARTIO_SOURCE_DIR");
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/tests/topologies/czodiac.yaml", src ? src : ".");
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void cz_up(struct tcluster *tc)
{
	char *y = sample_yaml();

	tc_up(tc, y);
	free(y);
}

#define UID FAB_BDF(0x40, 0, 0)   /* the shared function's RID in the USER's space */

struct share {
	struct cz_iop *t;
	uint16_t oid;
	uint64_t obar, ubar, size;
};

/* The OWNER shares nvme0 (BAR0) with USER 1 at the start of USER 1's window. */
static void share_nvme(struct tcluster *tc, struct share *s)
{
	struct fab_func *nvme = tc_fn(tc, 0, "nvme0");
	struct fab_func *un = tc_host(tc, 1)->ntbs[0]->fn;
	int rc = 0;

	s->oid = fab_func_bdf(nvme);
	s->obar = fab_func_bar_addr(nvme, 0);
	s->size = nvme->bars[0].size;
	s->ubar = fab_func_bar_addr(un, NTB_BAR_LUT) + 4 * s->size;
	assert_true(s->obar && s->ubar);
	s->t = fab_cz_ioport(&tc->c->w, 0, 0, s->oid, &rc);
	assert_non_null(s->t);
	assert_int_equal(cz_iop_bind(s->t, s->oid, UID, 1), 0);
	assert_int_equal(cz_iop_set_bar(s->t, s->oid, 0, s->obar, s->ubar, s->size), 0);
	fab_cz_changed(&tc->c->w);
}

static void test_topology_key(void **state)
{
	static const char *bad[][2] = {
		{ "cluster_switches: [{name: s, mode: lut}]\n", "mode must be ntb or czodiac" },
		{ "cluster_switches: [{name: s, mode: czodiac, multicast: {groups: 4}}]\n",
		  "no multicast" },
		{ "cluster_switches: [{name: s, mode: czodiac}, {name: t, cascade: [s]}]\n",
		  "cannot be cascaded" },
	};
	char err[512], y[512];
	struct topo *t;
	char *s = sample_yaml();

	(void)state;
	assert_int_equal(topo_load_string(s, strlen(s), "czodiac.yaml", &t, err, sizeof(err)), 0);
	assert_true(t->cswitches[0].czodiac);
	topo_free(t);
	free(s);
	assert_int_equal(topo_load_default(&t, err, sizeof(err)), 0);
	assert_false(t->cswitches[0].czodiac);
	topo_free(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(y, sizeof(y), "version: 1\n%shosts:\n  - {id: 0, name: a, ram: 64M, "
			 "ports: [{ntb: {name: n0, connect: s}}]}\n", bad[i][0]);
		err[0] = '\0';
		assert_int_equal(topo_load_string(y, strlen(y), "t.yaml", &t, err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i][1]))
			fail_msg("%zu: '%s' lacks '%s'", i, err, bad[i][1]);
	}
}

static void test_ioport_creation(void **state)
{
	struct tcluster tc;
	struct cz_iop *a, *b;
	int rc = 0;

	(void)state;
	cz_up(&tc);
	a = fab_cz_ioport(&tc.c->w, 0, 0, 0x100, &rc);
	assert_non_null(a);
	b = fab_cz_ioport(&tc.c->w, 0, 0, 0x100, &rc);
	assert_ptr_equal(a, b);
	assert_null(fab_cz_ioport(&tc.c->w, 1, 0, 0x100, &rc));
	assert_int_equal(rc, -EINVAL);
	assert_null(fab_cz_ioport(&tc.c->w, 0, 7, 0x100, &rc));
	assert_int_equal(rc, -EINVAL);
	tc_down(&tc);
}

static void test_user_mmio_reaches_owner_bar(void **state)
{
	struct tcluster tc;
	struct fab_host *user, *owner;
	struct share s;
	uint32_t cap_o = 0, cap_u;

	(void)state;
	cz_up(&tc);
	user = tc_host(&tc, 1);
	owner = tc_host(&tc, 0);
	/* Nothing shared yet: the USER's port has no look-up table to fall back on. */
	resolve(user, FAB_RID_CPU, fab_func_bar_addr(user->ntbs[0]->fn, NTB_BAR_LUT), 4, false);
	assert_int_equal(R.status, FAB_UR);
	assert_non_null(strstr(R.reason, "IOPort MMIO"));
	share_nvme(&tc, &s);
	resolve(user, FAB_RID_CPU, s.ubar + 0x1c, 4, false);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_BAR);
	assert_int_equal(R.tgt.host, 0);
	assert_int_equal(R.tgt.bdf, s.oid);
	assert_int_equal(R.tgt.bar, 0);
	assert_int_equal(R.tgt.offset, 0x1c);
	assert_int_equal(R.tgt.addr, s.obar + 0x1c);
	assert_int_equal(R.ntb_hops, 1);
	assert_true(route_has(&R, FAB_HOP_NTB, "IOPort"));
	assert_true(route_has(&R, FAB_HOP_CSWITCH, "cz0"));
	/* Contiguous to the end of the BAR, not beyond. */
	resolve(user, FAB_RID_CPU, s.ubar + s.size - 8, 64, false);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.len, 8);
	/* The data: the USER writes the admin queue base (ASQ, 0x28), the OWNER reads it. */
	cap_u = 0x12345000;
	fab_host_lock(user);
	assert_int_equal(fab_access(user, FAB_RID_CPU, s.ubar + 0x28, &cap_u, 4, true), 0);
	fab_host_unlock(user);
	fab_host_lock(owner);
	assert_int_equal(fab_access(owner, FAB_RID_CPU, s.obar + 0x28, &cap_o, 4, false), 0);
	fab_host_unlock(owner);
	assert_int_equal(cap_o, 0x12345000);
	/* Past the UBAR, and for the other USER: no entry. */
	resolve(user, FAB_RID_CPU, s.ubar + s.size, 4, false);
	assert_int_equal(R.status, FAB_UR);
	resolve(tc_host(&tc, 2), FAB_RID_CPU,
		fab_func_bar_addr(tc_host(&tc, 2)->ntbs[0]->fn, NTB_BAR_LUT) + 4 * s.size, 4, false);
	assert_int_equal(R.status, FAB_UR);
	/* Unbound: gone, even for a cached translation. */
	assert_int_equal(cz_iop_unbind(s.t, s.oid), 0);
	fab_cz_changed(&tc.c->w);
	resolve(user, FAB_RID_CPU, s.ubar + 0x1c, 4, false);
	assert_int_equal(R.status, FAB_UR);
	tc_down(&tc);
}

static void test_device_dma_reaches_user(void **state)
{
	struct tcluster tc;
	struct fab_host *user, *owner;
	struct share s;
	int dom;

	(void)state;
	cz_up(&tc);
	user = tc_host(&tc, 1);
	owner = tc_host(&tc, 0);
	share_nvme(&tc, &s);
	/* USER 1 has its IOMMU on: the requester it sees is the UID, not the OID. */
	resolve(owner, s.oid, 0x200000, 512, true);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	assert_non_null(strstr(R.reason, "40:00.0"));
	assert_true(route_has(&R, FAB_HOP_NTB, "IOPort RID"));
	dom = iommu_domain_alloc(user->iommu);
	assert_true(dom >= 0);
	assert_int_equal(iommu_attach(user->iommu, UID, (uint32_t)dom), 0);
	assert_int_equal(iommu_map(user->iommu, (uint32_t)dom, 0x200000, 0x300000, 1 << 16,
				   IOMMU_READ | IOMMU_WRITE), 0);
	resolve(owner, s.oid, 0x200000 + 0x40, 512, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_RAM);
	assert_int_equal(R.tgt.host, 1);
	assert_int_equal(R.tgt.addr, 0x300040);
	/* The address is not translated: the USER's own, from its descriptors. */
	resolve(owner, s.oid, 0x200000 + 0x10000, 4, false);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	/* MSI: to the USER's interrupt window, past its IOMMU. */
	resolve(owner, s.oid, FAB_MSI_BASE + 0x40, 4, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_MSI);
	assert_int_equal(R.tgt.host, 1);
	/* Unshared: the function's DMA stays at its OWNER again. */
	assert_int_equal(cz_iop_unbind(s.t, s.oid), 0);
	fab_cz_changed(&tc.c->w);
	resolve(owner, s.oid, 0x200000, 512, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.host, 0);
	tc_down(&tc);
}

/*
 * The OWNER shares nvme0 with USER 1; USER 1's PCI core hot-adds the logic
 * full-function device, its unmodified NVMe driver binds it and does I/O;
 * withdrawn while idle, the function disappears from USER 1.
 */
static void test_logic_device_nvme_io(void **state)
{
	static uint8_t wbuf[4096], rbuf[4096];
	struct devrun_set *devs[3];
	struct tcluster tc;
	struct fab_host *owner, *user;
	struct czdev_local *l;
	struct pci_host *ph;
	struct pci_dev *p;
	struct nvme_drv_cpl cpl;
	uint32_t v = 0, real = 0;
	uint16_t uid;
	char err[256];

	(void)state;
	cz_up(&tc);
	owner = tc_host(&tc, 0);
	user = tc_host(&tc, 1);
	/*
	 * The real function's IDs, read before the USER's lock is taken: a device
	 * thread of the OWNER delivering an MSI to the USER holds the OWNER's lock
	 * and then takes the USER's, so taking them the other way round deadlocks.
	 */
	fab_host_lock(owner);
	assert_int_equal(fab_cfg_access_read(owner, fab_func_bdf(tc_fn(&tc, 0, "nvme0")),
					     PCI_VENDOR_ID, 4, &real), 0);
	fab_host_unlock(owner);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(devrun_start(tc_host(&tc, i), NULL, &devs[i], err, sizeof(err)), 0);
	fab_host_lock(user);
	assert_int_equal(pci_host_create(user, &ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(ph, &nvme_pci_driver), 0);
	assert_int_equal(czdev_local_share(owner, 0, fab_func_bdf(tc_fn(&tc, 0, "nvme0")), ph,
					   &l, &p), 0);
	assert_true(czdev_is(p));
	uid = p->bdf;
	assert_int_equal(FAB_BDF_BUS(uid), 0xe0);
	/* Fig. 7: IDs as the real function's, a single function 0, UBARs, no ROM, no pin. */
	assert_int_equal(pci_read_config(p, PCI_VENDOR_ID, 4, &v), 0);
	assert_int_equal(v, real);
	assert_int_equal(pci_read_config(p, PCI_HEADER_TYPE, 1, &v), 0);
	assert_int_equal(v & 0x80, 0);
	assert_int_equal(pci_read_config(p, PCI_ROM_ADDRESS, 4, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(pci_read_config(p, PCI_INTERRUPT_PIN, 1, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(pci_read_config(p, PCI_BASE_ADDRESS_0, 4, &v), 0);
	assert_int_equal(v & ~0xfu, (uint32_t)p->bar_addr[0]);
	assert_true(p->bar_addr[0] >= fab_func_bar_addr(user->ntbs[0]->fn, NTB_BAR_LUT));
	/* Sizing works on the emulated register and leaves the OWNER's BAR alone. */
	assert_int_equal(pci_write_config(p, PCI_BASE_ADDRESS_0, 4, 0xffffffffu), 0);
	assert_int_equal(pci_read_config(p, PCI_BASE_ADDRESS_0, 4, &v), 0);
	assert_int_equal(v & ~0xfu, (uint32_t)~(p->bar_size[0] - 1));
	assert_int_equal(pci_write_config(p, PCI_BASE_ADDRESS_0, 4, (uint32_t)p->bar_addr[0]), 0);
	/* The unmodified driver bound it, and its I/O goes both ways. */
	assert_true(nvme_drv_bound(p));
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(nvme_drv_io(p, 1, NVME_DRV_WRITE, 5, 8, wbuf, &cpl), 0);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(nvme_drv_io(p, 1, NVME_DRV_READ, 5, 8, rbuf, &cpl), 0);
	assert_int_equal(cpl.status, 0);
	assert_memory_equal(wbuf, rbuf, sizeof(wbuf));
	assert_true(pci_irq_count(p, 0) > 0);
	/* The USER's IOMMU saw the UID: a domain is attached to it. */
	assert_true(p->domain != 0);
	/* Withdrawn while idle (a bound driver: refused unless forced). */
	assert_int_equal(czdev_local_unshare(l, false), -EBUSY);
	assert_int_equal(czdev_local_unshare(l, true), 0);
	assert_null(pci_get_dev(ph, uid));
	resolve(user, FAB_RID_CPU, fab_func_bar_addr(user->ntbs[0]->fn, NTB_BAR_LUT), 4, false);
	assert_int_equal(R.status, FAB_UR);
	pci_host_destroy(ph);
	fab_host_unlock(user);
	for (uint32_t i = 0; i < 3; i++)
		devrun_stop(devs[i]);
	tc_down(&tc);
}

static bool slot_fired(struct czhp_slot *s)
{
	uint64_t n = 0;

	return read(s->efd, &n, sizeof(n)) == sizeof(n) && n > 0;
}

/* Virtual hot-plug: presence and attention as MSIs; the USER adds and removes. */
static void test_virtual_hotplug(void **state)
{
	static uint8_t buf[4096];
	struct devrun_set *devs[3];
	struct tcluster tc;
	struct fab_host *owner, *user;
	struct czhp_slot slot;
	struct pci_host *ph;
	struct nvme_drv_cpl cpl;
	uint16_t bdf, uid;
	uint32_t v = 0;
	char err[256];

	(void)state;
	cz_up(&tc);
	owner = tc_host(&tc, 0);
	user = tc_host(&tc, 1);
	bdf = fab_func_bdf(tc_fn(&tc, 0, "nvme0"));
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(devrun_start(tc_host(&tc, i), NULL, &devs[i], err, sizeof(err)), 0);
	fab_host_lock(user);
	assert_int_equal(pci_host_create(user, &ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(ph, &nvme_pci_driver), 0);
	czhp_slot_init(&slot, user, 1);
	assert_int_equal(czhp_read(&slot, PCI_EXP_SLTCAP, &v), 0);
	assert_true((v & PCI_EXP_SLTCAP_HPC) && (v & PCI_EXP_SLTCAP_ABP));
	assert_int_equal(czhp_driver_attach(&slot, ph), 0);
	for (int round = 0; round < 2; round++) {
		/* Inserted: presence detected, one MSI; the USER adds the logic device. */
		assert_int_equal(czdev_local_offer(owner, 0, bdf, ph, &slot), 0);
		assert_true(slot_fired(&slot));
		assert_int_equal(czhp_read(&slot, PCI_EXP_SLTSTA, &v), 0);
		assert_true((v & PCI_EXP_SLTSTA_PDS) && (v & PCI_EXP_SLTSTA_PDC));
		assert_int_equal(czhp_driver_service(&slot), 0);
		assert_non_null(slot.pdev);
		uid = slot.pdev->bdf;
		assert_true(nvme_drv_bound(slot.pdev));
		assert_int_equal(nvme_drv_io(slot.pdev, 1, NVME_DRV_READ, 0, 1, buf, &cpl), 0);
		assert_int_equal(cpl.status, 0);
		assert_int_equal(czhp_read(&slot, PCI_EXP_SLTSTA, &v), 0);
		assert_int_equal(v & PCI_EXP_SLTSTA_PDC, 0);
		/* The attention button, while idle: removed, powered off, withdrawn. */
		assert_int_equal(czhp_attention(&slot), 0);
		assert_true(slot_fired(&slot));
		assert_int_equal(czhp_driver_service(&slot), 0);
		assert_null(slot.pdev);
		assert_null(pci_get_dev(ph, uid));
		assert_int_equal(czhp_read(&slot, PCI_EXP_SLTSTA, &v), 0);
		assert_int_equal(v & (PCI_EXP_SLTSTA_PDS | PCI_EXP_SLTSTA_ABP), 0);
		assert_int_equal(czhp_read(&slot, PCI_EXP_SLTCTL, &v), 0);
		assert_true(v & PCI_EXP_SLTCTL_PCC);
		/* The IOPort forgot the function: the USER's window is empty again. */
		resolve(user, FAB_RID_CPU, fab_func_bar_addr(user->ntbs[0]->fn, NTB_BAR_LUT), 4,
			false);
		assert_int_equal(R.status, FAB_UR);
		resolve(owner, bdf, 0x100000, 64, true);
		assert_int_equal(R.tgt.host, 0);
	}
	/* An empty slot has nothing to withdraw; MSIs raised: 3 per round. */
	assert_int_equal(czhp_attention(&slot), -ENODEV);
	assert_int_equal(slot.msis, 6);
	czhp_driver_detach(&slot);
	pci_host_destroy(ph);
	fab_host_unlock(user);
	for (uint32_t i = 0; i < 3; i++)
		devrun_stop(devs[i]);
	tc_down(&tc);
}

/* A writer that moves BAR0's entry back and forth, each move one write section. */
struct mover {
	struct fab_world *w;
	struct share *s;
	uint64_t o2;
	unsigned rounds;
};

static void *mover_run(void *arg)
{
	struct mover *m = arg;

	for (unsigned i = 0; i < m->rounds; i++) {
		bool y = i & 1;

		fab_cz_write_begin(m->w->cz);
		cz_iop_set_bar(m->s->t, m->s->oid, 0, y ? m->o2 : m->s->obar,
			       y ? m->s->ubar + m->s->size : m->s->ubar, m->s->size);
		fab_cz_write_end(m->w->cz);
	}
	return NULL;
}

/*
 * Reads under the sequence lock see the entry before or after a move, never
 * half of each (the UBAR of one with the OBAR of the other); a writer that
 * died inside its section is counted past instead of waited for.
 */
static void test_tables_read_whole(void **state)
{
	struct tcluster tc;
	struct share s;
	struct mover m;
	pthread_t th;
	uint64_t v;
	pid_t pid;
	int status;
	unsigned seen = 0;

	(void)state;
	cz_up(&tc);
	share_nvme(&tc, &s);
	m = (struct mover){ .w = &tc.c->w, .s = &s, .o2 = s.obar + 4 * s.size, .rounds = 20000 };
	assert_int_equal(pthread_create(&th, NULL, mover_run, &m), 0);
	while ((uint32_t)__atomic_load_n(&tc.c->w.cz->seq, __ATOMIC_RELAXED) < 2u * m.rounds) {
		uint64_t oaddr = 0, left = 0;
		uint32_t owner = 0;
		uint16_t oid = 0;

		/* At the UBAR of the first place: its OBAR, or (moved) nothing. */
		if (!fab_cz_user_mmio(&tc.c->w, 0, 1, s.ubar, &owner, &oid, &oaddr, &left)) {
			assert_int_equal(oaddr, s.obar);
			assert_int_equal(left, s.size);
			seen++;
		}
	}
	pthread_join(th, NULL);
	/*
	 * The last move (an odd round) left BAR0 at its second place: read there
	 * once more, whole. (On a loaded machine the mover may have finished all
	 * its rounds before the loop above read even once, so seen may be 0.)
	 */
	{
		uint64_t oaddr = 0, left = 0;
		uint32_t owner = 0;
		uint16_t oid = 0;

		assert_int_equal(fab_cz_user_mmio(&tc.c->w, 0, 1, s.ubar + s.size, &owner, &oid,
						  &oaddr, &left), 0);
		assert_int_equal(oaddr, m.o2);
		assert_int_equal(left, s.size);
		print_message("reads of the first place during the moves: %u\n", seen);
	}
	/* A writer gone in the middle of a change. */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	v = tc.c->w.cz->seq;
	tc.c->w.cz->seq = (uint64_t)pid << 32 | (v + 1);
	assert_int_equal(fab_cz_read_begin(tc.c->w.cz), v + 2);
	fab_cz_write_begin(tc.c->w.cz);
	assert_int_equal(tc.c->w.cz->seq >> 32, getpid());
	fab_cz_write_end(tc.c->w.cz);
	assert_int_equal(tc.c->w.cz->seq, v + 4);
	/* An odd count and no writer recorded (a file of old): counted past too. */
	tc.c->w.cz->seq = v + 5;
	assert_int_equal(fab_cz_read_begin(tc.c->w.cz), v + 6);
	tc_down(&tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topology_key),
		cmocka_unit_test(test_ioport_creation),
		cmocka_unit_test(test_user_mmio_reaches_owner_bar),
		cmocka_unit_test(test_device_dma_reaches_user),
		cmocka_unit_test(test_logic_device_nvme_io),
		cmocka_unit_test(test_virtual_hotplug),
		cmocka_unit_test(test_tables_read_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
