package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.kernel.maps.SocketMarks;
import io.nexuscore.classify.Tier;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.MarkedSocket;
import io.nexuscore.testing.Privileged;
import io.nexuscore.http.IoTransport;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The tenant floor rides on the accepted socket's SO_MARK. With net.ipv4.tcp_fwmark_accept=1 the
 * kernel copies the SYN's mark to the accepted socket; here the client's own SO_MARK marks the SYN
 * (on loopback the mark survives), standing in for the TC program that marks it in production.
 */
@ExtendWith(VertxExtension.class)
class TenantFloorSoMarkTest {

    private static final Path FWMARK_ACCEPT = Path.of("/proc/sys/net/ipv4/tcp_fwmark_accept");
    private static final Pattern ASSIGNED = Pattern.compile("(?i)x-nx-assigned-tier: (\\w+)");

    private String savedFwmarkAccept;
    private RouterRuntime router;

    @BeforeEach
    void enableFwmarkAccept() throws Exception {
        Privileged.requireRoot("setting SO_MARK on a socket and net.ipv4.tcp_fwmark_accept need CAP_NET_ADMIN");
        savedFwmarkAccept = Files.readString(FWMARK_ACCEPT).trim();
        if (!savedFwmarkAccept.equals("1")) {
            Files.writeString(FWMARK_ACCEPT, "1");
        }
    }

    @AfterEach
    void restore() throws Exception {
        if (router != null) {
            router.close();
        }
        if (savedFwmarkAccept != null && !savedFwmarkAccept.equals("1")) {
            Files.writeString(FWMARK_ACCEPT, savedFwmarkAccept);
        }
    }

    /** Both native engines give the accepted socket's fd, so both read its mark. */
    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "epoll"})
    void markedConnectionsGetTheirFloorAndOthersDoNot(String transport, Vertx vertx) {
        Privileged.require(IoTransport.valueOf(transport.toUpperCase(Locale.ROOT)).available(),
                transport + " is unavailable on this machine");
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        JsonObject config = RouterFixture.config(upstream);
        config.getJsonObject("dataPlane").put("transport", transport);
        router = RouterFixture.start(config, EventSink.DISCARD);
        assertEquals(1.0, router.registry().get("nexus.io.transport").tag("transport", transport).gauge().value(),
                "the router runs on the engine it was given");
        int port = router.dataPlanePort();
        String body = RouterFixture.chat(10).encode();
        String request = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;

        assertEquals("nano", assigned(MarkedSocket.exchange(port, 0, request)), "no mark, no floor");
        assertEquals("large", assigned(MarkedSocket.exchange(port, SocketMarks.encode(SocketMarks.KIND_FLOOR, Tier.LARGE), request)));
        assertEquals("small", assigned(MarkedSocket.exchange(port, SocketMarks.encode(SocketMarks.KIND_FLOOR, Tier.SMALL), request)));
        assertEquals("nano", assigned(MarkedSocket.exchange(port, 0x1234, request)), "a foreign mark is no floor");
    }

    private static String assigned(String response) {
        assertTrue(response.startsWith("HTTP/1.1 200"), response);
        Matcher m = ASSIGNED.matcher(response);
        assertTrue(m.find(), response);
        return m.group(1);
    }
}
