// SPDX-License-Identifier: MIT
/*
 * libsisci: the library, descriptors, node IDs and queries. Nodes are the
 * cluster's hosts; a host's adapters are its NTBs (numbered as 'smartio topo'
 * lists them), all answering to the host's node ID. Both come from this
 * host's daemon (NODE_LIST, ADAPTER_INFO) when the library is initialised:
 * a process talks to no other host and reads no cluster file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dis/dis_types.h"
#include "sisci_priv.h"
#include "util/log.h"

/* Programs size adapter arrays by DIS_MAX_NSCIS: no host may have more. */
_Static_assert(DIS_MAX_NSCIS >= SMIO_MAX_ADAPTERS, "DIS_MAX_NSCIS below the adapter limit");

struct sisci_lib sisci;

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
	case -EPIPE:
	case -EHOSTDOWN: return SCI_ERR_NODE_NOT_RESPONDING;   /* its daemon went away */
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
	for (uint32_t i = 0; i < sisci.nnodes; i++)
		if (sisci.nodes[i].node_id == node_id)
			return (int)sisci.nodes[i].host;
	return -1;
}

unsigned int sisci_host_node(uint32_t host)
{
	for (uint32_t i = 0; i < sisci.nnodes; i++)
		if (sisci.nodes[i].host == host)
			return sisci.nodes[i].node_id;
	return 0;
}

unsigned int sisci_adapters(void)
{
	return sisci.nadapters;
}

const struct smio_adapter *sisci_adapter(unsigned int adapter)
{
	return adapter < sisci.nadapters ? &sisci.adapters[adapter] : NULL;
}

/* NODE_LIST and ADAPTER_INFO replies: { u32 n, u32 pad } then n entries. */
#define LIST_HEAD 8
_Static_assert(sizeof(struct smio_node_list) == LIST_HEAD &&
	       sizeof(struct smio_adapter_list) == LIST_HEAD, "list heads");

/* Ask the daemon on fd for such a list of at most max entries of esize. */
static int fetch_list(int fd, uint16_t type, size_t esize, uint32_t max, void **out,
		      uint32_t *n)
{
	size_t cap = LIST_HEAD + (size_t)max * esize;
	uint8_t *buf = malloc(cap);
	uint32_t rlen, cnt;
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = smio_call(fd, type, NULL, 0, buf, (uint32_t)cap, &rlen, NULL, SISCI_TIMEOUT_MS);
	if (rc) {
		free(buf);
		return rc;
	}
	/* The codec checked the layout: the head, then exactly cnt entries. */
	memcpy(&cnt, buf, sizeof(cnt));
	*out = NULL;
	if (cnt) {
		*out = malloc(cnt * esize);
		if (!*out) {
			free(buf);
			return -ENOMEM;
		}
		memcpy(*out, buf + LIST_HEAD, cnt * esize);
	}
	*n = cnt;
	free(buf);
	return 0;
}

/* This host's node ID and adapters, and every node ID of the cluster, from our daemon. */
static int fetch_cluster(void)
{
	struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .host = sisci.host,
				    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	void *nodes = NULL, *adapters = NULL;
	uint32_t rlen, nn = 0, na = 0;
	int fd, rc;

	fd = smio_connect(sisci.dir, sisci.host, 0);
	if (fd < 0)
		return fd;
	rc = smio_call(fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       SISCI_TIMEOUT_MS);
	if (!rc)
		rc = fetch_list(fd, SMIO_NODE_LIST, sizeof(struct smio_node), SMIO_MAX_NODES,
				&nodes, &nn);
	if (!rc)
		rc = fetch_list(fd, SMIO_ADAPTER_INFO, sizeof(struct smio_adapter),
				SMIO_MAX_ADAPTERS, &adapters, &na);
	close(fd);
	if (rc) {
		free(adapters);
		free(nodes);
		return rc;
	}
	sisci.nodes = nodes;
	sisci.nnodes = nn;
	sisci.adapters = adapters;
	sisci.nadapters = na;
	sisci.node_id = hr.node_id;
	return 0;
}

void SCIInitialize(unsigned int flags, sci_error_t *error)
{
	int rc;

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
	rc = fetch_cluster();
	if (rc) {
		smio_error("SISCI: host %u of the cluster in %s does not answer (%s)%s", sisci.host,
			   sisci.dir, strerror(-rc),
			   rc == -EXDEV ? ": this process belongs to another host" : "");
		*error = SCI_ERR_NOT_INITIALIZED;
		return;
	}
	sisci.initialized = true;
	*error = SCI_ERR_OK;
}

void SCITerminate(void)
{
	free(sisci.adapters);
	free(sisci.nodes);
	sisci = (struct sisci_lib){ 0 };
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
	struct smio_probe_node m = { .adapter = localAdapterNo, .node_id = nodeId };
	int rc;

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
	if (localAdapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return 0;
	}
	if (sisci_node_host(nodeId) < 0) {
		*error = SCI_ERR_NO_SUCH_NODEID;
		return 0;
	}
	if (nodeId == sisci.node_id) {
		*error = SCI_ERR_OK;       /* this node */
		return 1;
	}
	/*
	 * Our daemon checks the adapter's link and that its cable reaches the
	 * node (back-to-back to it, or the same cluster-switch fabric), then asks
	 * the node's daemon - its kernel - whether it answers.
	 */
	rc = sisci_call(sd, SMIO_PROBE_NODE, &m, sizeof(m), NULL, 0, NULL, NULL);
	switch (rc) {
	case 0: *error = SCI_ERR_OK; return 1;
	case -ENODEV: *error = SCI_ERR_NO_SUCH_ADAPTERNO; break;
	case -EHOSTUNREACH: *error = SCI_ERR_NO_SUCH_NODEID; break;
	case -ENOLINK: *error = SCI_ERR_NO_LINK_ACCESS; break;
	case -EHOSTDOWN: *error = SCI_ERR_NODE_NOT_RESPONDING; break;
	default: *error = sisci_errno(rc); break;
	}
	return 0;
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
	case SCI_Q_ADAPTER_LINK_WIDTH: *out = sisci_adapter(q->localAdapterNo)->link_width; break;
	case SCI_Q_ADAPTER_LINK_SPEED: *out = sisci_adapter(q->localAdapterNo)->link_gen; break;
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
