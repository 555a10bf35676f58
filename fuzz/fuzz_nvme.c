// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the NVMe controller model driven by arbitrary register
 * writes (CC, AQA, ASQ, ACQ, doorbells, any BAR0 offset), SQE contents and
 * PRP lists in host RAM, bus-master and MSI-X mask changes, resets, and
 * polls. The model must not crash, hang or touch memory outside the buffers
 * (ASan); DMA outside host RAM is refused by the harness like a PCIe
 * unsupported request. Build: clang -fsanitize=fuzzer,address,undefined
 * with -Iinclude -Isrc -Itests, linking src/devices/nvme/ and msix, params,
 * registry.c and the topology parser.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dev_harness.h"
#include "smartio/nvme_queue.h"

#define RAM_SIZE        0x100000ull     /* 1 MiB of host RAM */
#define ASQ             0x10000ull
#define ACQ             0x20000ull
#define IOSQ            0x30000ull
#define IOCQ            0x40000ull
#define CMB_BUS         0x40000000ull
#define QUEUES          4
#define BAR0_SIZE       16384ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}

static void poll_some(struct harness *h, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		(void)h->d.ops->poll(&h->d);
}

/* An SQE from the input, with its PRPs steered into RAM most of the time. */
static void make_sqe(struct in *in, struct nvme_sqe *s)
{
	uint8_t steer = (uint8_t)take(in, 1);

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(*s) && in->n; i++)
		((uint8_t *)s)[i] = (uint8_t)take(in, 1);
	if (steer & 1)
		s->prp1 %= RAM_SIZE;
	if (steer & 2)
		s->prp2 %= RAM_SIZE;
	if (steer & 4)
		s->nsid = steer >> 6;
	if (steer & 8)
		s->cdw12 &= 0xff;       /* mostly small transfers */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t bars[6] = { BAR0_SIZE, 0, 65536, 0, 65536, 0 };
	struct harness *h = calloc(1, sizeof(*h));
	struct in in = { data, size };
	uint32_t tail[QUEUES + 1] = { 0 };
	uint32_t lo = (uint32_t)CMB_BUS | 0xc, hi = 0;
	char err[256];
	unsigned ops = 0;

	if (!h)
		return 0;
	h_param(h, "queues", "4");
	h_param(h, "mqes", "63");
	h_param(h, "namespaces", "2");
	h_param(h, "ns_size", "1M");
	h_param(h, "cmb", "64K");
	if (size && (data[0] & 0x80))
		h_param(h, "lba", "4096");
	if (size && (data[0] & 0x40))
		h_param(h, "dstrd", "2");
	memcpy(h->cfg + 0x18, &lo, 4);
	memcpy(h->cfg + 0x1c, &hi, 4);
	if (h_setup(h, "nvme", bars, QUEUES + 1, 4, 0, 0x8000, RAM_SIZE, err, sizeof(err))) {
		fprintf(stderr, "setup: %s\n", err);
		__builtin_trap();
	}
	while (in.n && ops++ < 4096) {
		uint8_t op = (uint8_t)take(&in, 1);
		unsigned dstrd = NVME_CAP_DSTRD(dev_reg64(&h->d, 0, NVME_REG_CAP));

		switch (op % 16) {
		case 0:
			dev_set_reg32(&h->d, 0, NVME_REG_CC, (uint32_t)take(&in, 4));
			break;
		case 1:
			dev_set_reg32(&h->d, 0, NVME_REG_AQA, (uint32_t)take(&in, 4));
			break;
		case 2:
			dev_set_reg64(&h->d, 0, NVME_REG_ASQ, take(&in, 8));
			break;
		case 3:
			dev_set_reg64(&h->d, 0, NVME_REG_ACQ, take(&in, 8));
			break;
		case 4: {       /* any doorbell, including queues that do not exist */
			unsigned q = (unsigned)take(&in, 1) % (QUEUES + 2);
			uint64_t off = take(&in, 1) & 1 ? nvme_cq_head_db(q, dstrd)
							: nvme_sq_tail_db(q, dstrd);

			if (off + 4 <= BAR0_SIZE)
				dev_set_reg32(&h->d, 0, off, (uint32_t)take(&in, 2));
			break;
		}
		case 5:         /* any register offset */
			dev_set_reg32(&h->d, 0, (take(&in, 2) % BAR0_SIZE) & ~3ull,
				      (uint32_t)take(&in, 4));
			break;
		case 6: {       /* 64 bytes anywhere in RAM */
			uint64_t a = (take(&in, 3) % RAM_SIZE) & ~63ull;
			struct nvme_sqe s;

			make_sqe(&in, &s);
			memcpy(h->ram + a, &s, sizeof(s));
			break;
		}
		case 7: {       /* a PRP list entry or other qword */
			uint64_t a = (take(&in, 3) % RAM_SIZE) & ~7ull, v = take(&in, 8);

			if (take(&in, 1) & 1)
				v %= RAM_SIZE;
			memcpy(h->ram + a, &v, 8);
			break;
		}
		case 8:
		case 9:
			poll_some(h, 1 + (unsigned)(take(&in, 1) % 4));
			break;
		case 10:        /* a well-formed enable */
			dev_set_reg32(&h->d, 0, NVME_REG_AQA, 15u << 16 | 15u);
			dev_set_reg64(&h->d, 0, NVME_REG_ASQ, ASQ);
			dev_set_reg64(&h->d, 0, NVME_REG_ACQ, ACQ);
			dev_set_reg32(&h->d, 0, NVME_REG_CC, 0x460001u | (uint32_t)(take(&in, 1) & 1) << 11);
			memset(tail, 0, sizeof(tail));
			poll_some(h, 2);
			break;
		case 11:        /* an admin command at the tail */
		case 12: {      /* an I/O command at the tail of queue q (at IOSQ + q * 4 KiB) */
			unsigned q = op % 16 == 11 ? 0 : 1 + (unsigned)take(&in, 1) % QUEUES;
			uint64_t base = q ? IOSQ + (uint64_t)(q - 1) * 4096 : ASQ;
			struct nvme_sqe s;

			make_sqe(&in, &s);
			if (q == 0 && (s.opcode == nvme_admin_create_sq || s.opcode == nvme_admin_create_cq)) {
				/* steer queue creation at the I/O queue areas */
				unsigned qid = s.cdw10 & 0xffff;

				if (qid >= 1 && qid <= QUEUES && (s.cdw14 & 1))
					s.prp1 = (s.opcode == nvme_admin_create_sq ? IOSQ : IOCQ) +
						 (uint64_t)(qid - 1) * 4096;
			}
			memcpy(h->ram + base + (uint64_t)(tail[q] % 16) * 64, &s, sizeof(s));
			tail[q] = (tail[q] + 1) % 16;
			/* Case 5 may have written any stride into CAP: stay inside BAR0. */
			if (nvme_sq_tail_db(q, dstrd) + 4 <= BAR0_SIZE)
				dev_set_reg32(&h->d, 0, nvme_sq_tail_db(q, dstrd), tail[q]);
			break;
		}
		case 13:        /* bus mastering, MSI-X function mask, a vector mask */
			h->cfg[PCI_COMMAND] ^= (uint8_t)(take(&in, 1) & PCI_COMMAND_MASTER);
			h->cfg[0x70 + PCI_MSIX_FLAGS + 1] ^= (uint8_t)(take(&in, 1) & 0x40);
			h->d.fn.bar[4][(take(&in, 1) % (QUEUES + 1)) * 16 + 12] ^= 1;
			break;
		case 14:        /* a CMB write (SQs may live there) */
			h->d.fn.bar[2][take(&in, 2) % 65536] = (uint8_t)take(&in, 1);
			break;
		case 15:        /* function-level reset */
			if (take(&in, 1) == 0xa5)
				h->d.ops->reset(&h->d);
			break;
		}
	}
	poll_some(h, 8);
	h_teardown(h);
	free(h);
	return 0;
}
