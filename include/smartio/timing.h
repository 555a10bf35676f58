/* SPDX-License-Identifier: MIT */
/*
 * Analytical PCIe timing model: what a path through a real PCIe/NTB cluster
 * costs in latency and bandwidth (docs/timing-model.md).
 *
 * Pure and allocation-free: every query works on a caller-owned hop list and
 * a parameter set, and fills a caller-owned result. One parameter set
 * (topologies/timing.yaml, identical to the built-in defaults) produces every
 * prediction; there are no per-experiment constants.
 */
#ifndef SMARTIO_TIMING_H
#define SMARTIO_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIMING_MAX_HOPS    48    /* >= FAB_MAX_HOPS and SMIO_MAX_HOPS */
#define TIMING_NAME_MAX    36
#define TIMING_CHIP_MAX    16    /* chip name length */
#define TIMING_MAX_CHIPS   16
#define TIMING_MAX_RCS     4     /* root-complex profiles */
#define TIMING_MAX_HOSTMAP 64    /* host id -> root-complex profile entries */
#define TIMING_EXPLAIN_MAX 640

/* Same numbers as enum fab_hop_kind (src/fabric/route.h) and the wire. */
enum timing_hop_kind {
	TIMING_HOP_DEVICE = 1,   /* requester or completer function */
	TIMING_HOP_LINK,         /* PCIe link (gen, width) */
	TIMING_HOP_SWITCH,       /* switch chip traversal (or a root port: 0 ns) */
	TIMING_HOP_ROOT,         /* root complex traversal */
	TIMING_HOP_IOMMU,        /* IOMMU translation in the root complex */
	TIMING_HOP_NTB,          /* NTB adapter */
	TIMING_HOP_CABLE,        /* external cable (gen, width) */
	TIMING_HOP_CSWITCH,      /* cluster switch */
	TIMING_HOP_MEMORY,       /* host DRAM completer */
};

#define TIMING_HOST_NONE 0xffff

struct timing_hop {
	uint8_t kind;            /* enum timing_hop_kind */
	uint8_t gen, width;      /* LINK and CABLE */
	uint8_t pad;
	uint16_t host;           /* host id, TIMING_HOST_NONE for cluster switches */
	uint16_t bdf;
	uint32_t latency_ns;     /* chip latency (one traversal), as the topology gives it */
	char name[TIMING_NAME_MAX];
};

struct timing_chip {
	char name[TIMING_CHIP_MAX];
	uint32_t latency_ns;
};

/* A root complex's behaviour (a property of the host's CPU). */
struct timing_rc {
	char name[TIMING_CHIP_MAX];
	uint32_t latency_ns;      /* one traversal (CPU issue, P2P turn, or to/from memory) */
	uint32_t outstanding;     /* non-posted requests it keeps open when forwarding */
	uint32_t iommu_read_split;/* bytes: reads forwarded through its IOMMU are split; 0 = no */
	uint32_t completion_bytes;/* CplD payload when it completes from DRAM; 0 = link.rcb */
};

struct timing_params {
	/* link layer */
	uint32_t mps, mrrs, rcb;   /* bytes */
	uint32_t address_bits;     /* 32 or 64: MWr/MRd header size */
	bool ecrc;
	uint32_t cable_ns;         /* propagation on one external cable */
	/* chips (switches, NTB adapters, cluster switches) */
	uint32_t nchips;
	struct timing_chip chips[TIMING_MAX_CHIPS];
	char default_switch[TIMING_CHIP_MAX];
	char default_ntb[TIMING_CHIP_MAX];
	char default_cswitch[TIMING_CHIP_MAX];
	/* root complexes */
	uint32_t nrcs;
	struct timing_rc rcs[TIMING_MAX_RCS];
	uint32_t default_rc;       /* index in rcs */
	uint32_t nhostmap;
	struct { uint32_t host, rc; } hostmap[TIMING_MAX_HOSTMAP];
	/* IOMMU */
	uint32_t iotlb_hit_ns, iotlb_miss_ns, iommu_page;
	/* completers */
	uint32_t dram_read_ns, dram_write_ns;
	uint32_t devmem_read_ns, devmem_write_ns;
	uint32_t reg_read_ns, reg_write_ns;
	/* requesters */
	uint32_t tags;             /* outstanding non-posted requests of a device */
	uint32_t cpu_outstanding;  /* a CPU core's outstanding uncached reads */
	uint32_t cpu_tlp_bytes;    /* a CPU's write-combined TLP payload */
	uint32_t cpu_copy_mbs;     /* a core's memcpy DRAM to DRAM, MB/s (cZodiac's NAP copy-out) */
	/* NVMe composition */
	uint32_t nvme_media_read_ns;
	uint32_t nvme_sqe_bytes, nvme_cqe_bytes;
};

