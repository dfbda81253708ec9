package io.nexuscore.metrics;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.lang.System.Logger.Level;
import java.lang.System.Logger;

/**
 * Takes a reading of every {@link KernelReading} every period on its own daemon thread, so that a
 * scrape (on an event loop) renders the last reading and never makes a syscall. A failing reading
 * is logged once and retried at the next period.
 */
final class MetricsRefresher implements AutoCloseable {

    private static final Logger LOG = System.getLogger(MetricsRefresher.class.getName());

    private final List<KernelReading> readings;
    private final ScheduledExecutorService timer;
    private final boolean[] warned;

    MetricsRefresher(List<KernelReading> readings, long periodMs) {
        this.readings = List.copyOf(readings);
        this.warned = new boolean[readings.size()];
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nexus-metrics-refresh");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::refreshAll, 0, periodMs, TimeUnit.MILLISECONDS);
    }

    private void refreshAll() {
        for (int i = 0; i < readings.size(); i++) {
            try {
                readings.get(i).refresh();
            } catch (RuntimeException e) {
                if (!warned[i]) {
                    warned[i] = true;
                    LOG.log(Level.WARNING, "metrics: reading " + readings.get(i).getClass().getSimpleName()
                            + " failed (" + e.getMessage() + "); its figures stay at the last reading");
                }
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
