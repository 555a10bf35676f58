/* SPDX-License-Identifier: MIT */
/*
 * smartiod: one emulated host's hardware and kernel. Its core (core.h: the
 * event loop, connections, peer calls, workers) serves the host's
 * applications and the other hosts' daemons; the services below are what the
 * requests reach. An idle host blocks in its loop and costs no CPU.
 */
#ifndef SMARTIO_DAEMON_H
#define SMARTIO_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core.h"
#include "fabric/route.h"
#include "host/devrun.h"
#include "host/pci.h"
#include "smartio/proto.h"
#include "smartio/topology.h"

/* A virtual machine's RAM taken from this host's (h_vm.c, VM_MEM): its connection's. */
#define SMD_VM_MAX 16
struct smd_vm_mem {
	bool used;
	uint32_t cid, pid;        /* cid 0: its connection closed while a device still
				   * DMAs into it: freed when the last one is returned */
	uint64_t phys, size;
};

/*
 * A device attached to a VM (VM_ATTACH): reserved at its lender while its
 * connection lives, borrowed while the guest has it enabled (h_vm_life.c).
 */
struct smd_vm_dev {
	bool used;
	uint32_t cid, fdid;
	struct pci_dev *pdev;     /* the shadow (no driver binds); NULL while only reserved */
	uint64_t phys;            /* the VM's RAM (smd_vm_mem) */
	uint32_t pid;
	uint64_t msgs;            /* requests its QEMU device made (VM_STATS) */
	uint64_t bus, size;       /* the guest RAM's device address, mapped in our IOMMU */
	uint64_t low;             /* guest RAM below 4 GiB (q35); the rest is at 4 GiB */
	uint32_t borrows;         /* times the guest enabled it */
	uint32_t nvec;            /* MSI-X vectors of the function (its config) */
	uint32_t nbars;           /* its memory BARs */
	uint64_t irqs;            /* interrupts relayed while borrowed before */
};

/* Lender: a function held for a VM on another host (PEER_VM_RESERVE, h_vm_life.c). */
struct smd_vm_resv {
	bool used;
	uint32_t cid, host;       /* the VM's host's daemon connection */
	uint16_t bdf;
};

struct smd {
	const char *dir;
	struct topo *topo;
	struct fab_world world;
	struct fab_host *host;
	uint32_t host_id;
	int listen_fd;
	struct timespec started;
	uint8_t *reply;           /* reply buffer of the handlers the loop runs */
	uint64_t rejected;        /* malformed messages seen */
	struct smd_core *core;    /* loop, connections, calls, workers (core_priv.h) */
	struct devrun_set *devs;  /* device models' threads */
	struct pci_host *pci;     /* the kernel's PCI core */
	struct smd_segs *segs;    /* SISCI segments: exported and imported (h_segment.c) */
	struct smd_intrs *intrs;  /* SISCI interrupts: owned and connected (h_intr.c) */
	struct smd_dma *dma;      /* SISCI DMA queues and the NTBs' DMA engines (h_dma.c) */
	struct smd_devs *devs_pool; /* SmartIO device pool: lent and borrowed (h_device.c) */
	struct smd_lend *lend;    /* Device Lending: lent devices and shadows (h_lend.c) */
	struct smd_diag *diag;    /* event log, counters' zero points (diag.c) */
	struct smd_mc *mc;        /* multicast: broadcast segments, switch registers (h_mcast.c) */
	struct smd_cz *cz;        /* cZodiac: IOPort tables, shared and used functions (h_czodiac.c) */
	struct smd_vm_mem vm_mem[SMD_VM_MAX]; /* virtual machines' RAM (h_vm.c) */
	struct smd_vm_dev vm_dev[SMD_VM_MAX]; /* devices attached to them */
	struct smd_vm_resv vm_resv[SMD_VM_MAX]; /* our functions reserved for others' VMs */
};

/*
 * Multicast service (h_mcast.c): smd_mc_init maps the cluster switches'
 * registers (before the host is built), smd_mc_host_ready clears what an
 * earlier run of this host left there, smd_mc_fini undoes everything.
 */
