package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** GET / and /ui/{asset} over a real socket: types, caching, CSP, and nothing outside the folder. */
@ExtendWith(VertxExtension.class)
class DashboardRoutesTest {

    private ControlFixture fx;

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    private Future<ControlFixture> deploy(Vertx vertx) {
        fx = new ControlFixture(ControlPorts.userSpace(Thresholds.DEFAULT, "test"), 4, 4);
        return fx.deploy(vertx);
    }

    private static void assertServedSafely(HttpResponse<Buffer> r, String type) {
        assertEquals(200, r.statusCode(), r.bodyAsString());
        assertEquals(type, r.getHeader("Content-Type"));
        assertEquals(DashboardRoutes.CSP, r.getHeader("Content-Security-Policy"));
        assertTrue(r.getHeader("Content-Security-Policy").startsWith("default-src 'self'"));
        assertEquals("no-cache", r.getHeader("Cache-Control"));
        assertEquals("nosniff", r.getHeader("X-Content-Type-Options"));
        assertNotNull(r.getHeader("ETag"));
    }

    @Test
    void thePageAndEveryAssetItNamesAreServedWithTheirTypes(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx).compose(f -> fx.get("/").send()).compose(page -> {
            ctx.verify(() -> assertServedSafely(page, "text/html; charset=utf-8"));
            // Every /ui/ reference in the page must resolve: a renamed file fails here, not in a browser.
            Matcher m = Pattern.compile("/ui/([a-z0-9-]+\\.[a-z]+)").matcher(page.bodyAsString());
            List<String> assets = m.results().map(r -> r.group(1)).toList();
            ctx.verify(() -> assertEquals(List.of("dashboard.css", "dashboard.js"), assets));
            return fx.get("/ui/dashboard.css").send().compose(css -> {
                ctx.verify(() -> assertServedSafely(css, "text/css; charset=utf-8"));
                return fx.get("/ui/dashboard.js").send();
            }).compose(js -> {
                ctx.verify(() -> {
                    assertServedSafely(js, "text/javascript; charset=utf-8");
                    assertTrue(js.bodyAsString().contains("from './api.js'"), "the module imports api.js");
                });
                return fx.get("/ui/api.js").send();
            });
        }).onComplete(ctx.succeeding(api -> ctx.verify(() -> {
            assertServedSafely(api, "text/javascript; charset=utf-8");
            assertTrue(api.bodyAsString().contains("sessionStorage"), "the token is kept in sessionStorage");
            ctx.completeNow();
        })));
    }

    @Test
    void aMatchingEtagIsNotModified(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx).compose(f -> fx.get("/ui/charts.js").send())
                .compose(first -> fx.get("/ui/charts.js").putHeader("If-None-Match", first.getHeader("ETag")).send()
                        .map(second -> List.of(first, second)))
                .onComplete(ctx.succeeding(pair -> ctx.verify(() -> {
                    assertEquals(200, pair.get(0).statusCode());
                    assertEquals(304, pair.get(1).statusCode());
                    assertNull(pair.get(1).body());
                    assertEquals(pair.get(0).getHeader("ETag"), pair.get(1).getHeader("ETag"));
                    ctx.completeNow();
                })));
    }

    @Test
    void namesOutsideTheFolderOrUnknownAreNotFoundProblems(Vertx vertx, VertxTestContext ctx) {
        List<String> paths = List.of("/ui/missing.js", "/ui/", "/ui/..%2Fnexuscore.json", "/ui/%2E%2E%2Fnexuscore.json",
                "/ui/index", "/ui/Dashboard.JS", "/ui/dashboard/api.js", "/ui/nexuscore.json");
        deploy(vertx).compose(f -> Future.all(paths.stream().map(p -> fx.get(p).send()).toList()))
                .onComplete(ctx.succeeding(all -> ctx.verify(() -> {
                    for (int i = 0; i < paths.size(); i++) {
                        HttpResponse<Buffer> r = all.resultAt(i);
                        assertEquals(404, r.statusCode(), paths.get(i) + ": " + r.bodyAsString());
                        assertEquals("application/problem+json", r.getHeader("Content-Type"), paths.get(i));
                        assertTrue(!r.bodyAsString().contains("\"thresholds\""), paths.get(i) + " leaked a file");
                    }
                    ctx.completeNow();
                })));
    }

    @Test
    void writingToThePageIsMethodNotAllowed(Vertx vertx, VertxTestContext ctx) {
        deploy(vertx).compose(f -> fx.client.post(fx.port, "127.0.0.1", "/").send())
                .onComplete(ctx.succeeding(r -> ctx.verify(() -> {
                    assertEquals(405, r.statusCode());
                    assertTrue(r.getHeader("Allow").contains("GET"), r.getHeader("Allow"));
                    ctx.completeNow();
                })));
    }
}
