package io.nexuscore.dataplane.apis;

import io.nexuscore.testing.Sdks;
import io.vertx.core.json.JsonArray;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link ApiSdkSuite} against a router whose tiers run Wasm guests: the answers are rendered around the guest's text. */
class WasmTierApiSdkTest extends ApiSdkSuite {

    private SdkRouters router;

    @BeforeAll
    void start() {
        Sdks.requireInstalled();
        router = SdkRouters.wasm();
    }

    @AfterAll
    void stop() {
        if (router != null) {
            router.close();
        }
    }

    @Override
    SdkRouters router() {
        return router;
    }

    @Override
    JsonArray chatModels() {
        return new JsonArray().add("nexus-large").add("nexus-nano").add("nexus-small");
    }
}
