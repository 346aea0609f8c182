// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of bench/bpfsample: on each CPU clock overflow, if the
 * current task belongs to the target process, count its user PC (the
 * task's user registers when the tick lands in the kernel, as profil.ko
 * charges it) in a bin of a BPF array map: 2 bytes of text a bin from
 * 'lo', as profil's scale 0x10000; one more slot for PCs outside.  Every
 * overflow on every CPU, whatever runs there, is counted in a per-CPU
 * map: the ticks the sampler takes in all.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define NBINS	4096

const volatile __u32 target_tgid;
const volatile __u64 lo;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NBINS + 1);
	__type(key, __u32);
	__type(value, __u64);
} bins SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ticks SEC(".maps");

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;
	__u64 pc, *bin;
	__u32 idx = 0;

	bin = bpf_map_lookup_elem(&ticks, &idx);
	if (bin)
		(*bin)++;
	idx = NBINS;
	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	if (ctx->regs.cs & 3) {
		pc = ctx->regs.rip;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		if (bpf_probe_read_kernel(&pc, sizeof(pc), &regs->rip))
			pc = 0;
	}
	if (pc >= lo && pc - lo < 2 * NBINS)
		idx = (pc - lo) >> 1;
	bin = bpf_map_lookup_elem(&bins, &idx);
	if (bin)
		__sync_fetch_and_add(bin, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