enum timing_completer {
	TIMING_CPL_AUTO = 0,     /* MEMORY hop: DRAM; DEVICE hop: device memory */
	TIMING_CPL_DRAM,
	TIMING_CPL_DEVMEM,
	TIMING_CPL_REGS,
};

struct timing_query {
	uint64_t size;           /* bytes, >= 1 */
	bool write;              /* posted write; else a read */
	uint8_t completer;       /* enum timing_completer */
	uint32_t tags;           /* requester outstanding; 0 = parameter default */
	uint32_t mps, mrrs;      /* the setup's configuration; 0 = parameter default */
	double iotlb_miss_rate;  /* 0..1 of translations that miss the IOTLB */
	/*
	 * Reads: CplD payload of the completer, 0 = by completer: a root complex
	 * completing from DRAM uses its profile's completion_bytes (else
	 * link.rcb), a device (devmem, regs) completes in MPS-sized TLPs. A power
	 * of two from 64 to the MPS in effect.
	 */
	uint32_t cpl_size;
};

enum timing_limit {
	TIMING_LIMIT_NONE = 0,
	TIMING_LIMIT_LINK,       /* link byte limit (bottleneck = that link) */
	TIMING_LIMIT_TAGS,       /* requester outstanding requests (bottleneck = requester) */
	TIMING_LIMIT_RC,         /* root complex outstanding (bottleneck = that root) */
};

struct timing_result {
	double latency_ns;       /* write: one-way until the last byte lands; read: round trip of S */
	double first_ns;         /* write: one-way of the first TLP; read: round trip of one request */
	double bw_gbs;           /* sustained bandwidth for transfers of S (GB/s = bytes/ns) */
	double link_bw_gbs;      /* the tightest link byte limit */
	double outstanding_bw_gbs; /* Little's-law limit (reads; 0 for writes) */
	double xfer_ns;          /* one isolated transfer of S, issue to last byte */
	double xfer_bw_gbs;      /* S / xfer_ns */
	uint32_t tlps;           /* TLPs carrying the data (writes: MWr, reads: CplD) */
	uint32_t requests;       /* read requests the requester issues */
	uint64_t wire_bytes;     /* bytes on the bottleneck link for the data direction */
	int bottleneck;          /* hop index, -1 if none */
	int limit;               /* enum timing_limit */
	uint32_t cpl_bytes;      /* reads: the completer's CplD payload (before an IOMMU split) */
	char explain[TIMING_EXPLAIN_MAX];
};

/* Per-link figures (for `smartio predict link` and the tests). */
struct timing_link_info {
	double raw_gbs;          /* after 8b/10b or 128b/130b */
	double tlp_gbs;          /* after ACK/FC DLLPs and SKIP ordered sets */
	uint32_t ack_limit, fc_interval;
	uint32_t mwr_hdr, mrd_hdr, cpld_hdr;  /* wire bytes per TLP besides payload */
};

/* Built-in defaults: the same values as topologies/timing.yaml. */
void timing_params_default(struct timing_params *p);
/*
 * Load a calibration file over the defaults. Returns 0, or -errno with
 * "FILE:LINE: what is wrong" in err (-EINVAL for content, -ENOENT etc. for I/O).
 */
int timing_params_load_file(const char *path, struct timing_params *p, char *err,
			    size_t errlen);
int timing_params_load_string(const char *yaml, size_t len, const char *source,
			      struct timing_params *p, char *err, size_t errlen);
/* True if both sets hold the same values (ignoring unused slots). */
bool timing_params_equal(const struct timing_params *a, const struct timing_params *b);

/* A chip's latency, or -ENOENT. */
int timing_chip_ns(const struct timing_params *p, const char *chip, uint32_t *ns);
/* The root-complex profile of a host (hostmap, else the default). */
const struct timing_rc *timing_host_rc(const struct timing_params *p, uint32_t host);

