// SPDX-License-Identifier: MIT
/* The all-ones object (allones.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "allones.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int ones_fd = -1;
static size_t ones_size;

int smio_allones_fd(size_t len)
{
	static const unsigned char chunk[4096] = { [0 ... 4095] = 0xff };
	int rc = 0;

	pthread_mutex_lock(&mu);
	if (ones_fd < 0) {
		ones_fd = memfd_create("smartio-all-ones", MFD_CLOEXEC);
		if (ones_fd < 0)
			rc = -errno;
	}
	for (size_t off = ones_size; !rc && off < len;) {
		size_t n = len - off < sizeof(chunk) ? len - off : sizeof(chunk);
		ssize_t w = pwrite(ones_fd, chunk, n, (off_t)off);

		if (w <= 0) {
			rc = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
		ones_size = off;
	}
	pthread_mutex_unlock(&mu);
	return rc ? rc : ones_fd;
}
