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

    /** The gain in force, Q10; a value of 0 (a map never written) reads as {@link #ONE_Q10}. */
    int gainQ10();

    /** The built-in ratio, never calibrated (user-space mode). */
    TokenGain UNIT = () -> ONE_Q10;
}
