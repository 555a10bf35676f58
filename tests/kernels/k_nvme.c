// SPDX-License-Identifier: MIT
/*
 * A kernel that drives an NVMe queue pair itself (tests/accel_kernel_test.sh,
 * launched with --nvme): SQ and CQ are in the accelerator's memory, the
 * kernel writes the commands there, rings the SQ tail doorbell with a store
 * to the NVMe's BAR0 through the fabric, polls the CQ in its own memory and
 * rings the CQ head doorbell; the data goes straight into device memory (PRPs
 * at the accelerator's BAR2). No host CPU is in the loop.
 *
 *   read SLBA NLB OFF   read NLB blocks from SLBA into device memory at OFF
 *                       (4 KiB aligned); returns the commands completed, or
 *                       -(NVMe status | 0x10000), or -(doorbell status word)
 *
 * The queue code is smartio's header-only nvme_queue.h, the CPU drivers' own.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "smartio/accel_kernel.h"
#include "smartio/nvme_queue.h"

#define NVM_READ        0x02     /* NVM command set: Read */
#define XFER            4096u    /* one page per command: PRP1 only */
#define STALL_NS        (5ull * 1000000000ull)

int64_t accel_kernel_main(struct accel_kctx *k, int argc, char **argv);

static uint64_t arg_num(int argc, char **argv, const char *key)
{
	const char *v = accel_k_arg(argc, argv, key);

	return v ? strtoull(v, NULL, 0) : 0;
}

int64_t accel_kernel_main(struct accel_kctx *k, int argc, char **argv)
{
	uint64_t sq_db = arg_num(argc, argv, "nvme.sq_db"), cq_db = arg_num(argc, argv, "nvme.cq_db");
	uint32_t depth = (uint32_t)arg_num(argc, argv, "nvme.depth");
	uint32_t nsid = (uint32_t)arg_num(argc, argv, "nvme.nsid");
	unsigned shift = (unsigned)arg_num(argc, argv, "nvme.lba_shift");
	struct nvme_sqe *sq = (struct nvme_sqe *)(k->mem + arg_num(argc, argv, "nvme.sq"));
	struct nvme_cqe *cq = (struct nvme_cqe *)(k->mem + arg_num(argc, argv, "nvme.cq"));
	/* PRPs name our memory as the NVMe reaches it (through NTBs when borrowed). */
	uint64_t mem_bus = accel_k_arg(argc, argv, "nvme.mem_bus") ?
			   arg_num(argc, argv, "nvme.mem_bus") : k->mem_bus;
	uint64_t slba, nlb, off, bpc, cmds, sent = 0, done = 0, last;
	uint32_t tail = 0, head = 0, st;
	uint8_t phase = 1;

	if (argc < 5 || strcmp(argv[1], "read") || !sq_db || !depth || !nsid || shift < 9 ||
	    shift > 12)
		return -1;
	slba = strtoull(argv[2], NULL, 0);
	nlb = strtoull(argv[3], NULL, 0);
	off = strtoull(argv[4], NULL, 0);
	bpc = XFER >> shift;
	cmds = (nlb + bpc - 1) / bpc;
	if ((off & (XFER - 1)) || off > k->mem_size || cmds * XFER > k->mem_size - off)
		return -2;
	last = k->now_ns();
	while (done < cmds) {
		uint64_t before = sent;
		bool reaped = false;

		/* Fill the SQ (one slot stays empty: full is tail + 1 == head). */
		while (sent < cmds && sent - done < depth - 1) {
			struct nvme_sqe *s = &sq[tail];
			uint64_t n = nlb - sent * bpc < bpc ? nlb - sent * bpc : bpc;

			nvme_sqe_init(s, NVM_READ, (uint16_t)tail, nsid);
			nvme_rw_set(s, slba + sent * bpc, (uint32_t)n);
			s->prp1 = mem_bus + off + sent * XFER;
			tail = nvme_q_next(tail, depth);
			sent++;
		}
		/* The doorbell: a store to the NVMe's BAR0 by the device's DMA. */
		if (sent != before && (st = accel_k_st32(k, sq_db, tail)))
			return -(int64_t)st;
		while (nvme_cqe_is_new(&cq[head], phase)) {
			if (nvme_cqe_st(&cq[head]))
				return -(int64_t)(nvme_cqe_st(&cq[head]) | 0x10000);
			nvme_q_advance(&head, &phase, depth);
			done++;
			reaped = true;
		}
		if (reaped) {
			if ((st = accel_k_st32(k, cq_db, head)))
				return -(int64_t)st;
			last = k->now_ns();
		} else if (k->now_ns() - last > STALL_NS) {
			return -3;           /* the controller stopped answering */
		} else {
			sched_yield();       /* a polling device on a shared CPU */
		}
	}
	return (int64_t)done;
}
