/* SPDX-License-Identifier: MIT */
/*
 * Routing: resolve (host, requester, bus address, length, read|write) to the
 * memory object that backs it and the ordered list of hops the TLPs take.
 *
 * Resolution proceeds one host at a time. A step on one host either ends at a
 * target (RAM, a BAR, an interrupt, or a failure) or leaves through an NTB window towards
 * another host, with the translated address; the world's ops run the next step
 * there (in-process for tests, by a message to the peer daemon in smartiod).
 * Results are cached per origin host at 4 KiB granularity and invalidated by a
 * cluster-wide epoch that every table change advances.
 */
#ifndef SMARTIO_FABRIC_ROUTE_H
#define SMARTIO_FABRIC_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric.h"

#define FAB_MAX_HOPS     40
#define FAB_MAX_NTB_HOPS 6

enum fab_hop_kind {
	FAB_HOP_DEVICE = 1,  /* requester or completer function */
	FAB_HOP_LINK,        /* a PCIe link (gen, width) */
	FAB_HOP_SWITCH,      /* a switch chip, peer-to-peer turn or pass-through */
	FAB_HOP_ROOT,        /* root complex */
	FAB_HOP_IOMMU,       /* IOMMU translation in the root complex */
	FAB_HOP_NTB,         /* NTB adapter (address translation) */
	FAB_HOP_CABLE,       /* external NTB cable */
	FAB_HOP_CSWITCH,     /* cluster switch */
	FAB_HOP_MEMORY,      /* host DRAM completer */
};

struct fab_hop {
	uint8_t kind;        /* enum fab_hop_kind */
	uint8_t gen, width;  /* links and cables */
	uint8_t pad;
	uint16_t host;       /* host id */
	uint16_t bdf;        /* function, where one is involved */
	uint32_t latency_ns; /* chip latency from the topology, 0 if none */
	char name[36];
};

enum fab_status {
	FAB_OK = 0,
	FAB_UR,              /* unsupported request: no one decodes the address */
	FAB_IOMMU_FAULT,
	FAB_LINK_DOWN,       /* writes dropped, reads return all-ones */
	FAB_NTB_REJECT,      /* requester not in the NTB's requester-ID table */
	FAB_HOP_LIMIT,       /* too many NTB hops (a loop) */
	FAB_HOST_DOWN,       /* the next host does not answer */
	FAB_BAD_REQUEST,     /* invalid input (unknown requester, zero length, ...) */
};

enum fab_target_kind {
	FAB_TGT_NONE = 0,
	FAB_TGT_RAM,
	FAB_TGT_BAR,
	FAB_TGT_MSI,         /* a write into the host's MSI window: an interrupt */
	FAB_TGT_MCAST,       /* a posted write into a cluster switch's multicast range:
			      * host = origin, mem = its egress NTB, addr = the
			      * multicast address (mcast.h fans it out) */
};

struct fab_target {
	uint8_t kind;        /* enum fab_target_kind */
	uint8_t bar;         /* FAB_TGT_BAR */
	uint16_t bdf;        /* FAB_TGT_BAR: owning function */
	uint32_t host;       /* host id owning the memory */
	uint32_t mem;        /* memory object index on that host */
	uint32_t pad;
	uint64_t addr;       /* bus/physical address on the target host */
	uint64_t offset;     /* offset in the memory object */
	uint64_t len;        /* bytes from the request address resolved contiguously */
};

struct fab_route {
	int status;          /* enum fab_status */
	char reason[120];    /* human-readable, for failures */
	struct fab_target tgt;
	uint32_t nhops;
	uint32_t ntb_hops;
	bool cached;         /* answered from the cache */
	struct fab_hop hops[FAB_MAX_HOPS];
};

