package io.nexuscore.kernel.libbpf;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.Delegate;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.byref.NumberByReference;
import jnr.ffi.types.size_t;

/**
 * The libbpf 1.1 calls NexusCore uses (Debian's libbpf.so.1), bound with jnr-ffi. Pointer-returning
 * calls return NULL and set errno; int-returning calls return a negative errno. Go through
 * {@link Native} to turn either into a {@link BpfException}.
 *
 * <p>Option structs are passed as raw memory with the offsets libbpf.h/bpf.h define; each starts
 * with {@code size_t sz} (see {@link Opts}).
 */
public interface LibBpf {

    /** {@code libbpf_print_fn_t}: level, format, va_list (x86-64: a pointer to the va_list tag). */
    interface PrintFn {
        @Delegate
        int print(int level, Pointer format, Pointer args);
    }

    Pointer libbpf_set_print(PrintFn fn);

    int libbpf_num_possible_cpus();

    Pointer bpf_object__open_file(String path, Pointer opts);

    int bpf_object__load(Pointer obj);

    void bpf_object__close(Pointer obj);

    Pointer bpf_object__find_program_by_name(Pointer obj, String name);

    Pointer bpf_object__find_map_by_name(Pointer obj, String name);

    Pointer bpf_object__next_map(Pointer obj, Pointer prev);

    Pointer bpf_object__next_program(Pointer obj, Pointer prev);

    String bpf_program__name(Pointer prog);

    int bpf_program__fd(Pointer prog);

    /** Attaches by the program's SEC() (tracepoints, tp_btf, kprobes); NULL + errno on failure. */
    Pointer bpf_program__attach(Pointer prog);

    int bpf_link__destroy(Pointer link);

    int bpf_map__fd(Pointer map);

    String bpf_map__name(Pointer map);

    boolean bpf_map__is_internal(Pointer map);

    int bpf_map__set_pin_path(Pointer map, String path);

    /** Non-NULL for maps declared with LIBBPF_PIN_BY_NAME (libbpf defaults it to /sys/fs/bpf/NAME). */
    Pointer bpf_map__pin_path(Pointer map);

    Pointer bpf_map__initial_value(Pointer map, NumberByReference size);

    /** The definition an opened (not yet loaded) object holds: what libbpf compares with a pin it reuses. */
    int bpf_map__type(Pointer map);

    int bpf_map__key_size(Pointer map);

    int bpf_map__value_size(Pointer map);

    int bpf_map__max_entries(Pointer map);

    int bpf_map__map_flags(Pointer map);

    /** BPF_LINK_CREATE; {@code targetFd} is the ifindex for XDP and tcx links. Returns the link's fd. */
    int bpf_link_create(int progFd, int targetFd, int attachType, Pointer opts);

    int bpf_link_update(int linkFd, int newProgFd, Pointer opts);

    int bpf_link_detach(int linkFd);

    int bpf_map_lookup_elem(int fd, @In byte[] key, @Out byte[] value);

    /** Same call, on native buffers the caller keeps: no per-call array marshalling (hot path). */
    int bpf_map_lookup_elem(int fd, Pointer key, Pointer value);

    int bpf_map_update_elem(int fd, @In byte[] key, @In byte[] value, long flags);

    int bpf_map_delete_elem(int fd, @In byte[] key);

    int bpf_map_get_next_key(int fd, @In byte[] key, @Out byte[] nextKey);

    int bpf_obj_get(String path);

    /** BPF_ENABLE_STATS: run-time stats on while the returned fd is open (closed at exit, crash included). */
    int bpf_enable_stats(int type);

    int BPF_STATS_RUN_TIME = 0;

    int bpf_map_get_fd_by_id(int id);

    int bpf_obj_get_info_by_fd(int fd, Pointer info, IntByReference infoLength);

    int bpf_prog_test_run_opts(int progFd, Pointer opts);

    /** {@code ring_buffer_sample_fn}: ctx, sample, size; a non-zero return stops the poll. */
    interface RingBufferSampleFn {
        @Delegate
        int sample(Pointer ctx, Pointer data, @size_t long size);
    }

    Pointer ring_buffer__new(int mapFd, RingBufferSampleFn sample, Pointer ctx, Pointer opts);

    /** Number of samples consumed, or a negative errno (-EINTR on a signal). */
    int ring_buffer__poll(Pointer rb, int timeoutMs);

    void ring_buffer__free(Pointer rb);

    Pointer user_ring_buffer__new(int mapFd, Pointer opts);

    /** NULL with errno ENOSPC when the ring is full; not thread-safe (callers serialize). */
    Pointer user_ring_buffer__reserve(Pointer rb, int size);

    void user_ring_buffer__submit(Pointer rb, Pointer sample);

    void user_ring_buffer__free(Pointer rb);

    /** The process-wide binding, loaded on first use. */
    static LibBpf get() {
        return Holder.LIB;
    }

    static Runtime runtime() {
        return Holder.RUNTIME;
    }

    final class Holder {
        private static final LibBpf LIB = LibraryLoader.create(LibBpf.class).load("bpf");
        private static final Runtime RUNTIME = Runtime.getRuntime(LIB);

        private Holder() {
        }
    }
}
