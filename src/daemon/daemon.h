/* SPDX-License-Identifier: MIT */
/*
 * smartiod: one emulated host's hardware and kernel. A single-threaded poll()
 * loop serves the host's applications and the other hosts' daemons; it
 * blocks in poll() when nothing happens, so an idle cluster costs no CPU.
 */
#ifndef SMARTIO_DAEMON_H
#define SMARTIO_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "fabric/route.h"
#include "host/devrun.h"
#include "host/pci.h"
#include "smartio/proto.h"
#include "smartio/topology.h"

#define SMD_MAX_CONNS      512
#define SMD_PEER_TIMEOUT   3000   /* ms for a peer to answer one step */
#define SMD_CLIENT_TIMEOUT 2000   /* ms for the rest of a started message */

struct smd_conn {
	int fd;
	uint8_t *in;              /* a message being assembled (header + payload) */
	uint32_t have;            /* bytes of it received so far */
	int in_fd;                /* descriptor that came with it, or -1 */
	/* outgoing: the reply a peer step waits for */
	bool waiting, replied;
	uint32_t wait_seq;
	struct smio_hdr *wait_hdr;
	void *wait_buf;
	uint32_t wait_cap;
	int *wait_fd;             /* where a descriptor with the reply goes (NULL: closed) */
	uint32_t cid;             /* unique per connection over the daemon's life (never 0):
				   * what owns segments and holds references */
	uint32_t role;            /* enum smio_role; 0 until HELLO */
	uint32_t host;            /* peers: their host id */
	uint32_t pid;
	bool outgoing;            /* we connected to a peer (for PEER_STEP) */
};

struct smd {
	const char *dir;
	struct topo *topo;
	struct fab_world world;
	struct fab_host *host;
	uint32_t host_id;
	int listen_fd;
	int signal_fd;
	bool stop;
	struct smd_conn conns[SMD_MAX_CONNS];
	unsigned nconns;
	struct timespec started;
	uint8_t *buf;             /* one message buffer (SMIO_MAX_PAYLOAD) */
	uint8_t *reply;           /* reply buffer of the handler being run */
	uint8_t *peer_reply;      /* a peer's answer to our step (kept apart from
				   * reply: other peers are served while we wait) */
	uint64_t rejected;        /* malformed messages seen */
	struct devrun_set *devs;  /* device models' threads */
	struct pci_host *pci;     /* the kernel's PCI core */
	uint32_t next_cid;        /* last connection id handed out */
	struct smd_segs *segs;    /* SISCI segments: exported and imported (h_segment.c) */
	struct smd_intrs *intrs;  /* SISCI interrupts: owned and connected (h_intr.c) */
	struct smd_dma *dma;      /* SISCI DMA queues and the NTBs' DMA engines (h_dma.c) */
	struct smd_devs *devs_pool; /* SmartIO device pool: lent and borrowed (h_device.c) */
	struct smd_lend *lend;    /* Device Lending: lent devices and shadows (h_lend.c) */
};

/* server.c */
int smd_serve(struct smd *d);
void smd_close_conn(struct smd *d, unsigned idx);
/*
 * Read what has arrived on conns[idx] without blocking and act on every
 * complete message. A sender that stops half-way only holds its own slot:
 * the loop never waits for it.
 */
void smd_conn_input(struct smd *d, unsigned idx);
int smd_add_conn(struct smd *d, int fd, bool outgoing, uint32_t role, uint32_t host);
/* Handle one request that arrived on conns[idx] (already validated). */
int smd_dispatch(struct smd *d, unsigned idx, const struct smio_hdr *h, const void *payload,
		 int fd);

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
int smd_h_segment(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
		  void *out, uint32_t *outlen, int *out_fd);
void smd_seg_conn_closed(struct smd *d, unsigned idx);

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
void smd_intr_conn_closed(struct smd *d, unsigned idx);

/*
 * For the device service (h_device.c), all with the host lock held:
 * smd_seg_import_bar programs a LUT run to a borrowed device's BAR (at
 * addr/size on host) as a connection of c, SEG_MAP_REMOTE / SEG_DISCONNECT
 * then work on it as on any other; smd_seg_borrow_conns counts those of a
 * borrow. smd_seg_conn_hold pins one of c's connections (delta +1: its
 * owner, the memory's bus address at the owner, its size; -1 unpins) so that
 * it cannot be disconnected while a device mapping uses it.
 * smd_seg_local_get takes a reference to a segment c owns (-ENOENT, -EPERM,
 * -ENXIO empty); smd_seg_local_put drops it.
 */
int smd_seg_import_bar(struct smd *d, struct smd_conn *c, uint32_t borrow, uint32_t host,
		       uint32_t adapter, uint64_t addr, uint64_t size, struct smio_seg_conn *o);
unsigned smd_seg_borrow_conns(struct smd *d, uint32_t borrow);
/*
 * Device segments (h_device.c): smd_seg_dev_create makes an available
 * segment of fresh RAM with an automatic id for owner; smd_seg_dev_remove
 * removes it (a connected one lingers, ownerless, until its last reference
 * goes); smd_seg_dev_connect connects c to segment segid of host.
 */
