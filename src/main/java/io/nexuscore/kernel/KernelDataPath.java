package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfException;
import io.nexuscore.kernel.libbpf.BpfFs;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.BpfObject;
import io.nexuscore.kernel.libbpf.BpfProgram;
import io.nexuscore.kernel.libbpf.LibBpf;
import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import io.nexuscore.kernel.libbpf.NetInterface;
import io.nexuscore.kernel.libbpf.ProgramStats;
import io.nexuscore.kernel.libbpf.Sysctl;
import io.nexuscore.kernel.maps.KernelVerdicts;
import io.nexuscore.kernel.maps.RoutingDecisionsMap;
import io.nexuscore.kernel.maps.ScoreThresholdsMap;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.TierCountersMap;
import io.nexuscore.kernel.maps.VerdictSlots;
import io.nexuscore.kernel.maps.AdaptiveLoop;
import io.nexuscore.kernel.maps.LatencyRing;
import io.nexuscore.kernel.maps.PinnedTokenModel;
import io.nexuscore.kernel.maps.RingConsumer;
import io.nexuscore.kernel.maps.TenantLimitMaps;
import io.nexuscore.kernel.maps.TenantPolicyMap;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.TokenBlocks;
import io.nexuscore.classify.VerdictSource;
import io.nexuscore.config.KernelConfig;
import io.nexuscore.config.ScoringConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;

/**
 * The kernel data path: the eBPF object nexus_classify.bpf.o loaded, its maps pinned, XDP and the
 * TC chain attached on the configured interfaces. The one entry point the rest of NexusCore uses.
 *
 * <h2>Lifecycle</h2>
 * <pre>{@code
 * Optional<KernelDataPath> kernel = KernelDataPath.open(config.kernel(), config.scoring(), Set.of(8080));
 * // empty = user-space mode (logged once, with the reason); KERNEL mode throws instead
 * VerdictSource verdicts = kernel.<VerdictSource>map(KernelDataPath::verdicts).orElse(VerdictSource.NONE);
 * ...
 * kernel.ifPresent(KernelDataPath::close);     // detaches, restores the sysctl, keeps the pins
 * }</pre>
 *
 * <h2>What each part calls</h2>
 * <ul>
 * <li>data plane: {@link #verdicts()} per request (the mmap'ed verdict slot, plain loads; a bpf(2)
 *     lookup by 4-tuple, ~µs, when the slot holds another connection; check
 *     {@code KernelVerdict.belongsTo} before trusting it), {@link SocketMarks} on the
 *     accepted socket's fd for the tenant floor set on the SYN, and {@link #tokenModel()} (the token
 *     estimate's calibrated gain, a plain load) for the Java scorer.</li>
 * <li>control plane: {@link #thresholds()} (read/write the live pinned map),
 *     {@link #tenantPolicy()}, {@link #tierCounters()}, {@link #reload}, {@link #programStats()}
 *     with {@link #setStatsEnabled}.</li>
 * </ul>
 * Maps live under {@code KernelConfig.pinDir} (default /sys/fs/bpf/nexuscore) and survive
 * {@link #reload} and {@link #close}; {@link #removePins} deletes them. Every native failure is a
 * {@link BpfException} naming the call, the object and the errno. All methods block (syscalls):
 * never call them on an event loop. Thread-safe.
 *
 * <p>Over 400 lines for a reason: load, attach, reload (with its roll-back) and close are one
 * ordered lifecycle over the same object, links and sysctl, and its safety (a reload never leaves a
 * hook empty, close detaches before it unmaps) is read in one place. The maps are {@link PinnedMaps},
 * the links {@link InterfaceLink}, the reload rules {@link ReloadObjects}.
 */
public final class KernelDataPath implements AutoCloseable {

    private volatile boolean thresholdsFromConfig;

    private static final Logger LOG = System.getLogger(KernelDataPath.class.getName());

