package io.nexuscore.fleet;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The fleet's document in a cluster-wide map of Vert.x's shared data (a Hazelcast IMap with backups
 * on the other routers). The value is the document's canonical JSON, so the map's own
 * {@code replace(key, old, new)} is the compare-and-set. Blocks the calling thread (never an event
 * loop) for at most {@code timeout}.
 */
final class SharedMapPolicy implements SharedPolicy {

    static final String MAP = "nexuscore.fleet.policy";
    private static final String KEY = "policy";

    private final AsyncMap<String, String> map;
    private final Duration timeout;

    private SharedMapPolicy(AsyncMap<String, String> map, Duration timeout) {
        this.map = map;
        this.timeout = timeout;
    }

    static SharedMapPolicy open(Vertx vertx, Duration timeout) {
        return new SharedMapPolicy(await(vertx.sharedData().<String, String>getClusterWideMap(MAP), timeout,
                "opening " + MAP), timeout);
    }

    @Override
    public Optional<PolicyDoc> read() {
        return Optional.ofNullable(await(map.get(KEY), timeout, "reading " + MAP)).map(SharedMapPolicy::decoded);
    }

    /**
     * The document as the map holds it. Anything that reaches the cluster's port can write that map,
     * so a document that does not decode (garbage, a missing field, thresholds out of range) is
     * treated like a fleet that does not answer: the router starts and serves on its own policy,
     * says why, and reports the fleet unreachable, instead of failing its start or its sync.
     */
    static PolicyDoc decoded(String text) {
        try {
            return PolicyDoc.decode(text);
        } catch (RuntimeException e) {
            throw new Unreachable("the fleet's policy document in " + MAP + " is unreadable (" + e
                    + "); serving this router's own policy until a valid one is written", e);
        }
    }

    @Override
    public boolean compareAndSet(Optional<PolicyDoc> expected, PolicyDoc next) {
        if (expected.isEmpty()) {
            return await(map.putIfAbsent(KEY, next.encode()), timeout, "writing " + MAP) == null;
        }
        return await(map.replaceIfPresent(KEY, expected.get().encode(), next.encode()), timeout, "writing " + MAP);
    }

    /** Waits for a cluster call on this (non-Vert.x) thread, bounded. */
    static <T> T await(Future<T> future, Duration timeout, String what) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new Unreachable(what + ": no answer within " + timeout.toMillis() + " ms", e);
        } catch (ExecutionException e) {
            throw new Unreachable(what + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unreachable(what + ": interrupted", e);
        }
    }
}
