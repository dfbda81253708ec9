package io.nexuscore.tiers.wasm;

import com.dylibso.chicory.compiler.MachineFactoryCompiler;
import com.dylibso.chicory.runtime.ChicoryInterruptedException;
import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.HostFunction;
import com.dylibso.chicory.runtime.ImportMemory;
import com.dylibso.chicory.runtime.ImportValues;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.wasm.ChicoryException;
import com.dylibso.chicory.wasm.Parser;
import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.ExternalType;
import com.dylibso.chicory.wasm.types.FunctionType;
import com.dylibso.chicory.wasm.types.MemoryImport;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import com.dylibso.chicory.wasm.types.ValType;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Chicory, pure Java. Modules are compiled to JVM bytecode once, when the pool starts (Chicory's
 * run-time compiler, {@link MachineFactoryCompiler}); instances share the generated classes.
 * Memory is a Java byte array, so a ceiling can be at most {@link Memory#RUNTIME_MAX_PAGES} pages.
 * Deadlines: one watchdog thread per engine looks at the running calls every tick (see
 * {@link WasmEngine#deadlineTickMs}) and interrupts the threads of those past their deadline;
 * Chicory's compiled code checks the interrupt flag and throws {@link ChicoryInterruptedException}. (A timer scheduled per call woke a
 * thread on every call and left each cancelled task queued until its deadline: at 20k calls/s that
 * was one context switch per call and ~40k dead tasks in the heap.)
 */
public final class ChicoryEngine implements WasmEngine {

    /** 32767 pages = 2,147,418,112 bytes: the largest byte array Chicory will allocate. */
    public static final int MAX_MEMORY_PAGES = Memory.RUNTIME_MAX_PAGES;

    private final Set<ChicoryInstance> live = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final Thread watchdog;

    /** An engine whose watchdog ticks at the finest granularity (tests, benches). */
    public ChicoryEngine() {
        this(FINEST_DEADLINE_TICK_MS);
    }

    /** @param deadlineTickMs a call is interrupted at most this long after its deadline */
    public ChicoryEngine(long deadlineTickMs) {
        this.watchdog = startWatchdog(TimeUnit.MILLISECONDS.toNanos(WasmEngine.positiveTick("chicory", deadlineTickMs)));
    }

    private Thread startWatchdog(long tick) {
        Thread t = new Thread(() -> {
            while (!closed) {
                LockSupport.parkNanos(tick);
                long now = System.nanoTime();
                for (ChicoryInstance instance : live) {
                    instance.interruptIfLate(now);
                }
            }
        }, "chicory-deadlines");
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public String name() {
        return "chicory";
    }

    @Override
    public int maxMemoryPages() {
        return MAX_MEMORY_PAGES;
    }

    @Override
    public GuestModule compile(String name, byte[] wasm) {
        WasmModule module;
        try {
            module = Parser.parse(wasm);
        } catch (ChicoryException e) {
            throw new IllegalArgumentException("chicory: cannot parse guest module " + name + ": " + e.getMessage(), e);
        }
        MemoryImport memoryImport = module.importSection().stream()
                .filter(i -> i.importType() == ExternalType.MEMORY)
                .map(MemoryImport.class::cast)
                .filter(m -> m.module().equals(HostImports.MEMORY_MODULE) && m.name().equals(HostImports.MEMORY_NAME))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("chicory: guest module " + name
                        + " does not import env.memory (build it with -Wl,--import-memory)"));
        Function<Instance, Machine> machines = MachineFactoryCompiler.compile(module);
        return new ChicoryModule(name, module, memoryImport.limits().initialPages(), machines);
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(watchdog);
    }

    private final class ChicoryModule implements GuestModule {
        private final String name;
        private final WasmModule module;
        private final int minPages;
        private final Function<Instance, Machine> machines;

        ChicoryModule(String name, WasmModule module, int minPages, Function<Instance, Machine> machines) {
            this.name = name;
            this.module = module;
            this.minPages = minPages;
            this.machines = machines;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public CoreInstance instantiate(int id, int maxMemoryPages) {
            GuestModule.checkCeiling("chicory", name, maxMemoryPages, minPages, MAX_MEMORY_PAGES);
            ChicoryInstance instance = new ChicoryInstance(id, this, maxMemoryPages);
            live.add(instance);
            return instance;
        }
    }

    private final class ChicoryInstance implements CoreInstance {
        private final int id;
        private final String what;
        private final HostImports host = new HostImports();
        private final DirtyTrackingMemory memory;
        private final int maxPages;
        private final ExportFunction[] exports = new ExportFunction[Export.values().length];
        private final Object lock = new Object();
        /** The thread inside {@link #withDeadline}, guarded by {@link #lock}; null when idle. */
        private Thread caller;
        /** System.nanoTime() at which the current call is late, guarded by {@link #lock}. */
        private long deadlineAt;
        private boolean deadlinePassed;

        ChicoryInstance(int id, ChicoryModule module, int maxPages) {
            this.id = id;
            this.what = "chicory " + module.name + " instance " + id;
            this.maxPages = maxPages;
            this.memory = new DirtyTrackingMemory(new MemoryLimits(module.minPages, maxPages));
            ImportValues imports = ImportValues.builder()
                    .addMemory(new ImportMemory(HostImports.MEMORY_MODULE, HostImports.MEMORY_NAME, memory))
                    .addFunction(new HostFunction(HostImports.MODULE, HostImports.NOW_NS, FunctionType.returning(ValType.I64),
                            (inst, args) -> new long[] {HostImports.nowNs()}))
                    .addFunction(new HostFunction(HostImports.MODULE, HostImports.MEMORY_EXHAUSTED,
                            FunctionType.accepting(ValType.I32), (inst, args) -> {
                                host.memoryExhausted((int) args[0]);
                                return null;
                            }))
                    .build();
            Instance instance;
            try {
                instance = Instance.builder(module.module)
                        .withImportValues(imports)
                        .withMachineFactory(module.machines)
                        .build();
                for (Export e : Export.values()) {
                    exports[e.ordinal()] = instance.export(e.symbol());
                }
                instance.export(HostImports.INITIALIZE).apply();
                memory.forget(); // a fresh instance is the image: restores start from here
            } catch (ChicoryException e) {
                throw new IllegalArgumentException(what + ": cannot instantiate: " + e.getMessage(), e);
            }
        }

        @Override
        public int id() {
            return id;
        }

        @Override
        public long call(Export export, long... args) {
            try {
                long[] result = exports[export.ordinal()].apply(args);
                return result == null || result.length == 0 ? 0 : result[0];
            } catch (ChicoryInterruptedException e) {
                throw trap(e, export);
            } catch (ChicoryException | StackOverflowError | ArithmeticException | IndexOutOfBoundsException e) {
                throw trap(e, export);
            }
        }

        private GuestTrap trap(Throwable e, Export export) {
            boolean late;
            synchronized (lock) {
                late = deadlinePassed;
            }
            return host.classify(e, late, memory.pages(), maxPages, what + " " + export.symbol());
        }

        @Override
        public void write(int address, byte[] bytes) {
            try {
                memory.write(address, bytes, 0, bytes.length);
            } catch (RuntimeException e) {
                throw new GuestTrap(GuestTrap.Kind.TRAP, what + ": write outside memory", memory.pages(), e);
            }
        }

        /** Copies back only the blocks written since the last restore (see {@link DirtyTrackingMemory}). */
        @Override
        public void restore(byte[] image) {
            memory.restore(image);
        }

        @Override
        public byte[] read(int address, int length) {
            try {
                return memory.readBytes(address, length);
            } catch (RuntimeException e) {
                throw new GuestTrap(GuestTrap.Kind.TRAP, what + ": read outside memory", memory.pages(), e);
            }
        }

        @Override
        public int memoryPages() {
            return memory.pages();
        }

        @Override
        public int maxMemoryPages() {
            return maxPages;
        }

        @Override
        public <T> T withDeadline(long deadlineMs, Supplier<T> body) {
            Thread self = Thread.currentThread();
            host.resetCall();
            synchronized (lock) {
                caller = self;
                deadlineAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMs);
                deadlinePassed = false;
            }
            try {
                return body.get();
            } finally {
                synchronized (lock) {
                    caller = null;
                }
                // The watchdog may have interrupted us just as the guest returned: clear the flag so
                // it does not hit the worker's next blocking wait. After `caller = null` the watchdog
                // leaves this thread alone, so no interrupt meant for this call can reach the next.
                Thread.interrupted();
            }
        }

        /** Called by the watchdog: interrupts the running call when its deadline has passed. */
        void interruptIfLate(long now) {
            synchronized (lock) {
                if (caller != null && now - deadlineAt >= 0 && !deadlinePassed) {
                    deadlinePassed = true;
                    caller.interrupt();
                }
            }
        }

        @Override
        public void close() {
            // Nothing native: the memory and instance are garbage once unreferenced.
            live.remove(this);
        }
    }
}
