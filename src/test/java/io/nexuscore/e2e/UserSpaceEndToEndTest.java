package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertSame;

import io.nexuscore.RouterRuntime;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.metrics.CoarseWallClock;
import io.nexuscore.testing.FreePort;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The request suite with no eBPF at all: loopback, the Java scorer decides every request. */
class UserSpaceEndToEndTest extends RequestSuite {

    private RouterRuntime router;
    private Path stateDir;
    private Curl curl;
    private ControlClient control;

    @BeforeAll
    void start() {
        stateDir = tempDir();
        int port = FreePort.pick();
        JsonObject json = config("127.0.0.1", port, new JsonObject().put("mode", "user"), stateDir);
        router = RouterRuntime.start(RouterConfig.fromJson(json));
        curl = new Curl(List.of(), "127.0.0.1", router.dataPlanePort());
        control = ControlClient.forConfig(json);
    }

    @AfterAll
    void stop() {
        try {
            if (router != null) {
                router.close();
            }
        } finally {
            deleteRecursively(stateDir);
        }
    }

    @Test
    void theMetersRotateTheirWindowsOnTheCoarseWallClock() {
        assertSame(CoarseWallClock.INSTANCE, router.registry().config().clock());
    }

    @Override
    Curl dataPlane() {
        return curl;
    }

    @Override
    ControlClient control() {
        return control;
    }

    @Override
    String expectedRouteSource() {
        return "user";
    }

    @Override
    boolean running() {
        return router != null;
    }
}
