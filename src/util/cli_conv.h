/* SPDX-License-Identifier: MIT */
/*
 * Conventions every command-line tool of smartio follows (docs/cli.md,
 * "Common rules"): --version prints the project's version, and a mistyped
 * command or subcommand gets one line with the nearest known name.
 */
#ifndef SMARTIO_UTIL_CLI_CONV_H
#define SMARTIO_UTIL_CLI_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The project's version (meson.build), from the generated smartio_version.h. */
const char *smio_version(void);
/* "smartio VERSION" ("PROG (smartio) VERSION" for another program) on f. */
void smio_print_version(FILE *f, const char *prog);
/*
 * argv[1..argc) holds "--version" before any "--" (what follows "--" is
 * another program's). A tool answers it before anything else.
 */
bool smio_wants_version(int argc, char **argv);
/* Levenshtein distance of a and b (each at most 63 bytes counted; longer: far). */
size_t smio_edit_distance(const char *a, const char *b);
/* The name of cands[0..n) nearest to word, if near enough to be a typo; else NULL. */
const char *smio_suggest(const char *word, const char *const *cands, size_t n);
/*
 * One line on stderr: "PROG: unknown WHAT 'word'; did you mean 'x'?", or
 * "PROG: unknown WHAT 'word' (HINT)" when nothing is near. Callers exit 2.
 */
void smio_unknown(const char *prog, const char *what, const char *word,
		  const char *const *cands, size_t n, const char *hint);

#endif
