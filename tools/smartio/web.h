/* SPDX-License-Identifier: MIT */
/* smartio web (web.c) and its page (web_page.html, embedded at build time by embed.py). */
#ifndef SMARTIO_WEB_H
#define SMARTIO_WEB_H

#include <stddef.h>

#define WEB_DEFAULT_LISTEN "127.0.0.1:7780"

extern const char web_page_html[];
extern const size_t web_page_html_len;

#endif