int smd_mc_init(struct smd *d);
/*
 * The cluster's shared state DIR/NAME (the switches' multicast registers,
 * the cZodiac IOPort tables): created if missing, made size bytes long
 * (zeros), mapped shared into *p. fd_out: keep the descriptor there (NULL:
 * closed). 0 or -errno. bringup.c.
 */
int smd_map_shared_file(struct smd *d, const char *name, size_t size, void **p, int *fd_out);
void smd_mc_host_ready(struct smd *d);
void smd_mc_fini(struct smd *d);
void smd_mc_conn_closed(struct smd *d, struct smd_conn *c);
/*
 * A multicast window of the process c belongs to (MC_CONNECT's handle): the
 * group's address in the switches' range and its size, for a device-side
 * mapping (h_device_brw.c). -ENOENT: not one.
 */
int smd_mc_conn_info(struct smd *d, struct smd_conn *c, uint32_t handle, uint64_t *addr,
		     uint64_t *size);
/* Is segment segid of c subscribed to a group (its removal must wait)? */
bool smd_mc_seg_joined(struct smd *d, struct smd_conn *c, uint32_t segid);

/*
 * Driver requests (h_nvme.c, h_accel.c): payload already validated by the
 * codec; write the reply into out (capacity SMIO_MAX_PAYLOAD) and its length
 * into *outlen. Called with the host lock held. Return 0 or -errno.
 */
int smd_h_nvme_admin(struct smd *d, const void *payload, uint32_t len, void *out,
		     uint32_t *outlen);
int smd_h_nvme_io(struct smd *d, const void *payload, uint32_t len, void *out,
		  uint32_t *outlen);
int smd_h_accel_op(struct smd *d, const void *payload, uint32_t len, void *out,
		   uint32_t *outlen);
int smd_h_accel_launch(struct smd *d, const void *payload, uint32_t len, void *out,
		       uint32_t *outlen);
int smd_h_accel_load(struct smd *d, const void *payload, uint32_t len);
/* P2PMEM_ALLOC/FREE (h_p2pmem.c): p2pmem from the orchestrator's provider,
 * the connection's until freed or closed. */
int smd_h_p2pmem(struct smd *d, struct smd_conn *c, uint16_t type, const void *p, void *out,
		 uint32_t *outlen);
void smd_p2pmem_conn_closed(struct smd *d, struct smd_conn *c);
/* NVME_COPY (h_p2pmem.c): between two controllers, through p2pmem if asked. */
int smd_h_nvme_copy(struct smd *d, const void *p, void *out, uint32_t *outlen);

/*
 * SISCI segment service (h_segment.c). smd_h_segment serves the SEG_*,
 * PEER_SEG_LOOKUP/RELEASE/GONE and PEER_MEMFD types (payload validated; host lock
 * held); a descriptor for the reply goes to *out_fd and stays the daemon's.
 * smd_seg_conn_closed runs for every connection before it is closed: it
 * drops what the connection owned or held (segments, connections, LUT
 * entries, references, cached peer memfds).
 */
int smd_seg_init(struct smd *d);
void smd_seg_fini(struct smd *d);
/* h_segment_link.c: re-check connections' paths after a link change here, or there. */
void smd_seg_links_changed(struct smd *d);
/* h_core.c: a peer's PEER_INVALIDATE (a request, or one-way on our own connection). */
void smd_peer_invalidated(struct smd *d, uint32_t host, const struct smio_invalidate *m);
/* A peer's invalidation carried link_gen: true if its links changed since last heard. */
bool smd_seg_peer_links(struct smd *d, uint32_t host, uint32_t link_gen);
int smd_h_segment(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
		  void *out, uint32_t *outlen, int *out_fd);
void smd_seg_conn_closed(struct smd *d, struct smd_conn *c);
/* SEG_CONNECT, SEG_DISCONNECT, SEG_MAP_REMOTE (h_segment_conn.c): continuations. */
int smd_seg_request(struct smd_req *r);

