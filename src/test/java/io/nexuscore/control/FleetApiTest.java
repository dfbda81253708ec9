package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.fleet.FleetStatus;
import io.nexuscore.http.ProblemType;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** GET /fleet: 409 not-in-fleet on a router alone, the fleet's view in a fleet; a PATCH nudges the fleet. */
@ExtendWith(VertxExtension.class)
class FleetApiTest {

    private ControlFixture fx;

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    @Test
    void aRouterAloneAnswers409NotInFleet(Vertx vertx, VertxTestContext ctx) {
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test"), 10, 10);
        fx.deploy(vertx).compose(f -> fx.authed(fx.get("/fleet")).send()).onComplete(ctx.succeeding(r -> ctx.verify(() -> {
            assertEquals(409, r.statusCode());
            assertEquals(ProblemType.TYPE_BASE + "not-in-fleet", r.bodyAsJsonObject().getString("type"));
            assertEquals("application/problem+json", r.getHeader("Content-Type"));
            ctx.completeNow();
        })));
    }

    @Test
    void inAFleetItServesTheViewAndAPatchNudgesTheSync(Vertx vertx, VertxTestContext ctx) {
        JsonObject view = new JsonObject().put("node", "n1").put("cluster", "nexuscore").put("reachable", true)
                .put("members", new JsonArray().add(new JsonObject().put("node", "n1").put("mode", "user")));
        AtomicInteger nudges = new AtomicInteger();
        FleetStatus fleet = new FleetStatus() {
            @Override
            public Optional<JsonObject> view() {
                return Optional.of(view);
            }

            @Override
            public void changedHere() {
                nudges.incrementAndGet();
            }
        };
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test").withFleet(fleet), 10, 10);
        fx.deploy(vertx)
                .compose(f -> fx.authed(fx.get("/fleet")).send())
                .compose(r -> {
                    ctx.verify(() -> {
                        assertEquals(200, r.statusCode());
                        assertEquals(view, r.bodyAsJsonObject());
                        assertEquals(0, nudges.get());
                    });
                    return fx.patchThresholds("{\"nano_max\": 42}");
                })
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(200, r.statusCode());
                    assertEquals(1, nudges.get());
                    ctx.completeNow();
                })));
    }
}
