// SPDX-License-Identifier: MIT
/*
 * libsisci: the library, descriptors, node IDs and queries. Nodes are the
 * cluster's hosts; a host's adapters are its NTBs (numbered as 'smartio topo'
 * lists them), all answering to the host's node ID.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sisci_priv.h"
#include "util/log.h"

struct sisci_lib sisci = { .host_index = -1 };

/*
 * The library runs inside other people's programs: its own diagnostics (this
 * copy of the log module is private to it) say only errors, unless
 * SMARTIO_LOG asks for more. Lines carry the program's name.
 */
__attribute__((constructor)) static void sisci_log_setup(void)
{
	smio_log_init(NULL, SMIO_LOG_ERROR);
}

static const struct {
	sci_error_t code;
	const char *text;
} errors[] = {
	{ SCI_ERR_OK, "no error" },
	{ SCI_ERR_BUSY, "resource in use, retry later" },
	{ SCI_ERR_FLAG_NOT_IMPLEMENTED, "flag is legal but not supported" },
	{ SCI_ERR_ILLEGAL_FLAG, "flag not valid for this call" },
	{ SCI_ERR_NOSPC, "out of operating-system resources" },
	{ SCI_ERR_API_NOSPC, "out of library resources" },
	{ SCI_ERR_HW_NOSPC, "out of hardware resources (e.g. NTB LUT entries)" },
	{ SCI_ERR_NOT_IMPLEMENTED, "function not implemented" },
	{ SCI_ERR_ILLEGAL_ADAPTERNO, "adapter number outside the legal range" },
	{ SCI_ERR_NO_SUCH_ADAPTERNO, "legal adapter number, no such adapter" },
	{ SCI_ERR_TIMEOUT, "the operation timed out" },
	{ SCI_ERR_OUT_OF_RANGE, "offset/size beyond the object" },
	{ SCI_ERR_NO_SUCH_SEGMENT, "no segment with that ID on that node" },
	{ SCI_ERR_NO_SUCH_INTNO, "no interrupt with that number (same code)" },
	{ SCI_ERR_ILLEGAL_NODEID, "node ID not valid" },
	{ SCI_ERR_CONNECTION_REFUSED, "the remote side refused the connection" },
	{ SCI_ERR_SEGMENT_NOT_CONNECTED, "segment not connected (through this adapter)" },
	{ SCI_ERR_SIZE_ALIGNMENT, "size not aligned as required" },
	{ SCI_ERR_OFFSET_ALIGNMENT, "offset not aligned as required" },
	{ SCI_ERR_ILLEGAL_PARAMETER, "a parameter is invalid" },
	{ SCI_ERR_MAX_ENTRIES, "queue or table full" },
	{ SCI_ERR_SEGMENT_NOT_PREPARED, "segment not prepared on this adapter" },
	{ SCI_ERR_ILLEGAL_ADDRESS, "address not valid" },
	{ SCI_ERR_ILLEGAL_OPERATION, "operation not allowed in this state" },
	{ SCI_ERR_ILLEGAL_QUERY, "SCIQuery command not recognised" },
	{ SCI_ERR_SEGMENTID_USED, "segment ID already in use" },
	{ SCI_ERR_INTNO_USED, "interrupt number already in use (chosen: same code)" },
	{ SCI_ERR_SYSTEM, "operating-system error, see errno" },
	{ SCI_ERR_CANCELLED, "wait cancelled because the handle was removed" },
	{ SCI_ERR_NOT_CONNECTED, "no connection to the remote host" },
	{ SCI_ERR_NOT_AVAILABLE, "object exists but is not available (e.g. borrowed exclusively)" },
	{ SCI_ERR_INCONSISTENT_VERSIONS, "library and driver/daemon versions differ" },
	{ SCI_ERR_COND_INT_RACE_PROBLEM, "conditional-interrupt enable raced a trigger" },
	{ SCI_ERR_OVERFLOW, "counter overflowed" },
	{ SCI_ERR_NOT_INITIALIZED, "SCIInitialize not called / host not configured" },
	{ SCI_ERR_ACCESS, "no permission for this access" },
	{ SCI_ERR_NOT_SUPPORTED, "chosen: request not supported" },
	{ SCI_ERR_DEPRECATED, "chosen: functionality deprecated" },
	{ SCI_ERR_DMA_NOT_AVAILABLE, "chosen: requested DMA mode not available" },
	{ SCI_ERR_DMA_DISABLED, "chosen: requested DMA mode disabled" },
	{ SCI_ERR_NO_SUCH_NODEID, "no node with that ID answers" },
	{ SCI_ERR_NODE_NOT_RESPONDING, "the node does not respond to the request" },
	{ SCI_ERR_NO_REMOTE_LINK_ACCESS, "a remote link is not operational" },
	{ SCI_ERR_NO_LINK_ACCESS, "the local link is not operational" },
	{ SCI_ERR_TRANSFER_FAILED, "a data transfer failed" },
	{ SCI_ERR_SEMAPHORE_COUNT_EXCEEDED, "chosen: semaphore counter exceeded" },
	{ SCI_ERR_IRQL_ILLEGAL, "chosen: illegal interrupt level" },
	{ SCI_ERR_REMOTE_BUSY, "the remote host is busy" },
	{ SCI_ERR_LOCAL_BUSY, "chosen: the local host is busy" },
	{ SCI_ERR_ALL_BUSY, "chosen: the whole system is busy" },
};