/*
 * SISCI interrupt service (h_intr.c): the INTR_* and PEER_INTR_* types, as
 * smd_h_segment (the INTR_CREATE reply carries the interrupt's eventfd, which
 * stays the daemon's). smd_intr_conn_closed removes the interrupts and drops
 * the connections a closing connection owned.
 */
int smd_intr_init(struct smd *d);
void smd_intr_fini(struct smd *d);
int smd_h_intr(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
	       void *out, uint32_t *outlen, int *out_fd);
void smd_intr_conn_closed(struct smd *d, struct smd_conn *c);
/* INTR_CONNECT, INTR_TRIGGER: a remote interrupt answers through a continuation. */
int smd_intr_request(struct smd_req *r);

/*
 * For the device service (h_device.c), all with the host lock held:
 * smd_seg_import_bar programs a LUT run to a borrowed device's BAR (at
 * addr/size on host) as a connection of c, SEG_MAP_REMOTE / SEG_DISCONNECT
 * then work on it as on any other; smd_seg_borrow_conns counts those of a
 * borrow. smd_seg_conn_hold pins a connection of c's process (delta +1:
 * the client connection that made it, the segment's host, the memory's bus
 * address there, its size, the adapter it was made through; -1 unpins) so
 * that it cannot be disconnected while a device mapping uses it.
 * smd_seg_local_get takes a reference, held by c, to a segment c's process
 * owns (-ENOENT, -EPERM another process's, -ENXIO empty); smd_seg_local_put
 * drops it.
 */
int smd_seg_import_bar(struct smd *d, struct smd_conn *c, uint32_t borrow, uint32_t host,
		       uint32_t adapter, uint64_t addr, uint64_t size, struct smio_seg_conn *o);
unsigned smd_seg_borrow_conns(struct smd *d, uint32_t borrow);
/*
 * Device segments (h_device.c): smd_seg_dev_create makes an available
 * segment of fresh RAM (io 0) or of the device memory at bus address io (a
 * range of a memory BAR of ours the caller checked) with an automatic id for
 * owner; smd_seg_dev_remove
 * removes it (a connected one lingers, ownerless, until its last reference
 * goes); smd_seg_dev_connect connects c to segment segid of host.
 */
int smd_seg_dev_create(struct smd *d, uint32_t owner, uint64_t io, uint64_t size,
		       uint32_t *segid, uint64_t *rsize);
void smd_seg_dev_remove(struct smd *d, uint32_t owner, uint32_t segid);
int smd_seg_dev_connect(struct smd *d, struct smd_conn *c, uint32_t host, uint32_t segid,
			uint32_t adapter, struct smio_seg_conn *o, uint32_t *outlen);
int smd_seg_conn_hold(struct smd *d, struct smd_conn *c, uint32_t conn, int delta,
		      uint32_t *owner, uint32_t *host, uint64_t *dest, uint64_t *size,
		      uint32_t *adapter);
/* The owner's segment id and our reference of a connection to another host's
 * ordinary segment (-ENOENT: none, e.g. a borrowed device's BAR or local). */
int smd_seg_conn_ref(struct smd *d, uint32_t conn, uint32_t *segid, uint32_t *ref);
/* Is [addr, +size) inside a memory BAR of one of this host's own functions? */
bool smd_in_local_bar(struct smd *d, uint64_t addr, uint64_t size);
int smd_seg_local_get(struct smd *d, struct smd_conn *c, uint32_t segid, uint32_t *ref,
		      uint64_t *phys, uint64_t *size);
void smd_seg_local_put(struct smd *d, uint32_t segid, uint32_t ref, uint32_t cid);

/*
 * SmartIO device service (h_device.c): the DEV_* and PEER_DEV_* types, as
 * smd_h_segment. smd_dev_conn_closed returns what a closing connection
 * borrowed or mapped (a borrower's peer connection: everything it held here).
 */
int smd_dev_init(struct smd *d);
void smd_dev_fini(struct smd *d);
int smd_h_device(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
		 void *out, uint32_t *outlen, int *out_fd);
