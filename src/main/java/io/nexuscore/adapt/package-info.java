/**
 * The latency feedback loop's user-space side: the JSON of GET/PATCH /adaptive and the reporting of
 * its events and metrics. The loop itself runs in the kernel (a bpf_timer in
 * nexus_classify.bpf.c); its settings, status, events and maps are in io.nexuscore.kernel.maps.
 */
package io.nexuscore.adapt;
