package io.nexuscore.kernel.libbpf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import jnr.ffi.Pointer;
import jnr.ffi.byref.NumberByReference;
import jnr.ffi.TypeAlias;

/**
 * An opened-then-loaded libbpf {@code bpf_object}. Lifecycle: {@link #open}, {@link #pinMapsUnder}
 * and {@link #writeRodata} (before load), {@link #load}, then {@link #program} fds; {@link #close}
 * unloads the programs (attachments and pinned maps keep their own references).
 */
public final class BpfObject implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(BpfObject.class.getName());

    private final String name;
    private Pointer obj;

    private BpfObject(String name, Pointer obj) {
        this.name = name;
        this.obj = obj;
    }

    public static BpfObject open(Path file) {
        LibBpfLog.install();
        Pointer obj = Native.check(LibBpf.get().bpf_object__open_file(file.toString(), null),
                "bpf_object__open_file", file.toString());
        return new BpfObject(file.getFileName().toString(), obj);
    }

    /**
     * Every map the C declares with LIBBPF_PIN_BY_NAME gets pinDir/name instead of libbpf's default
     * /sys/fs/bpf/name: libbpf reuses an existing pin, else pins after creating the map.
     */
    public void pinMapsUnder(Path pinDir) {
        LibBpf lib = LibBpf.get();
        for (Pointer map = lib.bpf_object__next_map(obj, null); map != null && map.address() != 0;
                map = lib.bpf_object__next_map(obj, map)) {
            Pointer defaultPin = lib.bpf_map__pin_path(map);
            if (lib.bpf_map__is_internal(map) || defaultPin == null || defaultPin.address() == 0) {
                continue;
            }
            String mapName = lib.bpf_map__name(map);
            Path pin = PinDirectory.pin(pinDir, mapName); // libbpf's reuse follows links: refuse one first
            if (Files.exists(pin, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                reuseOrReplace(map, mapName, pin);
            }
            Native.check(lib.bpf_map__set_pin_path(map, pin.toString()), "bpf_map__set_pin_path", mapName);
        }
    }

    /**
     * Maps that hold only per-connection verdicts: a stale pin of one is replaced, not refused. Its
     * contents are rebuilt by the next packet of every connection (until then the Java scorer serves
     * it), while the other maps hold what an operator set (thresholds, tenants, adaptive settings).
     */
    static final Set<String> VERDICT_MAPS = Set.of("verdict_slots", "verdict_slots6", "routing_decisions", "routing_decisions6");

    /**
     * libbpf reuses a pin only when type, key and value size, max_entries and flags all match the
     * object's definition, and otherwise fails the whole load with a bare EINVAL. Checked here first
     * so that a pin left by a build with other map sizes (the verdict store's changed on 2026-12-02)
     * is either replaced (a verdict map, {@link #VERDICT_MAPS}, with a warning) or names the map, both
     * definitions and the way out.
     */
    private void reuseOrReplace(Pointer map, String mapName, Path pin) {
        LibBpf lib = LibBpf.get();
        String want = definition(lib.bpf_map__type(map), lib.bpf_map__key_size(map), lib.bpf_map__value_size(map),
                lib.bpf_map__max_entries(map), lib.bpf_map__map_flags(map));
        String have;
        try (BpfMap pinned = BpfMap.openPinned(pin.getParent(), pin.getFileName().toString(), 0, 0)) {
            BpfMap.Info info = pinned.info();
            have = definition(info.type(), info.keySize(), info.valueSize(), info.maxEntries(), info.flags());
        }
        if (have.equals(want)) {
            return;
        }
        if (VERDICT_MAPS.contains(mapName)) {
            LOG.log(System.Logger.Level.WARNING,
                    "replacing the map pinned at {0}, made by another build ({1}; this build wants {2}): it holds "
                            + "only per-connection verdicts, rebuilt by each connection''s next request", pin, have, want);
            try {
                Files.delete(pin);
            } catch (IOException e) {
                throw new IllegalStateException("could not remove the stale pin " + pin + ": " + e.getMessage(), e);
            }
            return;
        }
        throw new IllegalStateException("the map pinned at " + pin + " was made by another build (" + have
                + "; this build's " + name + " wants " + want + "): stop the router and remove the old pins "
                + "(./cleanup.sh), then start again");
    }

    private static String definition(int type, int keySize, int valueSize, int maxEntries, int flags) {
        return "type " + type + ", key " + keySize + " B, value " + valueSize + " B, max_entries " + maxEntries
                + ", flags 0x" + Integer.toHexString(flags);
    }

    /** Overwrites the initial contents of an internal map such as .rodata (const volatile settings). */
    public void writeRodata(String section, byte[] contents) {
        Pointer map = Native.check(LibBpf.get().bpf_object__find_map_by_name(obj, section),
                "bpf_object__find_map_by_name", name + ":" + section);
        NumberByReference size = new NumberByReference(TypeAlias.size_t);
        Pointer data = Native.check(LibBpf.get().bpf_map__initial_value(map, size),
                "bpf_map__initial_value", name + ":" + section);
        if (size.longValue() != contents.length) {
            throw new IllegalStateException(name + ": " + section + " is " + size.longValue()
                    + " bytes but the Java side writes " + contents.length
                    + ": the object and the Java mirror disagree");
        }
        data.put(0, contents, 0, contents.length);
    }

    public void load() {
        Native.check(LibBpf.get().bpf_object__load(obj), "bpf_object__load", name);
    }

    public BpfProgram program(String programName) {
        Pointer prog = Native.check(LibBpf.get().bpf_object__find_program_by_name(obj, programName),
                "bpf_object__find_program_by_name", name + ":" + programName);
        int fd = Native.check(LibBpf.get().bpf_program__fd(prog), "bpf_program__fd", programName);
        return new BpfProgram(programName, fd);
    }

    public String name() {
        return name;
    }

    /** The names of the object's programs (known after open, before load). */
    public java.util.Set<String> programNames() {
        LibBpf lib = LibBpf.get();
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (Pointer prog = lib.bpf_object__next_program(obj, null); prog != null && prog.address() != 0;
                prog = lib.bpf_object__next_program(obj, prog)) {
            names.add(lib.bpf_program__name(prog));
        }
        return names;
    }

    Pointer pointer() {
        return obj;
    }

    /** The fd libbpf holds for map {@code mapName} (valid until {@link #close}). */
    int mapFd(String mapName) {
        Pointer map = Native.check(LibBpf.get().bpf_object__find_map_by_name(obj, mapName),
                "bpf_object__find_map_by_name", name + ":" + mapName);
        return Native.check(LibBpf.get().bpf_map__fd(map), "bpf_map__fd", name + ":" + mapName);
    }

    @Override
    public void close() {
        if (obj != null) {
            LibBpf.get().bpf_object__close(obj);
            obj = null;
        }
    }
}
