package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.http.ProblemType;
import io.nexuscore.testing.LocalOpenAiServer;
import io.nexuscore.testing.RecordingEventSink;
import io.nexuscore.testing.Sdks;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tenant limits through a real router over loopback sockets (issue 48): limits set through the
 * control plane, requests on the data plane refused 429 before any tier works, with Retry-After and
 * OpenAI's rate-limit headers; tokens charged by estimate and settled by the answers' real usage
 * (streams too); concurrency released on every path; other tenants unaffected; the official Python
 * client's retry taking the Retry-After.
 */
@ExtendWith(VertxExtension.class)
class TenantLimitsRouterTest {

    private static final String CONTROL_TOKEN = "control-token-for-tenant-limits";
    private static final String RATE_LIMITED = ProblemType.RATE_LIMITED.type();

    private static JsonObject config(LocalOpenAiServer upstream) {
        JsonObject config = RouterFixture.config(upstream);
        config.getJsonObject("control").put("bearerToken", CONTROL_TOKEN);
        return config;
    }

    private static RouterFixture.Reply control(HttpClient client, JsonObject config, HttpMethod method, String path,
                                               JsonObject body) {
        RequestOptions options = new RequestOptions().setMethod(method).setHost("127.0.0.1")
                .setPort(config.getJsonObject("control").getInteger("port")).setURI(path)
                .putHeader("Authorization", "Bearer " + CONTROL_TOKEN);
        if (body != null) {
            options.putHeader("Content-Type", "application/json");
        }
        return RouterFixture.exchange(client, options, body == null ? null : body.toBuffer()).await();
    }

    private static void limit(HttpClient client, JsonObject config, String tenant, JsonObject limits) {
        RouterFixture.Reply put = control(client, config, HttpMethod.PUT, "/tenants/" + tenant + "/limits", limits);
        assertEquals(200, put.status(), put.body().toString());
    }

