// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: any bytes into the topology parser.  It must either
 * build a topology or give one "SOURCE:LINE: ..." message, never crash,
 * leak or print.  Seed it with the files in topologies/.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "smartio/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo *t = NULL;
	char err[256];
	int rc;

	rc = topo_load_string((const char *)data, size, "fuzz", &t, err, sizeof(err));
	if (rc == 0) {
		/* Walk what was built, as a consumer would. */
		for (uint32_t i = 0; i < t->nhosts; i++)
			(void)topo_host_ntb(&t->hosts[i], 0);
		topo_free(t);
	} else if (!memchr(err, '\0', sizeof(err)) || t) {
		__builtin_trap();
	}
	return 0;
}
