// SPDX-License-Identifier: MIT
/*
 * smartio-stray-dma: runs inside a smartio guest (tools/vm/build-image.sh puts
 * it in the initramfs) and checks the isolation of a passed-through NVMe
 * (docs/vm.md, "Isolation"). Linux's nvme ioctls build PRPs themselves, so
 * no nvme-cli command can send a raw one: this tool takes the controller
 * from Linux's nvme driver (sysfs unbind), drives it from user space with its
 * own admin queues in locked pages of its own (guest-physical addresses from
 * /proc/self/pagemap), and sends
 *
 *   1. Identify Controller into a page of its own: must succeed (with --high,
 *      a page at or above 4 GiB: proof that the lender's IOMMU mirrors the
 *      guest's high memory too);
 *   2. Identify Controller with PRP1 past the end of guest RAM (--prp ADDR,
 *      else the first 2 MiB boundary + 1 MiB past the System RAM below 4 GiB),
 *      an address in no resource of /proc/iomem but the host bridge's window:
 *      neither RAM nor any BAR, so nothing of the guest's is there and the
 *      lender's IOMMU has no mapping for it. It must complete with an error
 *      (the NVMe model returns Data Transfer Error when its DMA faults).
 *
 * Then it disables the controller and binds Linux's nvme driver again.
 * --wait-go: before step 2, wait until the host writes "SMIOGO!!" into a
 * page whose guest-physical address it prints (the test snapshots its
 * canaries in between).
 *
 * Exit: 0 the stray DMA was refused (and step 1 passed); 1 it was NOT
 * refused or step 1 failed; 2 setup failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE      4096u
#define QDEPTH    16u
#define NPAGES    256u          /* searched for a page above 4 GiB (--high) */
#define NVME_DRV  "/sys/bus/pci/drivers/nvme"

/* NVMe registers (NVMe 1.4 section 3.1). */
#define REG_CAP   0x00
#define REG_CC    0x14
#define REG_CSTS  0x1c
#define REG_AQA   0x24
#define REG_ASQ   0x28
#define REG_ACQ   0x30
#define CC_EN     1u
#define CC_IOQES  ((6u << 16) | (4u << 20))   /* 64-byte SQEs, 16-byte CQEs */
#define CSTS_RDY  1u
#define CSTS_CFS  2u

struct page { volatile uint8_t *va; uint64_t gpa; };

static volatile uint32_t *regs;
static uint32_t dstrd;
static unsigned sq_tail, cq_head, phase = 1;

static uint32_t rd32(uint32_t off) { return regs[off / 4]; }
static void wr32(uint32_t off, uint32_t v) { regs[off / 4] = v; }
static void wr64(uint32_t off, uint64_t v) { wr32(off, (uint32_t)v); wr32(off + 4, (uint32_t)(v >> 32)); }

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The guest-physical address of a locked, touched page (root: /proc/self/pagemap). */
static int gpa_of(const volatile void *va, uint64_t *gpa)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t off = (off_t)((uintptr_t)va / PAGE * 8);

	if (fd < 0)
		return -errno;
	if (pread(fd, &e, 8, off) != 8) {
		close(fd);
		return -EIO;
	}
	close(fd);
	if (!(e & (1ull << 63)) || !(e & ((1ull << 55) - 1)))
		return -EPERM;          /* not present, or no PFN (not root) */
	*gpa = (e & ((1ull << 55) - 1)) * PAGE;
	return 0;
}

/* The first NVMe bound to Linux's nvme driver, or the one named. */
static int find_bdf(char *bdf, size_t len)
{
	char path[256];
	FILE *p = popen("ls " NVME_DRV " 2>/dev/null", "r");

	if (!p)
		return -errno;
	while (fgets(path, sizeof(path), p)) {
		path[strcspn(path, "\n")] = 0;
		if (strchr(path, ':') && strlen(path) < len) {
			snprintf(bdf, len, "%s", path);
			pclose(p);
			return 0;
		}
	}
	pclose(p);
	return -ENODEV;
}

/*
 * An address past the end of guest RAM in no resource of /proc/iomem other
 * than the host bridge's windows ("PCI Bus ..."): neither RAM nor any BAR.
 */
