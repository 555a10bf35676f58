// SPDX-License-Identifier: MIT
/*
 * smartio-fio: an external fio ioengine on libsmartio-nvme (the distributed
 * userspace NVMe driver). Each fio job (process or thread) opens its own
 * client of the controller's manager and creates its own I/O queue pair;
 * I/O is then submitted to the controller directly, and completions are
 * polled in getevents(). fio's I/O buffers are allocated as device-visible
 * memory (iomem_alloc), so data moves by the controller's DMA with no copy.
 *
 *   fio --ioengine=external:build/tools/fio/smartio-fio.so --fdid=8:nvme0 \
 *       --rw=randread --bs=4k --iodepth=32 --time_based --runtime=10 --name=x
 *
 * Built against the headers of the installed fio (docs/fio-engine.md).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fio.h>
#include <optgroup.h>

#include <sisci_api.h>
#include <smartio/nvme.h>

#include "util/smio_time.h"

#define SFIO_MAX_XFER   (128u * 1024)   /* the controller's MDTS */
#define SFIO_STALL_MS   30000u          /* getevents without a deadline gives up after this */

struct sfio_options {
	void *pad;                      /* an option may not sit at offset 0 */
	char *fdid;
	unsigned int nsid;
	char *sq_place;
	char *cq_place;
	unsigned int manager_node;
	unsigned int timeout_ms;
	int backup_adapter;
	char *prio;
	char *buffer;
};

struct sfio {
	struct snv_client *c;
	struct snv_qpair *q;
	struct snv_buf *buf;            /* fio's I/O memory (iomem_alloc) */
	uint8_t *base;
	size_t size;
	struct snv_ns_info ni;
	struct snv_cpl *cpl;
	struct io_u **events;
	unsigned int depth, nevents;
};

static struct fio_option options[] = {
	{
		.name = "fdid",
		.lname = "smartio NVMe controller",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct sfio_options, fdid),
		.help = "controller: fabric device ID (0x80100), NAME or NODE:NAME "
			"(default: the first NVMe controller in the pool)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "nsid",
		.lname = "namespace",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct sfio_options, nsid),
		.def = "1",
		.help = "namespace ID",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "buffer",
		.lname = "I/O buffer memory",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct sfio_options, buffer),
		.help = "bus:ADDR: fio's buffers in device memory at this bus address of the "
			"host (an accelerator's BAR2); the NVMe moves data peer-to-peer",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "sq_place",
		.lname = "SQ placement",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct sfio_options, sq_place),
		.def = "default",
		.help = "submission queue memory: default, device, host, cmb or accel:DEV "
			"(an accelerator's memory, DEV its fabric device ID, NAME or NODE:NAME)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "cq_place",
		.lname = "CQ placement",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct sfio_options, cq_place),
		.def = "default",
		.help = "completion queue memory: default, device or host",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "prio",
		.lname = "priority class",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct sfio_options, prio),
		.def = "default",
		.help = "queue pair's class: default (the manager's policy), urgent, high, "
			"medium or low",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "manager_node",
		.lname = "manager node ID",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct sfio_options, manager_node),
		.def = "0",
		.help = "SISCI node ID of the manager's host (0: the lender's)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "snv_timeout",
		.lname = "manager request timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct sfio_options, timeout_ms),
		.def = "5000",
		.help = "milliseconds per request to the manager",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "backup_adapter",
		.lname = "backup path adapter",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct sfio_options, backup_adapter),
		.def = "-1",
		.minval = -1,
		.maxval = 255,
		.help = "local adapter of a backup queue pair to fail over to (-1: none)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

static int resolve_fdid(const char *opt, const char *arg, const char *what, uint32_t *out);

/* sq_place=/cq_place=; accel:DEV (SQs only) as `smartio-nvme --sq accel:DEV`. */
static int place_parse(const char *what, const char *s, bool sq, struct snv_qpair_opts *qo)
{
	static const char *const names[] = { "default", "device", "host", "cmb" };
	enum snv_place *out = sq ? &qo->sq_place : &qo->cq_place;

	for (unsigned int i = 0; i < 4; i++) {
		if (s && !strcmp(s, names[i])) {
			*out = (enum snv_place)i;
			return 0;
		}
	}
	/* The SQ in that accelerator's memory (TOCS'21 fig. 34, "SQ in the lender's GPU"). */
	if (sq && s && !strncmp(s, "accel:", 6) && s[6]) {
		if (resolve_fdid("sq_place=accel:", s + 6,
				 "no such accelerator in the device pool",
				 &qo->sq_accel))
			return -1;
		*out = SNV_PLACE_ACCEL;
		return 0;
	}
	log_err("smartio-fio: %s=%s: use default, device, host, cmb%s\n", what, s ? s : "",
		sq ? " or accel:DEV" : "");
	return -1;
}

