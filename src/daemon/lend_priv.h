/* SPDX-License-Identifier: MIT */
/* Device Lending in the daemon: state shared by h_lend.c and lend_msi.c. */
#ifndef SMARTIO_DAEMON_LEND_PRIV_H
#define SMARTIO_DAEMON_LEND_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "host/lend.h"
#include "smartio/proto.h"

#define SMD_LEND_MAX 32     /* devices lent by, and borrowed by, one host */
#define SMD_HOLD_MAX 64     /* LEND_HOLDs at once (lend_hold.c) */

struct smd;
struct smd_conn;

/* A process holding one of this host's functions (LEND_HOLD), for as long as its connection. */
struct smd_hold {
	bool used;
	uint32_t cid, pid;
	uint16_t bdf;
	char what[SMIO_HOLD_WHAT_MAX];
};

/* One interrupt message on the MSI channel. */
struct smd_msi_msg {
	uint64_t addr;
	uint32_t data;
	uint32_t pad;
};

/* Lender: one device lent to one borrower (its lease: the borrower's peer connection). */
struct smd_lent {
	bool used;
	uint32_t cid;             /* the borrower daemon's connection */
	uint32_t borrower;
	uint16_t bdf;
	uint32_t ref;             /* the exclusive borrow in the SmartIO pool (h_device.c) */
	struct lend_setup *s;
	int msi_slot;             /* our MSI channel's write end */
	int msi_rd;               /* the read end we handed over (ours to close) */
};

/* Borrower: one borrowed device and its shadow. */
struct smd_borrowed {
	bool used;
	struct smd *d;
	uint32_t fdid, lender;
	uint16_t lbdf;            /* at the lender */
	struct pci_dev *pdev;     /* the shadow (NULL once gone) */
	int msi_slot;
	bool lost;                /* the lender is gone: config cycles fail at once */
	bool reval_queued;        /* a route revalidation is queued (smd_lend_routes_changed) */
};

struct smd_lend {
	struct smd_lent lent[SMD_LEND_MAX];
	struct smd_borrowed brw[SMD_LEND_MAX];
	/* MSI channels: borrower read ends, lender write ends (by destination host) */
	pthread_mutex_t msi_mu;
	int msi_rd[SMD_LEND_MAX];
	int msi_wr[SMD_LEND_MAX];
	uint32_t msi_host[SMD_LEND_MAX];
	pthread_t intc_thr;
	bool intc_stop, intc_started;
	int intc_wake;
	uint64_t msi_bad;         /* messages the interrupt controller refused */
	struct smd_hold holds[SMD_HOLD_MAX];
};

/*
 * Borrow fdid with the DMA window [dma_target, +dma_size) of this host
 * (h_lend.c); mdev: for a VM's MDEV parent (no driver binds to the shadow).
 * *shadow: the shadow device. smd_lend_vm_mirror asks the lender to map the
 * device's I/O virtual [iova, +size) onto device address bus (PEER_VM_DMA);
 * smd_lend_vm_return gives it back. On a worker.
 */
int smd_lend_borrow(struct smd *d, uint32_t fdid, uint64_t dma_target, uint64_t dma_size,
		    bool mdev, struct smio_lend_info *o, struct pci_dev **shadow);
int smd_lend_vm_mirror(struct smd *d, uint32_t fdid, uint64_t iova, uint64_t bus, uint64_t size);
void smd_lend_vm_return(struct smd *d, uint32_t fdid);
/* Lender: the host our function bdf is lent to, or -1. */
int smd_lend_lent_to(struct smd *d, uint16_t bdf);

/* lend_hold.c (host lock held): record c's hold; count the live holders of bdf
 * (filling out, if given, with up to SMIO_HOLDERS_MAX); forget bdf's holds. */
int smd_lend_hold(struct smd *d, struct smd_conn *c, const struct smio_lend_hold *m);
uint32_t smd_lend_holders(struct smd *d, uint16_t bdf, struct smio_lend_holders *out);
/* LEND_HOLDERS' reply for bdf into out (SMIO_MAX_PAYLOAD); 0. */
int smd_lend_holders_reply(struct smd *d, uint16_t bdf, void *out, uint32_t *outlen);
void smd_lend_hold_drop(struct smd *d, uint16_t bdf);
/* STATS' "borrowed": one object per device borrowed here pushed on arr; 0 or -ENOMEM. */
struct json_object;
int smd_lend_borrowed_json(struct smd *d, struct json_object *arr);

int smd_lend_msi_start(struct smd *d);
void smd_lend_msi_stop(struct smd *d);
int smd_lend_msi_add(struct smd *d, int fd);
void smd_lend_msi_del(struct smd *d, int slot);
int smd_lend_msi_channel(struct smd *d, uint32_t host, int *rd, int *slot);
void smd_lend_msi_channel_close(struct smd *d, int slot);

/* lend_lender.c: the lender's side of Device Lending (h_lend.c calls it). */
struct smd_lent *smd_lent_find(struct smd_lend *l, uint32_t cid, uint16_t bdf);
/* Reclaim e (its borrower returned it or is gone); pool: also end the pool's borrow. */
void smd_lent_drop(struct smd *d, struct smd_conn *c, struct smd_lent *e, bool pool);
int smd_lend_pool_local(struct smd *d, struct smd_conn *c, struct smio_lend_pool *o,
			uint32_t cap);
int smd_lend_setup_req(struct smd *d, struct smd_conn *c,
		       const struct smio_peer_lend_setup *m, struct smio_lend_grant *o,
		       int *out_fd);

/*
 * A struct lend_grant (g) from the identity every grant on the wire carries
 * (smio_lend_grant of a lend, smio_cz_grant of a cZodiac share: the same
 * field names): zeroed, then the function's BDF, IDs, class, BARs and names,
 * and who lends it to whom. The lend's own windows are the caller's to add.
 */
#define SMD_GRANT_IDENTITY(g, gr, lender_, borrower_) do {				\
	memset((g), 0, sizeof(*(g)));							\
	(g)->lender = (lender_);							\
	(g)->borrower = (borrower_);							\
	(g)->bdf = (gr)->bdf;								\
	(g)->vendor = (gr)->vendor;							\
	(g)->device = (gr)->device;							\
	(g)->class = (gr)->class;							\
	for (unsigned i_ = 0; i_ < SMIO_DEV_BARS; i_++) {				\
		(g)->bar_addr[i_] = (gr)->bar_addr[i_];					\
		(g)->bar_size[i_] = (gr)->bar_size[i_];					\
		(g)->bar_flags[i_] = (gr)->bar_flags[i_];				\
	}										\
	snprintf((g)->name, sizeof((g)->name), "%s", (gr)->name);			\
	snprintf((g)->model, sizeof((g)->model), "%s", (gr)->model);			\
} while (0)

#endif
