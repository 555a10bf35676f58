/* SPDX-License-Identifier: MIT */
/*
 * For tests that must speak as another host's daemon: a daemon accepts a
 * PEER only if the kernel says it is the process the cluster directory lists
 * for that host (src/daemon/auth.c). The cluster's owner may change that
 * list; impostor_begin() puts the test's own pid in DIR/host-AS.pid for the
 * moment of a HELLO, impostor_end() restores what was there.
 */
#ifndef SMARTIO_TESTS_PEER_IMPOSTOR_H
#define SMARTIO_TESTS_PEER_IMPOSTOR_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct impostor {
	char path[4200];
	char saved[32];
	int had;                  /* the file existed */
};

static inline void impostor_write(const char *path, const char *text)
{
	char tmp[4300];
	FILE *f;

	/* Atomic for readers: a daemon never sees a half-written pid. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

static inline void impostor_begin(struct impostor *im, const char *dir, uint32_t as)
{
	char me[32];
	int fd, n;

	memset(im, 0, sizeof(*im));
	snprintf(im->path, sizeof(im->path), "%s/host-%u.pid", dir, as);
	fd = open(im->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = (int)read(fd, im->saved, sizeof(im->saved) - 1);
		im->saved[n > 0 ? n : 0] = '\0';
		im->had = 1;
		close(fd);
	}
	snprintf(me, sizeof(me), "%d\n", (int)getpid());
	impostor_write(im->path, me);
}

static inline void impostor_end(struct impostor *im)
{
	if (im->had)
		impostor_write(im->path, im->saved);
	else
		unlink(im->path);
}

#endif
