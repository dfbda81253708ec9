package io.nexuscore.kernel.maps;

import java.util.List;
import java.util.Optional;

/**
 * The loop's settings and what it saw (the pinned {@code adaptive_stats} map).
 *
 * @param ticks           timer periods run since the maps were created
 * @param drained         latency events drained, all periods
 * @param recalibrations  nano_max changes made
 * @param lastP95Us       per tier (nano, small, large): P95 of the last period that had samples, 0 = none yet
 * @param lastSamples     per tier: samples in that period
 * @param last            the last recalibration, if any
 * @param goodPeriods     consecutive periods under the raise-back bound so far
 * @param tokenGainQ10    the live token_model gain, Q10 (never 0: a map never written reads as one)
 * @param calibrations    token_model.gain changes made by the calibration stage
 * @param lastCalibration the last one, if any
 * @param settingsProblem why the stored settings are not shown: another tool wrote values their
 *                        rules refuse, and {@code settings} are the defaults in their place
 */
public record AdaptiveStatus(AdaptiveSettings settings, long ticks, long drained, long recalibrations,
                             List<Integer> lastP95Us, List<Integer> lastSamples, Optional<Recalibration> last,
                             int goodPeriods, int tokenGainQ10, long calibrations,
                             Optional<Calibration> lastCalibration, Optional<String> settingsProblem) {
    public AdaptiveStatus {
        lastP95Us = List.copyOf(lastP95Us);
        lastSamples = List.copyOf(lastSamples);
    }

    /** The same status, with the stored settings replaced by {@code shown} for {@code problem}. */
    public AdaptiveStatus withSettings(AdaptiveSettings shown, Optional<String> problem) {
        return new AdaptiveStatus(shown, ticks, drained, recalibrations, lastP95Us, lastSamples, last, goodPeriods,
                tokenGainQ10, calibrations, lastCalibration, problem);
    }
}
