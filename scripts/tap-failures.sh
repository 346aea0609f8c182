#!/bin/sh
# tap-failures.sh TAG LOG: every "not ok" line of a guest log, each with
# the "# " lines its test printed before it (up to 40), so that CI's
# output says why a test failed and not only which.
set -u
awk -v tag="$1" '
	/^#  RUN / || /^ok / { n = 0 }
	/^# / { if (n < 40) said[n++] = $0; next }
	/^not ok / {
		print "   [" tag "] " $0
		for (i = 0; i < n; i++)
			print "   [" tag "]     " said[i]
		n = 0
	}' "$2" 2>/dev/null
exit 0
