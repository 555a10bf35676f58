/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, Device Lending (docs/lending.md): LEND_* for the
 * CLI and applications, PEER_LEND_* between borrower and lender.
 */
#ifndef SMARTIO_PROTO_LEND_H
#define SMARTIO_PROTO_LEND_H

#include <stdint.h>

#include "wire.h"
#include "dev.h"

#define SMIO_LEND_AVAILABLE  0u      /* smio_lend_entry.state */
#define SMIO_LEND_LENT       1u      /* lent to `borrower` by Device Lending */
#define SMIO_LEND_SISCI      2u      /* borrowed through SISCI (sisci_borrows of them) */
#define SMIO_LEND_RESERVED   3u      /* held for a VM on `borrower`, not borrowed (docs/vm.md) */
#define SMIO_LEND_SHARED     4u      /* shared with `borrower` (the USER) through cZodiac's
				      * IOPort on cluster switch `cswitch` (docs/czodiac.md) */
#define SMIO_LEND_NOBODY     0xffffffffu

struct smio_lend_entry {
	uint32_t fdid;
	uint32_t lender;            /* host id */
	uint32_t class;             /* 24-bit */
	uint32_t state;             /* SMIO_LEND_* */
	uint32_t borrower;          /* host id, or SMIO_LEND_NOBODY */
	uint32_t sisci_borrows;
	uint16_t bdf, vendor, device;
	uint16_t cswitch;           /* SHARED: the czodiac switch's index; else 0 */
	char name[SMIO_NAME_MAX];
};

struct smio_lend_pool {
	uint32_t n;                 /* <= SMIO_MAX_DEVS; payload = 8 + n * sizeof(entry) */
	uint32_t pad;
	struct smio_lend_entry e[];
};

#define SMIO_LEND_F_UNBIND   0x1u    /* LEND_RETURN: unbind the driver first */
#define SMIO_LEND_F_FORCE    0x2u    /* LEND_RETURN: also while held (LEND_HOLD); unbinds */

struct smio_lend_req {
	uint32_t fdid;
	uint32_t flags;             /* SMIO_LEND_F_* */
};

/* A shadow device on the borrower. */
struct smio_lend_info {
	uint32_t fdid;
	uint32_t lender;
	uint16_t bdf;               /* the shadow's BDF on the borrower */
	uint16_t pad;
	uint32_t bound;             /* 0/1: a driver is bound */
	uint64_t bar_addr[SMIO_DEV_BARS], bar_size[SMIO_DEV_BARS];   /* borrower's windows */
	char name[SMIO_NAME_MAX];
	char driver[SMIO_NAME_MAX];
};

/* PEER_LEND_SETUP flags: the device will DMA with a VM's guest-physical
 * addresses (lend_vm_mirror): its remapped windows go above any guest RAM. */
#define SMIO_LEND_SETUP_VM 0x1

struct smio_peer_lend_setup {
	uint16_t bdf;
	uint16_t flags;             /* SMIO_LEND_SETUP_* */
	uint32_t pad2;
	uint64_t dma_target, dma_size;   /* the borrower's DMA window */
};

/* What the lender prepared (struct lend_grant on the wire). */
struct smio_lend_grant {
	uint16_t bdf, vendor, device, pad;
	uint32_t class, lender, borrower, pad2;
	uint64_t bar_addr[SMIO_DEV_BARS], bar_size[SMIO_DEV_BARS];
	uint32_t bar_flags[SMIO_DEV_BARS];
	uint64_t dma_bus, dma_target, dma_size, msi_bus;
	char name[SMIO_NAME_MAX];
	char model[24];
};

struct smio_peer_lend_ref {
	uint16_t bdf;
	uint16_t pad;
	uint32_t pad2;
};

struct smio_peer_lend_cfg {
	uint16_t bdf;
	uint8_t write;              /* 0/1 */
	uint8_t size;               /* 1, 2, 4; off aligned to it */
	uint32_t off;               /* < SMIO_CFG_SPACE */
	uint32_t value;
	uint32_t pad;
};

/* Where borrowed device `client` reaches BAR `bar` of borrowed device `provider`. */
struct smio_lend_p2p {
	uint32_t client, provider;  /* FDIDs, both borrowed by this host */
	uint32_t bar;               /* 0..5 */
	uint32_t hops;              /* reply: hops of the route (every link, switch, NTB...) */
	uint64_t bus;               /* reply: the address the client's device uses */
};

struct smio_peer_lend_p2p {
	uint16_t bdf;
	uint16_t pad;
	uint32_t host;              /* where the target is */
	uint64_t addr, size;        /* target at that host (P2P) / bus (HOPS) */
	uint64_t bus;               /* reply: the device's address of addr */
	uint32_t hops, pad2;        /* HOPS reply */
};

