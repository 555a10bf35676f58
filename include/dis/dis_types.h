/*
 * dis/dis_types.h - limits and basic types of Dolphin's DIS software, which
 * SISCI programs include beside <sisci_api.h> (smartio implementation).
 *
 * Dolphin's installation has this header next to the SISCI headers, and
 * SmartIO programs include it for the adapter limit, e.g.
 *     uint32_t adapters[DIS_MAX_NSCIS];
 * Only the names such programs use are here. Dolphin does not publish the
 * values; each is marked "chosen" (chosen by smartio). Self-contained, and
 * valid C (C99 and later) and C++.
 */
#ifndef DIS_DIS_TYPES_H
#define DIS_DIS_TYPES_H

/*
 * Maximum number of adapters (NTBs) of one node: array bound for adapter
 * numbers, which run from 0 to DIS_MAX_NSCIS - 1. Chosen: 256, the most
 * adapters a host of an emulated cluster can report to libsisci, so no
 * adapter number the library returns overflows such an array
 * (SCIQuery(SCI_Q_ADAPTER_NUMBER) says how many there are). A plain int
 * literal: it works in #if, in array bounds, and compared with an int
 * counter under -Wsign-compare.
 */
#define DIS_MAX_NSCIS 256

#endif /* DIS_DIS_TYPES_H */
