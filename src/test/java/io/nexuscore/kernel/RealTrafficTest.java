package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SocketMarks;
import io.nexuscore.kernel.libbpf.Sysctl;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.nexuscore.kernel.maps.TenantPolicyMap;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.KernelConfig;
import io.nexuscore.config.ScoringConfig;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Real traffic through the attached programs: a veth pair whose peer sits in a network namespace
 * this test creates; XDP (generic) and the TC chain on the host side; a JDK HTTP server on the
 * host-side address; curl inside the namespace. Nothing is attached to any interface the test did
 * not create, and everything is removed afterwards.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealTrafficTest {

    private static final ScoringConfig SCORING = new ScoringConfig(Thresholds.DEFAULT, ScoreWeights.DEFAULT);

    private static VethNetns veth;
    private static Path pinDir;
    private static KernelDataPath kernel;
    private static HttpServer server;
    private static int httpPort;
    private static int rawPort;
    private static String fwmarkBefore;
    /** What the server saw: client 4-tuple, request line, body length. */
    private static final List<Served> SERVED = new CopyOnWriteArrayList<>();

    record Served(FourTuple tuple, byte[] requestLine, long bodyLength) {
    }

    @BeforeAll
    static void setUp() throws IOException {
        KernelTestSupport.requireKernel();
        veth = VethNetns.create();
        httpPort = 20000 + ThreadLocalRandom.current().nextInt(20000);
        rawPort = httpPort + 1;
        server = HttpServer.create(new InetSocketAddress(veth.hostAddress, httpPort), 64);
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            InetSocketAddress client = exchange.getRemoteAddress();
            String line = exchange.getRequestMethod() + " " + exchange.getRequestURI().toString() + " " + exchange.getProtocol();
            SERVED.add(new Served(new FourTuple((Inet4Address) client.getAddress(), client.getPort(), veth.hostAddress, httpPort),
                    line.getBytes(StandardCharsets.ISO_8859_1), body.length));
            byte[] reply = "ok\n".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, reply.length);
            exchange.getResponseBody().write(reply);
            exchange.close();
        });
        server.start();
        fwmarkBefore = Sysctl.TCP_FWMARK_ACCEPT.read();
        pinDir = KernelTestSupport.uniquePinDir();
        KernelConfig config = new KernelConfig(KernelConfig.Mode.KERNEL, pinDir, List.of(veth.hostInterface),
                KernelConfig.XdpMode.GENERIC);
        kernel = KernelDataPath.load(config, SCORING, Set.of(httpPort, rawPort));
    }

    @AfterAll
    static void tearDown() {
        try {
            if (server != null) {
                server.stop(0);
            }
            if (kernel != null) {
                KernelTestSupport.dispose(kernel);
            }
        } finally {
            if (veth != null) {
                veth.close();
            }
            if (pinDir != null) {
                KernelDataPath.removePins(pinDir);
            }
        }
    }

    private static String url(String path) {
        return "http://" + veth.hostAddress.getHostAddress() + ":" + httpPort + path;
    }

    /** POSTs {@code bodyLength} bytes from inside the namespace; returns what the server saw. */
    private static Served post(String path, int bodyLength) {
        int before = SERVED.size();
        veth.inNamespace("sh", "-c", "head -c " + bodyLength + " /dev/zero | tr '\\0' b | curl -sS -f -m 10 "
                + "-H 'Expect:' --data-binary @- " + url(path) + " -o /dev/null");
        assertEquals(before + 1, SERVED.size(), "server saw the request");
        return SERVED.get(before);
    }

    private static KernelVerdict verdictFor(Served served) {
        return kernel.verdicts().lookup(served.tuple())
                .orElseThrow(() -> new AssertionError("no kernel verdict for " + served.tuple()));
    }

    @Test
    @Order(1)
    void verdictPerConnectionHasTheScoreOfTheDocumentedFormula() {
        assertEquals("1", Sysctl.TCP_FWMARK_ACCEPT.read(), "load sets net.ipv4.tcp_fwmark_accept");
        Map<Tier, Long> before = kernel.tierCounters().counts();

        // Bodies of "bbb...", no prompt string: the score comes from the length alone (docs/how-it-works.md),
        // worked out by hand here, not by the Java scorer: (length - 64) bytes at 241/1024 tokens, rounded.
        Served small = post("/v1/summarize", 400);      // 336 * 241 / 1024 = 79.08 -> 79, + 10 (sum) = 89
        Served nano = post("/v1/chat", 40);              // under the 64-byte envelope guess: 0
        Served large = post("/v1/generate/analysis", 600); // 536 * 241 / 1024 = 126.15 -> 126, + 20 (gen) + 25 (ana) = 171
        List<Served> requests = List.of(small, nano, large);
        int[] expectedScores = {89, 0, 171};

        for (int i = 0; i < requests.size(); i++) {
            Served served = requests.get(i);
            KernelVerdict v = verdictFor(served);
            assertEquals(expectedScores[i], v.score(), new String(served.requestLine(), StandardCharsets.ISO_8859_1));
            assertTrue(v.belongsTo(Scorer.requestLineHash(served.requestLine()), served.bodyLength()),
                    "verdict verifies against the served request");
        }
        assertEquals(Tier.SMALL, verdictFor(small).tier());
        assertEquals(Tier.NANO, verdictFor(nano).tier());
        assertEquals(Tier.LARGE, verdictFor(large).tier());

        Map<Tier, Long> after = kernel.tierCounters().counts();
        for (Tier t : Tier.values()) {
            assertEquals(before.get(t) + 1, after.get(t), "tier_counters[" + t + "]");
        }
    }

    @Test
    @Order(2)
    void liveThresholdChangeAppliesToTheNextRequest() {
        assertEquals(Tier.SMALL, verdictFor(post("/v1/summarize", 400)).tier());
        kernel.thresholds().write(new Thresholds(5, 50));
        try {
            assertEquals(Tier.LARGE, verdictFor(post("/v1/summarize", 400)).tier());
        } finally {
            kernel.thresholds().write(Thresholds.DEFAULT);
        }
    }

    @Test
    @Order(3)
    void synFromTenantCarriesTheFloorIntoSoMark() throws Exception {
        try (RawListener listener = new RawListener(veth.hostAddress, rawPort)) {
            assertEquals(0, connectAndReadMark(listener), "no tenant rule: no mark");

            io.nexuscore.net.Ipv4Prefix tenant = io.nexuscore.net.Ipv4Prefix.host(veth.peerAddress);
            kernel.tenantPolicy().put(tenant, Tier.LARGE);
            try {
                int mark = connectAndReadMark(listener);
                assertEquals(Optional.of(Tier.LARGE), SocketMarks.tenantFloor(mark), String.format("SO_MARK 0x%08x", mark));
            } finally {
                kernel.tenantPolicy().remove(tenant);
            }
        }
    }

    private static int connectAndReadMark(RawListener listener) throws Exception {
        String target = veth.hostAddress.getHostAddress() + ":" + rawPort;
        CompletableFuture<Shell.Result> client = CompletableFuture.supplyAsync(() -> Shell.run(
                "ip", "netns", "exec", veth.namespace, "curl", "-s", "-m", "5", "http://" + target + "/"));
        int mark = listener.acceptAndReadMark();
        client.get(); // the listener closes at once: curl's own result does not matter
        return mark;
    }

    @Test
    @Order(4)
    void reloadUnderTrafficKeepsMapEntries() throws Exception {
        kernel.thresholds().write(new Thresholds(61, 131));
        Served earlier = post("/v1/refine", 100);
        KernelVerdict earlierVerdict = verdictFor(earlier);
        int entriesBefore = kernel.routingDecisions().snapshot().size();

        int requests = 60;
        CompletableFuture<Shell.Result> traffic = CompletableFuture.supplyAsync(() -> Shell.run(
                "ip", "netns", "exec", veth.namespace, "sh", "-c",
                "for i in $(seq 1 " + requests + "); do curl -sS -f -m 10 -o /dev/null " + url("/v1/gen?i=") + "$i || exit 1; done"));
        ReloadResult first = kernel.reload(Optional.empty());
        ReloadResult second = kernel.reload(Optional.empty());
        Shell.Result result = traffic.get();

        assertEquals(0, result.exitCode(), "every request during the reloads succeeded: " + result.output());
        assertNotEquals(first.oldXdpProgramId(), first.newXdpProgramId());
        assertEquals(first.newXdpProgramId(), second.oldXdpProgramId());
        KernelDataPath.Attachment attached = kernel.attachments().get(0);
        assertEquals(second.newXdpProgramId(), attached.xdpProgramId(), "the new XDP program is attached");
        assertEquals(second.newTcProgramId(), attached.tcProgramId(), "the new TC program is attached");

        assertEquals(new Thresholds(61, 131), kernel.thresholds().read(), "thresholds survive reload");
        assertEquals(Optional.of(earlierVerdict), kernel.verdicts().lookup(earlier.tuple()), "entries survive reload");
        assertTrue(kernel.routingDecisions().snapshot().size() >= entriesBefore + requests,
                "every request of the run has its verdict");
        kernel.thresholds().write(Thresholds.DEFAULT);

        // After the reloads the new programs classify: a fresh request gets a verdict.
        assertEquals(Tier.SMALL, verdictFor(post("/v1/summarize", 400)).tier());
    }

    @Test
    @Order(5)
    void closeDetachesEverythingAndRestoresTheSysctl() {
        int tcProgram = kernel.attachments().get(0).tcProgramId();
        assertTrue(KernelTestSupport.linkHolds(tcProgram), "a tcx link holds the TC program until close");
        kernel.close();

        String link = Shell.ok("ip", "-d", "link", "show", "dev", veth.hostInterface);
        assertFalse(link.contains("xdp"), "no XDP program left:\n" + link);
        assertFalse(KernelTestSupport.linkHolds(tcProgram), "no tcx link left holding the TC program " + tcProgram);
        assertEquals(List.of(), kernel.attachments(), "nothing reported attached after close");
        assertEquals(fwmarkBefore, Sysctl.TCP_FWMARK_ACCEPT.read(), "sysctl restored");
        assertTrue(pinDir.resolve("routing_decisions").toFile().exists(), "pins kept by close");
        kernel.removePins();
        assertFalse(pinDir.toFile().exists(), "removePins deletes the pin directory");
    }
}
