package io.nexuscore.adapt;

import io.nexuscore.kernel.maps.Calibration;
import io.nexuscore.kernel.maps.LatencyRing;
import io.nexuscore.kernel.maps.Recalibration;
import io.nexuscore.kernel.maps.RingConsumer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.events.EventSink;

/** How the kernel loop shows up in the router: recalibration and calibration events, their metrics, latency-ring counters. */
public final class AdaptiveReporting {

    private AdaptiveReporting() {
    }

    /**
     * Consumer threads publish each recalibration as a {@code recalibration} event and each token
     * gain change as a {@code calibration} event, and count them ({@code nexus_recalibrations_total},
     * {@code nexus_calibrations_total}); {@code nexus_token_gain} is the live gain; the latency ring's
     * written and dropped samples become counters.
     *
     * @return stops the consumers
     */
    public static AutoCloseable start(KernelDataPath kernel, EventSink events, MeterRegistry registry) {
        LatencyRing ring = kernel.latencyRing();
        FunctionCounter.builder("nexus.latency.events", ring, LatencyRing::written)
                .description("Latency samples handed to the kernel loop (latency_ringbuf)").register(registry);
        FunctionCounter.builder("nexus.latency.events.dropped", ring, LatencyRing::dropped)
                .description("Latency samples dropped because latency_ringbuf was full").register(registry);
        Counter recalibrations = Counter.builder("nexus.recalibrations")
                .description("nano_max changes made by the kernel loop, as reported to this router").register(registry);
        Counter calibrations = Counter.builder("nexus.calibrations")
                .description("token_model.gain changes made by the kernel's calibration stage, as reported to this router")
                .register(registry);
        Gauge.builder("nexus.token.gain", kernel.tokenModel(), gain -> Calibration.gain(gain.gainQ10()))
                .description("The live gain of the prompt token estimate (token_model, 1.0 = the built-in ratio)")
                .register(registry);
        RingConsumer<Recalibration> recalibrationEvents = kernel.recalibrationEvents(r -> {
            recalibrations.increment();
            events.publish("recalibration", AdaptiveJson.recalibration(r));
        });
        RingConsumer<Calibration> calibrationEvents;
        try {
            calibrationEvents = kernel.calibrationEvents(c -> {
                calibrations.increment();
                events.publish("calibration", AdaptiveJson.calibration(c));
            });
        } catch (RuntimeException e) {
            recalibrationEvents.close();
            throw e;
        }
        return () -> {
            calibrationEvents.close();
            recalibrationEvents.close();
        };
    }
}