/* A device's fabric device ID from a number, NAME or NODE:NAME; unset: the first
 * NVMe controller in the pool. `opt` ("fdid=") and `what` name it in messages. */
static int resolve_fdid(const char *opt, const char *arg, const char *what, uint32_t *out)
{
	sci_smartio_device_info_t f;
	unsigned int ids[4], n;
	sci_error_t se;
	sci_desc_t sd;
	char *end;

	if (arg && *arg) {
		unsigned long v = strtoul(arg, &end, 0);

		if (!*end && v && v <= 0xffffffffu) {
			*out = (uint32_t)v;
			return 0;
		}
	}
	memset(&f, 0, sizeof(f));
	if (arg && *arg) {
		const char *colon = strchr(arg, ':');

		if (colon)
			f.nodeid = (unsigned int)strtoul(arg, NULL, 0);
		snprintf(f.user_name, sizeof(f.user_name), "%s", colon ? colon + 1 : arg);
	} else {
		f.pci_class = 0x010802;
	}
	SCIInitialize(0, &se);
	if (se == SCI_ERR_OK)
		SCIOpen(&sd, 0, &se);
	if (se != SCI_ERR_OK) {
		log_err("smartio-fio: SISCI: %s (is the cluster up, and does fio run as a "
			"program of a host? use `smartio exec --host N -- fio ...`)\n",
			SCIGetErrorString(se));
		return -1;
	}
	n = SCIGetDeviceList(sd, ids, 4, &f, 0, &se);
	SCIClose(sd, 0, &se);
	if (!n || (arg && *arg && n != 1)) {
		log_err("smartio-fio: %s%s: %s (see `smartio lspci`; give NODE:NAME or the "
			"fabric device ID)\n", opt, arg && *arg ? arg : "(unset)",
			!n ? what : "ambiguous");
		return -1;
	}
	*out = ids[0];
	return 0;
}

static int client_open(struct thread_data *td, struct snv_client **c, struct snv_ns_info *ni)
{
	struct sfio_options *o = td->eo;
	struct snv_client_opts co = { .manager_node = o->manager_node,
				      .timeout_ms = o->timeout_ms,
				      .multipath = o->backup_adapter >= 0,
				      .backup_adapter = o->backup_adapter >= 0 ?
							(unsigned)o->backup_adapter : 0 };
	char err[256] = "";
	int rc;

	if (resolve_fdid("fdid=", o->fdid, "no such NVMe controller in the device pool", &co.fdid))
		return -1;
	rc = snv_client_open(&co, c, err, sizeof(err));
	if (rc) {
		if (err[0])
			log_err("smartio-fio: controller %#x: %s\n", co.fdid, err);
		else
			log_err("smartio-fio: controller %#x: %s (is `smartio-nvme manager` running "
				"for it?)\n", co.fdid, strerror(-rc));
		return -1;
	}
	rc = snv_ns_info(*c, o->nsid, ni);
	if (rc) {
		log_err("smartio-fio: namespace %u: %s\n", o->nsid,
			rc > 0 ? "not an active namespace" : strerror(-rc));
		snv_client_close(*c);
		*c = NULL;
		return -1;
	}
	return 0;
}

static struct sfio *sfio_data(struct thread_data *td)
{
	if (!td->io_ops_data)
		td->io_ops_data = calloc(1, sizeof(struct sfio));
	return td->io_ops_data;
}

static int sfio_init(struct thread_data *td)
{
	struct sfio_options *o = td->eo;
	struct snv_qpair_opts qo = { 0 };
	struct sfio *s = sfio_data(td);
	int rc;

	if (!s) {
		td_verror(td, ENOMEM, "calloc");
		return 1;
	}
	if (place_parse("sq_place", o->sq_place, true, &qo) ||
	    place_parse("cq_place", o->cq_place, false, &qo))
		return 1;
	if (snv_prio_parse(o->prio ? o->prio : "default", &qo.prio)) {
		log_err("smartio-fio: prio=%s: want default, urgent, high, medium or low\n", o->prio);
		return 1;
	}
	if (td->o.max_bs[DDIR_READ] > SFIO_MAX_XFER || td->o.max_bs[DDIR_WRITE] > SFIO_MAX_XFER) {
		log_err("smartio-fio: bs up to %uk (the controller's largest transfer)\n",
			SFIO_MAX_XFER / 1024);
		return 1;
	}
	if (client_open(td, &s->c, &s->ni))
		return 1;
	s->depth = td->o.iodepth ? td->o.iodepth : 1;
	s->cpl = calloc(s->depth, sizeof(*s->cpl));
	s->events = calloc(s->depth, sizeof(*s->events));
	if (!s->cpl || !s->events) {
		td_verror(td, ENOMEM, "calloc");
		return 1;
	}
	qo.depth = s->depth + 1;        /* a queue of N entries holds N - 1 commands */
	rc = snv_qpair_create(s->c, &qo, &s->q);
	if (rc) {
		log_err("smartio-fio: cannot create a queue pair of %u entries: %s%s\n", qo.depth,
			strerror(-rc),
			rc == -EACCES ? " (the manager's policy does not allow this prio= to this host)" :
			rc == -ENOTSUP && qo.prio ? " (the manager runs round robin: no prio= classes)" :
			rc == -ENOTSUP ? " (no CMB for SQs on this controller)" :
			rc == -ENOSPC ? " (all I/O queues are in use)" :
			rc == -EADDRNOTAVAIL ? " (the lender's NTB has no free window onto this "
			"host's memory: other clients use them all; cq_place=device puts the CQ "
			"in the lender's memory, where it needs none)" :
			rc == -EINVAL ? " (iodepth beyond the controller's queue size?)" : "");
		return 1;
	}
	return 0;
}

