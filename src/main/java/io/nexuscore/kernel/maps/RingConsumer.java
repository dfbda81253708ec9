package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.BpfException;
import io.nexuscore.kernel.libbpf.LibBpf;
import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import io.nexuscore.kernel.libbpf.StructLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.function.Function;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;
import jnr.ffi.Pointer;

/**
 * The consumer side of one pinned BPF_MAP_TYPE_RINGBUF (kernel -> user): a daemon thread in
 * ring_buffer__poll decodes each sample of {@code layout} and hands it to the listener. One consumer
 * per ring. {@link #close} stops the thread and frees the ring. The kernel's two event rings each
 * have a factory: {@link #recalibrations}, {@link #calibrations}.
 */
public final class RingConsumer<T> implements AutoCloseable {

    private static final Logger LOG = System.getLogger(RingConsumer.class.getName());
    private static final int POLL_TIMEOUT_MS = 200;
    private static final int EINTR = 4;

    private final String map;
    private final int fd;
    private final Pointer ring;
    /** Strongly referenced: libbpf keeps only the native stub, which dies with this object. */
    private final LibBpf.RingBufferSampleFn callback;
    private final Thread poller;
    private volatile boolean running = true;

    private RingConsumer(Path pinDir, String map, StructLayout layout, Function<ByteBuffer, T> decode,
                         Consumer<T> listener) {
        this.map = map;
        this.fd = io.nexuscore.kernel.libbpf.PinDirectory.open(pinDir, map); // refuses a symlink
        this.callback = (ctx, data, size) -> {
            if (size >= layout.size()) {
                byte[] bytes = new byte[layout.size()];
                data.get(0, bytes, 0, bytes.length);
                T event = decode.apply(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN));
                try {
                    listener.accept(event);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, map + " listener failed on " + event, e);
                }
            }
            return 0;
        };
        try {
            this.ring = Native.check(LibBpf.get().ring_buffer__new(fd, callback, null, null), "ring_buffer__new", map);
        } catch (RuntimeException e) {
            LibC.get().close(fd);
            throw e;
        }
        this.poller = new Thread(this::poll, "nexus-" + map.replace('_', '-'));
        poller.setDaemon(true);
    }

    /** Consumes {@code pinDir/recalibration_events}: each nano_max change the kernel's loop makes. */
    public static RingConsumer<Recalibration> recalibrations(Path pinDir, Consumer<Recalibration> listener) {
        return start(pinDir, "recalibration_events", SharedStructs.RECALIBRATION_EVENT,
                b -> SharedStructs.decodeRecalibration(b, 0), listener);
    }

    /** Consumes {@code pinDir/calibration_events}: each token_model.gain change the calibration stage makes. */
    public static RingConsumer<Calibration> calibrations(Path pinDir, Consumer<Calibration> listener) {
        return start(pinDir, "calibration_events", SharedStructs.CALIBRATION_EVENT,
                b -> SharedStructs.decodeCalibration(b, 0), listener);
    }

    /** Starts consuming {@code pinDir/map}, whose samples are {@code layout}-sized structs. */
    private static <T> RingConsumer<T> start(Path pinDir, String map, StructLayout layout, Function<ByteBuffer, T> decode,
                                     Consumer<T> listener) {
        RingConsumer<T> consumer = new RingConsumer<>(pinDir, map, layout, decode, listener);
        consumer.poller.start();
        return consumer;
    }

    private void poll() {
        while (running) {
            int rc = LibBpf.get().ring_buffer__poll(ring, POLL_TIMEOUT_MS);
            if (rc < 0 && rc != -EINTR) {
                LOG.log(Level.WARNING, () -> new BpfException("ring_buffer__poll", map, -rc).getMessage() + "; consumer stops");
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
