package io.nexuscore.tiers.wasm;

import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.tiers.AssessmentPolicy;
import io.nexuscore.tiers.TierRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The host side of the canonical-ABI lowering in src/main/wit/nexus-tier.wit: lowers a
 * {@link TierRequest} into guest memory, calls {@code handle}, lifts the response out of its return
 * area and calls {@code cabi_post_handle}. Everything the guest returns is untrusted and checked.
 */
public final class GuestAbi {

    /** Size of the {@code response} record's return area. */
    static final int RETURN_AREA_SIZE = 24;
    static final int RETURN_AREA_ALIGN = 4;
    /** The longest answer text the host accepts from a guest. */
    static final int MAX_TEXT_BYTES = 16 << 20;

    private GuestAbi() {
    }

    /** What a guest answered, lifted from its return area. */
    public record GuestAnswer(String text, int promptTokens, int completionTokens, int observedScore, Tier observedTier) {
    }

    /** Runs one request through {@code instance}; the caller enforces the deadline around it. */
    public static GuestAnswer call(CoreInstance instance, TierRequest request) throws GuestTrap {
        byte[] task = request.task().getBytes(StandardCharsets.UTF_8);
        byte[] prompt = request.prompt().getBytes(StandardCharsets.UTF_8);
        byte[] strings = new byte[task.length + prompt.length];
        System.arraycopy(task, 0, strings, 0, task.length);
        System.arraycopy(prompt, 0, strings, task.length, prompt.length);

        int base = (int) instance.call(CoreInstance.Export.REALLOC, 0, 0, 1, Math.max(strings.length, 1));
        checkRange(instance, base, strings.length, "cabi_realloc result");
        instance.write(base, strings);

        TierRequest.Simulation sim = request.simulation();
        AssessmentPolicy policy = request.policy();
        ScoreWeights w = policy.weights();
        int retptr = (int) instance.call(CoreInstance.Export.HANDLE,
                Integer.toUnsignedLong(base), task.length,
                Integer.toUnsignedLong(base + task.length), prompt.length,
                request.maxTokens(), sim.workMs(), sim.allocateBytes(), sim.spin() ? 1 : 0,
                policy.thresholds().nanoMax(), policy.thresholds().smallMax(),
                w.sum(), w.ref(), w.gen(), w.ana(), policy.keywordScanBytes());
        if (Integer.remainderUnsigned(retptr, RETURN_AREA_ALIGN) != 0) {
            throw malformed(instance, "return area at " + Integer.toUnsignedString(retptr) + " is not 4-aligned");
        }
        checkRange(instance, retptr, RETURN_AREA_SIZE, "return area");
        ByteBuffer area = ByteBuffer.wrap(instance.read(retptr, RETURN_AREA_SIZE)).order(ByteOrder.LITTLE_ENDIAN);
        int textPtr = area.getInt(0);
        int textLen = area.getInt(4);
        int promptTokens = area.getInt(8);
        int completionTokens = area.getInt(12);
        int score = area.getInt(16);
        int tier = area.get(20) & 0xff;
        if (textLen < 0 || textLen > MAX_TEXT_BYTES) {
            throw malformed(instance, "text length " + Integer.toUnsignedString(textLen) + " exceeds " + MAX_TEXT_BYTES);
        }
        checkRange(instance, textPtr, textLen, "text");
        if (tier > Tier.LARGE.wire()) {
            throw malformed(instance, "observed tier " + tier + " is not a tier enum index (0..2)");
        }
        if (score < 0 || score > Scorer.MAX_SCORE) {
            throw malformed(instance, "observed score " + Integer.toUnsignedString(score) + " is not in 0..255");
        }
        if (promptTokens < 0 || completionTokens < 0) {
            throw malformed(instance, "token counts " + Integer.toUnsignedString(promptTokens) + "/"
                    + Integer.toUnsignedString(completionTokens) + " do not fit in an int");
        }
        String text = new String(instance.read(textPtr, textLen), StandardCharsets.UTF_8);
        instance.call(CoreInstance.Export.POST_HANDLE, Integer.toUnsignedLong(retptr));
        return new GuestAnswer(text, promptTokens, completionTokens, score, Tier.fromWire(tier));
    }

    private static void checkRange(CoreInstance instance, int address, int length, String what) {
        long end = Integer.toUnsignedLong(address) + Integer.toUnsignedLong(length);
        long size = (long) instance.memoryPages() * 65_536L;
        if (end > size) {
            throw malformed(instance, what + " [" + Integer.toUnsignedString(address) + ", +" + length
                    + ") lies outside the guest's " + size + "-byte memory");
        }
    }

    private static GuestTrap malformed(CoreInstance instance, String why) {
        return new GuestTrap(GuestTrap.Kind.TRAP, "instance " + instance.id() + " broke the ABI: " + why,
                instance.memoryPages(), null);
    }
}
