package io.nexuscore.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.TempDirs;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The operator scripts as a user runs them, in order, against a real router in kernel mode:
 * start.sh → verify.sh → demo.sh → stress.sh (small counts) → cleanup.sh, then checks that cleanup
 * left nothing behind. The router gets its own ports, pin directory, state file and run directory
 * (NEXUSCORE_CONFIG, NEXUSCORE_RUN_DIR), so a router a user runs on the defaults is not touched.
 * Needs root and no XDP program on lo (an interface holds one): outside CI it skips otherwise.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ScriptsIT {

    private static Path workDir;
    private static Path pinDir;
    private static Map<String, String> env;
    private static boolean started;

    @BeforeAll
    static void setUp() throws Exception {
        OpsRules.require(OpsRules.isRoot(), "not root: start.sh needs root to load XDP/TC for kernel mode");
        OpsRules.require(Files.isExecutable(Path.of("/usr/sbin/bpftool")), "bpftool missing (scripts/install-deps.sh)");
        OpsRules.Run lo = OpsRules.run(List.of("bpftool", "-j", "net", "show", "dev", "lo"), Map.of(), 30);
        OpsRules.require(!lo.output().matches("(?s).*\"xdp\":\\[\\{.*"),
                "an XDP program is already attached on lo (" + lo.output().strip()
                        + "); an interface holds one, and this test must not replace it");

        workDir = Files.createTempDirectory("nexuscore-scripts-it-");
        pinDir = Path.of("/sys/fs/bpf/nexuscore-it-" + UUID.randomUUID().toString().substring(0, 8));
        Path config = workDir.resolve("nexuscore.json");
        Files.writeString(config, """
                {
                  "dataPlane": { "port": %d },
                  "control": { "port": %d, "stateFile": "%s" },
                  "kernel": { "mode": "kernel", "pinDir": "%s", "interfaces": ["lo"] }
                }
                """.formatted(freePort(), freePort(), workDir.resolve("state.json"), pinDir));
        env = new HashMap<>();
        env.put("NEXUSCORE_CONFIG", config.toString());
        env.put("NEXUSCORE_RUN_DIR", workDir.resolve("run").toString());
        env.put("NEXUSCORE_JAR", OpsRules.routerJar().toString());
        // stress.sh runs the load generator on this JVM's classpath (failsafe adds target/bench-classes)
        // instead of calling Maven.
        env.put("NEXUSCORE_CLASSPATH", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (env != null) {
            OpsRules.run(List.of("bash", "cleanup.sh"), env, 120);   // idempotent: a no-op after the cleanup test
        }
        TempDirs.deleteRecursively(workDir);
    }

    @Test
    @Order(1)
    void startRunsTheRouterInKernelMode() throws Exception {
        OpsRules.Run run = OpsRules.run(List.of("bash", "start.sh"), env, 240);
        assertEquals(0, run.exitCode(), run::toString);
        started = true;
        assertTrue(run.output().contains("mode: kernel"), run::toString);
        String pid = Files.readString(workDir.resolve("run/router.pid")).strip();
        assertTrue(ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false), "router pid " + pid + " alive");
    }

    @Test
    @Order(2)
    void verifyPassesEveryCheck() throws Exception {
        OpsRules.require(started, "start.sh failed");
        OpsRules.Run run = OpsRules.run(List.of("bash", "verify.sh"), env, 120);
        assertEquals(0, run.exitCode(), run::toString);
        for (String check : List.of("map score_thresholds pinned", "xdp on lo: nexus_classify", "tc on lo: nexus_tc_classify",
                "guest large.wasm valid", "request classified: nano")) {
            assertTrue(run.output().contains(check), () -> "verify.sh output lacks '" + check + "':\n" + run);
        }
        assertFalse(run.output().contains("FAIL"), run::toString);
    }

    @Test
    @Order(3)
    void demoLandsOneRequestPerTier() throws Exception {
        OpsRules.require(started, "start.sh failed");
        OpsRules.Run run = OpsRules.run(List.of("bash", "demo.sh"), env, 120);
        assertEquals(0, run.exitCode(), run::toString);
        for (String tier : List.of("nano", "small", "large")) {
            Matcher row = Pattern.compile("(?m)^" + tier + "\\s+(\\S+)\\s+(\\S+)\\s+(\\d+)\\s+(\\S+)\\s+200\\b").matcher(run.output());
            assertTrue(row.find(), () -> "no 200 row for " + tier + ":\n" + run);
            assertEquals(tier, row.group(1), "assigned tier");
            assertEquals(tier, row.group(2), "guest's tier");
        }
    }

    @Test
    @Order(4)
    void stressAnswersEveryRequestInItsTier() throws Exception {
        OpsRules.require(started, "start.sh failed");
        OpsRules.Run run = OpsRules.run(List.of("bash", "stress.sh", "--nano", "250", "--small", "50", "--large", "10",
                "--concurrency", "16", "--deadline-s", "240"), env, 300);
        assertEquals(0, run.exitCode(), run::toString);
        Matcher total = Pattern.compile("total: ok (\\d+), errors (\\d+), misclassification rate ([0-9.]+), misroute rate ([0-9.]+)")
                .matcher(run.output());
        assertTrue(total.find(), run::toString);
        assertEquals(310, Integer.parseInt(total.group(1)), "answered");
        assertEquals(0, Integer.parseInt(total.group(2)), "errors");
        assertEquals(0.0, Double.parseDouble(total.group(3)), "misclassification rate");
        for (String tier : List.of("nano", "small", "large")) {
            assertTrue(run.output().matches("(?s).*\\n" + tier + "\\s+\\d+.*"), () -> "no row for " + tier + ":\n" + run);
        }
    }

    @Test
    @Order(5)
    void cleanupStopsTheRouterAndLeavesNothing() throws Exception {
        OpsRules.require(started, "start.sh failed");
        String pid = Files.readString(workDir.resolve("run/router.pid")).strip();
        OpsRules.Run run = OpsRules.run(List.of("bash", "cleanup.sh"), env, 120);
        assertEquals(0, run.exitCode(), run::toString);
        assertFalse(ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false), "router still alive");
        assertFalse(Files.exists(pinDir), pinDir + " still exists");
        assertFalse(Files.exists(workDir.resolve("run/router.pid")), "PID file still there");
        OpsRules.Run lo = OpsRules.run(List.of("bpftool", "net", "show", "dev", "lo"), Map.of(), 30);
        assertFalse(lo.output().contains("nexus_"), "programs still attached on lo:\n" + lo);
        // The router detached its own programs on SIGTERM: cleanup had no leftovers to remove.
        assertTrue(run.output().contains("no programs of this router attached"), run::toString);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
