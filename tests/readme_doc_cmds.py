#!/usr/bin/env python3
# The commands of the ```sh blocks of Markdown files, for tests/readme_test.sh.
#
# Prints one line per command: "FILE:LINE<TAB>REQUIRES<TAB>COMMAND", REQUIRES
# being "-" or what the block needs ("fio-engine", "fuse"). A line ending in a
# backslash continues on the next; blank lines and whole-line comments are not
# commands. Markers, an HTML comment on the last non-blank line before a block:
#   <!-- not-tested: WHY -->        the block is not run (e.g. `make demo`)
#   <!-- test: needs-fio-engine -->  run only if the fio engine was built
#   <!-- test: needs-fuse -->        run only if FUSE can be used
import re
import sys

for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    marker, i = "", 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*<!--\s*(not-tested|test:\s*needs-([a-z-]+))\b.*-->\s*$", line)
        if m:
            marker = "skip" if m.group(1) == "not-tested" else m.group(2)
        elif line.startswith("```sh"):
            i += 1
            cmd, start = "", 0
            while i < len(lines) and not lines[i].startswith("```"):
                text = lines[i]
                if not cmd:
                    start = i + 1
                    if not text.strip() or text.lstrip().startswith("#"):
                        i += 1
                        continue
                if text.endswith("\\"):
                    cmd += text[:-1] + " "
                else:
                    cmd += text
                    if marker != "skip":
                        print("%s:%d\t%s\t%s" % (path, start, marker or "-", cmd))
                    cmd = ""
                i += 1
            marker = ""
        elif line.strip():
            marker = ""
        i += 1
