package io.nexuscore.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The Go clients of {@code src/test/go} (standard library only) as real clients of a router in tests:
 * {@code src/test/go/build.sh target} builds them once per JVM into {@code target/go/bin}, with the
 * build cache and GOPATH under {@code target/go} so nothing lands in $HOME and no module is fetched.
 * Without the go command (Debian golang-go, which scripts/install-deps.sh installs), or when the build
 * fails, the test skips with the reason outside CI and fails with CI=true ({@link Privileged}).
 */
public final class GoClients {

    /** A first build compiles net/http and its imports into an empty cache: minutes on a busy 2-core machine. */
    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(8);
    private static final Path TARGET = Path.of("target").toAbsolutePath();

    private static Build build;

    private GoClients() {
    }

    private record Build(Path dir, String failure) {
        boolean ok() {
            return failure.isEmpty();
        }
    }

    /** The chatclient binary (net/http posting chat requests; see src/test/go/chatclient/main.go). */
    public static Path chatClient() {
        Path binary = built().dir().resolve("chatclient");
        Privileged.require(Files.isExecutable(binary), "src/test/go/build.sh did not leave " + binary);
        return binary;
    }

    private static synchronized Build built() {
        if (build == null) {
            build = buildOnce();
        }
        Privileged.require(build.ok(), build.failure());
        return build;
    }

    private static Build buildOnce() {
        Path script = Path.of("src", "test", "go", "build.sh").toAbsolutePath();
        Sdks.Result r = Sdks.run(List.of("bash", script.toString(), TARGET.toString()), Map.of(), BUILD_TIMEOUT);
        if (!r.ok()) {
            return new Build(null, "src/test/go/build.sh " + TARGET + " failed (" + r.describe() + ")");
        }
        return new Build(TARGET.resolve("go").resolve("bin"), "");
    }
}
