package io.nexuscore.control;
import io.nexuscore.http.ProblemType;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.classify.Tier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@ExtendWith(VertxExtension.class)
class TenantsAndReloadApiTest {

    private ControlFixture fx;

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    private Future<ControlFixture> deploy(Vertx vertx, ControlPorts kernel) {
        fx = new ControlFixture(kernel, 16, 16);
        return fx.deploy(vertx);
    }

    private Future<HttpResponse<Buffer>> put(String id, String body) {
        return fx.authed(fx.client.put(fx.port, "127.0.0.1", "/tenants/" + id))
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(body));
    }

    @Test
    void putListReplaceAndDeleteATenant(Vertx vertx, VertxTestContext ctx) {
        InMemoryPrefixFloors floors = new InMemoryPrefixFloors();
        ControlPorts kernel = ControlPorts.userSpace(new InMemoryThresholdStore(Thresholds.DEFAULT), floors, "test");
        deploy(vertx, kernel)
                .compose(f -> put("acme", "{\"prefix\": \"192.0.2.0/24\", \"floor\": \"small\"}"))
                .compose(created -> {
                    ctx.verify(() -> {
                        assertEquals(201, created.statusCode(), created.bodyAsString());
                        assertEquals("/tenants/acme", created.getHeader("Location"));
                        assertEquals(Optional.of(Tier.SMALL), floors.floorFor(0xC0000207)); // 192.0.2.7
                    });
                    return put("acme", "{\"prefix\": \"192.0.2.0/25\", \"floor\": \"large\"}");
                })
                .compose(replaced -> {
                    ctx.verify(() -> assertEquals(200, replaced.statusCode()));
                    return fx.authed(fx.get("/tenants")).send();
                })
                .compose(list -> {
                    ctx.verify(() -> assertEquals(new JsonArray().add(new JsonObject()
                                    .put("id", "acme").put("prefix", "192.0.2.0/25").put("floor", "large")
                                    .put("keys", new JsonArray())),
                            list.bodyAsJsonObject().getJsonArray("tenants")));
                    return fx.authed(fx.client.delete(fx.port, "127.0.0.1", "/tenants/acme")).send();
                })
                .compose(deleted -> {
                    ctx.verify(() -> assertEquals(204, deleted.statusCode()));
                    return fx.authed(fx.client.delete(fx.port, "127.0.0.1", "/tenants/acme")).send();
                })
                .onComplete(ctx.succeeding(again -> ctx.verify(() -> {
                    assertEquals(404, again.statusCode());
                    assertEquals(ProblemType.TYPE_BASE + "not-found", again.bodyAsJsonObject().getString("type"));
                    assertEquals(Optional.empty(), floors.floorFor(0xC0000207));
                    ctx.completeNow();
                })));
    }

    @ParameterizedTest(name = "{0} {1} -> {2} {3}")
    @CsvSource(delimiter = '|', value = {
        "acme   | {\"prefix\": \"192.0.2.0/24\"}                               | 400 | floor",
        "acme   | {\"prefix\": \"192.0.2.0/24\", \"floor\": 1}                 | 400 | floor",
        "acme   | {\"prefix\": \"192.0.2.0/24\", \"floor\": \"small\", \"x\": 1} | 400 | x",
        "acme   | {\"prefix\": \"192.0.2.0\", \"floor\": \"small\"}            | 422 | prefix",
        "acme   | {\"prefix\": \"192.0.2.1/24\", \"floor\": \"small\"}         | 422 | prefix",
        "acme   | {\"prefix\": \"300.0.2.0/24\", \"floor\": \"small\"}         | 422 | prefix",
        "acme   | {\"prefix\": \"192.0.2.0/33\", \"floor\": \"small\"}         | 422 | prefix",
        "acme   | {\"prefix\": \"192.0.2.0/24\", \"floor\": \"huge\"}          | 422 | floor",
        "-acme  | {\"prefix\": \"192.0.2.0/24\", \"floor\": \"small\"}         | 422 | id",
    })
    void badTenantsAreRejectedNamingTheField(String id, String body, int status, String field,
                                             Vertx vertx, VertxTestContext ctx) {
        ControlPorts kernel = ControlPorts.userSpace(Thresholds.DEFAULT, "test");
        deploy(vertx, kernel).compose(f -> put(id, body)).onComplete(ctx.succeeding(r -> ctx.verify(() -> {
            assertEquals(status, r.statusCode(), r.bodyAsString());
            assertEquals(field, r.bodyAsJsonObject().getString("field"));
            assertEquals(0, kernel.tenants().list().size());
            ctx.completeNow();
        })));
    }

    @Test
    void aFullPolicyStoreIs409NamingItsCapacity(Vertx vertx, VertxTestContext ctx) {
        InMemoryPrefixFloors floors = new InMemoryPrefixFloors();
        for (int i = 0; i < floors.capacity(); i++) {
            floors.put(io.nexuscore.net.Ipv4Prefix.covering(0x0A000000 | i << 8, 24), Tier.SMALL);
        }
        deploy(vertx, ControlPorts.userSpace(new InMemoryThresholdStore(Thresholds.DEFAULT), floors, "test"))
                .compose(f -> put("one-more", "{\"prefix\": \"192.0.2.0/24\", \"floor\": \"large\"}"))
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(409, r.statusCode(), r.bodyAsString());
                    assertEquals(ProblemType.TYPE_BASE + "conflict", r.bodyAsJsonObject().getString("type"));
                    assertTrue(r.bodyAsJsonObject().getString("detail").contains("16384 prefixes"), r.bodyAsString());
                    ctx.completeNow();
                })));
    }

    @Test
    void aPrefixBelongsToOneTenant(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ControlPorts.userSpace(Thresholds.DEFAULT, "test"))
                .compose(f -> put("a", "{\"prefix\": \"10.1.0.0/16\", \"floor\": \"small\"}"))
                .compose(f -> put("b", "{\"prefix\": \"10.1.0.0/16\", \"floor\": \"large\"}"))
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(409, r.statusCode());
                    assertEquals("prefix", r.bodyAsJsonObject().getString("field"));
                    ctx.completeNow();
                })));
    }

    @Test
    void reloadInUserSpaceIs409AndPublishesNothing(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ControlPorts.userSpace(Thresholds.DEFAULT, "test"))
                .compose(f -> fx.authed(fx.client.post(fx.port, "127.0.0.1", "/classifier/reload")).send())
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(409, r.statusCode());
                    assertEquals(ProblemType.TYPE_BASE + "not-in-kernel-mode", r.bodyAsJsonObject().getString("type"));
                    assertEquals(0, fx.hub.lastId());
                    ctx.completeNow();
                })));
    }

    @Test
    void reloadReportsOldAndNewProgramIdsAndValidatesTheObjectPath(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, TestKernel.ports(Thresholds.DEFAULT, true))
                .compose(f -> fx.authed(fx.client.post(fx.port, "127.0.0.1", "/classifier/reload"))
                        .sendJsonObject(new JsonObject().put("object", "relative/nexus.o")))
                .compose(relative -> {
                    ctx.verify(() -> {
                        assertEquals(422, relative.statusCode());
                        assertEquals("object", relative.bodyAsJsonObject().getString("field"));
                    });
                    return fx.authed(fx.client.post(fx.port, "127.0.0.1", "/classifier/reload"))
                            .sendJsonObject(new JsonObject().put("object", "/opt/nexus/classify.o"));
                })
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(200, r.statusCode(), r.bodyAsString());
                    JsonObject body = r.bodyAsJsonObject();
                    assertEquals("/opt/nexus/classify.o", body.getString("object"));
                    assertEquals(new JsonObject().put("nexus_classify", 100L).put("nexus_tc_classify", 101L), body.getJsonObject("old_program_ids"));
                    assertEquals(new JsonObject().put("nexus_classify", 102L).put("nexus_tc_classify", 103L), body.getJsonObject("new_program_ids"));
                    assertEquals(1, fx.hub.lastId(), "one reload event");
                    ctx.completeNow();
                })));
    }

    @Test
    void unknownPathsAndWrongMethodsAreProblems(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx, ControlPorts.userSpace(Thresholds.DEFAULT, "test"))
                .compose(f -> fx.get("/nope").send())
                .compose(notFound -> {
                    ctx.verify(() -> {
                        assertEquals(404, notFound.statusCode());
                        assertEquals(ProblemType.CONTENT_TYPE, notFound.getHeader("Content-Type"));
                    });
                    return fx.authed(fx.client.delete(fx.port, "127.0.0.1", "/thresholds")).send();
                })
                .onComplete(ctx.succeeding(wrong -> ctx.verify(() -> {
                    assertEquals(405, wrong.statusCode());
                    assertEquals("GET, PATCH", wrong.getHeader("Allow"));
                    assertEquals(ProblemType.TYPE_BASE + "method-not-allowed", wrong.bodyAsJsonObject().getString("type"));
                    ctx.completeNow();
                })));
    }

    @Test
    void deploymentFailsWhenThePortIsTaken(Vertx vertx, VertxTestContext ctx) throws Exception {
        // A plain socket, not a Vert.x server: Vert.x would share its own listener with the verticle.
        java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test"), 4, 4);
        var config = io.nexuscore.config.ControlConfig.withToken("127.0.0.1", taken.getLocalPort(),
                Optional.of(ControlFixture.TOKEN), fx.stateFile, 4, 4);
        vertx.deployVerticle(new ControlVerticle(config, fx.kernel, TierStateView.NONE, fx.hub, fx.registry))
                .onComplete(ctx.failing(e -> ctx.verify(() -> {
                    taken.close();
                    org.junit.jupiter.api.Assertions.assertInstanceOf(java.net.BindException.class, e);
                    ctx.completeNow();
                })));
    }
}