    private static Future<RouterFixture.Reply> chat(HttpClient client, RouterRuntime router, String tenant, JsonObject body) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1")
                .setPort(router.dataPlanePort()).setURI("/v1/chat/completions")
                .putHeader("Content-Type", "application/json").putHeader("X-NX-Tenant", tenant);
        return RouterFixture.exchange(client, options, body.toBuffer());
    }

    private static JsonObject chatBody(int maxTokens, boolean stream) {
        JsonObject body = RouterFixture.chat(20);
        if (maxTokens > 0) {
            body.put("max_tokens", maxTokens);
        }
        if (stream) {
            body.put("stream", true);
        }
        return body;
    }

    private static void assertRefused(RouterFixture.Reply reply, String limit) {
        assertEquals(429, reply.status(), reply.body().toString());
        assertEquals("application/problem+json", reply.header("Content-Type"));
        assertEquals(RATE_LIMITED, reply.json().getString("type"));
        assertEquals(limit, reply.json().getString("field"));
    }

    @Test
    void thirtyRequestsPerMinuteAdmitThirtyOfSixtyInTenSecondsAndRefuseTheRestWithTheHeaders(Vertx vertx)
            throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        JsonObject config = config(upstream);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            limit(client, config, "acme", new JsonObject().put("requests_per_minute", 30));
            int answered = 0;
            int refused = 0;
            long remainingBefore = 30;
            for (int i = 0; i < 60; i++) {
                RouterFixture.Reply reply = chat(client, router, "acme", chatBody(0, false)).await();
                assertEquals("30", reply.header("x-ratelimit-limit-requests"), "request " + i);
                assertNotNull(reply.header("x-ratelimit-reset-requests"));
                assertTrue(reply.header("x-ratelimit-reset-requests").matches("(\\d+m)?\\d+(\\.\\d+)?s|\\d+ms"),
                        reply.header("x-ratelimit-reset-requests"));
                long remaining = Long.parseLong(reply.header("x-ratelimit-remaining-requests"));
                if (reply.status() == 200) {
                    answered++;
                    assertEquals(remainingBefore - 1, remaining, "each answer takes one request of the window");
                    remainingBefore = remaining;
                } else {
                    refused++;
                    assertRefused(reply, "requests_per_minute");
                    assertEquals(0, remaining);
                    long retryAfter = Long.parseLong(reply.header("Retry-After"));
                    assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
                }
                // Another tenant, interleaved, is never held to acme's limit.
                if (i % 10 == 0) {
                    RouterFixture.Reply other = chat(client, router, "globex", chatBody(0, false)).await();
                    assertEquals(200, other.status(), other.body().toString());
                    assertNull(other.header("x-ratelimit-limit-requests"), "globex has no limits");
                }
                Thread.sleep(150); // 60 requests in about 10 s
            }
            assertEquals(30, answered);
            assertEquals(30, refused);
            assertEquals(30 + 6, upstream.received(), "refused requests never reach a tier");

            JsonObject usage = control(client, config, HttpMethod.GET, "/tenants/acme/usage", null).json();
            assertEquals(30, usage.getLong("requests"), usage.encodePrettily());
            assertEquals(30, usage.getJsonObject("refusals").getLong("requests_per_minute"));
            assertEquals(30, usage.getJsonObject("tiers").stream().mapToLong(e -> ((JsonObject) e.getValue())
                    .getLong("requests")).sum());
            assertEquals(30, usage.getLong("completion_tokens"), "one completion token per answer (LocalOpenAiServer)");
            assertEquals(30, usage.getJsonObject("days").stream().mapToLong(e -> ((JsonObject) e.getValue())
                    .getLong("requests")).sum());
            String metrics = control(client, config, HttpMethod.GET, "/metrics", null).body().toString();
            assertTrue(metrics.contains("nexus_tenant_limit_refusals_total{") && metrics.lines().anyMatch(l ->
                    l.startsWith("nexus_tenant_limit_refusals_total{") && l.contains("tenant=\"acme\"")
                            && l.contains("reason=\"requests_per_minute\"") && l.endsWith(" 30.0")), metrics);
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void tokenLimitsChargeTheEstimateAndSettleByRealUsageStreamsToo(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        JsonObject config = config(upstream);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            for (String limit : List.of("tokens_per_minute", "tokens_per_day")) {
                for (boolean stream : new boolean[] {false, true}) {
                    String tenant = (limit + (stream ? "-stream" : "")).replace('_', '-');
                    limit(client, config, tenant, new JsonObject().put(limit, 100));
                    // Above the whole limit by its output cap alone: refused for good, before any tier.
                    int before = upstream.received();
                    RouterFixture.Reply never = chat(client, router, tenant, chatBody(200, stream)).await();
                    assertRefused(never, limit);
                    assertNull(never.header("Retry-After"), "waiting cannot help");
                    assertEquals("false", never.header("x-should-retry"));
                    assertTrue(never.json().getString("detail").contains("never"), never.json().getString("detail"));
                    assertEquals(before, upstream.received());
                    // Charged ~65 (prompt estimate + max_tokens 60): two such charges do not fit in 100, so
                    // the second passes only because the first was settled to its real usage (~6 tokens).
                    int admitted = 0;
                    RouterFixture.Reply last = null;
                    for (int i = 0; i < 30; i++) {
                        last = chat(client, router, tenant, chatBody(60, stream)).await();
                        if (last.status() != 200) {
                            break;
                        }
                        admitted++;
                    }
                    assertTrue(admitted >= 2, tenant + ": settled by real usage, admitted " + admitted);
                    assertTrue(admitted < 30, tenant + ": the real usage adds up to a refusal");
                    assertRefused(last, limit);
                    long retryAfter = Long.parseLong(last.header("Retry-After"));
                    assertTrue(retryAfter >= 1 && retryAfter <= (limit.equals("tokens_per_day") ? 86_400 : 60),
                            "Retry-After " + retryAfter);
                    assertTrue(last.json().getString("detail").contains("charged"), last.json().getString("detail"));
                    JsonObject usage = control(client, config, HttpMethod.GET, "/tenants/" + tenant + "/usage", null).json();
                    assertEquals(admitted, usage.getLong("requests"), usage.encodePrettily());
                    assertEquals(admitted, usage.getLong("completion_tokens"), "the real usage, not the cap");
                    assertTrue(usage.getLong("prompt_tokens") > 0, usage.encodePrettily());
                    assertEquals(2, usage.getJsonObject("refusals").getLong(limit));
                }
            }
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void maxConcurrentHoldsUnderParallelLoadAndIsReleasedOnClientAbortAndDeadline(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient(new HttpClientOptions(), new PoolOptions().setHttp1MaxSize(16));
        JsonObject config = config(upstream);
        config.getJsonObject("tiers").forEach(e -> ((JsonObject) e.getValue()).getJsonObject("upstream")
                .put("timeoutMs", 1_500));
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            limit(client, config, "acme", new JsonObject().put("max_concurrent", 2));
            upstream.delayAnswers(400);
            List<Future<RouterFixture.Reply>> parallel = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                parallel.add(chat(client, router, "acme", chatBody(0, false)));
            }
            parallel.add(chat(client, router, "globex", chatBody(0, false)));
            Future.all(parallel).await();
            long ok = parallel.subList(0, 8).stream().filter(f -> f.result().status() == 200).count();
            assertTrue(ok >= 2 && ok < 8, ok + " of 8 parallel requests answered");
            for (Future<RouterFixture.Reply> f : parallel.subList(0, 8)) {
                if (f.result().status() != 200) {
                    assertRefused(f.result(), "max_concurrent");
                    assertEquals("1", f.result().header("Retry-After"));
                }
            }
            assertEquals(200, parallel.get(8).result().status(), "another tenant is unaffected");
            upstream.delayAnswers(0);
            // Both slots free again once every answer went out.
            assertEquals(200, chat(client, router, "acme", chatBody(0, false)).await().status());

            // Client gone: two requests held at the upstream, their sockets closed.
            upstream.hold();
            int abandonedBefore = upstream.abandoned();
            int receivedBefore = upstream.received();
            List<Socket> sockets = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Socket s = new Socket("127.0.0.1", router.dataPlanePort());
                byte[] body = chatBody(0, false).toBuffer().getBytes();
                s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-NX-Tenant: acme\r\n"
                        + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().write(body);
                s.getOutputStream().flush();
                sockets.add(s);
            }
            upstream.awaitReceived(receivedBefore + 2); // both admitted and at the upstream
            assertRefused(chat(client, router, "acme", chatBody(0, false)).await(), "max_concurrent");
            for (Socket s : sockets) {
                s.close();
            }
            upstream.awaitAbandoned(abandonedBefore + 2);
            upstream.release();
            Thread.sleep(200); // the router saw the closes
            assertEquals(200, chat(client, router, "acme", chatBody(0, false)).await().status(),
                    "the aborted requests gave their slots back");

            // Deadline: the upstream holds both past the tier's timeout, 504, slots released.
            upstream.hold();
            Future<RouterFixture.Reply> a = chat(client, router, "acme", chatBody(0, false));
            Future<RouterFixture.Reply> b = chat(client, router, "acme", chatBody(0, false));
            assertEquals(504, a.await().status(), a.result().body().toString());
            assertEquals(504, b.await().status());
            upstream.release();
            Future<RouterFixture.Reply> c = chat(client, router, "acme", chatBody(0, false));
            Future<RouterFixture.Reply> d = chat(client, router, "acme", chatBody(0, false));
            assertEquals(200, c.await().status(), c.result().body().toString());
            assertEquals(200, d.await().status(), "both slots are free after the deadlines");
        } finally {
            upstream.release();
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void theControlPlaneValidatesShowsAndRemovesLimitsAndTheDefaultHoldsTenantsWithoutTheirOwn(Vertx vertx)
            throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        JsonObject config = config(upstream);
        config.getJsonObject("dataPlane").put("defaultLimits", new JsonObject().put("requestsPerMinute", 2));
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            for (String bad : List.of("{\"rpm\":3}", "{\"requests_per_minute\":0}", "{\"requests_per_minute\":-1}",
                    "{\"max_concurrent\":1.5}", "{\"tokens_per_day\":\"10\"}")) {
                RouterFixture.Reply reply = control(client, config, HttpMethod.PUT, "/tenants/acme/limits",
                        new JsonObject(bad));
                assertEquals(400, reply.status(), bad);
                assertEquals(ProblemType.INVALID_REQUEST.type(), reply.json().getString("type"), bad);
                assertTrue(bad.contains(reply.json().getString("field")), bad + " -> " + reply.json());
            }
            JsonObject shown = control(client, config, HttpMethod.GET, "/tenants/acme/limits", null).json();
            assertEquals("default", shown.getString("source"));
            assertEquals(new JsonObject().put("requests_per_minute", 2), shown.getJsonObject("limits"));
            assertEquals(401, RouterFixture.exchange(client, new RequestOptions().setMethod(HttpMethod.PUT)
                    .setHost("127.0.0.1").setPort(config.getJsonObject("control").getInteger("port"))
                    .setURI("/tenants/acme/limits").putHeader("Content-Type", "application/json"),
                    Buffer.buffer("{}")).await().status());

            // Anonymous requests and header-named tenants without limits: the default.
            for (String tenant : List.of("anonymous-caller", "acme")) {
                assertEquals(200, chat(client, router, tenant, chatBody(0, false)).await().status());
                assertEquals(200, chat(client, router, tenant, chatBody(0, false)).await().status());
                assertRefused(chat(client, router, tenant, chatBody(0, false)).await(), "requests_per_minute");
            }
            // Its own limits replace the default at once; deleting them brings the default back.
            limit(client, config, "acme", new JsonObject().put("requests_per_minute", 5));
            JsonObject own = control(client, config, HttpMethod.GET, "/tenants/acme/limits", null).json();
            assertEquals("tenant", own.getString("source"));
            assertEquals(1, own.getInteger("fleet_members"));
            assertEquals(own.getJsonObject("limits"), own.getJsonObject("enforced_here"));
            assertEquals(200, chat(client, router, "acme", chatBody(0, false)).await().status());
            assertEquals(204, control(client, config, HttpMethod.DELETE, "/tenants/acme/limits", null).status());
            assertEquals(404, control(client, config, HttpMethod.DELETE, "/tenants/acme/limits", null).status());
            assertEquals("default", control(client, config, HttpMethod.GET, "/tenants/acme/limits", null).json()
                    .getString("source"));
            assertEquals(422, control(client, config, HttpMethod.GET, "/tenants/bad%20id/usage", null).status());
            JsonObject unseen = control(client, config, HttpMethod.GET, "/tenants/nobody/usage", null).json();
            assertEquals(0, unseen.getLong("requests"));
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    @Test
    void limitsSurviveARestart(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        JsonObject config = config(upstream);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            limit(client, config, "acme", new JsonObject().put("requests_per_minute", 1).put("tokens_per_day", 5000));
        } finally {
            router.close();
        }
        router = RouterFixture.start(config, new RecordingEventSink());
        try {
            assertEquals(new JsonObject().put("requests_per_minute", 1).put("tokens_per_day", 5000),
                    control(client, config, HttpMethod.GET, "/tenants/acme/limits", null).json().getJsonObject("limits"));
            assertEquals(200, chat(client, router, "acme", chatBody(0, false)).await().status());
            assertRefused(chat(client, router, "acme", chatBody(0, false)).await(), "requests_per_minute");
        } finally {
            router.close();
            upstream.close().await();
        }
    }

    /**
     * The official Python client retries a 429 after its Retry-After. A minute window's Retry-After
     * is up to 60 s: instead of waiting it, the script replaces the client's sleep with one that
     * records what the client asked to wait (and sleeps only for short waits), so the test checks the
     * value the client took against the header the router sent, without waiting the minute. The
     * concurrency limit's Retry-After (1 s) is waited for real, and the retry then succeeds.
     */
    @Test
    void theOfficialPythonClientsRetryHonoursRetryAfter(Vertx vertx) throws Exception {
        LocalOpenAiServer upstream = LocalOpenAiServer.start(vertx).await();
        HttpClient client = vertx.createHttpClient();
        JsonObject config = config(upstream);
        RouterRuntime router = RouterFixture.start(config, new RecordingEventSink());
        try {
            limit(client, config, "minute", new JsonObject().put("requests_per_minute", 1));
            limit(client, config, "slots", new JsonObject().put("max_concurrent", 1));
            upstream.delayAnswers(600);
            String script = """
                    import json, sys, threading, time
                    import openai, openai._base_client as base
                    slept = []
                    real_sleep = time.sleep
                    def recording_sleep(seconds):
                        slept.append(seconds)
                        if seconds <= 2:
                            real_sleep(seconds)
                    base.time.sleep = recording_sleep
                    url = sys.argv[1] if len(sys.argv) > 1 else None
                    def client(tenant, retries):
                        return openai.OpenAI(max_retries=retries, default_headers={"X-NX-Tenant": tenant})
                    msgs = [{"role": "user", "content": "hello there"}]
                    out = {}
                    # rpm 1: the first passes, the second is refused; the client sleeps the Retry-After, retries once.
                    client("minute", 1).chat.completions.create(model="m", messages=msgs)
                    try:
                        client("minute", 1).chat.completions.create(model="m", messages=msgs)
                        out["minute"] = "answered"
                    except openai.RateLimitError as e:
                        out["minute"] = "refused"
                        out["minute_retry_after"] = e.response.headers.get("retry-after")
                    out["minute_slept"] = list(slept)
                    slept.clear()
                    # max_concurrent 1: a slow request holds the slot; the second waits its Retry-After (1 s).
                    t = threading.Thread(target=lambda: client("slots", 0).chat.completions.create(model="m", messages=msgs))
                    t.start()
                    real_sleep(0.2)
                    r = client("slots", 2).chat.completions.with_raw_response.create(model="m", messages=msgs)
                    t.join()
                    out["slots"] = r.parse().choices[0].message.content
                    out["slots_slept"] = list(slept)
                    print(json.dumps(out))
                    """;
            Sdks.Result result = Sdks.python(script, Map.of("OPENAI_BASE_URL",
                    "http://127.0.0.1:" + router.dataPlanePort() + "/v1", "OPENAI_API_KEY", "sk-test"));
            assertTrue(result.ok(), result.describe());
            JsonObject out = new JsonObject(result.stdout().strip().lines().reduce((a, b) -> b).orElseThrow());
            assertEquals("refused", out.getString("minute"), out.encode());
            JsonArray minuteSlept = out.getJsonArray("minute_slept");
            assertEquals(1, minuteSlept.size(), "one retry: " + out.encode());
            double asked = minuteSlept.getDouble(0);
            long header = Long.parseLong(out.getString("minute_retry_after"));
            // The retry's 429 came a little later than the first one: its Retry-After is the same or 1 s less.
            assertTrue(asked == header || asked == header + 1, "slept " + asked + " for Retry-After " + header);
            assertTrue(asked > 8, "the Retry-After, not the client's own backoff (0.5-8 s): " + asked);
            assertTrue(out.getString("slots").startsWith("served by"), out.encode());
            assertEquals(new JsonArray().add(1.0), out.getJsonArray("slots_slept"), out.encode());
            JsonObject usage = control(client, config, HttpMethod.GET, "/tenants/slots/usage", null).json();
            assertEquals(1, usage.getJsonObject("refusals").getLong("max_concurrent"), usage.encode());
            assertEquals(2, usage.getLong("requests"));
        } finally {
            router.close();
            upstream.close().await();
        }
    }
}
