package io.nexuscore.kernel.maps;

import java.util.Optional;

/**
 * The control plane's port to the kernel's latency feedback loop ({@link AdaptiveLoop} in kernel
 * mode, {@link #NOT_IN_KERNEL_MODE} in user space). Every method may make a syscall.
 */
public interface AdaptiveControl {

    /** In user space there is no loop: reading or configuring it is refused. */
    AdaptiveControl NOT_IN_KERNEL_MODE = new AdaptiveControl() {
        @Override
        public AdaptiveStatus status() {
            throw new NotInKernelMode("the adaptive recalibration loop");
        }

        @Override
        public AdaptiveSettings configure(AdaptiveSettings next) {
            throw new NotInKernelMode("the adaptive recalibration loop");
        }

        @Override
        public Optional<Recalibration> lastRecalibration() {
            return Optional.empty();
        }
    };

    /** Settings and what the loop saw. */
    AdaptiveStatus status();

    /** Replaces the loop's settings (applied at the next timer period; a new period at once). */
    AdaptiveSettings configure(AdaptiveSettings next);

    /** The loop's last nano_max change, so that a threshold change can be attributed to it. */
    default Optional<Recalibration> lastRecalibration() {
        return status().last();
    }
}
