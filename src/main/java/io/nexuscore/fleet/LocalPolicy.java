package io.nexuscore.fleet;

/**
 * This router's own copy of the policy: the stores the control plane serves (thresholds in memory or
 * the pinned map, tenant floors, API keys, the kernel loop's settings). Calls may make syscalls and
 * touch the disk: the fleet thread calls them.
 */
public interface LocalPolicy {

    /** Who last wrote the thresholds. */
    enum Writer { API, KERNEL, OTHER }

    /**
     * What the router holds now.
     *
     * @param content            the policy
     * @param thresholdsWriter   the control plane's API, the kernel's adaptive loop, or another tool (bpftool)
     * @param thresholdsVersion  the store's write counter when read
     */
    record State(PolicyContent content, Writer thresholdsWriter, long thresholdsVersion) {
    }

    State read();

    /**
     * Makes the delta's changes to the router's stores, through the same ports the REST API uses.
     * The thresholds are written field by field against {@code seen}: a field somebody wrote since
     * {@code seen} was read (a PATCH landing while the fleet's change is applied) stands, goes to the
     * fleet at the next sync, and the delta's other field is written beside it. Likewise a tenant's
     * floor or keys written here since {@code seen} keep that write.
     */
    void apply(PolicyDelta delta, State seen);
}
