package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.VerdictSlots;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import org.junit.jupiter.api.Test;

/**
 * Which routing_decision words are verdicts, with no kernel: the pinned maps are writable by any
 * root tool, so a word whose tier byte names no tier must read as no verdict (VerdictSlotsTest
 * writes one into the real fallback map).
 */
class VerdictWordTest {

    private static final int TIER_SHIFT = 8 * SharedStructs.ROUTING_DECISION.offset("tier");

    private static long withTier(long word, long tier) {
        return (word & ~(0xffL << TIER_SHIFT)) | tier << TIER_SHIFT;
    }

    @Test
    void onlyATierByteThatNamesATierIsAVerdict() {
        long word = 0x0123_4567_89ab_cdefL;
        for (Tier tier : Tier.values()) {
            assertTrue(VerdictSlots.isVerdict(withTier(word, tier.wire())), tier.label());
        }
        for (long tier : new long[] {3, 9, 0x7f, 0xfd}) {
            assertFalse(VerdictSlots.isVerdict(withTier(word, tier)), "tier byte " + tier);
        }
        assertFalse(VerdictSlots.isVerdict(VerdictSlots.MISS));
        assertFalse(VerdictSlots.isVerdict(VerdictSlots.INCONSISTENT));
    }
}