const char *SCIGetErrorString(sci_error_t error)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == error)
			return errors[i].text;
	return "unknown SISCI error code";
}

sci_error_t sisci_check_init(void)
{
	return sisci.initialized ? SCI_ERR_OK : SCI_ERR_NOT_INITIALIZED;
}

sci_error_t sisci_errno(int rc)
{
	switch (rc) {
	case 0: return SCI_ERR_OK;
	case -EBUSY: return SCI_ERR_BUSY;
	case -ENOENT: return SCI_ERR_NO_SUCH_SEGMENT;
	case -EEXIST: return SCI_ERR_SEGMENTID_USED;
	case -ENOSPC: return SCI_ERR_NOSPC;
	case -ENOMEM: return SCI_ERR_NOSPC;
	case -ETIMEDOUT: return SCI_ERR_TIMEOUT;
	case -ECONNREFUSED: return SCI_ERR_CONNECTION_REFUSED;
	case -EHOSTUNREACH: return SCI_ERR_NO_SUCH_NODEID;
	case -ENOLINK: return SCI_ERR_NO_LINK_ACCESS;
	case -ERANGE: return SCI_ERR_OUT_OF_RANGE;
	case -EINVAL: return SCI_ERR_ILLEGAL_PARAMETER;
	case -EPERM:
	case -EACCES: return SCI_ERR_ACCESS;
	case -ECONNRESET:
	case -EPIPE: return SCI_ERR_NODE_NOT_RESPONDING;
	default: return SCI_ERR_SYSTEM;
	}
}

int sisci_call(struct sci_desc *sd, uint16_t type, const void *req, uint32_t len, void *rep,
	       uint32_t cap, uint32_t *rlen, int *fd)
{
	uint32_t n;
	int rc;

	pthread_mutex_lock(&sd->lock);
	rc = smio_call(sd->fd, type, req, len, rep, cap, rlen ? rlen : &n, fd, SISCI_TIMEOUT_MS);
	pthread_mutex_unlock(&sd->lock);
	return rc;
}

int sisci_node_host(unsigned int node_id)
{
	for (uint32_t i = 0; sisci.topo && i < sisci.topo->nhosts; i++)
		if (sisci.topo->hosts[i].node_id == node_id)
			return (int)i;
	return -1;
}

static int count_ntb(const struct topo_host *h, const struct topo_ntb *n, uint32_t i, void *arg)
{
	(*(unsigned int *)arg)++;
	return 0;
}

unsigned int sisci_adapters(void)
{
	unsigned int n = 0;

	if (sisci.topo && sisci.host_index >= 0)
		topo_for_each_ntb(&sisci.topo->hosts[sisci.host_index], count_ntb, &n);
	return n;
}

