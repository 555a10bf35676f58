// SPDX-License-Identifier: MIT
/*
 * smartio accel launch: device code (an ELF .so against
 * <smartio/accel_kernel.h>) loaded into an accelerator and run there
 * (ACCEL_LOAD, ACCEL_LAUNCH), optionally with an NVMe queue pair of its own
 * from the host's driver or from the NVMe's manager (accel_mgrq.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "accel_mgrq.h"
#include "accel_priv.h"
#include "util/cli_conv.h"
#include "smartio/accel_regs.h"

/* The kernel's image, whole (at most ACCEL_KERN_IMAGE_MAX); NULL after saying why. */
static uint8_t *read_image(const char *path, size_t *len)
{
	uint8_t *img = malloc(ACCEL_KERN_IMAGE_MAX + 1);
	size_t n;
	FILE *f;

	if (!img)
		return cli_err("launch: out of memory"), NULL;
	f = fopen(path, "rb");
	if (!f) {
		cli_err("launch: cannot open %s: %s", path, strerror(errno));
		free(img);
		return NULL;
	}
	n = fread(img, 1, ACCEL_KERN_IMAGE_MAX + 1, f);
	fclose(f);
	if (!n || n > ACCEL_KERN_IMAGE_MAX) {
		cli_err("launch: %s: %s", path, n ? "larger than 64 MiB" : "empty or unreadable");
		free(img);
		return NULL;
	}
	*len = n;
	return img;
}

/*
 * An image too large to travel with the launch goes ahead in ACCEL_LOAD
 * pieces, to where the launch will say it is.
 */
static int load_image(struct conn *c, uint16_t bdf, const uint8_t *img, size_t len,
		      uint64_t off)
{
	const uint32_t room = SMIO_MAX_PAYLOAD - sizeof(struct smio_accel_load);
	struct smio_accel_load *m = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen;
	int rc = 0;

	if (!m)
		return -ENOMEM;
	for (size_t done = 0; done < len && !rc; done += m->len) {
		*m = (struct smio_accel_load){ .bdf = bdf, .off = off + done,
			.len = (uint32_t)(len - done < room ? len - done : room) };
		memcpy(m->data, img + done, m->len);
		rc = smio_call(c->fd, SMIO_ACCEL_LOAD, m, sizeof(*m) + m->len, NULL, 0, &rlen, NULL,
			       CLI_TIMEOUT_MS);
	}
	free(m);
	return rc;
}

/* The launch request: the image inline when it fits, else loaded ahead. */
static struct smio_accel_launch *launch_req(struct conn *c, const struct opts *o, uint16_t bdf,
					    uint32_t *len, int *err)
{
	struct smio_accel_launch *m = calloc(1, SMIO_MAX_PAYLOAD);
	uint32_t alen = 0, inline_len;
	uint8_t *img = NULL;
	size_t n = 0;
	char *args;

	*err = 1;
	if (!m || !(args = calloc(1, ACCEL_KERN_ARGS_MAX))) {
		free(m);
		return cli_err("launch: out of memory"), NULL;
	}
	for (int i = 1; i < o->kargc; i++) {
		size_t l = strlen(o->kargv[i]) + 1;

		if (alen + l > ACCEL_KERN_ARGS_MAX) {
			cli_err("launch: the kernel's arguments are too long (4096 bytes at most)");
			goto fail;
		}
		memcpy(args + alen, o->kargv[i], l);
		alen += (uint32_t)l;
	}
	img = read_image(o->kargv[0], &n);
	if (!img)
		goto fail;
	m->bdf = bdf;
	m->image_len = (uint32_t)n;
	m->args_len = alen;
	m->timeout_ms = (uint32_t)o->timeout_ms;
	m->code_off = o->code_off;
	if (o->nvme) {
		m->flags = SMIO_ACCEL_LAUNCH_F_NVMEQ;
		m->nvme_bdf = o->nvme_bdf;
		m->nsid = (uint32_t)o->nsid;
		m->qdepth = (uint16_t)o->qdepth;
	}
	inline_len = n <= SMIO_MAX_PAYLOAD - sizeof(*m) - alen ? (uint32_t)n : 0;
	if (!inline_len) {
		struct smio_accel_op q = { .bdf = bdf, .kind = SMIO_ACCEL_INFO };
		struct smio_accel_result r;
		int rc;

		/* Room for the nvme.* arguments the daemon adds (see h_accel.c). */
		if (m->code_off == SMIO_ACCEL_CODE_TOP) {
			rc = accel_call(c, &q, CLI_TIMEOUT_MS, &r);
			if (rc) {
				*err = rc;
				goto fail;
			}
			m->code_off = smio_accel_code_top(r.result, n, (uint64_t)alen +
							  (o->nvme ? 512 : 0));
			if (!m->code_off) {
				*err = -ERANGE;
				goto fail;
			}
		}
		rc = load_image(c, bdf, img, n, m->code_off);
		if (rc) {
			*err = rc;
			goto fail;
		}
		m->flags |= SMIO_ACCEL_LAUNCH_F_LOADED;
	}
	memcpy(m->data, img, inline_len);
	memcpy(m->data + inline_len, args, alen);
	*len = (uint32_t)(sizeof(*m) + inline_len + alen);
	free(img);
	free(args);
	return m;
fail:
	free(img);
	free(args);
	free(m);
	return NULL;
}

