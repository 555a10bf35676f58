/* SPDX-License-Identifier: MIT */
/*
 * libsmartio-nvme: a userspace NVMe driver on libsisci that shares one NVMe
 * controller among many hosts at queue level (SmartIO paper sec. 6.2).
 *
 * One process per controller is the *manager*: it borrows the device
 * exclusively, resets it, owns the admin queues, and then releases the borrow
 * to shared so clients can borrow too. It serves admin requests from clients
 * over a SISCI data-interrupt RPC channel, hands out I/O queue IDs, checks
 * every relayed command and reclaims the queues of clients that go away.
 *
 * Any number of *clients* on any hosts borrow the device shared, map its
 * doorbells, allocate their queue memory as SISCI device segments, ask the
 * manager for queue pairs, and then submit I/O directly: neither the manager
 * nor any daemon is on the data path.
 *
 * Programs run as programs of a smartio host (SMARTIO_HOST, `smartio exec`).
 *
 * Errors: functions return 0 or a negative errno. Where a message helps,
 * `err`/`errlen` receive one line saying what went wrong and what to do.
 * NVMe command outcomes are reported as the 15-bit status field (no phase
 * tag; libnvme's layout: NVME_SC_* | NVME_SCT_* << 8) in completions, or as a
 * positive return where a call runs one command and says so.
 *
 * Threading: a manager, a client and each queue pair are used by one thread
 * at a time (distinct queue pairs of one client may be driven by distinct
 * threads; admin calls on a client are serialised internally).
 */
#ifndef SMARTIO_NVME_H
#define SMARTIO_NVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Default data-interrupt number of a controller's RPC channel at the
 * manager's host: derived from the fabric device ID (node ID < 256, so 24
 * bits hold it) so clients find it. */
#define SNV_CHANNEL_INTNO(fdid)   (0x4e000000u | ((fdid) & 0x00ffffffu))

/* Where a queue's memory lives. */
enum snv_place {
	SNV_PLACE_DEFAULT = 0,    /* SQ near the device, CQ near the CPU (access hints) */
	SNV_PLACE_DEVICE,         /* the lender's RAM (next to the controller) */
	SNV_PLACE_HOST,           /* the client's host RAM */
	SNV_PLACE_CMB,            /* the controller memory buffer (SQs only), see below */
	SNV_PLACE_ACCEL,          /* an accelerator's memory (SQs only), see below */
};
/*
 * SNV_PLACE_CMB: the SQ lives in the controller's CMB (CMBLOC/CMBSZ). The
 * manager owns the CMB and allocates each SQ a page-granular region of it
 * (freed when the queue pair is deleted or its client reclaimed); the client
 * maps the CMB's BAR and writes SQEs there (posted writes to device memory).
 * snv_qpair_create returns -ENOTSUP when the controller has no CMB (or none
 * for SQs) and for a CQ in the CMB (not implemented: CMBSZ.CQS = 0), and
 * -ENOBUFS when the CMB is full. SNV_PLACE_DEFAULT never uses the CMB.
 *
 * SNV_PLACE_ACCEL: the SQ lives in the memory of the accelerator whose fabric
 * device ID is snv_qpair_opts.sq_accel (TOCS'21 fig. 34, "SQ in the lender's
 * GPU"). The client borrows it shared and creates a SISCI device segment of
 * it with the hints HOST_WRITE | DEVICE_READ, which its lender places in the
 * accelerator's memory BAR; the client writes SQEs through its mapping (the
 * NTB), the manager connects the segment through the accelerator and maps it
 * for the controller, which fetches SQEs peer-to-peer from the BAR (below the
 * lender's switch when both devices are there). snv_qpair_create returns
 * -ENOTSUP for a CQ there, -EINVAL without sq_accel, -EBUSY when the client
 * already placed SQs in another accelerator, and -ENOSPC when the lender put
 * the segment in its RAM (the accelerator has no memory BAR with room).
 * snv_qpair_sq_ioaddr() says where the controller fetches from.
 */

/*
 * Priority classes of I/O queue pairs: the NVMe "weighted round robin with
 * urgent priority class" arbitration (docs/nvme-driver.md, "Priorities").
 * The manager selects that arbitration when the controller supports it
 * (CAP.AMS), sets the class weights, and admits each queue pair's class by
 * its policy (a per-host class; a host may ask for its class or a lower one).
 */
