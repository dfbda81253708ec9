package io.nexuscore.dataplane;

import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.RequestHeadParser;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;

/**
 * CPU per call of the data plane's per-request body work on a chat request, in process: the parse
 * ({@link InferenceRequest#parse}), the Java twin's estimate over the body bytes the kernel sees
 * ("head scan", what {@link TierDispatch#promptEstimate} scans) and the estimate of the parsed
 * prompt alone ({@link PromptEstimate#ofPrompt}, which the resolver runs when the body holds more
 * than its prompt: tools, schemas), and for reference the scan of a body that is the prompt alone
 * ("prompt scan", what ofPrompt scans after writing the prompt as a JSON string).
 * Lives in the data-plane package to reach the package-private parse.
 *
 * <p>Usage: PromptEstimateBench [ROUNDS] [CALLS_PER_ROUND] [BODY_FILE]; one line per round and step,
 * then each step's best round.
 * The body is the data-plane bench's short chat, or the JSON in BODY_FILE (e.g.
 * bench/data/chat-tools.json).
 */
public final class PromptEstimateBench {

    /** About the head wrk and the Java load generator send (request line and four headers). */
    private static final int HEAD_BYTES = 120;

    private PromptEstimateBench() {
    }

    public static void main(String[] args) throws java.io.IOException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 500_000;
        Buffer body = args.length > 2 ? Buffer.buffer(java.nio.file.Files.readAllBytes(java.nio.file.Path.of(args[2])))
                : Buffer.buffer("{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in five words.\"}]}");
        Endpoint chat = Endpoint.match(HttpMethod.POST, "/v1/chat/completions");
        String prompt = InferenceRequest.parse(chat, body, false).work().prompt();
        int visible = Math.min(body.length(), RequestHeadParser.HEAD_WINDOW - HEAD_BYTES);
        System.out.printf("body %d bytes, prompt %d chars, head scan over %d bytes%n", body.length(), prompt.length(), visible);
        byte[] promptBody = ("{\"prompt\":" + io.vertx.core.json.Json.encode(prompt) + "}")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String[] steps = {"parse", "head scan", "ofPrompt", "prompt scan"};
        double[] best = new double[steps.length];
        java.util.Arrays.fill(best, Double.MAX_VALUE);
        long sink = 0;
        for (int round = 1; round <= rounds; round++) {
            for (int step = 0; step < steps.length; step++) {
                long start = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    sink += switch (step) {
                        case 0 -> InferenceRequest.parse(chat, body, false).work().prompt().length();
                        case 1 -> PromptEstimate.scan(body.getBytes(0, visible), 0, visible, body.length()).tokensQ10();
                        case 2 -> PromptEstimate.ofPrompt(prompt).tokensQ10();
                        default -> PromptEstimate.scan(promptBody, 0, promptBody.length, promptBody.length).tokensQ10();
                    };
                }
                double ns = (System.nanoTime() - start) / (double) calls;
                best[step] = Math.min(best[step], ns);
                System.out.printf("round %d %-11s %7.0f ns per request%n", round, steps[step], ns);
            }
        }
        for (int step = 0; step < steps.length; step++) {
            System.out.printf("best    %-11s %7.0f ns per request%n", steps[step], best[step]);
        }
        System.out.println("checksum " + sink);
    }
}
