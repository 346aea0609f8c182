# SPDX-License-Identifier: GPL-2.0
#
#   make            profil.ko for KDIR, libprofil, the selftests
#   make check      install what is missing, run the selftests in a guest
#                   of every Debian kernel of the matrix, print the totals
#   make demo       install what is missing, profile a sample program in a
#                   guest and print its profile
#   make lint       checkpatch, a W=1 build, mandoc -Tlint
#   make bench      install what is missing (perf, clang, libbpf, gnuplot
#                   too), measure profil.ko against the null timer, glibc,
#                   perf record and a libbpf sampler in one guest (KVER=),
#                   write bench/out/; make bench-readme puts it in doc/measurements.md

VERSION		:= 0.1.0
SOVERSION	:= 0

KVER_RUNNING	:= $(shell uname -r)
# The running kernel's build tree, or the newest on the host, or the
# newest that make deps unpacked for the matrix (scripts/fetch-kernel.sh).
KCACHE		?= $(or $(PROFIL_KERNELS),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/profil-kernels)
KDIR		?= $(firstword $(wildcard /lib/modules/$(KVER_RUNNING)/build) \
		     $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1) \
		     $(shell ls -d $(KCACHE)/*/lib/modules/*/build 2>/dev/null | sort -V | tail -n 1))
NO_KDIR		:= no kernel build tree found: make deps (which unpacks Debian's \
		   kernels into $(KCACHE)), or set KDIR=/lib/modules/VERSION/build
BUILD		:= build
CC		?= gcc
CFLAGS		?= -O2 -g
WARN		:= -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
LIB_CPPFLAGS	:= -Iuapi -Ilib -Ilib/include $(CPPFLAGS)
LIB_CFLAGS	:= $(CFLAGS) $(WARN) -std=gnu11 -fvisibility=hidden
HARNESS_DIR	:= $(BUILD)/kselftest
TEST_CFLAGS	:= $(CFLAGS) -Wall -std=gnu11 -Iuapi -Ilib/include \
		   -I$(HARNESS_DIR) -pthread

KMOD_SRCS	:= $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h)
LIB_SRCS	:= lib/dev.c lib/profil.c lib/gmon.c lib/regions.c lib/aix.c \
		   lib/sprofil.c lib/pcsample.c
LIB_ASRCS	:= lib/mcount.S
# Sources with a GLIBC_2.2.5 alias (.symver), which -flto would lose.
NO_LTO_SRCS	:= lib/profil.c lib/gmon.c lib/sprofil.c
# mcount's C side must leave the vector registers (arguments) alone.
GENREGS_SRCS	:= lib/gmon.c
LIB_OBJS	:= $(LIB_SRCS:.c=.o) $(LIB_ASRCS:.S=.o)
LIB_SOBJS	:= $(LIB_SRCS:.c=.os) $(LIB_ASRCS:.S=.os)
LIB_HDRS	:= lib/profil-private.h lib/gmon-bsd.h lib/include/profil.h lib/include/mon.h \
		   lib/include/pcsample.h \
		   uapi/linux/profil.h

# gmon_subject.c built with -pg: against libprofil four ways, and against
# glibc alone (run with LD_PRELOAD=libprofil.so.0).
# profil(1)'s subjects: an unmodified program, stripped, static, and its
# libraries (selftests/cmd_subject.c).
CMD_SUBJECTS	:= cmd_subject cmd_subject_stripped cmd_subject_static \
		   cmd_subject_cxx cmd_subject_asan cmd_plughost libcmd_split.so \
		   libcmd_dl.so cmd_subject32
GMON_SUBJECTS	:= gmon_subject gmon_subject_static gmon_subject_nopie \
		   gmon_subject_fentry gmon_subject_glibc gmon_subject_setuid
# The guest's programs, in one place: kselftest programs run as root and as
# uid 65534 with the module loaded, then without it, and their helpers.
GUEST_TESTS	:= profil_test lifecycle_test pin_test lib_test gmon_test \
		   sprofil_test aix_test fuzz_test failnth_test profil_cmd_test \
		   writer_test attach_test
