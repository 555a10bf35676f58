#!/usr/bin/env python3
# Add memory-backend-smartio (tools/qemu/smartio-mdev.c) to QEMU's QAPI schema
# of -object types (qapi/qom.json), which -object validates against: a type
# missing there cannot be created from the command line. Idempotent: a tree
# that has it is left alone. usage: qom-schema.py QEMU_TREE
import sys

path = sys.argv[1] + "/qapi/qom.json"
s = open(path, encoding="utf-8").read()
if "memory-backend-smartio" in s:
    sys.exit(0)
struct = """##
# @MemoryBackendSmartioProperties:
#
# Properties for memory-backend-smartio objects (smartio's guest RAM, taken
# from a cluster host's RAM by its daemon).
#
# @socket: the host's daemon socket
#
# @host: the host id
##
{ 'struct': 'MemoryBackendSmartioProperties',
  'base': 'MemoryBackendProperties',
  'data': { 'socket': 'str', 'host': 'uint32' } }

"""
anchors = [
    ("##\n# @MemoryBackendMemfdProperties:", struct + "##\n# @MemoryBackendMemfdProperties:"),
    ("    'memory-backend-ram',\n", "    'memory-backend-ram',\n    'memory-backend-smartio',\n"),
    ("      'memory-backend-ram':         'MemoryBackendProperties',\n",
     "      'memory-backend-ram':         'MemoryBackendProperties',\n"
     "      'memory-backend-smartio':     'MemoryBackendSmartioProperties',\n"),
]
for old, new in anchors:
    if s.count(old) != 1:
        sys.exit("qom-schema.py: %s: no unique anchor %r (a QEMU version this does not know)"
                 % (path, old.strip()))
    s = s.replace(old, new)
open(path, "w", encoding="utf-8").write(s)