int timing_link_info(const struct timing_params *p, unsigned gen, unsigned width,
		     unsigned mps, struct timing_link_info *li);

/*
 * Queries on a hop list in path order (requester first, completer last), as
 * a route gives it. Return 0 or -EINVAL (bad parameters, no hops, size 0,
 * a link of unknown generation or width).
 */
int timing_path(const struct timing_params *p, const struct timing_hop *hops, unsigned n,
		const struct timing_query *q, struct timing_result *r);
/*
 * A multicast posted write (src/fabric/timing_mcast.c): paths[i] (npaths[i]
 * hops) from the writer to receiver i; tree_links: the links of the fan-out
 * tree, each of which serialises the bytes once. q must be a write. Also the
 * same bytes as one unicast write per receiver, for comparison.
 */
struct timing_mcast_result {
	double latency_ns;        /* until the last receiver has the last byte */
	double bw_gbs;            /* sustained, the slowest path's */
	double unicast_ns;        /* N unicast writes back to back, until the last lands */
	uint64_t link_bytes;      /* wire bytes on all links of the tree (each once) */
	uint64_t unicast_link_bytes; /* the same for N unicast writes */
	unsigned receivers, links;
	char explain[TIMING_EXPLAIN_MAX];
};
int timing_multicast(const struct timing_params *p, const struct timing_hop *const *paths,
		     const unsigned *npaths, unsigned nrecv, unsigned tree_links,
		     const struct timing_query *q, struct timing_mcast_result *r);

/* A bare link: requester -- link -- completer (DRAM behind the default root). */
int timing_link(const struct timing_params *p, unsigned gen, unsigned width,
		const struct timing_query *q, struct timing_result *r);

/* Hop builders for hand-made paths; a chip hop takes its latency from p. */
struct timing_hop timing_hop_make(uint8_t kind, uint16_t host, const char *name);
struct timing_hop timing_hop_link(uint8_t kind, unsigned gen, unsigned width, uint16_t host);
int timing_hop_chip(const struct timing_params *p, uint8_t kind, const char *chip,
		    uint16_t host, struct timing_hop *out);

/* Converters. Return the number of hops written, or -ENOSPC / -EINVAL. */
struct smio_hop;
struct fab_hop;
int timing_hops_from_smio(const struct smio_hop *in, unsigned n, struct timing_hop *out,
			  unsigned cap);
int timing_hops_from_fab(const struct fab_hop *in, unsigned n, struct timing_hop *out,
			 unsigned cap);

/*
 * One NVMe I/O command (src/fabric/timing_nvme.c): the CPU's doorbell write,
 * the controller's SQ-entry fetch, the media, the data (the controller
 * writes a read's data, reads a write's), then the completion entry. Each
 * path is a hop list in path order (n = 0: not on the bus, costs nothing).
 * This is the formula of `smartio predict nvme-read`, of smartio-nvme
 * bench's prediction and of the NVMe model's timing-faithful mode.
 */
struct timing_nvme_paths {
	const struct timing_hop *doorbell, *sq, *data, *cq;  /* CPU->BAR0, device->SQ, ... */
	unsigned ndoorbell, nsq, ndata, ncq;
};
struct timing_nvme {
	double doorbell_ns, fetch_ns, media_ns, data_ns, cqe_ns;
	double total_ns;          /* submission (doorbell) to the CQE in memory */
	double pcie_ns;           /* total less the media */
};
/* tmpl: tags, MPS, MRRS, IOTLB miss rate, completer for the legs (NULL: defaults). */
int timing_nvme_io(const struct timing_params *p, const struct timing_nvme_paths *x,
		   const struct timing_query *tmpl, uint64_t size, bool write, uint32_t media_ns,
		   struct timing_nvme *out);
/*
 * The CPU's path to a device from the device's path to that CPU's host memory
 * (requester first, ending in a MEMORY hop): reversed, without the IOMMU,
 * the CPU as requester. Returns hops written, -EINVAL or -ENOSPC.
 */
int timing_hops_cpu_to(const struct timing_hop *dev_to_mem, unsigned n, struct timing_hop *out,
		       unsigned cap);

const char *timing_limit_str(int limit);
const char *timing_hop_kind_str(int kind);

