/* SPDX-License-Identifier: MIT */
/*
 * Device models: what each model looks like on the bus (identity, BARs,
 * interrupt capabilities). The models' behaviour (NVMe queues, accelerator
 * DMA engine) lives beside this in nvme/ and accel/.
 */
#ifndef SMARTIO_DEVICES_MODELS_H
#define SMARTIO_DEVICES_MODELS_H

#include <stddef.h>

#include "fabric/fabric.h"

/* fab_endpoint_init_fn for every known model ("test", "nvme", "accel"). */
int dev_endpoint_init(struct fab_func *fn, const struct topo_device *td, char *err,
		      size_t errlen);
/* Whether a model name is known. */
int dev_model_known(const char *model);

#endif
