package io.nexuscore.tiers.upstream;

import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;

/**
 * CPU per call of writing an upstream tier's request, in process: the client's chat forwarded
 * (its bytes spliced) against the flattened one-message document written for the same prompt.
 * Lives in the upstream package to reach the package-private {@link ChatRequestBody}.
 *
 * <p>Usage: ChatRequestBodyBench [ROUNDS] [CALLS_PER_ROUND]; one line per round and kind. The body
 * is the data-plane bench's.
 */
public final class ChatRequestBodyBench {

    private ChatRequestBodyBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        ChatRequestBody writer = new ChatRequestBody("bare");
        Buffer client = Buffer.buffer("{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in five words.\"}]}");
        TierRequest flattened = TierRequest.of("chat", "Say hello in five words.");
        TierRequest forwarded = flattened.withChatBody(client);
        long sink = 0;
        for (int round = 1; round <= rounds; round++) {
            for (TierRequest request : new TierRequest[] {flattened, forwarded}) {
                long start = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    sink += writer.encode(request, false).length();
                }
                System.out.printf("round %d %-9s %6.0f ns per request%n", round,
                        request.chatBody() == null ? "flattened" : "forwarded", (System.nanoTime() - start) / (double) calls);
            }
        }
        System.out.println("checksum " + sink);
    }
}
