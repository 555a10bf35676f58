/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, the host's IOMMU: IOMMU_*.
 */
#ifndef SMARTIO_PROTO_IOMMU_H
#define SMARTIO_PROTO_IOMMU_H

#include <stdint.h>

#include "wire.h"

#define SMIO_MAX_FAULTS   64             /* smio_iommu_faults.n bound */

enum smio_iommu_op {
	SMIO_IOMMU_ALLOC = 1, SMIO_IOMMU_FREE, SMIO_IOMMU_ATTACH, SMIO_IOMMU_DETACH,
};

struct smio_iommu {
	uint32_t op;               /* enum smio_iommu_op */
	uint32_t domain;
	uint16_t rid;
	uint16_t pad[3];
};

struct smio_iommu_map {
	uint32_t domain;
	uint32_t prot;             /* 1 read, 2 write */
	uint64_t iova;
	uint64_t paddr;
	uint64_t size;
};

struct smio_iommu_fault {
	uint16_t rid;
	uint8_t write;
	uint8_t reason;
	uint32_t domain;
	uint64_t iova;
	uint64_t seq;
};

struct smio_iommu_faults {
	uint64_t total;
	uint32_t n;                /* <= 64 */
	uint32_t pad;
	struct smio_iommu_fault f[];
};

#endif
