/* SPDX-License-Identifier: MIT */
/*
 * The per-host PCI core, the interface in-kernel drivers are written against
 * (after Linux's): a device list built from enumeration, drivers that match
 * on vendor/device/class and are probed and removed, config accessors, BAR
 * mappings, a DMA API, and MSI-X vectors delivered as eventfd signals.
 *
 * A driver sees only this interface. Everything it does goes through
 * configuration cycles, routes and the IOMMU, so that a device reached
 * through an NTB (a borrowed, shadow device) is indistinguishable from a
 * local one: that is what Device Lending builds on.
 *
 * Lendable devices: a function registered with smartio for lending (topology
 * `lendable: true`, the default; fab_func.lendable) is owned by smartio and
 * never gets a local driver, although it is in the device list like any other
 * function (is_lendable set). Only `lendable: false` devices and hot-added
 * ones (borrowed shadow devices) are probed.
 *
 * Locking: all calls are made with the host lock held (fab_host_lock), which
 * the daemon holds while it serves requests; drivers may block only briefly.
 */
#ifndef SMARTIO_HOST_PCI_H
#define SMARTIO_HOST_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define PCI_ANY_ID        0xffffffffu
#define PCI_MAX_VECTORS   64

struct pci_dev;
struct pci_dev_ops;
struct pci_host;

struct pci_device_id {
	uint32_t vendor, device;      /* PCI_ANY_ID matches any */
	uint32_t class, class_mask;   /* 24-bit class code and the bits that must match */
};

/*
 * The state of the path between the CPU and a device (Linux's
 * pci_channel_state): normal; frozen (a link on the path is down: MMIO reads
 * return all-ones and writes are dropped, config cycles may fail; it may come
 * back); permanent failure (the device is gone for good: surprise removal
 * follows, the driver's remove runs next).
 */
enum pci_channel_state {
	pci_channel_io_normal = 1,
	pci_channel_io_frozen = 2,
	pci_channel_io_perm_failure = 3,
};

/*
 * Error and link notifications to a bound driver (after Linux's
 * struct pci_error_handlers, reduced to what a link-down/up and a surprise
 * removal need). Called with the host lock held, on the thread that saw the
 * event (an NTB link interrupt, the daemon's loop): they must not wait.
 * What a driver does here is wake its waiters and fail what is in flight;
 * recovery (a reset) is done later by the driver's next request.
 */
struct pci_error_handlers {
	/* The channel became frozen or failed for good. */
	void (*error_detected)(struct pci_dev *pdev, enum pci_channel_state state);
	/* The channel is back (frozen -> normal): the same mappings work again. */
	void (*resume)(struct pci_dev *pdev);
};

struct pci_driver {
	const char *name;
	const struct pci_device_id *id_table;   /* ends with an all-zero entry */
	int (*probe)(struct pci_dev *pdev, const struct pci_device_id *id);
	void (*remove)(struct pci_dev *pdev);
	const struct pci_error_handlers *err_handler;   /* may be NULL */
};

struct pci_dev {
	struct pci_host *host;
	struct fab_func *hw;          /* for config cycles only; drivers use the accessors */
	uint16_t bdf;
	uint16_t vendor, device;
	uint32_t class;               /* 24-bit */
	char name[TOPO_NAME_MAX];
	uint64_t bar_addr[6], bar_size[6];   /* bus addresses as enumerated */
	uint64_t dma_mask;            /* default 64 bits */
	const struct pci_driver *driver;
	void *drvdata;
	bool is_lendable;             /* registered with smartio: no local driver binds */
	/* SR-IOV (iov.c): a VF's PF (NULL for other functions) and its number n >= 1;
	 * a PF's number of enabled VFs. */
	struct pci_dev *physfn;
	uint16_t vf_index;
	uint16_t num_vfs;
	/* pci_channel_state; written under the host lock, read by waiting drivers
	 * without it: use pci_channel_offline / pci_dev_is_disconnected */
	int error_state;
	/* private to the PCI core */
	uint32_t domain;              /* IOMMU domain (0: none) */
	const struct pci_dev_ops *ops; /* NULL: a function of this host; else a shadow
				       * device's config/MSI path (shadow.c) */
	void *ops_arg;
	int nvec;
	int vec_efd[PCI_MAX_VECTORS];
	uint32_t vec_data[PCI_MAX_VECTORS];
};

/* Build the device list of an enumerated host. */
int pci_host_create(struct fab_host *h, struct pci_host **out, char *err, size_t errlen);
void pci_host_destroy(struct pci_host *ph);     /* removes every driver first */
struct fab_host *pci_host_fab(struct pci_host *ph);
unsigned pci_host_ndevs(const struct pci_host *ph);
struct pci_dev *pci_host_dev(struct pci_host *ph, unsigned i);
struct pci_dev *pci_get_dev(struct pci_host *ph, uint16_t bdf);

