/* SPDX-License-Identifier: MIT */
/*
 * smartiod's core: the event loop, connections, asynchronous peer calls and
 * the worker threads (docs/architecture.md, "How a request flows").
 *
 * Threads and what they may do:
 *  - the loop thread (sd-event) owns every file descriptor: it accepts,
 *    assembles input, validates, authenticates, runs the handlers that never
 *    wait, sends, and runs the continuations of peer calls. It never blocks.
 *  - worker threads run work items: requests whose handlers may wait for a
 *    peer or a device (drivers, a borrow that needs three hosts). A worker
 *    waits only without the host lock, on a call the loop completes. Work is
 *    ordered per client (one request of a client at a time) and serialised
 *    per device (items with the same key never run together).
 *  - device and DMA-engine threads (src/host) never talk to peers: what they
 *    cannot do alone they hand to a worker (smd_work_call).
 * Everything the handlers touch is guarded by the host lock; the loop and the
 * workers take it around every handler, continuation and deferred call.
 */
#ifndef SMARTIO_DAEMON_CORE_H
#define SMARTIO_DAEMON_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "smartio/proto.h"

struct smd;
struct smd_conn;
struct smd_frame;
struct smd_pending;
typedef struct sd_event_source sd_event_source;

/* ---------- limits and deadlines ---------- */

#define SMD_PEER_TIMEOUT     3000      /* ms for a peer to answer one call */
#define SMD_LATE_KEEP        30000     /* ms a timed-out call waits for a late answer */
#define SMD_CLIENT_TIMEOUT   2000      /* ms for the rest of a started message */
#define SMD_HELLO_TIMEOUT    10000     /* ms for a new connection to say HELLO */
#define SMD_SEND_TIMEOUT     5000      /* ms a half-sent message may wait for its reader */
#define SMD_OUTQ_MAX         (4u << 20) /* bytes queued for one connection */
#define SMD_OUTQ_PAUSE       (256u << 10) /* above this, stop reading the connection */
#define SMD_MAX_UNAUTH       256       /* connections still to say HELLO */
#define SMD_MAX_CLIENTS      1024
#define SMD_MAX_ADMINS       64
#define SMD_MAX_PEER_CONNS   4         /* incoming, per peer host */
#define SMD_PEER_INFLIGHT    64        /* a peer's requests served at once */
#define SMD_WORKERS_MAX      32
/*
 * Messages of one connection per turn. One: a connection's next request is
 * read only after every event already pending has had its turn, so what a
 * client did before sending a request (closing another connection, say) is
 * always seen before that request is answered, and connections take turns.
 */
#define SMD_MSGS_PER_WAKE    1

/* ---------- thread contexts ---------- */

enum smd_ctx { SMD_CTX_OTHER = 0, SMD_CTX_LOOP, SMD_CTX_WORKER };
enum smd_ctx smd_ctx(void);

/* ---------- connections ---------- */

struct smd_conn {
	/* Identity: set by the loop before any handler sees the connection,
	 * fixed once HELLO succeeded; handlers on workers read these. */
	uint32_t cid;             /* unique over the daemon's life, never 0 */
	uint32_t role;            /* enum smio_role; 0 until HELLO */
	uint32_t host;            /* peers: their host id; others: ours */
	uint32_t pid, uid;        /* the kernel's word (SO_PEERCRED) */
	bool outgoing;            /* we connected, to call a peer */

	/* The loop's alone from here on. */
	struct smd *d;
	int fd;
	sd_event_source *io, *timer;
	uint64_t since_ns;        /* accepted or connected */
	uint8_t hdr[24];          /* the header of the message being assembled */
	uint8_t *in;              /* that message (header + payload), once the header is good */
	uint32_t have;
	int in_fd;                /* descriptor that came with it, or -1 */
	uint64_t in_started_ns;   /* when its first byte came (0: nothing pending) */
	struct smd_frame *out, **out_tail;
	uint64_t out_bytes;
	uint64_t out_stuck_ns;    /* since when the head frame waits for the reader (0: not) */
	struct smd_pending *calls;/* outgoing: our calls awaiting replies */
	bool hello_ok;            /* outgoing: the peer answered our HELLO */
	bool connecting;          /* outgoing: the peer's backlog was full; retrying */
	uint64_t retry_ns;        /* connecting: next attempt */
	unsigned retry_ms;        /* connecting: the wait before it */
	unsigned busy;            /* requests being served (work or continuation) */
	bool dead;                /* closed: no more I/O, no new requests */
	bool failing;             /* a send failed: closed on the loop's next turn */
	bool cleaned;             /* the services have forgotten it */
	int refs;
	struct smd_conn *prev, *next;
};

