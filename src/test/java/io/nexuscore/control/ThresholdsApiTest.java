package io.nexuscore.control;
import io.nexuscore.events.EventHub;
import io.nexuscore.http.ProblemType;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@ExtendWith(VertxExtension.class)
class ThresholdsApiTest {

    private ControlFixture fx;

    @BeforeEach
    void deploy(Vertx vertx, VertxTestContext ctx) {
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test"), 64, 16);
        fx.deploy(vertx).onComplete(ctx.succeedingThenComplete());
    }

    @AfterEach
    void cleanUp() {
        fx.deleteStateDir();
    }

    @Test
    void patchChangesWhatGetReturnsTheStoreAndTheStateFile(VertxTestContext ctx) {
        fx.patchThresholds("{\"nano_max\": 40}")
                .compose(patched -> {
                    ctx.verify(() -> {
                        assertEquals(200, patched.statusCode());
                        assertEquals(new JsonObject().put("nano_max", 40).put("small_max", 130).put("valid", true), patched.bodyAsJsonObject());
                    });
                    return fx.get("/thresholds").send();
                })
                .onComplete(ctx.succeeding(got -> ctx.verify(() -> {
                    assertEquals(200, got.statusCode());
                    assertEquals(new JsonObject().put("nano_max", 40).put("small_max", 130).put("valid", true), got.bodyAsJsonObject());
                    assertEquals(new Thresholds(40, 130), fx.kernel.thresholds().read());
                    JsonObject saved = new JsonObject(Files.readString(fx.stateFile));
                    assertEquals(40, saved.getJsonObject("thresholds").getInteger("nano_max"));
                    ctx.completeNow();
                })));
    }

