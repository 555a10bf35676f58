// SPDX-License-Identifier: MIT
/*
 * Leveled diagnostics on stderr (see log.h).
 *
 * No lock on the logging path: a device thread may log while it holds the
 * host lock, and a process may fork while another thread logs, so the line
 * is built on the stack from state that is either atomic (level, host) or
 * written only by smio_log_init() before threads start (the name), then
 * written with one write(2).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define UNSET (-1)

static char prog_name[64];                        /* "" until init: the program's name */
static _Atomic int cur_level = UNSET;             /* resolved on first use */
static _Atomic int dflt_level = SMIO_LOG_INFO;
static _Atomic int cur_host = UNSET;
static _Atomic bool stamps;                       /* a UTC time before each line */
static _Atomic bool complained;                   /* about a bad SMARTIO_LOG, once */

static const char *const level_name[] = {
	[SMIO_LOG_ERROR] = "error",
	[SMIO_LOG_WARN] = "warn",
	[SMIO_LOG_INFO] = "info",
	[SMIO_LOG_DEBUG] = "debug",
};

static const char *const level_tag[] = {
	[SMIO_LOG_ERROR] = "error: ",
	[SMIO_LOG_WARN] = "warning: ",
	[SMIO_LOG_INFO] = "",
	[SMIO_LOG_DEBUG] = "debug: ",
};

int smio_log_parse_level(const char *name, enum smio_log_level *level)
{
	static const struct { const char *name; enum smio_log_level level; } names[] = {
		{ "error", SMIO_LOG_ERROR }, { "warn", SMIO_LOG_WARN },
		{ "warning", SMIO_LOG_WARN }, { "info", SMIO_LOG_INFO },
		{ "debug", SMIO_LOG_DEBUG },
	};

	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i].name)) {
			*level = names[i].level;
			return 0;
		}
	return -EINVAL;
}

static int clamp(enum smio_log_level level)
{
	return (unsigned)level > SMIO_LOG_DEBUG ? SMIO_LOG_DEBUG : (int)level;
}

/* The level from SMARTIO_LOG, else the default; *bad: the variable was unusable. */
static int env_level(bool *bad)
{
	const char *env = getenv(SMIO_LOG_ENV);
	enum smio_log_level l;

	*bad = false;
	if (!env || !*env)
		return atomic_load(&dflt_level);
	if (smio_log_parse_level(env, &l)) {
		*bad = true;
		return atomic_load(&dflt_level);
	}
	return (int)l;
}

static void emit(enum smio_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Whatever the level: a setting that does not work must not go unnoticed. */
static void complain_once(void)
{
	if (!atomic_exchange(&complained, true))
		emit(SMIO_LOG_WARN, "%s='%s' is not one of error, warn, info, debug: using %s",
		     SMIO_LOG_ENV, getenv(SMIO_LOG_ENV), level_name[atomic_load(&cur_level)]);
}

enum smio_log_level smio_log_level(void)
{
	int l = atomic_load(&cur_level);
	bool bad;

	if (l != UNSET)
		return (enum smio_log_level)l;
	/* Threads racing here compute the same value. */
	l = env_level(&bad);
	atomic_store(&cur_level, l);
	if (bad)
		complain_once();
	return (enum smio_log_level)l;
}

void smio_log_init(const char *prog, enum smio_log_level dflt)
{
	bool bad;

	snprintf(prog_name, sizeof(prog_name), "%s", prog ? prog : "");
	atomic_store(&dflt_level, clamp(dflt));
	atomic_store(&cur_level, env_level(&bad));
	if (bad)
		complain_once();
}

void smio_log_set_host(int host)
{
	atomic_store(&cur_host, host < 0 ? UNSET : host);
}

void smio_log_set_timestamps(bool on)
{
	atomic_store(&stamps, on);
}

void smio_log_set_level(enum smio_log_level level)
{
	atomic_store(&cur_level, clamp(level));
}

bool smio_log_on(enum smio_log_level level)
{
	return level <= smio_log_level();
}

static void write_all(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;           /* nowhere to report it */
		buf += n;
		len -= (size_t)n;
	}
}

/* Format and write one line, whatever the level. */
static void vemit(enum smio_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static void vemit(enum smio_log_level level, const char *fmt, va_list ap)
{
	static const char cut[] = "...";
	const char *prog = prog_name[0] ? prog_name : program_invocation_short_name;
	char line[SMIO_LOG_LINE_MAX];
	int host = atomic_load(&cur_host), saved = errno, n, m;
	size_t len = 0, room;

	if (atomic_load(&stamps)) {
		struct timespec ts;
		struct tm tm;

		/* gmtime_r: no time zone file read, no lock shared with localtime. */
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		n = snprintf(line + len, sizeof(line) - len, ".%03ldZ ", ts.tv_nsec / 1000000);
		len += n < 0 ? 0 : (size_t)n;
	}
	n = host == UNSET
		? snprintf(line + len, sizeof(line) - len, "%s: %s", prog, level_tag[level])
		: snprintf(line + len, sizeof(line) - len, "%s[host %d]: %s", prog, host,
			   level_tag[level]);
	len += n < 0 ? 0 : (size_t)n;
	room = sizeof(line) - 1 - len;           /* the newline always fits */
	m = vsnprintf(line + len, room + 1, fmt, ap);
	if (m < 0) {
		m = 0;
	} else if ((size_t)m > room) {
		memcpy(line + sizeof(line) - 1 - (sizeof(cut) - 1), cut, sizeof(cut) - 1);
		m = (int)room;
	}
	len += (size_t)m;
	/* Callers write messages without the newline; tolerate one anyway. */
	if (!len || line[len - 1] != '\n')
		line[len++] = '\n';
	write_all(line, len);
	errno = saved;
}

static void emit(enum smio_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(level, fmt, ap);
	va_end(ap);
}

void smio_vlog(enum smio_log_level level, const char *fmt, va_list ap)
{
	if ((unsigned)level > SMIO_LOG_DEBUG)
		level = SMIO_LOG_ERROR;
	if (smio_log_on(level))
		vemit(level, fmt, ap);
}

void smio_log(enum smio_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	smio_vlog(level, fmt, ap);
	va_end(ap);
}