int accel_do_launch(struct conn *c, uint16_t bdf, const struct opts *o)
{
	struct smio_accel_result r = { 0 };
	struct smio_accel_launch *m;
	struct json_object *j;
	uint32_t len, rlen;
	char b[16], off[24];
	int rc;

	m = launch_req(c, o, bdf, &len, &rc);
	if (!m)
		return rc;
	rc = smio_call(c->fd, SMIO_ACCEL_LAUNCH, m, len, &r, sizeof(r), &rlen, NULL,
		       (int)o->timeout_ms + MARGIN_MS);
	free(m);
	if (rc && rc != -ETIMEDOUT)
		return rc;
	accel_bdf_str(b, sizeof(b), bdf);
	snprintf(off, sizeof(off), "0x%" PRIx64, r.bus);
	if (o->json) {
		j = json_object_new_object();
		if (!j || smio_json_add_uint(j, "host", c->host) || smio_json_add_str(j, "dev", b) ||
		    smio_json_add_str(j, "op", "launch") ||
		    smio_json_add_str(j, "kernel", o->kargv[0]) ||
		    smio_json_add_str(j, "status", rc ? "timed out" : accel_code_str(r.status)) ||
		    smio_json_add_uint(j, "status_word", r.status) ||
		    smio_json_add_int(j, "result", (int64_t)r.result) ||
		    smio_json_add_str(j, "code_offset", off) ||
		    smio_json_add_uint(j, "elapsed_ns", r.elapsed_ns)) {
			json_object_put(j);
			return cli_err("launch: out of memory"), 1;
		}
		if (cli_json_print(j))
			rc = 1;
		json_object_put(j);
	} else if (rc) {
		printf("kernel %s on %s: timed out after %" PRIu64 " ms, aborted\n", o->kargv[0], b,
		       o->timeout_ms);
	} else if ((r.status & 0xff) == ACCEL_SC_KERNEL_FAULT) {
		printf("kernel %s on %s: %s: signal %" PRIu64 " (%s)\n", o->kargv[0], b,
		       accel_code_str(r.status), r.result, strsignal((int)r.result));
	} else {
		printf("kernel %s on %s: %s, returned %" PRId64 " in %.3f ms\n", o->kargv[0], b,
		       accel_code_str(r.status), (int64_t)r.result, (double)r.elapsed_ns / 1e6);
	}
	return rc || (r.status & 0xff) ? 1 : 0;
}

/*
 * BAR2 as this host's CPU and SISCI see it, from config space: the device's
 * own view (ACCEL_INFO's bus) differs for an accelerator borrowed with Device
 * Lending, whose shadow's BAR2 is a window of this host's NTB onto it.
 */
static int cpu_bar2(struct conn *c, uint16_t bdf, uint64_t *bar2)
{
	struct smio_bdf req = { .bdf = bdf };
	uint8_t *cfg = malloc(SMIO_CFG_SPACE);
	uint32_t lo, hi, rlen;
	int rc;

	if (!cfg)
		return -ENOMEM;
	rc = smio_call(c->fd, SMIO_CFG_DUMP, &req, sizeof(req), cfg, SMIO_CFG_SPACE, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (!rc && rlen != SMIO_CFG_SPACE)
		rc = -EPROTO;
	if (!rc) {
		memcpy(&lo, cfg + PCI_BASE_ADDRESS_2, 4);
		memcpy(&hi, cfg + PCI_BASE_ADDRESS_3, 4);
		*bar2 = ((uint64_t)hi << 32) | (lo & ~0xfu);
		if (!(lo & PCI_BASE_ADDRESS_MEM_TYPE_64) || !*bar2)
			rc = -ENXIO;
	}
	free(cfg);
	return rc;
}

/*
 * launch --nvme-manager: the queue pair from the NVMe's manager (accel_mgrq.c),
 * its nvme.* arguments after the kernel's own, deleted after the kernel.
 */
int accel_launch_mgrq(struct conn *c, uint16_t bdf, const struct opts *o)
{
	struct smio_accel_op q = { .bdf = bdf, .kind = SMIO_ACCEL_INFO };
	struct smio_accel_result r;
	struct accel_mgrq mq;
	struct opts o2 = *o;
	char **argv;
	uint64_t bar2;
	int rc, rc2;

	rc = accel_call(c, &q, CLI_TIMEOUT_MS, &r);
	if (!rc)
		rc = cpu_bar2(c, bdf, &bar2);
	if (rc)
		return rc;
	rc = accel_mgrq_start(&(struct accel_mgrq_req){ .host = c->host, .dir = c->dir,
		.nvme = o->nvme_mgr, .bdf = bdf, .bar2 = bar2, .mem_size = r.result,
		.depth = (unsigned)o->qdepth, .nsid = (unsigned)o->nsid }, &mq);
	if (rc) {
		cli_err("launch: no queue pair from the manager of %s (smartio-nvme devq said why)",
			o->nvme_mgr);
		return 1;
	}
	argv = calloc((size_t)o->kargc + mq.nargs + 1, sizeof(*argv));
	if (!argv) {
		accel_mgrq_stop(&mq);
		return -ENOMEM;
	}
	memcpy(argv, o->kargv, (size_t)o->kargc * sizeof(*argv));
	memcpy(argv + o->kargc, mq.args, mq.nargs * sizeof(*argv));
	o2.kargv = argv;
	o2.kargc = o->kargc + (int)mq.nargs;
	rc = accel_do_launch(c, bdf, &o2);
	/* The kernel has ended (or was aborted): the controller may have the pair back. */
	rc2 = accel_mgrq_stop(&mq);
	free(argv);
	if (rc2 && !rc) {
		cli_err("launch: smartio-nvme devq did not delete the queue pair cleanly");
		rc = 1;
	}
	return rc;
}