/*
 * LEND_HOLD: the sending connection holds the function at bdf of this host
 * (e.g. 'smartio mount' serving its namespaces) until it closes; `what` says
 * who, for the error of a refused LEND_RETURN (-ETXTBSY unless FORCE).
 */
#define SMIO_HOLD_WHAT_MAX 128
#define SMIO_HOLDERS_MAX   16

struct smio_lend_hold {
	uint16_t bdf;
	uint16_t pad;
	uint32_t pad2;
	char what[SMIO_HOLD_WHAT_MAX];
};

/* LEND_HOLDERS (request: smio_lend_req, flags 0): who holds a borrowed device. */
struct smio_lend_holder {
	uint32_t pid;               /* the holding process (SO_PEERCRED) */
	uint32_t pad;
	char what[SMIO_HOLD_WHAT_MAX];
};

struct smio_lend_holders {
	uint32_t n;                 /* <= SMIO_HOLDERS_MAX; payload = 8 + n * sizeof(holder) */
	uint32_t pad;
	struct smio_lend_holder h[];
};

/*
 * VM_MEM (docs/vm.md): a virtual machine's RAM, taken from this host's
 * physical memory (as a VFIO guest's pages are host pages), for as long as
 * the connection lasts. The reply carries the host's RAM memfd: the guest's
 * RAM is [offset, offset + size) of it, at physical address phys, where a
 * device's DMA through this host's IOMMU can reach it.
 */
#define SMIO_VM_MEM_ALIGN (2ull << 20)
#define SMIO_VM_MEM_MAX   (64ull << 30)

struct smio_vm_mem {
	uint64_t size;              /* > 0, a multiple of SMIO_VM_MEM_ALIGN, <= SMIO_VM_MEM_MAX */
};

struct smio_vm_mem_reply {
	uint64_t phys;              /* host physical address of guest-physical 0 */
	uint64_t offset;            /* of the RAM memfd passed with the reply */
	uint64_t size;
};

/*
 * VM_ATTACH: the MDEV parent borrows fdid for a VM of the sending process
 * whose RAM (VM_MEM, on another connection of the same process) is at phys:
 * the DMA window is that RAM, the lender's IOMMU mirrors guest-physical
 * addresses onto it, MSI-X vectors are allocated (VM_IRQ hands out their
 * eventfds), no driver of this host binds. The device goes back when the
 * connection closes. The reply: the shadow's BAR windows (map them with
 * SMIO_MAP), the vectors, and the function's config space header and
 * capabilities (first 256 bytes) as the lender's device has them.
 */
#define SMIO_VM_CFG 256

struct smio_vm_attach {
	uint32_t fdid;
	/* MiB of the RAM at guest-physical 0; the rest is at 4 GiB (q35 puts RAM
	 * past its PCI hole there). 0: all of it at 0. */
	uint32_t low_mib;
	uint64_t phys, size;        /* the VM's RAM, as VM_MEM gave it */
};

struct smio_vm_attach_reply {
	struct smio_lend_info info;
	uint32_t nvec;              /* MSI-X vectors allocated */
	uint32_t pad;
	uint8_t cfg[SMIO_VM_CFG];
};

/* VM_IRQ: the eventfd of an attached device's vector (reply empty + fd). */
struct smio_vm_irq {
	uint32_t fdid;
	uint32_t vector;
};

/* VM_BAR: the memory behind an attached device's BAR (reply + its memfd). */
struct smio_vm_bar {
	uint32_t fdid;
	uint32_t bar;               /* < SMIO_DEV_BARS */
};

struct smio_vm_bar_reply {
	uint64_t offset;            /* of the BAR in the memfd */
	uint64_t len;               /* the BAR's size */
};

/*
 * VM_STATS (request empty): the devices attached to this host's VMs, with
 * the messages each VM's device needed (VM_ATTACH, VM_BAR, VM_IRQ: all at
 * start; guest BAR accesses and interrupts need none) and the interrupts
 * relayed to it. Payload = 8 + n * sizeof(entry).
 */
#define SMIO_VM_STATS_MAX 16

struct smio_vm_stat {
	uint32_t fdid;
	uint32_t pid;               /* the VM's QEMU */
	uint32_t nvec;
	uint32_t nbars;             /* its memory BARs */
	uint64_t msgs;              /* requests its device made of the parent */
	uint64_t irqs;              /* interrupts relayed (all its vectors) */
	uint32_t state;             /* SMIO_VM_RESERVED or SMIO_VM_BORROWED */
	uint32_t borrows;           /* times the guest enabled it (each one a borrow) */
};