/* Input of one step on one host. */
struct fab_step {
	uint32_t host;       /* host id */
	bool from_ntb;       /* arrived through NTB ntb_index from another host */
	uint32_t ntb_index;
	uint16_t rid;        /* requester (ignored when from_ntb: the NTB's own RID is used) */
	bool write;
	bool mcast;          /* from_ntb: a multicast write; addr is the group's
			      * address, which the NTB's overlay translates */
	/*
	 * from_ntb through a cZodiac IOPort (czodiac_route.h): FAB_CZ_TO_OWNER, a
	 * USER's request remapped into the OWNER's space, decoded from the root
	 * down as where the device's port sits (no IOMMU); FAB_CZ_TO_USER, a
	 * shared function's request, whose requester ID the IOPort remapped to
	 * rid (the UID the USER's IOMMU sees).
	 */
	uint8_t cz;
	uint64_t addr;
	uint64_t len;
};

enum { FAB_CZ_NONE = 0, FAB_CZ_TO_OWNER, FAB_CZ_TO_USER };

/* Step result: done, or forward to another host. */
struct fab_forward {
	bool forward;
	struct fab_step next;
};

/* How a world runs steps and spreads invalidations. */
struct fab_world_ops {
	int (*step)(struct fab_world *w, const struct fab_step *in, struct fab_route *r,
		    struct fab_forward *fwd);
	void (*invalidate)(struct fab_world *w, uint32_t origin_host);
	/* Memory object `mem` of `host` mapped into this process, and its size. */
	void *(*mem_map)(struct fab_world *w, uint32_t host, uint32_t mem, uint64_t *size);
	/* Deliver a message-signalled interrupt that ended on another host. */
	int (*msi)(struct fab_world *w, uint32_t host, uint64_t addr, uint32_t data);
};

struct fab_world {
	const struct topo *topo;
	const struct fab_world_ops *ops;
	uint64_t epoch;      /* advances on every table change anywhere that is known */
	struct fab_mc_state *mc; /* the cluster switches' multicast registers (mcast.h) */
	struct fab_cz_state *cz; /* cZodiac IOPorts (czodiac_route.h); NULL: none */
	void *priv;
};

/* One step on a locally owned host (used by world ops implementations). */
int fab_route_step_local(struct fab_host *h, const struct fab_step *in, struct fab_route *r,
			 struct fab_forward *fwd);

/*
 * A resolution in progress across hosts, for callers that run the steps on
 * other hosts themselves (a daemon's event loop sends them to the peers and
 * returns to its loop meanwhile). fab_resolve_begin() runs what it can on h
 * and returns FAB_RESOLVE_DONE (r is complete, from the cache or not) or
 * FAB_RESOLVE_REMOTE: x->step must run on host x->step.host, and its result
 * (rc < 0: that host did not answer; else fwd as fab_route_step_local gives
 * it, with r extended) goes to fab_resolve_feed(), which again returns DONE
 * or REMOTE. Bounded by FAB_MAX_NTB_HOPS. With use_cache, a successful
 * result is cached tagged with the epoch at begin (stale at once if any table
 * changed meanwhile). The caller holds h's lock in begin and feed, not
 * necessarily in between.
 */
enum { FAB_RESOLVE_DONE = 0, FAB_RESOLVE_REMOTE = 1 };

struct fab_resolve {
	struct fab_host *h;
	struct fab_route *r;
	uint16_t rid;
	bool write, use_cache;
	uint64_t addr, len;  /* as asked */
	uint64_t epoch;      /* the world's epoch at begin */
	unsigned steps;      /* forwarded steps so far */
	struct fab_step step;/* FAB_RESOLVE_REMOTE: the step to run */
};

int fab_resolve_begin(struct fab_resolve *x, struct fab_host *h, uint16_t rid, uint64_t addr,
		      uint64_t len, bool write, bool use_cache, struct fab_route *r);
int fab_resolve_feed(struct fab_resolve *x, int rc, const struct fab_forward *fwd);

/* Full resolution from host h, with the route cache. Returns 0 (see r->status). */
int fab_route_resolve(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len,
		      bool write, struct fab_route *r);
/* The same without consulting or filling the cache. */
int fab_route_resolve_uncached(struct fab_host *h, uint16_t rid, uint64_t addr,
			       uint64_t len, bool write, struct fab_route *r);

/*
 * Perform an access as the hardware does: resolve (cached), then move the
 * bytes to or from the backing memory, segment by segment; a 4-byte write
 * that ends in an MSI window raises that host's interrupt. The caller holds
 * h's lock. When a segment
 * fails (unsupported request, IOMMU fault, link down) writes to it are dropped
 * and reads return all-ones, as on PCIe. Returns 0 when every byte reached its
 * target, else the first enum fab_status met (> 0), or -errno.
 */
