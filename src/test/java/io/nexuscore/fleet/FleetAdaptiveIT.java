package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.testing.FreePort;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Fleet-scope adaptation: two kernel-mode routers in a network namespace, each on a veth pair of its own, both
 * overloaded at once (their nano tier forwards to an upstream that takes 20 ms against a 1 ms P95
 * target), with {@code adaptive.scope: fleet}; a third router in user space watches. Both kernel
 * loops step every period, but the fleet moves at most once per period: consecutive adaptive
 * versions are at least 0.9 period apart, the loops together stepped more often than the fleet
 * moved, and all three routers end on the same nano_max. Needs eBPF privileges (root).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FleetAdaptiveIT {

    private static final int PERIOD_MS = 2000;
    /*
     * The 20 ms upstream misses the 1 ms target twentyfold, so every cut is the cap, CUT_MAX_STEPS
     * steps: step 1 cuts 4 a period, ten cuts from 60 to the floor (20), room for the loops to react.
     */
    private static final int STEP = 1;
    private static final int CUT = STEP * AdaptiveSettings.CUT_MAX_STEPS;
    private static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    private LinkedNamespace net;
    private final List<HttpServer> upstreams = new ArrayList<>();
    private final List<RouterProcess> routers = new ArrayList<>();
    private Path work;

    @BeforeAll
    void start() throws Exception {
        KernelTestSupport.requireKernel();
        work = Files.createTempDirectory("nexuscore-fleet-adaptive-");
        net = LinkedNamespace.create(2);
        int[] hz = {FreePort.pick(), FreePort.pick(), FreePort.pick()};
        String watcherHost = net.links.get(0).hostAddress();
        JsonArray members = new JsonArray().add(watcherHost + ":" + hz[0]);
        for (int i = 0; i < 2; i++) {
            members.add(net.links.get(i).peerAddress() + ":" + hz[i + 1]);
        }
        Path jar = RouterProcess.builtJar();

        int data = FreePort.pick();
        int control = FreePort.pick();
        Path dir = work.resolve("watcher");
        routers.add(new RouterProcess("watcher", jar, dir, data, control,
                fleetScope(RouterProcess.smallKernelRouter(dir, "127.0.0.1", data, "127.0.0.1", control))
                .put("kernel", new JsonObject().put("mode", "user"))
                .put("cluster", RouterProcess.clusterSection("watcher", watcherHost, hz[0], members))));
        for (int i = 0; i < 2; i++) {
            LinkedNamespace.Link link = net.links.get(i);
            String node = "k" + (i + 1);
            String peer = link.peerAddress();
            HttpServer upstream = slowUpstream(link.hostAddress());
            upstreams.add(upstream);
            dir = work.resolve(node);
            data = FreePort.pick();
            control = FreePort.pick();
            JsonObject config = fleetScope(RouterProcess.smallKernelRouter(dir, peer, data, peer, control))
                    .put("kernel", new JsonObject().put("mode", "kernel").put("pinDir", "/sys/fs/bpf/" + net.name + "-" + node)
                            .put("interfaces", new JsonArray().add(link.peerInterface())).put("xdpMode", "generic"))
                    .put("cluster", RouterProcess.clusterSection(node, peer, hz[i + 1], members));
            config.getJsonObject("tiers").getJsonObject("nano").put("upstream", new JsonObject()
                    .put("baseUrl", "http://" + link.hostAddress() + ":" + upstream.getAddress().getPort() + "/v1")
                    .put("model", "slow-nano").put("timeoutMs", 10_000));
            routers.add(new RouterProcess(node, net.prefix(), peer, jar, dir, data, control,
                    config));
        }
        for (RouterProcess r : routers) {
            r.start();
        }
        for (RouterProcess r : routers) {
            r.await("serving in a fleet of three", 240, () -> r.serving() && members(r) == 3);
        }
    }

    @AfterAll
    void stop() throws Exception {
        try {
            for (RouterProcess r : routers) {
                r.close();
            }
            upstreams.forEach(u -> u.stop(0));
        } finally {
            if (net != null) {
                net.close();
            }
            if (work != null) {
                try (Stream<Path> files = Files.walk(work)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    @Test
    void twoOverloadedKernelRoutersStepTheFleetOncePerPeriod() throws Exception {
        RouterProcess watcher = routers.get(0);
        RouterProcess k1 = routers.get(1);
        RouterProcess k2 = routers.get(2);
        // Settings are fleet policy too: one PATCH on k1 configures both loops.
        RouterProcess.Response configured = k1.send("PATCH", "/adaptive", new JsonObject()
                .put("period_ms", PERIOD_MS).put("nano_target_p95_ms", 1).put("min_samples", 3).put("step", STEP)
                .put("floor", 20).put("ceiling", 0).put("calibrate", false));
        assertEquals(200, configured.status(), configured.body());
        k2.await("k2's loop has the fleet's settings", 30, () -> {
            JsonObject a = k2.tryJson("/adaptive");
            return a != null && a.getInteger("period_ms") == PERIOD_MS;
        });
        long loadStart = System.currentTimeMillis();

        AtomicBoolean loading = new AtomicBoolean(true);
        List<Thread> load = new ArrayList<>();
        Map<String, LoadCount> counts = new ConcurrentHashMap<>();
        for (RouterProcess k : List.of(k1, k2)) {
            LoadCount count = counts.computeIfAbsent(k.node, n -> new LoadCount());
            Thread t = new Thread(() -> sendNano(k, loading, count), "load-" + k.node);
            t.start();
            load.add(t);
        }
        try {
            // Three accepted steps or more (60 → 48), however the periods fall, and both loops stepped
            // at least once: the case under test is two loops reacting to one overload. Which timer
            // fires first after the PATCH is chance (a CI run on 2026-12-06 saw k2 step in three periods
            // and k1 in none of them), so the load goes on until both have; a loop that never reacts
            // fails here, with what each loop saw.
            try {
                watcher.await("the fleet stepped three times and both loops reacted", 120, () -> {
                    JsonObject t = watcher.tryJson("/thresholds");
                    return t != null && t.getInteger("nano_max") <= 60 - 3 * CUT
                            && loopSteps(k1) > 0 && loopSteps(k2) > 0;
                });
            } catch (AssertionError e) {
                throw new AssertionError("k1 " + loopView(k1, counts) + "; k2 " + loopView(k2, counts) + "\n"
                        + e.getMessage(), e);
            }
        } finally {
            loading.set(false);
            for (Thread t : load) {
                t.join(30_000);
            }
        }

        List<JsonObject> steps = watcher.events("fleet").stream()
                .filter(e -> e.getString("cause").equals("adaptive") && e.getLong("at_ms") >= loadStart)
                .sorted(Comparator.comparingLong(e -> e.getLong("version"))).toList();
        assertTrue(steps.size() >= 3, "adaptive versions seen by the watcher: " + steps);
        for (int i = 1; i < steps.size(); i++) {
            long gap = steps.get(i).getLong("at_ms") - steps.get(i - 1).getLong("at_ms");
            assertTrue(gap >= PERIOD_MS - PERIOD_MS / 10, "two fleet steps " + gap + " ms apart: " + steps);
        }
        long kernelSteps = loopSteps(k1) + loopSteps(k2);
        System.out.println("fleet adaptive steps " + steps.size() + " (at_ms " + steps.stream().map(e -> e.getLong("at_ms"))
                .toList() + ", origins " + steps.stream().map(e -> e.getString("origin")).toList() + "); kernel loop steps k1+k2 "
                + kernelSteps);
        // On a failure, what each loop saw (its settings, ticks, last samples and P95) and the answers its load got.
        assertTrue(kernelSteps > steps.size(), "the two loops stepped " + kernelSteps + " times, the fleet "
                + steps.size() + ": both reacted, the fleet moved once per period; k1 " + loopView(k1, counts)
                + "; k2 " + loopView(k2, counts));

        watcher.await("one nano_max on all three", 30, () -> {
            List<Integer> values = routers.stream().map(r -> r.tryJson("/thresholds"))
                    .map(t -> t == null ? -1 : t.getInteger("nano_max")).distinct().toList();
            return values.size() == 1 && values.get(0) > 0;
        });
    }

    /** Answers the load got from one router, by status (0: no answer). */
    private static final class LoadCount {
        final Map<Integer, AtomicInteger> byStatus = new ConcurrentHashMap<>();

        void count(int status) {
            byStatus.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public String toString() {
            return byStatus.toString();
        }
    }

    private static String loopView(RouterProcess r, Map<String, LoadCount> counts) {
        JsonObject adaptive = r.tryJson("/adaptive");
        return "answers " + counts.get(r.node) + ", /adaptive " + (adaptive == null ? "unreadable" : adaptive.encode());
    }

    /** Nano chat requests, four at a time, until told to stop; every answer counted by status. */
    private static void sendNano(RouterProcess router, AtomicBoolean loading, LoadCount count) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
        URI uri = URI.create("http://" + router.host + ":" + router.dataPort + "/v1/chat/completions");
        List<java.util.concurrent.CompletableFuture<?>> inFlight = new ArrayList<>();
        while (loading.get()) {
            inFlight.removeIf(java.util.concurrent.CompletableFuture::isDone);
            if (inFlight.size() < 4) {
                inFlight.add(http.sendAsync(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(CHAT)).build(),
                        HttpResponse.BodyHandlers.discarding())
                        .whenComplete((response, error) -> count.count(response == null ? 0 : response.statusCode())));
            } else {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
        inFlight.forEach(f -> f.cancel(true));
    }

    /** An OpenAI-compatible upstream that takes 20 ms per answer: well over the 1 ms target. */
    private static HttpServer slowUpstream(String host) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(host, 0), 64);
        server.createContext("/v1/chat/completions", exchange -> {
            exchange.getRequestBody().readAllBytes();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] body = new JsonObject().put("id", "slow").put("object", "chat.completion").put("model", "slow-nano")
                    .put("choices", new JsonArray().add(new JsonObject().put("index", 0).put("finish_reason", "stop")
                            .put("message", new JsonObject().put("role", "assistant").put("content", "ok"))))
                    .put("usage", new JsonObject().put("prompt_tokens", 3).put("completion_tokens", 1).put("total_tokens", 4))
                    .encode().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(8, r -> {
            Thread t = new Thread(r, "slow-upstream");
            t.setDaemon(true);
            return t;
        }));
        server.start();
        return server;
    }

    /**
     * nano_max changes the router's own kernel loop made (GET /adaptive, the pinned adaptive_stats);
     * 0 while its status cannot be read (the assertions that use it then fail, naming it unreadable).
     */
    private static long loopSteps(RouterProcess r) {
        JsonObject adaptive = r.tryJson("/adaptive");
        return adaptive == null ? 0 : adaptive.getJsonObject("status").getLong("recalibrations");
    }

    private static JsonObject fleetScope(JsonObject config) {
        return config.put("adaptive", new JsonObject().put("scope", "fleet"));
    }

    private static int members(RouterProcess r) {
        JsonObject fleet = r.tryJson("/fleet");
        return fleet == null || !fleet.containsKey("cluster_members") ? -1 : fleet.getInteger("cluster_members");
    }



}
