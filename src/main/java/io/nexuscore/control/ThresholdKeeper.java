package io.nexuscore.control;

import io.nexuscore.config.AtomicFile;

import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.events.EventSink;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Owns every change of the thresholds the control plane sees: API patches, changes made behind its
 * back (bpftool on the pinned map, the kernel feedback loop), and the state file that carries them
 * across a reboot. Each change is saved and published as one {@code threshold} event naming its source
 * and whether the stored value is valid.
 *
 * <p>A value some tool wrote out of order is never an error here: it is reported ({@code valid:false},
 * the field it breaks) and not saved; classification uses {@link ThresholdState#effective()}.
 *
 * <p>API writes are a compare-and-set against the value just read; when another writer (the kernel
 * loop, a tool) got in between, the patch is merged again into the newer value, so nobody's change is
 * lost. Methods touch the store (maybe a syscall) and the disk: call them on worker threads.
 */
final class ThresholdKeeper {

    static final String SOURCE_API = "api";
    /** Changed in the store by someone else: bpftool, another map writer. */
    static final String SOURCE_EXTERNAL = "external";
    static final String SOURCE_STATE_FILE = "state_file";
    /** Changed by the kernel's latency feedback loop (its writer id is in the value). */
    static final String SOURCE_KERNEL = "kernel";
    /** Compare-and-set attempts before giving up: only a writer storm loses this many races. */
    private static final int CAS_ATTEMPTS = 1000;

    /** A partial update: absent fields keep their current value (JSON merge patch). */
    record Patch(OptionalInt nanoMax, OptionalInt smallMax) {
    }

    /** The merged thresholds would not be ordered; names the field the caller supplied. */
    static final class OrderViolation extends RuntimeException {
        final String field;

        OrderViolation(String field, String message) {
            super(message, null, false, false);
            this.field = field;
        }
    }

    private final ThresholdStore store;
    private final Path stateFile;
    private final EventSink events;
    private volatile ThresholdState lastKnown;

    ThresholdKeeper(ThresholdStore store, Path stateFile, EventSink events) {
        this.store = store;
        this.stateFile = stateFile;
        this.events = events;
    }

    /** The stored value as of the last read; for gauges, which must not make syscalls. */
    ThresholdState lastKnown() {
        return lastKnown;
    }

    /**
     * Called once at start. When the store was just initialised from config and a state file exists,
     * the file's thresholds win (they are the operator's latest); otherwise the store's value stands
     * (a pinned map that survived a router restart) and the file is brought in line with it.
     */
    synchronized ThresholdState start(boolean storeFresh) {
        ThresholdState live = store.state();
        lastKnown = live;
        Optional<Thresholds> saved = load();
        if (storeFresh && saved.isPresent() && !saved.equals(live.thresholds())) {
            for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
                ThresholdState current = store.state();
                ThresholdState next = current.next(saved.get(), ThresholdState.WRITER_API);
                if (store.compareAndSet(current, next)) {
                    lastKnown = next;
                    publish(SOURCE_STATE_FILE, current, next);
                    return next;
                }
            }
            throw new IllegalStateException("cannot restore the state file's thresholds: the store kept changing");
        } else if (live.valid() && !saved.equals(live.thresholds())) {
            save(live.thresholds().orElseThrow());
        }
        return lastKnown;
    }

    /** Reads the store and reports a change made behind the control plane's back. */
    synchronized ThresholdState refresh() {
        ThresholdState now = store.state();
        ThresholdState before = lastKnown;
        lastKnown = now;
        if (!now.sameThresholds(before)) {
            now.thresholds().ifPresent(this::save); // an invalid value is reported, never persisted
            publish(now.writer() == ThresholdState.WRITER_KERNEL ? SOURCE_KERNEL : SOURCE_EXTERNAL, before, now);
        }
        return now;
    }

    /**
     * Merges the patch into the stored thresholds and writes the result with a compare-and-set;
     * when another writer changed them in between, merges again into the newer value.
     *
     * @throws OrderViolation when the merged nano_max is not below small_max (nothing is written)
     */
    synchronized ThresholdState apply(Patch patch) {
        for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            ThresholdState current = refresh();
            int nano = patch.nanoMax().orElse(current.nanoMax());
            int small = patch.smallMax().orElse(current.smallMax());
            if (nano >= small) {
                String field = patch.nanoMax().isPresent() ? "nano_max" : "small_max";
                throw new OrderViolation(field, "nano_max (" + nano + ") must be less than small_max (" + small
                        + ") after merging the patch into the current thresholds " + toJson(current).encode());
            }
            Thresholds merged = new Thresholds(nano, small);
            if (current.thresholds().equals(Optional.of(merged))) {
                return current;
            }
            ThresholdState next = current.next(merged, ThresholdState.WRITER_API);
            if (!store.compareAndSet(current, next)) {
                continue; // another writer got in: merge into its value
            }
            try {
                save(merged);
            } catch (UncheckedIOException e) {
                // The API promises a change survives a restart; without the file it would not: undo it,
                // unless someone wrote after us (then theirs stands).
                store.compareAndSet(next, new ThresholdState(current.nanoMax(), current.smallMax(),
                        ThresholdState.WRITER_API, next.version() + 1));
                throw e;
            }
            lastKnown = next;
            publish(SOURCE_API, current, next);
            return next;
        }
        throw new IllegalStateException("the thresholds changed under " + CAS_ATTEMPTS + " attempts to write them");
    }

    /**
     * The body of GET /thresholds and of events: the stored values as they are, whether they are
     * valid, and when not, the rule they break and what classification uses instead.
     */
    static JsonObject toJson(ThresholdState t) {
        JsonObject json = pair(t.nanoMax(), t.smallMax()).put("valid", t.valid());
        t.problem().ifPresent(p -> json
                .put("invalid", new JsonObject().put("field", p.field()).put("detail", p.message()))
                .put("effective", pair(t.effective().nanoMax(), t.effective().smallMax())));
        return json;
    }

    private static JsonObject pair(int nano, int small) {
        return new JsonObject().put("nano_max", nano).put("small_max", small);
    }

    private void publish(String source, ThresholdState before, ThresholdState after) {
        JsonObject event = new JsonObject()
                .put("source", source)
                .put("valid", after.valid())
                .put("old", before == null ? null : pair(before.nanoMax(), before.smallMax()))
                .put("new", pair(after.nanoMax(), after.smallMax()));
        JsonObject body = toJson(after);
        if (!after.valid()) {
            event.put("invalid", body.getValue("invalid")).put("effective", body.getValue("effective"));
        }
        events.publish("threshold", event);
    }

    private Optional<Thresholds> load() {
        if (!Files.exists(stateFile)) {
            return Optional.empty();
        }
        try {
            JsonObject t = new JsonObject(Files.readString(stateFile)).getJsonObject("thresholds");
            if (t == null) {
                throw new IllegalStateException("no 'thresholds' object");
            }
            return Optional.of(new Thresholds(t.getInteger("nano_max"), t.getInteger("small_max")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read state file " + stateFile + ": " + e.getMessage(), e);
        } catch (DecodeException | ClassCastException | NullPointerException | IllegalArgumentException
                 | IllegalStateException e) {
            throw new IllegalStateException("state file " + stateFile + " is invalid (" + e.getMessage()
                    + "); fix or delete it to start from the configured thresholds", e);
        }
    }

    /** Writes a temporary file beside the state file, syncs it and renames it over: never a torn file. */
    private void save(Thresholds t) {
        byte[] bytes = new JsonObject().put("thresholds", pair(t.nanoMax(), t.smallMax())).encodePrettily().getBytes(StandardCharsets.UTF_8);
        try {
            AtomicFile.write(stateFile, bytes, false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot save thresholds to state file " + stateFile + ": " + e, e);
        }
    }
}
