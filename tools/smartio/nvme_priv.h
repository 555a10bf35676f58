/* SPDX-License-Identifier: MIT */
/*
 * smartio nvme's parts (nvme.c: transport, read/write/dd, the command;
 * nvme_info.c: identify and list): the connection to the host's daemon and
 * the calls both use.
 */
#ifndef SMARTIO_TOOLS_NVME_PRIV_H
#define SMARTIO_TOOLS_NVME_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvme/types.h>

#include "cli.h"

#define NVME_CLASS          0x010802u
#define NVME_IO_TIMEOUT_MS  35000      /* the daemon's own bound is 30 s */
#define PROGRESS_MIN        (4u << 20) /* show progress from this many bytes */

struct nconn {
	const char *host_opt, *dir_opt, *dev_opt;
	char dir[PATH_MAX];
	uint32_t host;
	uint16_t bdf;
	int fd;
	uint8_t *req, *rep;      /* message buffers */
};

void nvme_bdf_str(char *buf, size_t len, uint16_t bdf);
const char *nvme_errstr(int rc);
/* One admin command; data (len bytes) in or out. Returns 0, 1 (NVMe error) or -errno. */
int nvme_admin(struct nconn *c, uint8_t opcode, uint32_t nsid, uint32_t cdw10, void *data,
	       uint32_t len, uint16_t *status);
int nvme_func_list(struct nconn *c, struct smio_func_list **out);
int nvme_func_class(struct nconn *c, uint16_t bdf, uint32_t *cls);

/* nvme_info.c */
unsigned nvme_ns_lba_shift(const struct nvme_id_ns *ns);
int nvme_get_ns(struct nconn *c, uint32_t nsid, struct nvme_id_ns *ns);
int nvme_do_identify(struct nconn *c, uint32_t only_ns, bool json);
int nvme_do_list(struct nconn *c, bool json);

#endif
