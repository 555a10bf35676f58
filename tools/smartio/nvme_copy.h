/* SPDX-License-Identifier: MIT */
/* smartio nvme copy (nvme_copy.c). */
#ifndef SMARTIO_CLI_NVME_COPY_H
#define SMARTIO_CLI_NVME_COPY_H

#include <stdbool.h>

#include "smartio/proto/driver.h"

/* Send m on fd (a client connection of the host) and say what happened; 0 or -errno. */
int nvme_copy_run(int fd, const struct smio_nvme_copy *m, bool json);

#endif
