// SPDX-License-Identifier: MIT
/*
 * Who may say what to a daemon: roles are not taken on anybody's word.
 *
 * The kernel tells us the process behind every connection (SO_PEERCRED:
 * pid and uid, as of connect()). Then:
 *  - PEER: the process must be the daemon the cluster directory lists for
 *    the host it claims (DIR/host-N.pid), running as the cluster's owner;
 *  - ADMIN: the process must run as the cluster's owner (the owner of the
 *    cluster directory, who started the daemons);
 *  - CLIENT: any process, bound to the host whose socket it connected to.
 * A process started by `smartio exec --host N` is a process of host N: exec
 * records itself in DIR/procs/<pid> (its host and start time) and stays the
 * parent and subreaper of what it runs, so every descendant is found by
 * walking up the process tree. Such a process is refused, in any role, by
 * any other host's daemon: a process of host 0 cannot change host 1's tables.
 * The same check runs the other way when we connect to a peer: whoever
 * listens on host N's socket must be host N's daemon.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "util/log.h"

#define MAX_BOUND     256     /* exec records looked at */
#define MAX_ANCESTRY  64      /* process-tree levels walked */

int smd_auth_init(struct smd *d)
{
	struct smd_core *k = d->core;
	struct stat st;

	if (stat(d->dir, &st) < 0)
		return -errno;
	k->owner_uid = st.st_uid;
	snprintf(k->procs_dir, sizeof(k->procs_dir), "%s/procs", d->dir);
	return 0;
}

/* A small text file's first line (bounded), or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), n;

	if (fd < 0)
		return -errno;
	n = (int)read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* The pid the cluster directory lists for host's daemon, or 0. */
static uint32_t daemon_pid(struct smd *d, uint32_t host)
{
	char path[4096 + 32], buf[32];
	unsigned long v;
	char *end;

	snprintf(path, sizeof(path), "%s/host-%u.pid", d->dir, host);
	if (read_line(path, buf, sizeof(buf)) <= 0)
		return 0;
	v = strtoul(buf, &end, 10);
	if (end == buf || (*end && *end != '\n') || !v || v > INT32_MAX)
		return 0;
	return (uint32_t)v;
}

int smd_auth_server(struct smd *d, uint32_t pid, uint32_t uid, uint32_t host)
{
	if (uid != d->core->owner_uid || !pid || pid != daemon_pid(d, host))
		return -EACCES;
	return 0;
}

bool smd_conn_same_process(struct smd *d, const struct smd_conn *c, uint32_t cid)
{
	const struct smd_conn *o;

	if (cid == c->cid)
		return true;
	/* The pid is the kernel's word (SO_PEERCRED), and a live connection's
	 * process is alive, so its pid was not reused. */
	o = smd_conn_find(d, cid);
	return o && c->pid && o->pid == c->pid && o->uid == c->uid &&
	       c->role != SMIO_ROLE_PEER && o->role != SMIO_ROLE_PEER &&
	       c->role && o->role && c->host == o->host;
}

/* ---------- processes of a host ---------- */

struct bound {
	uint32_t pid, host;
	uint64_t start;
};

/* Parent and start time (clock ticks after boot) of pid, from /proc. */
static int proc_stat(uint32_t pid, uint32_t *ppid, uint64_t *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st;
	int pp, field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (read_line(path, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	/* The command name may hold anything, parentheses too: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* Fields from 3 on: state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice threads
	 * itrealvalue starttime. */
	if (sscanf(p + 1, " %*c %d", &pp) != 1)
		return -EINVAL;
	/* From the ')' ending field 2, twenty spaces on: the one before field 22. */
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &st) != 1)
		return -EINVAL;
	*ppid = pp > 0 ? (uint32_t)pp : 0;
	*start = st;
	return 0;
}

/* The records `smartio exec` left (DIR/procs/PID: "HOST STARTTIME"). */
static unsigned load_bound(struct smd *d, struct bound *v)
{
	DIR *dir = opendir(d->core->procs_dir);
	struct dirent *e;
	unsigned n = 0;

	if (!dir)
		return 0;
	while (n < MAX_BOUND && (e = readdir(dir))) {
		char path[4096 + 300], buf[64];
		unsigned long pid, host;
		unsigned long long start;
		char *end;

		pid = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] == '.' || *end || !pid || pid > INT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->core->procs_dir, e->d_name);
		if (read_line(path, buf, sizeof(buf)) <= 0 ||
		    sscanf(buf, "%lu %llu", &host, &start) != 2)
			continue;
		v[n++] = (struct bound){ .pid = (uint32_t)pid, .host = (uint32_t)host,
					 .start = start };
	}
	closedir(dir);
	return n;
}

/*
 * The host whose process pid is (through its ancestry), or -1 if none. A
 * record counts only while its process lives with the same start time, so a
 * recycled pid binds nothing.
 */
static int64_t process_host(struct smd *d, uint32_t pid)
{
	struct bound *v = malloc(MAX_BOUND * sizeof(*v));
	unsigned n = v ? load_bound(d, v) : 0;
	int64_t host = -1;

	for (int depth = 0; n && pid > 1 && depth < MAX_ANCESTRY && host < 0; depth++) {
		uint32_t ppid;
		uint64_t start;

		if (proc_stat(pid, &ppid, &start))
			break;
		for (unsigned i = 0; i < n; i++)
			if (v[i].pid == pid && v[i].start == start)
				host = v[i].host;
		pid = ppid;
	}
	free(v);
	return host;
}

int smd_auth_hello(struct smd *d, struct smd_conn *c, const struct smio_hello *m)
{
	struct smd_core *k = d->core;
	int64_t bound;

	/* A daemon is a daemon, whoever started the cluster. */
	if (m->role == SMIO_ROLE_PEER) {
		if (smd_auth_server(d, c->pid, c->uid, m->host)) {
			smio_warn("refused pid %u claiming to be host %u's daemon", c->pid,
					m->host);
			return -EACCES;
		}
		return 0;
	}
	bound = process_host(d, c->pid);
	if (bound >= 0 && (uint32_t)bound != d->host_id) {
		smio_warn("refused pid %u (a process of host %u) as %s", c->pid,
				(uint32_t)bound,
				m->role == SMIO_ROLE_ADMIN ? "admin" : "client");
		return m->role == SMIO_ROLE_CLIENT ? -EXDEV : -EACCES;
	}
	if (m->role == SMIO_ROLE_ADMIN && c->uid != k->owner_uid) {
		smio_warn("refused uid %u as admin (the cluster is uid %u's)", c->uid,
				(unsigned)k->owner_uid);
		return -EACCES;
	}
	return 0;
}
