package io.nexuscore.tenants.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.nexuscore.testing.TempDirs;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three routers in one fleet (three clustered runtimes in this JVM, each its own Hazelcast member on
 * loopback) hold one tenant limit together: a PUT on one router reaches all three, each enforces its
 * share (ceil(30 / 3) = 10), and requests spread over the three are admitted within 10 % of the limit.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class FleetLimitsTest {

    private static final String TOKEN = "control-token-for-fleet-limits";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    private record Router(RouterRuntime runtime, int control) {
    }

    private static Path secret(Path dir) throws Exception {
        Path file = dir.resolve("fleet.secret");
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, "fleet-limits-test-secret-0123456789abcdef\n");
        return file;
    }

    private static JsonObject config(LocalOpenAiServer upstream, Path dir, String node, int hzPort, JsonArray members,
                                     Path secret) {
        JsonObject tiers = new JsonObject();
        for (Tier tier : Tier.values()) {
            tiers.put(tier.label(), new JsonObject().put("model", "nexus-" + tier.label()).put("instances", 2)
                    .put("upstream", new JsonObject().put("baseUrl", upstream.baseUrl(tier.label()))
                            .put("model", "upstream-" + tier.label()).put("timeoutMs", 5_000)));
        }
        return new JsonObject()
                .put("dataPlane", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick()).put("instances", 1))
                .put("control", new JsonObject().put("host", "127.0.0.1").put("port", FreePort.pick())
                        .put("bearerToken", TOKEN).put("stateFile", dir.resolve(node + "/state.json").toString()))
                .put("kernel", new JsonObject().put("mode", "user"))
                .put("metrics", new JsonObject().put("kernelTiming", false).put("tlbFlushes", false))
                .put("tiers", tiers)
                .put("cluster", new JsonObject().put("enabled", true).put("host", "127.0.0.1").put("port", hzPort)
                        .put("node", node).put("members", members).put("secretFile", secret.toString()));
    }

    private static HttpResponse<String> call(String method, int port, String path, String body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json");
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonObject limitsOn(Router r) throws Exception {
        return new JsonObject(call("GET", r.control(), "/tenants/acme/limits", null, "Authorization", "Bearer " + TOKEN).body());
    }

    @Test
    void threeRoutersHoldOneRequestsPerMinuteLimitWithinTenPercent() throws Exception {
        Vertx vertx = Vertx.vertx();
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        Path dir = Files.createTempDirectory("nexuscore-fleet-limits-");
        List<Router> routers = new ArrayList<>();
        try {
            Path secret = secret(dir);
            int[] hz = {FreePort.pick(), FreePort.pick(), FreePort.pick()};
            JsonArray members = new JsonArray();
            for (int port : hz) {
                members.add("127.0.0.1:" + port);
            }
            for (int i = 0; i < 3; i++) {
                JsonObject config = config(upstream, dir, "n" + (i + 1), hz[i], members, secret);
                Files.createDirectories(dir.resolve("n" + (i + 1)));
                routers.add(new Router(RouterRuntime.start(RouterConfig.fromJson(config), new RecordingEventSink()),
                        config.getJsonObject("control").getInteger("port")));
            }
            HttpResponse<String> put = call("PUT", routers.get(0).control(), "/tenants/acme/limits",
                    "{\"requests_per_minute\": 30}", "Authorization", "Bearer " + TOKEN);
            assertEquals(200, put.statusCode(), put.body());

            // Every router took the fleet's limit and sees three members: a share of 10 each.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (Router r : routers) {
                JsonObject view = limitsOn(r);
                while (!(view.getString("source").equals("tenant") && view.getInteger("fleet_members") == 3)) {
                    assertTrue(System.nanoTime() < deadline, "the limit and three members within 60 s: " + view);
                    Thread.sleep(200);
                    view = limitsOn(r);
                }
                assertEquals(new JsonObject().put("requests_per_minute", 10), view.getJsonObject("enforced_here"), view.encode());
            }

            // Load spread over the three: 90 requests, round robin, well inside one minute.
            int answered = 0;
            String body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
            for (int i = 0; i < 90; i++) {
                RouterRuntime r = routers.get(i % 3).runtime();
                HttpResponse<String> reply = call("POST", r.dataPlanePort(), "/v1/chat/completions", body,
                        "X-NX-Tenant", "acme");
                if (reply.statusCode() == 200) {
                    answered++;
                } else {
                    assertEquals(429, reply.statusCode(), reply.body());
                }
            }
            assertTrue(answered >= 27 && answered <= 33, "the fleet admitted " + answered + " of a limit of 30");
            assertEquals(30, answered, "load spread evenly: each router admits exactly its share of 10");
        } finally {
            for (Router r : routers) {
                r.runtime().close();
            }
            upstream.close().await();
            vertx.close().await();
            TempDirs.deleteRecursively(dir);
        }
    }
}
