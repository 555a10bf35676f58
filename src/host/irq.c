// SPDX-License-Identifier: MIT
/*
 * MSI-X vectors. Each vector is an interrupt-controller vector of this host
 * signalling its own eventfd; the function's MSI-X table (found through the
 * capability in config space, reached through the BAR mapping like any other
 * register) is told the message address and data. The function then
 * interrupts by a plain memory write of that data to that address, which the
 * fabric routes to the host's MSI window.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <linux/pci_regs.h>

#include "pci_priv.h"

struct msix {
	uint16_t cap;            /* config offset of the capability */
	uint16_t ctrl;           /* Message Control as found */
	unsigned nent;           /* table entries */
	uint8_t *table;          /* CPU mapping of the table */
};

/* Walk the capability list through config cycles (bounded: 48 entries fit). */
static uint16_t find_cap(struct pci_dev *pdev, uint8_t id)
{
	uint32_t v, pos;

	if (pci_read_config(pdev, PCI_STATUS, 2, &v) || !(v & PCI_STATUS_CAP_LIST))
		return 0;
	if (pci_read_config(pdev, PCI_CAPABILITY_LIST, 1, &pos))
		return 0;
	for (unsigned i = 0; i < 48 && pos >= 0x40; i++) {
		pos &= 0xfc;
		if (pci_read_config(pdev, pos + PCI_CAP_LIST_ID, 1, &v))
			return 0;
		if (v == id)
			return (uint16_t)pos;
		if (pci_read_config(pdev, pos + PCI_CAP_LIST_NEXT, 1, &pos))
			return 0;
	}
	return 0;
}

static int msix_locate(struct pci_dev *pdev, struct msix *m)
{
	uint32_t ctrl, tbl;
	unsigned bir;
	uint8_t *bar;

	m->cap = find_cap(pdev, PCI_CAP_ID_MSIX);
	if (!m->cap)
		return -ENOTSUP;
	if (pci_read_config(pdev, m->cap + PCI_MSIX_FLAGS, 2, &ctrl) ||
	    pci_read_config(pdev, m->cap + PCI_MSIX_TABLE, 4, &tbl))
		return -EIO;
	m->ctrl = (uint16_t)ctrl;
	m->nent = (ctrl & PCI_MSIX_FLAGS_QSIZE) + 1;
	bir = tbl & PCI_MSIX_TABLE_BIR;
	tbl &= PCI_MSIX_TABLE_OFFSET;
	if (bir > 5 || tbl + (uint64_t)m->nent * PCI_MSIX_ENTRY_SIZE > pdev->bar_size[bir])
		return -EIO;
	bar = pci_iomap(pdev, bir);
	if (!bar)
		return -EIO;
	m->table = bar + tbl;
	return 0;
}

/* Table entries are device registers: one 32-bit store each, never torn. */
static void entry_write(struct msix *m, unsigned v, unsigned reg, uint32_t val)
{
	uint8_t *p = m->table + (size_t)v * PCI_MSIX_ENTRY_SIZE + reg;

	pci_io_release(p);
	__atomic_store_n((uint32_t *)p, val, __ATOMIC_RELEASE);
}

static void entry_mask(struct msix *m, unsigned v, bool masked)
{
	entry_write(m, v, PCI_MSIX_ENTRY_VECTOR_CTRL, masked ? PCI_MSIX_ENTRY_CTRL_MASKBIT : 0);
}

static void set_ctrl(struct pci_dev *pdev, const struct msix *m, uint16_t set, uint16_t clear)
{
	pci_write_config(pdev, m->cap + PCI_MSIX_FLAGS, 2,
			 (uint16_t)((m->ctrl | set) & ~clear));
}

/* Give back vectors [0, n): the controller's vectors first, then the eventfds. */
static void vectors_put(struct pci_dev *pdev, int n)
{
	struct fab_host *h = pdev->host->h;

	for (int v = 0; v < n; v++) {
		fab_intc_free(&h->intc, pdev->vec_data[v]);
		close(pdev->vec_efd[v]);
		pdev->vec_efd[v] = -1;
		pdev->vec_data[v] = 0;
	}
}