    /** The object inside the jar (built by src/main/bpf/build.sh). */
    public static final String OBJECT_RESOURCE = "bpf/nexus_classify.bpf.o";
    public static final String XDP_PROGRAM = "nexus_classify";
    public static final String TC_CLASSIFY_PROGRAM = "nexus_tc_classify";
    public static final String TC_POLICY_PROGRAM = "nexus_tc_policy";
    public static final String TC_MARK_PROGRAM = "nexus_tc_mark";
    /** SEC("syscall") program that arms the adaptive loop's bpf_timer (run, never attached). */
    public static final String ADAPT_ARM_PROGRAM = "nexus_adapt_arm";
    /** The section of the const volatile switch nexus_observe (nexus_timing.bpf.h), a __u32: 0 off, N one packet in N. */
    static final String OBSERVE_SECTION = ".rodata.observe";
    /** The section of token_block_q10, the prompt estimate's weights per non-ASCII character (TokenBlocks). */
    static final String TOKEN_BLOCKS_SECTION = ".rodata.tokens";
    /** Pinned maps (file names under the pin directory). */
    public static final List<String> PINNED_MAPS =
            List.of("routing_decisions", "routing_decisions6", "verdict_slots", "verdict_slots6", "score_thresholds", "tier_counters", "tenant_policy", "tc_chain",
                    "token_model", "latency_ringbuf", "recalibration_events", "calibration_events", "adaptive_settings",
                    "adaptive_stats", "adaptive_timer", "tenant_limits", "tenant_windows");

    /** Slots of tc_chain (TC_SLOT_* in nexus_shared.h). */
    static final int TC_SLOT_POLICY = 1;
    static final int TC_SLOT_MARK = 2;
    /** CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_BPF bit numbers (linux/capability.h). */
    private static final int CAP_NET_ADMIN = 12;
    private static final int CAP_SYS_ADMIN = 21;
    private static final int CAP_BPF = 39;

    private final Path pinDir;
    private final ScoringConfig scoring;
    private final Set<Integer> ports;
    private final KernelConfig.XdpMode xdpMode;
    /** In-kernel run-time histograms and tail-call depth: 0 off, N one packet in N, drawn at random (the .rodata.observe switch). */
    private final int timingSample;

    /** The pinned maps and their wrappers (state that outlives a reload). */
    private final PinnedMaps maps;

    private final List<InterfaceLink> xdpLinks = new ArrayList<>();
    private final List<InterfaceLink> tcLinks = new ArrayList<>();
    private BpfObject object;
    private Programs programs;
    /** net.ipv4.tcp_fwmark_accept=1 while attached, counted across routers (restored by the last). */
    private SharedSysctl fwmarkAccept;
    private boolean closed;

    /** The four programs of one loaded object. */
    private record Programs(BpfProgram xdp, BpfProgram tcClassify, BpfProgram tcPolicy, BpfProgram tcMark) {
        static Programs of(BpfObject object) {
            return new Programs(object.program(XDP_PROGRAM), object.program(TC_CLASSIFY_PROGRAM),
                    object.program(TC_POLICY_PROGRAM), object.program(TC_MARK_PROGRAM));
        }

        List<BpfProgram> all() {
            return List.of(xdp, tcClassify, tcPolicy, tcMark);
        }
    }

    private KernelDataPath(Path pinDir, ScoringConfig scoring, Set<Integer> ports, KernelConfig.XdpMode xdpMode,
                           BpfObject object, int timingSample) {
        this.timingSample = timingSample;
        this.pinDir = pinDir;
        this.scoring = scoring;
        this.ports = Set.copyOf(ports);
        this.xdpMode = xdpMode;
        this.object = object;
        this.programs = Programs.of(object);
        this.maps = new PinnedMaps(pinDir);
    }

    /**
     * Decides the mode: USER never touches the kernel; AUTO loads when it can and otherwise logs
     * ONE line saying the router runs in user-space mode and why; KERNEL loads or throws.
     *
     * @return the loaded data path, or empty for user-space mode
     */
    public static Optional<KernelDataPath> open(KernelConfig config, ScoringConfig scoring, Set<Integer> ports) {
        return open(config, scoring, ports, 0);
    }

