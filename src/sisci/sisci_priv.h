/* SPDX-License-Identifier: MIT */
/*
 * libsisci internals. A process belongs to a host of a smartio cluster
 * (SMARTIO_HOST, SMARTIO_CLUSTER); each descriptor is a connection to that
 * host's daemon, which does what Dolphin's kernel driver does. The library
 * talks to no other daemon and reads no cluster file: what it knows of the
 * cluster (node IDs, this host's adapters) it asks that daemon once, at
 * SCIInitialize.
 */
#ifndef SMARTIO_SISCI_PRIV_H
#define SMARTIO_SISCI_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sisci_api.h"
#include "smartio/proto.h"

#define SISCI_TIMEOUT_MS 5000

struct sci_desc {
	int fd;                     /* connection to this host's daemon */
	unsigned int objects;       /* segments, maps, ... created through it */
	pthread_mutex_t lock;       /* one call in flight on fd (callback threads call too) */
};

struct sisci_lib {
	bool initialized;
	char dir[PATH_MAX];
	uint32_t host;              /* topology host id */
	uint32_t node_id;           /* SISCI node ID of this host */
	/* Fixed for a cluster's life (the topology); link states are asked anew. */
	struct smio_node *nodes;    /* the cluster's hosts (NODE_LIST) */
	uint32_t nnodes;
	struct smio_adapter *adapters;  /* this host's NTBs, by adapter number (ADAPTER_INFO) */
	uint32_t nadapters;
};

extern struct sisci_lib sisci;

/* SCI_ERR_NOT_INITIALIZED unless SCIInitialize succeeded. */
sci_error_t sisci_check_init(void);
/* A daemon's negative errno as the SISCI error a program expects. */
sci_error_t sisci_errno(int rc);
/* One request/reply on a descriptor's connection; serialised per descriptor. */
int sisci_call(struct sci_desc *sd, uint16_t type, const void *req, uint32_t len, void *rep,
	       uint32_t cap, uint32_t *rlen, int *fd);
/* Host id of the host with SISCI node ID node_id, or -1. */
int sisci_node_host(unsigned int node_id);
/* SISCI node ID of host id host, or 0 if no such host. */
unsigned int sisci_host_node(uint32_t host);
/* Number of NTB adapters of this host. */
unsigned int sisci_adapters(void);
/* Adapter adapter of this host, or NULL. */
const struct smio_adapter *sisci_adapter(unsigned int adapter);

/* SCIQuery subcommands on segments and maps (sisci_segment.c, sisci_map.c). */
void sisci_query_local_segment(sci_query_local_segment_t *q, sci_error_t *error);
void sisci_query_remote_segment(sci_query_remote_segment_t *q, sci_error_t *error);
void sisci_query_map(sci_query_map_t *q, sci_error_t *error);
/* SCIQuery(SCI_Q_DEVICE) (sisci_device.c). */
void sisci_query_device(sci_smartio_query_device_t *q, sci_error_t *error);

#endif
