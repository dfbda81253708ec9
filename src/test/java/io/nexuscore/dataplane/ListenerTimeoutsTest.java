package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.events.EventSink;
import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inference listener's own timeouts over real sockets: idle clients that announce big bodies
 * cost memory for what they send, not for what they announce, and are closed by the body timeout
 * while normal requests are still served; a client that never finishes its head is closed by the
 * header timeout.
 */
@ExtendWith(VertxExtension.class)
class ListenerTimeoutsTest {

    private static final int IDLE_CONNECTIONS = 2_000;
    private static final long HEAP_BOUND = 64L << 20;

    private static JsonObject config(LocalOpenAiServer upstream, long headerTimeoutMs, long bodyTimeoutMs) {
        JsonObject config = RouterFixture.config(upstream);
        config.getJsonObject("dataPlane").put("maxBodyBytes", 2L << 20)
                .put("headerTimeoutMs", headerTimeoutMs).put("bodyTimeoutMs", bodyTimeoutMs);
        return config;
    }

    private static long usedHeapAfterGc(MemoryMXBean memory) throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    /** Reads until the server closes (true) or the bound passes (false); the bytes go to {@code into}. */
    private static boolean closedByServer(Socket socket, ByteArrayOutputStream into) throws IOException {
        socket.setSoTimeout(30_000);
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[1024];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                into.write(buffer, 0, n);
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Test
    void idleConnectionsAnnouncingAMegabyteHoldLittleHeapAndAreClosedByTheBodyTimeout(Vertx vertx) throws Exception {
        RouterRuntime router = RouterFixture.start(config(LocalOpenAiServer.start(vertx).await(), 60_000, 4_000),
                EventSink.DISCARD);
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        List<Socket> idle = new ArrayList<>();
        try {
            long before = usedHeapAfterGc(memory);
            byte[] head = ("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 1048576\r\n\r\n{").getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < IDLE_CONNECTIONS; i++) {
                Socket socket = new Socket(InetAddress.getLoopbackAddress(), router.dataPlanePort());
                idle.add(socket);
                socket.getOutputStream().write(head);
                socket.getOutputStream().flush();
            }
            // Every head has been read once a request on a fresh connection is answered after them
            // (the acceptors take connections in order); the normal request must not wait for the idle ones.
            RouterFixture.Reply normal = RouterFixture.post(vertx.createHttpClient(), router.dataPlanePort(),
                    "/v1/chat/completions", RouterFixture.chat(10)).await();
            assertEquals(200, normal.status());
            long held = usedHeapAfterGc(memory) - before;
            assertTrue(held < HEAP_BOUND, IDLE_CONNECTIONS + " idle connections hold " + (held >> 20) + " MiB of heap");

            int closed = 0;
            int timedOut = 0;
            for (Socket socket : idle) {
                ByteArrayOutputStream received = new ByteArrayOutputStream();
                if (closedByServer(socket, received)) {
                    closed++;
                    timedOut += received.toString(StandardCharsets.ISO_8859_1).startsWith("HTTP/1.1 408") ? 1 : 0;
                }
            }
            assertEquals(IDLE_CONNECTIONS, closed, "the body timeout left connections open");
            assertEquals(IDLE_CONNECTIONS, timedOut, "each idle request gets its 408 before the close");
            assertEquals(IDLE_CONNECTIONS, DataPlaneTest.errors(router, "request-timeout"));
        } finally {
            for (Socket socket : idle) {
                socket.close();
            }
            router.close();
        }
    }

    @Test
    void aKeepAliveClientTricklingItsNextHeadIsClosedByTheHeaderTimeout(Vertx vertx) throws Exception {
        assertTrickledHeadIsCutOff(vertx, true);
    }

    /** The first head of a fresh connection is on the same clock, from the accept. */
    @Test
    void aClientTricklingItsFirstHeadIsClosedByTheHeaderTimeout(Vertx vertx) throws Exception {
        assertTrickledHeadIsCutOff(vertx, false);
    }

    private static void assertTrickledHeadIsCutOff(Vertx vertx, boolean afterARequest) throws Exception {
        RouterRuntime router = RouterFixture.start(config(LocalOpenAiServer.start(vertx).await(), 500, 60_000),
                EventSink.DISCARD);
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), router.dataPlanePort())) {
            if (afterARequest) {
                // One complete request first: the clock for the next head starts with its answer.
                socket.getOutputStream().write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                socket.getOutputStream().flush();
            }
            byte[] head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII);
            boolean refused = false;
            // One byte every 100 ms keeps the connection busy enough for an idle timeout, never complete.
            for (int i = 0; i < head.length && !refused; i++) {
                try {
                    socket.getOutputStream().write(head[i]);
                    socket.getOutputStream().flush();
                    Thread.sleep(100);
                } catch (IOException e) {
                    refused = true;
                }
            }
            for (int i = 0; i < 300 && !refused; i++) {
                try {
                    socket.getOutputStream().write('X');
                    socket.getOutputStream().flush();
                    Thread.sleep(100);
                } catch (IOException e) {
                    refused = true;
                }
            }
            assertTrue(refused || closedByServer(socket, new ByteArrayOutputStream()),
                    "a head trickled for 30 s was never cut off");
        } finally {
            router.close();
        }
    }
}
