/* SPDX-License-Identifier: MIT */
/*
 * The hardware model of one emulated host: its RAM, its PCIe tree of
 * functions (host bridge, root ports, switch ports, endpoints, NTB adapters)
 * with their config spaces, its NTB adapters' translation tables and its
 * IOMMU. Mechanism only: software (src/host) enumerates and programs it
 * through config accesses and table operations, exactly as on hardware.
 */
#ifndef SMARTIO_FABRIC_H
#define SMARTIO_FABRIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smartio/topology.h"
#include "cfg.h"
#include "intc.h"

struct fab_host;
struct fab_ntb;
struct fab_iommu;
struct fab_world;
struct ntb_host;          /* src/host/ntb_drv.h */

#define FAB_BDF(bus, dev, fn) ((uint16_t)(((bus) << 8) | ((dev) << 3) | (fn)))
#define FAB_BDF_BUS(b)  ((unsigned)((b) >> 8) & 0xff)
#define FAB_BDF_DEV(b)  ((unsigned)((b) >> 3) & 0x1f)
#define FAB_BDF_FN(b)   ((unsigned)(b) & 0x7)
#define FAB_RID_CPU     0x0000u   /* the host bridge 00:00.0 issues CPU requests */

#define FAB_PAGE_SIZE   4096ull
#define FAB_MAX_FUNCS   256       /* per host */
#define FAB_MAX_MEMS    512       /* memory objects per host */

enum fab_func_kind {
	FAB_FN_HOSTBRIDGE,
	FAB_FN_ROOTPORT,
	FAB_FN_SW_UP,
	FAB_FN_SW_DOWN,
	FAB_FN_ENDPOINT,
	FAB_FN_NTB,
};

struct fab_bar {
	bool present;
	bool is64;
	bool prefetch;
	uint64_t size;
	int mem;                 /* backing memory object, or -1 (e.g. NTB LUT windows) */
};

struct fab_func {
	struct fab_host *host;
	enum fab_func_kind kind;
	uint8_t dev, fn;         /* device/function number on the parent's secondary bus */
	char name[TOPO_NAME_MAX];
	char model[TOPO_MODEL_MAX];
	struct fab_cfg cfg;
	struct fab_bar bars[6];
	struct topo_link link;   /* link to the parent port (endpoints, upstream ports) */
	uint32_t latency_ns;     /* switch chip latency (switch ports) */
	bool lendable;
	struct fab_func *parent; /* the bridge whose secondary bus holds this function */
	struct fab_func **children;
	uint32_t nchildren;
	struct fab_ntb *ntb;     /* FAB_FN_NTB */
	const struct topo_device *tdev; /* FAB_FN_ENDPOINT */
	uint32_t index;          /* position in host->funcs */
	uint32_t flr_seq;        /* atomic: FLRs initiated (flr.c); the model thread follows */
	uint32_t flr_done;       /* atomic: the flr_seq its model has finished resetting to */
	/*
	 * SR-IOV (sriov.c). A PF: its SR-IOV capability's offset and its
	 * TotalVFs virtual functions (built with it, present only while VF
	 * Enable is set and their number is at most NumVFs). A VF: its PF and
	 * its number n (1-based), from which its routing ID and BARs follow.
	 */
	uint16_t sriov_cap;
	uint16_t sriov_first_off; /* First VF Offset the device layout gives (host.c) */
	uint16_t total_vfs;
	struct fab_func **vfs;
	struct fab_func *pf;
	uint16_t vf_index;
};

/* A memory object: a memfd that backs host RAM or a BAR. */
struct fab_mem {
	int fd;
	uint64_t size;
	char name[48];
	uint16_t owner_bdf_index; /* index of the owning function (BARs), 0 for RAM */
	uint8_t bar;
	bool is_ram;
	void *map;               /* this process's shared mapping, made on first use */
};

