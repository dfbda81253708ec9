package io.nexuscore.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.KernelConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * IPv6 and IPv4 clients of one veth pair (peer in a namespace made for the test, XDP generic and the
 * TC chain on the host side), each classified in the kernel: the verdict is found by the v6 4-tuple
 * the server saw, in its mmap'ed slot (the store; routing_decisions6 is only the collision fallback),
 * and it is the Java scorer's for the request served.
 */
class DualStackTrafficTest {


    private static VethNetns veth;
    private static Path pinDir;
    private static KernelDataPath kernel;
    private static HttpServer server6;
    private static HttpServer server4;
    private static int port;
    private static final List<RealTrafficTest.Served> SERVED = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void setUp() throws IOException {
        KernelTestSupport.requireKernel();
        veth = VethNetns.create();
        port = 20000 + ThreadLocalRandom.current().nextInt(20000);
        server6 = serve(veth.hostAddress6);
        server4 = serve(veth.hostAddress);
        pinDir = KernelTestSupport.uniquePinDir();
        kernel = KernelDataPath.load(new KernelConfig(KernelConfig.Mode.KERNEL, pinDir, List.of(veth.hostInterface),
                KernelConfig.XdpMode.GENERIC), KernelTestSupport.DEFAULT_SCORING, Set.of(port));
    }

    private static HttpServer serve(InetAddress address) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(address, port), 64);
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            InetSocketAddress client = exchange.getRemoteAddress();
            String line = exchange.getRequestMethod() + " " + exchange.getRequestURI() + " " + exchange.getProtocol();
            SERVED.add(new RealTrafficTest.Served(new FourTuple(client.getAddress(), client.getPort(), address, port),
                    line.getBytes(StandardCharsets.ISO_8859_1), body.length));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
        return server;
    }

    @AfterAll
    static void tearDown() {
        try {
            for (HttpServer s : new HttpServer[] {server6, server4}) {
                if (s != null) {
                    s.stop(0);
                }
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

    /** curl from the namespace: one connection, one POST of {@code bodyLength} bytes per path. */
    private static List<RealTrafficTest.Served> post(InetAddress server, int bodyLength, String... paths) {
        String host = server.getAddress().length == 16 ? "[" + server.getHostAddress() + "]" : server.getHostAddress();
        int before = SERVED.size();
        StringBuilder urls = new StringBuilder();
        for (String path : paths) {
            urls.append(" http://").append(host).append(':').append(port).append(path);
        }
        veth.inNamespace("sh", "-c", "head -c " + bodyLength + " /dev/zero | tr '\\0' b > /tmp/nx-body-" + veth.namespace
                + " && curl -sS -f -g -m 10 -H 'Expect:' --data-binary @/tmp/nx-body-" + veth.namespace + urls
                + " -o /dev/null; rc=$?; rm -f /tmp/nx-body-" + veth.namespace + "; exit $rc");
        assertEquals(before + paths.length, SERVED.size(), "server saw every request");
        return SERVED.subList(before, SERVED.size());
    }

    /** {@code score} worked out by hand (docs/how-it-works.md), not by the Java scorer: the bodies hold no prompt string. */
    private static void assertKernelScored(RealTrafficTest.Served served, int score, Tier tier) {
        String what = served.tuple() + " " + new String(served.requestLine(), StandardCharsets.ISO_8859_1);
        KernelVerdict verdict = kernel.verdicts().lookup(served.tuple())
                .orElseThrow(() -> new AssertionError("no kernel verdict for " + what));
        assertEquals(score, verdict.score(), what);
        assertEquals(tier, verdict.tier(), what);
        assertTrue(verdict.belongsTo(Scorer.requestLineHash(served.requestLine()), served.bodyLength()),
                "verifies against the served request: " + what);
        assertEquals(Optional.of(verdict), kernel.verdicts().fromSlot(served.tuple()), "mmap slot: " + what);
        assertEquals(Optional.of(verdict), kernel.routingDecisions().lookup(served.tuple()), "verdict store: " + what);
        // A handful of connections in 1M (IPv4) / 64K (IPv6) slots: no collision, so nothing in the fallback map.
        assertEquals(Optional.empty(), kernel.verdicts().fromMap(served.tuple()), "LRU fallback: " + what);
    }

    @Test
    void ipv6AndIpv4ClientsAreBothClassifiedInTheKernel() {
        Map<Tier, Long> before = kernel.tierCounters().counts();

        // No prompt string in "bbb...": (length - 64) bytes at 241/1024 tokens, rounded, plus the line's keywords.
        RealTrafficTest.Served v6 = post(veth.hostAddress6, 400, "/v1/summarize").get(0); // 336 * 241 / 1024 = 79.08 -> 79, + 10: 89, small
        RealTrafficTest.Served v4 = post(veth.hostAddress, 40, "/v1/chat").get(0);         // under the 64-byte guess: 0, nano

        assertTrue(v6.tuple().ipv6(), "the server saw an IPv6 client: " + v6.tuple());
        assertEquals(veth.peerAddress6, v6.tuple().srcAddress());
        assertFalse(v4.tuple().ipv6());
        assertKernelScored(v6, 89, Tier.SMALL);
        assertKernelScored(v4, 0, Tier.NANO);
        assertTrue(kernel.routingDecisions().snapshot().containsKey(v6.tuple()), "the verdict store holds the v6 4-tuple");

        Map<Tier, Long> after = kernel.tierCounters().counts();
        assertEquals(before.get(Tier.SMALL) + 1, after.get(Tier.SMALL));
        assertEquals(before.get(Tier.NANO) + 1, after.get(Tier.NANO));
    }

    @Test
    void ipv6KeepAliveConnectionHoldsItsLatestHeadOnly() {
        List<RealTrafficTest.Served> served = post(veth.hostAddress6, 800, "/v1/generate", "/v1/models");
        RealTrafficTest.Served first = served.get(0);
        RealTrafficTest.Served second = served.get(1);
        assertEquals(first.tuple(), second.tuple(), "curl reused the connection");

        assertKernelScored(second, 173, Tier.LARGE); // no prompt string: 736 * 241 / 1024 = 173.22 -> 173, no keyword
        KernelVerdict latest = kernel.verdicts().lookup(first.tuple()).orElseThrow();
        assertFalse(latest.belongsTo(Scorer.requestLineHash(first.requestLine()), first.bodyLength()),
                "the first request's check fails against the connection's latest verdict");
        assertEquals(2, kernel.routingDecisions().decision(second.tuple()).orElseThrow().heads());
    }
}
