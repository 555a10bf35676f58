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
 * This header is the wire itself: the header, its flags, the limits, the
 * roles, and the codec and framing functions. The messages are listed once in
 * msgs.h; their payloads are in one header per family (core.h, route.h, ...).
 * "smartio/proto.h" includes them all.
 */
#ifndef SMARTIO_PROTO_WIRE_H
#define SMARTIO_PROTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMIO_MAGIC        0x4f494d53u   /* "SMIO" */
#define SMIO_VERSION      1
#define SMIO_MAX_PAYLOAD  (64u * 1024u)
#define SMIO_NAME_MAX     32
#define SMIO_MAX_LEN      (1ull << 40)   /* route/map/step access length bound */

/* header.flags */
#define SMIO_F_REPLY      0x1            /* this is the answer to request seq */
#define SMIO_F_FD         0x2            /* one file descriptor travels with it (SCM_RIGHTS) */

struct smio_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;      /* enum smio_type */
	uint32_t len;       /* payload bytes that follow */
	uint32_t seq;       /* request number; the reply carries the same */
	int32_t status;     /* replies: 0 or negative errno */
	uint32_t flags;
};

enum smio_role {
	SMIO_ROLE_CLIENT = 1,      /* an application process of this host */
	SMIO_ROLE_PEER   = 2,      /* another host's daemon */
	SMIO_ROLE_ADMIN  = 3,      /* the smartio CLI */
};

/* ---- codec (src/proto) ---- */

/* Validate a header as received; -EPROTO on bad magic/version/type/length. */
int smio_hdr_check(const struct smio_hdr *h);
/*
 * Validate a payload for its type and direction (request or reply). Checks the
 * exact or bounded length and every field's range. Returns 0 or -EINVAL/-EPROTO.
 */
int smio_payload_check(uint16_t type, bool reply, const void *payload, uint32_t len);
const char *smio_type_name(uint16_t type);

/* ---- framing over a connected SOCK_STREAM Unix socket ---- */

/*
 * Send one message (optionally with an fd). fd >= 0 sets SMIO_F_FD and passes
 * the fd with SCM_RIGHTS (the caller keeps its own copy); SMIO_F_FD without
 * an fd is -EINVAL. The header is checked before sending (-EINVAL for an
 * unknown type, len > SMIO_MAX_PAYLOAD, bad flags/status); the payload is
 * not: the receiver is the authority. Never raises SIGPIPE, never blocks in
 * the kernel: short writes and EINTR/EAGAIN are retried with poll() for at
 * most 5 s (-ETIMEDOUT). Returns 0, -ECONNRESET if the peer is gone, or -errno.
 */
int smio_send(int sock, uint16_t type, uint32_t seq, int32_t status, uint32_t flags,
	      const void *payload, uint32_t len, int fd);
/*
 * Receive one message into buf (capacity cap >= SMIO_MAX_PAYLOAD). Blocks up to
 * timeout_ms (-1: forever). Validates the header and the payload for its type.
 * A passed fd (if any) is returned in *fd (else -1). Returns 0, -ETIMEDOUT,
 * -ECONNRESET on EOF, -EPROTO/-EINVAL on a malformed message (the payload has
 * been consumed when framing allowed it, so the stream stays in sync).
 *
 * timeout_ms is one deadline for the whole message. What each error leaves:
 *  -ETIMEDOUT   nothing was read; the connection is intact.
 *  -EINVAL      valid header in *h, payload consumed but invalid: the stream
 *               is in sync, answer with an error reply to h->seq.
 *  -EMSGSIZE    valid header, h->len > cap: payload drained and discarded,
 *               the stream is in sync.
 *  -EPROTO      framing lost or peer broken (bad header, deadline expired
 *               mid-message, SMIO_F_FD without exactly one fd or an fd without
 *               it, a reply to a one-way type): close the connection.
 *  -ECONNRESET  EOF or reset: close the connection.
 * A reply with status < 0 may have an empty payload; it is then not checked
 * against the type's reply layout. On any error no fd is returned (a received
 * one is closed); with fd == NULL a received fd is closed too.
 */
int smio_recv(int sock, struct smio_hdr *h, void *buf, uint32_t cap, int *fd, int timeout_ms);

/*
 * Connect to host N's daemon socket in cluster dir; returns fd or -errno.
 * ENOENT/ECONNREFUSED (a daemon still starting) are retried with short,
 * growing waits (1..50 ms) until timeout_ms; timeout_ms <= 0: one attempt.
 * Sends nothing: the caller sends HELLO.
 */
int smio_connect(const char *cluster_dir, uint32_t host, int timeout_ms);
/*
 * One request/reply round trip; reply payload into rbuf (rcap), its length in
 * *rlen, a passed fd in *fd (-1 if none; closed if fd is NULL). Uses a fresh
 * sequence number from a process-wide atomic counter; late replies to earlier
 * (timed-out) calls are consumed and skipped. One call in flight per socket.
 * Returns:
 *   0                 success;
 *   the reply's status (negative errno) if the daemon answered with an error;
 *   -ETIMEDOUT, -ECONNRESET, -EPROTO for transport failures (-EPROTO also for
 *                     a malformed reply, a reply of another type, or a request
 *                     arriving on this client connection);
 *   -EMSGSIZE         the reply did not fit rcap (it was drained);
 *   -EINVAL           bad arguments (nothing sent).
 */
int smio_call(int sock, uint16_t type, const void *req, uint32_t reqlen,
	      void *rbuf, uint32_t rcap, uint32_t *rlen, int *fd, int timeout_ms);

/* Cluster directory convention: $SMARTIO_CLUSTER, else $XDG_RUNTIME_DIR/smartio,
 * else /tmp/smartio-UID. Writes into buf; returns 0 or -ENAMETOOLONG. */
int smio_cluster_dir(char *buf, size_t len);
/* Socket path of host N. */
int smio_sock_path(const char *cluster_dir, uint32_t host, char *buf, size_t len);
/* $SMARTIO_HOST as a host id; -ENOENT if unset, -EINVAL if malformed. */
int smio_env_host(uint32_t *host);

#endif
