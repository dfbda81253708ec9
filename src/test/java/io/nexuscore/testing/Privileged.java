package io.nexuscore.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The rule for tests that need root: outside CI they skip with the reason; with CI=true they run
 * or fail, never skip.
 */
public final class Privileged {

    private Privileged() {
    }

    public static boolean inCi() {
        return "true".equals(System.getenv("CI"));
    }

    public static void requireRoot(String why) {
        boolean root = "root".equals(System.getProperty("user.name"));
        if (inCi() && !root) {
            throw new AssertionError("CI=true but not running as root: " + why);
        }
        assumeTrue(root, "skipped, not root: " + why);
    }
}
