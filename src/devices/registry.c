// SPDX-License-Identifier: MIT
/* Which behaviour belongs to which model name. */
#include <string.h>

#include "dev.h"

extern const struct dev_model_ops nvme_model_ops;
extern const struct dev_model_ops accel_model_ops;

/* The test endpoint: plain memory behind its BARs, no behaviour. */
static int test_create(struct dev_instance *d, char *err, size_t errlen)
{
	return 0;
}

static void test_destroy(struct dev_instance *d)
{
}

static int test_poll(struct dev_instance *d)
{
	return 0;
}

static void test_reset(struct dev_instance *d)
{
}

static const struct dev_model_ops test_model_ops = {
	.name = "test", .create = test_create, .destroy = test_destroy,
	.poll = test_poll, .reset = test_reset,
};

static const struct dev_model_ops *const registry[] = {
	&test_model_ops, &nvme_model_ops, &accel_model_ops,
};

const struct dev_model_ops *dev_model_ops_find(const char *name)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}
