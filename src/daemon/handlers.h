/* SPDX-License-Identifier: MIT */
/* The core request handlers (h_core.c), for the dispatch table (dispatch.c). */
#ifndef SMARTIO_DAEMON_HANDLERS_H
#define SMARTIO_DAEMON_HANDLERS_H

#include "core.h"

int h_hello(struct smd_req *r);
int h_status(struct smd_req *r);
int h_shutdown(struct smd_req *r);
int h_func_list(struct smd_req *r);
int h_cfg_read(struct smd_req *r);
int h_cfg_write(struct smd_req *r);
int h_cfg_dump(struct smd_req *r);
int h_sriov(struct smd_req *r);          /* h_sriov.c */
int h_route(struct smd_req *r);
int h_map(struct smd_req *r);
int h_ntb_info(struct smd_req *r);
int h_ntb_lut_set(struct smd_req *r);
int h_ntb_lut_clear(struct smd_req *r);
int h_ntb_rid_add(struct smd_req *r);
int h_ntb_rid_del(struct smd_req *r);
int h_ntb_link(struct smd_req *r);
int h_ntb_db_ring(struct smd_req *r);
int h_ntb_spad(struct smd_req *r);
int h_iommu_domain(struct smd_req *r);
int h_iommu_map(struct smd_req *r);
int h_iommu_unmap(struct smd_req *r);
int h_iommu_faults(struct smd_req *r);
int h_nvme_admin(struct smd_req *r);
int h_nvme_io(struct smd_req *r);
int h_accel_op(struct smd_req *r);
int h_accel_launch(struct smd_req *r);
int h_accel_load(struct smd_req *r);
int h_p2pmem(struct smd_req *r);
int h_nvme_copy(struct smd_req *r);
int h_segment(struct smd_req *r);
int h_mcast(struct smd_req *r);          /* h_mcast.c */
int h_device(struct smd_req *r);
int h_lend(struct smd_req *r);
int h_czodiac(struct smd_req *r);       /* h_czodiac.c */
int h_vm(struct smd_req *r);
int h_intr(struct smd_req *r);
int h_dma(struct smd_req *r);
int h_peer_step(struct smd_req *r);
int h_peer_invalidate(struct smd_req *r);
int h_peer_db(struct smd_req *r);
/* The cluster as libsisci sees it (h_cluster.c). */
int h_node_list(struct smd_req *r);
int h_adapter_info(struct smd_req *r);
int h_probe_node(struct smd_req *r);

#endif
