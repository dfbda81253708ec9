package io.nexuscore.kernel.libbpf;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * A map opened from its bpffs pin: its own fd, so it stays usable across program reloads.
 * Byte-level access; the typed classes (ScoreThresholdsMap, ...) encode and decode.
 */
public final class BpfMap implements AutoCloseable {

    public static final long BPF_ANY = 0;
    public static final long BPF_NOEXIST = 1;
    public static final long BPF_EXIST = 2;

    private final String name;
    private final int fd;
    private final int keySize;
    private final int valueSize;

    private BpfMap(String name, int fd, int keySize, int valueSize) {
        this.name = name;
        this.fd = fd;
        this.keySize = keySize;
        this.valueSize = valueSize;
    }

    /** Opens {@code pinDir/name}; valueSize is per CPU for per-CPU maps (see {@link #perCpu}). */
    public static BpfMap openPinned(Path pinDir, String name, int keySize, int valueSize) {
        return new BpfMap(name, PinDirectory.open(pinDir, name), keySize, valueSize);
    }

    /** Takes ownership of {@code fd} (closed by {@link #close}). */
    static BpfMap ownFd(String name, int fd, int keySize, int valueSize) {
        return new BpfMap(name, fd, keySize, valueSize);
    }

    /** What the kernel says about the map (struct bpf_map_info, uapi/linux/bpf.h). */
    public record Info(int type, int id, int keySize, int valueSize, int maxEntries, int flags, String name) {
    }

    public Info info() {
        Pointer info = Memory.allocateDirect(LibBpf.runtime(), MAP_INFO_SIZE, true);
        jnr.ffi.byref.IntByReference length = new jnr.ffi.byref.IntByReference(MAP_INFO_SIZE);
        Native.check(LibBpf.get().bpf_obj_get_info_by_fd(fd, info, length), "bpf_obj_get_info_by_fd", name);
        byte[] rawName = new byte[16];
        info.get(MAP_INFO_NAME, rawName, 0, rawName.length);
        int end = 0;
        while (end < rawName.length && rawName[end] != 0) {
            end++;
        }
        return new Info(info.getInt(0), info.getInt(4), info.getInt(8), info.getInt(12), info.getInt(16), info.getInt(20),
                new String(rawName, 0, end, java.nio.charset.StandardCharsets.US_ASCII));
    }

    /** sizeof(struct bpf_map_info) on 6.x kernels; a larger buffer is fine, the kernel fills what it knows. */
    private static final int MAP_INFO_SIZE = 96;
    /** bpf_map_info.name, char[16] (BPF_OBJ_NAME_LEN). */
    private static final int MAP_INFO_NAME = 24;

    /** What a lookup of a per-CPU map returns for a value of {@code valueSize} (see {@link #perCpu}). */
    public static int perCpuSize(int valueSize) {
        return perCpu(valueSize);
    }

    /** Per-CPU maps hand back ncpu slots, each value rounded up to 8 bytes. */
    public static int perCpu(int valueSize) {
        return LibBpf.get().libbpf_num_possible_cpus() * ((valueSize + 7) & ~7);
    }

    public String name() {
        return name;
    }

    public int fd() {
        return fd;
    }

    public Optional<byte[]> lookup(byte[] key) {
        byte[] value = new byte[valueSize];
        int rc = LibBpf.get().bpf_map_lookup_elem(fd, requireKey(key), value);
        if (rc == -Errno.ENOENT) {
            return Optional.empty();
        }
        Native.check(rc, "bpf_map_lookup_elem", name);
        return Optional.of(value);
    }

    /** Per-thread native key/value buffers for {@link #lookupDirect}. */
    private final ThreadLocal<Pointer[]> buffers = ThreadLocal.withInitial(this::allocateBuffers);

    private Pointer[] allocateBuffers() {
        return new Pointer[] {Memory.allocateDirect(LibBpf.runtime(), keySize), Memory.allocateDirect(LibBpf.runtime(), valueSize)};
    }

    /**
     * Hot-path lookup: key and value go through per-thread native buffers instead of marshalled
     * Java arrays. Returns the value bytes, or null when the key is absent.
     */
    public byte[] lookupDirect(byte[] key) {
        Pointer[] kv = buffers.get();
        kv[0].put(0, requireKey(key), 0, keySize);
        int rc = LibBpf.get().bpf_map_lookup_elem(fd, kv[0], kv[1]);
        if (rc == -Errno.ENOENT) {
            return null;
        }
        Native.check(rc, "bpf_map_lookup_elem", name);
        byte[] value = new byte[valueSize];
        kv[1].get(0, value, 0, valueSize);
        return value;
    }

    public void update(byte[] key, byte[] value, long flags) {
        if (value.length != valueSize) {
            throw new IllegalArgumentException(name + ": value is " + value.length + " bytes, map wants " + valueSize);
        }
        Native.check(LibBpf.get().bpf_map_update_elem(fd, requireKey(key), value, flags), "bpf_map_update_elem", name);
    }

    /** True when the key was there. */
    public boolean delete(byte[] key) {
        int rc = LibBpf.get().bpf_map_delete_elem(fd, requireKey(key));
        if (rc == -Errno.ENOENT) {
            return false;
        }
        Native.check(rc, "bpf_map_delete_elem", name);
        return true;
    }

    /** All keys at the time of the walk (entries may come and go meanwhile: it is a live map). */
    public List<byte[]> keys() {
        List<byte[]> keys = new ArrayList<>();
        byte[] current = null;
        while (true) {
            byte[] next = new byte[keySize];
            int rc = LibBpf.get().bpf_map_get_next_key(fd, current, next);
            if (rc == -Errno.ENOENT) {
                return keys;
            }
            Native.check(rc, "bpf_map_get_next_key", name);
            keys.add(next);
            current = next;
        }
    }

    private byte[] requireKey(byte[] key) {
        if (key.length != keySize) {
            throw new IllegalArgumentException(name + ": key is " + key.length + " bytes, map wants " + keySize);
        }
        return key;
    }

    @Override
    public void close() {
        LibC.get().close(fd);
    }
}
