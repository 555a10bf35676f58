/* SPDX-License-Identifier: MIT */
/*
 * The all-ones object: what a failed PCIe path reads as. One memfd per
 * process (per shared library: each keeps a private copy of util), filled
 * with 0xff and grown on demand (never shrunk), that failed mappings are
 * replaced with (mmap MAP_PRIVATE | MAP_FIXED: loads read 0xff…, stores stay
 * in the process). Used by libsisci's maps and the PCI core's iomaps.
 */
#ifndef SMARTIO_UTIL_ALLONES_H
#define SMARTIO_UTIL_ALLONES_H

#include <stddef.h>

/* An fd of at least len bytes of 0xff (thread-safe; the process keeps it), or -errno. */
int smio_allones_fd(size_t len);

#endif
