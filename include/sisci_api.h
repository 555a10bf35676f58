/*
 * sisci_api.h - the SISCI shared-memory API with the SmartIO device
 * extension (smartio implementation).
 *
 * Source-compatible with Dolphin's SISCI API: function names, argument
 * order and argument types are those of Dolphin's public SISCI API
 * reference, so programs written for SISCI compile unmodified against this
 * header and link with `pkg-config --libs sisci`.
 *
 * Calling convention (as in SISCI): almost every function takes `flags`
 * (0 or a combination of the SCI_FLAG_* values listed with the function;
 * other bits give SCI_ERR_ILLEGAL_FLAG) and reports its result through the
 * last parameter, `sci_error_t *error`, which is set to SCI_ERR_OK on
 * success. Timeouts are in milliseconds; SCI_INFINITE_TIMEOUT waits forever.
 *
 * Numeric values of constants: see the comment above each group. In short,
 * the flag, memory-type and access-hint values are the ones Dolphin's
 * library uses (visible in public code built against it); the SCIQuery
 * command numbers and a few flags are not published and were chosen by
 * smartio. Programs use the names, never the numbers. In Dolphin's library
 * the constants are link-time `const unsigned int` objects; here they are
 * integer constant expressions, which every use of the former accepts.
 *
 * Only the functions smartio programs are known to use are declared (see
 * docs/sisci.md for the list and for what is implemented).
 */
#ifndef SISCI_API_H
#define SISCI_API_H

#include <stddef.h>
#include "sisci_types.h"
#include "sisci_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol visibility for the shared library; empty for programs. */
#ifndef SISCI_API_EXPORT
#  if defined(__GNUC__) && defined(SISCI_BUILDING_LIBRARY)
#    define SISCI_API_EXPORT __attribute__((visibility("default")))
#  else
#    define SISCI_API_EXPORT
#  endif
#endif

/* ======================================================================== */
/* General values                                                           */
/* ======================================================================== */

/* Wait forever (published value). */
#define SCI_INFINITE_TIMEOUT                       0xFFFFFFFFU
/* Node ID meaning "this host" (value chosen by smartio). */
#define SCI_LOCAL_HOST                             0xFFFFFFFEU
/* SCIConnectSegment with SCI_FLAG_BROADCAST: every member of the multicast group */
#define DIS_BROADCAST_NODEID_GROUP_ALL             0x80000000U

/* ======================================================================== */
/* Flags                                                                    */
/*                                                                          */
/* Values: those Dolphin's library uses, except the ones marked "chosen",  */
/* which were chosen by smartio (programs use the names). SISCI reuses bit */
/* values between unrelated functions; each flag is only meaningful for    */
/* the functions that list it.                                             */
/* ======================================================================== */

/* Segments and general */
#define SCI_FLAG_USE_CALLBACK                      0x00000001U /* invoke the given callback for events */
#define SCI_FLAG_EMPTY                             0x00000002U /* SCICreateSegment: no memory; attach/register it later */
#define SCI_FLAG_PRIVATE                           0x00000004U /* SCICreateSegment: never made available to others */
#define SCI_FLAG_DMA_SOURCE_ONLY                   0x00000008U /* SCIPrepareSegment: segment is only a DMA source */
#define SCI_FLAG_FORCE_REMOVE                      0x00000020U /* SCIRemoveSegment: remove even if connected */
#define SCI_FLAG_PHYSICAL                          0x00001000U /* SCIAttachPhysicalMemory: ioaddress is a physical address */
#define SCI_FLAG_CUDA_BUFFER                       0x00002000U /* SCIRegisterSegmentMemory: address is GPU memory */
#define SCI_FLAG_SCIF_BUFFER                       0x00004000U /* SCIRegisterSegmentMemory: address is SCIF memory */
#define SCI_FLAG_LOCK_USER_MEM                     0x00000400U /* SCIRegisterSegmentMemory: pin the pages */
#define SCI_FLAG_AUTO_ID                           0x20000000U /* SCICreateSegment: library picks a free segment ID */
#define SCI_FLAG_THREAD_SAFE                       0x00000100U /* chosen: SCIOpen: serialise operations on this descriptor */
#define SCI_FLAG_ASYNCHRONOUS_CONNECT              0x00010000U /* chosen: SCIConnectSegment: return at once, report by callback */
#define SCI_FLAG_FORCE_DISCONNECT                  0x00000040U /* chosen: SCISetSegmentUnavailable: drop existing connections */
#define SCI_FLAG_NOTIFY                            0x00000080U /* chosen: SCISetSegmentUnavailable: tell connected peers */

/* Mapping */
#define SCI_FLAG_FIXED_MAP_ADDR                    0x00000001U /* map at the address given in addr */
#define SCI_FLAG_READONLY_MAP                      0x00000002U /* map read-only */
#define SCI_FLAG_LOCK_OPERATION                    0x00000004U /* enable atomic (lock) operations through the map */
#define SCI_FLAG_CONDITIONAL_INTERRUPT_MAP         0x00000008U /* stores through the map raise conditional interrupts */
#define SCI_FLAG_UNCONDITIONAL_DATA_INTERRUPT_MAP  0x00000010U /* stores through the map raise interrupts */
#define SCI_FLAG_IO_MAP_IOSPACE                    0x00000080U /* uncached, unprefetched (device registers, BARs) */
#define SCI_FLAG_NO_MEMORY_LOOPBACK                0x00000800U /* go through the adapter even for this host's memory */
#define SCI_FLAG_NO_MEMORY_LOOPBACK_MAP            SCI_FLAG_NO_MEMORY_LOOPBACK /* older spelling */
#define SCI_FLAG_SHARED_MAP                        0x00002000U /* share the mapping between processes */
#define SCI_FLAG_WRITE_BACK_CACHE_MAP              0x08000000U /* cacheable mapping; program flushes (SCICacheSync) */
#define SCI_FLAG_BROADCAST                         0x00040000U /* map/DMA to a multicast group */
#define SCI_FLAG_ALLOW_UNICAST                     0x00000080U /* broadcast map may fall back to unicast */

