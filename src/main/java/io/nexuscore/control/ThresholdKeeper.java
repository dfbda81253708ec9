package io.nexuscore.control;

import io.nexuscore.adapt.Recalibration;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.events.EventSink;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Supplier;

/**
 * Owns every change of the thresholds the control plane sees: API patches, changes made behind its
 * back (bpftool on the pinned map, the kernel feedback loop), and the state file that carries them
 * across a reboot. Each change is saved and published as one {@code threshold} event naming its source.
 *
 * <p>Methods touch the store (a bpf syscall in kernel mode) and the disk: call them on worker threads.
 * They are synchronized so an API write and a poll never both claim the same change.
 */
final class ThresholdKeeper {

    static final String SOURCE_API = "api";
    /** Changed in the store by someone else: bpftool, another map writer, or the kernel feedback loop. */
    static final String SOURCE_EXTERNAL = "external";
    static final String SOURCE_STATE_FILE = "state_file";
    /** Changed by the kernel's latency feedback loop (its last recalibration explains the change). */
    static final String SOURCE_KERNEL = "kernel";

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
    private final Supplier<Optional<Recalibration>> lastRecalibration;
    private volatile Thresholds lastKnown;

    ThresholdKeeper(ThresholdStore store, Path stateFile, EventSink events) {
        this(store, stateFile, events, Optional::empty);
    }

    /** @param lastRecalibration the kernel loop's last change, read only when a change is seen */
    ThresholdKeeper(ThresholdStore store, Path stateFile, EventSink events,
                    Supplier<Optional<Recalibration>> lastRecalibration) {
        this.store = store;
        this.stateFile = stateFile;
        this.events = events;
        this.lastRecalibration = lastRecalibration;
    }

    /** The thresholds as of the last read; for gauges, which must not make syscalls. */
    Thresholds lastKnown() {
        return lastKnown;
    }

    /**
     * Called once at start. When the store was just initialised from config and a state file exists,
     * the file's thresholds win (they are the operator's latest); otherwise the store's value stands
     * (a pinned map that survived a router restart) and the file is brought in line with it.
     */
    synchronized Thresholds start(boolean storeFresh) {
        Thresholds live = store.read();
        lastKnown = live;
        Optional<Thresholds> saved = load();
        if (storeFresh && saved.isPresent() && !saved.get().equals(live)) {
            store.write(saved.get());
            lastKnown = saved.get();
            publish(SOURCE_STATE_FILE, live, saved.get());
        } else if (saved.isEmpty() || !saved.get().equals(live)) {
            save(live);
        }
        return lastKnown;
    }

    /** Reads the store and reports a change made behind the control plane's back. */
    synchronized Thresholds refresh() {
        Thresholds now = store.read();
        Thresholds before = lastKnown;
        if (!now.equals(before)) {
            lastKnown = now;
            save(now);
            publish(madeByKernel(before, now) ? SOURCE_KERNEL : SOURCE_EXTERNAL, before, now);
        }
        return now;
    }

    /**
     * Merges the patch into the live thresholds and writes the result.
     *
     * @throws OrderViolation when the merged nano_max is not below small_max (nothing is written)
     */
    synchronized Thresholds apply(Patch patch) {
        Thresholds current = refresh();
        int nano = patch.nanoMax().orElse(current.nanoMax());
        int small = patch.smallMax().orElse(current.smallMax());
        if (nano >= small) {
            String field = patch.nanoMax().isPresent() ? "nano_max" : "small_max";
            throw new OrderViolation(field, "nano_max (" + nano + ") must be less than small_max (" + small
                    + ") after merging the patch into the current thresholds " + toJson(current).encode());
        }
        Thresholds merged = new Thresholds(nano, small);
        if (merged.equals(current)) {
            return current;
        }
        store.write(merged);
        try {
            save(merged);
        } catch (UncheckedIOException e) {
            // The API promises a change survives a restart; without the file it would not: undo it.
            store.write(current);
            throw e;
        }
        lastKnown = merged;
        publish(SOURCE_API, current, merged);
        return merged;
    }

    /** Only nano_max moved, and to the value of the kernel loop's last recalibration. */
    private boolean madeByKernel(Thresholds before, Thresholds now) {
        if (before == null || before.smallMax() != now.smallMax()) {
            return false;
        }
        return lastRecalibration.get().map(r -> r.newNanoMax() == now.nanoMax()).orElse(false);
    }

    static JsonObject toJson(Thresholds t) {
        return new JsonObject().put("nano_max", t.nanoMax()).put("small_max", t.smallMax());
    }

    private void publish(String source, Thresholds before, Thresholds after) {
        events.publish("threshold", new JsonObject()
                .put("source", source)
                .put("old", toJson(before))
                .put("new", toJson(after)));
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
        byte[] bytes = new JsonObject().put("thresholds", toJson(t)).encodePrettily().getBytes(StandardCharsets.UTF_8);
        Path dir = stateFile.toAbsolutePath().getParent();
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            tmp = Files.createTempFile(dir, "." + stateFile.getFileName(), ".tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(bytes));
                ch.force(true);
            }
            Files.move(tmp, stateFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the original error is the one to report
                }
            }
            throw new UncheckedIOException("cannot save thresholds to state file " + stateFile + ": " + e, e);
        }
    }
}