/* The live connection with id cid (host lock held, or on the loop), or NULL. */
struct smd_conn *smd_conn_find(struct smd *d, uint32_t cid);
/*
 * Whether the live connection cid belongs to the same process as c (host lock
 * held, or on the loop): c itself, or another connection of this host's
 * processes (not a peer daemon's) with the same pid and uid. A SISCI program's
 * descriptors are such connections, and share what the process owns.
 */
bool smd_conn_same_process(struct smd *d, const struct smd_conn *c, uint32_t cid);
/*
 * Queue a message on connection cid (any thread): a request (flags 0) or a
 * reply; a descriptor is duplicated and the copy sent. -ENOTCONN if it is gone.
 */
int smd_conn_send(struct smd *d, uint32_t cid, uint16_t type, uint32_t seq, int32_t status,
		  uint32_t flags, const void *payload, uint32_t len, int fd);
/* Close connection cid (any thread; the loop does it). */
void smd_conn_drop(struct smd *d, uint32_t cid);

/* ---------- requests ---------- */

/* One request being served: handlers fill out/outlen/out_fd and return 0 or -errno. */
struct smd_req {
	struct smd *d;
	struct smd_conn *c;       /* holds a reference while the request lives */
	struct smio_hdr h;        /* the request's header */
	const void *p;            /* its validated payload */
	uint32_t len;
	uint16_t type;
	void *out;                /* reply payload (SMIO_MAX_PAYLOAD) */
	uint32_t outlen;
	int out_fd;               /* a descriptor for the reply; stays the daemon's */
	uint8_t *msg;             /* the message buffer (owned) */
	bool own_out;             /* out was allocated for this request */
	bool no_reply;
	int rc;
	void *priv;               /* the handler's, across a continuation */
};

/*
 * A handler that returns SMD_ASYNC answers later: it has started a peer call
 * whose continuation ends with smd_req_done(). Only handlers that run on the
 * loop may; smd_req_keep() first gives the request its own reply buffer.
 */
#define SMD_ASYNC 1
int smd_req_keep(struct smd_req *r);
void smd_req_done(struct smd_req *r, int rc);

/*
 * A handler on the loop asks a peer without waiting (request.c): `then` runs
 * on the loop with rc 0 and the reply's payload (len bytes; a descriptor that
 * came with it is then's to keep or close), or the peer's negative status,
 * -EPROTO (a reply of another type), -ETIMEDOUT, -EHOSTDOWN (not reachable,
 * connection lost), -ESHUTDOWN. `then` ends the request (smd_req_done) or
 * makes the next call. Returns SMD_ASYNC, or -errno when nothing was sent
 * (then is not called).
 */
typedef void (*smd_req_then)(struct smd_req *r, int rc, const void *payload, uint32_t len,
			     int fd);
int smd_req_call(struct smd_req *r, uint32_t host, uint16_t type, const void *req, uint32_t len,
		 smd_req_then then);

/* One host's answer in a fan-out: rc as above, the payload a copy (freed after then). */
struct smd_reply {
	uint32_t host;
	int rc;
	uint8_t *payload;
	uint32_t len;
};
typedef void (*smd_req_then_all)(struct smd_req *r, struct smd_reply *v, unsigned n);
/* The same request to n hosts at once; then runs once all have answered or failed. */
int smd_req_fanout(struct smd_req *r, const uint32_t *hosts, unsigned n, uint16_t type,
		   const void *req, uint32_t len, smd_req_then_all then);

/* ---------- deferred calls: any thread -> the loop ---------- */

struct smd_defer {
	struct smd_defer *next;
	void (*fn)(struct smd *d, struct smd_defer *x);   /* loop, host lock held */
};
void smd_defer(struct smd *d, struct smd_defer *x);

/* ---------- peer calls ---------- */

/*
 * The continuation of a peer call, run once on the loop with the host lock
 * held: rc 0 with the peer's reply (h->status may be an error; a descriptor
 * that came with it is the continuation's to keep or close), or -ETIMEDOUT,
 * -EHOSTDOWN (not reachable, connection lost, refused), -ESHUTDOWN.
 */
typedef void (*smd_call_fn)(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
			    const void *payload, int fd);

/*
 * Loop only: send a request to host's daemon over our connection to it (made
 * on first use, authenticated both ways) and return. 0: fn will be called
 * exactly once; -errno: it will not (nothing was sent).
 */
int smd_call_start(struct smd *d, uint32_t host, uint16_t type, const void *req, uint32_t len,
		   int timeout_ms, smd_call_fn fn, void *arg);

