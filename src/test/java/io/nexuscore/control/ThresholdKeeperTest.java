package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Thresholds;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicBoolean;
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
        keeper.apply(new ThresholdKeeper.Patch(OptionalInt.of(20), OptionalInt.empty()));
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
                () -> keeper.apply(new ThresholdKeeper.Patch(OptionalInt.of(20), OptionalInt.empty())));
        assertEquals(Thresholds.DEFAULT, store.read());
    }

    @Test
    void aChangeTheKernelLoopWroteIsReportedAsKernelOthersAsExternal() throws Exception {
        InMemoryThresholdStore store = new InMemoryThresholdStore(Thresholds.DEFAULT);
        ThresholdKeeper keeper = new ThresholdKeeper(store, dir.resolve("state.json"),
                (type, data) -> events.add(data.copy().put("type", type)));
        keeper.start(true);
        casAs(store, new Thresholds(55, 130), ThresholdState.WRITER_KERNEL);
        keeper.refresh();
        casAs(store, new Thresholds(50, 130), ThresholdState.WRITER_OTHER); // a tool
        keeper.refresh();
        casAs(store, new Thresholds(60, 130), ThresholdState.WRITER_KERNEL); // the raise-back
        keeper.refresh();
        assertEquals("kernel", events.get(0).getString("source"));
        assertEquals("external", events.get(1).getString("source"));
        assertEquals("kernel", events.get(2).getString("source"));
    }

    @Test
    void anInvalidValueIsReportedNotSavedAndAPatchRepairsIt() throws Exception {
        InMemoryThresholdStore store = new InMemoryThresholdStore(Thresholds.DEFAULT);
        Path file = dir.resolve("state.json");
        ThresholdKeeper keeper = new ThresholdKeeper(store, file, (type, data) -> events.add(data.copy().put("type", type)));
        keeper.start(true);
        String saved = Files.readString(file);
        ThresholdState current = store.state();
        assertTrue(store.compareAndSet(current, new ThresholdState(200, 130, 0, 0)));
        ThresholdState seen = keeper.refresh();
        assertFalse(seen.valid());
        assertEquals(new Thresholds(129, 130), seen.effective(), "clamped below small_max");
        assertEquals(saved, Files.readString(file), "an invalid value is never saved");
        assertEquals(false, events.get(0).getBoolean("valid"));
        assertEquals("nano_max", events.get(0).getJsonObject("invalid").getString("field"));
        assertEquals(false, ThresholdKeeper.toJson(seen).getBoolean("valid"));

        keeper.apply(new ThresholdKeeper.Patch(OptionalInt.of(40), OptionalInt.empty()));
        assertEquals(new Thresholds(40, 130), store.read());
        assertTrue(store.state().valid());
    }

    @Test
    void aPatchLosingTheRaceMergesIntoTheNewerValue() {
        InMemoryThresholdStore real = new InMemoryThresholdStore(Thresholds.DEFAULT);
        AtomicBoolean interfered = new AtomicBoolean();
        ThresholdStore racing = new ThresholdStore() {
            @Override
            public ThresholdState state() {
                return real.state();
            }

            @Override
            public boolean compareAndSet(ThresholdState expected,
                                         ThresholdState next) {
                if (interfered.compareAndSet(false, true)) {
                    casAs(real, new Thresholds(55, 130), ThresholdState.WRITER_KERNEL);
                }
                return real.compareAndSet(expected, next);
            }
        };
        ThresholdKeeper keeper = new ThresholdKeeper(racing, dir.resolve("state.json"), (type, data) -> events.add(data));
        keeper.apply(new ThresholdKeeper.Patch(OptionalInt.empty(), OptionalInt.of(140)));
        assertEquals(new Thresholds(55, 140), real.read(), "the loop's nano_max survives the API's small_max");
    }

    private static void casAs(InMemoryThresholdStore store, Thresholds t, int writer) {
        ThresholdState current = store.state();
        assertTrue(store.compareAndSet(current, current.next(t, writer)));
    }
}