enum snv_prio {
	SNV_PRIO_DEFAULT = 0,     /* ask for the class the manager's policy gives this host */
	SNV_PRIO_URGENT,          /* strict priority over every weighted class */
	SNV_PRIO_HIGH,
	SNV_PRIO_MEDIUM,
	SNV_PRIO_LOW,
	SNV_PRIO_NONE,            /* granted under round robin: no classes */
};
/* "urgent", "high", "medium", "low", "default", "none"; NULL for others. */
const char *snv_prio_name(enum snv_prio p);
/* The class named s (urgent, high, medium, low, default); -EINVAL otherwise. */
int snv_prio_parse(const char *s, enum snv_prio *out);

struct snv_manager;
struct snv_client;
struct snv_qpair;
struct snv_buf;

/* ---- Manager ---- */

struct snv_manager_opts {
	uint32_t fdid;            /* the controller (fabric device ID) */
	unsigned adapter;         /* local adapter number (0) */
	uint32_t channel_intno;   /* 0: SNV_CHANNEL_INTNO(fdid) */
	unsigned admin_depth;     /* admin queue entries (0: 32) */
	unsigned max_clients;     /* 0: 64 */
	unsigned heartbeat_ms;    /* liveness check of clients (0: 250) */
	void (*log)(void *arg, const char *line);   /* optional event log */
	void *log_arg;
	/*
	 * Arbitration and priorities (docs/nvme-driver.md, "Priorities").
	 * policy: comma-separated "host:N=CLASS", "node:N=CLASS" (SISCI node
	 * ID) and "default=CLASS", CLASS one of urgent, high, medium, low; a
	 * host's class is what its queue pairs get by default and the highest
	 * they may ask for. NULL or "": every host medium (equal shares).
	 * weight_*: commands per turn of the weighted classes, 1..256 (0: 8, 4
	 * and 1). burst: commands per SQ per visit, a power of two 1..64 or
	 * SNV_BURST_UNLIMITED (0: 8). round_robin: select round robin even if
	 * the controller supports weighted round robin.
	 */
	const char *policy;
	unsigned weight_high, weight_medium, weight_low;
	unsigned burst;
	bool round_robin;
};
#define SNV_BURST_UNLIMITED 0xffffffffu

int snv_manager_start(const struct snv_manager_opts *o, struct snv_manager **out, char *err,
		      size_t errlen);
/* Serve requests for up to timeout_ms (-1: until snv_manager_stop). Returns 0
 * when stopped or timed out, negative errno on a fatal error. */
int snv_manager_run(struct snv_manager *m, int timeout_ms);
/* Async-signal-safe and thread-safe: make snv_manager_run return. */
void snv_manager_stop(struct snv_manager *m);
/* Deletes every client's queues, returns the device. */
void snv_manager_destroy(struct snv_manager *m);

struct snv_manager_stats {
	unsigned clients;         /* connected now */
	unsigned queues;          /* I/O queue pairs handed out now */
	uint64_t requests;        /* RPC requests served */
	uint64_t refused;         /* refused (auth, validation) */
	uint64_t reclaimed;       /* queue pairs reclaimed from clients that went away */
};
void snv_manager_get_stats(const struct snv_manager *m, struct snv_manager_stats *s);
/* Whether the manager runs weighted round robin with urgent class (else round robin). */
bool snv_manager_wrr(const struct snv_manager *m);

/* ---- Client ---- */

struct snv_client_opts {
	uint32_t fdid;
	unsigned adapter;         /* 0 */
	uint32_t manager_node;    /* SISCI node ID of the manager's host (0: the lender's) */
	uint32_t channel_intno;   /* 0: SNV_CHANNEL_INTNO(fdid) */
	unsigned timeout_ms;      /* per RPC and for finding the manager (0: 5000) */
	/*
	 * Multipath (docs/nvme-driver.md, "Failover"): every queue pair also
	 * gets a backup pair through local adapter backup_adapter (another
	 * fabric), set up in advance; on a link event on the primary path or a
	 * command older than failover_ms (0: 1000) the queue pair moves to the
	 * backup and submits every command not yet completed again, and moves
	 * back (new queues on the primary path) once that path works again.
	 */
	bool multipath;
	unsigned backup_adapter;
	unsigned failover_ms;
	/* A command not completed after this long completes with status
	 * SNV_STATUS_PATH_ERROR and the queue pair fails every later command
	 * (-EIO): no path is left. 0: 10000. */
	unsigned io_timeout_ms;
};

/* Host Pathing Error (SCT 3h, SC 70h): the command could not be completed on
 * any path; whether it took effect is unknown. */
#define SNV_STATUS_PATH_ERROR 0x370u

int snv_client_open(const struct snv_client_opts *o, struct snv_client **out, char *err,
		    size_t errlen);
