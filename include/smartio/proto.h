/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol: between applications (libsisci, the smartio CLI)
 * and their host's smartiod, and between the daemons of a cluster. It models
 * the system-call boundary and the NTB's control channel.
 *
 * Every message is a 24-byte header followed by a payload of exactly the
 * length the header states, all little-endian. A receiver validates the
 * header (magic, version, known type, length bounds) and then every field of
 * the payload before acting; anything else is rejected with -EPROTO/-EINVAL
 * and the connection stays usable where framing is intact.
 *
 * The umbrella header: the wire (proto/wire.h), the message list
 * (proto/msgs.h) and every family's payloads.
 */
#ifndef SMARTIO_PROTO_H
#define SMARTIO_PROTO_H

#include "proto/wire.h"
#include "proto/msgs.h"
#include "proto/core.h"
#include "proto/route.h"
#include "proto/ntb.h"
#include "proto/iommu.h"
#include "proto/driver.h"
#include "proto/seg.h"
#include "proto/intr.h"
#include "proto/dma.h"
#include "proto/dev.h"
#include "proto/lend.h"
#include "proto/diag.h"

#endif