/*
 * The timing model's cost of one command on the routes this job's queue pair
 * and buffers have (docs/timing-model.md), to set beside fio's clat. On
 * stderr, so that --output-format=json stays one JSON document.
 */
static void print_model(struct sfio *s)
{
	struct snv_prediction m;

	if (snv_qpair_predict(s->q, &m))
		return;
	log_err("smartio-fio: model (real hardware, this route): %.2f us per %u-byte %s "
		"(doorbell %.2f + fetch %.2f + media %.2f + data %.2f + completion %.2f)%s\n",
		m.total_us, m.size, m.write ? "write" : "read", m.doorbell_us, m.fetch_us,
		m.media_us, m.data_us, m.cqe_us, m.complete ? "" : " (some paths unresolved)");
}

static void sfio_cleanup(struct thread_data *td)
{
	struct sfio *s = td->io_ops_data;

	if (!s)
		return;
	if (s->q)
		print_model(s);
	if (s->q)
		(void)snv_qpair_delete(s->q, true);
	if (s->buf)
		snv_buf_free(s->buf);
	if (s->c)
		snv_client_close(s->c);
	free(s->cpl);
	free(s->events);
	free(s);
	td->io_ops_data = NULL;
}

/* fio's I/O buffers, in memory the controller reaches by DMA: no bounce copy. */
static int sfio_iomem_alloc(struct thread_data *td, size_t total)
{
	struct sfio *s = td->io_ops_data;
	struct sfio_options *o = td->eo;
	size_t size = (total + 4095) & ~(size_t)4095;
	unsigned long long bus;
	char *end;
	int rc;

	if (!s || !s->c)
		return 1;
	if (o->buffer && *o->buffer) {
		/* Device memory (snv_buf_attach_bus): fio's own stores into it are MMIO. */
		errno = 0;
		bus = strncmp(o->buffer, "bus:", 4) ? 0 : strtoull(o->buffer + 4, &end, 0);
		if (!bus || errno || *end || bus % 4096) {
			log_err("smartio-fio: buffer=%s should be bus:ADDR, a page-aligned bus "
				"address of device memory on this host\n", o->buffer);
			return 1;
		}
		rc = snv_buf_attach_bus(s->c, bus, size, &s->buf);
	} else {
		rc = snv_buf_alloc(s->c, size, &s->buf);
	}
	if (rc) {
		log_err("smartio-fio: %zu bytes of device-visible memory: %s\n", size,
			strerror(-rc));
		return 1;
	}
	s->base = snv_buf_vaddr(s->buf);
	s->size = size;
	td->orig_buffer = (char *)s->base;
	return 0;
}

static void sfio_iomem_free(struct thread_data *td)
{
	struct sfio *s = td->io_ops_data;

	if (s && s->buf) {
		snv_buf_free(s->buf);
		s->buf = NULL;
		s->base = NULL;
	}
	td->orig_buffer = NULL;
}

/* The namespace's size: in fio's parent (before the job starts) with a client of its own. */
static int sfio_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct sfio *s = td->io_ops_data;
	struct snv_client *c = NULL;
	struct snv_ns_info ni;

	if (fio_file_size_known(f))
		return 0;
	if (s && s->c) {
		ni = s->ni;
	} else {
		if (client_open(td, &c, &ni))
			return 1;
		snv_client_close(c);
	}
	f->real_file_size = ni.nlb * ni.lba_size;
	fio_file_set_size_known(f);
	return 0;
}

static enum fio_q_status sfio_queue(struct thread_data *td, struct io_u *io_u)
{
	struct sfio_options *o = td->eo;
	struct sfio *s = td->io_ops_data;
	uint8_t *p = (uint8_t *)io_u->xfer_buf;
	uint32_t lba = s->ni.lba_size;
	int rc;