/* Sequences, barriers, SCIMemCpy (values chosen) */
#define SCI_FLAG_FAST_BARRIER                      0x00000001U /* chosen: SCICreateMapSequence: lightweight barrier */
#define SCI_FLAG_NO_FLUSH                          0x00000002U /* chosen: SCICheckSequence: do not flush first */
#define SCI_FLAG_NO_STORE_BARRIER                  0x00000004U /* chosen: SCICheckSequence: no barrier first */
#define SCI_FLAG_ERROR_CHECK                       0x00000008U /* chosen: SCIMemCpy: check for errors afterwards */
#define SCI_FLAG_BLOCK_READ                        0x00000010U /* chosen: SCIMemCpy: copy remote -> local */

/* Cache maintenance (SCICacheSync) */
#define SCI_FLAG_CACHE_FLUSH                       0x00100000U /* write dirty lines back */
#define SCI_FLAG_CACHE_INVALIDATE                  0x00200000U /* drop cached lines */

/* DMA */
#define SCI_FLAG_DMA_WAIT                          0x00000004U /* SCIStartDmaTransfer*: return when done */
#define SCI_FLAG_DMA_READ                          0x00000010U /* remote -> local (default local -> remote) */
#define SCI_FLAG_DMA_PHDMA                         0x00000020U /* physical DMA queue (privileged) */
#define SCI_FLAG_DMA_GLOBAL                        0x00000040U /* use the global (system) DMA engine */
#define SCI_FLAG_DMA_SYSDMA                        0x00000100U /* use the host's system DMA engine */
#define SCI_FLAG_DMA_USER_MEM                      0x00000200U /* source is plain user memory */
#define SCI_FLAG_DMA_ADAPTER                       0x00000800U /* use the adapter's DMA engine */
#define SCI_FLAG_DMA_CHANNEL_SHARED                0x00000001U /* DMA channel may be shared */

/* Interrupts */
#define SCI_FLAG_FIXED_INTNO                       0x00000002U /* SCICreate*Interrupt: use *interruptNo as given */
#define SCI_FLAG_SHARED_INT                        0x00000004U /* several programs may create the same number */
#define SCI_FLAG_CONDITIONAL_INTERRUPT             0x00000008U /* conditional interrupt semantics */
#define SCI_FLAG_COUNTING_INT                      0x00000020U /* count triggers instead of coalescing them */
#define SCI_FLAG_SHARE_EXTERNAL                    0x00000040U /* may be triggered from outside SISCI */

/* SmartIO */
#define SCI_FLAG_PCIE_REQUESTER_GLOBAL             0x00000001U /* SCIRegisterPCIeRequester: for all segments */
#define SCI_FLAG_EXCLUSIVE                         0x01000000U /* SCIBorrowDevice: nobody else may borrow it */
#define SCI_FLAG_DEVICE_SIDE_ONLY                  0x02001000U /* device segment only the device accesses */
#define SCI_FLAG_LOCAL_ONLY                        0x02002000U /* device segment only this host accesses */
#define SCI_FLAG_DEVICE_PREFER_BANDWIDTH           0x04000001U /* placement: favour device bandwidth */
#define SCI_FLAG_HOST_PREFER_BANDWIDTH             0x04000002U /* placement: favour host bandwidth */
#define SCI_FLAG_SPECIFY_PATH                      0x10000000U /* connect through an explicitly given path */
#define SCI_FLAG_SPECIFY_SLOT                      0x20000000U /* device list: match the physical slot */

/* SmartIO device memory types (SCIConnectDeviceSegment, SCICreateDeviceSegment) */
#define SCI_MEMTYPE_BAR                            0x00000001U /* a device BAR; segment ID = BAR number */
#define SCI_MEMTYPE_PRIVATE                        0x00000002U /* memory private to this borrower of the device */
#define SCI_MEMTYPE_SHARED                         0x00000004U /* memory shared by all borrowers of the device */

/* SmartIO access hints (SCICreateDeviceSegment): who reads/writes the
 * segment; the library places it accordingly (e.g. HOST_READ|DEVICE_WRITE
 * near the CPU, HOST_WRITE|DEVICE_READ near the device). */
#define SCI_MEMACCESS_DEVICE_READ                  0x00000001U
#define SCI_MEMACCESS_DEVICE_WRITE                 0x00000002U
#define SCI_MEMACCESS_HOST_READ                    0x00000004U
#define SCI_MEMACCESS_HOST_WRITE                   0x00000008U
#define SCI_MEMACCESS_MULTIHOST_READ               (0x00000010U | SCI_MEMACCESS_HOST_READ)
#define SCI_MEMACCESS_MULTIHOST_WRITE              (0x00000010U | SCI_MEMACCESS_HOST_WRITE)
#define SCI_MEMACCESS_P2P_READ                     (0x00000020U | SCI_MEMACCESS_DEVICE_READ)
#define SCI_MEMACCESS_P2P_WRITE                    (0x00000020U | SCI_MEMACCESS_DEVICE_WRITE)

/* ======================================================================== */
/* SCIQuery commands and structures                                         */
/*                                                                          */
/* All SCI_Q_* values were chosen by smartio (not published); programs use */
/* the names.                                                               */
/* ======================================================================== */