/*
 * cZodiac's communication primitives on its Gen2 x8 prototype, MPS 128
 * (src/fabric/timing_czodiac.c): one message of `size` bytes from host 0 to
 * host 1, issue to the data usable at the receiver, in its parts.
 */
enum timing_cz_prim { TIMING_CZ_DAP_STORE, TIMING_CZ_NAP, TIMING_CZ_PUT, TIMING_CZ_GET,
		      TIMING_CZ_N };
#define TIMING_CZ_NAP_MAX   2000  /* NAP payload: a 2 KiB ring entry less its header */
#define TIMING_CZ_NAP_IMM   64    /* NAP immediate: the data rides in the descriptor */
#define TIMING_CZ_MIN_BYTES 8     /* the papers' "minimum latency" message */
struct timing_cz {
	double latency_ns;        /* the sum of the parts below */
	double bw_gbs;            /* one message at a time: size / latency */
	double doorbell_ns;       /* CPU write into the CPUPort's doorbell */
	double descriptor_ns;     /* the engine's descriptor fetch (round trip) */
	double get_desc_ns;       /* GET: the descriptor to the remote engine */
	double payload_read_ns;   /* the engine's payload fetch (NAP indirect, RDMA) */
	double wire_ns;           /* the data's posted write into the receiver's RAM */
	double completion_ns;     /* the completion entry behind the data */
	double copy_ns;           /* NAP: the receiver's copy out of the ring */
	double wire_bw_gbs;       /* sustained posted-write bandwidth of the data path */
};
/* 0, -EINVAL, -EMSGSIZE (a NAP over TIMING_CZ_NAP_MAX), -ENOENT (no cZodiac chip in p). */
int timing_czodiac(const struct timing_params *p, int prim, uint64_t size, struct timing_cz *out);
const char *timing_cz_name(int prim);

/*
 * The papers' stated numbers and the model's prediction of each, from hop
 * lists that mirror the papers' setups (src/fabric/timing_paper.c).
 */
struct timing_check {
	const char *id;          /* short name, e.g. "ntb-ram-to-ram" */
	const char *source;      /* paper, section / figure */
	const char *what;        /* what is compared */
	const char *unit;        /* "ns" or "GB/s" */
	double stated;           /* the paper's figure (centre of a stated range) */
	double stated_lo, stated_hi;
	double predicted;
	char detail[TIMING_EXPLAIN_MAX];
};
#define TIMING_TOLERANCE 0.10
unsigned timing_paper_count(void);
int timing_paper_check(const struct timing_params *p, unsigned idx, struct timing_check *c);
/* |predicted - stated| <= tolerance * stated. */
bool timing_check_ok(const struct timing_check *c);

/*
 * The papers' figures as curves (throughput vs transfer size) or bars
 * (latencies), each series from the hop list of the paper's setup and the
 * same parameter set (src/fabric/timing_figures.c). Curves are the transfer
 * rate of one isolated transfer (xfer_bw_gbs), what bandwidthTest-style
 * benchmarks report; bars are nanoseconds.
 */
#define TIMING_FIG_SERIES 6
#define TIMING_FIG_POINTS 16     /* 4 KiB .. 128 MiB, doubling */
struct timing_series {
	const char *label;
	const char *path;        /* the setup in words */
	unsigned n;
	double x[TIMING_FIG_POINTS];   /* transfer size in bytes (curves); 0 (bars) */
	double y[TIMING_FIG_POINTS];   /* GB/s (curves) or ns (bars) */
};
struct timing_figure {
	const char *id;          /* e.g. "smartio-fig22" */
	const char *source;      /* paper, section, figure */
	const char *title;
	const char *unit;        /* "GB/s" or "ns" */
	const char *topology;    /* topologies/papers/ file of the setup */
	const char *checks;      /* comma-separated timing_paper ids this figure states, or "" */
	const char *note;        /* what the figure shows and how the model reads it */
	bool bars;               /* one value per series */
	unsigned nseries;
	struct timing_series s[TIMING_FIG_SERIES];
};
unsigned timing_figure_count(void);
/* Fill figure idx; 0 or -EINVAL / -ENOENT (a chip missing from p). */
int timing_figure(const struct timing_params *p, unsigned idx, struct timing_figure *f);
/* Index of the figure with this id, or -ENOENT. */
int timing_figure_find(const char *id);

#endif
