/* SPDX-License-Identifier: MIT */
/*
 * smartio topology: the description of an emulated PCIe/NTB cluster.
 *
 * A topology is parsed from YAML (docs/topology.md) into these plain structs.
 * Every daemon of a cluster parses the same file, so every host knows the
 * whole cluster's static shape; live state (LUTs, IOMMU tables, link state)
 * belongs to the host that owns it.
 */
#ifndef SMARTIO_TOPOLOGY_H
#define SMARTIO_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOPO_NAME_MAX   32
#define TOPO_MODEL_MAX  24
#define TOPO_MAX_PARAMS 16
#define TOPO_MAX_BARS   6
#define TOPO_MAX_DEPTH  8     /* nesting of switches below a root port */
#define TOPO_MAX_HOSTS  256

enum topo_slot_kind {
	TOPO_SLOT_EMPTY = 0,
	TOPO_SLOT_DEVICE,      /* an endpoint: device model in a slot */
	TOPO_SLOT_SWITCH,      /* a PCIe switch: upstream port + downstream ports */
	TOPO_SLOT_NTB,         /* an NTB adapter (appears as an endpoint) */
};

struct topo_link {
	uint8_t gen;           /* 1..5 */
	uint8_t width;         /* 1, 2, 4, 8, 16, 32 */
};

struct topo_param {
	char key[32];
	char value[64];
};

/* Explicit BAR layout of an endpoint; models supply defaults when none given. */
struct topo_bar {
	uint8_t index;         /* 0..5; a 64-bit BAR also uses index+1 */
	bool is64;
	bool prefetch;
	uint64_t size;         /* power of two, >= 16 (>= 4096 recommended) */
};

struct topo_device {
	char name[TOPO_NAME_MAX];
	char model[TOPO_MODEL_MAX];   /* "test", "nvme", "accel" */
	bool lendable;                /* registered with smartio for lending (default true) */
	uint16_t vendor_id;           /* 0: the model's default */
	uint16_t device_id;           /* 0: the model's default */
	uint32_t nbars;               /* 0: the model's default BARs */
	struct topo_bar bars[TOPO_MAX_BARS];
	uint32_t nparams;             /* model parameters, free-form key/value */
	struct topo_param params[TOPO_MAX_PARAMS];
	/* SR-IOV (docs/devices.md): TotalVFs, 0 = no SR-IOV capability. */
	uint16_t sriov_vfs;
	uint16_t vf_device_id;        /* 0: the model's own VF device ID */
	/* A multi-function endpoint: functions 1..nfuncs after this one (function 0). */
	uint32_t nfuncs;
	struct topo_device *funcs;
};

#define TOPO_MAX_FUNCS  8     /* functions of one endpoint (0..7, no ARI) */
#define TOPO_MAX_VFS    64    /* TotalVFs of one physical function */

struct topo_port;

struct topo_switch {
	char name[TOPO_NAME_MAX];
	char chip[TOPO_MODEL_MAX];    /* e.g. "PEX8796", "PEX8733" */
	uint32_t latency_ns;          /* cut-through latency of the chip */
	bool acs_p2p_redirect;        /* ACS P2P Request Redirect on downstream ports */
	uint32_t nports;              /* downstream ports */
	struct topo_port *ports;
};

enum topo_peer_kind {
	TOPO_PEER_NONE = 0,           /* cable not connected */
	TOPO_PEER_NTB,                /* back-to-back cable to another host's NTB */
	TOPO_PEER_CSWITCH,            /* cable to a cluster switch port */
};

struct topo_ntb {
	char name[TOPO_NAME_MAX];
	char model[TOPO_MODEL_MAX];   /* "PXH830" */
	uint64_t bar_size;            /* the look-up-table window BAR (BAR2, 64-bit pref) */
	uint32_t lut_entries;         /* windows; window size = bar_size / lut_entries */
	uint32_t rid_entries;         /* requester-ID table size (PXH830: 32) */
	uint32_t doorbells;           /* doorbell bits (<= 32) */
	uint32_t scratchpads;         /* 32-bit scratchpad/message registers */
	uint32_t dma_channels;        /* 0: no DMA engine */
	uint32_t latency_ns;          /* added one way by the adapter */
	struct topo_link cable;       /* external link (to peer or cluster switch) */
	char connect[2 * TOPO_NAME_MAX + 2];  /* as written: "HOST.NTB" or "CSWITCH[:PORT]" */
	/* resolved by the parser */
	enum topo_peer_kind peer_kind;
	uint32_t peer_host;           /* TOPO_PEER_NTB: host index in topo.hosts */
	uint32_t peer_ntb;            /* TOPO_PEER_NTB: NTB index in that host (topo_host_ntb order) */
	uint32_t peer_cswitch;        /* TOPO_PEER_CSWITCH: index in topo.cswitches */
	uint32_t peer_port;           /* TOPO_PEER_CSWITCH: first port used on that switch */
};

