package io.nexuscore.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The suite's one rule for tests that need something of the machine (root, eBPF privileges, a tool,
 * a Docker engine): outside CI they skip with the reason; with CI=true they fail, never skip.
 */
public final class Privileged {

    private Privileged() {
    }

    public static boolean inCi() {
        return "true".equals(System.getenv("CI"));
    }

    public static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Skips (outside CI) or fails (with CI=true) with {@code reason} unless {@code condition} holds. */
    public static void require(boolean condition, String reason) {
        if (condition) {
            return;
        }
        if (inCi()) {
            fail("CI=true and " + reason + " (with CI=true this test must run)");
        }
        assumeTrue(false, "skipped: " + reason);
    }

    public static void requireRoot(String why) {
        require(isRoot(), "not running as root: " + why);
    }
}
