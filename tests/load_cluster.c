// SPDX-License-Identifier: MIT
/*
 * The daemon_load suite's cluster and measuring tools (load_cluster.h).
 *
 * Start-up and stop follow tests/test_daemon.c: each daemon gets a ready
 * pipe on fd 3 and nothing else of ours, so nothing here sleeps or polls for
 * start-up; a stop is SIGTERM (or another signal), a pidfd wait and a reap.
 *
 * Daemon-side effects of a close are asynchronous; sync_host() is the
 * barrier: a STATUS round trip on one admin connection, then one on
 * another. The close made before the first request was seen by the loop no
 * later than that request; the second request arrives only after the first
 * was served, so it is seen in a later turn of the loop, and sd-event
 * dispatches what has waited longest first: the close is handled before the
 * second reply. (Two round trips on the same connection are not enough: the
 * daemon reads up to SMD_MSGS_PER_WAKE messages of a connection in one turn,
 * so it may serve both before it looks at the closed one.) A close whose
 * connection still has a request on a worker is handled once that request
 * ends: check_daemons() polls the fd count, bounded, with a barrier between
 * looks (never a bare sleep).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "load_cluster.h"
#include "smartio/topology.h"
#include "util/smio_time.h"

struct cluster g;
union rbuf rbuf;

/* ---------- calls ---------- */

int call(int fd, uint16_t type, const void *req, uint32_t len, uint32_t *rlen)
{
	uint32_t n;

	return smio_call(fd, type, req, len, rbuf.b, sizeof(rbuf.b), rlen ? rlen : &n, NULL,
			 IO_MS);
}

int hello(int fd, uint32_t role, uint32_t host)
{
	struct smio_hello m = { .role = role, .host = host, .pid = (uint32_t)getpid(),
				.version = SMIO_VERSION };

	return call(fd, SMIO_HELLO, &m, sizeof(m), NULL);
}

int status(int fd)
{
	uint32_t len;
	int rc = call(fd, SMIO_STATUS, NULL, 0, &len);

	if (!rc && len != sizeof(struct smio_status))
		return -EPROTO;
	return rc;
}

int raw_conn(uint32_t host)
{
	int fd = smio_connect(g.dir, host, IO_MS);

	assert_true(fd >= 0);
	return fd;
}

int open_conn(uint32_t host, uint32_t role, uint32_t as_host)
{
	int fd = raw_conn(host);

	assert_int_equal(hello(fd, role, as_host), 0);
	return fd;
}

int route(int fd, uint64_t addr, bool nocache)
{
	struct smio_route_req rt = { .addr = addr, .len = 64, .nocache = nocache };
	uint32_t rlen;

	assert_int_equal(smio_call(fd, SMIO_ROUTE, &rt, sizeof(rt), rbuf.b, sizeof(rbuf.b),
				   &rlen, NULL, 4 * SMD_PEER_TIMEOUT), 0);
	assert_true(rlen >= sizeof(struct smio_route_reply));
	return rbuf.rr.status;
}

