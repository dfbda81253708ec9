package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.tiers.TierReply;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;

/**
 * CPU per call of the data plane's request parse and answer render, in process (no network, so
 * far steadier than a load test on a noisy VM): the JSON tree parse (the reference), the parse the
 * data plane runs (streaming pass, tree for what it declines), the byte-level answer render, and
 * the request's parse with the guard's demand read in a pass of its own (parse, then
 * {@code RequestGuard.inspect}) against in the parse's one pass (what {@code TierDispatch} runs).
 * Lives in the dataplane package to reach the package-private parsers.
 *
 * <p>Usage: RequestParseBench [ROUNDS] [CALLS_PER_ROUND]; prints one line per round, then the
 * median of each column and the tree/streaming ratio. The body is the data-plane bench's.
 */
public final class RequestParseBench {

    private RequestParseBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 500_000;
        Endpoint chat = Endpoint.match(HttpMethod.POST, "/v1/chat/completions");
        Buffer body = Buffer.buffer("{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in five words.\"}]}");
        TierReply reply = new TierReply("Hello there, how are you today?", Tier.NANO, 10, 5, 7, "nexus-nano");
        RequestGuard guard = new RequestGuard(io.nexuscore.config.RequestLimits.defaults());
        long[][] ns = new long[5][rounds];
        long sink = 0;
        for (int round = 0; round < rounds; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += InferenceRequest.parseTree(chat, body, false).work().prompt().length();
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += InferenceRequest.parse(chat, body, false).work().prompt().length();
            }
            long t2 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += OpenAiResponses.renderBytes(chat, reply).length();
            }
            long t3 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += InferenceRequest.parse(chat, body, false).work().prompt().length();
                sink += guard.inspect(chat, body).choices();
            }
            long t4 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                RequestGuard.Fields fields = guard.fields(chat);
                sink += InferenceRequest.parse(chat, body, false, fields).work().prompt().length();
                sink += fields.demand().choices();
            }
            long t5 = System.nanoTime();
            ns[0][round] = (t1 - t0) / calls;
            ns[1][round] = (t2 - t1) / calls;
            ns[2][round] = (t3 - t2) / calls;
            ns[3][round] = (t4 - t3) / calls;
            ns[4][round] = (t5 - t4) / calls;
            System.out.printf("round %d: tree parse %d ns, data-plane parse %d ns, render %d ns, parse + guard's own pass %d ns, "
                    + "parse with the guard in its pass %d ns%n", round + 1, ns[0][round], ns[1][round], ns[2][round],
                    ns[3][round], ns[4][round]);
        }
        long tree = median(ns[0]);
        long parse = median(ns[1]);
        System.out.printf("median of %d rounds (the first ones warm the JIT up): tree parse %d ns, data-plane parse %d ns "
                + "(%.1fx faster), render %d ns; parse + guard's own pass %d ns, one pass %d ns (checksum %d)%n", rounds, tree, parse,
                (double) tree / parse, median(ns[2]), median(ns[3]), median(ns[4]), sink);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
