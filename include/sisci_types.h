/*
 * sisci_types.h - handle types, enumerations, callback types and shared
 * structures of the SISCI API, including the SmartIO device extension
 * (smartio implementation).
 *
 * Source-compatible with Dolphin's SISCI API: the type names, the enumerator
 * names and the callback parameter lists are those of Dolphin's public SISCI
 * API reference. Handles are opaque pointers; only the library looks inside.
 *
 * Numeric values: the enumerations whose values SISCI fixed publicly
 * (segment callback reasons start at 1, DMA queue states and sequence states
 * start at 0, SCI_CALLBACK_CANCEL is 1) keep them. Where a value or a layout
 * is not published, it was chosen by smartio; programs use the names.
 */
#ifndef SISCI_TYPES_H
#define SISCI_TYPES_H

#include <stddef.h>
#include "sisci_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parameter direction annotations used in SISCI prototypes (no effect). */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef IN_OUT
#define IN_OUT
#endif

/* ------------------------------------------------------------------------ */
/* Opaque handles                                                           */
/* ------------------------------------------------------------------------ */

/* An open SISCI virtual device: the channel between a program and the
 * library/daemon. Every other object is created through one. */
typedef struct sci_desc *sci_desc_t;

/* A memory segment owned by this program (created with SCICreateSegment). */
typedef struct sci_local_segment *sci_local_segment_t;

/* A segment hosted elsewhere (another node, or a device) that this program
 * is connected to (SCIConnectSegment, SCIConnectDeviceSegment). */
typedef struct sci_remote_segment *sci_remote_segment_t;

/* A mapping of (part of) a local or remote segment into this process. */
typedef struct sci_map *sci_map_t;

/* A sequence: error-checking and ordering context for accesses through a
 * map (SCICreateMapSequence, SCIStoreBarrier, SCIMemCpy). */
typedef struct sci_sequence *sci_sequence_t;

/* A queue of DMA transfers executed by an adapter's DMA engine. */
typedef struct sci_dma_queue *sci_dma_queue_t;

/* A DMA channel (reserved for a queue); declared for source compatibility. */
typedef struct sci_dma_channel *sci_dma_channel_t;

/* An interrupt this program created and others may trigger. */
typedef struct sci_local_interrupt *sci_local_interrupt_t;

/* A connection to an interrupt created by a program on another node. */
typedef struct sci_remote_interrupt *sci_remote_interrupt_t;

/* An interrupt that carries a small message, created by this program. */
typedef struct sci_local_data_interrupt *sci_local_data_interrupt_t;

/* A connection to a data interrupt created on another node. */
typedef struct sci_remote_data_interrupt *sci_remote_data_interrupt_t;

/* SmartIO: a reference to a borrowed PCIe device (SCIBorrowDevice). */
typedef struct sci_smartio_device *sci_smartio_device_t;

/* Earlier SmartIO releases spelled the device handle sci_device_t; kept as
 * an alias so programs written for them still compile. */
typedef sci_smartio_device_t sci_device_t;

/* An address on an I/O bus (as seen by a device or by the NTB), 64 bits.
 * Integer type chosen by smartio (unsigned long long is 64 bits on every
 * platform smartio supports). */
typedef unsigned long long sci_ioaddr_t;

/* ------------------------------------------------------------------------ */
/* Enumerations                                                             */
/* ------------------------------------------------------------------------ */

/* Why a segment callback was invoked (or what SCIWaitFor*SegmentEvent saw). */
typedef enum {
    SCI_CB_CONNECT = 1,     /* a remote program connected to a local segment */
    SCI_CB_DISCONNECT,      /* a remote program disconnected / the segment went away */
    SCI_CB_NOT_OPERATIONAL, /* the path to the peer is temporarily down */
    SCI_CB_OPERATIONAL,     /* the path is up again */
    SCI_CB_LOST             /* the connection is lost for good */
} sci_segment_cb_reason_t;

/* State of a DMA queue. */
typedef enum {
    SCI_DMAQUEUE_IDLE,      /* created or finished and reset; nothing queued */
    SCI_DMAQUEUE_GATHER,    /* transfers are being specified */
    SCI_DMAQUEUE_POSTED,    /* transfers handed to the DMA engine, in progress */
    SCI_DMAQUEUE_DONE,      /* all transfers completed successfully */
    SCI_DMAQUEUE_ABORTED,   /* the queue was aborted */
    SCI_DMAQUEUE_ERROR      /* a transfer failed */
} sci_dma_queue_state_t;

