package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The state file: restored over a fresh store, never over a surviving pinned map, written atomically. */
class ThresholdKeeperTest {

    @TempDir
    Path dir;

    private final List<JsonObject> events = new ArrayList<>();

    private ThresholdKeeper keeper(InMemoryThresholdStore store, Path file) {
        return new ThresholdKeeper(store, file, (type, data) -> events.add(data.copy().put("type", type)));
    }

    private static void save(Path file, int nano, int small) throws Exception {
        Files.writeString(file, new JsonObject().put("thresholds",
                new JsonObject().put("nano_max", nano).put("small_max", small)).encode());
    }

    @Test
    void aSavedStateIsRestoredOverAFreshStore() throws Exception {
        Path file = dir.resolve("state.json");
        save(file, 30, 100);
        InMemoryThresholdStore store = new InMemoryThresholdStore(Thresholds.DEFAULT);
        keeper(store, file).start(true);
        assertEquals(new Thresholds(30, 100), store.read());
        assertEquals("state_file", events.get(0).getString("source"));
    }

    @Test
    void aSurvivingPinnedMapWinsAndTheFileFollowsIt() throws Exception {
        Path file = dir.resolve("state.json");
        save(file, 30, 100);
        InMemoryThresholdStore store = new InMemoryThresholdStore(new Thresholds(45, 120));
        keeper(store, file).start(false);
        assertEquals(new Thresholds(45, 120), store.read());
        assertEquals(45, new JsonObject(Files.readString(file)).getJsonObject("thresholds").getInteger("nano_max"));
        assertTrue(events.isEmpty());
    }

    @Test
    void aMissingStateDirectoryIsCreatedAndNoTemporaryFileIsLeft() throws Exception {
        Path file = dir.resolve("var/lib/nexuscore/state.json");
        ThresholdKeeper keeper = keeper(new InMemoryThresholdStore(Thresholds.DEFAULT), file);
        keeper.start(true);
        keeper.apply(new ThresholdKeeper.Patch(java.util.OptionalInt.of(20), java.util.OptionalInt.empty()));
        assertEquals(20, new JsonObject(Files.readString(file)).getJsonObject("thresholds").getInteger("nano_max"));
        try (var files = Files.list(file.getParent())) {
            assertEquals(List.of(file), files.toList());
        }
    }

    @Test
    void aCorruptStateFileFailsTheStartNamingTheFile() throws Exception {
        Path file = dir.resolve("state.json");
        Files.writeString(file, "{\"thresholds\": {\"nano_max\": 200, \"small_max\": 100}}");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> keeper(new InMemoryThresholdStore(Thresholds.DEFAULT), file).start(true));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    }

    @Test
    void anUnwritableStateFileUndoesTheApiChange() throws Exception {
        Path blocker = dir.resolve("not-a-dir");
        Files.writeString(blocker, "");
        InMemoryThresholdStore store = new InMemoryThresholdStore(Thresholds.DEFAULT);
        ThresholdKeeper keeper = keeper(store, blocker.resolve("state.json"));
        assertThrows(java.io.UncheckedIOException.class,
                () -> keeper.apply(new ThresholdKeeper.Patch(java.util.OptionalInt.of(20), java.util.OptionalInt.empty())));
        assertEquals(Thresholds.DEFAULT, store.read());
    }

    @Test
    void aChangeTheKernelLoopExplainsIsReportedAsKernelOthersAsExternal() throws Exception {
        InMemoryThresholdStore store = new InMemoryThresholdStore(Thresholds.DEFAULT);
        java.util.concurrent.atomic.AtomicReference<java.util.Optional<io.nexuscore.adapt.Recalibration>> last =
                new java.util.concurrent.atomic.AtomicReference<>(java.util.Optional.empty());
        ThresholdKeeper keeper = new ThresholdKeeper(store, dir.resolve("state.json"),
                (type, data) -> events.add(data.copy().put("type", type)), last::get);
        keeper.start(true);
        last.set(java.util.Optional.of(new io.nexuscore.adapt.Recalibration(1, 60, 55, 80_000, 1000)));
        store.write(new Thresholds(55, 130));
        keeper.refresh();
        store.write(new Thresholds(50, 130)); // not the loop's value: someone else
        keeper.refresh();
        last.set(java.util.Optional.of(new io.nexuscore.adapt.Recalibration(2, 55, 60, 5_000, 1000)));
        store.write(new Thresholds(60, 130)); // the raise-back
        keeper.refresh();
        assertEquals("kernel", events.get(0).getString("source"));
        assertEquals("external", events.get(1).getString("source"));
        assertEquals("kernel", events.get(2).getString("source"));
    }
}