    /**
     * As {@link #open(KernelConfig, ScoringConfig, Set)}; {@code timingSample} N > 0 switches on the
     * in-kernel run-time histograms and tail-call depth (nexus_timing.bpf.h) for one packet in N, for
     * this load and its reloads (0: off).
     */
    public static Optional<KernelDataPath> open(KernelConfig config, ScoringConfig scoring, Set<Integer> ports,
                                                int timingSample) {
        switch (config.mode()) {
            case USER:
                LOG.log(Level.INFO, "user-space mode: kernel.mode is 'user'; the Java scorer classifies every request");
                return Optional.empty();
            case KERNEL:
                return Optional.of(load(config, scoring, ports, timingSample));
            default:
                Optional<String> missing = missingPrivilege();
                if (missing.isPresent()) {
                    LOG.log(Level.WARNING, "user-space mode: " + missing.get() + "; the Java scorer classifies every request");
                    return Optional.empty();
                }
                try {
                    return Optional.of(load(config, scoring, ports, timingSample));
                } catch (RuntimeException | LinkageError e) { // LinkageError: libbpf.so.1 is not installed
                    LOG.log(Level.WARNING, "user-space mode: the eBPF data path did not load ("
                            + (e instanceof BpfException ? e.getMessage() : e.toString()) + "); the Java scorer classifies every request");
                    return Optional.empty();
                }
        }
    }

    /**
     * Loads the object from the jar, pins (or reuses) the maps under {@code config.pinDir()},
     * attaches XDP (in {@code config.xdpMode()}) and the TC chain to every configured interface,
     * and sets net.ipv4.tcp_fwmark_accept=1 (restored by {@link #close}).
     */
    public static KernelDataPath load(KernelConfig config, ScoringConfig scoring, Set<Integer> ports) {
        return load(config, scoring, ports, 0);
    }