/* Register a driver: probe every matching, unbound, non-lendable device now and later. */
int pci_register_driver(struct pci_host *ph, const struct pci_driver *drv);
void pci_unregister_driver(struct pci_host *ph, const struct pci_driver *drv);
/* Hot-plug: a function appeared (e.g. a shadow device) or is going away. */
int pci_hot_add(struct pci_host *ph, struct fab_func *fn, struct pci_dev **out);
int pci_hot_remove(struct pci_host *ph, struct pci_dev *pdev);
const struct pci_device_id *pci_match_id(const struct pci_device_id *ids,
					 const struct pci_dev *pdev);

/*
 * SR-IOV (iov.c), as Linux's sriov_numvfs: enable numvfs VFs of PF pf
 * (NumVFs, then VF Enable and VF MSE in its SR-IOV capability) and add them
 * to the device list (a VF's vendor is its PF's, its device ID the VF Device
 * ID, its BARs the VF BARs' slices), or with 0 remove and disable them.
 * -ENODEV: pf has no SR-IOV capability; -ERANGE: more than TotalVFs;
 * -EBUSY: VFs are enabled and numvfs is another non-zero number (go through
 * 0, as sysfs demands); -ENOSPC: the VF BARs were not assigned. With the
 * host lock held.
 */
int pci_sriov_configure(struct pci_dev *pf, unsigned numvfs);
int pci_sriov_get_totalvfs(struct pci_dev *pf);   /* 0 without SR-IOV */
/* PF pf's VF n (1-based), or NULL. */
struct pci_dev *pci_sriov_vf(struct pci_dev *pf, unsigned n);

/* Configuration space (through configuration cycles). */
int pci_read_config(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t *val);
int pci_write_config(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t val);
int pci_enable_device(struct pci_dev *pdev);    /* memory decoding on */
void pci_set_master(struct pci_dev *pdev);
void pci_clear_master(struct pci_dev *pdev);

/*
 * Map BAR bar for the CPU ("ioremap"): the BAR's bus address is resolved
 * from the CPU like any other address, so a BAR behind an NTB maps too.
 * Returns a pointer valid for bar_size bytes, or NULL. The mapping is the
 * device's own (iomap.c), one per BAR, kept until the driver lets go: while
 * the channel is frozen or failed, loads through it read all-ones and stores
 * do not reach the device, as on PCIe; when the channel returns, the same
 * pointer reaches the device again.
 */
void *pci_iomap(struct pci_dev *pdev, unsigned bar);

/*
 * ThreadSanitizer only: an iomap is a second virtual address of the BAR's
 * pages, so TSan cannot pair a driver's release store (a doorbell) with the
 * device thread's acquire load of the same register through the shared
 * mapping. Register accessors call these around their atomics; they name the
 * shared mapping's address to TSan. Nothing at all in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define PCI_IO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PCI_IO_TSAN 1
#endif
#endif
#ifdef PCI_IO_TSAN
void pci_io_release(const volatile void *addr);   /* before a release store */
void pci_io_acquire(const volatile void *addr);   /* after an acquire load */
#else
static inline void pci_io_release(const volatile void *addr) { (void)addr; }
static inline void pci_io_acquire(const volatile void *addr) { (void)addr; }
#endif

/* Channel state (Linux's pci_channel_offline, pci_dev_is_disconnected). */
static inline bool pci_channel_offline(const struct pci_dev *pdev)
{
	return __atomic_load_n(&pdev->error_state, __ATOMIC_ACQUIRE) != pci_channel_io_normal;
}

static inline bool pci_dev_is_disconnected(const struct pci_dev *pdev)
{
	return __atomic_load_n(&pdev->error_state, __ATOMIC_ACQUIRE) ==
	       pci_channel_io_perm_failure;
}

/*
 * The platform's side (shadow devices' link and lender events, hot-plug):
 * move pdev's channel to state. Frozen and perm_failure fence every iomap of
 * the device (all-ones) and tell the driver (error_detected); normal after
 * frozen restores them and calls resume. Perm_failure is final: the caller
 * removes the device next (pci_hot_remove). With the host lock held; never
 * waits.
 */
void pci_channel_set(struct pci_dev *pdev, enum pci_channel_state state);

/* DMA API. Bus addresses are what the device must be told. */
int dma_set_mask(struct pci_dev *pdev, uint64_t mask);   /* -EIO if unusable */
/* Coherent memory from host RAM: CPU pointer, and its bus address in *bus. */
void *dma_alloc_coherent(struct pci_dev *pdev, size_t size, uint64_t *bus);
void dma_free_coherent(struct pci_dev *pdev, size_t size, void *cpu, uint64_t bus);
/*
 * Streaming mappings of host memory given by its physical address (the
 * daemon's applications hand over buffers in host RAM). Returns the bus
 * address, or 0 with errno-style *err on failure.
 */
