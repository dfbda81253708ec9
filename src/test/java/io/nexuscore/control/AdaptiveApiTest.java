package io.nexuscore.control;
import io.nexuscore.http.ProblemType;

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

/** GET/PATCH /adaptive in user space: 409 not-in-kernel-mode, after the body is validated (calibration fields too). */
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
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test"), 100, 100);
        fx.deploy(vertx)
                .compose(f -> fx.get("/adaptive").send())
                .compose(get -> {
                    ctx.verify(() -> {
                        assertEquals(409, get.statusCode());
                        assertEquals(ProblemType.TYPE_BASE + "not-in-kernel-mode", get.bodyAsJsonObject().getString("type"));
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
                    return patch("{\"gain_min\": 10}");
                })
                .compose(lowGain -> {
                    ctx.verify(() -> {
                        assertEquals(422, lowGain.statusCode());
                        assertEquals("gain_min", lowGain.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"gain_max\": 9000}");
                })
                .compose(highGain -> {
                    ctx.verify(() -> {
                        assertEquals(422, highGain.statusCode());
                        assertEquals("gain_max", highGain.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"gain_step_max\": 0}");
                })
                .compose(noStep -> {
                    ctx.verify(() -> {
                        assertEquals(422, noStep.statusCode());
                        assertEquals("gain_step_max", noStep.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"calibration_min_samples\": 100001}");
                })
                .compose(tooMany -> {
                    ctx.verify(() -> {
                        assertEquals(422, tooMany.statusCode());
                        assertEquals("calibration_min_samples", tooMany.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"calibrate\": \"yes\"}");
                })
                .compose(notBoolean -> {
                    ctx.verify(() -> {
                        assertEquals(400, notBoolean.statusCode());
                        assertEquals("calibrate", notBoolean.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"token_gain\": 1.5}");
                })
                .compose(readOnly -> {
                    ctx.verify(() -> {
                        assertEquals(400, readOnly.statusCode(), "the live gain is read-only");
                        assertEquals("token_gain", readOnly.bodyAsJsonObject().getString("field"));
                    });
                    return patch("{\"enabled\": false}");
                })
                .onComplete(ctx.succeeding(valid -> ctx.verify(() -> {
                    assertEquals(409, valid.statusCode());
                    ctx.completeNow();
                })));
    }
}
