package io.nexuscore.classify;

/**
 * The calibrated gain of the prompt token estimate ({@code token_model.gain} in nexus_shared.h), in
 * Q10: {@link #ONE_Q10} is the built-in ratio. In kernel mode it is the pinned map's live value, which
 * the adaptive timer refits from the guests' true counts; the Java scorer reads the same value so its
 * score stays equal to the kernel's.
 */
@FunctionalInterface
public interface TokenGain {

    /** TOKEN_GAIN_ONE in nexus_shared.h. */
    int ONE_Q10 = 1024;
    /** TOKEN_GAIN_MAX in nexus_shared.h: the largest gain applied, whatever a tool wrote. */
    int MAX_Q10 = 8192;

    /** The gain in force, Q10, as stored (an unsigned 32-bit value; see {@link #effective}). */
    int gainQ10();

    /** A stored gain as the kernel applies it: 0 (never written) is one, above {@link #MAX_Q10} the max. */
    static int effective(int storedQ10) {
        long unsigned = Integer.toUnsignedLong(storedQ10);
        return unsigned == 0 ? ONE_Q10 : (int) Math.min(unsigned, MAX_Q10);
    }

    /** The built-in ratio, never calibrated (user-space mode). */
    TokenGain UNIT = () -> ONE_Q10;
}
