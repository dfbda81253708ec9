package io.nexuscore.kernel;

import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_COUNTED;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_FOR_GOOD;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_REQUESTS;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_TOKENS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.TenantWindows;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.testing.Corpus;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tenant limits counted at XDP (nexus_limits.bpf.h) against the data plane's counting of the same
 * rule ({@link TenantWindows#admit}): for a sequence of real prompts from a source prefix with
 * limits, XDP's decision for each request (its verdict's flags, through BPF_PROG_TEST_RUN) equals
 * the Java decision for the same charge in a slot of its own, and both slots end with the same
 * counts; and XDP and the data plane counting into one slot hold one limit together.
 */
class TenantLimitsParityTest {

    private static final int PORT = 8080;
    private static final Ipv4Prefix CLIENTS = Ipv4Prefix.covering(0xc0000200, 24); // 192.0.2.0/24 holds Packets.CLIENT
    private static final int KERNEL_SLOT = 7;
    private static final int JAVA_SLOT = 8;
    private static final int OUTPUT_TOKENS = 64;

    private static KernelDataPath kernel;
    private static int nextPort = 30000;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(PORT));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @AfterEach
    void clear() {
        kernel.tenantLimits().remove(CLIENTS);
        kernel.tenantLimits().windows().clear(KERNEL_SLOT);
        kernel.tenantLimits().windows().clear(JAVA_SLOT);
    }

    @Test
    void requestsPerMinuteRefusesTheSameRequestsInBothPaths() {
        assertParity(new TenantWindows.Limit(KERNEL_SLOT, 5, 0, 0, OUTPUT_TOKENS), prompts(12));
    }

    @Test
    void tokensPerMinuteRefusesByTheSameChargeInBothPaths() {
        List<String> prompts = prompts(30);
        // About six requests' worth: the first ones count, then a request passes only when its charge
        // fits what the window has left (a short question after a long one can).
        assertParity(new TenantWindows.Limit(KERNEL_SLOT, 0, 6 * (OUTPUT_TOKENS + 40), 100_000, OUTPUT_TOKENS), prompts);
    }

    @Test
    void bothLimitsAndAChargeAboveTheWholeLimit() {
        List<String> prompts = prompts(20);
        assertParity(new TenantWindows.Limit(KERNEL_SLOT, 9, 4_000, 4_000, OUTPUT_TOKENS), prompts);
        clear();
        List<Integer> flags = assertParity(new TenantWindows.Limit(KERNEL_SLOT, 0, 1_000, OUTPUT_TOKENS + 1, OUTPUT_TOKENS), prompts(3));
        assertEquals(List.of(VERDICT_F_OVER_TOKENS | VERDICT_F_OVER_FOR_GOOD, VERDICT_F_OVER_TOKENS | VERDICT_F_OVER_FOR_GOOD,
                VERDICT_F_OVER_TOKENS | VERDICT_F_OVER_FOR_GOOD), flags, "every prompt costs more than one token");
    }

    @Test
    void theKernelAndTheDataPlaneHoldOneLimitTogether() {
        TenantWindows windows = kernel.tenantLimits().windows();
        TenantWindows.Limit limit = new TenantWindows.Limit(KERNEL_SLOT, 4, 0, 0, OUTPUT_TOKENS);
        kernel.tenantLimits().put(CLIENTS, limit);
        List<String> prompts = prompts(6);
        assertEquals(VERDICT_F_COUNTED, kernelFlags(prompts.get(0)));
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, System.nanoTime(), 10)); // a blind request, counted by Java
        assertEquals(VERDICT_F_COUNTED, kernelFlags(prompts.get(1)));
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, System.nanoTime(), 10));
        assertEquals(VERDICT_F_OVER_REQUESTS, kernelFlags(prompts.get(2)), "the fifth request of a 4-per-minute tenant");
        assertEquals(VERDICT_F_OVER_REQUESTS, windows.admit(limit, System.nanoTime(), 10));
        assertEquals(4, windows.requests(KERNEL_SLOT, System.nanoTime()));
    }

    @Test
    void aSourceOutsideEveryLimitedPrefixIsNotCounted() {
        kernel.tenantLimits().put(Ipv4Prefix.covering(0x0a000000, 8), new TenantWindows.Limit(KERNEL_SLOT, 1, 0, 0, OUTPUT_TOKENS));
        try {
            assertEquals(0, kernelFlags(prompts(1).get(0)));
            assertEquals(0, kernelFlags(prompts(1).get(0)));
        } finally {
            kernel.tenantLimits().remove(Ipv4Prefix.covering(0x0a000000, 8));
        }
    }

    /** Runs the prompts through XDP (slot KERNEL_SLOT) and through Java (slot JAVA_SLOT); returns XDP's flags. */
    private static List<Integer> assertParity(TenantWindows.Limit limit, List<String> prompts) {
        kernel.tenantLimits().put(CLIENTS, limit);
        TenantWindows windows = kernel.tenantLimits().windows();
        TenantWindows.Limit javaLimit = new TenantWindows.Limit(JAVA_SLOT, limit.requestsPerMinute(), limit.tokensPerMinute(),
                limit.tokensWhole(), limit.outputTokens());
        List<Integer> kernelFlags = new ArrayList<>();
        List<Integer> javaFlags = new ArrayList<>();
        for (String prompt : prompts) {
            byte[] body = SegmentedBodyParityTest.chatBody(prompt, 1, false);
            kernelFlags.add(kernelFlags(prompt));
            long charge = PromptEstimate.ofBody(body, body.length).tokens(1024) + limit.outputTokens();
            javaFlags.add(windows.admit(javaLimit, System.nanoTime(), charge));
        }
        assertEquals(javaFlags, kernelFlags, "XDP's decisions vs the data plane's, request by request");
        assertTrue(kernelFlags.contains(VERDICT_F_COUNTED) || kernelFlags.stream().allMatch(f -> (f & VERDICT_F_OVER_FOR_GOOD) != 0),
                "a sequence that never counts checks nothing: " + kernelFlags);
        long now = System.nanoTime();
        assertEquals(windows.requests(JAVA_SLOT, now), windows.requests(KERNEL_SLOT, now), "requests counted");
        assertEquals(windows.tokens(JAVA_SLOT, now), windows.tokens(KERNEL_SLOT, now), "tokens charged");
        return kernelFlags;
    }

    /** One request in one segment from a new source port of Packets.CLIENT; the verdict's limit flags. */
    private static int kernelFlags(String prompt) {
        byte[] body = SegmentedBodyParityTest.chatBody(prompt, 1, false);
        byte[] head = Packets.chatHead(body.length, true);
        byte[] segment = new byte[head.length + body.length];
        System.arraycopy(head, 0, segment, 0, head.length);
        System.arraycopy(body, 0, segment, head.length, body.length);
        int port = nextPort++;
        kernel.program(KernelDataPath.XDP_PROGRAM).testRun(Packets.tcpAt(Packets.CLIENT, port, PORT, 1000, segment), null, 1);
        FourTuple tuple = new FourTuple(SharedStructs.inet4(Packets.CLIENT), port, SharedStructs.inet4(Packets.ROUTER), PORT);
        KernelVerdict verdict = kernel.verdicts().lookup(tuple).orElseThrow(() -> new AssertionError("no verdict for " + tuple));
        assertEquals(false, verdict.blind(), "a one-segment request is decided in the kernel");
        return verdict.limitFlags();
    }

    /** Real questions of every length, in the corpus's order. */
    private static List<String> prompts(int count) {
        return Corpus.prompts("mt-bench-questions.jsonl").subList(0, count);
    }
}
