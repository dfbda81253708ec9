package io.nexuscore;

import io.nexuscore.config.ConfigException;
import io.nexuscore.config.RouterConfig;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Command line: {@code nexuscore [--config FILE]}. The file (or $NEXUSCORE_CONFIG) overlays the
 * embedded defaults. Runs in the foreground until SIGINT/SIGTERM, then releases everything it
 * attached.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        if (System.getProperty("java.util.logging.config.file") == null) {
            // One line per record, unless the operator brought a logging config.
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %3$s: %5$s%6$s%n");
        }
        Optional<Path> configFile;
        try {
            configFile = configFile(args);
        } catch (IllegalArgumentException e) {
            System.err.println("nexuscore: " + e.getMessage());
            System.err.println("usage: nexuscore [--config FILE]   (or NEXUSCORE_CONFIG=FILE)");
            System.exit(2);
            return;
        }
        RouterRuntime runtime;
        try {
            runtime = RouterRuntime.start(RouterConfig.load(configFile));
        } catch (ConfigException e) {
            System.err.println("nexuscore: configuration error: " + e.getMessage());
            System.exit(2);
            return;
        } catch (RuntimeException e) {
            System.err.println("nexuscore: failed to start: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(runtime::close, "nexuscore-shutdown"));
        // Vert.x's event loop threads keep the JVM alive until the shutdown hook closes them.
    }

    static Optional<Path> configFile(String[] args) {
        Optional<Path> file = Optional.ofNullable(System.getenv("NEXUSCORE_CONFIG"))
                .filter(s -> !s.isBlank()).map(Path::of);
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--config" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException("--config needs a file name");
                    }
                    file = Optional.of(Path.of(args[++i]));
                }
                case "-h", "--help" -> throw new IllegalArgumentException("help requested");
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        return file;
    }
}