GUEST_NOMOD_TESTS := nomod_test
# Run by make check in a guest of their own, booted with nohz_full=1.
GUEST_TICKLESS_TESTS := tickless_test
GUEST_HELPERS	:= exec_helper perfhold runas pinsheld probe_dynamic \
		   probe_static probe_glibc $(GMON_SUBJECTS) gmon_monitor \
		   sprofil_probe_glibc $(CMD_SUBJECTS)
export GUEST_TESTS GUEST_NOMOD_TESTS GUEST_TICKLESS_TESTS GUEST_HELPERS
TESTS		:= $(addprefix $(BUILD)/selftests/,$(GUEST_TESTS) \
		   $(GUEST_NOMOD_TESTS) $(GUEST_TICKLESS_TESTS) $(GUEST_HELPERS))
DEMO		:= $(BUILD)/demo/hotspots $(BUILD)/demo/callgraph \
		   $(BUILD)/demo/callgraph-plain
BENCH		:= $(BUILD)/bench/forkcost $(BUILD)/bench/regions
# profil(1) and the agent it preloads.
TOOLS		:= $(BUILD)/tools/profil $(BUILD)/tools/profil-agent.so \
		   $(BUILD)/tools/profil-agent32.so
TOOL_CFLAGS	:= $(CFLAGS) $(WARN) -std=gnu11 -Iuapi -Itools $(CPPFLAGS)
MCOUNT_BENCH	:= $(addprefix $(BUILD)/bench/mcount-,none glibc libprofil)

.PHONY: all module lib tools selftests deps check check-debug check-harness demo lint \
	bench-mcount fuzz bench bench-deps bench-progs bench-readme \
	checkpatch install uninstall install-dkms uninstall-dkms package-check clean

SEED		?=
PREFIX		?= /usr/local
LIBDIR		?= $(PREFIX)/lib
BINDIR		?= $(PREFIX)/bin
INCLUDEDIR	?= $(PREFIX)/include
MANDIR		?= $(PREFIX)/share/man
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions

all: module lib tools selftests

module:
	$(if $(KDIR),,$(error $(NO_KDIR)))
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# --- libprofil ---------------------------------------------------------
lib: lib/libprofil.so.$(SOVERSION) lib/libprofil.so lib/libprofil.a \
     lib/libprofil.pc

LIB_FILE_CFLAGS	= $(if $(filter $<,$(GENREGS_SRCS)),-mgeneral-regs-only)

lib/%.o: lib/%.c $(LIB_HDRS)
	$(CC) $(LIB_CPPFLAGS) $(LIB_CFLAGS) $(LIB_FILE_CFLAGS) -c -o $@ $<

lib/%.os: lib/%.c $(LIB_HDRS)
	$(CC) $(LIB_CPPFLAGS) $(LIB_CFLAGS) $(LIB_FILE_CFLAGS) \
		$(if $(filter $<,$(NO_LTO_SRCS)),-fno-lto) \
		-fPIC -DPROFIL_SHARED -c -o $@ $<

# CFLAGS too: -fcf-protection marks the object for IBT and SHSTK (<cet.h>).
lib/%.o: lib/%.S
	$(CC) $(CPPFLAGS) $(CFLAGS) $(ASFLAGS) -c -o $@ $<

lib/%.os: lib/%.S
	$(CC) $(CPPFLAGS) $(CFLAGS) $(ASFLAGS) -fPIC -DPROFIL_SHARED -c -o $@ $<

# The symbol map, with the GLIBC_2.2.5 node only where the aliases are.
lib/libprofil.ver: lib/libprofil.map
	$(CC) $(CPPFLAGS) -E -P -x c -o $@ $<

lib/libprofil.so.$(SOVERSION): $(LIB_SOBJS) lib/libprofil.ver
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(LIB_SOBJS) \
		-Wl,-soname,libprofil.so.$(SOVERSION) \
		-Wl,--version-script=lib/libprofil.ver -Wl,-z,defs

lib/libprofil.so: lib/libprofil.so.$(SOVERSION)
	ln -sf libprofil.so.$(SOVERSION) $@