/* Major commands: the `command` argument of SCIQuery. */
#define SCI_Q_VENDORID                             0x0001U /* data: sci_query_string_t */
#define SCI_Q_API                                  0x0002U /* data: sci_query_string_t */
#define SCI_Q_ADAPTER                              0x0003U /* data: sci_query_adapter_t */
#define SCI_Q_SYSTEM                               0x0004U /* data: sci_query_system_t */
#define SCI_Q_LOCAL_SEGMENT                        0x0005U /* data: sci_query_local_segment_t */
#define SCI_Q_REMOTE_SEGMENT                       0x0006U /* data: sci_query_remote_segment_t */
#define SCI_Q_MAP                                  0x0007U /* data: sci_query_map_t */
#define SCI_Q_DMA                                  0x0008U /* reserved (no DMA query structure yet) */
#define SCI_Q_DEVICE                               0x0009U /* data: sci_smartio_query_device_t */
#define SCI_Q_SISCI_DRIVER_VERSION                 0x000AU /* data: sci_query_string_t */

/* SCI_Q_ADAPTER subcommands; the answer is an unsigned int at data unless
 * noted. */
#define SCI_Q_ADAPTER_NODEID                       0x0100U /* node ID of the adapter */
#define SCI_Q_ADAPTER_SERIAL_NUMBER                0x0101U
#define SCI_Q_ADAPTER_CARD_TYPE                    0x0102U
#define SCI_Q_ADAPTER_CONFIGURED                   0x0103U /* 1 if the adapter exists and is set up */
#define SCI_Q_ADAPTER_LINK_OPERATIONAL             0x0104U /* 1 if the link is up */
#define SCI_Q_ADAPTER_DMA_MTU                      0x0105U /* largest single DMA transfer, bytes */
#define SCI_Q_ADAPTER_DMA_SIZE_ALIGNMENT           0x0106U
#define SCI_Q_ADAPTER_DMA_OFFSET_ALIGNMENT         0x0107U
#define SCI_Q_ADAPTER_SUGGESTED_MIN_DMA_SIZE       0x0108U
#define SCI_Q_ADAPTER_LINK_WIDTH                   0x0109U /* lanes */
#define SCI_Q_ADAPTER_LINK_SPEED                   0x010AU /* PCIe generation */
#define SCI_Q_ADAPTER_LINK_UPTIME                  0x010BU /* seconds */
#define SCI_Q_ADAPTER_NUMBER                       0x010CU

/* SCI_Q_SYSTEM subcommands. */
#define SCI_Q_SYSTEM_WRITE_POSTING_ENABLED         0x0200U
#define SCI_Q_SYSTEM_WRITE_COMBINING_ENABLED       0x0201U

/* SCI_Q_LOCAL_SEGMENT subcommands; answer in data.ioaddr. */
#define SCI_Q_LOCAL_SEGMENT_IOADDR                 0x0300U /* address of the segment through the NTB */
#define SCI_Q_LOCAL_SEGMENT_VIRTUAL_KERNEL_ADDR    0x0301U
#define SCI_Q_LOCAL_SEGMENT_PHYS_ADDR              0x0302U /* bus address of the memory in this host */

/* SCI_Q_REMOTE_SEGMENT subcommands; answer in data.ioaddr. */
#define SCI_Q_REMOTE_SEGMENT_IOADDR                0x0400U /* address of the segment as seen from this node (through the NTB window) */
/* smartio addition: in data.ioaddr a function of this host (bus << 8 | devfn);
 * out: the segment's address as that function reaches it. The window above
 * for this host's own functions; for a device borrowed with Device Lending,
 * where its lender reaches the segment (Device Lending's P2P rules). */
#define SCI_Q_REMOTE_SEGMENT_IOADDR_FOR_FUNC       0x0480U

/* SCI_Q_MAP subcommands; answer in data. */
#define SCI_Q_MAP_MAPPED_TO_LOCAL_TARGET           0x0500U /* 1 if the map reaches this host's memory */
#define SCI_Q_MAP_QUERY_REMOTE_MAPPED_TO_LOCAL_TARGET 0x0501U

/* SCI_Q_DEVICE subcommands. */
#define SCI_Q_DEVICE_INFO                          0x0600U /* data: sci_smartio_device_info_t * */

/* SCI_Q_VENDORID, SCI_Q_API: the library writes a NUL-terminated string of
 * at most length bytes to str. */
typedef struct {
    char         *str;
    unsigned int  length;
} sci_query_string_t;

/* SCI_Q_ADAPTER: ask about local adapter localAdapterNo (and link portNo). */
typedef struct {
    unsigned int  localAdapterNo;
    unsigned int  portNo;
    unsigned int  subcommand;   /* SCI_Q_ADAPTER_* */
    void         *data;         /* where the answer is written */
} sci_query_adapter_t;

/* SCI_Q_SYSTEM: system-wide properties. */
typedef struct {
    unsigned int  subcommand;   /* SCI_Q_SYSTEM_* */
    void         *data;
} sci_query_system_t;

/* SCI_Q_LOCAL_SEGMENT: addresses of a local segment. */
typedef struct {
    sci_local_segment_t segment;
    unsigned int        subcommand; /* SCI_Q_LOCAL_SEGMENT_* */
    union {
        sci_ioaddr_t    ioaddr;
    } data;
} sci_query_local_segment_t;

/* SCI_Q_REMOTE_SEGMENT: addresses of a connected remote segment. */
typedef struct {
    sci_remote_segment_t segment;
    unsigned int         subcommand; /* SCI_Q_REMOTE_SEGMENT_* */
    union {
        sci_ioaddr_t     ioaddr;
    } data;
} sci_query_remote_segment_t;

/* SCI_Q_MAP: properties of a map. */
typedef struct {
    sci_map_t     map;
    unsigned int  subcommand;   /* SCI_Q_MAP_* */
    unsigned int  data;
} sci_query_map_t;

