package io.nexuscore.adapt;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.maps.AdaptiveStatus;
import io.nexuscore.kernel.maps.Calibration;
import io.nexuscore.kernel.maps.RingConsumer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.kernel.libbpf.BpfMap;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.TokenGain;
import io.nexuscore.config.KernelConfig;
import io.nexuscore.testing.RecordingEventSink;
import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
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
 * The calibration stage of the adaptive timer in the real kernel: latency samples carrying a true
 * token count and a unit-gain estimate go through {@link LatencyRing} into latency_ringbuf, the
 * bpf_timer refits token_model.gain every period, and the mmap'ed {@link PinnedTokenModel} (what the
 * Java scorer reads) and the calibration_events ring show the change.
 *
 * <p>No timing assertion: each test waits, with a bounded timeout, for the timer to have run (ticks,
 * drained) and then asserts the map state.
 */
class CalibrationLoopTest {

    private static final int PERIOD_MS = 200;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long FAST_NANOS = 5_000_000L;
    /** 100 tokens at unit gain, in 1/16 tokens. */
    private static final int ESTIMATE_Q4 = 100 * 16;
    /** The guests count 1.5 x the estimate: the gain that fits is 1536. */
    private static final int TRUE_SKEWED = 150;
    private static final int MIN_SAMPLES = 50;

    private KernelDataPath kernel;
    private RingConsumer<Calibration> consumer;
    private final List<Calibration> received = new CopyOnWriteArrayList<>();

    @BeforeEach
    void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        consumer = kernel.calibrationEvents(received::add);
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
    void theLoaderSeedsTheBuiltInGainAndTheDefaults() {
        assertEquals(TokenGain.ONE_Q10, rawGain(), "token_model.gain written at first load");
        assertEquals(1, kernel.tokenModel().version());
        AdaptiveSettings s = kernel.adaptive().settings();
        assertTrue(s.calibrate());
        assertEquals(512, s.gainMinQ10());
        assertEquals(2048, s.gainMaxQ10());
        assertEquals(64, s.gainStepMaxQ10());
        assertEquals(50, s.calibrationMinSamples());
    }

    @Test
    void skewedSamplesMoveTheGainTowardTheirRatioByAtMostTheStepPerPeriod() {
        int step = kernel.adaptive().settings().gainStepMaxQ10();
        int expectedChanges = (1536 - TokenGain.ONE_Q10) / step; // 8 steps of 64 from 1024 to 1536
        for (int n = 1; n <= expectedChanges; n++) {
            long calibrations = kernel.adaptive().status().calibrations();
            write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4);
            awaitCondition("calibration " + n, () -> kernel.adaptive().status().calibrations() > calibrations);
        }
        assertEquals(1536, kernel.tokenModel().gainQ10(), "the Java scorer's plain load sees the kernel's gain");
        assertEquals(1536, rawGain());
        AdaptiveStatus status = kernel.adaptive().status();
        assertEquals(expectedChanges, status.calibrations(), "one step per period with samples, never more");
        assertEquals(1 + expectedChanges, kernel.tokenModel().version(), "every kernel write bumps the version");
        Calibration last = status.lastCalibration().orElseThrow();
        assertEquals(1536 - step, last.oldGainQ10());
        assertEquals(1536, last.newGainQ10());
        assertEquals(100, last.samples());
        assertEquals(100L * TRUE_SKEWED, last.trueTokensSum());
        assertEquals(100L * ESTIMATE_Q4, last.estimateQ4Sum());

