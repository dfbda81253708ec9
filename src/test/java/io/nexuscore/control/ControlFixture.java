package io.nexuscore.control;
import io.nexuscore.events.EventHub;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.config.ControlConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/** A control plane on a real loopback socket (port 0), with a fresh registry, hub and state directory. */
final class ControlFixture {

    static final String TOKEN = "test-token-4f1c-2b9e";

    final ControlPorts kernel;
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final EventHub hub;
    final Path stateDir;
    final Path stateFile;
    final ControlVerticle verticle;
    WebClient client;
    int port;

    ControlFixture(ControlPorts kernel, int history, int subscriberBuffer) {
        this(kernel, history, subscriberBuffer, tempDir());
    }

    ControlFixture(ControlPorts kernel, int history, int subscriberBuffer, Path stateDir) {
        this(kernel, history, subscriberBuffer, stateDir, TierStateView.NONE);
    }

    ControlFixture(ControlPorts kernel, int history, int subscriberBuffer, Path stateDir, TierStateView pools) {
        this.kernel = kernel;
        this.stateDir = stateDir;
        this.stateFile = stateDir.resolve("state.json");
        this.hub = new EventHub(history, subscriberBuffer, registry);
        ControlConfig config = ControlConfig.withToken("127.0.0.1", 0, Optional.of(TOKEN), stateFile, history, subscriberBuffer);
        this.verticle = new ControlVerticle(config, kernel, pools, hub, registry,
                new ControlVerticle.Timings(Duration.ofMillis(50), Duration.ofSeconds(30)));
    }

    Future<ControlFixture> deploy(Vertx vertx) {
        return vertx.deployVerticle(verticle).map(id -> {
            port = verticle.actualPort();
            client = WebClient.create(vertx);
            return this;
        });
    }

    HttpRequest<Buffer> get(String path) {
        return client.get(port, "127.0.0.1", path);
    }

    HttpRequest<Buffer> authed(HttpRequest<Buffer> request) {
        return request.putHeader("Authorization", "Bearer " + TOKEN);
    }

    Future<HttpResponse<Buffer>> patchThresholds(String body) {
        return authed(client.patch(port, "127.0.0.1", "/thresholds"))
                .putHeader("Content-Type", "application/merge-patch+json")
                .sendBuffer(Buffer.buffer(body));
    }

    void deleteStateDir() {
        try (Stream<Path> files = Files.walk(stateDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temp directory
        }
    }

    static Path tempDir() {
        try {
            return Files.createTempDirectory("nexus-control-test");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