int fab_access(struct fab_host *h, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
	       bool write);

/*
 * The memory a resolved target lives in, mapped into this process (this
 * host's objects directly, another host's through the world's mem_map), and
 * the object's size; NULL if it cannot be mapped here.
 */
void *fab_target_map(struct fab_host *h, const struct fab_target *t, uint64_t *size);

/*
 * Where an access would land, without moving anything: for a route that ends
 * in memory (RAM or a BAR), *ptr is the first byte mapped into this process
 * and *n (<= len) how many bytes from addr are contiguous there, and in *kind
 * (unless NULL) the fab_target_kind (RAM or BAR). Returns 0, a
 * fab_status (> 0) for a failed route, -ENOTSUP for a target that is not
 * memory (an MSI window), or -errno (-EREMOTE: not mappable here). The caller
 * holds h's lock; the pointer stays valid as long as the mapping (the
 * process's, or until the world's mem_map objects are released), and the
 * translation as long as the world's epoch does not change. *reads (if
 * reads is not NULL): for a read of a BAR of this host, the counter the
 * caller adds the bytes it reads to (fab_mem.dma_reads), else NULL. *ram_idx
 * (may be NULL): fab_ram_index of the target, for the caller's fab_count_ram.
 */
int fab_access_map(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		   uint8_t **ptr, uint64_t *n, uint64_t **reads, int *ram_idx);

/*
 * The DMA byte counter of RAM (fab_host.ram_dma): fab_ram_index is the
 * topology index of the host whose RAM t is, or -1 for anything else (a BAR,
 * an MSI window); fab_count_ram adds n bytes there (idx -1: nothing). For
 * those that move bytes themselves after fab_access_map (*ram_idx).
 */
int fab_ram_index(const struct fab_host *h, const struct fab_target *t);
static inline void fab_count_ram(struct fab_host *h, int idx, uint64_t n)
{
	if (idx >= 0)
		__atomic_fetch_add(&h->ram_dma[idx], n, __ATOMIC_RELAXED);
}

/*
 * The data path of an access, for callers that move bytes themselves: a
 * write publishes its last bytes with release stores in address order (a
 * completion entry's phase tag, a status word), a read acquires first.
 */
void fab_copy_to_mem(void *dst, const void *src, uint64_t n);
void fab_copy_from_mem(void *dst, const void *src, uint64_t n);

/*
 * Device threads (device models, DMA engines: "workers" of the fabric) access
 * it too, but never talk to other daemons: a step that would need a peer
 * fails on such a thread, which then asks its daemon (one of the daemon's own
 * worker threads) to prepare or make the access.
 */
void fab_thread_set_worker(void);
bool fab_thread_is_worker(void);

/* Hops on the cable between two hosts' NTBs (through cluster switches, if any). */
int fab_cable_hops(const struct topo *t, uint32_t src_host_index, uint32_t src_ntb,
		   uint32_t dst_host_index, uint32_t *dst_ntb, struct fab_route *r);

struct fab_route_cache *fab_route_cache_create(unsigned entries);
void fab_route_cache_destroy(struct fab_route_cache *c);
void fab_route_cache_stats(const struct fab_route_cache *c, uint64_t *hits, uint64_t *misses);

const char *fab_status_str(int status);
const char *fab_hop_kind_str(int kind);
/* Append a hop; false if the list is full (then r->status = FAB_HOP_LIMIT). */
bool fab_route_push(struct fab_route *r, const struct fab_hop *hop);

/* An in-process world holding every host of a topology (tests, benchmarks, tools). */
struct fab_cluster {
	struct fab_world w;
	struct fab_host **hosts;   /* by topology index */
	uint32_t nhosts;
};
int fab_cluster_create(const struct topo *t, fab_endpoint_init_fn ep_init,
		       struct fab_cluster **out, char *err, size_t errlen);
void fab_cluster_destroy(struct fab_cluster *c);
struct fab_host *fab_cluster_host(struct fab_cluster *c, uint32_t host_id);

#endif