struct fab_host {
	struct fab_world *world;
	const struct topo *topo;
	const struct topo_host *t;
	uint32_t id;             /* topology host id */
	uint32_t index;          /* index in topo->hosts */
	struct fab_func *funcs[FAB_MAX_FUNCS];
	uint32_t nfuncs;
	struct fab_func *rc;     /* host bridge 00:00.0 */
	struct fab_mem mems[FAB_MAX_MEMS];
	uint32_t nmems;
	struct fab_ntb **ntbs;   /* in topo_for_each_ntb order */
	uint32_t nntbs;
	struct fab_iommu *iommu;
	struct fab_route_cache *cache;
	uint64_t low_ram, high_ram; /* RAM below 4 GiB and above (starting at 4 GiB) */
	struct fab_intc intc;    /* message-signalled interrupts arriving at this host */
	/*
	 * Link changes of this host's NTB adapters so far: with the epoch, in the
	 * invalidations peers hear, so that they re-check what crosses a link.
	 */
	uint32_t link_gen;
	/*
	 * Bytes that DMA by this host's devices (requests with a function's
	 * RID, not the CPU's) moved to or from RAM, any host's: what shows that
	 * a peer-to-peer transfer bypassed memory. Relaxed atomic adds.
	 */
	uint64_t dma_ram_bytes;
	/*
	 * Serialises everything that reads or changes this host's tables and
	 * caches: the daemon's request handlers and the device models' DMA.
	 * Recursive, since a handler may resolve routes while holding it.
	 */
	pthread_mutex_t lock;
	unsigned lock_depth;     /* how often the owner holds it (owner only) */
	/*
	 * The host OS's NTB drivers (src/host/ntb_drv.h), set at NTB bring-up;
	 * opaque here. fab_host_destroy hands them to ntb_release first.
	 */
	struct ntb_host *ntb_os;
	void (*ntb_release)(struct ntb_host *nh);
};

static inline void fab_host_lock(struct fab_host *h)
{
	pthread_mutex_lock(&h->lock);
	h->lock_depth++;
}

static inline void fab_host_unlock(struct fab_host *h)
{
	h->lock_depth--;
	pthread_mutex_unlock(&h->lock);
}

/*
 * Let go of the host lock completely, however deep this thread holds it, and
 * take it back as deep as before: for a thread that waits (a driver for its
 * device, whose thread needs the lock to make progress; a daemon worker for
 * a peer), so that everyone else goes on meanwhile. Call only while holding it.
 */
static inline unsigned fab_host_unlock_all(struct fab_host *h)
{
	unsigned depth = h->lock_depth;

	for (unsigned i = 0; i < depth; i++)
		fab_host_unlock(h);
	return depth;
}

static inline void fab_host_relock(struct fab_host *h, unsigned depth)
{
	for (unsigned i = 0; i < depth; i++)
		fab_host_lock(h);
}

/* Fills in an endpoint's identity, BARs and capabilities (the device layer). */
typedef int (*fab_endpoint_init_fn)(struct fab_func *fn, const struct topo_device *td,
				    char *err, size_t errlen);

/*
 * Build a host's hardware from its topology: RAM memfd, functions, config
 * spaces, BAR backing memory, NTB adapters and IOMMU. Nothing is enumerated:
 * bus numbers, BARs and windows are zero until software programs them.
 */
int fab_host_create(struct fab_world *w, const struct topo *t, uint32_t host_index,
		    fab_endpoint_init_fn ep_init, struct fab_host **out,
		    char *err, size_t errlen);
void fab_host_destroy(struct fab_host *h);

/* Configuration cycles, routed by the bus numbers software has programmed. */
int fab_cfg_access_read(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size,
			uint32_t *val);
int fab_cfg_access_write(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size,
			 uint32_t val);
/* The function answering config cycles at bdf, or NULL (master abort). */
struct fab_func *fab_func_by_bdf(struct fab_host *h, uint16_t bdf);
/* Current BDF of a function (from its parent's programmed secondary bus; a VF's
 * from its PF's: PF RID + First VF Offset + (n - 1) * VF Stride). */
uint16_t fab_func_bdf(const struct fab_func *fn);
/* Does fn answer config cycles now? Always, except a VF that is not enabled. */
bool fab_func_present(const struct fab_func *fn);
struct fab_func *fab_func_by_name(struct fab_host *h, const char *name);

/* Bridges: decoded windows from the programmed config registers. */
struct fab_window { uint64_t base, limit; }; /* empty when base > limit */
void fab_bridge_windows(const struct fab_func *br, struct fab_window *mem,
			struct fab_window *pref);
bool fab_bridge_bus_range(const struct fab_func *br, uint8_t *sec, uint8_t *sub);
/* A function's BAR address as programmed (0 if unassigned or decoding disabled). */
uint64_t fab_func_bar_addr(const struct fab_func *fn, unsigned bar);
bool fab_func_mem_enabled(const struct fab_func *fn);
bool fab_func_bus_master(const struct fab_func *fn);

/* Memory objects. */
int fab_mem_create(struct fab_host *h, const char *name, uint64_t size, bool is_ram);
/* The memory object mapped into this process (MAP_SHARED), or NULL. Thread-safe. */
void *fab_mem_map(struct fab_host *h, uint32_t mem);
/* Physical address → RAM object offset; false if not RAM. */
bool fab_ram_offset(const struct fab_host *h, uint64_t paddr, uint64_t *off, uint64_t *contig);

/* Called after any change that can alter a resolved route on this host. */
void fab_host_tables_changed(struct fab_host *h);

#endif
