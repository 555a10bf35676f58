// SPDX-License-Identifier: MIT
/*
 * libsisci segments, connections and maps against real daemons: the default
 * cluster is started with the smartio CLI. The test process is a program of
 * host 1 (node 8), which owns the segments; children it forks re-initialise
 * the library as programs of host 0 (node 4) and connect to them through
 * host 0's NTB. (Segments stay on host 1: its IOMMU is off, so remote maps
 * of its RAM need no IOMMU mappings.)
 *
 * A child must not return into cmocka: it checks with CHK() and reports
 * through its exit status; the parent waits for it with a bounded wait.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "sisci_harness.h"

#define PAGE		4096u
#define OWNER_NODE	8         /* host 1 */
#define USER_HOST	"0"       /* node 4 */
#define WAIT_MS		30000     /* bound on every wait (sanitizer builds are slow) */
#define ROUNDS		2000

/* ---------- plumbing ---------- */

static int group_setup(void **state)
{
	return sh_up("sisci-seg", "1", true);
}

static int group_teardown(void **state)
{
	return sh_down();
}

/* Fork a child that runs fn as a program of host 0. */
static struct kid spawn_user(int (*fn)(struct kid *k, void *arg), void *arg)
{
	return spawn_on(USER_HOST, fn, arg);
}