/* Result of starting/checking a sequence. */
typedef enum {
    SCI_SEQ_OK,             /* no error since the sequence was started */
    SCI_SEQ_RETRIABLE,      /* a transient error; the accesses may be retried */
    SCI_SEQ_NOT_RETRIABLE,  /* a fatal error; the connection is unusable */
    SCI_SEQ_PENDING         /* the error check could not complete yet */
} sci_sequence_status_t;

/* What a callback asks the library to do next. */
typedef enum {
    SCI_CALLBACK_CANCEL = 1, /* unregister the callback */
    SCI_CALLBACK_CONTINUE    /* keep the callback registered */
} sci_callback_action_t;

/* ------------------------------------------------------------------------ */
/* Callback types                                                           */
/* ------------------------------------------------------------------------ */

/* Event on a local segment: arg is the callbackArg given at creation,
 * nodeId/localAdapterNo identify the remote party and the local adapter. */
typedef sci_callback_action_t (*sci_cb_local_segment_t)(void *arg,
                                                        sci_local_segment_t segment,
                                                        sci_segment_cb_reason_t reason,
                                                        unsigned int nodeId,
                                                        unsigned int localAdapterNo,
                                                        sci_error_t error);

/* Event on a connected remote segment; status tells how the event ended. */
typedef sci_callback_action_t (*sci_cb_remote_segment_t)(void *arg,
                                                         sci_remote_segment_t segment,
                                                         sci_segment_cb_reason_t reason,
                                                         sci_error_t status);

/* A DMA queue finished (status SCI_ERR_OK) or failed. */
typedef sci_callback_action_t (*sci_cb_dma_t)(void *arg,
                                              sci_dma_queue_t queue,
                                              sci_error_t status);

/* A local interrupt was triggered. */
typedef sci_callback_action_t (*sci_cb_interrupt_t)(void *arg,
                                                    sci_local_interrupt_t interrupt,
                                                    sci_error_t status);

/* A local data interrupt arrived carrying length bytes at data (valid only
 * during the call). */
typedef sci_callback_action_t (*sci_cb_data_interrupt_t)(void *arg,
                                                         sci_local_data_interrupt_t interrupt,
                                                         void *data,
                                                         unsigned int length,
                                                         sci_error_t status);

/* ------------------------------------------------------------------------ */
/* Shared structures                                                        */
/* ------------------------------------------------------------------------ */

/* Longest vector SCIStartDmaTransferVec accepts (value chosen by smartio). */
#define DIS_DMA_MAX_VECLEN 256

/* One element of a DMA transfer vector (SCIStartDmaTransferVec): copy size
 * bytes between local_offset in the local segment and remote_offset in the
 * remote segment. flags: per-element flags, 0 for now. Member names are
 * SISCI's; member order and integer widths were chosen by smartio. */
typedef struct {
    size_t       size;
    size_t       local_offset;
    size_t       remote_offset;
    unsigned int flags;
} dis_dma_vec_t;

/* SmartIO device description. Returned by SCIQuery(SCI_Q_DEVICE,
 * SCI_Q_DEVICE_INFO) and used as a filter by SCIGetDeviceList, where a field
 * left zero (empty string) matches any device. Member names and types follow
 * Dolphin's SISCI API index; member order was chosen by smartio. */
typedef struct {
    unsigned int fdid;                          /* fabric device ID (32 bits, as SCIBorrowDevice takes it) */
    unsigned short     pci_device_id;
    unsigned short     pci_vendor_id;
    unsigned int       pci_class;               /* 24-bit class code, e.g. 0x010802 = NVMe */
    unsigned short     pci_subsystem_device_id;
    unsigned short     pci_subsystem_vendor_id;
    unsigned long long pci_serial_number;       /* Device Serial Number capability, 0 if none */
    unsigned short     remote_bdf;              /* bus/device/function in the lender's domain */
    unsigned short     local_bdf;               /* BDF as seen by the borrower, if inserted */
    unsigned int       adapter;                 /* local adapter through which it is reached */
    unsigned int       nodeid;                  /* node ID of the lender */
    int                physical_slot;           /* slot number, -1 if unknown */
    char               user_name[64];           /* name given by the administrator */
    char               uuid[37];                /* textual UUID (36 characters + NUL) */
} sci_smartio_device_info_t;

#ifdef __cplusplus
}
#endif

#endif /* SISCI_TYPES_H */
