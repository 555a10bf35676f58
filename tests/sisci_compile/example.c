/*
 * example.c - a compile-only SISCI program that calls every function of the
 * SISCI API (with the SmartIO extension) that smartio supports, the way
 * existing SISCI programs call them. It is built as an object file with
 * -Wall -Werror to check that such programs compile unmodified against
 * include/sisci_*.h; it is not linked or run.
 *
 * Outline: a "server" role creates a segment, an interrupt and a data
 * interrupt; a "client" role connects to them, maps the segment, writes
 * through the map, copies with SCIMemCpy and the DMA engine, and triggers
 * the interrupts; a "driver" role borrows an NVMe device, maps its BAR0 and
 * a queue segment for the device, and registers a PCIe requester.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sisci_types.h"
#include "sisci_error.h"
#include "sisci_api.h"
#include <dis/dis_types.h>

#define ADAPTER      0
#define SEGMENT_ID   0x1234
#define SEGMENT_SIZE 0x10000
#define INTR_NO      7
#define MSG_MAX      64

static int check(const char *what, sci_error_t err)
{
    if (err != SCI_ERR_OK) {
        fprintf(stderr, "%s: %s (0x%x)\n", what, SCIGetErrorString(err), (unsigned int) err);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- callbacks */

static sci_callback_action_t local_segment_event(void *arg, sci_local_segment_t segment,
                                                 sci_segment_cb_reason_t reason,
                                                 unsigned int nodeId, unsigned int localAdapterNo,
                                                 sci_error_t error)
{
    (void) arg;
    (void) segment;
    if (reason == SCI_CB_CONNECT)
        printf("node %u connected via adapter %u\n", nodeId, localAdapterNo);
    else if (reason == SCI_CB_DISCONNECT || reason == SCI_CB_LOST)
        printf("node %u went away\n", nodeId);
    return error == SCI_ERR_OK ? SCI_CALLBACK_CONTINUE : SCI_CALLBACK_CANCEL;
}

static sci_callback_action_t remote_segment_event(void *arg, sci_remote_segment_t segment,
                                                  sci_segment_cb_reason_t reason,
                                                  sci_error_t status)
{
    int *lost = (int *) arg;
    (void) segment;
    (void) status;
    if (reason == SCI_CB_NOT_OPERATIONAL || reason == SCI_CB_LOST)
        *lost = 1;
    else if (reason == SCI_CB_OPERATIONAL)
        *lost = 0;
    return SCI_CALLBACK_CONTINUE;
}

static sci_callback_action_t dma_done(void *arg, sci_dma_queue_t queue, sci_error_t status)
{
    volatile int *done = (volatile int *) arg;
    (void) queue;
    *done = status == SCI_ERR_OK ? 1 : -1;
    return SCI_CALLBACK_CANCEL;
}

static sci_callback_action_t interrupt_fired(void *arg, sci_local_interrupt_t interrupt,
                                             sci_error_t status)
{
    unsigned int *count = (unsigned int *) arg;
    (void) interrupt;
    if (status == SCI_ERR_OK)
        ++*count;
    return SCI_CALLBACK_CONTINUE;
}

static sci_callback_action_t data_interrupt_fired(void *arg, sci_local_data_interrupt_t interrupt,
                                                  void *data, unsigned int length,
                                                  sci_error_t status)
{
    char *msg = (char *) arg;
    (void) interrupt;
    if (status != SCI_ERR_OK)
        return SCI_CALLBACK_CANCEL;
    if (length >= MSG_MAX)
        length = MSG_MAX - 1;
    memcpy(msg, data, length);
    msg[length] = '\0';
    return SCI_CALLBACK_CONTINUE;
}

/* ------------------------------------------------------------------ queries */

static void show_adapter(void)
{
    sci_error_t err;
    unsigned int node_id = 0;
    unsigned int link_up = 0;
    char vendor[80];
    sci_query_string_t qs;
    sci_query_adapter_t qa;

    SCIGetLocalNodeId(ADAPTER, &node_id, 0, &err);
    if (check("SCIGetLocalNodeId", err))
        return;

    qs.str = vendor;
    qs.length = sizeof(vendor);
    SCIQuery(SCI_Q_VENDORID, &qs, 0, &err);
    if (err == SCI_ERR_OK)
        printf("vendor: %s\n", vendor);

    qa.localAdapterNo = ADAPTER;
    qa.portNo = 0;
    qa.subcommand = SCI_Q_ADAPTER_LINK_OPERATIONAL;
    qa.data = &link_up;
    SCIQuery(SCI_Q_ADAPTER, &qa, 0, &err);
    if (err == SCI_ERR_ILLEGAL_QUERY)
        link_up = 1;
    printf("local node %u, link %s\n", node_id, link_up ? "up" : "down");

    /* Every adapter's node ID, in an array sized as SmartIO programs size it. */
    {
        unsigned int adapters = 0;
        uint32_t nodes[DIS_MAX_NSCIS];
        int i;

        qa.subcommand = SCI_Q_ADAPTER_NUMBER;
        qa.data = &adapters;
        SCIQuery(SCI_Q_ADAPTER, &qa, 0, &err);
        for (i = 0; err == SCI_ERR_OK && i < DIS_MAX_NSCIS && (unsigned int)i < adapters; i++) {
            SCIGetLocalNodeId((unsigned int)i, &nodes[i], 0, &err);
            if (err == SCI_ERR_OK)
                printf("adapter %d: node %u\n", i, (unsigned int)nodes[i]);
        }
    }
}

