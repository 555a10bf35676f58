// SPDX-License-Identifier: MIT
/* libsmartio-nvme: errors, time, randomness, message framing, DMA memory. */
#include <errno.h>
#include <stdlib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "snv_priv.h"
#include "util/smio_time.h"

int snv_errno(sci_error_t e)
{
	switch (e) {
	case SCI_ERR_OK:
		return 0;
	case SCI_ERR_BUSY:
	case SCI_ERR_NOT_AVAILABLE:      /* borrowed exclusively elsewhere */
	case SCI_ERR_REMOTE_BUSY:
		return -EBUSY;
	case SCI_ERR_TIMEOUT:
		return -ETIMEDOUT;
	case SCI_ERR_NO_SUCH_FDID:
	case SCI_ERR_NO_SUCH_SEGMENT:
	case SCI_ERR_NO_SUCH_NODEID:
		return -ENOENT;
	case SCI_ERR_NOSPC:
	case SCI_ERR_HW_NOSPC:
		return -ENOSPC;
	case SCI_ERR_SEGMENTID_USED:
		return -EEXIST;
	case SCI_ERR_NODE_NOT_RESPONDING:
	case SCI_ERR_NO_LINK_ACCESS:
	case SCI_ERR_NO_REMOTE_LINK_ACCESS:
		return -EHOSTUNREACH;
	case SCI_ERR_ACCESS:
		return -EACCES;
	case SCI_ERR_OUT_OF_RANGE:
	case SCI_ERR_ILLEGAL_PARAMETER:
	case SCI_ERR_ILLEGAL_FLAG:
	case SCI_ERR_SIZE_ALIGNMENT:
	case SCI_ERR_ILLEGAL_ADDRESS:
		return -EINVAL;
	case SCI_ERR_NOT_INITIALIZED:
		return -ENXIO;
	case SCI_ERR_FLAG_NOT_IMPLEMENTED:
	case SCI_ERR_NOT_SUPPORTED:
		return -ENOTSUP;
	case SCI_ERR_TRANSFER_FAILED:
		return -EIO;
	default:
		return -EIO;
	}
}

void snv_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void snv_pause_ms(unsigned ms)
{
	poll(NULL, 0, (int)ms);
}

uint64_t snv_random64(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
		/* Not expected on Linux >= 3.17; still never return a constant. */
		v ^= smio_now_ns() * 0x9e3779b97f4a7c15ull;
	}
	return v ? v : 1;
}

void snv_msg_init(struct snv_hdr *h, unsigned type, unsigned len)
{
	memset(h, 0, sizeof(*h));
	h->magic = SNV_MSG_MAGIC;
	h->version = SNV_MSG_VERSION;
	h->type = (uint16_t)type;
	h->len = len;
}

long snv_msg_check(const void *msg, unsigned len)
{
	struct snv_hdr h;

	if (len < sizeof(h) || len > SNV_MSG_MAX)
		return -EPROTO;
	memcpy(&h, msg, sizeof(h));
	if (h.magic != SNV_MSG_MAGIC || h.version != SNV_MSG_VERSION || h.len != len || h.rsvd)
		return -EPROTO;
	return (long)(len - sizeof(h));
}

int snv_dmamem_alloc(sci_desc_t sd, unsigned adapter, sci_smartio_device_t dev, size_t size,
		     struct snv_dmamem *m)
{
	sci_error_t err;

	memset(m, 0, sizeof(*m));
	size = (size + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1);
	SCICreateSegment(sd, &m->seg, 0, size, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
	if (err)
		return snv_errno(err);
	SCIPrepareSegment(m->seg, adapter, 0, &err);
	if (!err)
		m->vaddr = SCIMapLocalSegment(m->seg, &m->map, 0, size, NULL, 0, &err);
	if (!err) {
		SCIMapLocalSegmentForDevice(m->seg, adapter, dev, &m->io, 0, size, 0, &err);
		m->mapped_dev = !err;
	}
	if (err) {
		/* SCI_ERR_HW_NOSPC: no free window of the lender's NTB (not "no memory") */
		int rc = m->vaddr && err == SCI_ERR_HW_NOSPC ? -EADDRNOTAVAIL : snv_errno(err);

		snv_dmamem_free(m, adapter, dev);
		return rc;
	}
	m->size = size;
	memset(m->vaddr, 0, size);
	return 0;
}

void snv_dmamem_free(struct snv_dmamem *m, unsigned adapter, sci_smartio_device_t dev)
{
	sci_error_t err;

	if (!m->seg)
		return;
	if (m->mapped_dev)
		SCIUnmapLocalSegmentForDevice(m->seg, adapter, dev, 0, &err);
	if (m->vaddr && m->map)
		SCIUnmapSegment(m->map, 0, &err);
	SCIRemoveSegment(m->seg, 0, &err);
	memset(m, 0, sizeof(*m));
}

static const char *const prio_names[] = {
	[SNV_PRIO_DEFAULT] = "default", [SNV_PRIO_URGENT] = "urgent", [SNV_PRIO_HIGH] = "high",
	[SNV_PRIO_MEDIUM] = "medium", [SNV_PRIO_LOW] = "low", [SNV_PRIO_NONE] = "none",
};

const char *snv_prio_name(enum snv_prio p)
{
	return (unsigned)p <= SNV_PRIO_NONE ? prio_names[p] : NULL;
}

int snv_prio_parse(const char *s, enum snv_prio *out)
{
	for (unsigned p = SNV_PRIO_DEFAULT; p <= SNV_PRIO_LOW; p++) {
		if (s && !strcmp(s, prio_names[p])) {
			*out = (enum snv_prio)p;
			return 0;
		}
	}
	return -EINVAL;
}

int snv_list_add(void ***arr, unsigned *n, unsigned *cap, void *p)
{
	if (*n == *cap) {
		unsigned nc = *cap ? *cap * 2 : 8;
		void **na = realloc(*arr, nc * sizeof(*na));

		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = nc;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

void snv_list_del(void **arr, unsigned *n, void *p)
{
	for (unsigned i = 0; i < *n; i++)
		if (arr[i] == p) {
			arr[i] = arr[--*n];
			return;
		}
}
