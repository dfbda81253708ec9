package io.nexuscore.adapt;

import io.nexuscore.bpf.SharedStructs;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The consumer side of the pinned {@code recalibration_events} ring buffer (kernel -> user): a
 * daemon thread hands each {@link Recalibration} (a nano_max change) to the listener. One consumer
 * per ring. {@link #close} stops the thread and frees the ring.
 */
public final class RecalibrationEvents implements AutoCloseable {

    private static final String MAP = "recalibration_events";

    private final RingConsumer<Recalibration> consumer;

    private RecalibrationEvents(RingConsumer<Recalibration> consumer) {
        this.consumer = consumer;
    }

    /** Starts consuming {@code pinDir/recalibration_events}. */
    public static RecalibrationEvents start(Path pinDir, Consumer<Recalibration> listener) {
        return new RecalibrationEvents(RingConsumer.start(pinDir, MAP, SharedStructs.RECALIBRATION_EVENT,
                b -> SharedStructs.decodeRecalibration(b, 0), listener));
    }

    @Override
    public void close() {
        consumer.close();
    }
}