/* Deletes the client's queue pairs (through the manager), frees buffers and
 * returns the device. */
void snv_client_close(struct snv_client *c);

/* Admin commands, relayed and checked by the manager. A positive return is
 * the NVMe status of the command. `data` is 4096 bytes. */
int snv_identify_ctrl(struct snv_client *c, void *data);
/*
 * Identify Controller with its 4 KiB written by the controller to multicast
 * group `group` (SISCI broadcast segments subscribed to it receive it; the
 * caller gets only the outcome). -EINVAL group >= 256.
 */
int snv_identify_ctrl_mcast(struct snv_client *c, uint32_t group);
int snv_identify_ns(struct snv_client *c, uint32_t nsid, void *data);
int snv_get_log_page(struct snv_client *c, uint8_t lid, uint32_t nsid, void *data, size_t len);
int snv_get_features(struct snv_client *c, uint8_t fid, uint32_t nsid, uint32_t *result);

struct snv_ns_info {
	uint32_t nsid;
	uint64_t nlb;             /* blocks */
	uint32_t lba_size;        /* bytes */
};
/* Namespace size and block size (from Identify Namespace). */
int snv_ns_info(struct snv_client *c, uint32_t nsid, struct snv_ns_info *out);

/* ---- DMA buffers: memory the controller can read and write ---- */

/*
 * A new buffer in the client's host RAM, mapped for the device: one window of
 * the lender's NTB; -EADDRNOTAVAIL when it has none free (docs/nvme-driver.md,
 * "Resource limits").
 */
int snv_buf_alloc(struct snv_client *c, size_t size, struct snv_buf **out);
/* Make existing page-aligned memory of the program device-visible in place
 * (SCIRegisterSegmentMemory); size a multiple of the page size. */
int snv_buf_register(struct snv_client *c, void *addr, size_t size, struct snv_buf **out);
/*
 * Device memory as a data buffer: `size` bytes at bus address `bus` on this
 * host, inside a memory BAR of one of its devices (an accelerator's BAR2, local
 * or borrowed with Device Lending; SCIAttachPhysicalMemory). The NVMe moves the
 * data peer-to-peer to and from that memory; no byte passes the host's RAM.
 * snv_buf_vaddr() maps the BAR for the program (MMIO: slow, for filling or
 * checking, never on the data path). `bus` and
 * `size` page multiples; -EFAULT when no device BAR of this host holds the range.
 */
int snv_buf_attach_bus(struct snv_client *c, uint64_t bus, size_t size, struct snv_buf **out);

/*
 * A queue pair a device of this host drives itself (e.g. an accelerator
 * kernel): SQ (depth x 64 B) at bus address sq_bus and CQ (depth x 16 B) at
 * cq_bus, both page-aligned in a device BAR of this host, created through the
 * manager like any pair (SNV_QP_EXT_SEGS) and zeroed. The library submits
 * nothing on it; the device writes SQEs, rings the doorbells at the bus
 * addresses in info (the NVMe's BAR0 as this host's devices reach it) and
 * polls the CQ. requester: the device's BDF (bus << 8 | devfn), registered
 * with the client's NTB so that its stores may cross it (-1: none needed).
 * snv_devq_delete deletes it (once the device has stopped).
 */
struct snv_devq;
struct snv_devq_info {
	uint16_t qid;
	unsigned depth;
	uint64_t sq_db_bus, cq_db_bus;
};
int snv_devq_create(struct snv_client *c, unsigned depth, uint64_t sq_bus, uint64_t cq_bus,
		    int requester, struct snv_devq **out, struct snv_devq_info *info);
int snv_devq_delete(struct snv_devq *q);
void snv_buf_free(struct snv_buf *b);
void *snv_buf_vaddr(const struct snv_buf *b);
size_t snv_buf_size(const struct snv_buf *b);
/* The bus address the device uses for byte `off` of the buffer. */
uint64_t snv_buf_ioaddr(const struct snv_buf *b, size_t off);

/* ---- I/O queue pairs (data path: no manager, no daemon) ---- */

struct snv_qpair_opts {
	unsigned depth;           /* entries per queue (0: 64; at most the controller's MQES+1) */
	enum snv_place sq_place;
	enum snv_place cq_place;
	enum snv_prio prio;       /* the class to ask for (SNV_PRIO_DEFAULT: the policy's) */
	uint32_t sq_accel;        /* SNV_PLACE_ACCEL: the accelerator's fabric device ID */
};

