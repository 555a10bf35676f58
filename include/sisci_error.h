/*
 * sisci_error.h - error codes of the SISCI API (smartio implementation).
 *
 * Source-compatible with Dolphin's SISCI API: every SISCI function reports
 * its outcome through a sci_error_t, and programs compare it against the
 * SCI_ERR_* names below. SCI_ERR_OK is zero; every failure code has bit 30
 * set (SCI_ERR_MASK).
 *
 * Where the numbers come from:
 *   - SCI_ERR_OK .. SCI_ERR_ACCESS and SCI_ERR_NO_SUCH_NODEID ..
 *     SCI_ERR_TRANSFER_FAILED use the values Dolphin published in its
 *     (GPL/LGPL-licensed) SISCI release headers; SCI_ERR_REMOTE_BUSY = 0xB00
 *     and SCI_ERR_NO_SUCH_INTNO == SCI_ERR_NO_SUCH_SEGMENT are also visible
 *     in public programs written against the current SISCI release.
 *   - The codes added in later SISCI releases (marked "chosen" below) have
 *     no published number: the values were chosen by smartio; programs use
 *     the names, never the numbers.
 *
 * This header contains no smartio internals and may be installed as is.
 */
#ifndef SISCI_ERROR_H
#define SISCI_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Bit set in every failure code. SISCI_ERR_MASK is the newer spelling. */
#define SCI_ERR_MASK        0x40000000
#define SISCI_ERR_MASK      SCI_ERR_MASK
/* Remote-side errors additionally have bit 0 of this mask set. */
#define SCI_ERR_REMOTE_MASK 0x01

