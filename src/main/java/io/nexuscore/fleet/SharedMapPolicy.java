package io.nexuscore.fleet;

import com.hazelcast.map.IMap;
import io.vertx.core.Future;
import io.vertx.core.internal.VertxInternal;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The fleet's document in a cluster-wide map of Vert.x's shared data (a Hazelcast IMap with backups
 * on the other routers). The value is the document's canonical JSON in a signed envelope
 * ({@link FleetKeys}), so the map's own {@code replace(key, old, new)} on the exact text read is the
 * compare-and-set. Anything that reaches the cluster's port can write the map: a value that does not
 * verify is refused ({@link FleetRejections}), reads as no document at all, and is overwritten by the
 * next compare-and-set from "none", so the fleet heals itself at its next sync. Blocks the calling
 * thread (never an event loop) for at most {@code timeout}. One thread (the fleet agent's) calls it.
 */
final class SharedMapPolicy implements SharedPolicy {

    static final String MAP = "nexuscore.fleet.policy";
    static final String KEY = "policy";

    private final AsyncMap<String, Object> map;
    private final Duration timeout;
    private final FleetKeys keys;
    private final FleetRejections rejections;
    /** The last document read or written, and its exact text in the map (the expected value of a compare-and-set). */
    private PolicyDoc lastDoc;
    private String lastText;
    /** A refused value the last read found in the map; a compare-and-set from "none" replaces it. */
    private Object refused;
    /** Stands for a refused value that could not even be read (Java-serialized): only a blind write replaces it. */
    private static final Object UNREADABLE = new Object();
    /**
     * Writes the entry without reading what it replaces (Hazelcast's {@code IMap.setAsync}); null where
     * the map has no such call (a local map in tests): an unreadable value then stays until removed by hand.
     */
    private final Function<String, CompletionStage<Void>> blindWrite;

    SharedMapPolicy(AsyncMap<String, Object> map, Duration timeout, FleetKeys keys, FleetRejections rejections,
                    Function<String, CompletionStage<Void>> blindWrite) {
        this.map = map;
        this.timeout = timeout;
        this.keys = keys;
        this.rejections = rejections;
        this.blindWrite = blindWrite;
    }

    SharedMapPolicy(AsyncMap<String, Object> map, Duration timeout, FleetKeys keys, FleetRejections rejections) {
        this(map, timeout, keys, rejections, null);
    }

    static SharedMapPolicy open(Vertx vertx, Duration timeout, FleetKeys keys, FleetRejections rejections) {
        Function<String, CompletionStage<Void>> blindWrite = null;
        if (((VertxInternal) vertx).clusterManager() instanceof HazelcastClusterManager hazelcast) {
            // The IMap Vert.x's cluster-wide map is (a String value is stored as it is).
            IMap<String, Object> imap = hazelcast.getHazelcastInstance().getMap(MAP);
            blindWrite = text -> imap.setAsync(KEY, text);
        }
        return new SharedMapPolicy(await(vertx.sharedData().<String, Object>getClusterWideMap(MAP), timeout,
                "opening " + MAP), timeout, keys, rejections, blindWrite);
    }

    @Override
    public synchronized Optional<PolicyDoc> read() {
        refused = null;
        Object value;
        try {
            value = awaitRead(map.get(KEY), timeout, "reading " + MAP, rejections, MAP);
        } catch (Unreachable e) {
            if (blindWrite == null || !refusedByFilter(e)) {
                throw e;
            }
            refused = UNREADABLE;
            return Optional.empty();
        }
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof String text)) {
            rejections.refused(MAP, FleetKeys.Reason.NOT_TEXT, "a " + value.getClass().getName() + ", not text",
                    value.getClass().getName() + '\0' + value.hashCode());
            refused = value;
            return Optional.empty();
        }
        if (text.equals(lastText)) {
            return Optional.of(lastDoc);
        }
        PolicyDoc doc;
        try {
            doc = decoded(keys.open(MAP, KEY, text));
        } catch (FleetKeys.Refused e) {
            rejections.refused(MAP, e.reason(), e.getMessage(), text);
            refused = text;
            return Optional.empty();
        } catch (Unreachable e) {
            // Signed by a holder of the secret, yet not a document this router can take (a newer
            // router's format, or stores it would refuse): not the stranger's case, so not healed over.
            rejections.refused(MAP, FleetKeys.Reason.MALFORMED, e.getMessage(), text);
            throw e;
        }
        lastDoc = doc;
        lastText = text;
        return Optional.of(doc);
    }

    /**
     * The document of a verified envelope. A signed document that does not decode (a missing field,
     * thresholds out of range) is treated like a fleet that does not answer: the router starts and
     * serves on its own policy, says why, and reports the fleet unreachable.
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
    public synchronized boolean compareAndSet(Optional<PolicyDoc> expected, PolicyDoc next) {
        String text = keys.seal(MAP, KEY, next.encode());
        boolean written;
        if (expected.isEmpty()) {
            if (refused == UNREADABLE) {
                // Not a compare-and-set: a writer racing this one is put right by the last-writer-wins round.
                await(Future.fromCompletionStage(blindWrite.apply(text)), timeout, "writing " + MAP);
                written = true;
            } else {
                written = refused != null
                        ? await(map.replaceIfPresent(KEY, refused, text), timeout, "writing " + MAP)
                        : await(map.putIfAbsent(KEY, text), timeout, "writing " + MAP) == null;
            }
        } else {
            // The text read, not a re-signed one: after a rotation the map holds the old key's signature.
            String old = expected.get().equals(lastDoc) ? lastText : keys.seal(MAP, KEY, expected.get().encode());
            written = await(map.replaceIfPresent(KEY, old, text), timeout, "writing " + MAP);
        }
        if (written) {
            refused = null;
            lastDoc = next;
            lastText = text;
        }
        return written;
    }

    /**
     * A read of a value a stranger may have written: a Java-serialized object is refused by the
     * cluster's deserialization filter before any of its code runs ({@link Fleet}); that refusal is
     * counted here; the policy's reader then overwrites it blindly, the members' reader skips it.
     */
    static <T> T awaitRead(Future<T> future, Duration timeout, String what, FleetRejections rejections, String map) {
        try {
            return await(future, timeout, what);
        } catch (Unreachable e) {
            if (refusedByFilter(e)) {
                rejections.refused(map, FleetKeys.Reason.JAVA_SERIALIZED, String.valueOf(rootCause(e).getMessage()),
                        String.valueOf(rootCause(e).getMessage()));
            }
            throw e;
        }
    }

    static boolean refusedByFilter(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SecurityException) {
                return true;
            }
        }
        return false;
    }

    private static Throwable rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
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
