/* SPDX-License-Identifier: MIT */
/* The state of smartiod's core, shared by loop.c, conn.c, call.c, work.c and auth.c. */
#ifndef SMARTIO_DAEMON_CORE_PRIV_H
#define SMARTIO_DAEMON_CORE_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core.h"

typedef struct sd_event sd_event;

/* An outgoing message: header and payload, and a descriptor riding on its first byte. */
struct smd_frame {
	struct smd_frame *next;
	uint32_t len, off;        /* bytes in buf; sent so far */
	int fd;                   /* ours (a duplicate), closed once sent; -1 none */
	uint8_t buf[];
};

/* A call of ours waiting for a peer's reply. */
struct smd_pending {
	struct smd_pending *next;
	struct smd_conn *c;
	uint32_t seq;
	uint16_t type;
	smd_call_fn fn;           /* NULL: none (a post, or a call that timed out) */
	void *arg;
	bool late;                /* timed out: kept to undo what a late answer did */
	sd_event_source *timer;
};

/* A request and what carries it: a work item, or a continuation. */
struct reqbox {
	struct smd_req r;
	struct smd_work w;
	bool deferred;            /* answered later: the connection waits for it */
	bool fd_owned;            /* r.out_fd is a copy of our own (work) */
};

#define BOX(req) ((struct reqbox *)(void *)(req))

struct smd_core {
	sd_event *ev;
	sd_event_source *listen_src, *inbox_src, *accept_retry;
	/* deferred calls from other threads */
	int inbox_fd;             /* eventfd the loop watches */
	pthread_mutex_t inbox_mu;
	struct smd_defer *inbox, **inbox_tail;
	/* connections */
	struct smd_conn *conns;   /* every connection not yet freed (host lock + loop) */
	uint32_t next_cid;
	uint32_t next_seq;
	unsigned n_unauth, n_clients, n_admins;
	unsigned *n_peers_in;     /* by topology host index */
	struct smd_conn **peer_out; /* our connection to each host, by index */
	bool stopping;            /* no new connections, calls or work */
	/* workers */
	pthread_mutex_t wq_mu;
	pthread_cond_t wq_cv, wq_idle_cv;
	struct smd_work *wq, **wq_tail;
	pthread_t threads[SMD_WORKERS_MAX];
	uint64_t running_key[SMD_WORKERS_MAX][2];
	unsigned nthreads, nidle, npending;
	unsigned nqueued;         /* items in the queue, not yet taken */
	bool wq_stop;             /* no new calls from device threads */
	bool wq_exit;             /* threads end once the queue is empty */
	/* authentication */
	uid_t owner_uid;
	char procs_dir[4096 + 16];
};

#endif
