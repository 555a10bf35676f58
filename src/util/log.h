/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics of the daemons and libraries, with levels, on stderr.
 *
 * A line is "PROG[host N]: LEVEL: message\n" ("PROG: ..." before a host is
 * set; no "LEVEL: " for info), after "2026-11-25T20:30:01.123Z " (UTC) once
 * smio_log_set_timestamps(true), written with one write(2) so lines of
 * concurrent threads and processes sharing a log file never interleave.
 *
 * The level comes from the environment, SMARTIO_LOG=error|warn|info|debug,
 * read once; without it, from the default the process chose with
 * smio_log_init() (daemons: info; libraries linked into other people's
 * programs: error, so they stay quiet unless asked); a process that never
 * calls it gets info. Command-line tools do not use this module: their
 * messages are part of their interface (docs/cli.md).
 *
 * Each shared library linking this module has its own private copy (the
 * symbols are hidden), so libsisci choosing "error" does not change the
 * level of the program that loads it.
 */
#ifndef SMARTIO_UTIL_LOG_H
#define SMARTIO_UTIL_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum smio_log_level {
	SMIO_LOG_ERROR,
	SMIO_LOG_WARN,
	SMIO_LOG_INFO,
	SMIO_LOG_DEBUG,
};

#define SMIO_LOG_ENV      "SMARTIO_LOG"
#define SMIO_LOG_LINE_MAX 4096        /* PIPE_BUF: a longer line is cut ("...") */

/*
 * Name the process (prog NULL: the program's own short name) and choose the
 * level used when SMARTIO_LOG is unset. Call it early, before threads start;
 * calling it again renames and re-reads the environment.
 */
void smio_log_init(const char *prog, enum smio_log_level dflt);

/* Show "[host N]" after the name from now on; host < 0: stop showing it. */
void smio_log_set_host(int host);

/* Override the level (tests, a --verbose option); SMARTIO_LOG is not re-read. */
void smio_log_set_level(enum smio_log_level level);
/* Start every line with its UTC time to the millisecond (daemons: their logs
 * are read after the fact, next to other hosts' logs). */
void smio_log_set_timestamps(bool on);
enum smio_log_level smio_log_level(void);

/* Whether a message of this level is written: skip costly formatting if not. */
bool smio_log_on(enum smio_log_level level);

/*
 * Parse a level name (case-insensitive: error, warn or warning, info, debug).
 * 0 with *level set, or -EINVAL.
 */
int smio_log_parse_level(const char *name, enum smio_log_level *level);

/* errno is preserved, so a caller may log before it reports errno. */
void smio_log(enum smio_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void smio_vlog(enum smio_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define smio_error(...) smio_log(SMIO_LOG_ERROR, __VA_ARGS__)
#define smio_warn(...)  smio_log(SMIO_LOG_WARN, __VA_ARGS__)
#define smio_info(...)  smio_log(SMIO_LOG_INFO, __VA_ARGS__)
#define smio_debug(...) smio_log(SMIO_LOG_DEBUG, __VA_ARGS__)

#endif