    /** As {@link #load(KernelConfig, ScoringConfig, Set)}, timing one packet in {@code timingSample} in the kernel (0: none). */
    public static KernelDataPath load(KernelConfig config, ScoringConfig scoring, Set<Integer> ports, int timingSample) {
        boolean freshDir = !Files.isDirectory(config.pinDir());
        KernelDataPath path = loadWithoutAttaching(config.pinDir(), scoring, ports, config.xdpMode(), timingSample);
        try {
            path.attach(config.interfaces());
        } catch (RuntimeException e) {
            try {
                path.close();
                if (freshDir) {
                    path.removePins();
                }
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        LOG.log(Level.INFO, () -> "kernel data path: XDP " + XDP_PROGRAM + " (" + config.xdpMode().name().toLowerCase(java.util.Locale.ROOT)
                + ") and TC chain on " + config.interfaces() + ", ports " + new TreeSet<>(ports)
                + ", maps pinned under " + config.pinDir());
        return path;
    }

    /**
     * Loads and pins without attaching anything: for BPF_PROG_TEST_RUN (tests, benchmarks) and
     * tools. {@link #programs()} gives the programs to run.
     */
    public static KernelDataPath loadWithoutAttaching(Path pinDir, ScoringConfig scoring, Set<Integer> ports,
                                                      KernelConfig.XdpMode xdpMode) {
        return loadWithoutAttaching(pinDir, scoring, ports, xdpMode, 0);
    }

    /**
     * As above; {@code timingSample}: the in-kernel run-time histograms and tail-call depth
     * (nexus_timing.bpf.h) for one packet in N, drawn at random, a power of two; 0 off.
     */
    public static KernelDataPath loadWithoutAttaching(Path pinDir, ScoringConfig scoring, Set<Integer> ports,
                                                      KernelConfig.XdpMode xdpMode, int timingSample) {
        if (timingSample < 0 || Integer.bitCount(timingSample) > 1) {
            throw new IllegalArgumentException("timingSample must be 0 or a power of two, got " + timingSample);
        }
        BpfFs.ensureMounted();
        boolean freshDir = !Files.isDirectory(pinDir);
        BpfFs.createDirectories(pinDir);
        KernelDataPath path = null;
        try {
            BpfObject object = loadObject(Optional.empty(), pinDir, scoring, ports, timingSample, Optional.empty());
            try {
                path = new KernelDataPath(pinDir, scoring, ports, xdpMode, object, timingSample);
            } catch (RuntimeException e) {
                object.close();
                throw e;
            }
            if (path.maps.thresholds.isUnset()) {
                path.maps.thresholds.write(scoring.thresholds());
                path.thresholdsFromConfig = true;
            }
            path.installChain(path.programs);
            // Like the thresholds: a pinned gain (calibrated by an earlier run) is kept.
            path.maps.tokenModel.initialise();
            // A pinned loop keeps its settings (and its timer: arming swaps in this load's callback).
            path.maps.adaptive.initialise(AdaptiveSettings.DEFAULT.withCeiling(scoring.thresholds().nanoMax()));
            path.maps.adaptive.arm(object.program(ADAPT_ARM_PROGRAM));
            return path;
        } catch (RuntimeException e) {
            if (path != null) {
                try {
                    path.close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (freshDir) {
                removePins(pinDir); // nothing of ours was there before: leave nothing behind
            }
            throw e;
        }
    }

    /** Verdicts by 4-tuple (IPv4 or IPv6): the mmap'ed slot, else the LRU fallback map. */
    public KernelVerdicts verdicts() {
        return maps.verdicts;
    }

    /** The verdict store (slots and LRU fallback) with diagnostics (head counts, snapshot) beyond {@link VerdictSource}. */
    public RoutingDecisionsMap routingDecisions() {
        return maps.routingDecisions;
    }

    /**
     * True when this load found the thresholds map unset and wrote the configured values; false when
     * the pinned map kept values from an earlier run (which are newer than any saved state).
     */
    public boolean thresholdsFromConfig() {
        return thresholdsFromConfig;
    }

    public ThresholdStore thresholds() {
        return maps.thresholds;
    }

    /** The tenant-limit maps XDP counts in (nexus_limits.bpf.h). */
    public TenantLimitMaps tenantLimits() {
        return maps.tenantLimits;
    }

    public TenantPolicyMap tenantPolicy() {
        return maps.tenantPolicy;
    }

    public TierCountersMap tierCounters() {
        return maps.tierCounters;
    }

    public Path pinDir() {
        return pinDir;
    }

    /** The kernel's latency feedback loop: settings, status, (re-)arming. */
    public AdaptiveLoop adaptive() {
        return maps.adaptive;
    }

    /** The producer side of latency_ringbuf: the data plane's per-request latency samples. */
    public LatencyRing latencyRing() {
        return maps.latencyRing;
    }

    /** Starts a consumer of recalibration_events (one per process); close it before this. */
    public RingConsumer<io.nexuscore.kernel.maps.Recalibration> recalibrationEvents(
            java.util.function.Consumer<io.nexuscore.kernel.maps.Recalibration> listener) {
        return RingConsumer.recalibrations(pinDir, listener);
    }

    /** Starts a consumer of calibration_events (one per process); close it before this. */
    public RingConsumer<io.nexuscore.kernel.maps.Calibration> calibrationEvents(
            java.util.function.Consumer<io.nexuscore.kernel.maps.Calibration> listener) {
        return RingConsumer.calibrations(pinDir, listener);
    }

    /**
     * The live gain of the prompt token estimate (the mmap'ed token_model, refitted by the kernel's
     * calibration stage): the Java scorer's {@link io.nexuscore.classify.TokenGain}, a plain load per read.
     */
    public PinnedTokenModel tokenModel() {
        return maps.tokenModel;
    }

    /** The loaded programs (XDP first, then the TC chain in order). */
    public synchronized List<BpfProgram> programs() {
        return programs.all();
    }

    public synchronized BpfProgram program(String name) {
        return programs.all().stream().filter(p -> p.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no program " + name));
    }

    /** Run statistics per program; zero unless {@link #setStatsEnabled} is on. */
    public synchronized List<ProgramStats> programStats() {
        return programs.all().stream().map(BpfProgram::stats).toList();
    }

    /**
     * Turns on program run-time stats with BPF_ENABLE_STATS: they stay on while the returned handle is
     * open, and the kernel turns them off when it closes, however this process ends (unlike the
     * kernel.bpf_stats_enabled sysctl, which a crash would leave on). Costs a few ns per program run.
     */
    public static AutoCloseable enableStats() {
        int fd = Native.check(LibBpf.get().bpf_enable_stats(LibBpf.BPF_STATS_RUN_TIME), "bpf_enable_stats",
                "BPF_STATS_RUN_TIME");
        return () -> LibC.get().close(fd);
    }

    /**
     * Loads a new object ({@code objectFile}, else the one in the jar) against the same pinned maps
     * and swaps it in: tail-call slots first, then the XDP and the tcx link per interface
     * (BPF_LINK_UPDATE with BPF_F_REPLACE), each an atomic exchange; no map entry is lost. On failure
     * the old programs stay.
     */
    public synchronized ReloadResult reload(Optional<Path> objectFile) {
        requireOpen();
        BpfObject next = loadObject(objectFile, pinDir, scoring, ports, timingSample, Optional.of(object.programNames()));
        Programs old = programs;
        Programs fresh;
        int done = 0;
        try {
            fresh = Programs.of(next);
            installChain(fresh);
            for (InterfaceLink xdp : xdpLinks) {
                xdp.replace(fresh.xdp());
            }
            for (InterfaceLink tc : tcLinks) {
                tc.replace(fresh.tcClassify());
                done++;
            }
        } catch (RuntimeException e) {
            rollBack(old, done, e);
            next.close();
            throw e;
        }
        ReloadResult result = new ReloadResult(next.name(), old.xdp().id(), fresh.xdp().id(),
                old.tcClassify().id(), fresh.tcClassify().id());
        try {
            // The one timer takes the new program's callback; the old program goes with its last reference.
            maps.adaptive.arm(next.program(ADAPT_ARM_PROGRAM));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reload: the adaptive loop keeps the previous program's callback ("
                    + e.getMessage() + ")");
        }
        object.close();
        object = next;
        programs = fresh;
        LOG.log(Level.INFO, () -> "kernel data path reloaded from " + result.object() + ": XDP prog " + result.oldXdpProgramId()
                + " -> " + result.newXdpProgramId() + ", TC prog " + result.oldTcProgramId() + " -> " + result.newTcProgramId());
        return result;
    }

    private void rollBack(Programs old, int tcDone, RuntimeException failure) {
        try {
            installChain(old);
            for (InterfaceLink xdp : xdpLinks) {
                xdp.replace(old.xdp());
            }
            for (int i = 0; i < tcDone; i++) {
                tcLinks.get(i).replace(old.tcClassify());
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Detaches every program, restores net.ipv4.tcp_fwmark_accept, closes fds. Pins stay, and with
     * them the adaptive timer, which keeps recalibrating until {@link #removePins}.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<RuntimeException> failures = new ArrayList<>();
        for (InterfaceLink xdp : xdpLinks) {
            run(failures, xdp::detach);
        }
        for (InterfaceLink tc : tcLinks) {
            run(failures, tc::detach);
        }
        xdpLinks.clear();
        tcLinks.clear();
        if (fwmarkAccept != null) {
            run(failures, fwmarkAccept::release);
        }
        maps.close(failures);
        run(failures, object::close);
        maps.closeMaps(failures);
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.stream().skip(1).filter(f -> f != first).forEach(first::addSuppressed);
            throw first;
        }
    }

    /** Deletes the pinned maps and the pin directory (when empty). The maps die with their last user. */
    public void removePins() {
        removePins(pinDir);
    }

    public static void removePins(Path pinDir) {
        if (Files.isDirectory(pinDir)) {
            // A router that died attached left its sysctl reference here: drop it (the last one restores).
            new SharedSysctl(Sysctl.TCP_FWMARK_ACCEPT, "1", pinDir).release();
        }
        try {
            for (String name : PINNED_MAPS) {
                Files.deleteIfExists(pinDir.resolve(name));
            }
            if (Files.isDirectory(pinDir)) {
                try (var rest = Files.list(pinDir)) {
                    if (rest.findAny().isEmpty()) {
                        Files.delete(pinDir);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove pins under " + pinDir, e);
        }
    }

    /** Interfaces with our programs attached, and the kernel's current program ids on them. */
    public synchronized List<Attachment> attachments() {
        List<Attachment> list = new ArrayList<>();
        for (int i = 0; i < xdpLinks.size(); i++) {
            list.add(new Attachment(xdpLinks.get(i).netInterface().name(),
                    xdpLinks.get(i).attachedProgramId(), tcLinks.get(i).attachedProgramId()));
        }
        return list;
    }

    /** One interface: the ids of the XDP and tcx ingress programs our links hold there (0 once detached). */
    public record Attachment(String interfaceName, int xdpProgramId, int tcProgramId) {
    }

    private void attach(List<String> interfaces) {
        fwmarkAccept = new SharedSysctl(Sysctl.TCP_FWMARK_ACCEPT, "1", pinDir);
        fwmarkAccept.acquire();
        for (String name : interfaces) {
            NetInterface netInterface = NetInterface.byName(name);
            xdpLinks.add(InterfaceLink.xdp(netInterface, programs.xdp(), xdpMode));
            try {
                tcLinks.add(InterfaceLink.tcxIngress(netInterface, programs.tcClassify()));
            } catch (RuntimeException e) {
                InterfaceLink xdp = xdpLinks.remove(xdpLinks.size() - 1);
                try {
                    xdp.detach();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }
    }

    private void installChain(Programs p) {
        maps.tcChainMap.update(slot(TC_SLOT_POLICY), slot(p.tcPolicy().fd()), BpfMap.BPF_ANY);
        maps.tcChainMap.update(slot(TC_SLOT_MARK), slot(p.tcMark().fd()), BpfMap.BPF_ANY);
    }

    private static byte[] slot(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    /** @param programs the program set a reload must have (the running object's), checked before the load */
    private static BpfObject loadObject(Optional<Path> objectFile, Path pinDir, ScoringConfig scoring, Set<Integer> ports,
                                        int timingSample, Optional<Set<String>> programs) {
        Path file = objectFile.orElseGet(KernelDataPath::extractObject);
        BpfObject object = BpfObject.open(file);
        try {
            if (programs.isPresent() && !object.programNames().equals(programs.get())) {
                throw new ForbiddenObject("program-set", "the object's programs " + object.programNames()
                        + " are not the running object's " + programs.get());
            }
            object.pinMapsUnder(pinDir);
            object.writeRodata(".rodata", SharedStructs.loadSettings(scoring.weights(), ports));
            object.writeRodata(OBSERVE_SECTION, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(timingSample).array());
            object.writeRodata(TOKEN_BLOCKS_SECTION, TokenBlocks.rodata());
            object.load();
            return object;
        } catch (RuntimeException e) {
            object.close();
            throw e;
        } finally {
            if (objectFile.isEmpty()) {
                deleteQuietly(file);
            }
        }
    }

    /** libbpf opens files: copy the jar's object to a temp file for the duration of the load. */
    private static Path extractObject() {
        try (InputStream in = KernelDataPath.class.getClassLoader().getResourceAsStream(OBJECT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(OBJECT_RESOURCE + " is not on the class path: build with mvn "
                        + "(src/main/bpf/build.sh compiles it)");
            }
            Path file = Files.createTempFile("nexus_classify", ".bpf.o");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + OBJECT_RESOURCE, e);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "cannot delete " + file, e);
        }
    }

    /** Why this process cannot load eBPF (no root-equivalent capabilities), if it cannot. */
    static Optional<String> missingPrivilege() {
        try {
            long caps = Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(l -> l.startsWith("CapEff:")).findFirst()
                    .map(l -> Long.parseUnsignedLong(l.substring(7).trim(), 16)).orElse(0L);
            boolean sysAdmin = (caps & (1L << CAP_SYS_ADMIN)) != 0;
            boolean bpfAndNet = (caps & (1L << CAP_BPF)) != 0 && (caps & (1L << CAP_NET_ADMIN)) != 0;
            if (!sysAdmin && !bpfAndNet) {
                return Optional.of("the process lacks CAP_SYS_ADMIN (or CAP_BPF + CAP_NET_ADMIN); run as root");
            }
        } catch (IOException | RuntimeException e) {
            return Optional.of("cannot read capabilities from /proc/self/status (" + e.getMessage() + ")");
        }
        return Optional.empty();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("kernel data path is closed");
        }
    }

    static void run(List<RuntimeException> failures, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failures.add(e);
        }
    }
}
