/**
 * The latency feedback loop and the token estimate's self-calibration, as values: their settings,
 * status, the recalibrations and calibrations they make, and the Java side of their maps (the
 * latency ring, the event rings, the mmap'ed token gain). Calibration is kernel-only.
 * The loop itself runs in the kernel (a bpf_timer in nexus_classify.bpf.c); io.nexuscore.bpf
 * reads and writes its maps, the control plane exposes them as GET/PATCH /adaptive.
 */
package io.nexuscore.adapt;
