/* SPDX-License-Identifier: MIT */
/*
 * The in-kernel NVMe block driver (nvme_drv.c): binds to class 010802
 * functions through the PCI core and offers the daemon's handlers admin
 * pass-through and block I/O. All calls are made with the host lock held,
 * like every PCI core call; the driver drops it while it waits for the
 * controller, whose thread needs it for each DMA.
 *
 * The driver is synchronous and not reentrant per controller: a second call
 * arriving while one waits (it cannot in smartiod, whose loop is single
 * threaded) gets -EBUSY.
 */
#ifndef SMARTIO_HOST_NVME_DRV_H
#define SMARTIO_HOST_NVME_DRV_H

#include <stdbool.h>
#include <stdint.h>

#include "host/pci.h"
#include "smartio/nvme_queue.h"

#define NVME_DRV_MAX_IOQ        16     /* I/O queue pairs the driver will use */
#define NVME_DRV_QDEPTH         64     /* entries per I/O queue (capped by MQES + 1) */
#define NVME_DRV_ADMIN_DEPTH    32
#define NVME_DRV_TIMEOUT_MS     5000   /* default command timeout */

/*
 * Module parameters, read at probe. Tests change them before registering the
 * driver (or before a re-probe).
 */
struct nvme_drv_params {
	unsigned io_queues;     /* 0: min(2, granted) */
	bool use_polling;       /* true: no MSI-X vectors, completions are polled */
	unsigned timeout_ms;    /* 0: NVME_DRV_TIMEOUT_MS */
};
extern struct nvme_drv_params nvme_drv_params;

enum nvme_drv_dir { NVME_DRV_NONE = 0, NVME_DRV_TO_DEV = 1, NVME_DRV_FROM_DEV = 2 };

enum nvme_drv_op {
	NVME_DRV_READ = 1, NVME_DRV_WRITE, NVME_DRV_FLUSH, NVME_DRV_WRITE_ZEROES,
	NVME_DRV_DEALLOCATE,
};

/* A completion as the caller sees it: dword 0 and the status field (no phase). */
struct nvme_drv_cpl {
	uint32_t result;
	uint16_t status;        /* libnvme layout: SCT << 8 | SC, NVME_SC_MORE, NVME_SC_DNR */
};

struct nvme_drv_ns {
	uint32_t nsid;
	unsigned lba_shift;     /* 9 or 12 */
	uint64_t nsze;          /* blocks */
};

/* State a caller may look at (nvme list, tests). */
struct nvme_drv_info {
	char model[41], serial[21], firmware[9];
	uint32_t max_xfer;      /* bytes per command (MDTS) */
	uint32_t nn;            /* Identify NN */
	unsigned nns;           /* active namespaces */
	unsigned nioq;          /* I/O queue pairs in use */
	int nvec;               /* MSI-X vectors (0: polled) */
	bool needs_reset;       /* a command timed out: reset on the next use */
	uint64_t resets;        /* controller resets done after probe */
	uint64_t channel_events;  /* link/removal notifications (error_detected, resume) */
	uint64_t cmb_size;        /* the CMB, given to the PCI core as p2pmem (0: none) */
	bool cmb_p2pmem;          /* published for data buffers (CMBSZ.WDS and RDS) */
};

/* True if pdev is bound to nvme_pci_driver. */
bool nvme_drv_bound(const struct pci_dev *pdev);
int nvme_drv_info(struct pci_dev *pdev, struct nvme_drv_info *info);
/* Namespace nsid's geometry; -ENOENT if it is not active. */
int nvme_drv_ns_info(struct pci_dev *pdev, uint32_t nsid, struct nvme_drv_ns *ns);

/*
 * An admin command. The driver fills in the CID and the data pointers
 * (PRP1/PRP2, through a bounce buffer from the DMA API) and ignores the
 * caller's; len bytes (<= the controller's max transfer) move in direction
 * dir. Returns 0 once the command completed (cpl->status may be an error),
 * -ETIMEDOUT (the controller is reset on the next use), or -errno.
 */
int nvme_drv_admin(struct pci_dev *pdev, const struct nvme_sqe *sqe, void *data, uint32_t len,
		   enum nvme_drv_dir dir, uint32_t timeout_ms, struct nvme_drv_cpl *cpl);

/*
 * Block I/O on namespace nsid: nlb blocks at slba to/from buf (nlb * block
 * size bytes; none for FLUSH, WRITE_ZEROES, DEALLOCATE). Split into commands
 * of at most the controller's MDTS. buf may be p2pmem (pci_alloc_p2pmem, any
 * provider this controller reaches, its own CMB too): the commands then
 * point at it as this controller reaches it (pci_p2pmem_map) and the data
 * moves peer-to-peer, never through a bounce buffer in host RAM. nvme_drv_io picks the I/O queue round
 * robin; nvme_drv_io_queue uses queue index q (0 .. nioq - 1). Returns 0 with
 * cpl->status 0, 0 with the first failing command's status, or -errno.
 */
int nvme_drv_io(struct pci_dev *pdev, uint32_t nsid, enum nvme_drv_op op, uint64_t slba,
		uint32_t nlb, void *buf, struct nvme_drv_cpl *cpl);
int nvme_drv_io_queue(struct pci_dev *pdev, unsigned q, uint32_t nsid, enum nvme_drv_op op,
		      uint64_t slba, uint32_t nlb, void *buf, struct nvme_drv_cpl *cpl);

/*
 * A queue pair lent to another owner (an accelerator kernel that drives the
 * NVMe itself): SQ and CQ in the caller's memory at sq_bus/cq_bus (page
 * aligned, the CQ zeroed, as the NVMe reaches them), depth entries each, no
 * interrupt. The doorbells are at sq_db_off/cq_db_off in BAR0, for the owner
 * to write (pci_p2pdma_bus gives BAR0 as the owner's device reaches it). -ENOSPC when the
 * controller allocated no further pair. A controller reset removes it.
 */
struct nvme_drv_extq {
	uint16_t qid, depth;
	unsigned dstrd;
	uint64_t sq_db_off, cq_db_off;
};
int nvme_drv_ext_queue(struct pci_dev *pdev, uint64_t sq_bus, uint64_t cq_bus, unsigned depth,
		       struct nvme_drv_extq *q);
int nvme_drv_ext_queue_delete(struct pci_dev *pdev, unsigned qid);

/* Commands completed on I/O queue q (tests check the spread). */
uint64_t nvme_drv_queue_cmds(struct pci_dev *pdev, unsigned q);
/* The MSI-X vector of I/O queue q, or -1 when polled. */
int nvme_drv_queue_vector(struct pci_dev *pdev, unsigned q);

#endif