/* SCI_Q_DEVICE: information about the SmartIO device with ID fdid. */
typedef struct {
    unsigned int  fdid;
    unsigned int  subcommand;   /* SCI_Q_DEVICE_* */
    void         *data;         /* SCI_Q_DEVICE_INFO: sci_smartio_device_info_t * */
} sci_smartio_query_device_t;

/* ======================================================================== */
/* Library and descriptors                                                  */
/* ======================================================================== */

/* Initialise the library; call once before anything else. flags: 0. */
SISCI_API_EXPORT void SCIInitialize(unsigned int flags, sci_error_t *error);

/* Release everything the library holds; call last, after SCIClose. */
SISCI_API_EXPORT void SCITerminate(void);

/* Open a virtual device: *sd receives the descriptor all other objects are
 * created through. flags: 0 or SCI_FLAG_THREAD_SAFE. */
SISCI_API_EXPORT void SCIOpen(sci_desc_t *sd, unsigned int flags, sci_error_t *error);

/* Close descriptor sd. Fails with SCI_ERR_BUSY while objects created
 * through it still exist. flags: 0. */
SISCI_API_EXPORT void SCIClose(sci_desc_t sd, unsigned int flags, sci_error_t *error);

/* Text describing error code `error` (static storage, never NULL). */
SISCI_API_EXPORT const char *SCIGetErrorString(sci_error_t error);

/* Node ID of local adapter adapterNo, written to *nodeId. flags: 0. */
SISCI_API_EXPORT void SCIGetLocalNodeId(unsigned int adapterNo, unsigned int *nodeId,
                                        unsigned int flags, sci_error_t *error);

/* Generic information query. command: SCI_Q_*; data: the structure the
 * command names, with subcommand and inputs filled in. flags: 0.
 * Unknown commands: SCI_ERR_ILLEGAL_QUERY. */
SISCI_API_EXPORT void SCIQuery(unsigned int command, void *data, unsigned int flags,
                               sci_error_t *error);

/* Check whether node nodeId is reachable through local adapter
 * localAdapterNo. Returns nonzero if it is; *error tells why not. */
SISCI_API_EXPORT int SCIProbeNode(sci_desc_t sd, unsigned int localAdapterNo,
                                  unsigned int nodeId, unsigned int flags,
                                  sci_error_t *error);

/* ======================================================================== */
/* Local segments                                                           */
/* ======================================================================== */

/* Create a local segment of `size` bytes with ID segmentId (unique on this
 * node) and store its handle in *segment. callback/callbackArg receive
 * connect/disconnect events when SCI_FLAG_USE_CALLBACK is given.
 * flags: SCI_FLAG_USE_CALLBACK, SCI_FLAG_EMPTY (no memory; supply it with
 * SCIRegisterSegmentMemory or SCIAttachPhysicalMemory), SCI_FLAG_PRIVATE,
 * SCI_FLAG_AUTO_ID (ignore segmentId and pick a free one; read it back with
 * SCIGetLocalSegmentId). Errors: SCI_ERR_SEGMENTID_USED,
 * SCI_ERR_SIZE_ALIGNMENT, SCI_ERR_NOSPC. */
SISCI_API_EXPORT void SCICreateSegment(sci_desc_t sd, sci_local_segment_t *segment,
                                       unsigned int segmentId, size_t size,
                                       sci_cb_local_segment_t callback, void *callbackArg,
                                       unsigned int flags, sci_error_t *error);

/* Use the program's own memory [address, address+size) as the memory of an
 * empty segment (created with SCI_FLAG_EMPTY).
 * flags: 0, SCI_FLAG_LOCK_USER_MEM, SCI_FLAG_CUDA_BUFFER. */
SISCI_API_EXPORT void SCIRegisterSegmentMemory(void *address, size_t size,
                                               sci_local_segment_t segment,
                                               unsigned int flags, sci_error_t *error);

/* Back an empty segment with physical memory already known by its bus
 * address ioaddress (e.g. a device BAR); address is its mapping in this
 * process or NULL; busNo: the I/O bus it sits on (0 on single-segment
 * systems). flags: 0 or SCI_FLAG_PHYSICAL. */
SISCI_API_EXPORT void SCIAttachPhysicalMemory(sci_ioaddr_t ioaddress, void *address,
                                              unsigned int busNo, size_t size,
                                              sci_local_segment_t segment,
                                              unsigned int flags, sci_error_t *error);

/* Make the segment usable through local adapter localAdapterNo (required
 * before it is made available or used for DMA on that adapter).
 * flags: 0 or SCI_FLAG_DMA_SOURCE_ONLY. */
SISCI_API_EXPORT void SCIPrepareSegment(sci_local_segment_t segment, unsigned int localAdapterNo,
                                        unsigned int flags, sci_error_t *error);

/* Allow remote programs to connect to the segment through localAdapterNo.
 * Errors: SCI_ERR_SEGMENT_NOT_PREPARED, SCI_ERR_ILLEGAL_OPERATION (private
 * segment). flags: 0. */
SISCI_API_EXPORT void SCISetSegmentAvailable(sci_local_segment_t segment,
                                             unsigned int localAdapterNo,
                                             unsigned int flags, sci_error_t *error);

/* Refuse new connections through localAdapterNo; existing connections stay
 * unless SCI_FLAG_FORCE_DISCONNECT is given (SCI_FLAG_NOTIFY tells them). */
SISCI_API_EXPORT void SCISetSegmentUnavailable(sci_local_segment_t segment,
                                               unsigned int localAdapterNo,
                                               unsigned int flags, sci_error_t *error);

/* Destroy the segment. Fails with SCI_ERR_BUSY while it is mapped or
 * remote programs are connected (unless SCI_FLAG_FORCE_REMOVE). */
