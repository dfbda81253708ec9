package io.nexuscore.dataplane.apis;

import io.nexuscore.testing.LocalOpenAiServer;
import io.vertx.core.json.JsonArray;

/** {@link ApiSdkSuite} against a router whose tiers run Wasm guests: the answers are rendered around the guest's text. */
class WasmTierApiSdkTest extends ApiSdkSuite {

    @Override
    SdkRouters startRouter(LocalOpenAiServer mock) {
        return SdkRouters.wasm(embeddingsConfig(mock));
    }

    @Override
    JsonArray chatModels() {
        return new JsonArray().add(EMBEDDINGS_MODEL).add("nexus-large").add("nexus-nano").add("nexus-small");
    }
}
