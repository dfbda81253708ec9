// The verifier's own figures for each program of a BPF object: load every program with log level 4
// (statistics only) and print its stack depth and processed instructions against the kernel's
// 1,000,000 limit, the headroom every scan change spends. Maps pinned by name go to PIN_ROOT (a
// fresh directory in bpffs) and are unpinned before exit.
// Usage: verifier-stats OBJECT PIN_ROOT
#include <bpf/libbpf.h>
#include <stdio.h>

#define MAX_PROGRAMS 16
#define LOG_SIZE 65536

static char logs[MAX_PROGRAMS][LOG_SIZE];

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s OBJECT PIN_ROOT\n", argv[0]);
		return 64;
	}
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = argv[2]);
	struct bpf_object *obj = bpf_object__open_file(argv[1], &opts);
	if (!obj) {
		perror("bpf_object__open_file");
		return 1;
	}
	struct bpf_program *prog;
	int n = 0;
	bpf_object__for_each_program(prog, obj) {
		if (n == MAX_PROGRAMS)
			break;
		bpf_program__set_log_level(prog, 4);
		bpf_program__set_log_buf(prog, logs[n], LOG_SIZE);
		n++;
	}
	int err = bpf_object__load(obj);
	if (err)
		fprintf(stderr, "bpf_object__load: %d (the failing program's log is printed below)\n", err);
	n = 0;
	bpf_object__for_each_program(prog, obj) {
		if (n == MAX_PROGRAMS)
			break;
		printf("== %s\n%s", bpf_program__name(prog), logs[n]);
		n++;
	}
	bpf_object__unpin_maps(obj, NULL);
	bpf_object__close(obj);
	return err ? 2 : 0;
}
