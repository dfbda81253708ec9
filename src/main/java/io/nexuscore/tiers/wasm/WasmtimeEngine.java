package io.nexuscore.tiers.wasm;

import com.kenai.jffi.MemoryIO;
import io.github.kawamuray.wasmtime.Config;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Extern;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.FuncType;
import io.github.kawamuray.wasmtime.ImportType;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.MemoryType;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Trap;
import io.github.kawamuray.wasmtime.Val;
import io.github.kawamuray.wasmtime.WasmFunctionError;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * wasmtime through wasmtime-java 0.19 (wasmtime 7, JNI). Memories up to the full wasm32 4 GiB.
 * Deadlines use epoch interruption: a ticker thread advances the engine's epoch every tick (see
 * {@link WasmEngine#deadlineTickMs}) and each call sets its store's deadline in ticks, so a runaway
 * guest traps within one tick of its deadline. No fuel and no store limiter in this binding: the memory ceiling
 * is the imported memory's maximum.
 */
public final class WasmtimeEngine implements WasmEngine {

    /** 65536 pages = 4 GiB, the whole wasm32 address space. */
    public static final int MAX_MEMORY_PAGES = 65_536;
    /** Deadline in ticks used outside calls (instantiation): effectively never. */
    private static final long NO_DEADLINE_TICKS = 1L << 40;
    private static final MemoryIO MEMORY_IO = MemoryIO.getInstance();

    private final Engine engine;
    private final Thread ticker;
    /** The epoch's period, fixed for the engine's life: deadlines in flight are counted in it. */
    private final long tickMs;
    /** The longest deadline, in ticks, any call has set: how far interruptAll must advance the epoch. */
    private final AtomicLong longestDeadlineTicks = new AtomicLong();
    private volatile boolean closed;

    /** An engine whose epoch ticks at the finest granularity (tests, benches). */
    public WasmtimeEngine() {
        this(FINEST_DEADLINE_TICK_MS);
    }

    /** @param deadlineTickMs the epoch's period: a call traps at most this long after its deadline */
    public WasmtimeEngine(long deadlineTickMs) {
        this.tickMs = WasmEngine.positiveTick("wasmtime", deadlineTickMs);
        try (Config config = new Config()) {
            config.epochInterruption(true);
            // Every memory up to 4 GiB is then a static memory: reserved once, it never moves, so the
            // base address taken at instantiation stays valid as it grows (see WasmtimeInstance#base).
            config.staticMemoryMaximumSize(MAX_MEMORY_PAGES * 65_536L);
            this.engine = new Engine(config);
        }
        ExtractedLibraryCleanup.afterLoad();
        ticker = new Thread(this::tick, "wasmtime-epoch");
        ticker.setDaemon(true);
        ticker.start();
    }

    private void tick() {
        while (!closed) {
            try {
                Thread.sleep(tickMs);
            } catch (InterruptedException e) {
                return;
            }
            engine.incrementEpoch();
        }
    }

    @Override
    public String name() {
        return "wasmtime";
    }

    /** Advances the epoch past every deadline in use: each running call traps at its next check. */
    @Override
    public void interruptAll() {
        for (long i = longestDeadlineTicks.get(); i >= 0; i--) {
            engine.incrementEpoch();
        }
    }

    @Override
    public int maxMemoryPages() {
        return MAX_MEMORY_PAGES;
    }

    @Override
    public GuestModule compile(String name, byte[] wasm) {
        Module module;
        try {
            module = Module.fromBinary(engine, wasm);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("wasmtime: cannot compile guest module " + name + ": " + e.getMessage(), e);
        }
        ImportType[] imports = module.imports();
        long minPages = -1;
        for (ImportType i : imports) {
            if (i.type() == ImportType.Type.MEMORY && i.module().equals(HostImports.MEMORY_MODULE)
                    && i.name().equals(HostImports.MEMORY_NAME)) {
                minPages = i.memory().minimum();
            }
        }
        if (minPages < 0) {
            throw new IllegalArgumentException("wasmtime: guest module " + name
                    + " does not import env.memory (build it with -Wl,--import-memory)");
        }
        return new WasmtimeModule(name, module, imports, minPages);
    }

    @Override
    public void close() {
        closed = true;
        ticker.interrupt();
        try {
            ticker.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        engine.close();
    }

    private final class WasmtimeModule implements GuestModule {
        private final String name;
        private final Module module;
        private final ImportType[] imports;
        private final long minPages;

        WasmtimeModule(String name, Module module, ImportType[] imports, long minPages) {
            this.name = name;
            this.module = module;
            this.imports = imports;
            this.minPages = minPages;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public CoreInstance instantiate(int id, int maxMemoryPages) {
            GuestModule.checkCeiling("wasmtime", name, maxMemoryPages, minPages, MAX_MEMORY_PAGES);
            return new WasmtimeInstance(id, this, maxMemoryPages);
        }
    }

    private final class WasmtimeInstance implements CoreInstance {
        private final int id;
        private final String what;
        private final HostImports host = new HostImports();
        private final Store<Void> store;
        private final Memory memory;
        private final int maxPages;
        private final List<Func> hostFuncs = new ArrayList<>();
        private final Instance instance;
        private final Func[] exports = new Func[Export.values().length];
        /**
         * The memory's host address. wasmtime-java hands memory out as a ByteBuffer, which cannot
         * describe 2 GiB or more (its capacity is an int): we take the address once, while the memory
         * is small, and bounds-check every access against the memory's current size ourselves.
         */
        private final long base;
        /**
         * Memory size in bytes. Only guest code grows it, so it is refreshed after every call: one JNI
         * call per export call instead of one per bounds check.
         */
        private long sizeBytes;
        private long deadlineMs = -1;

        WasmtimeInstance(int id, WasmtimeModule module, int maxPages) {
            this.id = id;
            this.what = "wasmtime " + module.name + " instance " + id;
            this.maxPages = maxPages;
            this.store = new Store<>(null, engine);
            boolean ok = false;
            try {
                store.setEpochDeadline(NO_DEADLINE_TICKS);
                memory = new Memory(store, new MemoryType(module.minPages, maxPages, false));
                List<Extern> externs = new ArrayList<>();
                for (ImportType i : module.imports) {
                    externs.add(bind(i));
                }
                instance = new Instance(store, module.module, externs);
                base = MEMORY_IO.getDirectBufferAddress(memory.buffer(store));
                sizeBytes = memory.dataSize(store);
                for (Export e : Export.values()) {
                    exports[e.ordinal()] = instance.getFunc(store, e.symbol())
                            .orElseThrow(() -> new IllegalArgumentException(what + ": missing export " + e.symbol()));
                }
                instance.getFunc(store, HostImports.INITIALIZE)
                        .orElseThrow(() -> new IllegalArgumentException(what + ": missing export _initialize"))
                        .call(store);
                sizeBytes = memory.dataSize(store); // _initialize may grow memory (the guests reserve heap room)
                ok = true;
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(what + ": cannot instantiate: " + e.getMessage(), e);
            } finally {
                if (!ok) {
                    store.close();
                }
            }
        }

        private Extern bind(ImportType i) {
            if (i.type() == ImportType.Type.MEMORY && i.module().equals(HostImports.MEMORY_MODULE)
                    && i.name().equals(HostImports.MEMORY_NAME)) {
                return Extern.fromMemory(memory);
            }
            if (i.type() == ImportType.Type.FUNC && i.module().equals(HostImports.MODULE)) {
                Func f = switch (i.name()) {
                    case HostImports.NOW_NS -> new Func(store, FuncType.emptyParams(Val.Type.I64),
                            (caller, params, results) -> results[0] = Val.fromI64(HostImports.nowNs()));
                    case HostImports.MEMORY_EXHAUSTED -> new Func(store, FuncType.emptyResults(Val.Type.I32),
                            (caller, params, results) -> host.memoryExhausted(params[0].i32()));
                    default -> null;
                };
                if (f != null) {
                    hostFuncs.add(f);
                    return Extern.fromFunc(f);
                }
            }
            throw new IllegalArgumentException(what + ": unknown import " + i.module() + "." + i.name()
                    + " (the host offers env.memory and " + HostImports.MODULE + ".{now-ns, memory-exhausted})");
        }

        @Override
        public int id() {
            return id;
        }

        @Override
        public long call(Export export, long... args) {
            Func f = exports[export.ordinal()];
            Val[] params = new Val[args.length];
            // handle's allocate-bytes (parameter 6, counting from 0) is the only i64; all others are i32.
            for (int i = 0; i < args.length; i++) {
                params[i] = export == Export.HANDLE && i == 6 ? Val.fromI64(args[i]) : Val.fromI32((int) args[i]);
            }
            try {
                Val[] results = f.call(store, params);
                return results.length == 0 ? 0 : Integer.toUnsignedLong(results[0].i32());
            } catch (RuntimeException e) {
                boolean late = isInterrupt(e);
                sizeBytes = memory.dataSize(store);
                return throwTrap(host.classify(e, late, memoryPages(), maxPages, what + " " + export.symbol()));
            } finally {
                sizeBytes = memory.dataSize(store);
            }
        }

        private static long throwTrap(GuestTrap trap) {
            throw trap;
        }

        /** An epoch-deadline trap: the only way a call here is stopped from outside. */
        private boolean isInterrupt(RuntimeException e) {
            return deadlineMs >= 0 && e instanceof WasmFunctionError.TrapError t && t.trap() == Trap.INTERRUPT;
        }

        /** The host address of guest address {@code address}, after checking the range is inside memory. */
        private long hostAddress(int address, int length, String op) {
            long start = Integer.toUnsignedLong(address);
            if (length < 0 || start + length > sizeBytes) {
                throw new GuestTrap(GuestTrap.Kind.TRAP, what + ": " + op + " of " + length + " bytes at "
                        + start + " is outside memory", memoryPages(), null);
            }
            return base + start;
        }

        @Override
        public void write(int address, byte[] bytes) {
            MEMORY_IO.putByteArray(hostAddress(address, bytes.length, "write"), bytes, 0, bytes.length);
        }

        /** The whole image: wasmtime's memory is native and its writes are not seen from Java. */
        @Override
        public void restore(byte[] image) {
            if ((long) memoryPages() * 65_536L != image.length) {
                throw new IllegalStateException("memory is " + (long) memoryPages() * 65_536L + " bytes, the image " + image.length);
            }
            write(0, image);
        }

        @Override
        public byte[] read(int address, int length) {
            byte[] out = new byte[length];
            MEMORY_IO.getByteArray(hostAddress(address, length, "read"), out, 0, length);
            return out;
        }

        @Override
        public int memoryPages() {
            return (int) (sizeBytes / 65_536);
        }

        @Override
        public int maxMemoryPages() {
            return maxPages;
        }

        @Override
        public <T> T withDeadline(long deadlineMs, Supplier<T> body) {
            host.resetCall();
            // The epoch advances every tickMs: round up, plus one tick because the current tick has
            // already partly elapsed.
            long ticks = (deadlineMs + tickMs - 1) / tickMs + 1;
            longestDeadlineTicks.accumulateAndGet(ticks, Math::max);
            store.setEpochDeadline(ticks);
            this.deadlineMs = deadlineMs;
            try {
                return body.get();
            } finally {
                this.deadlineMs = -1;
                store.setEpochDeadline(NO_DEADLINE_TICKS);
            }
        }

        @Override
        public void close() {
            // The Java handles are small native boxes (and host functions sit in a global registry):
            // dispose each, then the store, which owns the instance and frees the memory.
            for (Func f : exports) {
                if (f != null) {
                    f.close();
                }
            }
            hostFuncs.forEach(Func::close);
            instance.close();
            memory.close();
            store.close();
        }
    }
}
