#!/usr/bin/env python3
# docs/cli.md against the CLI's own --help (TAP): every command that
# `smartio --help` lists has a section in docs/cli.md (a "## smartio CMD ..."
# heading; one heading may name several, "## smartio devices / borrow /
# return"), and every long option that `smartio CMD --help` prints appears in
# that command's sections. A command or option added without its docs fails
# here, with what is missing.
#
# usage: cli_doc_test.py [SMARTIO [CLI_MD]]  (defaults from SMARTIO_BUILD_DIR
# and SMARTIO_SOURCE_DIR, as meson test sets them)
import os
import re
import subprocess
import sys

build = os.environ.get("SMARTIO_BUILD_DIR", "build")
source = os.environ.get("SMARTIO_SOURCE_DIR", ".")
smartio = sys.argv[1] if len(sys.argv) > 1 else os.path.join(build, "tools/smartio/smartio")
cli_md = sys.argv[2] if len(sys.argv) > 2 else os.path.join(source, "docs/cli.md")
OPT = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w-])")


def help_text(*args):
    r = subprocess.run([smartio, *args, "--help"], capture_output=True, text=True, timeout=30)
    return r.stdout + r.stderr


def commands():
    """The commands of the "Commands:" list of `smartio --help`."""
    out, on = [], False
    for line in help_text().splitlines():
        if re.match(r"^Commands:", line):
            on = True
        elif on and re.match(r"^  [a-z]", line):
            out.append(line.split()[0])
        elif on and not line.startswith("  "):
            on = False
    return out


def sections(path):
    """{command: text of every '## smartio ...' section that names it}."""
    by_cmd, name_set, buf = {}, [], []

    def flush():
        for n in name_set:
            by_cmd[n] = by_cmd.get(n, "") + "".join(buf)

    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                flush()
                buf = []
                m = re.match(r"^## smartio ([^\n]*)", line)
                # "smartio devices / borrow / return", "smartio mount / smartio umount":
                # the first word of each '/'-separated part is a command.
                name_set = []
                if m:
                    for part in m.group(1).split("/"):
                        words = part.replace("smartio ", "").split()
                        if words:
                            name_set.append(words[0].strip("`"))
            buf.append(line)
    flush()
    return by_cmd


def main():
    cmds = commands()
    docs = sections(cli_md)
    tap, n, failed = [], 0, 0
    if not cmds:
        print("Bail out! no commands in `%s --help`" % smartio)
        return 2
    for cmd in cmds:
        n += 1
        text = docs.get(cmd)
        if text is None:
            failed += 1
            tap.append("not ok %d - %s: docs/cli.md has no '## smartio %s' section" % (n, cmd, cmd))
            continue
        documented = set(OPT.findall(text))
        opts = sorted(set(OPT.findall(help_text(cmd))) - {"--help"})
        missing = [o for o in opts if o not in documented]
        if missing:
            failed += 1
            tap.append("not ok %d - %s: options of `smartio %s --help` missing from its "
                       "section of docs/cli.md: %s" % (n, cmd, cmd, " ".join(missing)))
        else:
            tap.append("ok %d - %s: section and its %d long options" % (n, cmd, len(opts)))
    print("1..%d" % n)
    print("\n".join(tap))
    return 1 if failed else 0


sys.exit(main())
