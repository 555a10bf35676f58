// SPDX-License-Identifier: MIT
/* Model parameters from the topology. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dev.h"

const char *dev_param(const struct dev_instance *d, const char *key)
{
	const struct topo_device *td = d->fn.td;

	for (uint32_t i = 0; td && i < td->nparams; i++)
		if (!strcmp(td->params[i].key, key))
			return td->params[i].value;
	return NULL;
}

int dev_param_u64(const struct dev_instance *d, const char *key, uint64_t def, uint64_t *out,
		  char *err, size_t errlen)
{
	const char *v = dev_param(d, key);

	*out = def;
	if (!v)
		return 0;
	if (topo_parse_size(v, out) < 0) {
		snprintf(err, errlen, "device %s: parameter %s: '%s' is not a number or size",
			 d->fn.td ? d->fn.td->name : "?", key, v);
		return -EINVAL;
	}
	return 0;
}
