package io.nexuscore.kernel;

import io.nexuscore.kernel.libbpf.BpfException;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.libbpf.Errno;
import io.nexuscore.kernel.libbpf.Sysctl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.config.KernelConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Mode decision (user / auto / kernel) and the errors at the native boundary. */
class KernelDataPathModeTest {

    private static final String NO_SUCH_INTERFACE = "nxnone0";

    private final List<String> log = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            log.add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final Logger logger = Logger.getLogger(KernelDataPath.class.getName());
    private Path pinDir;

    @BeforeEach
    void captureLog() {
        logger.addHandler(capture);
        pinDir = KernelTestSupport.uniquePinDir();
    }

    @AfterEach
    void release() {
        logger.removeHandler(capture);
        KernelDataPath.removePins(pinDir);
    }

    private KernelConfig config(KernelConfig.Mode mode, String iface) {
        return new KernelConfig(mode, pinDir, List.of(iface), KernelConfig.XdpMode.GENERIC);
    }

    @Test
    void userModeNeverTouchesTheKernel() {
        assertEquals(Optional.empty(),
                KernelDataPath.open(config(KernelConfig.Mode.USER, "lo"), KernelTestSupport.DEFAULT_SCORING, Set.of(8080)));
        assertEquals(1, log.stream().filter(l -> l.startsWith("user-space mode: kernel.mode is 'user'")).count());
        assertTrue(!pinDir.toFile().exists(), "nothing pinned");
    }

    @Test
    void autoModeFallsBackWithOneLineSayingWhy() {
        KernelTestSupport.requireKernel();
        Optional<KernelDataPath> path = KernelDataPath.open(config(KernelConfig.Mode.AUTO, NO_SUCH_INTERFACE),
                KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        assertEquals(Optional.empty(), path);
        List<String> userSpace = log.stream().filter(l -> l.startsWith("user-space mode:")).toList();
        assertEquals(1, userSpace.size(), log.toString());
        assertTrue(userSpace.get(0).contains("if_nametoindex(" + NO_SUCH_INTERFACE + "): ENODEV (No such device)"),
                userSpace.get(0));
        assertTrue(!pinDir.toFile().exists(), "a failed load into a fresh pin directory leaves nothing behind");
    }

    @Test
    void kernelModeThrowsNamingCallObjectAndErrno() {
        KernelTestSupport.requireKernel();
        String fwmarkBefore = Sysctl.TCP_FWMARK_ACCEPT.read();
        BpfException e = assertThrows(BpfException.class, () -> KernelDataPath.open(
                config(KernelConfig.Mode.KERNEL, NO_SUCH_INTERFACE), KernelTestSupport.DEFAULT_SCORING, Set.of(8080)));
        assertEquals("if_nametoindex", e.call());
        assertEquals(NO_SUCH_INTERFACE, e.object());
        assertEquals(Errno.ENODEV, e.errno());
        assertEquals(fwmarkBefore, Sysctl.TCP_FWMARK_ACCEPT.read(), "a failed attach restores the sysctl");
    }

    @Test
    void mapAndObjectErrorsNameTheCall() {
        KernelTestSupport.requireKernel();
        KernelDataPath kernel = KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING,
                Set.of(8080), KernelConfig.XdpMode.GENERIC);
        try {
            BpfMap chain = BpfMap.openPinned(pinDir, "tc_chain", 4, 4);
            try (chain) {
                // A map fd is not a program fd: the kernel refuses it for a PROG_ARRAY slot.
                byte[] notAProgram = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .putInt(chain.fd()).array();
                BpfException e = assertThrows(BpfException.class,
                        () -> chain.update(new byte[] {1, 0, 0, 0}, notAProgram, BpfMap.BPF_ANY));
                assertEquals("bpf_map_update_elem(tc_chain): EINVAL (Invalid argument)", e.getMessage());
            }
            BpfException missing = assertThrows(BpfException.class,
                    () -> kernel.reload(Optional.of(Path.of("/nonexistent/nexus.bpf.o"))));
            assertEquals("bpf_object__open_file", missing.call());
            assertEquals(Errno.ENOENT, missing.errno());

            kernel.thresholds().write(new Thresholds(10, 20));
            assertEquals(new Thresholds(10, 20), kernel.thresholds().read(), "the failed reload changed nothing");
        } finally {
            KernelTestSupport.dispose(kernel);
        }
    }

    @Test
    void freshThresholdsComeFromConfigAndPinnedOnesSurviveALoad() {
        KernelTestSupport.requireKernel();
        KernelDataPath first = KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING,
                Set.of(8080), KernelConfig.XdpMode.GENERIC);
        try {
            assertEquals(Thresholds.DEFAULT, first.thresholds().read(), "fresh map: config thresholds");
            assertEquals(Set.copyOf(KernelDataPath.PINNED_MAPS), Set.of(pinDir.toFile().list()),
                    "exactly the LIBBPF_PIN_BY_NAME maps are pinned, under the configured directory");
            first.thresholds().write(new Thresholds(33, 99));
        } finally {
            first.close();
        }
        KernelDataPath second = KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING,
                Set.of(8080), KernelConfig.XdpMode.GENERIC);
        try {
            assertEquals(new Thresholds(33, 99), second.thresholds().read(), "pinned map reused, not reset");
        } finally {
            KernelTestSupport.dispose(second);
        }
    }
}
