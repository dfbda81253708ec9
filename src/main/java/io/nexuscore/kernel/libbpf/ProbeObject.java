package io.nexuscore.kernel.libbpf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import jnr.ffi.Pointer;

/**
 * A BPF object whose programs attach to the kernel by their own SEC() (tracepoints, tp_btf),
 * not to an interface: loaded from the jar, its maps private to this process (never pinned), all
 * of it released by {@link #close}. For observation programs such as nexus_tlb.bpf.o.
 */
public final class ProbeObject implements AutoCloseable {

    private final BpfObject object;
    private final List<Pointer> links = new ArrayList<>();
    private final List<BpfMap> maps = new ArrayList<>();

    private ProbeObject(BpfObject object) {
        this.object = object;
    }

    /**
     * Opens {@code resource} (a class-path .bpf.o), writes {@code rodata} as the whole of its
     * .rodata (its const volatile settings), loads it and attaches every program.
     */
    public static ProbeObject attach(String resource, byte[] rodata) {
        BpfFs.ensureMounted();
        Path file = extract(resource);
        BpfObject object = BpfObject.open(file);
        ProbeObject probe = new ProbeObject(object);
        try {
            if (rodata != null) {
                object.writeRodata(".rodata", rodata);
            }
            object.load();
            LibBpf lib = LibBpf.get();
            Pointer obj = object.pointer();
            for (Pointer prog = lib.bpf_object__next_program(obj, null); prog != null && prog.address() != 0;
                    prog = lib.bpf_object__next_program(obj, prog)) {
                probe.links.add(Native.check(lib.bpf_program__attach(prog), "bpf_program__attach",
                        object.name() + ":" + lib.bpf_program__name(prog)));
            }
            return probe;
        } catch (RuntimeException e) {
            probe.close();
            throw e;
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temp file left behind is harmless
            }
        }
    }

    /** The object's map {@code name}; valueSize per CPU for per-CPU maps ({@link BpfMap#perCpuSize}). */
    public synchronized BpfMap map(String name, int keySize, int valueSize) {
        BpfMap map = BpfMap.ownFd(name, Native.check(LibC.get().dup(object.mapFd(name)), "dup", name),
                keySize, valueSize);
        maps.add(map);
        return map;
    }

    static Path extract(String resource) {
        try (InputStream in = ProbeObject.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the class path: build with mvn "
                        + "(src/main/bpf/build.sh compiles it)");
            }
            Path file = Files.createTempFile("nexus_probe", ".bpf.o");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + resource, e);
        }
    }

    @Override
    public synchronized void close() {
        for (Pointer link : links) {
            LibBpf.get().bpf_link__destroy(link);
        }
        links.clear();
        maps.forEach(BpfMap::close);
        maps.clear();
        object.close();
    }
}
