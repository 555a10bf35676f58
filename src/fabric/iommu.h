/* SPDX-License-Identifier: MIT */
/*
 * A host's IOMMU (DMA remapping unit), in the manner of Intel VT-d second-level
 * translation: requesters (BDFs) are attached to domains; each domain owns a
 * 4-level radix page table (512 entries per level, 48-bit IOVA) with 4 KiB
 * leaf pages and 2 MiB large pages. A translation that finds no domain, no
 * present entry or insufficient permission is a fault: it is recorded in a
 * bounded fault log and counted, never silently ignored.
 */
#ifndef SMARTIO_FABRIC_IOMMU_H
#define SMARTIO_FABRIC_IOMMU_H

#include <stdbool.h>
#include <stdint.h>

#define IOMMU_PAGE_4K      (1ull << 12)
#define IOMMU_PAGE_2M      (1ull << 21)
#define IOMMU_IOVA_BITS    48
#define IOMMU_MAX_DOMAINS  1024
#define IOMMU_FAULT_LOG    64      /* most recent faults kept */
/* Page tables one IOMMU may hold (4 KiB each): 32 GiB mapped in 4 KiB pages. */
#define IOMMU_MAX_TABLES   16384

#define IOMMU_READ   0x1
#define IOMMU_WRITE  0x2

enum iommu_fault_reason {
	IOMMU_FAULT_NO_DOMAIN = 1,     /* requester not attached to any domain */
	IOMMU_FAULT_NOT_PRESENT,       /* no mapping at this IOVA */
	IOMMU_FAULT_READ_DENIED,       /* mapped without IOMMU_READ */
	IOMMU_FAULT_WRITE_DENIED,      /* mapped without IOMMU_WRITE */
	IOMMU_FAULT_ADDR_WIDTH,        /* IOVA beyond IOMMU_IOVA_BITS */
};

struct iommu_fault {
	uint16_t rid;
	uint8_t write;
	uint8_t reason;                /* enum iommu_fault_reason */
	uint32_t domain;               /* 0 when none */
	uint64_t iova;
	uint64_t seq;                  /* 1-based running number of this fault */
};

struct fab_iommu;

/* Called after every change of a mapping or attachment (cache invalidation). */
typedef void (*iommu_changed_fn)(void *arg);

struct fab_iommu *iommu_create(bool enabled, iommu_changed_fn changed, void *arg);
/*
 * Whoever wants to hear of each fault as it is recorded (the daemon's event
 * log): fn runs on the faulting thread, inside the same serialisation as the
 * translation, and must not block. NULL turns it off.
 */
typedef void (*iommu_fault_fn)(void *arg, const struct iommu_fault *f);
void iommu_set_fault_hook(struct fab_iommu *mmu, iommu_fault_fn fn, void *arg);
void iommu_destroy(struct fab_iommu *mmu);
bool iommu_enabled(const struct fab_iommu *mmu);

/* Domains are numbered from 1. -ENOSPC when all are in use. */
int iommu_domain_alloc(struct fab_iommu *mmu);
/* -ENOENT unknown; -EBUSY while requesters are attached. Frees all its page tables. */
int iommu_domain_free(struct fab_iommu *mmu, uint32_t dom);
/* Attach a requester (replacing an earlier attachment); -ENOENT unknown domain. */
int iommu_attach(struct fab_iommu *mmu, uint16_t rid, uint32_t dom);
int iommu_detach(struct fab_iommu *mmu, uint16_t rid);      /* -ENOENT if not attached */
/* Domain of a requester, 0 if none. */
uint32_t iommu_domain_of(const struct fab_iommu *mmu, uint16_t rid);

/*
 * Map [iova, iova+size) to [paddr, paddr+size). iova, paddr and size must be
 * 4 KiB aligned (-EINVAL), size > 0, inside IOMMU_IOVA_BITS (-ERANGE), prot a
 * non-empty subset of IOMMU_READ|IOMMU_WRITE (-EINVAL). Uses 2 MiB pages where
 * iova and paddr are both 2 MiB aligned over a full 2 MiB. -EEXIST if any page
 * in the range is already mapped, and then nothing is changed. -ENOMEM, also
 * with nothing changed, when the page tables it needs would exceed
 * IOMMU_MAX_TABLES (a huge range in 4 KiB pages).
 */
int iommu_map(struct fab_iommu *mmu, uint32_t dom, uint64_t iova, uint64_t paddr,
	      uint64_t size, unsigned prot);
/*
 * Unmap [iova, iova+size) (4 KiB aligned). A 2 MiB page only partly covered
 * is split into 4 KiB pages first. -ENOENT if nothing in the range was mapped.
 */
int iommu_unmap(struct fab_iommu *mmu, uint32_t dom, uint64_t iova, uint64_t size);

/*
 * Translate one access. With the IOMMU disabled: identity, *contig = UINT64_MAX - iova.
 * On success *paddr is the physical address and *contig the number of bytes from
 * iova that are translated contiguously with the same permission (at least to the
 * end of the leaf page; adjacent physically contiguous pages may extend it).
 * On failure returns -EFAULT and records the fault (reason in *reason if non-NULL).
 */
int iommu_translate(struct fab_iommu *mmu, uint16_t rid, uint64_t iova, bool write,
		    uint64_t *paddr, uint64_t *contig, enum iommu_fault_reason *reason);

/* Copy up to max most recent faults, oldest first; returns how many were copied. */
unsigned iommu_faults(const struct fab_iommu *mmu, struct iommu_fault *out, unsigned max);
uint64_t iommu_fault_count(const struct fab_iommu *mmu);
/* Pages in use by a domain's tables (for tests and statistics): leaf 4K / 2M counts. */
int iommu_domain_stats(const struct fab_iommu *mmu, uint32_t dom, uint64_t *pages_4k,
		       uint64_t *pages_2m);
const char *iommu_fault_reason_str(enum iommu_fault_reason r);

/*
 * Test hook (addition): make the nth page-table allocation from now fail once
 * (1 = the next one; 0 disables). Lets tests drive the -ENOMEM rollback paths.
 */
void iommu_fail_alloc_after(struct fab_iommu *mmu, unsigned nth);

#endif
