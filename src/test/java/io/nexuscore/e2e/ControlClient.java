package io.nexuscore.e2e;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

/** The operator's side: plain HTTP to the control plane on loopback (JDK client, blocking). */
final class ControlClient {

    record Response(int status, String body) {
        JsonObject json() {
            return new JsonObject(body);
        }
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    private final java.nio.file.Path tokenFile;

    /** @param tokenFile where the router (auth on by default) saved the token it generated */
    ControlClient(int port, java.nio.file.Path tokenFile) {
        this.base = "http://127.0.0.1:" + port;
        this.tokenFile = tokenFile;
    }

    /** For a router started with {@code config}: its port, and the token file beside its state file. */
    static ControlClient forConfig(JsonObject config) {
        JsonObject control = config.getJsonObject("control");
        return new ControlClient(control.getInteger("port"),
                java.nio.file.Path.of(control.getString("stateFile")).resolveSibling("control.token"));
    }

    Response get(String path) {
        return send(request(path).GET());
    }

    Response send(String method, String path, JsonObject body) {
        return send(request(path).header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(body.encode())));
    }

    Response post(String path) {
        return send(request(path).POST(HttpRequest.BodyPublishers.noBody()));
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
        try {
            if (java.nio.file.Files.exists(tokenFile)) {
                b.header("Authorization", "Bearer " + java.nio.file.Files.readString(tokenFile).strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b;
    }

    private Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Reads GET /events (resuming from the start of the hub's history, filtered by type) until an
     * event's data matches, or fails after 20 s.
     */
    JsonObject awaitEvent(String type, Predicate<JsonObject> matches) {
        HttpRequest request = request("/events?types=" + type) // with the token: GET /events needs it
                .header("Last-Event-ID", "0").GET().build();
        CompletableFuture<HttpResponse<Stream<String>>> sent = http.sendAsync(request, HttpResponse.BodyHandlers.ofLines());
        CompletableFuture<JsonObject> found = sent.thenApplyAsync(response -> {
            try (Stream<String> lines = response.body()) {
                return lines.filter(line -> line.startsWith("data:"))
                        .map(line -> new JsonObject(line.substring(5).trim()))
                        .filter(matches)
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("event stream ended without a matching " + type + " event"));
            }
        });
        try {
            return found.get(20, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no matching " + type + " event on GET /events within 20 s");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError("reading GET /events failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            sent.thenAccept(response -> response.body().close());
            found.cancel(true);
        }
    }

    /** Polls {@code condition} every 100 ms for at most 20 s. */
    static void awaitCondition(String what, java.util.function.BooleanSupplier condition) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within 20 s: " + what);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
