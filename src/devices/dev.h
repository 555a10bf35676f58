/* SPDX-License-Identifier: MIT */
/*
 * The device-model interface: how a model (NVMe controller, accelerator, ...)
 * sees its function and the bus, and how the host runs it.
 *
 * A model behaves like hardware. Its BARs are plain shared memory that the
 * host's software maps and stores into; the model notices by polling (the
 * brief: device models poll their doorbell registers). It reaches memory
 * only by bus-master DMA at bus addresses through dev_bus_ops (the fabric
 * translates: IOMMU, switches, NTBs), and it interrupts by a DMA write of its
 * MSI-X table entry's data to the entry's address.
 *
 * Threading: poll() runs on the model's own thread; create/destroy/reset
 * run with that thread stopped. Nothing else calls into a model.
 */
#ifndef SMARTIO_DEVICES_DEV_H
#define SMARTIO_DEVICES_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smartio/topology.h"

struct timing_params;
struct timing_hop;

/* Result of a DMA: 0, or a positive fabric status (fab_status: 1 unsupported
 * request, 2 IOMMU fault, 3 link down, ...) after which reads returned
 * all-ones and writes were dropped, or a negative errno (internal error). */
struct dev_bus_ops {
	int (*dma_read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*dma_write)(void *ctx, uint64_t addr, const void *buf, size_t len);
	/* The function's config space as software left it (command register, MSI-X control). */
	uint32_t (*cfg_read)(void *ctx, uint32_t off, uint32_t size);
	/*
	 * Timing-faithful mode (docs/timing-model.md): the hops an access of the
	 * function to addr takes now, requester first, as the timing model
	 * reads them. Returns the number written, or a negative errno (-EAGAIN:
	 * not resolvable on the device's thread right now, e.g. a route through
	 * another host that is not cached yet). NULL when the bus has no routes.
	 */
	int (*path)(void *ctx, uint64_t addr, bool write, struct timing_hop *hops, unsigned cap);
	/* Changes whenever any route may have changed (hop lists go stale). */
	uint64_t (*route_epoch)(void *ctx);
};

struct dev_func {
	uint8_t *bar[6];            /* mapped BAR memory (NULL if absent / not backed) */
	uint64_t bar_size[6];
	/* The memfd behind each BAR, for a model that hands its memory to another
	 * process (accelerator kernels); 0: none (plain memory, as in unit tests). */
	int bar_fd[6];
	uint16_t bdf;
	uint16_t msix_cap;          /* config offset of the MSI-X capability, 0 if none */
	const struct topo_device *td; /* name, model, params from the topology */
	/* SR-IOV: 0 for a PF or an ordinary function, n >= 1 for VF n of a PF
	 * (which shares td with it); total_vfs is the PF's TotalVFs. */
	uint16_t vf_index;
	uint16_t total_vfs;
	const struct dev_bus_ops *bus;
	void *bus_ctx;
	/* Timing-faithful mode: the calibration to answer by; NULL: as fast as
	 * the emulation goes (the default). */
	const struct timing_params *timing;
};

/*
 * What a function counts as it works, for diagnostics (smartio diag): kept by
 * the model's own thread with relaxed atomic adds (no lock on the data path),
 * read and cleared by the daemon at any time with relaxed loads and stores.
 * Which slots a model uses is its own: NVMe counts completions by kind,
 * bytes moved by Read/Write and error completions; the accelerator counts
 * descriptors (ops), their bytes and the failed ones. DMA faults (a DMA that
 * ended in a fabric error) and MSI-X messages sent per vector are counted for
 * every model by dev_dma_* and msix.c.
 */
enum dev_stat {
	DEV_ST_ADMIN,               /* NVMe admin commands completed */
	DEV_ST_READ,                /* NVMe Read commands completed */
	DEV_ST_WRITE,               /* NVMe Write commands completed */
	DEV_ST_OTHER,               /* other NVMe I/O commands completed */
	DEV_ST_ERRORS,              /* completions with an error status */
	DEV_ST_BYTES_READ,          /* NVMe: data read from media; accel: bytes processed */
	DEV_ST_BYTES_WRITTEN,       /* NVMe: data written to media */
	DEV_ST_OPS,                 /* accel: descriptors completed */
	DEV_ST_DMA_FAULTS,          /* DMAs that ended in a fabric error */
	DEV_ST_FLRS,                /* function level resets done (src/host/devrun.c) */
	DEV_ST_COUNT
};
#define DEV_STATS_VECS 64           /* vectors counted one by one; the rest in irq_other */

