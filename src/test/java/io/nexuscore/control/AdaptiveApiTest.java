package io.nexuscore.control;
import io.nexuscore.http.ControlProblems;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.classify.Thresholds;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** GET/PATCH /adaptive in user space: 409 not-in-kernel-mode, after the body is validated. */
@ExtendWith(VertxExtension.class)
class AdaptiveApiTest {

    private ControlFixture fx;

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    private Future<HttpResponse<Buffer>> patch(String body) {
        return fx.authed(fx.client.patch(fx.port, "127.0.0.1", "/adaptive"))
                .putHeader("Content-Type", "application/merge-patch+json")
                .sendBuffer(Buffer.buffer(body));
    }

    @Test
    void userSpaceAnswers409AndBadBodiesNameTheirField(Vertx vertx, VertxTestContext ctx) {
        fx = new ControlFixture(new UserSpaceKernelControl(Thresholds.DEFAULT, "test"), 100, 100);
        fx.deploy(vertx)
                .compose(f -> fx.get("/adaptive").send())
                .compose(get -> {
                    ctx.verify(() -> {
                        assertEquals(409, get.statusCode());
                        assertEquals(ControlProblems.TYPE_PREFIX + "not-in-kernel-mode", get.bodyAsJsonObject().getString("type"));
                    });
                    return patch("{\"period_ms\": 10}");
                })
                .compose(tooShort -> {
                    ctx.verify(() -> {
                        assertEquals(422, tooShort.statusCode());
                        assertEquals("period_ms", tooShort.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"speed\": 1}");
                })
                .compose(unknown -> {
                    ctx.verify(() -> {
                        assertEquals(400, unknown.statusCode());
                        assertEquals("speed", unknown.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"step\": 2.5}");
                })
                .compose(fraction -> {
                    ctx.verify(() -> {
                        assertEquals(400, fraction.statusCode());
                        assertEquals("step", fraction.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"enabled\": false}");
                })
                .onComplete(ctx.succeeding(valid -> ctx.verify(() -> {
                    assertEquals(409, valid.statusCode());
                    ctx.completeNow();
                })));
    }
}