uint64_t dma_map_single(struct pci_dev *pdev, uint64_t phys, size_t size, int *err);
void dma_unmap_single(struct pci_dev *pdev, uint64_t bus, size_t size);
struct dma_sg { uint64_t phys, len, bus; };
int dma_map_sg(struct pci_dev *pdev, struct dma_sg *sg, unsigned n);
void dma_unmap_sg(struct pci_dev *pdev, struct dma_sg *sg, unsigned n);
/* The CPU pointer of host RAM at a physical address (kernel direct map). */
void *pci_phys_to_virt(struct pci_host *ph, uint64_t phys, size_t len);

/*
 * MSI-X: allocate n vectors, each signalling its own eventfd (returned by
 * pci_irq_eventfd). Programs the function's MSI-X table and enables MSI-X.
 * Returns n, or a negative errno (-ENOSPC: fewer vectors than requested).
 */
int pci_alloc_irq_vectors(struct pci_dev *pdev, int n);
void pci_free_irq_vectors(struct pci_dev *pdev);
int pci_irq_eventfd(struct pci_dev *pdev, int vector);
/* Interrupts seen on a vector so far (host interrupt controller's count). */
uint64_t pci_irq_count(struct pci_dev *pdev, int vector);

/*
 * Peer-to-peer DMA (after Linux's P2PDMA; p2p.c, p2pmem.c).
 *
 * Providers: a driver gives a page-aligned range of a memory BAR to the core
 * (pci_p2pdma_add_resource; size 0: the rest of the BAR) and publishes it
 * (pci_p2pmem_publish) when anyone may use it as data buffers; the
 * accelerator driver publishes its memory, the NVMe driver a CMB that
 * supports data (CMBSZ.WDS and RDS, as nvme-pci). The resource goes when the
 * provider unbinds; with allocations outstanding it is unpublished, stops
 * allocating and stays mapped until the last free (Linux waits for them).
 *
 * Distance and choice: pci_p2pdma_bus gives the bus address at which a
 * client device reaches a provider's BAR, resolved once in advance wherever
 * the two devices are (same host, same lender, the borrower's own device,
 * another lender: through whichever NTB is on that path).
 * pci_p2pdma_distance counts every hop of that route (links, switches, root
 * complexes, IOMMUs, NTBs, cables; 0 for a device's own BAR);
 * pci_p2pmem_find, the orchestrator, picks the published provider with the
 * least sum of distances to all clients (NULL: none reachable by all).
 *
 * Allocation: pci_alloc_p2pmem returns a CPU address in the provider's BAR
 * mapping (page-aligned, size rounded up to pages; NULL when full);
 * pci_free_p2pmem gives it back (by address: -EINVAL if not allocated).
 * pci_p2pmem_map tells a client the bus address of p2pmem at addr
 * (-ENOENT: not p2pmem, -ENODEV: its provider left), as pci_p2pdma_map_sg.
 * pci_p2pmem_alloc_near finds and allocates in one (NULL: nothing reachable
 * or no room; the caller decides whether host memory will do instead).
 */
int pci_p2pdma_add_resource(struct pci_dev *provider, unsigned bar, uint64_t size,
			    uint64_t offset);
void pci_p2pmem_publish(struct pci_dev *provider, bool publish);
int pci_p2pdma_bus(struct pci_dev *client, struct pci_dev *provider, unsigned bar,
		   uint64_t *bus);
int pci_p2pdma_distance(struct pci_dev *provider, unsigned bar, struct pci_dev *client);
struct pci_dev *pci_p2pmem_find(struct pci_host *ph, struct pci_dev *const *clients,
				unsigned n, unsigned *bar);
void *pci_alloc_p2pmem(struct pci_dev *provider, size_t size);
int pci_free_p2pmem(struct pci_host *ph, void *addr, size_t size);
bool pci_is_p2pmem(struct pci_host *ph, const void *addr, size_t len);
int pci_p2pmem_map(struct pci_dev *client, const void *addr, size_t len, uint64_t *bus);
/* The bus address of p2pmem at addr as this host (its CPU) sees it; 0: none. */
uint64_t pci_p2pmem_virt_to_bus(struct pci_host *ph, const void *addr);
/* The live provider of p2pmem at addr (and its BAR), or NULL. */
struct pci_dev *pci_p2pmem_provider(struct pci_host *ph, const void *addr, unsigned *bar);
void *pci_p2pmem_alloc_near(struct pci_host *ph, struct pci_dev *const *clients, unsigned n,
			    size_t size, struct pci_dev **provider);
/* A provider's p2pmem (all its resources), for diagnostics; -ENOENT: none. */
struct pci_p2pmem_stat {
	uint64_t size, allocated;
	unsigned nallocs, resources, bar;
	bool published;
};
int pci_p2pmem_stat(struct pci_dev *provider, struct pci_p2pmem_stat *st);

/*
 * Additions to the interface above.
 * The host's physical-memory allocator (physmem.h), shared with the other
 * users of host RAM (SISCI segments) so that they never overlap DMA buffers.
 */
struct physmem;
struct physmem *pci_host_physmem(struct pci_host *ph);

#endif