int pci_alloc_irq_vectors(struct pci_dev *pdev, int n)
{
	struct fab_host *h;
	struct msix m;
	uint32_t cmd;
	int v, rc;

	if (!pdev || n <= 0 || n > PCI_MAX_VECTORS)
		return -EINVAL;
	if (pdev->nvec)
		return -EBUSY;
	h = pdev->host->h;
	fab_host_lock(h);
	rc = msix_locate(pdev, &m);
	if (rc)
		goto out;
	if ((unsigned)n > m.nent) {
		rc = -ENOSPC;
		goto out;
	}
	/* Program with the function masked: no message can use a half-written entry. */
	set_ctrl(pdev, &m, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL, 0);
	for (unsigned e = 0; e < m.nent; e++)
		entry_mask(&m, e, true);
	for (v = 0; v < n; v++) {
		uint64_t addr;
		uint32_t data;
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

		if (efd < 0) {
			rc = -errno;
			break;
		}
		rc = fab_intc_alloc(&h->intc, efd, &addr, &data);
		if (rc < 0) {
			close(efd);
			break;
		}
		rc = 0;
		pdev->vec_efd[v] = efd;
		pdev->vec_data[v] = data;
		if (pdev->ops && pdev->ops->msi_address)
			addr = pdev->ops->msi_address(pdev, addr);   /* through the NTBs */
		entry_write(&m, (unsigned)v, PCI_MSIX_ENTRY_LOWER_ADDR, (uint32_t)addr);
		entry_write(&m, (unsigned)v, PCI_MSIX_ENTRY_UPPER_ADDR, (uint32_t)(addr >> 32));
		entry_write(&m, (unsigned)v, PCI_MSIX_ENTRY_DATA, data);
		entry_mask(&m, (unsigned)v, false);
	}
	if (rc) {
		for (int e = 0; e < v; e++)
			entry_mask(&m, (unsigned)e, true);
		set_ctrl(pdev, &m, 0, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
		vectors_put(pdev, v);
		goto out;
	}
	set_ctrl(pdev, &m, PCI_MSIX_FLAGS_ENABLE, PCI_MSIX_FLAGS_MASKALL);
	/* With MSI-X on, legacy INTx must stay quiet. */
	if (!pci_read_config(pdev, PCI_COMMAND, 2, &cmd))
		pci_write_config(pdev, PCI_COMMAND, 2, cmd | PCI_COMMAND_INTX_DISABLE);
	pdev->nvec = n;
	rc = n;
out:
	fab_host_unlock(h);
	return rc;
}

void pci_free_irq_vectors(struct pci_dev *pdev)
{
	struct fab_host *h;
	struct msix m;

	if (!pdev || !pdev->nvec)
		return;
	h = pdev->host->h;
	fab_host_lock(h);
	/* Silence the function before its vectors can be handed to someone else.
	 * A function that is gone (surprise removal) answers nothing: skip it. */
	if (!msix_locate(pdev, &m)) {
		for (int v = 0; v < pdev->nvec; v++)
			entry_mask(&m, (unsigned)v, true);
		set_ctrl(pdev, &m, 0, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	}
	vectors_put(pdev, pdev->nvec);
	pdev->nvec = 0;
	fab_host_unlock(h);
}

int pci_irq_eventfd(struct pci_dev *pdev, int vector)
{
	if (!pdev || vector < 0 || vector >= pdev->nvec)
		return -EINVAL;
	return pdev->vec_efd[vector];
}

uint64_t pci_irq_count(struct pci_dev *pdev, int vector)
{
	struct fab_host *h;
	uint64_t c;

	if (!pdev || vector < 0 || vector >= pdev->nvec)
		return 0;
	h = pdev->host->h;
	fab_host_lock(h);
	c = h->intc.count[pdev->vec_data[vector]];
	fab_host_unlock(h);
	return c;
}
