#!/bin/sh
# guest-files.sh: files of Debian's packages that profil_cmd_test's
# programs use at their own paths, one a line, each with '=' before it:
# mkinitramfs.sh copies such a file to its own path, with the libraries
# it needs.
#  - Python 3, for its Python program (json, decimal, hashlib, lzma, bz2:
#    C extension modules of lib-dynload): the interpreter (a copy at
#    /usr/bin/python3, its prefix still /usr), every module file the
#    program imports and their compiled forms.  Nothing when
#    /usr/bin/python3 is not there.
#  - glibc's gconv module for ISO-8859-2 and the configuration that names
#    it, which iconv(3) loads itself (cmd_subject iconv).
set -eu
gconv=/usr/lib/$(gcc -print-multiarch)/gconv
for f in "$gconv/ISO8859-2.so" "$gconv/gconv-modules" \
	 "$gconv/gconv-modules.cache" "$gconv"/gconv-modules.d/*; do
	[ ! -e "$f" ] || echo "=$f"
done
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
