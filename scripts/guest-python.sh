#!/bin/sh
# guest-python.sh: what Debian's Python 3 needs in a guest to run
# profil_cmd_test's Python program (json, decimal, hashlib, lzma, bz2: C
# extension modules of lib-dynload and the libraries they link), one path
# a line, each with '=' before it: mkinitramfs.sh copies such a file to
# its own path, with the libraries it needs.  The interpreter (a copy at
# /usr/bin/python3, its prefix still /usr), every
# module file the program imports and their compiled forms.  Nothing when
# /usr/bin/python3 is not Debian's package.
set -eu
py=/usr/bin/python3
[ -x "$py" ] || exit 0
echo "=$py"
"$py" -I -S -c '
import importlib.util, os, sys
import bz2, decimal, hashlib, json, lzma
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if not f:
        continue
    print(f)
    if f.endswith(".py"):
        c = importlib.util.cache_from_source(f)
        if os.path.exists(c):
            print(c)
' | sort -u | sed 's/^/=/'
