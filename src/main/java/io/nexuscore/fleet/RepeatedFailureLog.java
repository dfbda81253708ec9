package io.nexuscore.fleet;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * A warning for a task that runs on a fixed period (the fleet's sync, its heartbeat): logged in full
 * once per distinct failure, not at every run while the failure lasts, and again after a run that
 * succeeded. Anyone on the cluster's port can keep a fleet task failing, so a failure a period must
 * not become a log line a period. Used from one thread at a time (each task's own executor).
 */
final class RepeatedFailureLog {

    private final Logger log;
    private final String task;
    private String last;

    RepeatedFailureLog(Logger log, String task) {
        this.log = log;
        this.task = task;
    }

    /** The run failed: logs it unless the run before failed the same way. Returns whether it logged. */
    boolean failed(RuntimeException e) {
        String failure = e.toString();
        boolean fresh = !failure.equals(last);
        if (fresh) {
            log.log(Level.WARNING, task + " failed (logged again only when the failure changes): " + e, e);
        }
        last = failure;
        return fresh;
    }

    /** The run succeeded: the next failure is logged whatever it is. */
    void succeeded() {
        last = null;
    }
}