/* A root port or a switch downstream port, and what sits in its slot. */
struct topo_port {
	struct topo_link link;        /* link from this port to what is plugged in */
	enum topo_slot_kind kind;
	struct topo_device dev;       /* TOPO_SLOT_DEVICE */
	struct topo_switch sw;        /* TOPO_SLOT_SWITCH */
	struct topo_ntb ntb;          /* TOPO_SLOT_NTB */
	int line;                     /* source line, for messages */
};

struct topo_host {
	uint32_t id;                  /* the N in --host N / SMARTIO_HOST=N */
	uint32_t node_id;             /* SISCI node ID (default 4 * (id + 1)) */
	char name[TOPO_NAME_MAX];
	uint64_t ram_size;
	bool iommu;
	bool rc_p2p;                  /* root complex forwards P2P between root ports */
	uint32_t rc_latency_ns;
	uint64_t mmio32_base, mmio32_size;   /* 32-bit MMIO window (below 4 GiB) */
	uint64_t mmio64_base, mmio64_size;   /* 64-bit prefetchable window */
	uint32_t nports;              /* root ports */
	struct topo_port *ports;
	int line;
};

struct topo_cswitch {
	char name[TOPO_NAME_MAX];
	char chip[TOPO_MODEL_MAX];    /* "PM8536" (MXS824) */
	uint32_t latency_ns;
	uint32_t ports;               /* physical ports */
	uint32_t port_width;          /* lanes per port; a xW link uses ceil(W/port_width) ports */
	uint32_t used_ports;          /* filled by the parser */
	/*
	 * Multicast (PCIe Multicast capability, as the PM8536 has it): mc_groups
	 * groups of mc_group_size bytes each (2^MC_Index_Position) from mc_base
	 * in the switch's address space. 0 groups: multicast off (the default).
	 * Cascaded switches must agree (one address space per fabric).
	 */
	uint32_t mc_groups;           /* MC_Num_Group, 0..TOPO_MC_MAX_GROUPS */
	uint64_t mc_group_size;       /* power of two, 4K..4G */
	uint64_t mc_base;             /* MC_Base_Address, aligned to mc_group_size */
	/*
	 * mode: czodiac (issue 16 item 3, docs/czodiac.md): the ports facing
	 * USER hosts are cZodiac IOPorts whose RID and MMIO tables remap
	 * requests between a USER's space and an OWNER's, instead of NTB
	 * look-up-table windows. No cascade, no multicast.
	 */
	bool czodiac;
	int line;
};

#define TOPO_MC_MAX_GROUPS 256

struct topo_cascade {
	uint32_t a, b;                /* indices in topo.cswitches */
	struct topo_link link;
	int line;
};

struct topo {
	char name[64];
	char source[256];             /* file name, or "<default>" */
	/* timing: faithful: devices answer with the timing model's latencies
	 * (docs/timing-model.md); false (fast): as fast as the emulation goes. */
	bool timing_faithful;
	uint32_t nhosts;
	struct topo_host *hosts;
	uint32_t ncswitches;
	struct topo_cswitch *cswitches;
	uint32_t ncascades;
	struct topo_cascade *cascades;
};

/*
 * Parse and validate. On error returns a negative errno (-EINVAL for content
 * errors, -ENOENT etc. for I/O) and writes "FILE:LINE: what is wrong" into err.
 */
int topo_load_file(const char *path, struct topo **out, char *err, size_t errlen);
int topo_load_string(const char *yaml, size_t len, const char *source,
		     struct topo **out, char *err, size_t errlen);
/* The built-in default cluster (3 hosts, see docs/topology.md). */
int topo_load_default(struct topo **out, char *err, size_t errlen);
const char *topo_default_yaml(void);
void topo_free(struct topo *t);

/* Index of the host with this id, or -1. */
int topo_host_index(const struct topo *t, uint32_t id);
/* Index of the host with this SISCI node ID, or -1. */
int topo_host_by_node(const struct topo *t, uint32_t node_id);

/* Visit every NTB of a host in depth-first port order (the order peer_ntb counts). */
typedef int (*topo_ntb_visit_fn)(const struct topo_host *h, const struct topo_ntb *ntb,
				 uint32_t index, void *arg);
int topo_for_each_ntb(const struct topo_host *h, topo_ntb_visit_fn fn, void *arg);
/* The idx-th NTB of a host in that order, or NULL. */
const struct topo_ntb *topo_host_ntb(const struct topo_host *h, uint32_t idx);

/* "4G" style size parsing shared with the CLI: K/M/G/T (binary), optional "i"/"B". */
int topo_parse_size(const char *s, uint64_t *out);

#endif
