package io.nexuscore.kernel.maps;

/**
 * One nano_max change made by the kernel loop (struct recalibration_event in nexus_shared.h).
 *
 * @param timestampNs  CLOCK_MONOTONIC of the change
 * @param p95Us        nano P95 observed in that period (lower edge of its histogram bucket)
 * @param samples      nano samples in that period
 */
public record Recalibration(long timestampNs, int oldNanoMax, int newNanoMax, int p95Us, int samples) {
}