static int pick_stray(uint64_t *out, uint64_t *ram_end)
{
	char line[256];
	uint64_t end = 0, cand;
	FILE *f = fopen("/proc/iomem", "r");
	bool clash = true;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b;
		char *name = strstr(line, " : ");

		if (name && sscanf(line, " %" SCNx64 "-%" SCNx64, &a, &b) == 2 &&
		    strstr(name, "System RAM") && b < (4ull << 30) && b + 1 > end)
			end = b + 1;
	}
	*ram_end = end;
	cand = ((end + (2u << 20) - 1) & ~((2ull << 20) - 1)) + (1u << 20);
	for (int tries = 0; clash && tries < 64; tries++) {
		clash = false;
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			uint64_t a, b;
			char *name = strstr(line, " : ");

			if (!name || sscanf(line, " %" SCNx64 "-%" SCNx64, &a, &b) != 2 ||
			    !strncmp(name + 3, "PCI Bus", 7))
				continue;
			if (cand + PAGE > a && cand <= b) {
				clash = true;
				cand = ((b + 1 + (2u << 20) - 1) & ~((2ull << 20) - 1)) + (1u << 20);
			}
		}
	}
	fclose(f);
	if (clash || !end)
		return -ERANGE;
	*out = cand;
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int wait_rdy(uint32_t want, double timeout)
{
	double end = now_s() + timeout;

	while ((rd32(REG_CSTS) & CSTS_RDY) != want) {
		if (rd32(REG_CSTS) & CSTS_CFS)
			return -EIO;
		if (now_s() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

/* Identify Controller into prp1 on the admin queue; returns the CQE's status field or -errno. */
static int identify(struct page *sq, struct page *cq, uint16_t cid, uint64_t prp1)
{
	volatile uint32_t *e = (volatile uint32_t *)(sq->va + sq_tail * 64);
	volatile uint32_t *c;
	double end = now_s() + 30;

	for (unsigned i = 0; i < 16; i++)
		e[i] = 0;
	e[0] = 0x06u | (uint32_t)cid << 16;         /* Identify */
	e[6] = (uint32_t)prp1;
	e[7] = (uint32_t)(prp1 >> 32);
	e[10] = 1;                                   /* CNS 1: the controller */
	sq_tail = (sq_tail + 1) % QDEPTH;
	__sync_synchronize();
	wr32(0x1000, sq_tail);
	c = (volatile uint32_t *)(cq->va + cq_head * 16);
	while (((c[3] >> 16) & 1) != phase) {
		if (now_s() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
	__sync_synchronize();
	if ((c[3] & 0xffff) != cid)
		return -EPROTO;
	cq_head = (cq_head + 1) % QDEPTH;
	if (!cq_head)
		phase ^= 1;
	wr32(0x1000 + (4u << dstrd), cq_head);
	return (int)(c[3] >> 17);                    /* SC bits 7:0, SCT bits 10:8, DNR 14 */
}

static const char *status_name(int st)
{
	if (!st)
		return "Success";
	if (((st >> 8) & 7) == 0 && (st & 0xff) == 0x04)
		return "Data Transfer Error";
	if (((st >> 8) & 7) == 0 && (st & 0xff) == 0x13)
		return "Invalid PRP Offset";
	return "an error";
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bdf", required_argument, NULL, 'b' }, { "prp", required_argument, NULL, 'p' },
		{ "high", no_argument, NULL, 'H' }, { "wait-go", no_argument, NULL, 'w' },
		{ 0 } };
	char bdf[64] = "", path[256], buf[64];
	uint64_t stray = 0, ram_end = 0, rstart = 0, rend = 0, rflags = 0, cap;
	struct page pg[NPAGES], *sq = &pg[0], *cq = &pg[1], *data = NULL, *go = &pg[2];
	bool high = false, wait_go = false, bound;
	volatile uint8_t *mem;
	uint16_t cmd = 0;
	size_t barlen;
	int c, fd, rc, st1, st2, ret = 2;
	FILE *f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b': snprintf(bdf, sizeof(bdf), "%s", optarg); break;
		case 'p': stray = strtoull(optarg, NULL, 0); break;
		case 'H': high = true; break;
		case 'w': wait_go = true; break;
		default:
			fprintf(stderr, "usage: smartio-stray-dma [--bdf BDF] [--prp ADDR] [--high] "
				"[--wait-go]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!*bdf && find_bdf(bdf, sizeof(bdf))) {
		fprintf(stderr, "stray-dma: no NVMe bound to Linux's nvme driver\n");
		return 2;
	}
	if (!stray && (rc = pick_stray(&stray, &ram_end))) {
		fprintf(stderr, "stray-dma: no free address past guest RAM: %s\n", strerror(-rc));
		return 2;
	}
	printf("stray-dma: %s; guest RAM below 4 GiB ends at 0x%" PRIx64 ", stray PRP 0x%" PRIx64
	       " (in no resource of /proc/iomem: neither RAM nor a BAR)\n", bdf, ram_end, stray);

	/* Pages of our own, locked: the admin queues, the go flag, Identify's buffer. */
	mem = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
	if (mem == MAP_FAILED || mlock((void *)mem, NPAGES * PAGE)) {
		perror("stray-dma: locked pages");
		return 2;
	}
	for (unsigned i = 0; i < NPAGES; i++) {
		pg[i].va = mem + (size_t)i * PAGE;
		pg[i].va[0] = 1;
		memset((void *)pg[i].va, 0, PAGE);
		if (gpa_of(pg[i].va, &pg[i].gpa)) {
			fprintf(stderr, "stray-dma: no guest-physical address (root?)\n");
			return 2;
		}
		if (i >= 3 && !data && (!high || pg[i].gpa >= (4ull << 30)))
			data = &pg[i];
	}
	if (!data) {
		fprintf(stderr, "stray-dma: none of %u pages is above 4 GiB\n", NPAGES);
		return 2;
	}

	/* The controller away from Linux's driver; memory decoding and bus mastering on. */
	snprintf(path, sizeof(path), NVME_DRV "/%s", bdf);
	bound = access(path, F_OK) == 0;
	if (bound && (rc = write_str(NVME_DRV "/unbind", bdf))) {
		fprintf(stderr, "stray-dma: unbind %s: %s\n", bdf, strerror(-rc));
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, &cmd, 2, 4) != 2) {
		perror("stray-dma: config");
		goto rebind;
	}
	cmd |= 0x6;
	if (pwrite(fd, &cmd, 2, 4) != 2) {
		perror("stray-dma: config write");
		goto rebind;
	}
	close(fd);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64, &rstart, &rend, &rflags) != 3) {
		fprintf(stderr, "stray-dma: no BAR0 in %s\n", path);
		if (f)
			fclose(f);
		goto rebind;
	}
	fclose(f);
	barlen = (size_t)(rend - rstart + 1);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	fd = open(path, O_RDWR | O_SYNC);
	regs = fd < 0 ? MAP_FAILED : mmap(NULL, barlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (regs == MAP_FAILED) {
		perror("stray-dma: resource0");
		goto rebind;
	}

	/* Reset, then enable with our admin queues. */
	cap = rd32(REG_CAP) | (uint64_t)rd32(REG_CAP + 4) << 32;
	dstrd = (uint32_t)(cap >> 32) & 0xf;
	wr32(REG_CC, 0);
	if ((rc = wait_rdy(0, 0.5 * ((cap >> 24) & 0xff) + 5))) {
		fprintf(stderr, "stray-dma: controller reset: %s\n", strerror(-rc));
		goto unmap;
	}
	wr32(REG_AQA, (QDEPTH - 1) | (QDEPTH - 1) << 16);
	wr64(REG_ASQ, sq->gpa);
	wr64(REG_ACQ, cq->gpa);
	wr32(REG_CC, CC_EN | CC_IOQES);
	if ((rc = wait_rdy(CSTS_RDY, 0.5 * ((cap >> 24) & 0xff) + 5))) {
		fprintf(stderr, "stray-dma: controller enable: %s\n", strerror(-rc));
		goto unmap;
	}

	st1 = identify(sq, cq, 1, data->gpa);
	memcpy(buf, (const void *)(data->va + 24), 40);     /* the model number */
	buf[40] = 0;
	for (int i = 39; i >= 0 && buf[i] == ' '; i--)
		buf[i] = 0;
	printf("stray-dma: Identify into our page at guest-physical 0x%" PRIx64 "%s: status "
	       "0x%x (%s), vendor 0x%04x, model '%s'\n", data->gpa,
	       data->gpa >= (4ull << 30) ? " (above 4 GiB)" : "", st1 < 0 ? 0 : st1,
	       st1 < 0 ? strerror(-st1) : status_name(st1),
	       data->va[0] | data->va[1] << 8, buf);
	if (st1 || !(data->va[0] | data->va[1] << 8)) {
		printf("stray-dma: FAILED: Identify into our own memory did not arrive\n");
		ret = 1;
		goto disable;
	}
	if (wait_go) {
		double end = now_s() + 60;

		printf("stray-dma: waiting for go at guest-physical 0x%" PRIx64 "\n", go->gpa);
		while (memcmp((const void *)go->va, "SMIOGO!!", 8) && now_s() < end)
			usleep(2000);
		if (memcmp((const void *)go->va, "SMIOGO!!", 8))
			printf("stray-dma: no go from the host in 60 s; going on\n");
	}
	st2 = identify(sq, cq, 2, stray);
	if (st2 < 0) {
		printf("stray-dma: FAILED: no completion for the stray Identify: %s\n",
		       strerror(-st2));
		ret = 1;
	} else if (!st2) {
		printf("stray-dma: FAILED: Identify with PRP1 0x%" PRIx64 " beyond guest RAM "
		       "succeeded: the DMA was NOT refused\n", stray);
		ret = 1;
	} else {
		printf("stray-dma: Identify with PRP1 0x%" PRIx64 " beyond guest RAM: status 0x%x "
		       "(SCT %d SC 0x%02x: %s): the DMA was refused\n", stray, st2,
		       (st2 >> 8) & 7, st2 & 0xff, status_name(st2));
		ret = 0;
	}
disable:
	wr32(REG_CC, 0);
	if (wait_rdy(0, 0.5 * ((cap >> 24) & 0xff) + 5))
		fprintf(stderr, "stray-dma: the controller did not reset\n");
unmap:
	munmap((void *)regs, barlen);
rebind:
	if (bound) {
		rc = write_str(NVME_DRV "/bind", bdf);
		printf("stray-dma: %s given back to Linux's nvme driver%s%s\n", bdf,
		       rc ? ": " : "", rc ? strerror(-rc) : "");
	}
	return ret;
}
