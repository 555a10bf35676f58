#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Embed a file in the smartio tool as a C array: embed.py IN OUT.c SYMBOL.

The page of `smartio web` (web_page.html) stays an ordinary HTML file that can
be edited and checked as such; the build turns it into SYMBOL and SYMBOL_len
(declared in web.h), so the installed tool needs no data files.
"""
import os
import sys


def main():
    src, out, sym = sys.argv[1:4]
    data = open(src, 'rb').read()
    with open(out, 'w') as f:
        f.write('/* Generated from %s by embed.py: do not edit. */\n' % os.path.basename(src))
        f.write('#include "web.h"\n\n')
        f.write('const char %s[] = {\n' % sym)
        for i in range(0, len(data), 20):
            f.write('\t' + ', '.join(str(b) for b in data[i:i + 20]) + ',\n')
        f.write('\t0\n};\nconst size_t %s_len = %d;\n' % (sym, len(data)))


if __name__ == '__main__':
    main()