void smd_dev_conn_closed(struct smd *d, struct smd_conn *c);
/* DEV_LIST, DEV_BORROW, DEV_RETURN (h_device_pool.c): continuations, on the loop. */
int smd_dev_pool_request(struct smd_req *r);

/*
 * Segment facts other services check (h_segment.c; host lock held).
 * smd_seg_local_range: the caller's own, non-empty segment: its bus address
 * and size (-ENOENT, -EPERM, -ENXIO). smd_seg_conn_range: the caller's
 * connection: the address reaching the segment on this host's bus (NTB
 * window, or RAM for a local one), its size and the adapter it goes through
 * (-ENOENT, -EPERM, -ENOLINK when the owner dropped it). smd_seg_peer_memfd:
 * another host's memory object as an fd of the segment service's cache.
 */
int smd_seg_local_range(struct smd *d, uint32_t cid, uint32_t segid, uint64_t *phys,
			uint64_t *size);
int smd_seg_conn_range(struct smd *d, uint32_t cid, uint32_t handle, uint64_t *addr,
		       uint64_t *size, uint32_t *adapter);
int smd_seg_peer_memfd(struct smd *d, uint32_t host, uint32_t mem, int *fd, uint64_t *size);

/*
 * SISCI DMA service (h_dma.c): the DMA_* types (the DMA_QUEUE_CREATE reply
 * carries the queue's completion eventfd, which stays the daemon's).
 * smd_dma_init starts the NTBs' engine threads (host lock held);
 * smd_dma_fini stops them and must run WITHOUT the host lock. What the
 * engines and the device threads cannot do alone (a route step on another
 * host, another host's memory mapped) they hand to a worker
 * (smd_work_call). smd_dma_mem_map: another host's memory mapped for the
 * engines (world ops). smd_dma_busy: does a running transfer touch that
 * local RAM (segment removal refuses then).
 */
int smd_dma_init(struct smd *d);
void smd_dma_fini(struct smd *d);      /* stop the engines; refuse new requests */
void smd_dma_release(struct smd *d);   /* free it all, after the device threads stopped */
/* devrun_ops.access: a device thread's access done by a worker. */
int smd_worker_access(void *arg, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
		      bool write);
int smd_h_dma(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
	      void *out, uint32_t *outlen, int *out_fd);
void smd_dma_conn_closed(struct smd *d, struct smd_conn *c);
/*
 * A forwarded config cycle of a function on another host (a worker): type
 * PEER_LEND_CFG (a borrowed device's, at its lender) or PEER_CZ_CFG (a
 * cZodiac logic device's, at its OWNER); lost: the function is gone
 * (surprise removal), -ENODEV without asking.
 */
int smd_peer_cfg(struct smd *d, uint32_t host, uint16_t type, uint16_t bdf, bool lost,
		 bool write, uint32_t off, uint32_t size, uint32_t *val);
void *smd_dma_mem_map(struct smd *d, uint32_t host, uint32_t mem, uint64_t *size);
/* host's daemon went away (host lock held): its memory objects are remapped
 * when next needed, since a restarted daemon has new ones. */
void smd_dma_peer_lost(struct smd *d, uint32_t host);
/* The same, obtained from its host first if need be (a worker; a shadow
 * device's BAR mapped by its driver). */
void *smd_dma_mem_fetch(struct smd *d, uint32_t host, uint32_t mem, uint64_t *size);
bool smd_dma_busy(struct smd *d, uint64_t phys, uint64_t size);

/*
 * Device Lending (h_lend.c, lend_msi.c): the LEND_* and PEER_LEND_* types,
 * as smd_h_segment. smd_lend_init also starts the thread that delivers lent
 * devices' interrupts. smd_lend_conn_closed runs after smd_dev_conn_closed:
 * a borrower's connection gone reclaims what it borrowed, a lender's gone
 * surprise-removes the shadows (on a worker: their drivers unbind).
 * smd_lend_world_msi is the world's msi op (an interrupt for a borrower,
 * from any thread).
 */
