/* SPDX-License-Identifier: MIT */
/*
 * Whole writes to a file descriptor: a pipe, a socket or a file may take
 * fewer bytes than asked, and a signal may interrupt the call.
 */
#ifndef SMARTIO_UTIL_FD_IO_H
#define SMARTIO_UTIL_FD_IO_H

#include <stddef.h>

/* Write all n bytes of p to fd (retrying after EINTR): 0 or -errno. */
int smio_write_all(int fd, const void *p, size_t n);

#endif