typedef enum {
    SCI_ERR_OK                       = 0x000,

    /* --- general errors (published values) --- */
    SCI_ERR_BUSY                     = (0x900 | SCI_ERR_MASK), /* resource in use, retry later */
    SCI_ERR_FLAG_NOT_IMPLEMENTED     = (0x901 | SCI_ERR_MASK), /* flag is legal but not supported */
    SCI_ERR_ILLEGAL_FLAG             = (0x902 | SCI_ERR_MASK), /* flag not valid for this call */
    SCI_ERR_NOSPC                    = (0x904 | SCI_ERR_MASK), /* out of operating-system resources */
    SCI_ERR_API_NOSPC                = (0x905 | SCI_ERR_MASK), /* out of library resources */
    SCI_ERR_HW_NOSPC                 = (0x906 | SCI_ERR_MASK), /* out of hardware resources (e.g. NTB LUT entries) */
    SCI_ERR_NOT_IMPLEMENTED          = (0x907 | SCI_ERR_MASK), /* function not implemented */
    SCI_ERR_ILLEGAL_ADAPTERNO        = (0x908 | SCI_ERR_MASK), /* adapter number outside the legal range */
    SCI_ERR_NO_SUCH_ADAPTERNO        = (0x909 | SCI_ERR_MASK), /* legal adapter number, no such adapter */
    SCI_ERR_TIMEOUT                  = (0x90A | SCI_ERR_MASK), /* the operation timed out */
    SCI_ERR_OUT_OF_RANGE             = (0x90B | SCI_ERR_MASK), /* offset/size beyond the object */
    SCI_ERR_NO_SUCH_SEGMENT          = (0x90C | SCI_ERR_MASK), /* no segment with that ID on that node */
    SCI_ERR_NO_SUCH_INTNO            = SCI_ERR_NO_SUCH_SEGMENT,  /* no interrupt with that number (same code) */
    SCI_ERR_ILLEGAL_NODEID           = (0x90D | SCI_ERR_MASK), /* node ID not valid */
    SCI_ERR_CONNECTION_REFUSED       = (0x90E | SCI_ERR_MASK), /* the remote side refused the connection */
    SCI_ERR_SEGMENT_NOT_CONNECTED    = (0x90F | SCI_ERR_MASK), /* segment not connected (through this adapter) */
    SCI_ERR_SIZE_ALIGNMENT           = (0x910 | SCI_ERR_MASK), /* size not aligned as required */
    SCI_ERR_OFFSET_ALIGNMENT         = (0x911 | SCI_ERR_MASK), /* offset not aligned as required */
    SCI_ERR_ILLEGAL_PARAMETER        = (0x912 | SCI_ERR_MASK), /* a parameter is invalid */
    SCI_ERR_MAX_ENTRIES              = (0x913 | SCI_ERR_MASK), /* queue or table full */
    SCI_ERR_SEGMENT_NOT_PREPARED     = (0x914 | SCI_ERR_MASK), /* segment not prepared on this adapter */
    SCI_ERR_ILLEGAL_ADDRESS          = (0x915 | SCI_ERR_MASK), /* address not valid */
    SCI_ERR_ILLEGAL_OPERATION        = (0x916 | SCI_ERR_MASK), /* operation not allowed in this state */
    SCI_ERR_ILLEGAL_QUERY            = (0x917 | SCI_ERR_MASK), /* SCIQuery command not recognised */
    SCI_ERR_SEGMENTID_USED           = (0x918 | SCI_ERR_MASK), /* segment ID already in use */
    SCI_ERR_INTNO_USED               = SCI_ERR_SEGMENTID_USED,   /* interrupt number already in use (chosen: same code) */
    SCI_ERR_SYSTEM                   = (0x919 | SCI_ERR_MASK), /* operating-system error, see errno */
    SCI_ERR_CANCELLED                = (0x91A | SCI_ERR_MASK), /* wait cancelled because the handle was removed */
    SCI_ERR_NOT_CONNECTED            = (0x91B | SCI_ERR_MASK), /* no connection to the remote host */
    SCI_ERR_NOT_AVAILABLE            = (0x91C | SCI_ERR_MASK), /* object exists but is not available (e.g. borrowed exclusively) */
    SCI_ERR_INCONSISTENT_VERSIONS    = (0x91D | SCI_ERR_MASK), /* library and driver/daemon versions differ */
    SCI_ERR_COND_INT_RACE_PROBLEM    = (0x91E | SCI_ERR_MASK), /* conditional-interrupt enable raced a trigger */
    SCI_ERR_OVERFLOW                 = (0x91F | SCI_ERR_MASK), /* counter overflowed */
    SCI_ERR_NOT_INITIALIZED          = (0x920 | SCI_ERR_MASK), /* SCIInitialize not called / host not configured */
    SCI_ERR_ACCESS                   = (0x921 | SCI_ERR_MASK), /* no permission for this access */

    /* --- later SISCI additions (values chosen by smartio) --- */
    SCI_ERR_NOT_SUPPORTED            = (0x922 | SCI_ERR_MASK), /* chosen: request not supported */
    SCI_ERR_DEPRECATED               = (0x923 | SCI_ERR_MASK), /* chosen: functionality deprecated */
    SCI_ERR_DMA_NOT_AVAILABLE        = (0x924 | SCI_ERR_MASK), /* chosen: requested DMA mode not available */
    SCI_ERR_DMA_DISABLED             = (0x925 | SCI_ERR_MASK), /* chosen: requested DMA mode disabled */

    /* --- node / link errors (published values) --- */
    SCI_ERR_NO_SUCH_NODEID           = (0xA00 | SCI_ERR_MASK), /* no node with that ID answers */
    SCI_ERR_NODE_NOT_RESPONDING      = (0xA02 | SCI_ERR_MASK), /* the node does not respond to the request */
    SCI_ERR_NO_REMOTE_LINK_ACCESS    = (0xA04 | SCI_ERR_MASK), /* a remote link is not operational */
    SCI_ERR_NO_LINK_ACCESS           = (0xA05 | SCI_ERR_MASK), /* the local link is not operational */
    SCI_ERR_TRANSFER_FAILED          = (0xA06 | SCI_ERR_MASK), /* a data transfer failed */

    /* --- later SISCI additions (values chosen by smartio, except REMOTE_BUSY) --- */
    SCI_ERR_SEMAPHORE_COUNT_EXCEEDED = (0xA07 | SCI_ERR_MASK), /* chosen: semaphore counter exceeded */
    SCI_ERR_IRQL_ILLEGAL             = (0xA08 | SCI_ERR_MASK), /* chosen: illegal interrupt level */
    SCI_ERR_REMOTE_BUSY              = (0xB00 | SCI_ERR_MASK), /* the remote host is busy */
    SCI_ERR_LOCAL_BUSY               = (0xB01 | SCI_ERR_MASK), /* chosen: the local host is busy */
    SCI_ERR_ALL_BUSY                 = (0xB02 | SCI_ERR_MASK), /* chosen: the whole system is busy */

    /* --- SmartIO extension (value chosen by smartio) --- */
    SCI_ERR_NO_SUCH_FDID             = (0xC00 | SCI_ERR_MASK)  /* chosen: no device with that fabric device ID */
} sci_error_t;

#ifdef __cplusplus
}
#endif

#endif /* SISCI_ERROR_H */
