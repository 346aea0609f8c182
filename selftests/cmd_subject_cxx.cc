// SPDX-License-Identifier: GPL-2.0
/*
 * profil(1)'s C++ subject: its CPU time in a function of a namespace that
 * takes two arguments (2/3) and in a member of a class template (1/3), so
 * that the report's names are the source's, and one of them needs the
 * CSV's quotes.  ms of CPU from the command line (1000).
 */
#include <cstdlib>

#include "cmd_work.h"

namespace cxx {

__attribute__((noinline)) uint64_t heavy(uint64_t until, int tag)
{
	return cmd_churn_until(until) + (tag & 0);
}

template <typename T> struct worker {
	__attribute__((noinline)) static uint64_t run(uint64_t until)
	{
		return cmd_churn_until(until);
	}
};

} // namespace cxx

int main(int argc, char **argv)
{
	uint64_t now = cmd_cpu_ns(), ms = argc > 1 ? atoi(argv[1]) : 1000;
	uint64_t end = now + ms * 1000000;

	/* 500 ms rounds, as cmd_subject.c's (see there why). */
	while (now < end) {
		now = cxx::heavy(now + 333333333, 1);
		now = cxx::worker<int>::run(now + 166666667);
	}
	return 0;
}