/* ------------------------------------------------------------------- server */

static int server(sci_desc_t sd, unsigned int peer)
{
    sci_error_t err;
    sci_local_segment_t segment;
    sci_local_segment_t empty;
    sci_local_interrupt_t intr;
    sci_local_interrupt_t wait_intr;
    unsigned int wait_no = 0;
    sci_local_data_interrupt_t dintr;
    sci_local_data_interrupt_t cb_dintr;
    unsigned int cb_no;
    char cb_msg[MSG_MAX];
    sci_map_t map;
    sci_query_local_segment_t q;
    volatile uint32_t *words;
    unsigned int intr_no = INTR_NO;
    unsigned int dintr_no = 0;
    unsigned int irq_count = 0;
    unsigned int len;
    char msg[MSG_MAX];
    static char user_buffer[4096];

    SCICreateSegment(sd, &segment, SEGMENT_ID, SEGMENT_SIZE, local_segment_event, NULL,
                     SCI_FLAG_USE_CALLBACK, &err);
    if (err == SCI_ERR_SEGMENTID_USED)
        SCICreateSegment(sd, &segment, 0, SEGMENT_SIZE, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
    if (check("SCICreateSegment", err))
        return -1;
    printf("segment %u, %zu bytes\n", SCIGetLocalSegmentId(segment),
           SCIGetLocalSegmentSize(segment));

    SCIPrepareSegment(segment, ADAPTER, 0, &err);
    if (check("SCIPrepareSegment", err))
        goto remove;

    q.segment = segment;
    q.subcommand = SCI_Q_LOCAL_SEGMENT_PHYS_ADDR;
    SCIQuery(SCI_Q_LOCAL_SEGMENT, &q, 0, &err);
    if (err == SCI_ERR_OK)
        printf("physical address 0x%llx\n", (unsigned long long) q.data.ioaddr);

    words = (volatile uint32_t *) SCIMapLocalSegment(segment, &map, 0, SEGMENT_SIZE, NULL, 0, &err);
    if (check("SCIMapLocalSegment", err))
        goto remove;
    words[0] = 0;

    SCISetSegmentAvailable(segment, ADAPTER, 0, &err);
    if (check("SCISetSegmentAvailable", err))
        goto unmap;

    /* Empty segments backed by user memory and by physical memory. */
    SCICreateSegment(sd, &empty, SEGMENT_ID + 1, sizeof(user_buffer), NULL, NULL,
                     SCI_FLAG_EMPTY, &err);
    if (err == SCI_ERR_OK) {
        SCIRegisterSegmentMemory(user_buffer, sizeof(user_buffer), empty, 0, &err);
        (void) check("SCIRegisterSegmentMemory", err);
        SCIRemoveSegment(empty, 0, &err);
    }
    SCICreateSegment(sd, &empty, SEGMENT_ID + 2, 0x1000, NULL, NULL, SCI_FLAG_EMPTY, &err);
    if (err == SCI_ERR_OK) {
        SCIAttachPhysicalMemory((sci_ioaddr_t) 0xfe000000ULL, NULL, 0, 0x1000, empty, 0, &err);
        (void) check("SCIAttachPhysicalMemory", err);
        SCIRemoveSegment(empty, 0, &err);
    }

    /* Interrupts: one with a callback, one waited for. */
    SCICreateInterrupt(sd, &intr, ADAPTER, &intr_no, interrupt_fired, &irq_count,
                       SCI_FLAG_USE_CALLBACK | SCI_FLAG_FIXED_INTNO, &err);
    if (check("SCICreateInterrupt", err))
        goto unavailable;
    SCICreateDataInterrupt(sd, &dintr, ADAPTER, &dintr_no, NULL, NULL, 0, &err);
    if (check("SCICreateDataInterrupt", err))
        goto remove_intr;

    /* A second data interrupt handled by a callback instead of waiting. */
    cb_no = INTR_NO + 1;
    SCICreateDataInterrupt(sd, &cb_dintr, ADAPTER, &cb_no, data_interrupt_fired, cb_msg,
                           SCI_FLAG_USE_CALLBACK | SCI_FLAG_FIXED_INTNO, &err);
    if (err == SCI_ERR_OK)
        SCIRemoveDataInterrupt(cb_dintr, 0, &err);

    /* A plain interrupt without a callback: block on it for a while. */
    SCICreateInterrupt(sd, &wait_intr, ADAPTER, &wait_no, NULL, NULL, 0, &err);
    if (err == SCI_ERR_OK) {
        SCIWaitForInterrupt(wait_intr, 100, 0, &err);
        if (err != SCI_ERR_OK && err != SCI_ERR_TIMEOUT)
            (void) check("SCIWaitForInterrupt", err);
        SCIRemoveInterrupt(wait_intr, 0, &err);
    }

    if (SCIProbeNode(sd, ADAPTER, peer, 0, &err))
        printf("peer %u reachable\n", peer);

    len = sizeof(msg) - 1;
    SCIWaitForDataInterrupt(dintr, msg, &len, 5000, 0, &err);
    if (err == SCI_ERR_OK) {
        msg[len] = '\0';
        printf("message: %s\n", msg);
    } else if (err != SCI_ERR_TIMEOUT) {
        (void) check("SCIWaitForDataInterrupt", err);
    }
    while (words[0] == 0)
        ;
    printf("peer wrote %u, interrupts %u\n", words[0], irq_count);

    SCIRemoveDataInterrupt(dintr, 0, &err);
remove_intr:
    do {
        SCIRemoveInterrupt(intr, 0, &err);
    } while (err == SCI_ERR_BUSY);
unavailable:
    SCISetSegmentUnavailable(segment, ADAPTER, SCI_FLAG_NOTIFY, &err);
unmap:
    SCIUnmapSegment(map, 0, &err);
remove:
    do {
        SCIRemoveSegment(segment, 0, &err);
    } while (err == SCI_ERR_BUSY);
    return 0;
}

/* ------------------------------------------------------------------- client */

static int client(sci_desc_t sd, unsigned int peer)
{
    sci_error_t err;
    sci_remote_segment_t remote;
    sci_local_segment_t local;
    sci_remote_interrupt_t rintr;
    sci_remote_data_interrupt_t rdintr;
    sci_map_t map;
    sci_sequence_t seq;
    sci_dma_queue_t dq;
    sci_dma_queue_state_t state;
    sci_query_remote_segment_t q;
    dis_dma_vec_t vec[2];
    volatile uint32_t *remote_words;
    volatile int dma_state = 0;
    int lost = 0;
    uint32_t buffer[16];
    char hello[] = "hello from the client";
    size_t size;

    SCIConnectSegment(sd, &remote, peer, SEGMENT_ID, ADAPTER, remote_segment_event, &lost,
                      SCI_INFINITE_TIMEOUT, SCI_FLAG_USE_CALLBACK, &err);
    if (check("SCIConnectSegment", err))
        return -1;
    size = SCIGetRemoteSegmentSize(remote);
    printf("connected to segment %u on node %u (%zu bytes)\n", SCIGetRemoteSegmentId(remote),
           SCIGetRemoteSegmentNodeId(remote), size);

    q.segment = remote;
    q.subcommand = SCI_Q_REMOTE_SEGMENT_IOADDR;
    SCIQuery(SCI_Q_REMOTE_SEGMENT, &q, 0, &err);

    remote_words = (volatile uint32_t *) SCIMapRemoteSegment(remote, &map, 0, size, NULL, 0, &err);
    if (check("SCIMapRemoteSegment", err))
        goto disconnect;
    if ((volatile void *) remote_words != SCIGetMapPointer(map))
        fprintf(stderr, "map pointer mismatch\n");

    SCICreateMapSequence(map, &seq, 0, &err);
    if (check("SCICreateMapSequence", err))
        goto unmap;

    /* Stores checked the SISCI way: repeat them while the path says retry. */
    for (int tries = 0; tries < 3; tries++) {
        sci_sequence_status_t ss = SCIStartSequence(seq, 0, &err);

        if (ss != SCI_SEQ_OK)
            break;
        remote_words[2] = 7;
        ss = SCICheckSequence(seq, SCI_FLAG_NO_FLUSH, &err);
        if (ss != SCI_SEQ_RETRIABLE)
            break;
    }

    memset(buffer, 0xab, sizeof(buffer));
    SCIMemCpy(seq, buffer, map, 64, sizeof(buffer), SCI_FLAG_ERROR_CHECK, &err);
    (void) check("SCIMemCpy", err);
    remote_words[1] = 42;
    SCIFlush(seq, 0);
    SCIStoreBarrier(seq, 0);
    SCICacheSync(map, (void *) (uintptr_t) remote_words, 64, SCI_FLAG_CACHE_FLUSH, &err);

    /* DMA from a local segment into the remote one. */
    SCICreateSegment(sd, &local, 0, 0x4000, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
    if (check("SCICreateSegment", err))
        goto remove_seq;
    SCIPrepareSegment(local, ADAPTER, SCI_FLAG_DMA_SOURCE_ONLY, &err);
    SCICreateDMAQueue(sd, &dq, ADAPTER, 4, 0, &err);
    if (check("SCICreateDMAQueue", err))
        goto remove_local;

    SCIStartDmaTransfer(dq, local, remote, 0, 0x1000, 0x1000, NULL, NULL, SCI_FLAG_DMA_WAIT, &err);
    (void) check("SCIStartDmaTransfer", err);

    vec[0].size = 0x800;
    vec[0].local_offset = 0;
    vec[0].remote_offset = 0x2000;
    vec[0].flags = 0;
    vec[1].size = 0x800;
    vec[1].local_offset = 0x800;
    vec[1].remote_offset = 0x3000;
    vec[1].flags = 0;
    SCIStartDmaTransferVec(dq, local, remote, 2, vec, dma_done, (void *) &dma_state,
                           SCI_FLAG_USE_CALLBACK | SCI_FLAG_DMA_READ, &err);
    if (err == SCI_ERR_OK) {
        state = SCIWaitForDMAQueue(dq, 1000, 0, &err);
        if (state != SCI_DMAQUEUE_DONE)
            fprintf(stderr, "DMA queue state %d\n", (int) state);
    }
    if (SCIDMAQueueState(dq) == SCI_DMAQUEUE_POSTED)
        SCIAbortDMAQueue(dq, 0, &err);
    if (SCIDMAQueueState(dq) == SCI_DMAQUEUE_POSTED)
        (void) SCIWaitForDMAQueue(dq, SCI_INFINITE_TIMEOUT, 0, &err);
    SCIRemoveDMAQueue(dq, 0, &err);

    /* Interrupts. */
    SCIConnectInterrupt(sd, &rintr, peer, ADAPTER, INTR_NO, 1000, 0, &err);
    if (err == SCI_ERR_OK) {
        SCITriggerInterrupt(rintr, 0, &err);
        SCIDisconnectInterrupt(rintr, 0, &err);
    }
    SCIConnectDataInterrupt(sd, &rdintr, peer, ADAPTER, 0, 1000, 0, &err);
    if (err == SCI_ERR_OK) {
        SCITriggerDataInterrupt(rdintr, hello, (unsigned int) sizeof(hello), 0, &err);
        SCIDisconnectDataInterrupt(rdintr, 0, &err);
    }
    remote_words[0] = 1;
    SCIFlush(NULL, 0);

remove_local:
    SCIRemoveSegment(local, 0, &err);
remove_seq:
    SCIRemoveSequence(seq, 0, &err);
unmap:
    SCIUnmapSegment(map, 0, &err);
disconnect:
    do {
        SCIDisconnectSegment(remote, 0, &err);
    } while (err == SCI_ERR_BUSY);
    return lost;
}

/* --------------------------------------------------------- SmartIO driver */

static int driver(sci_desc_t sd)
{
    sci_error_t err;
    sci_smartio_device_t device;
    sci_smartio_device_info_t filter;
    sci_smartio_device_info_t info;
    sci_smartio_query_device_t query;
    sci_remote_segment_t bar;
    sci_remote_segment_t queue_mem;
    sci_local_segment_t buffer;
    sci_map_t bar_map;
    sci_ioaddr_t queue_addr = 0;
    sci_ioaddr_t buffer_addr = 0;
    volatile uint64_t *regs;
    unsigned int fdids[16];
    unsigned int n;
    unsigned int i;

    memset(&filter, 0, sizeof(filter));
    filter.pci_class = 0x010802; /* NVMe */
    n = SCIGetDeviceList(sd, fdids, 16, &filter, 0, &err);
    if (check("SCIGetDeviceList", err))
        return -1;
    for (i = 0; i < n; ++i) {
        SCIBorrowDevice(sd, &device, fdids[i], SCI_FLAG_EXCLUSIVE, &err);
        if (err == SCI_ERR_OK)
            break;
        if (err != SCI_ERR_NOT_AVAILABLE && err != SCI_ERR_NO_SUCH_FDID)
            (void) check("SCIBorrowDevice", err);
    }
    if (i == n)
        return -1;

    memset(&info, 0, sizeof(info));
    query.fdid = SCIGetFabricDeviceId(device);
    query.subcommand = SCI_Q_DEVICE_INFO;
    query.data = &info;
    SCIQuery(SCI_Q_DEVICE, &query, 0, &err);
    if (err == SCI_ERR_OK)
        printf("device %x: %04x:%04x on node %u \"%s\"\n", info.fdid, info.pci_vendor_id,
               info.pci_device_id, info.nodeid, info.user_name);

    /* BAR0 as a segment, mapped uncached. */
    SCIConnectDeviceSegment(device, &bar, 0, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
    if (check("SCIConnectDeviceSegment", err))
        goto give_back;
    regs = (volatile uint64_t *) SCIMapRemoteSegment(bar, &bar_map, 0, 0x2000, NULL,
                                                     SCI_FLAG_IO_MAP_IOSPACE, &err);
    if (check("SCIMapRemoteSegment(BAR0)", err))
        goto disconnect_bar;
    printf("CAP = 0x%016llx\n", (unsigned long long) regs[0]);

    /* A queue the host writes and the device reads: placed near the device. */
    SCICreateDeviceSegment(device, 1, 0x1000, SCI_MEMTYPE_PRIVATE,
                           SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
    if (check("SCICreateDeviceSegment", err))
        goto unmap_bar;
    SCIConnectDeviceSegment(device, &queue_mem, 1, SCI_MEMTYPE_PRIVATE, NULL, NULL, 0, &err);
    if (check("SCIConnectDeviceSegment(queue)", err))
        goto unmap_bar;
    SCIMapRemoteSegmentForDevice(queue_mem, device, &queue_addr, 0, 0x1000, 0, &err);
    if (err == SCI_ERR_OK) {
        printf("device sees the queue at 0x%llx\n", (unsigned long long) queue_addr);
        SCIUnmapRemoteSegmentForDevice(queue_mem, device, 0, &err);
    }
    SCIDisconnectSegment(queue_mem, 0, &err);

    /* A local buffer the device writes into. */
    SCICreateSegment(sd, &buffer, 0, 0x1000, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
    if (err == SCI_ERR_OK) {
        SCIPrepareSegment(buffer, info.adapter, 0, &err);
        SCISetSegmentAvailable(buffer, info.adapter, 0, &err);
        SCIMapLocalSegmentForDevice(buffer, info.adapter, device, &buffer_addr, 0, 0x1000, 0, &err);
        if (err == SCI_ERR_OK)
            SCIUnmapLocalSegmentForDevice(buffer, info.adapter, device, 0, &err);
        SCISetSegmentUnavailable(buffer, info.adapter, 0, &err);
        SCIRemoveSegment(buffer, 0, &err);
    }

    /* A requester behind our own adapter (e.g. a local GPU) doing DMA. */
    SCIRegisterPCIeRequester(sd, info.adapter, 0x3b, 0x00, SCI_FLAG_PCIE_REQUESTER_GLOBAL, &err);
    if (err == SCI_ERR_OK)
        SCIUnregisterPCIeRequester(sd, info.adapter, 0x3b, 0x00, SCI_FLAG_PCIE_REQUESTER_GLOBAL,
                                   &err);

    SCIReleaseExclusiveBorrow(device, 0, &err);

unmap_bar:
    SCIUnmapSegment(bar_map, 0, &err);
disconnect_bar:
    SCIDisconnectSegment(bar, 0, &err);
give_back:
    SCIReturnDevice(device, 0, &err);
    return 0;
}

int main(int argc, char **argv)
{
    sci_error_t err;
    sci_desc_t sd;
    unsigned int peer = 8;
    int rc = 0;

    if (argc > 2)
        peer = (unsigned int) strtoul(argv[2], NULL, 0);

    SCIInitialize(0, &err);
    if (check("SCIInitialize", err))
        return 1;
    SCIOpen(&sd, 0, &err);
    if (check("SCIOpen", err)) {
        SCITerminate();
        return 1;
    }

    show_adapter();
    if (argc > 1 && strcmp(argv[1], "server") == 0)
        rc = server(sd, peer);
    else if (argc > 1 && strcmp(argv[1], "client") == 0)
        rc = client(sd, peer);
    else
        rc = driver(sd);

    SCIClose(sd, 0, &err);
    SCITerminate();
    return rc == 0 ? 0 : 1;
}