    @Test
    void plainJsonContentTypeIsAcceptedAndBothFieldsMerge(VertxTestContext ctx) {
        fx.authed(fx.client.patch(fx.port, "127.0.0.1", "/thresholds"))
                .sendJsonObject(new JsonObject().put("nano_max", 140).put("small_max", 200))
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(200, r.statusCode(), r.bodyAsString());
                    assertEquals(new Thresholds(140, 200), fx.kernel.thresholds().read());
                    ctx.completeNow();
                })));
    }

    @ParameterizedTest(name = "{0} -> {1} {2}")
    @CsvSource(delimiter = '|', value = {
        "{\"nano_max\": 40                      | 400 | malformed-json  |",
        "[40, 130]                              | 400 | invalid-request |",
        "{\"nano_max\": 40, \"tiny_max\": 10}   | 400 | invalid-request | tiny_max",
        "{\"nano_max\": \"40\"}                 | 400 | invalid-request | nano_max",
        "{\"small_max\": 130.5}                 | 400 | invalid-request | small_max",
        "{\"nano_max\": 1e400}                  | 400 | invalid-request | nano_max",
        "{\"small_max\": -1e400}                | 400 | invalid-request | small_max",
        "{\"nano_max\": 1e30}                   | 400 | invalid-request | nano_max",
        "{\"nano_max\": 99999999999999999999999} | 400 | invalid-request | nano_max",
        "{\"nano_max\": 40.25}                  | 400 | invalid-request | nano_max",
        "{\"nano_max\": 256}                    | 422 | invalid-value   | nano_max",
        "{\"small_max\": -1}                    | 422 | invalid-value   | small_max",
        "{\"nano_max\": 130}                    | 422 | invalid-value   | nano_max",
        "{\"small_max\": 60}                    | 422 | invalid-value   | small_max",
        "{\"nano_max\": 90, \"small_max\": 80}  | 422 | invalid-value   | nano_max",
        "{\"nano_max\": null}                   | 422 | invalid-value   | nano_max",
    })
    void badPatchesGetTheDocumentedProblemAndChangeNothing(String body, int status, String type, String field,
                                                           VertxTestContext ctx) {
        fx.patchThresholds(body).onComplete(ctx.succeeding(r -> ctx.verify(() -> {
            assertEquals(status, r.statusCode(), r.bodyAsString());
            assertEquals(ProblemType.CONTENT_TYPE, r.getHeader("Content-Type"));
            JsonObject problem = r.bodyAsJsonObject();
            assertEquals(ProblemType.TYPE_BASE + type, problem.getString("type"));
            assertEquals(status, problem.getInteger("status"));
            assertNotNull(problem.getString("title"));
            assertNotNull(problem.getString("detail"));
            assertEquals(field, problem.getString("field"));
            assertEquals(Thresholds.DEFAULT, fx.kernel.thresholds().read());
            assertEquals(0, fx.hub.lastId(), "no threshold event for a rejected patch");
            ctx.completeNow();
        })));
    }

    @Test
    void anOversizedBodyIs413AndChangesNothing(VertxTestContext ctx) {
        fx.patchThresholds("{\"nano_max\": 40, \"pad\": \"" + "x".repeat(100_000) + "\"}")
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(413, r.statusCode());
                    assertEquals(ProblemType.TYPE_BASE + "body-too-large", r.bodyAsJsonObject().getString("type"));
                    assertEquals(Thresholds.DEFAULT, fx.kernel.thresholds().read());
                    ctx.completeNow();
                })));
    }

    @Test
    void otherContentTypesAre415(VertxTestContext ctx) {
        fx.authed(fx.client.patch(fx.port, "127.0.0.1", "/thresholds"))
                .putHeader("Content-Type", "text/plain")
                .sendBuffer(Buffer.buffer("{\"nano_max\": 40}"))
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(415, r.statusCode());
                    assertEquals(Thresholds.DEFAULT, fx.kernel.thresholds().read());
                    ctx.completeNow();
                })));
    }

    @Test
    void mutatingWithoutOrWithAWrongTokenIs401AndGetsStayOpen(VertxTestContext ctx) {
        fx.client.patch(fx.port, "127.0.0.1", "/thresholds")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer("{\"nano_max\": 40}"))
                .compose(none -> {
                    ctx.verify(() -> {
                        assertEquals(401, none.statusCode());
                        assertTrue(none.getHeader("WWW-Authenticate").startsWith("Bearer "));
                        assertEquals(ProblemType.TYPE_BASE + "unauthorized", none.bodyAsJsonObject().getString("type"));
                    });
                    return fx.client.patch(fx.port, "127.0.0.1", "/thresholds")
                            .putHeader("Authorization", "Bearer " + ControlFixture.TOKEN + "x")
                            .putHeader("Content-Type", "application/json")
                            .sendBuffer(Buffer.buffer("{\"nano_max\": 40}"));
                })
                .compose(wrong -> {
                    ctx.verify(() -> {
                        assertEquals(401, wrong.statusCode());
                        assertTrue(wrong.getHeader("WWW-Authenticate").contains("invalid_token"));
                        assertEquals(Thresholds.DEFAULT, fx.kernel.thresholds().read());
                    });
                    return fx.client.delete(fx.port, "127.0.0.1", "/tenants/acme").send();
                })
                .compose(delete -> {
                    ctx.verify(() -> assertEquals(401, delete.statusCode()));
                    return fx.client.post(fx.port, "127.0.0.1", "/classifier/reload").send();
                })
                .compose(reload -> {
                    ctx.verify(() -> assertEquals(401, reload.statusCode()));
                    return fx.get("/thresholds").send();
                })
                .onComplete(ctx.succeeding(open -> ctx.verify(() -> {
                    assertEquals(200, open.statusCode());
                    ctx.completeNow();
                })));
    }

    @Test
    void aChangeMadeBehindTheApisBackShowsInGetAndAsAnExternalEvent(Vertx vertx, VertxTestContext ctx) {
        EventHub.Subscription events = fx.hub.subscribe(java.util.Set.of("threshold"), java.util.OptionalLong.empty(), () -> { });
        // What bpftool or the kernel feedback loop does: write the store without the API.
        fx.kernel.thresholds().write(new Thresholds(25, 90));
        // The periodic poll (50 ms here) must notice without anyone asking.
        vertx.setPeriodic(20, timer -> {
            EventHub.Item item = events.poll();
            if (item == null) {
                return;
            }
            vertx.cancelTimer(timer);
            fx.get("/thresholds").send().onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                EventHub.Event event = (EventHub.Event) item;
                JsonObject data = new JsonObject(event.json());
                assertEquals("threshold", event.type());
                assertEquals("external", data.getString("source"));
                assertEquals(new JsonObject().put("nano_max", 60).put("small_max", 130), data.getJsonObject("old"));
                assertEquals(new JsonObject().put("nano_max", 25).put("small_max", 90), data.getJsonObject("new"));
                assertEquals(new JsonObject().put("nano_max", 25).put("small_max", 90).put("valid", true), r.bodyAsJsonObject());
                assertEquals(25, new JsonObject(Files.readString(fx.stateFile))
                        .getJsonObject("thresholds").getInteger("nano_max"), "external changes are saved too");
                events.close();
                ctx.completeNow();
            })));
        });
    }
}
