// SPDX-License-Identifier: MIT
/*
 * Memory for empty segments against real daemons (default cluster, started
 * with the smartio CLI): SCIRegisterSegmentMemory makes a program's own
 * buffer on host 1 (node 8) the segment's memory, SCIAttachPhysicalMemory
 * backs a segment with host 1's accelerator BAR. Forked children are
 * programs of host 0 (node 4) that connect to them through the NTB.
 *
 * A child must not return into cmocka: it checks with CHK() and reports
 * through its exit status; the parent waits for it with a bounded wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sisci_api.h"

#define PAGE		4096u
#define OWNER_NODE	8         /* host 1 */
#define USER_HOST	"0"       /* node 4 */
#define WAIT_MS		30000     /* bound on every wait (sanitizer builds are slow) */
#define REG_ID		0x300
#define BAR_ID		0x310

extern char **environ;

static char dir[PATH_MAX], cli[PATH_MAX];

/* ---------- plumbing ---------- */

static int run_cli(const char *a1)
{
	char *argv[] = { cli, (char *)"cluster", (char *)a1, NULL };
	pid_t pid;
	int st;

	if (posix_spawn(&pid, cli, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int group_setup(void **state)
{
	const char *b = getenv("SMARTIO_BUILD_DIR");
	char tmpl[] = "/tmp/smartio-sisci-reg-XXXXXX";
	sci_error_t err;

	snprintf(cli, sizeof(cli), "%s/tools/smartio/smartio", b ? b : "./build");
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(dir, sizeof(dir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", dir, 1);
	setenv("SMARTIO_HOST", "1", 1);
	signal(SIGPIPE, SIG_IGN);
	if (run_cli("up"))
		return -1;
	SCIInitialize(0, &err);
	return err == SCI_ERR_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	char parent[PATH_MAX];
	int rc;

	SCITerminate();
	rc = run_cli("down");
	snprintf(parent, sizeof(parent), "%s", dir);
	*strrchr(parent, '/') = '\0';
	rmdir(parent);
	return rc == 0 ? 0 : -1;
}

/* In a child: fail by exiting, never by returning into cmocka. */
#define CHK(c) do {							\
	if (!(c)) {							\
		fprintf(stderr, "child %s:%d: %s\n", __FILE__, __LINE__, #c); \
		_exit(1);						\
	}								\
} while (0)
#define CHK_ERR(e, want) do {						\
	sci_error_t e_ = (e), w_ = (want);				\
	if (e_ != w_) {							\
		fprintf(stderr, "child %s:%d: %s = %#x (%s), want %#x\n", \
			__FILE__, __LINE__, #e, (unsigned)e_,		\
			SCIGetErrorString(e_), (unsigned)w_);		\
		_exit(1);						\
	}								\
} while (0)

struct kid {
	pid_t pid;
	int to, from;             /* pipes: parent -> child, child -> parent */
};

static void send_step(int fd, uint32_t v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(2);
}

/* The next step number from the other side, or 0 if none within WAIT_MS. */
static uint32_t recv_step(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint32_t v = 0;

	if (poll(&p, 1, WAIT_MS) != 1 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Fork a child that runs fn as a program of host 0 (a fresh SCIInitialize). */
static struct kid spawn_user(int (*fn)(struct kid *k, void *arg), void *arg)
{
	int down[2], up[2];
	struct kid k;

	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		sci_error_t err;

		close(down[1]);
		close(up[0]);
		k.to = up[1];
		k.from = down[0];
		/* The library is a copy of the parent's: start it again as host 0. */
		SCITerminate();
		setenv("SMARTIO_HOST", USER_HOST, 1);
		SCIInitialize(0, &err);
		CHK_ERR(err, SCI_ERR_OK);
		_exit(fn(&k, arg));
	}
	close(down[0]);
	close(up[1]);
	k.to = down[1];
	k.from = up[0];
	return k;
}

/* Wait (bounded) for the child; it must exit with status 0. */
static void join(struct kid *k)
{
	int pidfd = (int)syscall(SYS_pidfd_open, k->pid, 0), ws = 0;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	assert_true(pidfd >= 0);
	if (poll(&p, 1, WAIT_MS) != 1)
		kill(k->pid, SIGKILL);
	close(pidfd);
	assert_int_equal(waitpid(k->pid, &ws, 0), k->pid);
	close(k->to);
	close(k->from);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws))
		fail_msg("child failed: status %#x", ws);
}

/* Permissions of the mapping holding addr, from /proc/self/maps ("rw-s"...). */
static bool map_perms(const volatile void *addr, char perms[5])
{
	uintptr_t a = (uintptr_t)addr, lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= a && a < hi)
			found = true;
	fclose(f);
	return found;
}


/* Fill/check a word pattern. */
static void fill(volatile uint32_t *p, size_t words, uint32_t seed)
{
	for (size_t i = 0; i < words; i++)
		p[i] = seed ^ (uint32_t)(i * 2654435761u);
}

static bool check(const volatile uint32_t *p, size_t words, uint32_t seed)
{
	for (size_t i = 0; i < words; i++)
		if (p[i] != (seed ^ (uint32_t)(i * 2654435761u)))
			return false;
	return true;
}

/* Bus address of host 1's gpu0 BAR2, as enumeration programmed it (smartio route). */
static uint64_t gpu0_bar2(void)
{
	char cmd[PATH_MAX + 64], line[256];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s route --host 1 --addr gpu0:bar2", cli);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "route on host %*u: write to %llx", &addr) == 1)
			break;
	while (fgets(line, sizeof(line), f))
		;
	pclose(f);
	return addr;
}

struct peer_arg {
	unsigned int segid;
	size_t size;
	uint32_t seed;            /* what the child expects to find, 0: do not check */
	uint32_t seed2, seed3;    /* what it writes at steps 1 and 3 */
};

/*
 * Connect to the segment on host 1, check its contents, write seed2 (step 1),
 * and when told (step 2), write seed3 (step 3); then wait for step 4.
 */
static int peer_user(struct kid *k, void *arg)
{
	const struct peer_arg *a = arg;
	sci_remote_segment_t rs;
	volatile uint32_t *rp;
	size_t words = a->size / 4;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, a->segid, 0, NULL, NULL, WAIT_MS, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(SCIGetRemoteSegmentSize(rs) == a->size);
	rp = SCIMapRemoteSegment(rs, &map, 0, a->size, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	if (a->seed)
		CHK(check(rp, words, a->seed));
	fill(rp, words, a->seed2);
	send_step(k->to, 1);
	CHK(recv_step(k->from) == 2);
	fill(rp, words, a->seed3);
	send_step(k->to, 3);
	CHK(recv_step(k->from) == 4);
	SCIUnmapSegment(map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

/* ---------- 1. a registered buffer, seen and written from another host ---------- */

static void test_register(void **state)
{
	const size_t size = 4 * PAGE, words = size / 4;
	struct peer_arg a = { .segid = REG_ID, .size = size, .seed = 0x1234abcd,
			      .seed2 = 0x5a5a0001, .seed3 = 0xc3c30002 };
	sci_query_local_segment_t ql = { 0 };
	sci_local_segment_t seg;
	volatile uint32_t *lp;
	uint32_t *buf;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	char perms[5];
	struct kid k;

	buf = aligned_alloc(PAGE, size);
	assert_non_null(buf);
	fill(buf, words, a.seed);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, REG_ID, size, NULL, NULL, SCI_FLAG_EMPTY, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterSegmentMemory(buf, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Same address, same contents, now shared with the segment's RAM. */
	assert_true(check(buf, words, a.seed));
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-s");
	assert_int_equal(SCIGetLocalSegmentSize(seg), size);
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_IOADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(ql.data.ioaddr != 0);
	/* It has memory now: a second registration is refused. */
	SCIRegisterSegmentMemory(buf, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	/* A map of the segment is the same memory as the buffer. */
	lp = SCIMapLocalSegment(seg, &map, 0, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	buf[7] = 0xfeedf00d;
	assert_int_equal(lp[7], 0xfeedf00d);
	buf[7] = a.seed ^ (uint32_t)(7 * 2654435761u);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	k = spawn_user(peer_user, &a);
	assert_int_equal(recv_step(k.from), 1);
	assert_true(check(buf, words, a.seed2));       /* host 0's stores, in our buffer */
	/* Connected: removal refused, and the buffer stays the segment's memory. */
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-s");
	send_step(k.to, 2);
	assert_int_equal(recv_step(k.from), 3);
	assert_true(check(buf, words, a.seed3));
	send_step(k.to, 4);
	join(&k);

	/* Removed: the buffer keeps what it held, in private memory again. */
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(check(buf, words, a.seed3));
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-p");
	buf[0] = 1;
	assert_int_equal(buf[0], 1);
	free(buf);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 2. misuse ---------- */

static void test_register_errors(void **state)
{
	const size_t size = 2 * PAGE;
	sci_local_segment_t seg, full;
	char *buf = aligned_alloc(PAGE, 2 * size);
	sci_error_t err;
	sci_desc_t sd;
	char perms[5];

	assert_non_null(buf);
	memset(buf, 0x77, 2 * size);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, 0, size, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterSegmentMemory(buf + 8, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIRegisterSegmentMemory(NULL, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIRegisterSegmentMemory(buf, size - 100, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	SCIRegisterSegmentMemory(buf, 0, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	SCIRegisterSegmentMemory(buf, size, seg, 0x40000000u, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCIRegisterSegmentMemory(buf, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	/* A segment with memory of its own takes no more. */
	SCICreateSegment(sd, &full, 0, size, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterSegmentMemory(buf, size, full, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	SCIAttachPhysicalMemory(0x100000, NULL, 0, size, full, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	/* Nothing happened to the buffer. */
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-p");
	for (size_t i = 0; i < 2 * size; i++)
		if (buf[i] != 0x77)
			fail_msg("byte %zu changed", i);
	/* The empty one still is: registering works, removing unregisters. */
	SCIRegisterSegmentMemory(buf + size, size, seg, SCI_FLAG_LOCK_USER_MEM, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(full, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < 2 * size; i++)
		if (buf[i] != 0x77)
			fail_msg("byte %zu changed", i);
	free(buf);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 3. an accelerator's BAR as a segment ---------- */

static void test_attach_bar(void **state)
{
	const size_t size = 2 * PAGE, words = size / 4;
	struct peer_arg a = { .segid = BAR_ID, .size = size, .seed2 = 0x0badcafe,
			      .seed3 = 0x600dd00d };
	sci_query_local_segment_t ql = { 0 };
	sci_local_segment_t seg, other, ram, alias;
	uint64_t bar = gpu0_bar2();
	volatile uint32_t *lp;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	struct kid k;

	assert_true(bar != 0);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, BAR_ID, size, NULL, NULL, SCI_FLAG_EMPTY, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIAttachPhysicalMemory(bar, NULL, 1, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);        /* one bus: 0 */
	SCIAttachPhysicalMemory(bar + 8, NULL, 0, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIAttachPhysicalMemory(bar, NULL, 0, size + 1, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	/* Host RAM no segment of ours holds: refused. */
	SCIAttachPhysicalMemory(0x100000, NULL, 0, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIAttachPhysicalMemory(bar, NULL, 0, size, seg, SCI_FLAG_PHYSICAL, &err);
	assert_int_equal(err, SCI_ERR_OK);
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_IOADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(ql.data.ioaddr, bar);
	/* The same device memory cannot be two segments. */
	SCICreateSegment(sd, &other, 0, size, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIAttachPhysicalMemory(bar + PAGE, NULL, 0, PAGE, other, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);

	/* RAM of a segment of ours may be attached (an alias of part of it). */
	SCICreateSegment(sd, &ram, 0, 4 * PAGE, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	ql.segment = ram;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &alias, 0, PAGE, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIAttachPhysicalMemory(ql.data.ioaddr + 3 * PAGE, NULL, 0, 2 * PAGE, alias, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);          /* runs past its end */
	SCIAttachPhysicalMemory(ql.data.ioaddr + PAGE, NULL, 0, PAGE, alias, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(ram, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);                     /* the alias lies in it */
	SCIRemoveSegment(alias, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(ram, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* The BAR, mapped here, and written from host 0 through the NTB. */
	lp = SCIMapLocalSegment(seg, &map, 0, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	fill(lp, words, 0);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	k = spawn_user(peer_user, &a);
	assert_int_equal(recv_step(k.from), 1);
	assert_true(check(lp, words, a.seed2));
	send_step(k.to, 2);
	assert_int_equal(recv_step(k.from), 3);
	assert_true(check(lp, words, a.seed3));
	send_step(k.to, 4);
	join(&k);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Removed: the device memory may be attached again. */
	SCIAttachPhysicalMemory(bar + PAGE, NULL, 0, PAGE, other, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(other, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_register_errors),
		cmocka_unit_test(test_attach_bar),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
