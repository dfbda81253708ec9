package io.nexuscore.control;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A minimal Server-Sent Events reader over a real HTTP connection: splits the stream into events at
 * blank lines and collects their {@code id}, {@code event} and {@code data} fields (comments skipped).
 */
final class SseClient {

    record SseEvent(Optional<Long> id, String type, JsonObject data) {
    }

    private final HttpClient http;
    private final StringBuilder pending = new StringBuilder();
    private final List<SseEvent> events = new ArrayList<>();
    private final List<Waiter> waiters = new ArrayList<>();
    HttpClientResponse response;

    private record Waiter(int count, Promise<List<SseEvent>> promise) {
    }

    private record TypeWaiter(String type, JsonObject data, Promise<List<SseEvent>> promise) {
    }

    private final List<TypeWaiter> typeWaiters = new ArrayList<>();

    private SseClient(Vertx vertx) {
        this.http = vertx.createHttpClient();
    }

    /** Connects; the future completes once the response headers arrived (the server has subscribed). */
    static Future<SseClient> connect(Vertx vertx, int port, String uri, Optional<Long> lastEventId) {
        SseClient client = new SseClient(vertx);
        return client.http.request(HttpMethod.GET, port, "127.0.0.1", uri).compose(req -> {
            lastEventId.ifPresent(id -> req.putHeader("Last-Event-ID", Long.toString(id)));
            req.putHeader("Authorization", "Bearer " + ControlFixture.TOKEN); // GET /events needs the token
            return req.send();
        }).map(resp -> {
            client.response = resp;
            resp.handler(client::feed);
            return client;
        });
    }

    /** Completes when at least {@code count} events arrived, with the first {@code count}. */
    Future<List<SseEvent>> await(int count) {
        Promise<List<SseEvent>> promise = Promise.promise();
        waiters.add(new Waiter(count, promise));
        check();
        return promise.future();
    }

    /** Completes with all events so far once one of the given type and data arrived. */
    Future<List<SseEvent>> awaitEvent(String type, JsonObject data) {
        Promise<List<SseEvent>> promise = Promise.promise();
        typeWaiters.add(new TypeWaiter(type, data, promise));
        check();
        return promise.future();
    }

    List<SseEvent> received() {
        return List.copyOf(events);
    }

    Future<Void> close() {
        return http.close();
    }

    private void feed(Buffer buffer) {
        pending.append(buffer.toString(StandardCharsets.UTF_8));
        int end;
        while ((end = pending.indexOf("\n\n")) >= 0) {
            String block = pending.substring(0, end);
            pending.delete(0, end + 2);
            parse(block);
        }
        check();
    }

    private void parse(String block) {
        Optional<Long> id = Optional.empty();
        String type = "message";
        StringBuilder data = null;
        for (String line : block.split("\n")) {
            if (line.startsWith(":")) {
                continue;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1).replaceFirst("^ ", "");
            switch (field) {
                case "id" -> id = Optional.of(Long.parseLong(value));
                case "event" -> type = value;
                case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                default -> { }
            }
        }
        if (data != null) {
            events.add(new SseEvent(id, type, new JsonObject(data.toString())));
        }
    }

    private void check() {
        waiters.removeIf(w -> {
            if (events.size() >= w.count()) {
                w.promise().complete(List.copyOf(events.subList(0, w.count())));
                return true;
            }
            return false;
        });
        typeWaiters.removeIf(w -> {
            boolean seen = events.stream().anyMatch(e -> e.type().equals(w.type()) && e.data().equals(w.data()));
            if (seen) {
                w.promise().complete(List.copyOf(events));
            }
            return seen;
        });
    }
}