SISCI_API_EXPORT void SCIRemoveSegment(sci_local_segment_t segment, unsigned int flags,
                                       sci_error_t *error);

/* The segment's ID (the chosen one when created with SCI_FLAG_AUTO_ID). */
SISCI_API_EXPORT unsigned int SCIGetLocalSegmentId(sci_local_segment_t segment);

/* The segment's size in bytes. */
SISCI_API_EXPORT size_t SCIGetLocalSegmentSize(sci_local_segment_t segment);

/* ======================================================================== */
/* Remote segments                                                          */
/* ======================================================================== */

/* Connect to segment segmentId on node nodeId through local adapter
 * localAdapterNo; *segment receives the handle. Waits up to timeout ms for
 * the segment to become available. callback/callbackArg: events on the
 * connection (SCI_FLAG_USE_CALLBACK). flags: 0, SCI_FLAG_USE_CALLBACK,
 * SCI_FLAG_ASYNCHRONOUS_CONNECT. Errors: SCI_ERR_NO_SUCH_SEGMENT,
 * SCI_ERR_CONNECTION_REFUSED, SCI_ERR_TIMEOUT, SCI_ERR_NO_SUCH_NODEID,
 * SCI_ERR_NODE_NOT_RESPONDING, SCI_ERR_NO_LINK_ACCESS. */
SISCI_API_EXPORT void SCIConnectSegment(sci_desc_t sd, sci_remote_segment_t *segment,
                                        unsigned int nodeId, unsigned int segmentId,
                                        unsigned int localAdapterNo,
                                        sci_cb_remote_segment_t callback, void *callbackArg,
                                        unsigned int timeout, unsigned int flags,
                                        sci_error_t *error);

/* Drop the connection. Fails with SCI_ERR_BUSY while still mapped. */
SISCI_API_EXPORT void SCIDisconnectSegment(sci_remote_segment_t segment, unsigned int flags,
                                           sci_error_t *error);

/* Size in bytes of a connected segment. */
SISCI_API_EXPORT size_t SCIGetRemoteSegmentSize(sci_remote_segment_t segment);

/* Segment ID of a connected segment. */
SISCI_API_EXPORT unsigned int SCIGetRemoteSegmentId(sci_remote_segment_t segment);

/* Node ID of the host that holds a connected segment. */
SISCI_API_EXPORT unsigned int SCIGetRemoteSegmentNodeId(sci_remote_segment_t segment);

/* ======================================================================== */
/* Mapping and CPU access                                                   */
/* ======================================================================== */

/* Map `size` bytes at `offset` of a local segment into this process;
 * *map receives the map handle, the return value is the address (NULL on
 * error). addr: wanted address with SCI_FLAG_FIXED_MAP_ADDR, else NULL.
 * flags: 0, SCI_FLAG_FIXED_MAP_ADDR, SCI_FLAG_READONLY_MAP.
 * Errors: SCI_ERR_OUT_OF_RANGE, SCI_ERR_SIZE_ALIGNMENT, SCI_ERR_OFFSET_ALIGNMENT. */
SISCI_API_EXPORT void *SCIMapLocalSegment(sci_local_segment_t segment, sci_map_t *map,
                                          size_t offset, size_t size, void *addr,
                                          unsigned int flags, sci_error_t *error);

/* Map `size` bytes at `offset` of a connected remote segment into this
 * process: loads and stores go straight to the remote memory. Returns the
 * address (NULL on error); *map receives the handle. flags: 0,
 * SCI_FLAG_FIXED_MAP_ADDR, SCI_FLAG_READONLY_MAP, SCI_FLAG_IO_MAP_IOSPACE
 * (device registers), SCI_FLAG_LOCK_OPERATION, SCI_FLAG_WRITE_BACK_CACHE_MAP,
 * SCI_FLAG_NO_MEMORY_LOOPBACK. Errors as for SCIMapLocalSegment. */
SISCI_API_EXPORT volatile void *SCIMapRemoteSegment(sci_remote_segment_t segment,
                                                    sci_map_t *map, size_t offset,
                                                    size_t size, void *addr,
                                                    unsigned int flags, sci_error_t *error);

/* Remove a mapping made by SCIMapLocalSegment/SCIMapRemoteSegment.
 * SCI_ERR_BUSY while a sequence still uses it. flags: 0. */
SISCI_API_EXPORT void SCIUnmapSegment(sci_map_t map, unsigned int flags, sci_error_t *error);

/* Address at which `map` is mapped in this process. */
SISCI_API_EXPORT volatile void *SCIGetMapPointer(sci_map_t map);

/* Create a sequence for accesses through `map` (*sequence receives it).
 * flags: 0 or SCI_FLAG_FAST_BARRIER. */
SISCI_API_EXPORT void SCICreateMapSequence(sci_map_t map, sci_sequence_t *sequence,
                                           unsigned int flags, sci_error_t *error);

/* Destroy a sequence. flags: 0. */
SISCI_API_EXPORT void SCIRemoveSequence(sci_sequence_t sequence, unsigned int flags,
                                        sci_error_t *error);

/* Begin a span of accesses through the sequence's map whose errors
 * SCICheckSequence reports. flags: 0. Returns SCI_SEQ_OK, or
 * SCI_SEQ_NOT_RETRIABLE when the path to the memory does not work now
 * (*error: SCI_ERR_NO_LINK_ACCESS while a link is down, SCI_ERR_CONNECTION_REFUSED
 * once the connection is lost). */
SISCI_API_EXPORT sci_sequence_status_t SCIStartSequence(sci_sequence_t sequence,
                                                        unsigned int flags,
                                                        sci_error_t *error);

