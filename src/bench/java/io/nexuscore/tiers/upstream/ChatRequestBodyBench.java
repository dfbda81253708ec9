package io.nexuscore.tiers.upstream;

import io.nexuscore.tiers.ChatFields;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;

/**
 * CPU per call of writing an upstream tier's request, in process: the client's chat forwarded
 * (its bytes spliced) with its fields located by the data plane's parse ("located", what the router
 * does) and without (the tier's own search, "forwarded"), against the flattened one-message
 * document written for the same prompt.
 * Lives in the upstream package to reach the package-private {@link ChatRequestBody}.
 *
 * <p>Usage: ChatRequestBodyBench [ROUNDS] [CALLS_PER_ROUND] [BODY_FILE]; one line per round and kind.
 * The body is the data-plane bench's short chat, or the JSON in BODY_FILE (e.g.
 * bench/data/chat-tools.json).
 */
public final class ChatRequestBodyBench {

    private ChatRequestBodyBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        ChatRequestBody writer = new ChatRequestBody("bare");
        Buffer client = args.length > 2 ? Buffer.buffer(readBody(args[2]))
                : Buffer.buffer("{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in five words.\"}]}");
        TierRequest flattened = TierRequest.of("chat", "Say hello in five words.");
        TierRequest forwarded = flattened.withChatBody(client);
        TierRequest located = flattened.withChatBody(client, ChatFields.locate(client));
        long sink = 0;
        for (int round = 1; round <= rounds; round++) {
            for (TierRequest request : new TierRequest[] {flattened, forwarded, located}) {
                long start = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    sink += writer.encode(request, false).length();
                }
                System.out.printf("round %d %-9s %6.0f ns per request%n", round,
                        request.chatBody() == null ? "flattened" : request.chatFields() == null ? "forwarded" : "located",
                        (System.nanoTime() - start) / (double) calls);
            }
        }
        System.out.println("checksum " + sink);
    }

    private static byte[] readBody(String path) {
        try {
            return java.nio.file.Files.readAllBytes(java.nio.file.Path.of(path));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("cannot read the body file " + path, e);
        }
    }
}