struct smio_vm_stats {
	uint32_t n;                 /* <= SMIO_VM_STATS_MAX */
	uint32_t pad;
	struct smio_vm_stat s[];
};

/* PEER_VM_DMA: map the lent device's I/O virtual [iova, +size) onto bus (lend_vm_mirror). */
struct smio_peer_vm_dma {
	uint16_t bdf;               /* at the lender; first, as in smio_peer_lend_ref */
	uint16_t pad;
	uint32_t pad2;
	uint64_t iova, bus, size;
};

/*
 * cZodiac sharing in a running cluster (docs/czodiac.md, "In a running
 * cluster"). CZ_SHARE and CZ_UNSHARE go to the USER's daemon; it asks the
 * OWNER's (PEER_CZ_BIND, PEER_CZ_UNBIND) to program the IOPort tables, and
 * the logic full-function device's config cycles go there (PEER_CZ_CFG,
 * struct smio_peer_lend_cfg).
 */
struct smio_cz_share {
	uint32_t fdid;              /* the OWNER's function */
	uint32_t flags;             /* 0 */
};

/* A shared function as its USER sees it. */
struct smio_cz_info {
	uint32_t fdid;
	uint32_t owner;             /* host id */
	uint32_t cswitch;           /* index of the czodiac switch */
	uint16_t uid;               /* the logic device's BDF (RID) at the USER */
	uint16_t oid;               /* the function's at the OWNER */
	uint32_t bound;             /* 0/1: a driver is bound */
	uint32_t present;           /* 0/1: the logic device exists */
	uint64_t msis;              /* hot-plug MSIs of the USER's virtual slot */
	uint64_t bar_addr[SMIO_DEV_BARS], bar_size[SMIO_DEV_BARS];   /* the UBARs */
	char name[SMIO_NAME_MAX];
	char driver[SMIO_NAME_MAX];
};

/* PEER_CZ_BIND: bind bdf to the sender (the USER) as uid, its BARs as UBARs from ubar. */
struct smio_peer_cz_bind {
	uint16_t bdf;               /* at the OWNER; first, as in smio_peer_lend_ref */
	uint16_t uid;
	uint32_t cswitch;
	uint64_t ubar, ubar_size;   /* free part of the USER's port window */
};

/* The OWNER's answer (with the MSI channel's read end): struct lend_grant, no DMA window. */
struct smio_cz_grant {
	uint16_t bdf, vendor, device, pad;
	uint32_t class, pad2;
	uint64_t bar_addr[SMIO_DEV_BARS], bar_size[SMIO_DEV_BARS];   /* the UBARs */
	uint32_t bar_flags[SMIO_DEV_BARS];
	char name[SMIO_NAME_MAX];
	char model[24];
};

/*
 * VM_CMD (docs/vm.md, "Borrowed when enabled"): the guest wrote its
 * device's Command register (cmd, as it now reads) or reset the device
 * (flags SMIO_VM_CMD_RESET: FLR, a secondary bus reset, the VM's reset).
 * Bus Master set borrows the reserved device (the guest memory layout is
 * mapped then: the DMA window and the lender's mirror); Bus Master cleared
 * or a reset returns it. The reply says what it is now; the vectors are
 * those of a borrowed device (VM_IRQ, VM_BAR then follow).
 */
#define SMIO_VM_RESERVED   0u
#define SMIO_VM_BORROWED   1u
#define SMIO_VM_CMD_RESET  0x1u

struct smio_vm_cmd {
	uint32_t fdid;
	uint16_t cmd;               /* the guest's PCI_COMMAND */
	uint16_t flags;             /* SMIO_VM_CMD_* */
};

struct smio_vm_cmd_reply {
	uint32_t state;             /* SMIO_VM_RESERVED / SMIO_VM_BORROWED */
	uint32_t nvec;              /* MSI-X vectors allocated (borrowed) */
};

/*
 * PEER_VM_RESERVE: a VM on the asking host holds the lender's function
 * without borrowing it (SMIO_VM_RESV_HOLD), or lets it go (flags 0). Held,
 * the pool shows it SMIO_LEND_RESERVED to that host and other hosts' lends
 * are refused (-EBUSY); the reservation is the peer connection's. The
 * reply (when held): its config space as the lender reads it now and its
 * BAR sizes, so the VM's config reads need no borrow.
 */
#define SMIO_VM_RESV_HOLD  0x1u

struct smio_peer_vm_resv {
	uint16_t bdf;               /* at the lender; first, as in smio_peer_lend_ref */
	uint16_t flags;             /* SMIO_VM_RESV_* */
	uint32_t pad;
};

struct smio_peer_vm_resv_reply {
	uint64_t bar_size[SMIO_DEV_BARS];
	uint8_t cfg[SMIO_VM_CFG];
};

#endif
