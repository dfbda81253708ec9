package io.nexuscore.adapt;
import io.nexuscore.kernel.maps.LatencyRing;
import io.nexuscore.kernel.maps.RingConsumer;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.maps.ScoreThresholdsMap;
import io.nexuscore.kernel.maps.SharedStructs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.maps.AdaptiveStatus;
import io.nexuscore.kernel.maps.Recalibration;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.testing.NanoCut;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kernel feedback loop end to end in the real kernel: latency events written through
 * {@link LatencyRing} (user ring buffer), drained by the bpf_timer every period, nano_max lowered in
 * score_thresholds, a recalibration event read back through {@link RingConsumer#recalibrations}.
 *
 * <p>No timing assertion: each test waits, with a bounded timeout, for the timer to have run a
 * number of periods (adaptive_stats.ticks), then asserts the map state.
 */
class AdaptiveLoopTest {

    private static final int PERIOD_MS = 200;
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int TARGET_US = 50_000;
    private static final int STEP = 5;
    private static final int FLOOR = 20;
    private static final long SLOW_NANOS = 80_000_000L; // 80 ms, over the 50 ms target
    /*
     * 54 ms: bucket floor 53,248 us, over the 50 ms target by less than a fifth, so the cut
     * (step * p95 / target = 5.3, rounded down) is exactly one step.
     */
    private static final long ONE_STEP_NANOS = 54_000_000L;
    private static final int ONE_STEP_P95_US = 53_248;
    private static final long FAST_NANOS = 5_000_000L;  // 5 ms

    private KernelDataPath kernel;
    private RingConsumer<Recalibration> consumer;
    private final List<Recalibration> received = new CopyOnWriteArrayList<>();

    @BeforeEach
    void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        consumer = kernel.recalibrationEvents(received::add);
        kernel.adaptive().configure(kernel.adaptive().settings().withPeriodMs(PERIOD_MS));
    }

    @AfterEach
    void unload() {
        if (consumer != null) {
            consumer.close();
        }
        KernelTestSupport.dispose(kernel);
    }

    @Test
    void theDefaultsAreTheOnesTheseTestsCountOn() {
        AdaptiveSettings s = kernel.adaptive().settings();
        assertEquals(TARGET_US, s.nanoTargetP95Us());
        assertEquals(STEP, s.step());
        assertEquals(FLOOR, s.floor());
        assertEquals(STEP, NanoCut.expected(STEP, ONE_STEP_P95_US, TARGET_US), "54 ms cuts one step");
    }

    @Test
    void slowNanoTrafficLowersNanoMaxByTheStepWithACompareAndSet() {
        assertEquals(60, kernel.thresholds().read().nanoMax());
        write(Tier.NANO, ONE_STEP_NANOS, 1000);

        awaitCondition("nano_max lowered", () -> kernel.thresholds().read().nanoMax() < 60);
        awaitTicks(2);

        Thresholds after = kernel.thresholds().read();
        // 1000 events fit one period's drain (max_events 10,000): exactly one step, and no more
        // while the ring stays empty.
        assertEquals(new Thresholds(55, 130), after);
        AdaptiveStatus status = kernel.adaptive().status();
        assertEquals(1, status.recalibrations());
        assertEquals(1000, status.drained());
        assertEquals(0, kernel.adaptive().lastUpdateResult(), "the compare-and-set of score_thresholds succeeded");
        Recalibration last = status.last().orElseThrow();
        assertEquals(60, last.oldNanoMax());
        assertEquals(55, last.newNanoMax());
        assertEquals(1000, last.samples());
        assertEquals(ONE_STEP_P95_US, last.p95Us(), "P95: the bucket floor of 54 ms");

        awaitCondition("recalibration event reaches the consumer", () -> !received.isEmpty());
        assertEquals(last, received.get(0));
    }

    @Test
    void everyPeriodOverTargetStepsDownToFortyAndTheFloorHolds() {
        for (int expected = 55; expected >= 40; expected -= 5) {
            write(Tier.NANO, ONE_STEP_NANOS, 100);
            int target = expected;
            awaitCondition("nano_max " + target, () -> kernel.thresholds().read().nanoMax() == target);
        }
        kernel.thresholds().write(new Thresholds(22, 130));
        write(Tier.NANO, ONE_STEP_NANOS, 100);
        awaitCondition("nano_max at the floor", () -> kernel.thresholds().read().nanoMax() == 20);
        write(Tier.NANO, ONE_STEP_NANOS, 100);
        long ticks = kernel.adaptive().status().ticks();
        awaitTicksAfter(ticks, 2);
        assertEquals(20, kernel.thresholds().read().nanoMax(), "never below the floor");
    }

    /** 200 ms against a 50 ms target: the cut follows the miss, more than one step and less than the cap. */
    @Test
    void aFarMissCutsInProportionToTheMiss() {
        write(Tier.NANO, 200_000_000L, 100);
        awaitCondition("nano_max lowered", () -> kernel.thresholds().read().nanoMax() < 60);
        Recalibration last = kernel.adaptive().status().last().orElseThrow();
        assertEquals(196_608, last.p95Us(), "P95: the bucket floor of 200 ms");
        int cut = NanoCut.expected(STEP, last.p95Us(), TARGET_US);
        assertEquals(19, cut, "5 * 196,608 / 50,000 rounded down");
        assertEquals(60, last.oldNanoMax());
        assertEquals(cut, last.oldNanoMax() - last.newNanoMax());
        assertEquals(new Thresholds(41, 130), kernel.thresholds().read());
        assertEquals(1, kernel.adaptive().status().recalibrations(), "one period, one cut");
    }

    /** 2 s against 50 ms would cut 196; the cut stops at CUT_MAX_STEPS steps, and the floor still holds. */
    @Test
    void aHugeMissIsCappedAndTheFloorHolds() {
        int cap = STEP * AdaptiveSettings.CUT_MAX_STEPS;
        write(Tier.NANO, 2_000_000_000L, 100);
        awaitCondition("nano_max lowered", () -> kernel.thresholds().read().nanoMax() < 60);
        Recalibration first = kernel.adaptive().status().last().orElseThrow();
        assertTrue((long) STEP * first.p95Us() / TARGET_US > cap, "uncapped, the cut would be more: " + first.p95Us());
        assertEquals(60 - cap, first.newNanoMax(), "capped at " + AdaptiveSettings.CUT_MAX_STEPS + " steps");
        assertEquals(60 - cap, kernel.thresholds().read().nanoMax());

        // 30 - 20 would be 10: the floor (20) stops it, and the next periods leave it there.
        kernel.thresholds().write(new Thresholds(30, 130));
        write(Tier.NANO, 2_000_000_000L, 100);
        awaitCondition("nano_max at the floor", () -> kernel.thresholds().read().nanoMax() == FLOOR);
        Recalibration toFloor = kernel.adaptive().status().last().orElseThrow();
        assertEquals(30, toFloor.oldNanoMax());
        assertEquals(FLOOR, toFloor.newNanoMax());
        long recalibrations = kernel.adaptive().status().recalibrations();
        write(Tier.NANO, 2_000_000_000L, 100);
        long ticks = kernel.adaptive().status().ticks();
        awaitTicksAfter(ticks, 2);
        assertEquals(FLOOR, kernel.thresholds().read().nanoMax(), "never below the floor");
        assertEquals(recalibrations, kernel.adaptive().status().recalibrations(), "at the floor: no change, no event");
    }

    @Test
    void goodPeriodsRaiseNanoMaxBackToTheCeilingWithHysteresis() {
        assertEquals(60, kernel.adaptive().settings().ceiling(), "the ceiling is the configured nano_max");
        write(Tier.NANO, ONE_STEP_NANOS, 100);
        awaitCondition("nano_max 55", () -> kernel.thresholds().read().nanoMax() == 55);

        goodPeriod(1);
        goodPeriod(2);
        assertEquals(55, kernel.thresholds().read().nanoMax(), "two good periods are not enough (raise_after 3)");
        // A period between half the target and the target breaks the run of good periods.
        long drained = kernel.adaptive().status().drained();
        write(Tier.NANO, 40_000_000L, 100);
        awaitCondition("40 ms batch drained", () -> kernel.adaptive().status().drained() >= drained + 100);
        awaitTicks(1);
        assertEquals(0, kernel.adaptive().status().goodPeriods());
        assertEquals(55, kernel.thresholds().read().nanoMax());

        goodPeriod(1);
        goodPeriod(2);
        write(Tier.NANO, FAST_NANOS, 100);
        awaitCondition("nano_max back at 60", () -> kernel.thresholds().read().nanoMax() == 60);
        Recalibration raise = kernel.adaptive().status().last().orElseThrow();
        assertEquals(55, raise.oldNanoMax());
        assertEquals(60, raise.newNanoMax());

        for (int n = 1; n <= 4; n++) {
            goodPeriod(n);
        }
        assertEquals(60, kernel.thresholds().read().nanoMax(), "never above the ceiling");
    }

    /** One period of fast nano traffic; waits until the kernel has counted it as good period number {@code n}. */
    private void goodPeriod(int n) {
        write(Tier.NANO, FAST_NANOS, 100);
        awaitCondition("good period " + n, () -> kernel.adaptive().status().goodPeriods() == n);
    }

    @Test
    void fastNanoTrafficLeavesNanoMaxAlone() {
        write(Tier.NANO, FAST_NANOS, 1000);
        awaitCondition("events drained", () -> kernel.adaptive().status().drained() == 1000);
        awaitTicks(1);
        assertEquals(60, kernel.thresholds().read().nanoMax());
        AdaptiveStatus status = kernel.adaptive().status();
        assertEquals(0, status.recalibrations());
        assertTrue(status.lastP95Us().get(0) <= 5_000, "nano P95 ~5 ms: " + status.lastP95Us());
    }

    @Test
    void slowTrafficOfOtherTiersDoesNotMoveNano() {
        write(Tier.SMALL, SLOW_NANOS, 500);
        write(Tier.LARGE, SLOW_NANOS, 500);
        awaitCondition("events drained", () -> kernel.adaptive().status().drained() == 1000);
        awaitTicks(1);
        assertEquals(60, kernel.thresholds().read().nanoMax());
        AdaptiveStatus status = kernel.adaptive().status();
        assertEquals(0, status.recalibrations());
        assertEquals(List.of(0, 500, 500), status.lastSamples());
    }

    @Test
    void anEmptyRingChangesNothing() {
        awaitTicks(3);
        assertEquals(Thresholds.DEFAULT, kernel.thresholds().read());
        AdaptiveStatus status = kernel.adaptive().status();
        assertEquals(0, status.drained());
        assertEquals(Optional.empty(), status.last());
    }

    @Test
    void disabledLoopDrainsButNeverChanges() {
        AdaptiveSettings s = kernel.adaptive().settings();
        kernel.adaptive().configure(s.withEnabled(false));
        write(Tier.NANO, SLOW_NANOS, 1000);
        awaitCondition("events drained", () -> kernel.adaptive().status().drained() == 1000);
        awaitTicks(1);
        assertEquals(60, kernel.thresholds().read().nanoMax());
    }

    @Test
    void theLoopResumesAfterAReloadWithOneTimer() {
        write(Tier.NANO, ONE_STEP_NANOS, 100);
        awaitCondition("first step", () -> kernel.thresholds().read().nanoMax() == 55);
        kernel.reload(Optional.empty());
        write(Tier.NANO, ONE_STEP_NANOS, 100);
        awaitCondition("step after reload", () -> kernel.thresholds().read().nanoMax() == 50);
        long ticks = kernel.adaptive().status().ticks();
        awaitTicksAfter(ticks, 3);
        // One timer: an empty ring after the reload changes nothing more.
        assertEquals(50, kernel.thresholds().read().nanoMax());
        assertEquals(2, kernel.adaptive().status().recalibrations());
    }

    @Test
    void theTimerKeepsRunningAfterTheLoaderClosesAndARestartKeepsTheSettings() {
        consumer.close();
        consumer = null;
        kernel.close(); // the router stops; the pins (and the timer in adaptive_timer) stay
        java.nio.file.Path pinDir = kernel.pinDir();
        try (LatencyRing ring = LatencyRing.openPinned(pinDir);
             BpfMap thresholds = BpfMap.openPinned(pinDir, "score_thresholds", 4, SharedStructs.SCORE_THRESHOLDS.size())) {
            for (int i = 0; i < 100; i++) {
                assertTrue(ring.write(Tier.NANO, ONE_STEP_NANOS, 0));
            }
            try (ScoreThresholdsMap map = ScoreThresholdsMap.map(thresholds)) {
                awaitCondition("nano_max lowered with no loader running", () -> map.read().nanoMax() == 55);
            }
        }
        // The router starts again on the same pins: settings and thresholds survive, the loop goes on.
        kernel = KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING, Set.of(8080),
                io.nexuscore.config.KernelConfig.XdpMode.GENERIC);
        assertEquals(PERIOD_MS, kernel.adaptive().settings().periodMs());
        assertEquals(55, kernel.thresholds().read().nanoMax());
        write(Tier.NANO, ONE_STEP_NANOS, 100);
        awaitCondition("nano_max 50 after the restart", () -> kernel.thresholds().read().nanoMax() == 50);
    }

    /**
     * Writes a batch just after a timer period began, so that one period drains all of it: a tick
     * falling inside the write (1,000 events take a few ms against a 200 ms period) would split the
     * batch into two decisions, and the one-cut assertions would fail about once in a hundred runs.
     */
    private void write(Tier tier, long latencyNanos, int count) {
        long ticks = kernel.adaptive().status().ticks();
        awaitCondition("a fresh timer period", () -> kernel.adaptive().status().ticks() > ticks, 2);
        for (int i = 0; i < count; i++) {
            assertTrue(kernel.latencyRing().write(tier, latencyNanos, LatencyRing.tenantId("t" + (i % 7))), "ring full");
        }
    }

    private void awaitTicks(long periods) {
        awaitTicksAfter(kernel.adaptive().status().ticks(), periods);
    }

    private void awaitTicksAfter(long start, long periods) {
        awaitCondition(periods + " timer periods", () -> kernel.adaptive().status().ticks() >= start + periods);
    }

    private static void awaitCondition(String what, BooleanSupplier condition) {
        awaitCondition(what, condition, 20);
    }

    private static void awaitCondition(String what, BooleanSupplier condition, long pollMillis) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + WAIT + " waiting for: " + what);
            }
            try {
                Thread.sleep(pollMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
    }
}
