package io.nexuscore.adapt;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.bpf.KernelDataPath;
import io.nexuscore.events.EventSink;

/** How the kernel loop shows up in the router: recalibration events and latency-ring counters. */
public final class AdaptiveReporting {

    private AdaptiveReporting() {
    }

    /**
     * A consumer thread publishes each recalibration as a {@code recalibration} event and counts it;
     * the latency ring's written and dropped samples become counters.
     *
     * @return stops the consumer
     */
    public static AutoCloseable start(KernelDataPath kernel, EventSink events, MeterRegistry registry) {
        LatencyRing ring = kernel.latencyRing();
        FunctionCounter.builder("nexus.latency.events", ring, LatencyRing::written)
                .description("Latency samples handed to the kernel loop (latency_ringbuf)").register(registry);
        FunctionCounter.builder("nexus.latency.events.dropped", ring, LatencyRing::dropped)
                .description("Latency samples dropped because latency_ringbuf was full").register(registry);
        Counter recalibrations = Counter.builder("nexus.recalibrations")
                .description("nano_max changes made by the kernel loop, as reported to this router").register(registry);
        return kernel.recalibrationEvents(r -> {
            recalibrations.increment();
            events.publish("recalibration", AdaptiveJson.recalibration(r));
        });
    }
}