int smd_lend_init(struct smd *d);
void smd_lend_fini(struct smd *d);
int smd_h_lend(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
	       void *out, uint32_t *outlen, int *out_fd);
void smd_lend_conn_closed(struct smd *d, struct smd_conn *c);
/* Virtual machines (h_vm.c, docs/vm.md): VM_MEM; a closed connection frees its RAM. */
int smd_h_vm(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
	     void *out, uint32_t *outlen, int *out_fd);
void smd_vm_conn_closed(struct smd *d, struct smd_conn *c);
/* Lender: the host a VM reserved our function bdf for, else SMIO_LEND_NOBODY. */
uint32_t smd_vm_resv_holder(struct smd *d, uint16_t bdf);
/* Borrower: a VM of ours holds fdid (another borrow of it is refused). */
bool smd_vm_holds(struct smd *d, uint32_t fdid);
/* A peer changed tables (PEER_INVALIDATE): shadows re-check their BAR routes. */
void smd_lend_routes_changed(struct smd *d);
/*
 * cZodiac sharing (h_czodiac.c, docs/czodiac.md): smd_cz_init maps the
 * switches' IOPort tables (DIR/czodiac.iop) as the world's; smd_cz_fini
 * removes the logic devices and unbinds what this host shared. The USER's
 * logic devices: by BDF (lspci, config reads), a share's BDF by FDID (-1).
 */
int smd_cz_init(struct smd *d);
void smd_cz_fini(struct smd *d);
void smd_cz_conn_closed(struct smd *d, struct smd_conn *c);
struct pci_dev *smd_cz_logic_dev(struct smd *d, uint16_t bdf);
int smd_cz_uid(struct smd *d, uint32_t fdid);
void smd_cz_func_list(struct smd *d, struct smio_func_list *o);
/* Our function bdf shared through cZodiac: 0 with its USER and switch, else -ENOENT. */
int smd_cz_shared_with(struct smd *d, uint16_t bdf, uint32_t *user, uint32_t *cswitch);
int smd_lend_world_msi(struct fab_world *w, uint32_t host, uint64_t addr, uint32_t data);
/* Shadow devices in lspci: listed behind the NTB; config reads forwarded (-ENODEV: none). */
void smd_lend_func_list(struct smd *d, struct smio_func_list *o);
int smd_lend_shadow_cfg(struct smd *d, uint16_t bdf, uint32_t off, uint32_t size,
			uint32_t *val);
int smd_lend_shadow_dump(struct smd *d, uint16_t bdf, void *out);
/* For the work keys: fdid's shadow here (-1: none); is bdf a shadow? */
int smd_lend_shadow_bdf(struct smd *d, uint32_t fdid);
bool smd_lend_is_shadow(struct smd *d, uint16_t bdf);
/* [addr, +size) is device memory of a borrowed device: where it is at its lender. */
bool smd_lend_shadow_mem(struct smd *d, uint64_t addr, uint64_t size, uint32_t *lender,
			 uint64_t *laddr);

/* peer.c: the world ops of a daemon (remote steps, invalidation fan-out). */
extern const struct fab_world_ops smd_world_ops;
void smd_route_to_wire(const struct fab_route *r, const struct fab_forward *fwd,
		       struct smio_route_reply *out, uint32_t *len);
/*
 * The same resolution without waiting (loop only): remote steps are peer
 * calls. done(r, route) fills r's reply when the walk ends (route->status
 * says how) and returns the request's status, or SMD_ASYNC if it made a
 * further call (smd_req_call) that will end r. Returns that status when the
 * walk ended at once, or SMD_ASYNC (a continuation finishes r).
 */
int smd_route_async(struct smd_req *r, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		    bool use_cache, int (*done)(struct smd_req *r, struct fab_route *rt));
/*
 * The walk alone (loop only): fn(d, arg, route) runs exactly once when it
 * ends, inside this call or from a continuation; returns 0, or -ENOMEM and
 * fn never runs.
 */
int smd_route_walk(struct smd *d, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		   bool use_cache, void (*fn)(struct smd *d, void *arg, struct fab_route *rt),
		   void *arg);

#endif