uint64_t lut_window(uint32_t host, uint32_t dest_host, uint64_t dest_addr, uint32_t *entry)
{
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX, .dest_host = dest_host,
				    .dest_addr = dest_addr };
	struct smio_ntb_ref nr = { .ntb = 0 };
	int ad = g.d[host].ctl;
	uint64_t win;

	assert_int_equal(call(ad, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	assert_int_equal(rbuf.ni.link_up, 1);
	assert_true(rbuf.ni.win_size > 0);
	win = rbuf.ni.win_size;
	assert_int_equal(call(ad, SMIO_NTB_LUT_SET, &lut, sizeof(lut), NULL), 0);
	assert_int_not_equal(rbuf.lut.entry, UINT32_MAX);
	*entry = rbuf.lut.entry;
	win *= rbuf.lut.entry;
	assert_int_equal(call(ad, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	return win + rbuf.ni.bar_addr;
}

void lut_clear(uint32_t host, uint32_t entry)
{
	struct smio_ntb_lut lut = { .ntb = 0, .entry = entry };

	assert_int_equal(call(g.d[host].ctl, SMIO_NTB_LUT_CLEAR, &lut, sizeof(lut), NULL), 0);
}

uint32_t seg_new(int fd, uint64_t size)
{
	struct smio_seg_create cr = { .segid = SMIO_SEGID_AUTO, .size = size };
	struct smio_seg_avail av = { .available = 1 };

	assert_int_equal(call(fd, SMIO_SEG_CREATE, &cr, sizeof(cr), NULL), 0);
	av.segid = rbuf.si.segid;
	assert_int_equal(call(fd, SMIO_SEG_AVAILABLE, &av, sizeof(av), NULL), 0);
	return av.segid;
}

int seg_connect(int fd, uint32_t owner, uint32_t segid)
{
	struct smio_seg_connect m = { .node_id = g.d[owner].node_id, .segid = segid,
				      .adapter = 0 };

	return call(fd, SMIO_SEG_CONNECT, &m, sizeof(m), NULL);
}

int seg_disconnect(int fd, uint32_t conn)
{
	struct smio_seg_conn_ref m = { .conn = conn };

	return call(fd, SMIO_SEG_DISCONNECT, &m, sizeof(m), NULL);
}

/* ---------- cluster ---------- */

int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* What a daemon holds, for the log of a failed fd check. */
static void list_fds(pid_t pid)
{
	char path[64], lnk[PATH_MAX + 64], tgt[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(lnk, sizeof(lnk), "%s/%s", path, e->d_name);
		n = readlink(lnk, tgt, sizeof(tgt) - 1);
		tgt[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "  pid %d fd %s -> %s\n", (int)pid, e->d_name, tgt);
	}
	closedir(d);
}

void start_daemon(uint32_t host)
{
	char hostarg[16], line[16];
	struct pollfd p;
	int pfd[2], n;
	pid_t pid;

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	snprintf(hostarg, sizeof(hostarg), "%u", host);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Never outlive the test, even if it crashes. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (pfd[1] == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(pfd[1], 3) < 0)
			_exit(126);
		/* Only stdio and the ready pipe: nothing the test holds. */
		syscall(SYS_close_range, 4u, ~0u, 0u);
		execl(g.smartiod, "smartiod", "--cluster", g.dir, "--host", hostarg,
		      "--ready-fd", "3", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	assert_int_equal(poll(&p, 1, READY_MS), 1);
	n = (int)read(pfd[0], line, sizeof(line) - 1);
	close(pfd[0]);
	if (n <= 0)
		fail_msg("smartiod host %u died before it was ready (%s)", host, g.smartiod);
	line[n] = '\0';
	assert_string_equal(line, "ready\n");
	g.d[host].pid = pid;
	g.d[host].ctl = open_conn(host, SMIO_ROLE_ADMIN, host);
	g.d[host].node_id = rbuf.hr.node_id;
	g.d[host].ctl2 = open_conn(host, SMIO_ROLE_ADMIN, host);
}

int stop_daemon(uint32_t host, int sig)
{
	pid_t pid = g.d[host].pid;
	int pidfd, ws = 0;

	if (g.d[host].ctl >= 0)
		close(g.d[host].ctl);
	if (g.d[host].ctl2 >= 0)
		close(g.d[host].ctl2);
	g.d[host].ctl = g.d[host].ctl2 = -1;
	if (pid <= 0)
		return 0;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	kill(pid, SIGCONT);          /* a stopped daemon cannot take SIGTERM */
	kill(pid, sig);
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		if (poll(&p, 1, EXIT_MS) != 1)
			kill(pid, SIGKILL);
		close(pidfd);
	}
	waitpid(pid, &ws, 0);
	g.d[host].pid = 0;
	return ws;
}

void restart_daemon(uint32_t host)
{
	int ws = stop_daemon(host, SIGTERM);

	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	start_daemon(host);
}

void sync_host(uint32_t host)
{
	assert_int_equal(status(g.d[host].ctl), 0);
	assert_int_equal(status(g.d[host].ctl2), 0);
}

void assert_alive(uint32_t host)
{
	int fd;

	assert_int_equal(kill(g.d[host].pid, 0), 0);
	fd = open_conn(host, SMIO_ROLE_CLIENT, host);
	assert_int_equal(status(fd), 0);
	assert_int_equal(rbuf.st.host, host);
	assert_int_equal(rbuf.st.pid, (uint32_t)g.d[host].pid);
	close(fd);
}

void snapshot(void)
{
	for (uint32_t i = 0; i < NHOSTS; i++) {
		sync_host(i);
		wait_clients(i, 2, IO_MS);    /* ctl and ctl2: the rest is gone */
		g.d[i].fds = count_fds(g.d[i].pid);
	}
}

void check_daemons(void)
{
	for (uint32_t i = 0; i < NHOSTS; i++) {
		int64_t deadline = smio_deadline(IO_MS);
		int n;

		assert_alive(i);
		/* Bounded: each look is after a barrier; a worker may still hold a close. */
		for (;;) {
			sync_host(i);
			n = count_fds(g.d[i].pid);
			if (n == g.d[i].fds || smio_ms_left(deadline) == 0)
				break;
			poll(NULL, 0, 10);
		}
		if (n != g.d[i].fds) {
			list_fds(g.d[i].pid);
			fail_msg("host %u: %d open fds, %d before the test", i, n, g.d[i].fds);
		}
	}
}

void wait_clients(uint32_t host, unsigned base, int timeout_ms)
{
	int64_t deadline = smio_deadline(timeout_ms);

	for (;;) {
		assert_int_equal(status(g.d[host].ctl), 0);
		if (rbuf.st.nclients == base)
			return;
		if (smio_ms_left(deadline) == 0)
			fail_msg("host %u: %u connections, expected %u", host, rbuf.st.nclients,
				 base);
		poll(NULL, 0, 5);
	}
}

static void remove_tree(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);        /* DIR/procs of smartio exec */
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int cluster_setup(rlim_t nofile)
{
	const char *bd = getenv("SMARTIO_BUILD_DIR");
	const char *yaml = topo_default_yaml();
	char path[PATH_MAX];
	struct rlimit rl;
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	/* Raised before the daemons start: they inherit it. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < nofile) {
		rl.rlim_cur = rl.rlim_max < nofile ? rl.rlim_max : nofile;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!bd || !*bd)
		bd = "./build";
	snprintf(g.smartiod, sizeof(g.smartiod), "%s/src/daemon/smartiod", bd);
	snprintf(g.cli, sizeof(g.cli), "%s/tools/smartio/smartio", bd);
	if (access(g.smartiod, X_OK) || access(g.cli, X_OK)) {
		fprintf(stderr, "daemon_load: no executable %s or %s\n", g.smartiod, g.cli);
		return -1;
	}
	snprintf(g.dir, sizeof(g.dir), "/tmp/smio-load-XXXXXX");
	if (!mkdtemp(g.dir))
		return -1;
	/* Searchable by every user: the role test connects as nobody. */
	if (chmod(g.dir, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/topology.yaml", g.dir);
	f = fopen(path, "w");
	if (!f || fwrite(yaml, 1, strlen(yaml), f) != strlen(yaml) || fclose(f))
		return -1;
	for (uint32_t i = 0; i < NHOSTS; i++)
		g.d[i].ctl = g.d[i].ctl2 = -1;
	for (uint32_t i = 0; i < NHOSTS; i++)
		start_daemon(i);
	return 0;
}

int cluster_teardown(void)
{
	int rc = 0;

	for (uint32_t i = 0; i < NHOSTS; i++) {
		int ws = stop_daemon(i, SIGTERM);

		/* A clean exit on SIGTERM: no crash, no sanitizer report. */
		if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			fprintf(stderr, "daemon_load: host %u exited with status 0x%x\n", i, ws);
			rc = -1;
		}
	}
	remove_tree(g.dir);
	return rc;
}

/* ---------- probes: what a well-behaved application asks ---------- */

/* What `smartio lspci` asks: FUNC_LIST, then CFG_DUMP of every function. */
void lspci(int fd, struct lat *l)
{
	uint16_t bdf[SMIO_MAX_FUNCS];
	uint32_t n, rlen;

	TIMED(l, assert_int_equal(call(fd, SMIO_FUNC_LIST, NULL, 0, &rlen), 0));
	n = rbuf.fl.n;
	assert_true(n > 0 && n <= SMIO_MAX_FUNCS);
	for (uint32_t i = 0; i < n; i++)
		bdf[i] = rbuf.fl.f[i].bdf;
	for (uint32_t i = 0; i < n; i++) {
		struct smio_bdf q = { .bdf = bdf[i] };

		TIMED(l, assert_int_equal(call(fd, SMIO_CFG_DUMP, &q, sizeof(q), &rlen), 0));
		assert_int_equal(rlen, SMIO_CFG_SPACE);
	}
}

void probe_init(struct probe *p, const char *what)
{
	static char names[3][3][64];
	static unsigned k;
	char (*nm)[64] = names[k++ % 3];

	snprintf(nm[0], 64, "%s connect+HELLO", what);
	snprintf(nm[1], 64, "%s STATUS", what);
	snprintf(nm[2], 64, "%s lspci requests", what);
	lat_init(&p->conn, nm[0], 1 << 14);
	lat_init(&p->status, nm[1], 1 << 14);
	lat_init(&p->lspci, nm[2], 1 << 16);
}

/* A new application on host: HELLO, STATUS, lspci; each request timed. */
void probe_round(uint32_t host, struct probe *p)
{
	uint64_t t0 = smio_now_ns();
	int fd = open_conn(host, SMIO_ROLE_CLIENT, host);

	lat_add(&p->conn, smio_now_ns() - t0);
	TIMED(&p->status, assert_int_equal(status(fd), 0));
	assert_int_equal(rbuf.st.host, host);
	lspci(fd, &p->lspci);
	close(fd);
}

void probe_print(const struct probe *p)
{
	lat_print(&p->conn);
	lat_print(&p->status);
	lat_print(&p->lspci);
}

void probe_check(const struct probe *p)
{
	lat_check(&p->conn, FAST_MS, STALL_MS);
	lat_check(&p->status, FAST_MS, STALL_MS);
	lat_check(&p->lspci, FAST_MS, STALL_MS);
}

void probe_free(struct probe *p)
{
	lat_free(&p->conn);
	lat_free(&p->status);
	lat_free(&p->lspci);
}

/* ---------- latency samples ---------- */

void lat_init(struct lat *l, const char *name, unsigned cap)
{
	l->name = name;
	l->n = 0;
	l->cap = cap;
	l->ns = calloc(cap, sizeof(*l->ns));
	assert_non_null(l->ns);
}

void lat_add(struct lat *l, uint64_t ns)
{
	if (l->n < l->cap)
		l->ns[l->n++] = ns;
}

uint64_t lat_max(const struct lat *l)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < l->n; i++)
		if (l->ns[i] > m)
			m = l->ns[i];
	return m;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t lat_pct(const struct lat *l, unsigned pct)
{
	uint64_t *v, r;
	unsigned k;

	if (!l->n)
		return 0;
	v = malloc(l->n * sizeof(*v));
	assert_non_null(v);
	memcpy(v, l->ns, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), cmp_u64);
	k = (unsigned)(((uint64_t)pct * l->n + 99) / 100);    /* nearest rank */
	r = v[k ? k - 1 : 0];
	free(v);
	return r;
}

void lat_print(const struct lat *l)
{
	print_message("[   INFO   ] %-38s n=%-5u p50=%7.3f ms  p99=%7.3f ms  max=%7.3f ms\n",
		      l->name, l->n, MS(lat_pct(l, 50)), MS(lat_pct(l, 99)), MS(lat_max(l)));
}

void lat_check(const struct lat *l, unsigned p99_ms, unsigned max_ms)
{
	double p99 = MS(lat_pct(l, 99)), max = MS(lat_max(l));

	if (p99 >= p99_ms || max >= max_ms)
		fail_msg("%s: p99 %.3f ms (bound %u ms), max %.3f ms (bound %u ms)", l->name, p99,
			 p99_ms, max, max_ms);
}

void lat_free(struct lat *l)
{
	free(l->ns);
	l->ns = NULL;
	l->n = l->cap = 0;
}