void SCIInitialize(unsigned int flags, sci_error_t *error)
{
	char path[PATH_MAX + 16], err[256];

	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (sisci.initialized) {
		*error = SCI_ERR_OK;       /* idempotent, as with Dolphin's library */
		return;
	}
	/* This process belongs to host $SMARTIO_HOST of $SMARTIO_CLUSTER. */
	if (smio_env_host(&sisci.host) || smio_cluster_dir(sisci.dir, sizeof(sisci.dir))) {
		smio_error("SISCI: set SMARTIO_HOST (or run under 'smartio exec --host N')");
		*error = SCI_ERR_NOT_INITIALIZED;
		return;
	}
	smio_log_set_host((int)sisci.host);
	snprintf(path, sizeof(path), "%s/topology.yaml", sisci.dir);
	if (topo_load_file(path, &sisci.topo, err, sizeof(err))) {
		smio_error("SISCI: no cluster in %s (%s)", sisci.dir, err);
		*error = SCI_ERR_NOT_INITIALIZED;
		return;
	}
	sisci.host_index = topo_host_index(sisci.topo, sisci.host);
	if (sisci.host_index < 0) {
		smio_error("SISCI: the cluster in %s has no host %u", sisci.dir, sisci.host);
		topo_free(sisci.topo);
		sisci.topo = NULL;
		*error = SCI_ERR_NOT_INITIALIZED;
		return;
	}
	sisci.node_id = sisci.topo->hosts[sisci.host_index].node_id;
	sisci.initialized = true;
	*error = SCI_ERR_OK;
}

void SCITerminate(void)
{
	topo_free(sisci.topo);
	sisci = (struct sisci_lib){ .host_index = -1 };
}

void SCIOpen(sci_desc_t *sd, unsigned int flags, sci_error_t *error)
{
	struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .pid = (uint32_t)getpid(),
				    .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	struct sci_desc *d;
	uint32_t rlen;
	int rc;

	*error = sisci_check_init();
	if (*error)
		return;
	if (flags & ~SCI_FLAG_THREAD_SAFE) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	d->fd = smio_connect(sisci.dir, sisci.host, 0);
	if (d->fd < 0) {
		free(d);
		*error = SCI_ERR_NODE_NOT_RESPONDING;
		return;
	}
	hello.host = sisci.host;
	rc = smio_call(d->fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       SISCI_TIMEOUT_MS);
	if (rc) {
		close(d->fd);
		free(d);
		*error = sisci_errno(rc);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	*sd = d;
	*error = SCI_ERR_OK;
}

void SCIClose(sci_desc_t sd, unsigned int flags, sci_error_t *error)
{
	if (!sd) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (__atomic_load_n(&sd->objects, __ATOMIC_ACQUIRE)) {
		*error = SCI_ERR_BUSY;     /* remove what was created through it first */
		return;
	}
	pthread_mutex_destroy(&sd->lock);
	close(sd->fd);
	free(sd);
	*error = SCI_ERR_OK;
}

void SCIGetLocalNodeId(unsigned int adapterNo, unsigned int *nodeId, unsigned int flags,
		       sci_error_t *error)
{
	*error = sisci_check_init();
	if (*error)
		return;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (adapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	*nodeId = sisci.node_id;
	*error = SCI_ERR_OK;
}

static int ntb_info(sci_desc_t sd, unsigned int adapter, struct smio_ntb_info *ni)
{
	struct smio_ntb_ref ref = { .ntb = adapter };

	return sisci_call(sd, SMIO_NTB_INFO, &ref, sizeof(ref), ni, sizeof(*ni), NULL, NULL);
}

int SCIProbeNode(sci_desc_t sd, unsigned int localAdapterNo, unsigned int nodeId,
		 unsigned int flags, sci_error_t *error)
{
	struct smio_ntb_info ni;
	const struct topo_ntb *n;
	int hi, rc;

	*error = sisci_check_init();
	if (*error)
		return 0;
	if (!sd) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return 0;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return 0;
	}
	n = topo_host_ntb(&sisci.topo->hosts[sisci.host_index], localAdapterNo);
	if (!n) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return 0;
	}
	hi = sisci_node_host(nodeId);
	if (hi < 0) {
		*error = SCI_ERR_NO_SUCH_NODEID;
		return 0;
	}
	if ((uint32_t)hi == (uint32_t)sisci.host_index) {
		*error = SCI_ERR_OK;       /* this node */
		return 1;
	}
	rc = ntb_info(sd, localAdapterNo, &ni);
	if (rc || !ni.link_up) {
		*error = rc ? sisci_errno(rc) : SCI_ERR_NO_LINK_ACCESS;
		return 0;
	}
	/* Cabled to it (back-to-back), or on the same cluster-switch fabric. */
	if ((n->peer_kind == TOPO_PEER_NTB && n->peer_host != (uint32_t)hi) ||
	    n->peer_kind == TOPO_PEER_NONE) {
		*error = SCI_ERR_NO_SUCH_NODEID;
		return 0;
	}
	{
		/* Does the node answer? Its daemon is its kernel. */
		int fd = smio_connect(sisci.dir, sisci.topo->hosts[hi].id, 0);

		if (fd < 0) {
			*error = SCI_ERR_NODE_NOT_RESPONDING;
			return 0;
		}
		close(fd);
	}
	*error = SCI_ERR_OK;
	return 1;
}