        // At the fitted gain the same skew asks for no change.
        holdsFor(() -> write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4));
        assertEquals(1536, rawGain());
        assertEquals(expectedChanges, kernel.adaptive().status().calibrations());

        awaitCondition("every event consumed", () -> received.size() == expectedChanges);
        int previous = TokenGain.ONE_Q10;
        for (Calibration c : received) {
            assertEquals(previous, c.oldGainQ10(), "events chain: " + received);
            assertTrue(c.newGainQ10() > c.oldGainQ10() && c.newGainQ10() - c.oldGainQ10() <= step,
                    "toward the target by at most gain_step_max: " + c);
            previous = c.newGainQ10();
        }
        assertEquals(last, received.get(received.size() - 1));
    }

    @Test
    void theGainStopsAtGainMaxWhenTheSkewIsBeyondIt() {
        AdaptiveSettings s = kernel.adaptive().settings();
        kernel.adaptive().configure(s.withCalibration(true, s.gainMinQ10(), 1100, 64, MIN_SAMPLES));
        write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4);
        awaitCondition("first step", () -> rawGain() == 1088);
        write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4);
        awaitCondition("clamped at gain_max", () -> rawGain() == 1100);
        long calibrations = kernel.adaptive().status().calibrations();
        assertEquals(2, calibrations, "1024 -> 1088 -> 1100: the last step is cut at the bound");
        holdsFor(() -> write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4));
        assertEquals(1100, rawGain(), "never above gain_max");
        assertEquals(calibrations, kernel.adaptive().status().calibrations());
    }

    @Test
    void anOverestimateMovesTheGainDownAndStopsAtGainMin() {
        AdaptiveSettings s = kernel.adaptive().settings();
        kernel.adaptive().configure(s.withCalibration(true, 960, s.gainMaxQ10(), 40, MIN_SAMPLES));
        write(Tier.SMALL, 100, 50, ESTIMATE_Q4); // the guests count half the estimate: target 512
        awaitCondition("first step down", () -> rawGain() == 984);
        write(Tier.SMALL, 100, 50, ESTIMATE_Q4);
        awaitCondition("clamped at gain_min", () -> rawGain() == 960);
        holdsFor(() -> write(Tier.SMALL, 100, 50, ESTIMATE_Q4));
        assertEquals(960, rawGain(), "never below gain_min");
    }

    /** 102 true tokens per 100 estimated: target 1044, inside the 32 (3 %) dead band around 1024; 104: outside. */
    @Test
    void aTargetWithinTheDeadBandLeavesTheGainAlone() {
        holdsFor(() -> write(Tier.SMALL, 100, 102, ESTIMATE_Q4));
        assertEquals(TokenGain.ONE_Q10, rawGain());
        assertEquals(0, kernel.adaptive().status().calibrations());
        write(Tier.SMALL, 100, 104, ESTIMATE_Q4); // target 1064: 40 away
        awaitCondition("a calibration outside the dead band", () -> kernel.adaptive().status().calibrations() == 1);
        assertEquals(1064, rawGain());
    }

    @Test
    void calibrateFalseLeavesTheGainAlone() {
        kernel.adaptive().configure(withCalibrate(false));
        holdsFor(() -> write(Tier.SMALL, 200, TRUE_SKEWED, ESTIMATE_Q4));
        assertEquals(TokenGain.ONE_Q10, rawGain());
        assertEquals(0, kernel.adaptive().status().calibrations());
        assertEquals(Optional.empty(), kernel.adaptive().status().lastCalibration());
    }

    @Test
    void fewerThanTheMinimumSamplesInAPeriodLeaveTheGainAlone() {
        holdsFor(() -> write(Tier.SMALL, MIN_SAMPLES - 1, TRUE_SKEWED, ESTIMATE_Q4));
        assertEquals(TokenGain.ONE_Q10, rawGain(), "each period had " + (MIN_SAMPLES - 1) + " samples, not " + MIN_SAMPLES);
        assertEquals(0, kernel.adaptive().status().calibrations());
        // The minimum counts samples with a true count: latency-only samples do not make up the difference.
        long drained = kernel.adaptive().status().drained();
        write(Tier.SMALL, MIN_SAMPLES - 1, TRUE_SKEWED, ESTIMATE_Q4);
        write(Tier.SMALL, 100, 0, 0);
        awaitCondition("mixed batch drained", () -> kernel.adaptive().status().drained() >= drained + MIN_SAMPLES - 1 + 100);
        awaitTicks(1);
        assertEquals(TokenGain.ONE_Q10, rawGain());
    }

    @Test
    void samplesWithoutATrueCountNeverCalibrate() {
        holdsFor(() -> write(Tier.SMALL, 200, 0, 0));
        assertEquals(TokenGain.ONE_Q10, rawGain());
        assertEquals(0, kernel.adaptive().status().calibrations());
    }

    /** The latency stage's "no decision" (here: the loop disabled) must not skip the calibration stage. */
    @Test
    void calibrationRunsWhenTheLatencyStageMakesNoDecision() {
        kernel.adaptive().configure(kernel.adaptive().settings().withEnabled(false));
        write(Tier.NANO, 100, TRUE_SKEWED, ESTIMATE_Q4, 80_000_000L);
        awaitCondition("gain moved", () -> rawGain() == 1088);
        assertEquals(60, kernel.thresholds().read().nanoMax(), "the disabled latency stage changed nothing");
    }

    @Test
    void bothStagesActInTheSamePeriod() {
        // Slow nano traffic (54 ms: bucket floor 53,248 us, a cut of exactly one step), and skewed counts.
        write(Tier.NANO, 100, TRUE_SKEWED, ESTIMATE_Q4, 54_000_000L);
        awaitCondition("nano_max lowered and gain moved",
                () -> kernel.thresholds().read().nanoMax() == 55 && rawGain() == 1088);
        AdaptiveStatus status = kernel.adaptive().status();
        assertEquals(1, status.recalibrations());
        assertEquals(1, status.calibrations());
        assertEquals(new Thresholds(55, 130), kernel.thresholds().read());
    }

    @Test
    void theCalibratedGainSurvivesARestartAndAReload() {
        write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4);
        awaitCondition("gain moved", () -> rawGain() == 1088);
        consumer.close();
        consumer = null;
        Path pinDir = kernel.pinDir();
        kernel.close();
        kernel = KernelDataPath.loadWithoutAttaching(pinDir, KernelTestSupport.DEFAULT_SCORING, Set.of(8080),
                KernelConfig.XdpMode.GENERIC);
        assertEquals(1088, kernel.tokenModel().gainQ10(), "the restart kept the calibrated gain");
        kernel.reload(Optional.empty());
        assertEquals(1088, kernel.tokenModel().gainQ10(), "the reload kept it");
        write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4);
        awaitCondition("the loop goes on from there after the reload", () -> rawGain() == 1152);
    }

    @Test
    void reportingPublishesCalibrationEventsAndMetrics() throws Exception {
        consumer.close(); // one consumer per ring: the reporting's takes over
        consumer = null;
        RecordingEventSink events = new RecordingEventSink();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try {
            AutoCloseable reporting = AdaptiveReporting.start(kernel, events, registry);
            try {
                assertEquals(1.0, registry.get("nexus.token.gain").gauge().value());
                write(Tier.SMALL, 100, TRUE_SKEWED, ESTIMATE_Q4);
                awaitCondition("calibration event", () -> events.events().stream().anyMatch(e -> e.type().equals("calibration")));
                JsonObject data = events.events().stream().filter(e -> e.type().equals("calibration")).findFirst()
                        .orElseThrow().data();
                assertEquals(1.0, data.getDouble("old_gain"));
                assertEquals(1.0625, data.getDouble("new_gain"));
                assertEquals(100, data.getInteger("samples"));
                assertEquals(100L * TRUE_SKEWED, data.getLong("true_tokens"));
                assertEquals(100.0 * 100, data.getDouble("estimate_tokens"));
                assertTrue(data.getString("at").endsWith("Z"), data.encode());
                assertEquals(1.0, registry.get("nexus.calibrations").counter().count());
                assertEquals(1.0625, registry.get("nexus.token.gain").gauge().value());
                String scrape = registry.scrape();
                assertTrue(scrape.contains("nexus_calibrations_total 1.0"), scrape);
                assertTrue(scrape.contains("nexus_token_gain 1.0625"), scrape);
            } finally {
                reporting.close();
            }
        } finally {
            registry.close();
        }
    }

    private AdaptiveSettings withCalibrate(boolean calibrate) {
        AdaptiveSettings s = kernel.adaptive().settings();
        return s.withCalibration(calibrate, s.gainMinQ10(), s.gainMaxQ10(), s.gainStepMaxQ10(), s.calibrationMinSamples());
    }

    /** token_model.gain through a bpf(2) lookup, independent of the mmap'ed reader. */
    private int rawGain() {
        try (BpfMap map = BpfMap.openPinned(kernel.pinDir(), "token_model", 4, SharedStructs.TOKEN_MODEL.size())) {
            byte[] value = map.lookup(new byte[4]).orElseThrow();
            return ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getInt(SharedStructs.TOKEN_MODEL.offset("gain"));
        }
    }

    /** Three periods, each given one batch of {@code batch} and drained: whatever the batches ask for must be stable by then. */
    private void holdsFor(Runnable batch) {
        for (int period = 0; period < 3; period++) {
            long drained = kernel.adaptive().status().drained();
            long ticks = kernel.adaptive().status().ticks();
            batch.run();
            awaitCondition("batch drained", () -> kernel.adaptive().status().drained() > drained);
            awaitTicksAfter(ticks, 2);
        }
    }

    private void write(Tier tier, int count, int trueTokens, int estimateQ4) {
        write(tier, count, trueTokens, estimateQ4, FAST_NANOS);
    }

    private void write(Tier tier, int count, int trueTokens, int estimateQ4, long latencyNanos) {
        for (int i = 0; i < count; i++) {
            assertTrue(kernel.latencyRing().write(tier, latencyNanos, 0, trueTokens, estimateQ4), "ring full");
        }
    }

    private void awaitTicks(long periods) {
        awaitTicksAfter(kernel.adaptive().status().ticks(), periods);
    }

    private void awaitTicksAfter(long start, long periods) {
        awaitCondition(periods + " timer periods", () -> kernel.adaptive().status().ticks() >= start + periods);
    }

    private static void awaitCondition(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + WAIT + " waiting for: " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
    }
}
