package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.config.ConfigException;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * dataPlane.maxHeldBodyBytes over real sockets: bodies that arrive slowly on many connections are
 * bounded together. The request whose body would pass the bound gets 503 body-budget and its
 * connection is closed; the bodies already held are served; bytes of a body that ended, or of a
 * connection that broke off, are given back.
 */
@ExtendWith(VertxExtension.class)
class HeldBodyBudgetTest {

    private static final int BODY = 4_000;
    private static final int FIRST_PART = 3_500;

    /** A chat request of exactly BODY bytes. */
    private static byte[] chatBody() {
        String open = "{\"messages\":[{\"role\":\"user\",\"content\":\"";
        String close = "\"}]}";
        return (open + "a".repeat(BODY - open.length() - close.length()) + close).getBytes(StandardCharsets.US_ASCII);
    }

    private static Socket sendPart(RouterRuntime router, byte[] body, int length) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), router.dataPlanePort());
        OutputStream out = socket.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body, 0, length);
        out.flush();
        return socket;
    }

    /** The answer's head and body up to the server's close or, for a kept connection, what came in 2 s. */
    private static String answer(Socket socket) throws IOException {
        socket.setSoTimeout(2_000);
        InputStream in = socket.getInputStream();
        ByteArrayOutputStream into = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                into.write(buffer, 0, n);
            }
        } catch (java.net.SocketTimeoutException kept) {
            // a kept-alive connection: what came is the answer
        } catch (IOException reset) {
            // closed with a reset after the answer
        }
        return into.toString(StandardCharsets.UTF_8);
    }

    private static void awaitHeld(DoubleSupplier held, double expected) throws InterruptedException {
        for (int i = 0; i < 200 && held.getAsDouble() != expected; i++) {
            Thread.sleep(25);
        }
        assertEquals(expected, held.getAsDouble(), "nexus_dataplane_body_bytes_held");
    }

    @Test
    void aBodyThatWouldPassTheBoundIs503WhileTheHeldOnesAreServed(Vertx vertx) throws Exception {
        JsonObject config = RouterFixture.config(LocalOpenAiServer.start(vertx).await());
        config.getJsonObject("dataPlane").put("maxBodyBytes", BODY).put("maxHeldBodyBytes", 6_000);
        RouterRuntime router = RouterFixture.start(config, EventSink.DISCARD);
        DoubleSupplier held = () -> router.registry().get("nexus_dataplane_body_bytes_held").gauge().value();
        byte[] body = chatBody();
        try {
            Socket first = sendPart(router, body, FIRST_PART);
            awaitHeld(held, FIRST_PART);

            Socket second = sendPart(router, body, FIRST_PART);
            String refused = answer(second);
            assertTrue(refused.startsWith("HTTP/1.1 503"), refused);
            assertTrue(refused.contains("body-budget") && refused.contains("Retry-After: 1"), refused);
            assertEquals(1.0, router.registry().get("nexus_http_errors").tag("type", "body-budget").counter().count());
            awaitHeld(held, FIRST_PART);

            first.getOutputStream().write(body, FIRST_PART, BODY - FIRST_PART);
            String served = answer(first);
            assertTrue(served.startsWith("HTTP/1.1 200"), served);
            awaitHeld(held, 0);

            // The bound is whole again: the same body fits, and a client that breaks off gives its bytes back.
            Socket broken = sendPart(router, body, FIRST_PART);
            awaitHeld(held, FIRST_PART);
            broken.close();
            awaitHeld(held, 0);
            Socket third = sendPart(router, body, BODY);
            String again = answer(third);
            assertTrue(again.startsWith("HTTP/1.1 200"), again);
            first.close();
            second.close();
            third.close();
        } finally {
            router.close();
        }
    }

    @Test
    void aBoundBelowOneBodyIsAConfigError() {
        JsonObject config = new JsonObject().put("dataPlane", new JsonObject().put("maxBodyBytes", 4096).put("maxHeldBodyBytes", 4095));
        ConfigException e = org.junit.jupiter.api.Assertions.assertThrows(ConfigException.class, () -> RouterConfig.fromJson(config));
        assertTrue(e.getMessage().contains("dataPlane.maxHeldBodyBytes (4095) must be at least dataPlane.maxBodyBytes (4096)"),
                e.getMessage());
        assertEquals(1L << 30, RouterConfig.fromJson(new JsonObject().put("dataPlane",
                new JsonObject().put("maxBodyBytes", 1L << 30))).dataPlane().maxHeldBodyBytes());
        assertEquals(256L << 20, RouterConfig.fromJson(new JsonObject()).dataPlane().maxHeldBodyBytes());
    }
}
