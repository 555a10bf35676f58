// SPDX-License-Identifier: MIT
/*
 * `cluster up --timing MODE`: the topology's top-level `timing:` key set to
 * MODE in the text the daemons will read (DIR/topology.yaml), so the file in
 * the cluster directory says what the cluster runs with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A top-level (column 0) mapping key named key at line start p. */
static bool top_key(const char *p, const char *end, const char *key)
{
	size_t n = strlen(key);

	if ((size_t)(end - p) <= n || strncmp(p, key, n))
		return false;
	for (p += n; p < end && (*p == ' ' || *p == '\t'); p++)
		;
	return p < end && *p == ':';
}

int cli_topo_set_timing(char **yaml, size_t *len, const char *mode)
{
	const char *s = *yaml, *end = s + *len;
	char *out = malloc(*len + 64), *o = out;
	bool put = false;

	if (!out)
		return -ENOMEM;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *next = nl ? nl + 1 : end;

		if (!top_key(s, next, "timing")) {          /* the file's own, replaced */
			memcpy(o, s, (size_t)(next - s));
			o += next - s;
			if (!nl)
				*o++ = '\n';
		}
		if (!put && top_key(s, next, "version")) {  /* right after version: */
			o += sprintf(o, "timing: %s   # smartio cluster up --timing\n", mode);
			put = true;
		}
		s = next;
	}
	if (!put) {           /* no version line: the parser will say so */
		free(out);
		return -EINVAL;
	}
	free(*yaml);
	*yaml = out;
	*len = (size_t)(o - out);
	return 0;
}
