/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays: room for one more element in *v (n used, *cap allocated),
 * doubling from 8. 0, or -ENOMEM with *v unchanged.
 */
#ifndef SMARTIO_UTIL_VEC_H
#define SMARTIO_UTIL_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

static inline int smio_vec_reserve(void **v, unsigned n, unsigned *cap, size_t size)
{
	unsigned c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 8;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

#endif