static void query_adapter(sci_query_adapter_t *q, sci_error_t *error)
{
	struct smio_ntb_info ni;
	struct sci_desc *sd;
	unsigned int *out = q->data;
	int rc;

	if (!out) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (q->subcommand == SCI_Q_ADAPTER_NUMBER) {
		*out = sisci_adapters();
		*error = SCI_ERR_OK;
		return;
	}
	if (q->localAdapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	if (q->subcommand == SCI_Q_ADAPTER_NODEID) {
		*out = sisci.node_id;
		*error = SCI_ERR_OK;
		return;
	}
	SCIOpen(&sd, 0, error);
	if (*error)
		return;
	rc = ntb_info(sd, q->localAdapterNo, &ni);
	SCIClose(sd, 0, error);
	if (rc) {
		*error = sisci_errno(rc);
		return;
	}
	switch (q->subcommand) {
	case SCI_Q_ADAPTER_CONFIGURED: *out = 1; break;
	case SCI_Q_ADAPTER_LINK_OPERATIONAL: *out = ni.link_up; break;
	case SCI_Q_ADAPTER_LINK_WIDTH:
		*out = topo_host_ntb(&sisci.topo->hosts[sisci.host_index],
				     q->localAdapterNo)->cable.width;
		break;
	case SCI_Q_ADAPTER_LINK_SPEED:
		*out = topo_host_ntb(&sisci.topo->hosts[sisci.host_index],
				     q->localAdapterNo)->cable.gen;
		break;
	case SCI_Q_ADAPTER_DMA_MTU: *out = 1u << 20; break;
	case SCI_Q_ADAPTER_DMA_SIZE_ALIGNMENT:
	case SCI_Q_ADAPTER_DMA_OFFSET_ALIGNMENT: *out = 8; break;
	case SCI_Q_ADAPTER_SUGGESTED_MIN_DMA_SIZE: *out = 4096; break;
	case SCI_Q_ADAPTER_SERIAL_NUMBER: *out = ni.bdf; break;
	case SCI_Q_ADAPTER_CARD_TYPE: *out = 830; break;     /* PXH830 */
	default:
		*error = SCI_ERR_ILLEGAL_QUERY;
		return;
	}
	*error = SCI_ERR_OK;
}

void SCIQuery(unsigned int command, void *data, unsigned int flags, sci_error_t *error)
{
	*error = sisci_check_init();
	if (*error)
		return;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (!data) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	switch (command) {
	case SCI_Q_ADAPTER:
		query_adapter(data, error);
		return;
	case SCI_Q_LOCAL_SEGMENT:
		sisci_query_local_segment(data, error);
		return;
	case SCI_Q_REMOTE_SEGMENT:
		sisci_query_remote_segment(data, error);
		return;
	case SCI_Q_MAP:
		sisci_query_map(data, error);
		return;
	case SCI_Q_DEVICE:
		sisci_query_device(data, error);
		return;
	default:
		*error = SCI_ERR_ILLEGAL_QUERY;
	}
}