/*
 * Workers only: the same call, waiting for its continuation without the host
 * lock (tables may change meanwhile: look entries up again afterwards). The
 * reply payload goes to rbuf (cap), its length to *rlen, a descriptor passed
 * with it to *fd (-1 if none; closed if fd is NULL). Returns 0, the peer's
 * negative status, -EPROTO for a reply of the wrong size, -EHOSTDOWN when
 * the peer cannot be reached or goes away, -ETIMEDOUT after SMD_PEER_TIMEOUT.
 * From the loop it refuses with -EWOULDBLOCK (a misclassified handler).
 */
int smd_peer_request(struct smd *d, uint32_t host, uint16_t type, const void *req,
		     uint32_t len, void *rbuf, uint32_t cap, uint32_t *rlen, int *fd);

/* One call of a fan-out (smd_peer_request_all). */
struct smd_multi {
	uint32_t host;
	void *rbuf;
	uint32_t cap, rlen;
	int rc;
};
/* Workers only: the same request to several hosts at once; waits for all. */
void smd_peer_request_all(struct smd *d, uint16_t type, const void *req, uint32_t len,
			  struct smd_multi *v, unsigned n);

/*
 * Any thread: send a request to host without waiting (the reply is dropped):
 * for clean-up paths. -ENOTCONN if we hold no connection to host (then the
 * peer has dropped what that connection held already).
 */
int smd_peer_post(struct smd *d, uint32_t host, uint16_t type, const void *req, uint32_t len);
/* Any thread: open (asynchronously) our connection to host if there is none. */
void smd_peer_connect(struct smd *d, uint32_t host);
/* Number of live connections by role (host lock held). */
void smd_conn_count(struct smd *d, unsigned *clients, unsigned *peers);

/* ---------- work ---------- */

struct smd_work {
	struct smd_work *next;
	struct smd *d;
	void (*run)(struct smd_work *w);    /* a worker, host lock held */
	void (*done)(struct smd_work *w);   /* the loop afterwards, host lock held; may free */
	uint64_t key, key2;                  /* items sharing a non-zero key never overlap */
	struct smd_defer fin;
};
void smd_work_queue(struct smd *d, struct smd_work *w);

/*
 * For device and DMA-engine threads: run fn(arg) on a worker (host lock
 * held) and wait for it. -ESHUTDOWN once the daemon stops, -ETIMEDOUT if no
 * worker took it within timeout_ms (once taken it is always waited for).
 */
int smd_work_call(struct smd *d, int (*fn)(struct smd *d, void *arg), void *arg,
		  int timeout_ms);

/* ---------- the loop (loop.c) ---------- */

int smd_core_init(struct smd *d);        /* before the device threads */
int smd_loop_init(struct smd *d);        /* once the socket listens */
int smd_loop_run(struct smd *d);         /* until stopped and drained */
void smd_loop_stop(struct smd *d);      /* loop only */
void smd_loop_fini(struct smd *d);

/* Internal to the core's files. */
int smd_conn_accept(struct smd *d, int fd);
struct smd_conn *smd_conn_new(struct smd *d, int fd, bool outgoing, uint32_t role,
			      uint32_t host);
void smd_conn_close(struct smd_conn *c, const char *why);
void smd_conn_put(struct smd_conn *c);
void smd_conn_set_role(struct smd_conn *c, uint32_t role, uint32_t host);
void smd_conn_retry_later(struct smd_conn *c);
int smd_conn_dial(struct smd_conn *c);
int smd_conn_queue(struct smd_conn *c, uint16_t type, uint32_t seq, int32_t status,
		   uint32_t flags, const void *payload, uint32_t len, int fd);
void smd_conn_resume(struct smd_conn *c);
void smd_conns_close_all(struct smd *d);
void smd_conn_closed_hooks(struct smd *d, struct smd_conn *c);
bool smd_call_reply(struct smd_conn *c, const struct smio_hdr *h, const void *payload, int fd);
void smd_calls_fail(struct smd_conn *c, int rc);
bool smd_calls_live(const struct smd_conn *c);
uint32_t smd_next_seq(struct smd *d);
void smd_dispatch(struct smd_conn *c, uint8_t *msg, int fd);
int smd_auth_hello(struct smd *d, struct smd_conn *c, const struct smio_hello *m);
int smd_auth_server(struct smd *d, uint32_t pid, uint32_t uid, uint32_t host);
int smd_auth_init(struct smd *d);
int smd_work_init(struct smd *d);
void smd_work_stop(struct smd *d);
bool smd_work_idle(struct smd *d);
void smd_loop_wake(struct smd *d);
void smd_loop_set_ctx(enum smd_ctx ctx);

#endif
