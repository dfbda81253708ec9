package io.nexuscore.adapt;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nexuscore.kernel.maps.SharedStructs;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The settings record's checks (each naming its field) and its encoding in struct adaptive_settings. */
class AdaptiveSettingsTest {

    private static final AdaptiveSettings D = AdaptiveSettings.DEFAULT;

    @Test
    void calibrationDefaults() {
        assertEquals(true, D.calibrate());
        assertEquals(512, D.gainMinQ10());
        assertEquals(2048, D.gainMaxQ10());
        assertEquals(64, D.gainStepMaxQ10());
        assertEquals(50, D.calibrationMinSamples());
    }

    @Test
    void badCalibrationValuesNameTheirField() {
        assertField("gain_min", s -> s.withCalibration(true, 63, 2048, 64, 50));
        assertField("gain_min", s -> s.withCalibration(true, 8193, 8192, 64, 50));
        assertField("gain_max", s -> s.withCalibration(true, 512, 8193, 64, 50));
        assertField("gain_max", s -> s.withCalibration(true, 1024, 1000, 64, 50));
        assertField("gain_step_max", s -> s.withCalibration(true, 512, 2048, 0, 50));
        assertField("gain_step_max", s -> s.withCalibration(true, 512, 2048, 1025, 50));
        assertField("calibration_min_samples", s -> s.withCalibration(true, 512, 2048, 64, 0));
        assertField("calibration_min_samples", s -> s.withCalibration(true, 512, 2048, 64, AdaptiveSettings.MAX_EVENTS + 1));
        // The bounds themselves are fine, and gain_min may equal gain_max (a fixed gain).
        D.withCalibration(false, 64, 64, 1, 1);
        D.withCalibration(true, 8192, 8192, 1024, AdaptiveSettings.MAX_EVENTS);
    }

    @Test
    void theStructRoundTripsAndPutsEachFieldAtItsLayoutOffset() {
        AdaptiveSettings s = D.withCeiling(60).withCalibration(false, 300, 5000, 100, 77);
        byte[] bytes = SharedStructs.adaptiveSettings(s);
        assertEquals(SharedStructs.ADAPTIVE_SETTINGS.size(), bytes.length);
        assertEquals(s, SharedStructs.decodeAdaptiveSettings(bytes));
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0, b.getInt(SharedStructs.ADAPTIVE_SETTINGS.offset("calibrate")));
        assertEquals(300, b.getInt(SharedStructs.ADAPTIVE_SETTINGS.offset("gain_min")));
        assertEquals(5000, b.getInt(SharedStructs.ADAPTIVE_SETTINGS.offset("gain_max")));
        assertEquals(100, b.getInt(SharedStructs.ADAPTIVE_SETTINGS.offset("gain_step_max")));
        assertEquals(77, b.getInt(SharedStructs.ADAPTIVE_SETTINGS.offset("calibration_min_samples")));
        assertEquals(0, b.getInt(SharedStructs.ADAPTIVE_SETTINGS.offset("pad")));
    }

    private static void assertField(String field, Function<AdaptiveSettings, AdaptiveSettings> change) {
        AdaptiveSettings.InvalidSetting e = assertThrows(AdaptiveSettings.InvalidSetting.class, () -> change.apply(D));
        assertEquals(field, e.field(), e.getMessage());
    }
}