/* Did the accesses since SCIStartSequence reach their destination?
 * flags: SCI_FLAG_NO_FLUSH, SCI_FLAG_NO_STORE_BARRIER. SCI_SEQ_OK: yes;
 * SCI_SEQ_RETRIABLE: the path failed meanwhile and works again (repeat them
 * after SCIStartSequence); SCI_SEQ_NOT_RETRIABLE: it does not work now
 * (errors as SCIStartSequence). */
SISCI_API_EXPORT sci_sequence_status_t SCICheckSequence(sci_sequence_t sequence,
                                                        unsigned int flags,
                                                        sci_error_t *error);

/* Wait until all stores issued through the sequence's map have reached
 * their destination. flags: 0. */
SISCI_API_EXPORT void SCIStoreBarrier(sci_sequence_t sequence, unsigned int flags);

/* Drain the CPU's write-combining buffers so that earlier stores are sent.
 * sequence may be NULL (all maps). flags: 0. */
SISCI_API_EXPORT void SCIFlush(sci_sequence_t sequence, unsigned int flags);

/* Cache maintenance on [addr, addr+length) of a mapped segment (map may be
 * NULL). flags: SCI_FLAG_CACHE_FLUSH and/or SCI_FLAG_CACHE_INVALIDATE. */
SISCI_API_EXPORT void SCICacheSync(sci_map_t map, void *addr, size_t length,
                                   unsigned int flags, sci_error_t *error);

/* Copy `size` bytes from memAddr to remoteOffset in remoteMap using CPU
 * stores (remote -> memAddr with SCI_FLAG_BLOCK_READ). sequence may be NULL.
 * flags: 0, SCI_FLAG_BLOCK_READ, SCI_FLAG_ERROR_CHECK.
 * Errors: SCI_ERR_OUT_OF_RANGE, SCI_ERR_TRANSFER_FAILED. */
SISCI_API_EXPORT void SCIMemCpy(sci_sequence_t sequence, void *memAddr, sci_map_t remoteMap,
                                size_t remoteOffset, size_t size, unsigned int flags,
                                sci_error_t *error);

/* ======================================================================== */
/* DMA                                                                      */
/* ======================================================================== */

/* Create a DMA queue on local adapter localAdapterNo with room for
 * maxEntries transfers; *dq receives it. flags: 0. */
SISCI_API_EXPORT void SCICreateDMAQueue(sci_desc_t sd, sci_dma_queue_t *dq,
                                        unsigned int localAdapterNo, unsigned int maxEntries,
                                        unsigned int flags, sci_error_t *error);

/* Start one transfer of `size` bytes between localOffset in localSegment
 * and remoteOffset in remoteSegment (local -> remote; remote -> local with
 * SCI_FLAG_DMA_READ). With SCI_FLAG_USE_CALLBACK, callback(callbackArg, ...)
 * runs on completion; with SCI_FLAG_DMA_WAIT the call returns when done.
 * flags also: SCI_FLAG_DMA_GLOBAL, SCI_FLAG_DMA_SYSDMA.
 * Errors: SCI_ERR_OUT_OF_RANGE, SCI_ERR_SEGMENT_NOT_PREPARED,
 * SCI_ERR_SEGMENT_NOT_CONNECTED, SCI_ERR_BUSY (queue in use). */
SISCI_API_EXPORT void SCIStartDmaTransfer(sci_dma_queue_t dq, sci_local_segment_t localSegment,
                                          sci_remote_segment_t remoteSegment,
                                          size_t localOffset, size_t size, size_t remoteOffset,
                                          sci_cb_dma_t callback, void *callbackArg,
                                          unsigned int flags, sci_error_t *error);

/* Like SCIStartDmaTransfer for vecLength elements of disDmaVec (at most
 * DIS_DMA_MAX_VECLEN), executed in order as one queue submission. */
SISCI_API_EXPORT void SCIStartDmaTransferVec(sci_dma_queue_t dq, sci_local_segment_t localSegment,
                                             sci_remote_segment_t remoteSegment,
                                             size_t vecLength, dis_dma_vec_t *disDmaVec,
                                             sci_cb_dma_t callback, void *callbackArg,
                                             unsigned int flags, sci_error_t *error);

/* Block until the queue's transfers end or timeout ms pass; returns the
 * final queue state. Errors: SCI_ERR_TIMEOUT, SCI_ERR_ILLEGAL_OPERATION. */
SISCI_API_EXPORT sci_dma_queue_state_t SCIWaitForDMAQueue(sci_dma_queue_t dq,
                                                          unsigned int timeout,
                                                          unsigned int flags,
                                                          sci_error_t *error);

/* Current state of the queue (does not block). */
SISCI_API_EXPORT sci_dma_queue_state_t SCIDMAQueueState(sci_dma_queue_t dq);

/* Abort the queue's posted transfers: the queue ends in SCI_DMAQUEUE_ABORTED
 * (waiters and the callback get it, with SCI_ERR_CANCELLED) and takes new
 * transfers afterwards. Flags: none (SCI_ERR_ILLEGAL_FLAG). */
SISCI_API_EXPORT void SCIAbortDMAQueue(sci_dma_queue_t dq, unsigned int flags,
                                       sci_error_t *error);

/* Destroy the queue; SCI_ERR_BUSY while transfers run. */
SISCI_API_EXPORT void SCIRemoveDMAQueue(sci_dma_queue_t dq, unsigned int flags,
                                        sci_error_t *error);

/* ======================================================================== */
/* Interrupts                                                               */
/* ======================================================================== */

