package io.nexuscore.metrics;

/**
 * A metric source whose figures cost syscalls or file reads: {@link #refresh} (on the refresher's
 * thread) takes a reading, and its meters render the last one.
 */
interface KernelReading extends AutoCloseable {

    void refresh();

    @Override
    void close();
}