/* A local segment of host 1 others can connect to. */
static sci_local_segment_t owner_segment(sci_desc_t sd, unsigned int id, size_t size,
					 unsigned int flags, volatile uint32_t **p,
					 sci_map_t *map)
{
	sci_local_segment_t seg;
	sci_error_t err;

	SCICreateSegment(sd, &seg, id, size, NULL, NULL, flags, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	*p = SCIMapLocalSegment(seg, map, 0, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_non_null(*p);
	return seg;
}

/* ---------- 1. local segments, maps and misuse, in one process ---------- */

static void test_local(void **state)
{
	const size_t size = 3 * PAGE + 100;
	sci_local_segment_t seg, seg2, auto_seg, priv, empty;
	sci_map_t map, map2, fmap;
	sci_query_local_segment_t ql = { 0 };
	sci_query_map_t qm = { 0 };
	volatile uint32_t *p, *q;
	sci_sequence_t seq;
	sci_error_t err;
	sci_desc_t sd;
	void *res;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* Creation: explicit and automatic ids, sizes, misuse. */
	SCICreateSegment(sd, &seg, 0x100, size, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetLocalSegmentId(seg), 0x100);
	assert_int_equal(SCIGetLocalSegmentSize(seg), size);
	SCICreateSegment(sd, &seg2, 0x100, PAGE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_SEGMENTID_USED);
	SCICreateSegment(sd, &auto_seg, 0x100, PAGE, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(SCIGetLocalSegmentId(auto_seg) >= 0x80000000u);
	assert_int_not_equal(SCIGetLocalSegmentId(auto_seg), 0x100);
	SCICreateSegment(sd, &seg2, 0x101, 0, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	SCICreateSegment(sd, &seg2, 0x101, PAGE, NULL, NULL, 0x40000000u, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCICreateSegment(NULL, &seg2, 0x101, PAGE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCICreateSegment(sd, &seg2, 0x101, PAGE, NULL, NULL, SCI_FLAG_USE_CALLBACK, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);        /* no callback given */

	/* Prepare, then available; adapters checked. */
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_SEGMENT_NOT_PREPARED);
	SCIPrepareSegment(seg, 1, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_ADAPTERNO);
	SCIPrepareSegment(seg, 0, 0x10000, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentUnavailable(seg, 0, SCI_FLAG_NOTIFY, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentUnavailable(seg, 0, SCI_FLAG_FORCE_DISCONNECT, &err);
	assert_int_equal(err, SCI_ERR_FLAG_NOT_IMPLEMENTED);

	/* Private segments are never available; empty ones have no memory. */
	SCICreateSegment(sd, &priv, 0, PAGE, NULL, NULL, SCI_FLAG_PRIVATE | SCI_FLAG_AUTO_ID,
			 &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(priv, 0, 0, &err);
	SCISetSegmentAvailable(priv, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	SCICreateSegment(sd, &empty, 0, 8 * PAGE, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID,
			 &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(empty, 0, 0, &err);
	SCISetSegmentAvailable(empty, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	assert_null(SCIMapLocalSegment(empty, &map, 0, PAGE, NULL, 0, &err));
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);

	/* Maps: the whole segment, a piece at an odd offset, out of range. */
	p = SCIMapLocalSegment(seg, &map, 0, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_ptr_equal(SCIGetMapPointer(map), p);
	for (unsigned int i = 0; i < size / 4; i++)
		p[i] = i ^ 0x5a5a5a5a;
	q = SCIMapLocalSegment(seg, &map2, PAGE + 8, 16, NULL, SCI_FLAG_READONLY_MAP, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(q[0], ((PAGE + 8) / 4) ^ 0x5a5a5a5a);
	assert_int_equal(((uintptr_t)q) % PAGE, 8);
	{
		char perms[5];

		assert_true(map_perms(q, perms));
		assert_string_equal(perms, "r--s");
		assert_true(map_perms(p, perms));
		assert_string_equal(perms, "rw-s");
	}
	assert_null(SCIMapLocalSegment(seg, &fmap, size - 4, 8, NULL, 0, &err));
	assert_int_equal(err, SCI_ERR_OUT_OF_RANGE);
	assert_null(SCIMapLocalSegment(seg, &fmap, size + PAGE, 8, NULL, 0, &err));
	assert_int_equal(err, SCI_ERR_OUT_OF_RANGE);
	assert_null(SCIMapLocalSegment(seg, &fmap, 0, 0, NULL, 0, &err));
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	assert_null(SCIMapLocalSegment(seg, &fmap, 0, PAGE, NULL, 0x100000, &err));
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);

	/* A fixed address: exactly there (over a reservation), page offsets must agree. */
	res = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(res != MAP_FAILED);
	assert_null(SCIMapLocalSegment(seg, &fmap, 4, PAGE, res, SCI_FLAG_FIXED_MAP_ADDR,
				       &err));
	assert_int_equal(err, SCI_ERR_OFFSET_ALIGNMENT);
	assert_null(SCIMapLocalSegment(seg, &fmap, 0, PAGE, NULL, SCI_FLAG_FIXED_MAP_ADDR,
				       &err));
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	assert_ptr_equal(SCIMapLocalSegment(seg, &fmap, PAGE, PAGE, res,
					    SCI_FLAG_FIXED_MAP_ADDR, &err), res);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(((volatile uint32_t *)res)[2], (PAGE / 4 + 2) ^ 0x5a5a5a5a);
	SCIUnmapSegment(fmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	munmap(res, 2 * PAGE);

	/* Queries. */
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_PHYS_ADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(ql.data.ioaddr && !(ql.data.ioaddr % PAGE));
	ql.subcommand = 0x7777;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_QUERY);
	ql.segment = empty;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_PHYS_ADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	ql.segment = NULL;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	qm.map = map;
	qm.subcommand = SCI_Q_MAP_MAPPED_TO_LOCAL_TARGET;
	SCIQuery(SCI_Q_MAP, &qm, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(qm.data, 1);

	/* Sequences and SCIMemCpy also work on local maps. */
	SCICreateMapSequence(map, &seq, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	{
		uint32_t v[2] = { 0xabad1dea, 0xfeedf00d };

		SCIMemCpy(seq, v, map, 12, sizeof(v), SCI_FLAG_ERROR_CHECK, &err);
		assert_int_equal(err, SCI_ERR_OK);
		assert_int_equal(p[3], 0xabad1dea);
		assert_int_equal(p[4], 0xfeedf00d);
		SCIMemCpy(seq, v, map2, 0, 4, 0, &err);              /* another map's sequence */
		assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
		SCIMemCpy(NULL, v, map2, 0, 4, 0, &err);             /* read-only map */
		assert_int_equal(err, SCI_ERR_ACCESS);
		SCIMemCpy(NULL, v, map2, 0, 8, SCI_FLAG_BLOCK_READ, &err);
		assert_int_equal(err, SCI_ERR_OK);
		assert_int_equal(v[0], ((PAGE + 8) / 4) ^ 0x5a5a5a5a);
	}
	SCIStoreBarrier(seq, 0);
	SCIFlush(seq, 0);
	SCIFlush(NULL, 0);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);                    /* the sequence uses it */

	/* Busy while in use; SCIClose too. */
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);

	SCIRemoveSequence(seq, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSequence(seq, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(map, 0, &err);                          /* twice */
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	assert_null(SCIGetMapPointer(map));
	SCIUnmapSegment(map2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);                         /* twice */
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	assert_int_equal(SCIGetLocalSegmentId(seg), 0);
	assert_int_equal(SCIGetLocalSegmentSize(seg), 0);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	/* The id is free again. */
	SCICreateSegment(sd, &seg, 0x100, PAGE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* NULL handles everywhere: errors, never crashes. */
	SCIRemoveSegment(NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIDisconnectSegment(NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIUnmapSegment(NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	assert_null(SCIMapRemoteSegment(NULL, &map, 0, PAGE, NULL, 0, &err));
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCICreateMapSequence(NULL, &seq, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIMemCpy(NULL, &err, NULL, 0, 4, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCICacheSync(NULL, NULL, 0, SCI_FLAG_CACHE_FLUSH, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIStoreBarrier(NULL, 0);
	assert_int_equal(SCIGetRemoteSegmentSize(NULL), 0);
	assert_int_equal(SCIGetRemoteSegmentId(NULL), 0);
	assert_int_equal(SCIGetRemoteSegmentNodeId(NULL), 0);
	SCIConnectSegment(NULL, NULL, OWNER_NODE, 1, 0, NULL, NULL, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIRemoveSegment(priv, 0, NULL);                        /* no error pointer */

	SCIRemoveSegment(auto_seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(empty, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 2. a connection to a segment of one's own host ---------- */

static void test_local_connect(void **state)
{
	sci_remote_segment_t rs, rs2;
	sci_query_remote_segment_t qr = { 0 };
	sci_query_local_segment_t ql = { 0 };
	sci_local_segment_t seg;
	volatile uint32_t *lp, *rp;
	sci_map_t lmap, rmap;
	sci_error_t err;
	sci_desc_t sd, sd2;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIOpen(&sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	seg = owner_segment(sd, 0x300, 2 * PAGE, 0, &lp, &lmap);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	lp[7] = 0x1234;

	/* This node, by its id and as SCI_LOCAL_HOST: no NTB window in the way. */
	SCIConnectSegment(sd2, &rs, OWNER_NODE, 0x300, 0, NULL, NULL, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectSegment(sd2, &rs2, SCI_LOCAL_HOST, 0x300, 0, NULL, NULL, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(rs2), OWNER_NODE);
	assert_int_equal(SCIGetRemoteSegmentSize(rs), 2 * PAGE);
	rp = SCIMapRemoteSegment(rs, &rmap, 0, 2 * PAGE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(rp[7], 0x1234);
	rp[8] = 0x5678;
	assert_int_equal(lp[8], 0x5678);
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_PHYS_ADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	qr.segment = rs;
	qr.subcommand = SCI_Q_REMOTE_SEGMENT_IOADDR;
	SCIQuery(SCI_Q_REMOTE_SEGMENT, &qr, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(qr.data.ioaddr, ql.data.ioaddr);

	SCIUnmapSegment(lmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);                         /* connected */
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIRemoveSegment(seg, SCI_FLAG_FORCE_REMOVE, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIDisconnectSegment(rs, 0, &err);                      /* mapped */
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIUnmapSegment(rmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);                    /* rs2 still there */
	SCIClose(sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIDisconnectSegment(rs2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 3. ping-pong between host 0 and host 1 ---------- */

struct pp {
	unsigned int segid;
	uint64_t phys;
};

/* Host 0: ping in word 0, wait for the pong in word 1, through host 1's RAM. */
static int pingpong_user(struct kid *k, void *arg)
{
	const struct pp *pp = arg;
	sci_query_remote_segment_t qr = { 0 };
	sci_remote_segment_t rs;
	volatile uint32_t *rp;
	sci_sequence_t seq;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	unsigned int node = 0;

	SCIGetLocalNodeId(0, &node, 0, &err);
	CHK(node == 4);
	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, pp->segid, 0, NULL, NULL, WAIT_MS, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(SCIGetRemoteSegmentId(rs) == pp->segid);
	CHK(SCIGetRemoteSegmentNodeId(rs) == OWNER_NODE);
	CHK(SCIGetRemoteSegmentSize(rs) == PAGE);
	/* Seen from here, the segment is at an NTB window, not at its RAM address. */
	qr.segment = rs;
	qr.subcommand = SCI_Q_REMOTE_SEGMENT_IOADDR;
	SCIQuery(SCI_Q_REMOTE_SEGMENT, &qr, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(qr.data.ioaddr && qr.data.ioaddr != pp->phys);
	rp = SCIMapRemoteSegment(rs, &map, 0, PAGE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateMapSequence(map, &seq, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		rp[0] = i;
		SCIStoreBarrier(seq, 0);
		CHK(wait_word(&rp[1], i, WAIT_MS));
	}
	SCIRemoveSequence(seq, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIUnmapSegment(map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

static void test_pingpong(void **state)
{
	sci_query_local_segment_t ql = { 0 };
	sci_local_segment_t seg;
	volatile uint32_t *lp;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	struct pp pp;
	struct kid k;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	seg = owner_segment(sd, 0, PAGE, SCI_FLAG_AUTO_ID, &lp, &map);
	lp[0] = lp[1] = 0;
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_PHYS_ADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	pp = (struct pp){ .segid = SCIGetLocalSegmentId(seg), .phys = ql.data.ioaddr };
	/* The child may try before the segment is available: its connect waits. */
	k = spawn_user(pingpong_user, &pp);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (uint32_t i = 1; i <= ROUNDS; i++) {
		if (!wait_word(&lp[0], i, WAIT_MS))
			fail_msg("round %u: no ping (word 0 = %u)", i, lp[0]);
		lp[1] = i;
		SCIStoreBarrier(NULL, 0);
	}
	join(&k, WAIT_MS);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 4. connecting: errors, timeouts, double connect, busy ---------- */

#define SEG_ID 0x2000
#define SEG_SIZE (4 * PAGE)

static int connect_user(struct kid *k, void *arg)
{
	sci_remote_segment_t rs, rs2, rs3;
	volatile uint32_t *a, *b;
	sci_map_t ma, mb, mx;
	sci_error_t err;
	sci_desc_t sd;
	uint64_t t0;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	/* Bad ids, nodes, adapters, flags. */
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID + 1, 0, NULL, NULL, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_NO_SUCH_SEGMENT);
	SCIConnectSegment(sd, &rs, 40, SEG_ID, 0, NULL, NULL, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_NO_SUCH_NODEID);
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID, 5, NULL, NULL, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_NO_SUCH_ADAPTERNO);
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID, 0, NULL, NULL, 0, 0x4, &err);
	CHK_ERR(err, SCI_ERR_ILLEGAL_FLAG);
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID, 0, NULL, NULL, 0,
			  SCI_FLAG_ASYNCHRONOUS_CONNECT, &err);
	CHK_ERR(err, SCI_ERR_FLAG_NOT_IMPLEMENTED);
	/* Exists, not available: refused at once, or after the timeout. */
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID, 0, NULL, NULL, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_CONNECTION_REFUSED);
	t0 = smio_now_ms();
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID, 0, NULL, NULL, 100, 0, &err);
	CHK_ERR(err, SCI_ERR_TIMEOUT);
	CHK(smio_now_ms() - t0 >= 100);
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID + 1, 0, NULL, NULL, 50, 0, &err);
	CHK_ERR(err, SCI_ERR_TIMEOUT);

	/* The owner makes it available while we wait. */
	send_step(k->to, 1);
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEG_ID, 0, NULL, NULL, SCI_INFINITE_TIMEOUT, 0,
			  &err);
	CHK_ERR(err, SCI_ERR_OK);
	/* Connecting twice gives two connections, both usable. */
	SCIConnectSegment(sd, &rs2, OWNER_NODE, SEG_ID, 0, NULL, NULL, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(rs2 != rs);
	a = SCIMapRemoteSegment(rs, &ma, 0, SEG_SIZE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	b = SCIMapRemoteSegment(rs2, &mb, PAGE, PAGE, NULL, SCI_FLAG_IO_MAP_IOSPACE, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(a[5] == 0xbeef);                    /* written by the owner */
	a[PAGE / 4 + 3] = 0xcafe;
	CHK(b[3] == 0xcafe);
	/* Out of range. */
	CHK(!SCIMapRemoteSegment(rs, &mx, SEG_SIZE - PAGE, 2 * PAGE, NULL, 0, &err));
	CHK_ERR(err, SCI_ERR_OUT_OF_RANGE);
	CHK(!SCIMapRemoteSegment(rs, &mx, SEG_SIZE + PAGE, 4, NULL, 0, &err));
	CHK_ERR(err, SCI_ERR_OUT_OF_RANGE);
	CHK(!SCIMapRemoteSegment(rs, &mx, 0, PAGE, NULL, SCI_FLAG_EMPTY << 20, &err));
	CHK_ERR(err, SCI_ERR_ILLEGAL_FLAG);

	/* The owner cannot remove it now; it makes it unavailable instead. */
	send_step(k->to, 2);
	CHK(recv_step(k->from, WAIT_MS) == 3);
	SCIConnectSegment(sd, &rs3, OWNER_NODE, SEG_ID, 0, NULL, NULL, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_CONNECTION_REFUSED);
	a[0] = 0x77;                            /* existing connections keep working */
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_BUSY);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_BUSY);
	SCIUnmapSegment(ma, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIUnmapSegment(mb, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIDisconnectSegment(rs2, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	send_step(k->to, 4);
	return 0;
}

static void test_connect(void **state)
{
	sci_local_segment_t seg;
	volatile uint32_t *lp;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	struct kid k;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	seg = owner_segment(sd, SEG_ID, SEG_SIZE, 0, &lp, &map);
	lp[5] = 0xbeef;
	k = spawn_user(connect_user, NULL);
	assert_int_equal(recv_step(k.from, WAIT_MS), 1);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(recv_step(k.from, WAIT_MS), 2);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);                         /* not mapped, still connected */
	assert_int_equal(err, SCI_ERR_BUSY);
	SCISetSegmentUnavailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	send_step(k.to, 3);
	assert_int_equal(recv_step(k.from, WAIT_MS), 4);
	join(&k, WAIT_MS);
	lp = SCIMapLocalSegment(seg, &map, 0, 2 * PAGE, NULL, SCI_FLAG_READONLY_MAP, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(lp[0], 0x77);
	assert_int_equal(lp[PAGE / 4 + 3], 0xcafe);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 5. SCIMemCpy and read-only maps across hosts ---------- */

static int memcpy_user(struct kid *k, void *arg)
{
	const unsigned int segid = *(const unsigned int *)arg;
	sci_query_map_t qm = { 0 };
	sci_remote_segment_t rs;
	sci_sequence_t seq, seq_ro;
	volatile uint8_t *rw, *ro;
	sci_map_t mrw, mro;
	uint8_t buf[3000], back[3000];
	sci_error_t err;
	sci_desc_t sd;
	char perms[5];
	int pfd[2], ws;
	pid_t pid;

	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, segid, 0, NULL, NULL, WAIT_MS, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	rw = SCIMapRemoteSegment(rs, &mrw, 0, 2 * PAGE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	ro = SCIMapRemoteSegment(rs, &mro, 0, 2 * PAGE, NULL, SCI_FLAG_READONLY_MAP, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateMapSequence(mrw, &seq, SCI_FLAG_FAST_BARRIER, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateMapSequence(mro, &seq_ro, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);

	/* Into the remote memory, checked, and back out of it. */
	SCIMemCpy(seq, buf, mrw, 100, sizeof(buf), SCI_FLAG_ERROR_CHECK, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(rw[100] == buf[0] && rw[100 + sizeof(buf) - 1] == buf[sizeof(buf) - 1]);
	SCIMemCpy(seq_ro, back, mro, 100, sizeof(back), SCI_FLAG_BLOCK_READ |
		  SCI_FLAG_ERROR_CHECK, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(!memcmp(buf, back, sizeof(buf)));
	SCIMemCpy(NULL, buf, mrw, 2 * PAGE - 10, 11, 0, &err);
	CHK_ERR(err, SCI_ERR_OUT_OF_RANGE);
	SCIMemCpy(NULL, buf, mrw, 3 * PAGE, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_OUT_OF_RANGE);
	SCIMemCpy(NULL, buf, mrw, 0, 4, 0x1000, &err);
	CHK_ERR(err, SCI_ERR_ILLEGAL_FLAG);
	SCIMemCpy(seq_ro, buf, mrw, 0, 4, 0, &err);             /* sequence of another map */
	CHK_ERR(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIMemCpy(NULL, NULL, mrw, 0, 4, 0, &err);
	CHK_ERR(err, SCI_ERR_ILLEGAL_PARAMETER);

	/* Read-only: PROT_READ only, the kernel refuses writes, SCIMemCpy too. */
	CHK(map_perms(ro, perms) && !strcmp(perms, "r--s"));
	CHK(map_perms(rw, perms) && !strcmp(perms, "rw-s"));
	SCIMemCpy(NULL, buf, mro, 0, 4, 0, &err);
	CHK_ERR(err, SCI_ERR_ACCESS);
	CHK(pipe(pfd) == 0);
	CHK(write(pfd[1], "x", 1) == 1);
	CHK(read(pfd[0], (void *)ro, 1) == -1 && errno == EFAULT);
	close(pfd[0]);
	close(pfd[1]);
	pid = fork();
	CHK(pid >= 0);
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = SIG_DFL };

		sigaction(SIGSEGV, &sa, NULL);
		ro[0] = 1;                      /* must die here */
		_exit(0);
	}
	CHK(waitpid(pid, &ws, 0) == pid);
	CHK(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSEGV);
	CHK(ro[100] == buf[0]);

	/* Cache maintenance within the map only. */
	SCICacheSync(mrw, (void *)(rw + 8), 64, SCI_FLAG_CACHE_FLUSH | SCI_FLAG_CACHE_INVALIDATE,
		     &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICacheSync(mrw, (void *)(rw + 8), 2 * PAGE, SCI_FLAG_CACHE_FLUSH, &err);
	CHK_ERR(err, SCI_ERR_OUT_OF_RANGE);
	SCICacheSync(mrw, (void *)rw, 8, 0x1, &err);
	CHK_ERR(err, SCI_ERR_ILLEGAL_FLAG);

	/* The map reaches host 1's memory, not this host's. */
	qm.map = mrw;
	qm.subcommand = SCI_Q_MAP_MAPPED_TO_LOCAL_TARGET;
	SCIQuery(SCI_Q_MAP, &qm, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(qm.data == 0);

	SCIUnmapSegment(mrw, 0, &err);
	CHK_ERR(err, SCI_ERR_BUSY);
	SCIRemoveSequence(seq, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIRemoveSequence(seq_ro, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIUnmapSegment(mrw, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIUnmapSegment(mro, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

static void test_memcpy_readonly(void **state)
{
	sci_local_segment_t seg;
	volatile uint32_t *lp;
	volatile uint8_t *b;
	unsigned int segid;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	struct kid k;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	seg = owner_segment(sd, 0, 2 * PAGE, SCI_FLAG_AUTO_ID, &lp, &map);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	segid = SCIGetLocalSegmentId(seg);
	k = spawn_user(memcpy_user, &segid);
	join(&k, WAIT_MS);
	/* What the child copied is in host 1's RAM. */
	b = (volatile uint8_t *)lp;
	for (unsigned int i = 0; i < 3000; i++)
		if (b[100 + i] != (uint8_t)(i * 7 + 1))
			fail_msg("byte %u: %#x", i, b[100 + i]);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 6. the owner dies: connected programs get SCI_CB_DISCONNECT ---------- */

#define GONE_ID   (SEG_ID + 6)
#define GONE_MS   5000            /* the bound on the disconnect event */

static unsigned int gone_events, gone_reason;

static sci_callback_action_t gone_cb(void *arg, sci_remote_segment_t seg,
				     sci_segment_cb_reason_t reason, sci_error_t status)
{
	(void)seg;
	(void)status;
	*(int *)arg = 1;          /* callbackArg reaches the callback */
	__atomic_store_n(&gone_reason, (unsigned int)reason, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gone_events, 1, __ATOMIC_RELEASE);
	return SCI_CALLBACK_CONTINUE;
}

/* Has the callback run, within ms? */
static bool gone_wait(unsigned int ms)
{
	uint64_t end = smio_now_ms() + ms;

	while (!__atomic_load_n(&gone_events, __ATOMIC_ACQUIRE))
		if (smio_now_ms() > end || poll(NULL, 0, 5) < 0)
			return false;
	return true;
}

/* Host 1: a segment, available, then nothing until killed. */
static int gone_owner(struct kid *k, void *arg)
{
	sci_local_segment_t seg;
	volatile uint32_t *p;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;

	(void)arg;
	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, GONE_ID, SEG_SIZE, NULL, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIPrepareSegment(seg, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	p = SCIMapLocalSegment(seg, &map, 0, PAGE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	p[0] = 0x600d;
	SCISetSegmentAvailable(seg, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	send_step(k->to, 1);
	for (;;)
		pause();
}

/* Host 0: connected with a callback and without; told at step 2 the owner is dead. */
static int gone_user(struct kid *k, void *arg)
{
	sci_remote_segment_t rs, plain;
	volatile uint32_t *p;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	int got_arg = 0;

	(void)arg;
	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, GONE_ID, 0, gone_cb, &got_arg, WAIT_MS,
			  SCI_FLAG_USE_CALLBACK, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &plain, OWNER_NODE, GONE_ID, 0, NULL, NULL, WAIT_MS, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	p = SCIMapRemoteSegment(rs, &map, 0, PAGE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(p[0] == 0x600d);
	SCIUnmapSegment(map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(!__atomic_load_n(&gone_events, __ATOMIC_ACQUIRE));
	send_step(k->to, 1);
	CHK(recv_step(k->from, WAIT_MS) == 2);           /* the owner was killed just now */
	CHK(gone_wait(GONE_MS));
	CHK(__atomic_load_n(&gone_reason, __ATOMIC_RELAXED) == SCI_CB_DISCONNECT && got_arg == 1);
	/* Without a callback: operations say the link is gone. */
	CHK(!SCIMapRemoteSegment(plain, &map, 0, PAGE, NULL, 0, &err));
	CHK_ERR(err, SCI_ERR_NO_LINK_ACCESS);
	CHK(!SCIMapRemoteSegment(rs, &map, 0, PAGE, NULL, 0, &err));
	CHK_ERR(err, SCI_ERR_NO_LINK_ACCESS);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(plain, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(__atomic_load_n(&gone_events, __ATOMIC_ACQUIRE) == 1);   /* once */
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

static void test_owner_killed(void **state)
{
	struct kid owner, user;
	sci_remote_segment_t rs;
	sci_error_t err;
	sci_desc_t sd;
	uint64_t t0;
	int got_arg = 0, ws;

	owner = spawn_on("1", gone_owner, NULL);
	assert_int_equal(recv_step(owner.from, WAIT_MS), 1);
	user = spawn_user(gone_user, NULL);
	assert_int_equal(recv_step(user.from, WAIT_MS), 1);
	/* This process (host 1 too) connects as well: a local connection. */
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, GONE_ID, 0, gone_cb, &got_arg, WAIT_MS,
			  SCI_FLAG_USE_CALLBACK, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentSize(rs), SEG_SIZE);
	assert_false(gone_wait(0));

	t0 = smio_now_ms();
	assert_int_equal(kill(owner.pid, SIGKILL), 0);
	assert_int_equal(waitpid(owner.pid, &ws, 0), owner.pid);
	assert_true(WIFSIGNALED(ws));
	close(owner.to);
	close(owner.from);
	send_step(user.to, 2);
	assert_true(gone_wait(GONE_MS));
	assert_true(smio_now_ms() - t0 <= GONE_MS);
	assert_int_equal(__atomic_load_n(&gone_reason, __ATOMIC_RELAXED), SCI_CB_DISCONNECT);
	assert_int_equal(got_arg, 1);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	join(&user, WAIT_MS);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_local_connect),
		cmocka_unit_test(test_pingpong),
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_memcpy_readonly),
		cmocka_unit_test(test_owner_killed),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
