package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import org.junit.jupiter.api.Test;

class RepeatedFailureLogTest {

    /** Keeps every message it is given. */
    private static final class RecordingLogger implements System.Logger {
        final List<String> lines = new ArrayList<>();

        @Override
        public String getName() {
            return "recording";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + format);
        }
    }

    private final RecordingLogger logger = new RecordingLogger();
    private final RepeatedFailureLog failures = new RepeatedFailureLog(logger, "fleet heartbeat");

    @Test
    void aFailureThatRepeatsEveryPeriodIsLoggedOnce() {
        for (int beat = 0; beat < 100; beat++) {
            failures.failed(new IllegalStateException("members map refused the entry"));
        }

        assertEquals(1, logger.lines.size(), logger.lines.toString());
        assertTrue(logger.lines.get(0).startsWith("WARNING fleet heartbeat failed"), logger.lines.get(0));
        assertTrue(logger.lines.get(0).contains("members map refused the entry"), logger.lines.get(0));
    }

    @Test
    void aDifferentFailureIsLoggedAgain() {
        assertTrue(failures.failed(new IllegalStateException("first cause")));
        assertFalse(failures.failed(new IllegalStateException("first cause")));
        assertTrue(failures.failed(new IllegalArgumentException("second cause")));
        assertTrue(failures.failed(new IllegalStateException("first cause")));

        assertEquals(3, logger.lines.size(), logger.lines.toString());
    }

    @Test
    void theSameFailureAfterASuccessIsLoggedAgain() {
        failures.failed(new IllegalStateException("cut off"));
        failures.succeeded();
        failures.failed(new IllegalStateException("cut off"));

        assertEquals(2, logger.lines.size(), logger.lines.toString());
    }
}
