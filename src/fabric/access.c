// SPDX-License-Identifier: MIT
/* Moving bytes along resolved routes, with PCIe's failure semantics. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "route.h"

static int target_fd(struct fab_host *h, const struct fab_target *t, uint64_t *size)
{
	struct fab_world *w = h->world;

	if (t->host == h->id) {
		if (t->mem >= h->nmems)
			return -EINVAL;
		*size = h->mems[t->mem].size;
		return h->mems[t->mem].fd;
	}
	if (!w || !w->ops || !w->ops->mem_fd)
		return -EREMOTE;
	return w->ops->mem_fd(w, t->host, t->mem, size);
}

int fab_access(struct fab_host *h, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
	       bool write)
{
	struct fab_route r;
	uint8_t *p = buf;
	int first = 0;

	while (len) {
		uint64_t n, size;
		ssize_t done;
		int fd, rc;

		rc = fab_route_resolve(h, rid, addr, len, write, &r);
		if (rc)
			return rc;
		if (r.status != FAB_OK) {
			/* Nothing decodes: this request (to the next page) is lost. */
			n = FAB_PAGE_SIZE - (addr & (FAB_PAGE_SIZE - 1));
			n = n < len ? n : len;
			if (!write)
				memset(p, 0xff, n);
			if (!first)
				first = r.status;
		} else {
			n = r.tgt.len < len ? r.tgt.len : len;
			fd = target_fd(h, &r.tgt, &size);
			if (fd < 0)
				return fd;
			if (r.tgt.offset > size || n > size - r.tgt.offset)
				return -EFAULT;
			done = write ? pwrite(fd, p, n, (off_t)r.tgt.offset)
				     : pread(fd, p, n, (off_t)r.tgt.offset);
			if (done < 0)
				return -errno;
			if ((uint64_t)done != n)
				return -EIO;
		}
		p += n;
		addr += n;
		len -= n;
	}
	return first;
}
