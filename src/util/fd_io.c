// SPDX-License-Identifier: MIT
#include <errno.h>
#include <unistd.h>

#include "util/fd_io.h"

int smio_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;        /* nothing taken and no error: do not spin */
		p += w;
		n -= (size_t)w;
	}
	return 0;
}