/*
 * Besides the placement errors below: -EACCES when the manager's policy does
 * not allow the class asked for to this host (its log says which class is),
 * -ENOTSUP when a class other than SNV_PRIO_DEFAULT is asked for and the
 * manager runs round robin (the controller has no weighted round robin, or
 * the manager was told to use round robin). -ENOSPC: every I/O queue of the
 * controller is in use; -EADDRNOTAVAIL: the lender's NTB has no free window
 * onto this host's memory for a queue placed in it (SNV_PLACE_DEVICE for the
 * CQ saves one).
 */
int snv_qpair_create(struct snv_client *c, const struct snv_qpair_opts *o, struct snv_qpair **out);
/* The class the manager granted (SNV_PRIO_NONE under round robin). */
enum snv_prio snv_qpair_prio(const struct snv_qpair *q);
/*
 * The manager's rate limit for the pair in commands per second (0: none;
 * policy "host:N=CLASS@IOPS"). The library paces submissions to it with a
 * token bucket of 10 ms worth of commands: a submission beyond it returns
 * -EAGAIN, as a full queue does (poll, then submit again). Cooperative: the
 * manager cannot police doorbell writes, so a program that drives the queue
 * without the library is bounded only by its queue depth.
 */
unsigned snv_qpair_iops_limit(const struct snv_qpair *q);
/* Delete through the manager; in-flight commands are lost (-EBUSY unless forced). */
int snv_qpair_delete(struct snv_qpair *q, bool force);
uint16_t snv_qpair_id(const struct snv_qpair *q);
/*
 * The SQ's bus address as the controller reaches it (where it fetches
 * commands from; the primary path's), or 0 when the library does not know it:
 * known for SNV_PLACE_ACCEL (an address in the accelerator's BAR as the
 * controller's host sees it when the lender placed the SQ there).
 */
uint64_t snv_qpair_sq_ioaddr(const struct snv_qpair *q);
unsigned snv_qpair_inflight(const struct snv_qpair *q);

struct snv_qpair_stats {
	unsigned path;            /* 0: primary, 1: backup, now */
	uint64_t failovers;       /* moves to the backup */
	uint64_t resumes;         /* moves back to (new queues on) the primary path */
	uint64_t resubmitted;     /* commands submitted again on the backup */
	uint64_t late_ignored;    /* completions of commands already submitted again */
	uint64_t path_errors;     /* commands completed with SNV_STATUS_PATH_ERROR */
	uint64_t last_failover_ns; /* the last move: detection to every command resubmitted */
};
void snv_qpair_get_stats(const struct snv_qpair *q, struct snv_qpair_stats *s);

/*
 * What the last read or write on q would take on real PCIe hardware, over
 * the routes its SQ, CQ and data actually have (the timing model,
 * docs/timing-model.md; the smartio NVMe model's log page C0h). Returns 0,
 * -ENODATA before any read or write ran on q, -ENOTSUP for a controller
 * without that page, or another negative errno.
 */
struct snv_prediction {
	uint32_t size;            /* bytes of that command */
	bool write;
	bool complete;            /* every path resolved (else some count 0) */
	double doorbell_us, fetch_us, media_us, data_us, cqe_us;
	double total_us;          /* submission to completion entry */
};
int snv_qpair_predict(struct snv_qpair *q, struct snv_prediction *out);

struct snv_cpl {
	void *cookie;             /* as given at submission */
	uint16_t status;          /* 0 on success, else NVMe status (no phase tag) */
	uint32_t dw0;
};

/* Submit a read or write of nlb blocks at slba to/from buf+off. PRPs are set
 * by the library (a PRP list comes from the buffer's PRP table, written when
 * the buffer was allocated). At most min(MDTS, 128 KiB) per command, nsid
 * 1..16. Returns 0, -EAGAIN when the queue is full (depth - 1 in flight) or
 * the pair's rate limit allows no command now (snv_qpair_iops_limit),
 * -EINVAL on a range outside the buffer or too long a transfer. */
int snv_submit_rw(struct snv_qpair *q, bool write, uint32_t nsid, uint64_t slba, uint32_t nlb,
		  struct snv_buf *buf, size_t off, void *cookie);
int snv_submit_flush(struct snv_qpair *q, uint32_t nsid, void *cookie);
/* Submit a raw 64-byte SQE as given (the library sets only the CID). For
 * tests and tools: the controller, not the library, judges it. */
int snv_submit_raw(struct snv_qpair *q, const void *sqe64, void *cookie);
/* Reap up to max completions without blocking; returns how many. */
int snv_poll(struct snv_qpair *q, struct snv_cpl *out, unsigned max);

#ifdef __cplusplus
}
#endif
#endif
