package io.nexuscore.adapt;

import io.nexuscore.bpf.SharedStructs;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The consumer side of the pinned {@code calibration_events} ring buffer (kernel -> user): a daemon
 * thread hands each {@link Calibration} (a token_model.gain change) to the listener. One consumer
 * per ring. {@link #close} stops the thread and frees the ring.
 */
public final class CalibrationEvents implements AutoCloseable {

    private static final String MAP = "calibration_events";

    private final RingConsumer<Calibration> consumer;

    private CalibrationEvents(RingConsumer<Calibration> consumer) {
        this.consumer = consumer;
    }

    /** Starts consuming {@code pinDir/calibration_events}. */
    public static CalibrationEvents start(Path pinDir, Consumer<Calibration> listener) {
        return new CalibrationEvents(RingConsumer.start(pinDir, MAP, SharedStructs.CALIBRATION_EVENT,
                b -> SharedStructs.decodeCalibration(b, 0), listener));
    }

    @Override
    public void close() {
        consumer.close();
    }
}