lib/libprofil.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

# PC_SUBST: the .pc for the PREFIX, LIBDIR and INCLUDEDIR given now.
PC_SUBST	= sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(LIBDIR)|' \
		      -e 's|@includedir@|$(INCLUDEDIR)|' -e 's|@version@|$(VERSION)|'

lib/libprofil.pc: lib/libprofil.pc.in
	$(PC_SUBST) $< > $@

# The library, its headers (the uapi one too), pkg-config file (written for
# the PREFIX/LIBDIR/INCLUDEDIR of this call), man pages with a link for
# every other name in a page's NAME section, profil(1) and its agent (in
# LIBDIR/profil, where the command looks for it), its bash completion.
# make uninstall removes exactly these.
MAN_PAGES	:= $(wildcard man/*.[1-9])
# MAN_LINKS: manN/NAME.N=PAGE.N, one per name a page documents besides its own.
MAN_LINKS	:= $(shell awk 'FNR == 1 { p = FILENAME; sub(/.*\//, "", p); \
			s = p; sub(/.*\./, "", s); n = 0 } \
		/^\.Sh/ { n = ($$2 == "NAME") ; next } \
		n && /^\.Nm/ && $$2 "." s != p { print "man" s "/" $$2 "." s "=" p }' \
		$(MAN_PAGES))
HEADERS		:= lib/include/profil.h lib/include/mon.h lib/include/pcsample.h
INSTALLED	:= $(LIBDIR)/libprofil.so.$(SOVERSION) $(LIBDIR)/libprofil.so \
		   $(LIBDIR)/libprofil.a $(LIBDIR)/pkgconfig/libprofil.pc \
		   $(addprefix $(INCLUDEDIR)/,$(notdir $(HEADERS))) \
		   $(INCLUDEDIR)/linux/profil.h \
		   $(BINDIR)/profil $(LIBDIR)/profil/profil-agent.so \
		   $(LIBDIR)/profil/profil-agent32.so $(BASHCOMPDIR)/profil \
		   $(foreach m,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) \
		   $(foreach l,$(MAN_LINKS),$(MANDIR)/$(firstword $(subst =, ,$(l))))

install: lib tools
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/linux \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/profil $(DESTDIR)$(BASHCOMPDIR) \
		$(addprefix $(DESTDIR)$(MANDIR)/man,$(sort $(subst .,,$(suffix $(MAN_PAGES)))))
	install -m 755 lib/libprofil.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libprofil.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libprofil.so
	install -m 644 lib/libprofil.a $(DESTDIR)$(LIBDIR)/
	$(PC_SUBST) lib/libprofil.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libprofil.pc
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 uapi/linux/profil.h $(DESTDIR)$(INCLUDEDIR)/linux/
	for p in $(MAN_PAGES); do \
		install -m 644 $$p $(DESTDIR)$(MANDIR)/man$${p##*.}/ || exit 1; done
	for l in $(MAN_LINKS); do \
		ln -sf $${l#*=} $(DESTDIR)$(MANDIR)/$${l%%=*} || exit 1; done
	install -m 755 $(BUILD)/tools/profil $(DESTDIR)$(BINDIR)/
	install -m 644 $(BUILD)/tools/profil-agent.so $(BUILD)/tools/profil-agent32.so \
		$(DESTDIR)$(LIBDIR)/profil/
	install -m 644 tools/profil.bash-completion $(DESTDIR)$(BASHCOMPDIR)/profil

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(LIBDIR)/profil

# The module's source where dkms looks for it (dkms install profil/VERSION
# then builds it for the running kernel) and, off by default, its
# modules-load.d(5) snippet.
SYSCONFDIR	?= /etc
DKMS_VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
DKMS_SRC	= $(DESTDIR)/usr/src/profil-$(VERSION)

install-dkms:
	$(if $(filter $(VERSION),$(DKMS_VERSION)),,$(error dkms.conf has version $(DKMS_VERSION), the Makefile $(VERSION)))
	install -d $(DKMS_SRC)/kmod $(DKMS_SRC)/uapi/linux \
		$(DESTDIR)$(SYSCONFDIR)/modules-load.d
	install -m 644 dkms.conf Kbuild $(DKMS_SRC)/
	install -m 644 kmod/Kbuild $(KMOD_SRCS) $(DKMS_SRC)/kmod/
	install -m 644 uapi/linux/profil.h $(DKMS_SRC)/uapi/linux/
	install -m 644 kmod/modules-load.conf \
		$(DESTDIR)$(SYSCONFDIR)/modules-load.d/profil.conf

uninstall-dkms:
	rm -rf $(DKMS_SRC)
	rm -f $(DESTDIR)$(SYSCONFDIR)/modules-load.d/profil.conf

# Debian packages from a copy of the tracked files (build/package), lintian,
# then their contents used: dkms builds for every kernel, a -pg program
# built against them with pkg-config, run in a guest (KVER, default the
# oldest kernel) with the dkms-built module, read with gprof.
package-check:
	scripts/deps.sh package
	scripts/package-check.sh $(KVER)

# --- profil(1) -----------------------------------------------------------
tools: $(TOOLS)

$(BUILD)/tools:
	mkdir -p $@

# The agent: libc only, nothing exported but the audit interface (la_*);
# every symbol bound at load (-z now), so that no forked child binds one
# again, at the cost of page faults, in its copy.  Frame pointers, so that
# perf record -g can tell the agent's work in a program from the
# program's (profil_cmd_test's real_* tests leave it out of perf's share).
$(BUILD)/tools/profil-agent.so: tools/agent.c tools/profile-file.h uapi/linux/profil.h | $(BUILD)/tools
	$(CC) $(TOOL_CFLAGS) -fPIC -fvisibility=hidden -shared $(LDFLAGS) \
		-fno-omit-frame-pointer -o $@ $< -pthread -Wl,-z,defs -Wl,-z,now

# The 32-bit programs' stub (agent32.c): nothing but la_version().
$(BUILD)/tools/profil-agent32.so: tools/agent32.c | $(BUILD)/tools
	$(CC) -m32 $(CFLAGS) $(WARN) -fPIC -fvisibility=hidden -shared -nostdlib \
		$(LDFLAGS) -o $@ $<

# -f pprof: pprof's profile.proto (tools/profile.proto) through protoc-c.
PROTO_GEN	:= $(BUILD)/tools/profile.pb-c.c $(BUILD)/tools/profile.pb-c.h
REPORT_SRCS	:= tools/report.c tools/pprof.c tools/perfmap.c tools/record.c \
		   $(BUILD)/tools/profile.pb-c.c
REPORT_DEPS	:= $(REPORT_SRCS) $(PROTO_GEN) tools/profil.h tools/profile-file.h \
		   lib/gmon-bsd.h
REPORT_LIBS	:= -ldw -lelf -lstdc++ -lprotobuf-c -lz -lm

$(BUILD)/tools/profile.pb-c.c: tools/profile.proto | $(BUILD)/tools
	protoc-c --proto_path=tools --c_out=$(BUILD)/tools $<
$(BUILD)/tools/profile.pb-c.h: $(BUILD)/tools/profile.pb-c.c

$(BUILD)/tools/profil: tools/profil.c tools/attach.c $(REPORT_DEPS) uapi/linux/profil.h | $(BUILD)/tools
	$(CC) $(TOOL_CFLAGS) -I$(BUILD)/tools \
		-DAGENT_PATH='"$(LIBDIR)/profil/profil-agent.so"' \
		$(LDFLAGS) -o $@ tools/profil.c tools/attach.c $(REPORT_SRCS) $(REPORT_LIBS)

# --- selftests -----------------------------------------------------------
$(HARNESS_DIR)/kselftest_harness.h:
	scripts/linux-source.sh $(BUILD)

# profil(1)'s report on profile files made by the test: on the host.
HOST_TESTS	:= $(BUILD)/selftests/report_test
$(BUILD)/selftests/report_test: selftests/report_test.c $(REPORT_DEPS) $(HARNESS_DIR)/kselftest_harness.h | $(BUILD)/selftests
	$(CC) $(TEST_CFLAGS) -Itools -I$(BUILD)/tools -o $@ $< $(REPORT_SRCS) $(REPORT_LIBS)

selftests: $(TESTS) $(DEMO) $(BENCH) $(TOOLS) $(HOST_TESTS)

# Programs relink when the library changes, not on every make.
LIB_FILES	:= lib/libprofil.so lib/libprofil.a

$(BUILD)/selftests $(BUILD)/demo $(BUILD)/bench:
	mkdir -p $@

$(BUILD)/selftests/%: selftests/%.c selftests/common.h selftests/failnth.h $(HARNESS_DIR)/kselftest_harness.h $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(TEST_CFLAGS) -o $@ $< -Llib -lprofil

GMON_CFLAGS	:= $(CFLAGS) -Wall -pthread -pg -Iuapi
$(BUILD)/selftests/gmon_test $(BUILD)/selftests/nomod_test: selftests/gmon.h
$(BUILD)/selftests/fuzz_test: selftests/fuzz_ref.h
$(BUILD)/selftests/gmon_subject: selftests/gmon_subject.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(GMON_CFLAGS) -o $@ $< -Llib -lprofil
$(BUILD)/selftests/gmon_subject_static: selftests/gmon_subject.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(GMON_CFLAGS) -static -o $@ $< -Llib -lprofil
$(BUILD)/selftests/gmon_subject_nopie: selftests/gmon_subject.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(GMON_CFLAGS) -no-pie -o $@ $< -Llib -lprofil
$(BUILD)/selftests/gmon_subject_fentry: selftests/gmon_subject.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(GMON_CFLAGS) -mfentry -o $@ $< -Llib -lprofil
# glibc's sprofil, for LD_PRELOAD=libprofil.so.0 (sprofil_test).
$(BUILD)/selftests/sprofil_probe_glibc: selftests/sprofil_probe.c | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -Iuapi -o $@ $<
# Set-user-ID root in the guest (static: ld.so ignores LD_LIBRARY_PATH there).
$(BUILD)/selftests/gmon_subject_setuid: $(BUILD)/selftests/gmon_subject_static
	cp $< $@
$(BUILD)/selftests/gmon_subject_glibc: selftests/gmon_subject.c | $(BUILD)/selftests
	$(CC) $(GMON_CFLAGS) -o $@ $<
$(BUILD)/selftests/gmon_monitor: selftests/gmon_subject.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -pthread -Iuapi -o $@ $< -Llib -lprofil

# profil(1)'s subject: no -pg, no libprofil; exported functions (-rdynamic)
# so that the stripped copy keeps their names in .dynsym.
$(BUILD)/selftests/libcmd_%.so: selftests/cmd_%_lib.c selftests/cmd_work.h | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -fPIC -shared -o $@ $<
$(BUILD)/selftests/cmd_subject: selftests/cmd_subject.c selftests/cmd_work.h $(BUILD)/selftests/libcmd_split.so
	$(CC) $(CFLAGS) -Wall -pthread -rdynamic -o $@ $< \
		-L$(BUILD)/selftests -lcmd_split -Wl,-rpath,'$$ORIGIN'
# The same under AddressSanitizer, whose runtime must come first.
$(BUILD)/selftests/cmd_subject_asan: selftests/cmd_subject.c selftests/cmd_work.h $(BUILD)/selftests/libcmd_split.so
	$(CC) $(CFLAGS) -Wall -pthread -rdynamic -fsanitize=address -o $@ $< \
		-L$(BUILD)/selftests -lcmd_split -Wl,-rpath,'$$ORIGIN'
$(BUILD)/selftests/cmd_subject_stripped: $(BUILD)/selftests/cmd_subject
	strip -o $@ $<
# 32-bit and dynamic, against libc6-i386's libc.so.6 alone (no -dev needed).
$(BUILD)/selftests/cmd_subject32: selftests/cmd_subject32.c | $(BUILD)/selftests
	$(CC) -m32 $(CFLAGS) -Wall -fno-pie -no-pie -nostdlib -o $@ $< \
		/lib32/libc.so.6 -Wl,--dynamic-linker=/lib/ld-linux.so.2,-e,start

$(BUILD)/selftests/cmd_subject_static: selftests/cmd_subject.c selftests/cmd_split_lib.c selftests/cmd_work.h | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -pthread -static -DCMD_STATIC -o $@ selftests/cmd_subject.c \
		selftests/cmd_split_lib.c
$(BUILD)/selftests/cmd_subject_cxx: selftests/cmd_subject_cxx.cc selftests/cmd_work.h | $(BUILD)/selftests
	$(CXX) $(CFLAGS) -Wall -o $@ $<
# A plugin host that finds its plugin through its RUNPATH only.
$(BUILD)/selftests/cmd_plughost: selftests/cmd_plughost.c selftests/cmd_work.h | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -o $@ $< -Wl,--enable-new-dtags,-rpath,'$$ORIGIN/plug'
# profil_cmd_test reads -f pprof with protoc-c's code and zlib.
$(BUILD)/selftests/profil_cmd_test: selftests/profil_cmd_test.c selftests/common.h selftests/gmon.h $(PROTO_GEN) $(HARNESS_DIR)/kselftest_harness.h $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(TEST_CFLAGS) -I$(BUILD)/tools -o $@ $< $(BUILD)/tools/profile.pb-c.c \
		-Llib -lprofil -lprotobuf-c -lz

# The same probe, bound to libprofil three ways (see selftests/probe.c).
$(BUILD)/selftests/probe_dynamic: selftests/probe.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -Iuapi -o $@ $< -Llib -lprofil

$(BUILD)/selftests/probe_static: selftests/probe.c $(LIB_FILES) | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -Iuapi -static -o $@ $< lib/libprofil.a

$(BUILD)/selftests/probe_glibc: selftests/probe.c | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -Iuapi -o $@ $<

$(BUILD)/selftests/perfhold: selftests/perfhold.c | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -o $@ $<

$(BUILD)/selftests/runas: selftests/runas.c | $(BUILD)/selftests
	$(CC) $(CFLAGS) -Wall -o $@ $<

$(BUILD)/selftests/pinsheld: selftests/pinsheld.c selftests/common.h | $(BUILD)/selftests
	$(CC) $(TEST_CFLAGS) -o $@ $<

# One source, three builds: no -pg, -pg with glibc, -pg with libprofil.
$(BUILD)/bench/mcount-none: bench/mcount.c | $(BUILD)/bench
	$(CC) $(CFLAGS) -Wall -pthread -o $@ $<
$(BUILD)/bench/mcount-glibc: bench/mcount.c | $(BUILD)/bench
	$(CC) $(CFLAGS) -Wall -pthread -pg -DPROFILED -o $@ $<
$(BUILD)/bench/mcount-libprofil: bench/mcount.c $(LIB_FILES) | $(BUILD)/bench
	$(CC) $(CFLAGS) -Wall -pthread -pg -DPROFILED -o $@ $< -Llib -lprofil

bench-mcount: lib $(MCOUNT_BENCH)
	bench/mcount.sh

$(BUILD)/bench/%: bench/%.c | $(BUILD)/bench
	$(CC) $(CFLAGS) -Wall -Iuapi -o $@ $<

# --- make bench ------------------------------------------------------------
# The guest's programs (bench/guest.sh): the workloads (non-PIE, so PCs
# from perf and BPF map onto its functions), the CPU-time launcher, the
# libbpf sampler, the kernel-memory probe, and bench-mcount's three builds.
BENCH_PROGS	:= $(addprefix $(BUILD)/bench/,work cputree bpfsample sessmem threads) \
		   $(BENCH) $(MCOUNT_BENCH) $(DEMO) $(TOOLS) \
		   $(BUILD)/selftests/perfhold $(BUILD)/selftests/runas

$(BUILD)/bench/work $(BUILD)/bench/threads: bench/nulltimer.h
$(BUILD)/bench/threads $(BUILD)/bench/regions: bench/marks.h
$(BUILD)/bench/work: bench/work.c | $(BUILD)/bench
	$(CC) $(CFLAGS) -Wall -Wextra -pthread -no-pie -Iuapi -o $@ $<

$(BUILD)/bench/bpfsample.bpf.o: bench/bpfsample.bpf.c | $(BUILD)/bench
	clang -O2 -g -Wall -target bpf -I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

$(BUILD)/bench/bpfsample.skel.h: $(BUILD)/bench/bpfsample.bpf.o
	bpftool gen skeleton $< name bpfsample > $@

$(BUILD)/bench/bpfsample: bench/bpfsample.c $(BUILD)/bench/bpfsample.skel.h
	$(CC) $(CFLAGS) -Wall -Wextra -I$(BUILD)/bench -o $@ $< -lbpf

bench-deps:
	scripts/deps.sh bench

bench-progs: lib $(BENCH_PROGS)

bench: bench-deps
	$(MAKE) bench-progs
	bench/run.sh $(KVER)

bench-readme:
	bench/readme.sh

$(BUILD)/demo/hotspots: scripts/hotspots.c $(LIB_FILES) | $(BUILD)/demo
	$(CC) $(CFLAGS) -Wall -Ilib/include -rdynamic -o $@ $< -Llib -lprofil -ldl

# gcc -pg with libprofil: what a user of gprof builds.
$(BUILD)/demo/callgraph: demo/callgraph.c $(LIB_FILES) | $(BUILD)/demo
	$(CC) $(CFLAGS) -Wall -pg -o $@ $< -Llib -lprofil

# The same program unmodified (no -pg, no libprofil), for profil(1).
$(BUILD)/demo/callgraph-plain: demo/callgraph.c | $(BUILD)/demo
	$(CC) $(CFLAGS) -Wall -o $@ $<

# --- the two commands ----------------------------------------------------
deps:
	scripts/deps.sh

check: deps
	$(MAKE) lib selftests
	scripts/check.sh

# The selftests under a KASAN + lockdep + kmemleak kernel built once from
# Debian's linux-source-$(DEBUG_KERNEL) into ~/.cache/profil-debug-kernel
# (6.1; -6.12 for 6.12; PROFIL_DEBUG_CACHE): 40 min or more the first time
# on 2 cores.
DEBUG_KERNEL	?= 6.1
check-debug: deps
	[ "$(DEBUG_KERNEL)" = 6.1 ] || scripts/deps.sh linux-source-$(DEBUG_KERNEL)
	$(MAKE) lib selftests
	DEBUG_KERNEL=$(DEBUG_KERNEL) scripts/check-debug.sh

# The fuzzer alone, in a guest of each kernel: SEED=n replays the run that
# printed seed n; without it each run draws its own (as in make check).
fuzz: deps
	$(MAKE) lib selftests
	GUEST_TESTS=fuzz_test GUEST_NOMOD_TESTS= PROFIL_FUZZ_SEED=$(SEED) \
		scripts/check.sh

# The harness checked on canned guest logs, on the host (check.sh runs it).
check-harness: $(HARNESS_DIR)/kselftest_harness.h
	scripts/check-harness.sh

demo: deps
	$(MAKE) lib selftests
	scripts/demo.sh

# --- lint ----------------------------------------------------------------
checkpatch: $(HARNESS_DIR)/kselftest_harness.h
	perl $(BUILD)/checkpatch/checkpatch.pl --no-tree --strict --terse \
		-f $(KMOD_SRCS) uapi/linux/profil.h

lint: checkpatch
	for k in $$(scripts/kernels.sh); do scripts/build-kmod.sh $$k || exit 1; done
	mandoc -Tlint -W warning man/*.[0-9]

clean:
	rm -rf $(BUILD) lib/*.o lib/*.os lib/*.so* lib/*.a lib/*.pc lib/*.ver
	rm -f kmod/*.o kmod/*.ko kmod/*.mod* kmod/.*.cmd kmod/modules.order \
	      .*.cmd *.symvers modules.order kmod/Module.symvers