int smd_seg_dev_create(struct smd *d, uint32_t owner, uint64_t size, uint32_t *segid,
		       uint64_t *rsize);
void smd_seg_dev_remove(struct smd *d, uint32_t owner, uint32_t segid);
int smd_seg_dev_connect(struct smd *d, struct smd_conn *c, uint32_t host, uint32_t segid,
			uint32_t adapter, struct smio_seg_conn *o, uint32_t *outlen);
int smd_seg_conn_hold(struct smd *d, struct smd_conn *c, uint32_t conn, int delta,
		      uint32_t *host, uint64_t *dest, uint64_t *size);
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
void smd_dev_conn_closed(struct smd *d, unsigned idx);

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
 * smd_dma_fini stops them and must run WITHOUT the host lock. The event loop
 * polls smd_dma_fd and calls smd_dma_service when it is readable (the
 * engines' questions that need peers). smd_dma_mem_map: another host's
 * memory mapped for the engines (world ops). smd_dma_busy: does a running
 * transfer touch that local RAM (segment removal refuses then).
 */
int smd_dma_init(struct smd *d);
void smd_dma_fini(struct smd *d);      /* stop the engines; refuse new requests */
void smd_dma_release(struct smd *d);   /* free it all, after the device threads stopped */
/* devrun_ops.access: a worker thread's access done by the main thread. */
int smd_worker_access(void *arg, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
		      bool write);
int smd_h_dma(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
	      void *out, uint32_t *outlen, int *out_fd);
void smd_dma_conn_closed(struct smd *d, unsigned idx);
int smd_dma_fd(const struct smd *d);
void smd_dma_service(struct smd *d);
void *smd_dma_mem_map(struct smd *d, uint32_t host, uint32_t mem, uint64_t *size);
/* The same, obtained from its host first if need be (main thread; a shadow
 * device's BAR mapped by its driver). */
void *smd_dma_mem_fetch(struct smd *d, uint32_t host, uint32_t mem, uint64_t *size);
bool smd_dma_busy(struct smd *d, uint64_t phys, uint64_t size);

/*
 * Device Lending (h_lend.c, lend_svc.c): the LEND_* and PEER_LEND_* types, as
 * smd_h_segment. smd_lend_init also starts the wait service (peers are served
 * while a driver on the main thread waits for a borrowed device) and the
 * thread that delivers lent devices' interrupts. smd_lend_conn_closed runs
 * after smd_dev_conn_closed: a borrower's connection gone reclaims what it
 * borrowed, a lender's gone removes the shadows. smd_lend_world_msi is the
 * world's msi op (an interrupt for a borrower, from any thread).
 */
int smd_lend_init(struct smd *d);
void smd_lend_fini(struct smd *d);
int smd_h_lend(struct smd *d, struct smd_conn *c, uint16_t type, const void *payload,
	       void *out, uint32_t *outlen, int *out_fd);
void smd_lend_conn_closed(struct smd *d, unsigned idx);
int smd_lend_world_msi(struct fab_world *w, uint32_t host, uint64_t addr, uint32_t data);
/* Shadow devices in lspci: listed behind the NTB; config reads forwarded (-ENODEV: none). */
void smd_lend_func_list(struct smd *d, struct smio_func_list *o);
int smd_lend_shadow_cfg(struct smd *d, uint16_t bdf, uint32_t off, uint32_t size,
			uint32_t *val);
int smd_lend_shadow_dump(struct smd *d, uint16_t bdf, void *out);

/*
 * peer.c: one request to another host's daemon over our (cached) peer
 * connection, waiting for its reply while serving other peers meanwhile (as
 * remote route steps do). The reply payload goes to rbuf (cap), its length to
 * *rlen, a descriptor passed with it to *fd (-1 if none; closed if fd is
 * NULL). Returns 0, the peer's negative status, -EPROTO for a reply of the
 * wrong type/size, or -EHOSTDOWN when the peer cannot be reached or does not
 * answer in SMD_PEER_TIMEOUT (the connection is then closed). Called with the
 * host lock held; the caller must not keep pointers into tables that other
 * peers' requests may change while it waits.
 */
int smd_peer_request(struct smd *d, uint32_t host, uint16_t type, const void *req,
		     uint32_t len, void *rbuf, uint32_t cap, uint32_t *rlen, int *fd);
/*
 * Send a request on an existing connection to host without waiting (its reply
 * is dropped on arrival): for clean-up paths that cannot wait. -ENOTCONN if
 * there is no connection (for PEER_SEG_RELEASE: the peer has already dropped
 * everything that connection held).
 */
int smd_peer_post(struct smd *d, uint32_t host, uint16_t type, const void *req,
		  uint32_t len);

/* peer.c: the world ops of a daemon (remote steps, invalidation fan-out). */
extern const struct fab_world_ops smd_world_ops;
void smd_route_to_wire(const struct fab_route *r, const struct fab_forward *fwd,
		       struct smio_route_reply *out, uint32_t *len);

#endif
