package io.nexuscore.metrics;

/**
 * The kernel's enum tlb_flush_reason (include/linux/mm_types.h), in slot order of the tlb_flushes
 * map (TLB_REASON_SLOTS in nexus_metrics.h; {@link #OTHER} takes reasons a newer kernel adds).
 */
public enum TlbFlushReason {
    TASK_SWITCH("task_switch"),
    REMOTE_SHOOTDOWN("remote_shootdown"),
    LOCAL_SHOOTDOWN("local_shootdown"),
    LOCAL_MM_SHOOTDOWN("local_mm_shootdown"),
    REMOTE_SEND_IPI("remote_send_ipi"),
    REMOTE_WRONG_CPU("remote_wrong_cpu"),
    OTHER("other");

    private final String label;

    TlbFlushReason(String label) {
        this.label = label;
    }

    /** The Prometheus {@code reason} label. */
    public String label() {
        return label;
    }
}
