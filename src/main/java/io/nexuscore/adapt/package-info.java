/**
 * The latency feedback loop, as values: its settings, its status and the recalibrations it makes.
 * The loop itself runs in the kernel (a bpf_timer in nexus_classify.bpf.c); io.nexuscore.bpf
 * reads and writes its maps, the control plane exposes them as GET/PATCH /adaptive.
 */
package io.nexuscore.adapt;
