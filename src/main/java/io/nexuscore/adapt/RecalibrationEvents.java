package io.nexuscore.adapt;

import io.nexuscore.bpf.BpfException;
import io.nexuscore.bpf.LibBpf;
import io.nexuscore.bpf.LibC;
import io.nexuscore.bpf.Native;
import io.nexuscore.bpf.SharedStructs;

import io.nexuscore.adapt.Recalibration;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import jnr.ffi.Pointer;

/**
 * The consumer side of the pinned {@code recalibration_events} ring buffer (kernel -> user): a
 * daemon thread in ring_buffer__poll hands each {@link Recalibration} to the listener. One consumer
 * per ring. {@link #close} stops the thread and frees the ring.
 */
public final class RecalibrationEvents implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(RecalibrationEvents.class.getName());
    private static final String MAP = "recalibration_events";
    private static final int POLL_TIMEOUT_MS = 200;
    private static final int EINTR = 4;

    private final int fd;
    private final Pointer ring;
    /** Strongly referenced: libbpf keeps only the native stub, which dies with this object. */
    private final LibBpf.RingBufferSampleFn callback;
    private final Thread poller;
    private volatile boolean running = true;

    private RecalibrationEvents(Path pinDir, Consumer<Recalibration> listener) {
        Path pin = pinDir.resolve(MAP);
        this.fd = Native.check(LibBpf.get().bpf_obj_get(pin.toString()), "bpf_obj_get", pin.toString());
        this.callback = (ctx, data, size) -> {
            if (size >= SharedStructs.RECALIBRATION_EVENT.size()) {
                byte[] bytes = new byte[SharedStructs.RECALIBRATION_EVENT.size()];
                data.get(0, bytes, 0, bytes.length);
                Recalibration r = SharedStructs.decodeRecalibration(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN), 0);
                try {
                    listener.accept(r);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "recalibration listener failed on " + r, e);
                }
            }
            return 0;
        };
        try {
            this.ring = Native.check(LibBpf.get().ring_buffer__new(fd, callback, null, null), "ring_buffer__new", MAP);
        } catch (RuntimeException e) {
            LibC.get().close(fd);
            throw e;
        }
        this.poller = new Thread(this::poll, "nexus-recalibration-events");
        poller.setDaemon(true);
    }

    /** Starts consuming {@code pinDir/recalibration_events}. */
    public static RecalibrationEvents start(Path pinDir, Consumer<Recalibration> listener) {
        RecalibrationEvents events = new RecalibrationEvents(pinDir, listener);
        events.poller.start();
        return events;
    }

    private void poll() {
        while (running) {
            int rc = LibBpf.get().ring_buffer__poll(ring, POLL_TIMEOUT_MS);
            if (rc < 0 && rc != -EINTR) {
                LOG.warning(() -> new BpfException("ring_buffer__poll", MAP, -rc).getMessage() + "; consumer stops");
                return;
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            poller.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!poller.isAlive()) {
            LibBpf.get().ring_buffer__free(ring);
            LibC.get().close(fd);
        }
    }
}