/* Create an interrupt others can trigger through adapter localAdapterNo.
 * *interruptNo receives its number (or supplies it with
 * SCI_FLAG_FIXED_INTNO). With SCI_FLAG_USE_CALLBACK, callback runs on each
 * trigger; otherwise wait with SCIWaitForInterrupt.
 * flags: 0, SCI_FLAG_USE_CALLBACK, SCI_FLAG_FIXED_INTNO, SCI_FLAG_SHARED_INT.
 * Errors: SCI_ERR_INTNO_USED. */
SISCI_API_EXPORT void SCICreateInterrupt(sci_desc_t sd, sci_local_interrupt_t *interrupt,
                                         unsigned int localAdapterNo, unsigned int *interruptNo,
                                         sci_cb_interrupt_t callback, void *callbackArg,
                                         unsigned int flags, sci_error_t *error);

/* Connect to interrupt interruptNo on node nodeId (through localAdapterNo),
 * waiting up to timeout ms. Errors: SCI_ERR_NO_SUCH_INTNO,
 * SCI_ERR_CONNECTION_REFUSED, SCI_ERR_TIMEOUT. flags: 0. */
SISCI_API_EXPORT void SCIConnectInterrupt(sci_desc_t sd, sci_remote_interrupt_t *interrupt,
                                          unsigned int nodeId, unsigned int localAdapterNo,
                                          unsigned int interruptNo, unsigned int timeout,
                                          unsigned int flags, sci_error_t *error);

/* Raise the remote interrupt. flags: 0. */
SISCI_API_EXPORT void SCITriggerInterrupt(sci_remote_interrupt_t interrupt, unsigned int flags,
                                          sci_error_t *error);

/* Block until the local interrupt is triggered or timeout ms pass.
 * Errors: SCI_ERR_TIMEOUT, SCI_ERR_CANCELLED (interrupt removed meanwhile). */
SISCI_API_EXPORT void SCIWaitForInterrupt(sci_local_interrupt_t interrupt, unsigned int timeout,
                                          unsigned int flags, sci_error_t *error);

/* Destroy a local interrupt. flags: 0. */
SISCI_API_EXPORT void SCIRemoveInterrupt(sci_local_interrupt_t interrupt, unsigned int flags,
                                         sci_error_t *error);

/* Drop a connection to a remote interrupt. flags: 0. */
SISCI_API_EXPORT void SCIDisconnectInterrupt(sci_remote_interrupt_t interrupt,
                                             unsigned int flags, sci_error_t *error);

/* As SCICreateInterrupt, for an interrupt that carries a message; the
 * callback receives the message bytes. */
SISCI_API_EXPORT void SCICreateDataInterrupt(sci_desc_t sd, sci_local_data_interrupt_t *interrupt,
                                             unsigned int localAdapterNo,
                                             unsigned int *interruptNo,
                                             sci_cb_data_interrupt_t callback, void *callbackArg,
                                             unsigned int flags, sci_error_t *error);

/* As SCIConnectInterrupt, for a data interrupt. */
SISCI_API_EXPORT void SCIConnectDataInterrupt(sci_desc_t sd,
                                              sci_remote_data_interrupt_t *interrupt,
                                              unsigned int nodeId, unsigned int localAdapterNo,
                                              unsigned int interruptNo, unsigned int timeout,
                                              unsigned int flags, sci_error_t *error);

/* Raise the remote data interrupt, delivering `length` bytes from data.
 * Errors: SCI_ERR_OUT_OF_RANGE (message too long). flags: 0. */
SISCI_API_EXPORT void SCITriggerDataInterrupt(sci_remote_data_interrupt_t interrupt, void *data,
                                              unsigned int length, unsigned int flags,
                                              sci_error_t *error);

/* Block until a message arrives or timeout ms pass. On entry *length is
 * the size of the buffer at data; on return it holds the message length.
 * Errors: SCI_ERR_TIMEOUT, SCI_ERR_CANCELLED, SCI_ERR_OUT_OF_RANGE. */
SISCI_API_EXPORT void SCIWaitForDataInterrupt(sci_local_data_interrupt_t interrupt, void *data,
                                              unsigned int *length, unsigned int timeout,
                                              unsigned int flags, sci_error_t *error);

/* Destroy a local data interrupt. flags: 0. */
SISCI_API_EXPORT void SCIRemoveDataInterrupt(sci_local_data_interrupt_t interrupt,
                                             unsigned int flags, sci_error_t *error);

/* Drop a connection to a remote data interrupt. flags: 0. */
SISCI_API_EXPORT void SCIDisconnectDataInterrupt(sci_remote_data_interrupt_t interrupt,
                                                 unsigned int flags, sci_error_t *error);

/* ======================================================================== */
/* SmartIO device extension                                                 */
/* ======================================================================== */

/* Take a reference to (borrow) the device with fabric device ID fdid; the
 * handle goes to *device. flags: 0 (shared: several borrowers) or
 * SCI_FLAG_EXCLUSIVE. Errors: SCI_ERR_NO_SUCH_FDID, SCI_ERR_NOT_AVAILABLE
 * (someone holds it exclusively, or shared borrowers exist and exclusive
 * was asked). */
SISCI_API_EXPORT void SCIBorrowDevice(sci_desc_t sd, sci_smartio_device_t *device,
                                      unsigned int fdid, unsigned int flags, sci_error_t *error);

/* Give the device reference back; fails with SCI_ERR_BUSY while device
 * segments or device mappings of this borrower still exist. flags: 0. */
SISCI_API_EXPORT void SCIReturnDevice(sci_smartio_device_t device, unsigned int flags,
                                      sci_error_t *error);

/* Turn an exclusive borrow into a shared one so others may borrow the
 * device too. flags: 0. */
SISCI_API_EXPORT void SCIReleaseExclusiveBorrow(sci_smartio_device_t device, unsigned int flags,
                                                sci_error_t *error);

