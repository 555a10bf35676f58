// SPDX-License-Identifier: MIT
/*
 * Function names in place of numbers: "gpu0" for a BDF, "gpu1:bar2+0x1000"
 * for a bus address, looked up from the daemon (names come from the topology,
 * addresses from the BARs as enumeration programmed them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "cli.h"

static int func_by_name(int fd, const char *name, uint16_t *bdf)
{
	struct smio_func_list *l = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen;
	int rc;

	if (!l)
		return -ENOMEM;
	rc = smio_call(fd, SMIO_FUNC_LIST, NULL, 0, l, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (!rc) {
		rc = -ENOENT;
		for (uint32_t i = 0; i < l->n; i++) {
			if (!strcmp(l->f[i].name, name)) {
				*bdf = l->f[i].bdf;
				rc = 0;
				break;
			}
		}
	}
	free(l);
	return rc;
}

static int cfg_read32(int fd, uint16_t bdf, uint16_t off, uint32_t *v)
{
	struct smio_cfg q = { .bdf = bdf, .off = off, .size = 4 }, r;
	uint32_t rlen;
	int rc = smio_call(fd, SMIO_CFG_READ, &q, sizeof(q), &r, sizeof(r), &rlen, NULL,
			   CLI_TIMEOUT_MS);

	if (!rc)
		*v = r.value;
	return rc;
}

int cli_parse_func(int fd, const char *s, uint16_t *bdf)
{
	if (!strcasecmp(s, "cpu")) {
		*bdf = 0;
		return 0;
	}
	if (!cli_parse_bdf(s, bdf))
		return 0;
	if (func_by_name(fd, s, bdf)) {
		cli_err("'%s' is neither 'cpu', a BDF (BB:DD.F) nor a function name on this host "
			"('smartio topo' shows the names)", s);
		return -EINVAL;
	}
	return 0;
}

int cli_parse_addr(int fd, const char *s, uint64_t *addr)
{
	const char *colon = strchr(s, ':');
	char name[SMIO_NAME_MAX];
	uint64_t off = 0, base;
	uint16_t bdf;
	uint32_t lo, hi = 0;
	char *end;
	unsigned long bar;

	if (!colon || strncmp(colon + 1, "bar", 3)) {
		if (cli_parse_u64(s, addr)) {
			cli_err("--addr: '%s' is neither a number nor NAME:barN[+OFFSET]", s);
			return -EINVAL;
		}
		return 0;
	}
	if ((size_t)(colon - s) >= sizeof(name)) {
		cli_err("--addr: function name too long in '%s'", s);
		return -EINVAL;
	}
	memcpy(name, s, (size_t)(colon - s));
	name[colon - s] = '\0';
	bar = strtoul(colon + 4, &end, 10);
	if (end == colon + 4 || bar > 5 || (*end && *end != '+') ||
	    (*end == '+' && cli_parse_u64(end + 1, &off))) {
		cli_err("--addr: '%s' should look like gpu1:bar2 or gpu1:bar2+0x1000", s);
		return -EINVAL;
	}
	if (func_by_name(fd, name, &bdf) && cli_parse_bdf(name, &bdf)) {
		cli_err("--addr: no function '%s' on this host", name);
		return -ENOENT;
	}
	if (cfg_read32(fd, bdf, (uint16_t)(PCI_BASE_ADDRESS_0 + 4 * bar), &lo))
		return -EIO;
	if ((lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64 && bar < 5 &&
	    cfg_read32(fd, bdf, (uint16_t)(PCI_BASE_ADDRESS_0 + 4 * bar + 4), &hi))
		return -EIO;
	base = ((uint64_t)hi << 32) | (lo & ~0xfu);
	if (!base) {
		cli_err("--addr: %s BAR%lu is not assigned", name, bar);
		return -ENOENT;
	}
	*addr = base + off;
	return 0;
}