	fio_ro_check(td, io_u);
	io_u->engine_data = NULL;
	switch (io_u->ddir) {
	case DDIR_READ:
	case DDIR_WRITE:
		if (io_u->offset % lba || io_u->xfer_buflen % lba || !io_u->xfer_buflen ||
		    io_u->xfer_buflen > SFIO_MAX_XFER || p < s->base ||
		    p + io_u->xfer_buflen > s->base + s->size) {
			log_err("smartio-fio: %s of %llu bytes at %llu: offset and length must be "
				"multiples of the %u-byte block, up to %uk, in fio's buffers\n",
				io_ddir_name(io_u->ddir), io_u->xfer_buflen, io_u->offset, lba,
				SFIO_MAX_XFER / 1024);
			io_u->error = EINVAL;
			return FIO_Q_COMPLETED;
		}
		rc = snv_submit_rw(s->q, io_u->ddir == DDIR_WRITE, o->nsid, io_u->offset / lba,
				   (uint32_t)(io_u->xfer_buflen / lba), s->buf, (size_t)(p - s->base),
				   io_u);
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
		rc = snv_submit_flush(s->q, o->nsid, io_u);
		break;
	default:
		io_u->error = EOPNOTSUPP;       /* trim: no Dataset Management in the driver */
		return FIO_Q_COMPLETED;
	}
	if (rc == -EAGAIN)
		return FIO_Q_BUSY;
	if (rc) {
		io_u->error = -rc;
		return FIO_Q_COMPLETED;
	}
	return FIO_Q_QUEUED;
}

/* Poll the CQ until at least min completions (max at most), or the timeout. */
static int sfio_getevents(struct thread_data *td, unsigned int min, unsigned int max,
			  const struct timespec *t)
{
	struct sfio *s = td->io_ops_data;
	uint64_t start = 0, limit = t ? (uint64_t)t->tv_sec * 1000 + (uint64_t)t->tv_nsec / 1000000
				   : SFIO_STALL_MS;
	unsigned int got = 0, spins = 0;

	s->nevents = 0;
	if (max > s->depth)
		max = s->depth;
	for (;;) {
		int n = snv_poll(s->q, s->cpl, max - got);

		if (n < 0) {
			td_verror(td, -n, "snv_poll");
			return n;
		}
		for (int i = 0; i < n; i++) {
			struct io_u *io_u = s->cpl[i].cookie;

			io_u->error = s->cpl[i].status ? EIO : 0;
			io_u->engine_data = (void *)(uintptr_t)s->cpl[i].status;
			s->events[s->nevents++] = io_u;
		}
		got += (unsigned int)n;
		if (got >= min || got >= max)
			return (int)got;
		/* Spin; look at the clock only now and then (it costs more than a
		 * poll), and let the device's thread have this CPU if it needs it. */
		if (++spins % 1024)
			continue;
		sched_yield();
		if (!start)
			start = smio_now_ms();
		else if (smio_now_ms() - start >= limit) {
			if (t)
				return (int)got;
			log_err("smartio-fio: no completion for %u ms (%u in flight); "
				"is the controller alive?\n", SFIO_STALL_MS, snv_qpair_inflight(s->q));
			td_verror(td, ETIMEDOUT, "getevents");
			return -ETIMEDOUT;
		}
	}
}

static struct io_u *sfio_event(struct thread_data *td, int ev)
{
	struct sfio *s = td->io_ops_data;

	return ev >= 0 && (unsigned int)ev < s->nevents ? s->events[ev] : NULL;
}

static char *sfio_errdetails(struct io_u *io_u)
{
	unsigned int st = (unsigned int)(uintptr_t)io_u->engine_data;
	char *msg = malloc(96);

	if (msg)
		snprintf(msg, 96, "NVMe status %#x (type %#x, code %#x%s)", st, (st >> 8) & 7,
			 st & 0xff, st & 0x4000 ? ", do not retry" : "");
	return msg;
}

static int sfio_open_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int sfio_close_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int sfio_invalidate(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

struct ioengine_ops ioengine = {
	.name = "smartio-nvme",
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_DISKLESSIO | FIO_NOEXTEND | FIO_NODISKUTIL | FIO_MEMALIGN,
	.init = sfio_init,
	.cleanup = sfio_cleanup,
	.queue = sfio_queue,
	.getevents = sfio_getevents,
	.event = sfio_event,
	.errdetails = sfio_errdetails,
	.open_file = sfio_open_file,
	.close_file = sfio_close_file,
	.invalidate = sfio_invalidate,
	.get_file_size = sfio_get_file_size,
	.iomem_alloc = sfio_iomem_alloc,
	.iomem_free = sfio_iomem_free,
	.options = options,
	.option_struct_size = sizeof(struct sfio_options),
};
