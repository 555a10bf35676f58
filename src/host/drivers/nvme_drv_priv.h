/* SPDX-License-Identifier: MIT */
/*
 * The in-kernel NVMe block driver's private state and helpers, shared by its
 * bring-up (nvme_drv.c) and its queues and API (nvme_drv_io.c).
 */
#ifndef SMARTIO_HOST_NVME_DRV_PRIV_H
#define SMARTIO_HOST_NVME_DRV_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "util/smio_time.h"

#define NVME_DRV_PAGE           4096u
#define NVME_DRV_PAGE_SHIFT     12
#define NVME_DRV_MAX_XFER       (128u * 1024u)  /* bounce buffer: caps MDTS */
#define NVME_DRV_CLASS          0x010802u
#define NVME_DRV_MAX_NS         1024u           /* one Identify active-NS list */

/* libnvme's *_MASK constants are unshifted: the register bits themselves. */
#define CSTS_RDY                NVME_SET(1u, CSTS_RDY)
#define CSTS_CFS                NVME_SET(1u, CSTS_CFS)
#define CC_EN                   NVME_SET(1u, CC_EN)

struct nvme_q {
	uint16_t qid;
	uint32_t depth;
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	uint64_t sq_bus, cq_bus;
	uint32_t sq_tail, cq_head;
	uint8_t phase;
	int vec;                 /* MSI-X vector, -1: polled */
	uint16_t next_cid;
	uint64_t cmds;           /* completed commands */
	/* bounce buffer and PRP list pages for this queue's one command in flight */
	uint8_t *buf;
	uint64_t buf_bus;
	uint32_t buf_len;
	uint64_t *prp;
	uint64_t prp_bus;
	uint32_t prp_len;
	uint64_t data_bus;       /* the command's data in p2pmem at this address (0: buf) */
};

struct nvme_dev {
	struct pci_dev *pdev;
	struct fab_host *h;
	uint8_t *bar;
	uint64_t cap;
	unsigned dstrd;
	uint32_t ready_ms;       /* CAP.TO */
	uint32_t timeout_ms;
	uint32_t max_xfer;
	struct nvme_q adminq;
	struct nvme_q ioq[NVME_DRV_MAX_IOQ];
	unsigned nioq;           /* created */
	unsigned want_ioq;       /* asked for at probe: reused by a reset */
	unsigned granted;        /* I/O queue pairs the controller allocated */
	uint32_t ext_qids;       /* bit q: queue pair q is lent out (nvme_drv_ext_queue) */
	unsigned rr;             /* next I/O queue for nvme_drv_io */
	int nvec;
	struct nvme_id_ctrl *idc;
	struct nvme_drv_ns *ns;
	unsigned nns;
	bool needs_reset;
	bool busy;
	uint64_t resets;
	uint64_t channel_events;   /* error_detected + resume calls */
	uint64_t cmb_size;         /* CMB given to the PCI core as p2pmem (0: none) */
	bool cmb_p2pmem;           /* published: it takes data (CMBSZ.RDS and WDS) */
};

/* ---------- small helpers ---------- */

static inline uint32_t rd32(struct nvme_dev *dev, uint32_t off)
{
	uint32_t v = __atomic_load_n((uint32_t *)(dev->bar + off), __ATOMIC_ACQUIRE);

	pci_io_acquire(dev->bar + off);
	return v;
}

static inline uint64_t rd64(struct nvme_dev *dev, uint32_t off)
{
	uint64_t v = __atomic_load_n((uint64_t *)(dev->bar + off), __ATOMIC_ACQUIRE);

	pci_io_acquire(dev->bar + off);
	return v;
}

static inline void wr32(struct nvme_dev *dev, uint64_t off, uint32_t v)
{
	pci_io_release(dev->bar + off);
	__atomic_store_n((uint32_t *)(dev->bar + off), v, __ATOMIC_RELEASE);
}

static inline void wr64(struct nvme_dev *dev, uint32_t off, uint64_t v)
{
	pci_io_release(dev->bar + off);
	__atomic_store_n((uint64_t *)(dev->bar + off), v, __ATOMIC_RELEASE);
}

/* Drop the host lock entirely so that the controller's DMA can proceed. */
static inline unsigned lock_drop(struct nvme_dev *dev)
{
	return fab_host_unlock_all(dev->h);
}

static inline void lock_retake(struct nvme_dev *dev, unsigned n)
{
	fab_host_relock(dev->h, n);
}

/* Queues (nvme_drv_io.c). */
void nvme_drv_q_free(struct nvme_dev *dev, struct nvme_q *q);
void nvme_drv_q_reset(struct nvme_q *q);
int nvme_drv_q_alloc(struct nvme_dev *dev, struct nvme_q *q, uint16_t qid, uint32_t depth,
		     uint32_t xfer, int vec);
int nvme_drv_q_wait(struct nvme_dev *dev, struct nvme_q *q, uint16_t cid, uint64_t deadline,
		    struct nvme_drv_cpl *cpl);
int nvme_drv_q_exec(struct nvme_dev *dev, struct nvme_q *q, struct nvme_sqe *s, uint32_t len,
		    uint32_t timeout_ms, struct nvme_drv_cpl *cpl);
int nvme_drv_admin_exec(struct nvme_dev *dev, struct nvme_sqe *s, uint32_t len,
			struct nvme_drv_cpl *cpl);

/* Controller bring-up (nvme_drv.c). */
int nvme_drv_ctrl_reinit(struct nvme_dev *dev);

#endif
