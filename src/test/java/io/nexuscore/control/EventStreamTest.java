package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.control.SseClient.SseEvent;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** GET /events over real sockets: order, resume, gaps, filters, and a reader that stops reading. */
@ExtendWith(VertxExtension.class)
class EventStreamTest {

    private ControlFixture fx;

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    private void deploy(Vertx vertx, VertxTestContext ctx, int history, int buffer, Runnable then) {
        fx = new ControlFixture(TestKernel.ports(Thresholds.DEFAULT, true), history, buffer);
        fx.deploy(vertx).onComplete(ctx.succeeding(f -> then.run()));
    }

    private static JsonObject request(int n) {
        return new JsonObject().put("tier", "nano").put("tenant", "t" + n).put("latency_ms", 1.5);
    }

    @Test
    void thresholdRequestAndReloadEventsArriveInOrderAndResumeFromLastEventId(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, 64, 64, () -> SseClient.connect(vertx, fx.port, "/events", Optional.empty())
                .compose(sse -> fx.patchThresholds("{\"nano_max\": 50}")
                        .map(r -> {
                            fx.hub.publish("request", request(1));
                            return r;
                        })
                        .compose(r -> fx.authed(fx.client.post(fx.port, "127.0.0.1", "/classifier/reload")).send())
                        .compose(reload -> {
                            ctx.verify(() -> assertEquals(200, reload.statusCode(), reload.bodyAsString()));
                            return sse.await(3);
                        }))
                .compose(events -> {
                    ctx.verify(() -> {
                        assertEquals(List.of("threshold", "request", "reload"), events.stream().map(SseEvent::type).toList());
                        assertEquals("api", events.get(0).data().getString("source"));
                        assertEquals(50, events.get(0).data().getJsonObject("new").getInteger("nano_max"));
                        assertEquals("t1", events.get(1).data().getString("tenant"));
                        assertEquals(100L, events.get(2).data().getJsonObject("old_program_ids").getLong("nexus_classify"));
                        assertTrue(events.get(0).id().get() < events.get(1).id().get());
                        assertTrue(events.get(1).id().get() < events.get(2).id().get());
                    });
                    return SseClient.connect(vertx, fx.port, "/events", events.get(0).id())
                            .compose(resumed -> resumed.await(2))
                            .map(resumed -> {
                                ctx.verify(() -> assertEquals(events.subList(1, 3), resumed));
                                return resumed;
                            });
                })
                .onComplete(ctx.succeedingThenComplete()));
    }

    @Test
    void typeFilterDeliversOnlyTheNamedTypes(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, 64, 64, () -> SseClient.connect(vertx, fx.port, "/events?types=threshold,reload", Optional.empty())
                .compose(sse -> {
                    fx.hub.publish("request", request(1));
                    return fx.patchThresholds("{\"small_max\": 150}")
                            .map(r -> {
                                fx.hub.publish("request", request(2));
                                fx.hub.publish("reload", new JsonObject().put("marker", true));
                                return r;
                            })
                            .compose(r -> sse.awaitEvent("reload", new JsonObject().put("marker", true)));
                })
                .onComplete(ctx.succeeding(events -> ctx.verify(() -> {
                    // Events arrive in order: the requests published before the marker would be here.
                    assertEquals(List.of("threshold", "reload"), events.stream().map(SseEvent::type).toList());
                    ctx.completeNow();
                }))));
    }

    @Test
    void resumeFromAnIdOlderThanTheHistoryStartsWithAGap(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, 4, 64, () -> {
            for (int i = 1; i <= 10; i++) {
                fx.hub.publish("request", request(i));
            }
            SseClient.connect(vertx, fx.port, "/events", Optional.of(2L))
                    .compose(sse -> sse.await(5))
                    .onComplete(ctx.succeeding(events -> ctx.verify(() -> {
                        SseEvent gap = events.get(0);
                        assertEquals("gap", gap.type());
                        assertEquals(Optional.empty(), gap.id(), "a gap notice must not move the client's resume point");
                        assertEquals(3L, gap.data().getLong("first_missed_id"));
                        assertEquals(6L, gap.data().getLong("last_missed_id"));
                        assertEquals(List.of(7L, 8L, 9L, 10L), events.subList(1, 5).stream().map(e -> e.id().get()).toList());
                        ctx.completeNow();
                    })));
        });
    }

    /**
     * Streams are bounded per client (control.maxSubscribersPerClient, default 8; one loopback
     * address here): a token holder's stream past the bound closes that client's oldest instead of
     * being refused, so the operator is never locked out; the number open stays at the bound.
     */
    @Test
    void aTokenHoldersStreamPastThePerClientBoundClosesTheOldest(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, 4, 4, () -> vertx.executeBlocking(() -> {
            int bound = io.nexuscore.config.ControlConfig.DEFAULT_MAX_SUBSCRIBERS_PER_CLIENT;
            List<Socket> open = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < bound; i++) {
                    open.add(openStream());
                }
                assertEquals(bound, fx.hub.subscriberCount());
                open.add(openStream()); // one more: 200, not 503
                Socket oldest = open.get(0);
                oldest.setSoTimeout(10_000);
                java.io.InputStream in = oldest.getInputStream();
                byte[] buffer = new byte[4096];
                int n;
                do {
                    n = in.read(buffer);
                } while (n > 0 && !new String(buffer, 0, n, StandardCharsets.ISO_8859_1).contains("0\r\n\r\n"));
                assertEquals(bound, fx.hub.subscriberCount(), "the oldest stream made room");
                assertTrue(fx.registry.scrape().contains("nexus_sse_refused_total 0.0"), "nothing refused");
                return null;
            } finally {
                for (Socket socket : open) {
                    socket.close();
                }
            }
        }).onComplete(ctx.succeedingThenComplete()));
    }

    /** A GET /events whose head says 200 and which stays open. */
    private Socket openStream() throws java.io.IOException {
        Socket socket = new Socket("127.0.0.1", fx.port);
        String answer = exchange(socket, false);
        assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
        return socket;
    }

    /** Sends GET /events and reads the head (and, when {@code whole}, until the server closes or 5 s pass). */
    private String exchange(Socket socket, boolean whole) throws java.io.IOException {
        socket.setSoTimeout(5_000);
        OutputStream out = socket.getOutputStream();
        out.write(("GET /events HTTP/1.1\r\nHost: 127.0.0.1:" + fx.port + "\r\nAuthorization: Bearer " + ControlFixture.TOKEN
                + "\r\n" + (whole ? "Connection: close\r\n" : "") + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        StringBuilder answer = new StringBuilder();
        byte[] buffer = new byte[4096];
        try {
            for (int n; (n = socket.getInputStream().read(buffer)) >= 0; ) {
                answer.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                if (!whole && answer.indexOf("\r\n\r\n") >= 0) {
                    break;
                }
            }
        } catch (java.net.SocketTimeoutException e) {
            // what arrived is the answer
        }
        return answer.toString();
    }

    @Test
    void badQueryOrLastEventIdIs400NamingIt(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ctx, 4, 4, () -> fx.authed(fx.get("/events?types=request,Bad!")).send()
                .compose(r -> {
                    ctx.verify(() -> {
                        assertEquals(400, r.statusCode());
                        assertEquals("types", r.bodyAsJsonObject().getString("field"));
                    });
                    return fx.authed(fx.get("/events")).putHeader("Last-Event-ID", "abc").send();
                })
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(400, r.statusCode());
                    assertEquals("Last-Event-ID", r.bodyAsJsonObject().getString("field"));
                    ctx.completeNow();
                }))));
    }

    @Test
    void aReaderThatStopsReadingLosesEventsWithACountAndNeverBlocksThePublisherOrOthers(Vertx vertx,
                                                                                          VertxTestContext ctx) {
        AtomicInteger stalledQueueAfterDrops = new AtomicInteger(-1);
        AtomicInteger publishedBeforeDrop = new AtomicInteger();
        // The live reader takes only the final marker, so every drop counted is the stalled reader's.
        deploy(vertx, ctx, 16, 8, () -> SseClient.connect(vertx, fx.port, "/events?types=threshold", Optional.empty())
                .compose(fast -> vertx.executeBlocking(() -> {
                    try (Socket stalled = new Socket("127.0.0.1", fx.port)) {
                        OutputStream out = stalled.getOutputStream();
                        out.write(("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + ControlFixture.TOKEN
                                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        // Never read: the kernel's socket buffers fill, then Vert.x's write queue; only then
                        // does the subscriber's bounded queue keep events, and drop when full. Publish one
                        // event at a time, letting the queue drain while the socket takes data, so the
                        // first drop happens only once the socket pushes back (bounded in count).
                        String payload = "x".repeat(8192);
                        int published = 0;
                        while (fx.hub.droppedTotal() == 0 && published < 100_000) {
                            fx.hub.publish("request", new JsonObject().put("n", published++).put("pad", payload));
                            long giveUp = System.nanoTime() + 200_000_000L;
                            while (fx.hub.maxQueued() > 0 && System.nanoTime() < giveUp) {
                                LockSupport.parkNanos(20_000);
                            }
                        }
                        stalledQueueAfterDrops.set(fx.hub.maxQueued());
                        fx.hub.publish("threshold", new JsonObject().put("marker", true));
                        publishedBeforeDrop.set(published);
                        System.out.println("stalled reader: first drop after " + published + " events of 8 KiB");
                        return published;
                    }
                }).compose(n -> fast.awaitEvent("threshold", new JsonObject().put("marker", true))))
                .compose(fastEvents -> fx.get("/metrics").send().map(metrics -> {
                    ctx.verify(() -> {
                        assertTrue(fx.hub.droppedTotal() > 0, "the stalled subscriber must have dropped events");
                        assertTrue(publishedBeforeDrop.get() > 9,
                                "events flowed into the socket before it pushed back: " + publishedBeforeDrop.get());
                        assertTrue(stalledQueueAfterDrops.get() <= 8, "queue bounded: " + stalledQueueAfterDrops.get());
                        String text = metrics.bodyAsString();
                        assertTrue(text.contains("nexus_sse_dropped_total"), text);
                        assertEquals(1, fastEvents.size(), "the live reader lost nothing");
                        assertEquals(fx.hub.lastId(), fastEvents.get(0).id().get());
                    });
                    return metrics;
                }))
                .onComplete(ctx.succeedingThenComplete()));
    }
}