struct dev_stats {
	uint64_t v[DEV_ST_COUNT];
	uint64_t irq[DEV_STATS_VECS];
	uint64_t irq_other;
};

struct dev_instance {
	const struct dev_model_ops *ops;
	struct dev_func fn;
	void *state;                /* the model's own */
	struct dev_stats stats;     /* counters (above) */
	/*
	 * Set by poll() when work is waiting for a time (a completion held back
	 * to the model's latency): the CLOCK_MONOTONIC ns it falls due, 0 if
	 * none. The runner then sleeps until shortly before it instead of
	 * spinning or backing off (devrun.c).
	 */
	uint64_t wake_ns;
};

static inline void dev_stat_add(struct dev_instance *d, enum dev_stat s, uint64_t n)
{
	__atomic_fetch_add(&d->stats.v[s], n, __ATOMIC_RELAXED);
}

struct dev_model_ops {
	const char *name;           /* "nvme", "accel", "test" */
	/* Allocate state and put registers in their reset values. */
	int (*create)(struct dev_instance *d, char *err, size_t errlen);
	void (*destroy)(struct dev_instance *d);
	/*
	 * One pass over registers, doorbells and queues. Returns > 0 if it did
	 * work (the runner keeps spinning), 0 when idle (the runner backs off).
	 */
	int (*poll)(struct dev_instance *d);
	/* Function-level / conventional reset: registers back to reset values. */
	void (*reset)(struct dev_instance *d);
};

static inline bool dev_bus_master(const struct dev_instance *d)
{
	return d->fn.bus->cfg_read(d->fn.bus_ctx, 0x04, 2) & 0x4;   /* PCI_COMMAND_MASTER */
}

static inline int dev_dma_read(const struct dev_instance *d, uint64_t addr, void *buf, size_t len)
{
	int rc = d->fn.bus->dma_read(d->fn.bus_ctx, addr, buf, len);

	if (rc)
		__atomic_fetch_add((uint64_t *)&d->stats.v[DEV_ST_DMA_FAULTS], 1, __ATOMIC_RELAXED);
	return rc;
}

static inline int dev_dma_write(const struct dev_instance *d, uint64_t addr, const void *buf,
				size_t len)
{
	int rc = d->fn.bus->dma_write(d->fn.bus_ctx, addr, buf, len);

	if (rc)
		__atomic_fetch_add((uint64_t *)&d->stats.v[DEV_ST_DMA_FAULTS], 1, __ATOMIC_RELAXED);
	return rc;
}

/* Little-endian register access to BAR memory, safe against concurrent stores
 * by software (relaxed atomics: each access is one load or store). */
static inline uint32_t dev_reg32(const struct dev_instance *d, unsigned bar, uint64_t off)
{
	return __atomic_load_n((const uint32_t *)(d->fn.bar[bar] + off), __ATOMIC_ACQUIRE);
}

static inline uint64_t dev_reg64(const struct dev_instance *d, unsigned bar, uint64_t off)
{
	return __atomic_load_n((const uint64_t *)(d->fn.bar[bar] + off), __ATOMIC_ACQUIRE);
}

static inline void dev_set_reg32(struct dev_instance *d, unsigned bar, uint64_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(d->fn.bar[bar] + off), v, __ATOMIC_RELEASE);
}

static inline void dev_set_reg64(struct dev_instance *d, unsigned bar, uint64_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(d->fn.bar[bar] + off), v, __ATOMIC_RELEASE);
}

/*
 * MSI-X (msix.c): signal vector v. Honours MSI-X Enable and Function Mask in
 * config space and the entry's mask bit in the table; a masked vector sets
 * its pending bit in the PBA instead, and dev_msix_poll_pending() delivers
 * pending vectors once unmasked. Returns 0 (delivered or left pending),
 * -ENOENT if v is beyond the table, -EPERM if MSI-X is disabled, or the DMA
 * result of the message write.
 */
int dev_msix_notify(struct dev_instance *d, unsigned v);
int dev_msix_poll_pending(struct dev_instance *d);

/* Parameters from the topology (params: key/value). */
const char *dev_param(const struct dev_instance *d, const char *key);
/* Size/number parameter with default; -EINVAL with a message in err on junk. */
int dev_param_u64(const struct dev_instance *d, const char *key, uint64_t def, uint64_t *out,
		  char *err, size_t errlen);

/* The model registry (models.c). */
const struct dev_model_ops *dev_model_ops_find(const char *name);

#endif
