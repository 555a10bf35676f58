/* SPDX-License-Identifier: MIT */
/*
 * smartio mount: a host's NVMe namespaces as files. The I/O layer
 * (mount_io.c) talks to the host's NVMe driver through its daemon; the FUSE
 * side (mount.c) maps file operations onto it.
 */
#ifndef SMARTIO_MOUNT_H
#define SMARTIO_MOUNT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define MNT_NAME_MAX 32
#define MNT_MAX_DEVS 32           /* --dev options */

/* One namespace of one controller the host's NVMe driver has. */
struct mnt_ns {
	char name[MNT_NAME_MAX];   /* nvme<K>n<NSID>, K in 'smartio nvme list' order */
	uint16_t bdf;
	uint32_t nsid;
	unsigned shift;            /* log2 of the LBA size */
	uint64_t nsze;             /* blocks */
	uint64_t bytes;            /* nsze << shift */
	/* Writes of whole blocks share it; a read-modify-write holds it alone. */
	pthread_rwlock_t lock;
};

struct mnt_ctx {
	char dir[PATH_MAX];        /* cluster directory (absolute) */
	uint32_t host;
	struct mnt_ns *ns;
	unsigned nns;
	struct timespec t0;        /* mount time: the files' times */
	pthread_key_t key;         /* per-thread connection (struct mio_conn) */
	bool key_ok;
};

/* Log a line (stderr, or syslog when detached without a log file). */
void mnt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Per-thread connections; call once before any I/O, mio_fini at the end. */
int mio_init(struct mnt_ctx *m);
void mio_fini(struct mnt_ctx *m);
/*
 * Find the namespaces of every controller the host's NVMe driver has (local
 * or borrowed alike), on the calling thread's connection; with ndev > 0, of
 * the controllers at bdfs[] only (each must have the driver). Prints errors
 * with cli_err. Returns 0 (m->ns/nns set, nns may be 0) or -errno.
 */
int mio_discover(struct mnt_ctx *m, const uint16_t *bdfs, unsigned ndev);
/* Close the calling thread's connection (before fork). */
void mio_drop_conn(struct mnt_ctx *m);

/* Byte-granular I/O; return bytes done or -errno (EIO for device errors, logged). */
ssize_t mio_read(struct mnt_ctx *m, struct mnt_ns *ns, void *buf, size_t len, uint64_t off);
ssize_t mio_write(struct mnt_ctx *m, struct mnt_ns *ns, const void *buf, size_t len,
		  uint64_t off);
/* Zero [off, off + len) (whole blocks by Write Zeroes, edges read-modify-written). */
int mio_zero(struct mnt_ctx *m, struct mnt_ns *ns, uint64_t off, uint64_t len);
/* NVMe Flush of the namespace. */
int mio_flush(struct mnt_ctx *m, struct mnt_ns *ns);

#endif