/* Write up to `length` fabric device IDs of devices matching `filter` into
 * fdids and return how many were written. filter: fields left zero match
 * anything; NULL matches all devices. flags: 0. */
SISCI_API_EXPORT unsigned int SCIGetDeviceList(sci_desc_t sd, unsigned int *fdids,
                                               unsigned int length,
                                               const sci_smartio_device_info_t *filter,
                                               unsigned int flags, sci_error_t *error);

/* Fabric device ID of a borrowed device. */
SISCI_API_EXPORT unsigned int SCIGetFabricDeviceId(sci_smartio_device_t device);

/* Connect to memory belonging to a borrowed device as a remote segment
 * (map it with SCIMapRemoteSegment). memtype SCI_MEMTYPE_BAR: segmentId is
 * the BAR number; SCI_MEMTYPE_PRIVATE / SCI_MEMTYPE_SHARED: segmentId names
 * a segment made with SCICreateDeviceSegment. callback/callbackArg: events
 * (may be NULL). flags: 0. Errors: SCI_ERR_NO_SUCH_SEGMENT. */
SISCI_API_EXPORT void SCIConnectDeviceSegment(sci_smartio_device_t device,
                                              sci_remote_segment_t *segment,
                                              unsigned int segmentId, unsigned int memtype,
                                              sci_cb_remote_segment_t callback,
                                              void *callbackArg, unsigned int flags,
                                              sci_error_t *error);

/* SCIConnectDeviceSegment through local adapter localAdapterNo: the
 * borrower's mappings of the segment use that adapter's window, and device
 * mappings of it (SCIMapRemoteSegmentForDevice) go through the lender's NTB
 * on the same fabric. Errors as SCIConnectDeviceSegment, and
 * SCI_ERR_NO_SUCH_ADAPTERNO. (The signature is smartio's reading of the
 * name; Dolphin does not publish it.) */
SISCI_API_EXPORT void SCIConnectDeviceSegmentPath(sci_smartio_device_t device,
                                                  sci_remote_segment_t *segment,
                                                  unsigned int segmentId,
                                                  unsigned int memtype,
                                                  unsigned int localAdapterNo,
                                                  sci_cb_remote_segment_t callback,
                                                  void *callbackArg, unsigned int flags,
                                                  sci_error_t *error);

/* Allocate `size` bytes of memory for a borrowed device, identified by
 * segmentId among that device's segments. memtype: SCI_MEMTYPE_PRIVATE
 * (this borrower only) or SCI_MEMTYPE_SHARED (all borrowers). accessHints:
 * SCI_MEMACCESS_* bits saying who reads/writes it; the library places the
 * memory accordingly (host RAM near the CPU, the lender's RAM, or a peer
 * device's memory). flags: 0. Errors: SCI_ERR_SEGMENTID_USED, SCI_ERR_NOSPC. */
SISCI_API_EXPORT void SCICreateDeviceSegment(sci_smartio_device_t device, unsigned int segmentId,
                                             size_t size, unsigned int memtype,
                                             unsigned int accessHints, unsigned int flags,
                                             sci_error_t *error);

/* Make `size` bytes at `offset` of a local segment (prepared on
 * localAdapterNo) reachable by the device's DMA; *remoteAddr receives the
 * address the device must use. flags: 0. Errors: SCI_ERR_OUT_OF_RANGE,
 * SCI_ERR_HW_NOSPC (no free NTB/IOMMU window). */
SISCI_API_EXPORT void SCIMapLocalSegmentForDevice(sci_local_segment_t segment,
                                                  unsigned int localAdapterNo,
                                                  sci_smartio_device_t device,
                                                  sci_ioaddr_t *remoteAddr, size_t offset,
                                                  size_t size, unsigned int flags,
                                                  sci_error_t *error);

/* Undo SCIMapLocalSegmentForDevice. flags: 0. */
SISCI_API_EXPORT void SCIUnmapLocalSegmentForDevice(sci_local_segment_t segment,
                                                    unsigned int localAdapterNo,
                                                    sci_smartio_device_t device,
                                                    unsigned int flags, sci_error_t *error);

/* Make `size` bytes at `offset` of a connected remote segment (another
 * host's memory, a device segment, another device's BAR) reachable by the
 * device's DMA; *remoteAddr receives the address as seen by the device.
 * flags: 0. */
SISCI_API_EXPORT void SCIMapRemoteSegmentForDevice(sci_remote_segment_t segment,
                                                   sci_smartio_device_t device,
                                                   sci_ioaddr_t *remoteAddr, size_t offset,
                                                   size_t size, unsigned int flags,
                                                   sci_error_t *error);

/* Undo SCIMapRemoteSegmentForDevice. flags: 0. */
SISCI_API_EXPORT void SCIUnmapRemoteSegmentForDevice(sci_remote_segment_t segment,
                                                     sci_smartio_device_t device,
                                                     unsigned int flags, sci_error_t *error);

/* Declare that the PCIe function bus:devfn behind local adapter
 * localAdapterNo will issue DMA through the NTB, so mappings made for
 * devices also accept its requests. flags: 0 or
 * SCI_FLAG_PCIE_REQUESTER_GLOBAL. */
SISCI_API_EXPORT void SCIRegisterPCIeRequester(sci_desc_t sd, unsigned int localAdapterNo,
                                               unsigned int bus, unsigned int devfn,
                                               unsigned int flags, sci_error_t *error);

/* Undo SCIRegisterPCIeRequester (same arguments). */
SISCI_API_EXPORT void SCIUnregisterPCIeRequester(sci_desc_t sd, unsigned int localAdapterNo,
                                                 unsigned int bus, unsigned int devfn,
                                                 unsigned int flags, sci_error_t *error);

#ifdef __cplusplus
}
#endif

#endif /* SISCI_API_H */
